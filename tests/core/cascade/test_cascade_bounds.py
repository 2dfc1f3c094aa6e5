"""The ``claude-code`` dialect's HTML blocks and the import extraction on hostile input: no
exception, and the same answer as before for inputs that worked.

Blocks that end mid-line (``<?…?>``, ``<!X>``, CDATA) once re-entered the block tokenizer for
the rest of their line, one Python frame per block: 500 on a line raised ``RecursionError``
from ``preprocess`` (documented never to raise). The rule now loops; these tests hold it to the
recursive version's tokens. The expected texts are worked out by hand from Claude Code's rule
(``html_blocks``' docstring and ``preprocess._strip_block_comments``): a ``<?…?>``/``<!X>``
block is kept text, a top-level comment block is cut with the empty lines after it.
Speed is measured in ``benchmarks/cascade_html_bench.py``, not here.
"""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest
from markdown_it import MarkdownIt
from markdown_it.rules_block.state_block import StateBlock
from markdown_it.token import Token

from memtui.core.cascade import compute_cascade
from memtui.core.cascade import html_blocks, preprocess as preprocess_mod
from memtui.core.cascade.imports import IMPORT_RE, _refs_by_line, _refs_in_text, extract_import_refs
from memtui.core.cascade.preprocess import preprocess
from memtui.core.places.flavor import CLAUDE
from memtui.core.places.locations import resolve_locations


def _claude(body: str, *, keeps_link_definitions: bool = True):  # type: ignore[no-untyped-def]
    return preprocess(body, "CLAUDE.md", want_imports=True, markdown="claude-code", keeps_link_definitions=keeps_link_definitions)


@pytest.mark.parametrize(
    ("block", "count"),
    [("<?a?>", 500), ("<?a?>", 5_000), ("<!X>", 600), ("<![CDATA[x]]>", 2_000), ("<?a?><!X><![CDATA[]]>", 1_000)],
)
@pytest.mark.parametrize("keeps_link_definitions", [True, False], ids=["2.1.332", "2.1.328"])
def test_a_line_of_mid_line_blocks_keeps_them_and_cuts_the_comment(block: str, count: int, keeps_link_definitions: bool) -> None:
    parsed = _claude(block * count + "\n<!-- c -->\nhello", keeps_link_definitions=keeps_link_definitions)
    assert parsed.content == block * count + "\nhello"
    assert parsed.diagnostics == []
    assert parsed.tokens is not None
    html = [t for t in parsed.tokens if t.type == "html_block"]
    assert len(html) == count * block.count("<") + 1
    assert html[-1].content == "<!-- c -->\n"


def test_the_cascade_renders_a_file_of_500_processing_instructions(tmp_path: Path) -> None:
    proj = tmp_path / "proj"
    (proj / ".git").mkdir(parents=True)
    (proj / "CLAUDE.md").write_text("<?a?>" * 500 + "\n<!-- c -->\nhello\n", encoding="utf-8")
    result = compute_cascade(resolve_locations(CLAUDE, proj), proj)
    loaded = [f for f in result.files if f.loaded and f.path == str(proj / "CLAUDE.md")]
    assert [f.content for f in loaded] == ["<?a?>" * 500 + "\nhello"]


@pytest.mark.parametrize("unit", ["<?a?>> ", "<?a?>- ", "<?a?>1. ", "<!X>   ", "<?a?>\t"])
def test_mid_line_blocks_mixed_with_containers_do_not_raise(unit: str) -> None:
    parsed = _claude(unit * 3_000 + "\n<!-- c -->\n")
    assert parsed.tokens is not None
    assert parsed.diagnostics == []


def test_a_parser_out_of_stack_degrades_to_the_file_as_written(monkeypatch: pytest.MonkeyPatch) -> None:
    class Deep:
        def parse(self, _body: str) -> list[Token]:
            raise RecursionError("maximum recursion depth exceeded")

    monkeypatch.setitem(preprocess_mod._MARKDOWN, "claude-code", Deep())
    body = "<!-- c -->\nsee @a.md\n"
    parsed = _claude(body)
    assert (parsed.content, parsed.tokens) == (body, None)
    assert [(d.code, d.severity, d.line) for d in parsed.diagnostics] == [("markdown-too-deep", "warning", 1)]
    assert "nested too deeply" in parsed.diagnostics[0].message


# --- the loop against the recursive rule it replaced -------------------------------------


def _recursive_rule(state: StateBlock, start_line: int, end_line: int, silent: bool) -> bool:
    """The rule as it was: a block that ends mid-line tokenizes the rest of its line by
    re-entering the block tokenizer."""
    found = html_blocks._block(state, start_line, end_line, silent)
    if isinstance(found, bool):
        return found
    state.md.block.tokenize(state, found, end_line)
    state.line = max(state.line, found + 1)
    return True


_RECURSIVE = MarkdownIt("commonmark", {"inline_definitions": True}).disable("text_join")
_RECURSIVE.block.ruler.at("html_block", _recursive_rule, {"alt": ["paragraph", "reference", "blockquote"]})
_LOOPING = preprocess_mod._MARKDOWN["claude-code"]


