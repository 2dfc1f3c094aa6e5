"""HTML blocks, comment stripping and ``@`` imports against what Claude Code itself sent.

The captures (``tests/captures/claude-<version>/html_imports/<scenario>.json``) hold the files of
one oracle scenario (``scripts/oracle_scenarios.py``) and the ``Contents of <path> (…)`` sections
the real CLI sent for them (``scripts/oracle_own.sh``). Each test writes the same files under
``tmp_path`` and compares memtui's cascade with the CLI's sections: which files loaded, in which
order, and each file's text, byte for byte.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from memtui.core.cascade import compute_cascade
from memtui.core.cascade.imports import extract_import_refs
from memtui.core.cascade.preprocess import js_trim, preprocess
from memtui.core.places.flavor import CLAUDE
from memtui.core.places.locations import resolve_locations

CAPTURES = Path(__file__).resolve().parents[2] / "captures"
SCENARIOS_2_1_332 = sorted((CAPTURES / "claude-2.1.332" / "html_imports").glob("*.json"))
SCENARIOS_2_1_328 = sorted((CAPTURES / "claude-2.1.328" / "html_imports").glob("*.json"))


def _load(path: Path) -> dict:  # type: ignore[type-arg]
    return json.loads(path.read_text(encoding="utf-8"))


def _workspace(tmp_path: Path, capture: dict) -> Path:  # type: ignore[type-arg]
    proj = tmp_path / "proj"
    (proj / ".git").mkdir(parents=True)
    for rel, text in capture["files"].items():
        target = proj / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(text.encode("utf-8"))
    return proj


def _sections(flavor, proj: Path) -> list[tuple[str, str]]:  # type: ignore[no-untyped-def]
    result = compute_cascade(resolve_locations(flavor, proj), proj)
    return [
        (os.path.relpath(f.path, proj), f.content or "")
        for f in result.files
        if f.loaded and f.content is not None and f.path.startswith(str(proj))
    ]


@pytest.mark.parametrize("capture_path", SCENARIOS_2_1_332, ids=lambda p: p.stem)
def test_the_cascade_loads_and_strips_as_claude_code_2_1_332(tmp_path: Path, capture_path: Path) -> None:
    capture = _load(capture_path)
    proj = _workspace(tmp_path, capture)
    expected = [(s["path"], s["content"]) for s in capture["sections"]]
    assert CLAUDE.behaviour.version == "2.1.332"
    assert _sections(CLAUDE, proj) == expected


@pytest.mark.parametrize("capture_path", SCENARIOS_2_1_328, ids=lambda p: p.stem)
def test_2_1_328_rebuilt_a_commented_file_from_its_blocks(capture_path: Path) -> None:
    # Link reference definitions (and the empty lines after them) vanished, CRLF became LF.
    capture = _load(capture_path)
    for section in capture["sections"]:
        if not section["path"].startswith("c/"):
            continue
        parsed = preprocess(capture["files"][section["path"]], section["path"], want_imports=True, markdown="claude-code", keeps_link_definitions=False)
        assert js_trim(parsed.content) == section["content"], section["path"]


def test_the_held_back_shapes_a_div_after_a_closing_script_and_an_escaped_space() -> None:
    # A `</script>` alone is paragraph text, so a comment under it is a block of its own and is
    # cut with the <div> it wraps; `\ ` stays in the import path.
    body = "</script>\n<!-- old:\n<div>\nx\n</div>\n-->\n\nSee @docs/release\\ notes.md\n"
    parsed = preprocess(body, "CLAUDE.md", want_imports=True, markdown="claude-code")
    assert js_trim(parsed.content) == "</script>\nSee @docs/release\\ notes.md"
    assert parsed.tokens is not None
    assert [r.path for r in extract_import_refs(parsed.tokens, 1, list_text_raw=True)] == ["docs/release notes.md"]


def test_the_agent_flavor_keeps_commonmark_blocks_but_reads_escaped_spaces() -> None:
    parsed = preprocess("</script>\n<!-- kept -->\n\n- see `@a.md` and @b\\ c.md\n", "AGENT.md", want_imports=True)
    assert "<!-- kept -->" in parsed.content
    assert parsed.tokens is not None
    assert [r.path for r in extract_import_refs(parsed.tokens, 1)] == ["b c.md"]


def test_import_lines_are_file_lines_in_list_text_and_after_breaks() -> None:
    body = "intro\n\n- one `cat @a.md now`\n  two @b.md\n\nx\ny @c.md\n"
    parsed = preprocess(body, "CLAUDE.md", want_imports=True, markdown="claude-code")
    assert parsed.tokens is not None
    refs = extract_import_refs(parsed.tokens, 3, list_text_raw=True)
    assert [(r.path, r.line) for r in refs] == [("a.md", 5), ("b.md", 6), ("c.md", 9)]


@pytest.mark.parametrize("version", ["2.1.332", "2.1.328"])
def test_memory_md_goes_through_the_same_lexer_as_claude_md(tmp_path: Path, version: str) -> None:
    """MEMORY.md: a comment under a lone ``</script>`` is cut with the ``<div>`` it wraps, an inline
    comment and a ``<div>`` block stay, and a link definition beside a comment stays in 2.1.332 but
    vanished in 2.1.328 — as each release sent it (``tests/captures/claude-<version>/index_html/``)."""
    from memtui.core.places.flavor import CLAUDE_2_1_328

    capture = _load(CAPTURES / f"claude-{version}" / "index_html" / "o_index_html.json")
    flavor = CLAUDE if version == "2.1.332" else CLAUDE_2_1_328
    proj = _workspace(tmp_path, {"files": {"CLAUDE.md": "# p\n"}})
    loc = resolve_locations(flavor, proj)
    loc.memory_dir.mkdir(parents=True)
    (loc.memory_dir / "MEMORY.md").write_bytes(capture["files"]["MEMORY.md"].encode("utf-8"))
    index = next(f for f in compute_cascade(loc, proj).files if f.layer == "automem")
    assert index.loaded and index.content == capture["sections"][0]["content"]


def test_an_import_cut_at_an_unescaped_space_names_the_file_meant(tmp_path: Path) -> None:
    """Claude Code ends an import path at a space (``o_import_escapes``: only ``\\ `` keeps it), so
    ``@docs/release notes.md`` asks for ``docs/release``; with ``docs/release notes.md`` there,
    the finding says how to write the import, instead of calling it an npm scope."""
    proj = _workspace(tmp_path, {"files": {
        "CLAUDE.md": "See @docs/release notes.md for the release.\n",
        "docs/release notes.md": "# notes\n",
    }})
    cascade = compute_cascade(resolve_locations(CLAUDE, proj), proj)
    found = [(d.code, d.severity, d.line) for d in cascade.diagnostics if d.code.startswith("import-")]
    assert found == [("import-unescaped-space", "warning", 1)]
    message = next(d.message for d in cascade.diagnostics if d.code == "import-unescaped-space")
    assert message.endswith("to import it, write `@docs/release\\ notes.md`")