def _dump(tokens: list[Token]) -> list[tuple]:  # type: ignore[type-arg]
    return [
        (t.type, t.nesting, t.level, t.map, t.content, t.markup, t.info, t.hidden, t.meta, _dump(t.children or []))
        for t in tokens
    ]


SAMPLES = [
    "<?a?> <!X> text\n<!-- c -->\nafter\n",
    "- <?a?><!-- c -->\n  more\n\n- <!X> b\n\n  c\n",
    "> <?x?>> <![CDATA[y]]> z\n<!-- c -->\n",
    "1. <?a?> # head\n   <?b?>\n2. <!X>    code?\n\n<!-- c --> tail\n",
    "- a\n\n  <?p?>- b\n  - c\n\n<?q?>\n<!-- c -->\n\n\nx @y.md\n",
    "<?a\nb?> c\n<![CDATA[\n]]>d\n<!--\n-->\n",
    "<script>\n<?a?>\n</SCRIPT> x\n<!-- c -->\n",
]


@pytest.mark.parametrize("body", SAMPLES)
def test_the_loop_gives_the_recursive_rules_tokens(body: str) -> None:
    assert _dump(_LOOPING.parse(body)) == _dump(_RECURSIVE.parse(body))


def test_the_loop_gives_the_recursive_rules_tokens_on_random_mixes() -> None:
    pieces = ["<?a?>", "<!X>", "<![CDATA[x]]>", "<!-- c -->", "- ", "> ", "1. ", " ", "    ", "\n", "\n\n", "text", "@x", "<div>", "</script>", "<script>", "# h", "<?a", "?>"]
    rng = random.Random(31)
    for _ in range(1_500):
        body = "".join(rng.choice(pieces) for _ in range(rng.randint(1, 30)))
        assert _dump(_LOOPING.parse(body)) == _dump(_RECURSIVE.parse(body)), body


def test_exact_tokens_of_a_mid_line_chain() -> None:
    tokens = _LOOPING.parse("<?a?> <!X> text\n<!-- c -->\nafter\n")
    assert [(t.type, t.map, t.content, t.meta) for t in tokens if t.type in ("html_block", "inline")] == [
        ("html_block", [0, 1], "<?a?>", {"span": (0, 5)}),
        ("html_block", [0, 1], "<!X>", {"span": (5, 10)}),
        ("inline", [0, 1], "text", {}),
        ("html_block", [1, 2], "<!-- c -->\n", {}),
        ("inline", [2, 3], "after", {}),
    ]
    assert _claude("<?a?> <!X> text\n<!-- c -->\nafter\n").content == "<?a?> <!X> text\nafter\n"


@pytest.mark.parametrize(
    ("body", "content"),
    [
        ("<SCRIPT>\nx\n</ScRiPt> tail\n<!-- c -->\nafter\n", "<SCRIPT>\nx\n</ScRiPt> tail\nafter\n"),
        ("<pre>\n<!-- kept -->\n", "<pre>\n<!-- kept -->\n"),
        # The closing tag is matched where it stands: U+0130 before it (which lowers to two
        # characters) moves nothing (the reference lowercases each candidate slice alone).
        ("\u0130 x\n\n<style>\n</style>\n<!-- c -->\nafter\n", "\u0130 x\n\n<style>\n</style>\nafter\n"),
        ("<textarea>\n</text\u0130rea>\n<!-- kept -->\n", "<textarea>\n</text\u0130rea>\n<!-- kept -->\n"),
    ],
)
def test_a_raw_block_ends_at_its_closing_tag_in_any_ascii_case(body: str, content: str) -> None:
    assert _claude(body).content == content


# --- imports ------------------------------------------------------------------------------


def test_refs_by_line_counts_lines_as_from_the_start() -> None:
    rng = random.Random(5)
    pieces = ["@a", " @b.md", "\n", "\n\n", " x", "\t@c\\ d", "@", " @#f", "\u3000@e"]
    for _ in range(500):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 25)))
        expected = [
            ref for m in IMPORT_RE.finditer(text) for ref in _refs_in_text(m.group(0), 7 + text.count("\n", 0, m.start() + 1))
        ]
        assert list(_refs_by_line(text, 7)) == expected, text


def test_a_paragraph_finds_each_path_once_and_list_text_as_written() -> None:
    tokens = _LOOPING.parse("a @x @x @y\nb @z\n\n- c @q `@w` @q\n  d @x\n")
    refs = extract_import_refs(tokens, 1, list_text_raw=True)
    assert [(r.path, r.line) for r in refs] == [("x", 1), ("y", 1), ("z", 2), ("q", 4), ("q", 4), ("x", 5)]


@pytest.mark.parametrize("unit", [" @x", " @a\\ b"])
def test_a_long_paragraph_of_imports(unit: str) -> None:
    n = 5_000
    tokens = _LOOPING.parse(unit * n + "\n" + "\n".join(["@l"] * 3) + "\n")
    refs = extract_import_refs(tokens, 1, list_text_raw=True)
    path = re.sub(r"\\ ", " ", unit.strip()[1:])
    assert [(r.path, r.line) for r in refs] == [(path, 1), ("l", 2)]
