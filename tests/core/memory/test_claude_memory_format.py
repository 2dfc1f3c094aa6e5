"""How Claude Code 2.1.328 reads a memory and its index (the claude flavor's release data).

Expected values are the CLI's (read from its requests: the manifest tags ``metadata.type``,
the index warning names the cut) and worked out by hand from them.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from memtui.core.memory.catalog import entry_to_json, load_catalog
from memtui.core.memory.index import quote_cut, truncate_index
from memtui.core.memory.memories import SEED_FORMAT, parse_memory_bytes, scan_memories
from memtui.core.places.flavor import CLAUDE
from memtui.core.writes.edits import plan_retype

FMT = CLAUDE.behaviour.memory_format
STYLE = CLAUDE.behaviour.instructions.index_warning
NOW = datetime(2026, 3, 10, 12, 0, tzinfo=UTC)


def parse(text: str, fmt=FMT):  # type: ignore[no-untyped-def]
    return parse_memory_bytes("/m/x.md", "x.md", text.encode(), NOW.timestamp(), fmt)


def codes(mem) -> set[str]:  # type: ignore[no-untyped-def]
    return {d.code for d in mem.diagnostics}


def test_metadata_type_is_the_type_and_no_trap() -> None:
    mem = parse("---\nname: n\ndescription: d\nmetadata:\n  type: project\n---\nfact\n**Why:** w\n**How to apply:** h\n")
    assert mem.type == "project"
    assert not {c for c in codes(mem) if c.startswith("type-")}
    seed = parse("---\nname: n\ndescription: d\nmetadata:\n  type: project\n---\nfact\n", SEED_FORMAT)
    assert seed.type is None and "type-nested" in codes(seed)  # the agent flavor keeps the seed's reading


def test_metadata_type_wins_over_a_top_level_type() -> None:
    mem = parse("---\nname: n\ndescription: d\ntype: user\nmetadata:\n  type: reference\n---\nbody\n")
    assert mem.type == "reference"
    assert "type-shadowed" in codes(mem)


def test_a_wrong_case_nested_type_is_not_a_type() -> None:
    mem = parse("---\nname: n\ndescription: d\nmetadata:\n  type: Feedback\n---\nbody\n")
    assert mem.type is None and "type-case" in codes(mem)


def test_a_bom_before_the_fence_is_dropped() -> None:
    mem = parse("\ufeff---\nname: n\ndescription: d\ntype: user\n---\nbody\n")
    assert mem.type == "user" and mem.description == "d"
    assert "frontmatter-after-bom" not in codes(mem) and "frontmatter-bom-stripped" in codes(mem)


def test_a_description_that_is_not_text_is_none() -> None:
    assert parse("---\nname: n\ndescription: 12345\ntype: user\n---\nb\n").description is None
    assert parse("---\nname: n\ndescription: 12345\ntype: user\n---\nb\n", SEED_FORMAT).description == "12345"


def test_ls_json_reports_the_nested_type(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("---\nname: a\ndescription: d\nmetadata:\n  type: user\n---\nb\n")
    catalog = load_catalog(tmp_path, NOW, fmt=FMT)
    (entry,) = catalog.entries
    assert entry_to_json(entry)["type"] == "user"


def test_retype_writes_the_form_the_file_uses(tmp_path: Path) -> None:
    nested = "---\nname: a\ndescription: d\nmetadata:\n  type: user\n  owner: me\n---\nbody\n"
    top = "---\nname: b\ndescription: d\ntype: user\n---\nbody\n"
    none = "---\nname: c\ndescription: d\n---\nbody\n"
    for name, text in (("a.md", nested), ("b.md", top), ("c.md", none)):
        (tmp_path / name).write_text(text)
    mems = {m.relpath: m for m in scan_memories(tmp_path, fmt=FMT).memories}
    after = {rel: plan_retype(tmp_path, mems[rel], "project", FMT).changes[0].after.decode() for rel in mems}
    assert after["a.md"] == "---\nname: a\ndescription: d\nmetadata:\n  type: project\n  owner: me\n---\nbody\n"
    assert after["b.md"] == "---\nname: b\ndescription: d\ntype: project\n---\nbody\n"
    # no type yet: the form Claude Code's own instructions write
    assert after["c.md"] == "---\nname: c\ndescription: d\nmetadata:\n  type: project\n---\nbody\n"


def test_index_warning_names_the_cut_lines() -> None:
    text = "\n".join(f"- [M {i}](m{i}.md) — hook {i}" for i in range(1, 231))
    trunc = truncate_index(text, STYLE)
    assert trunc.warning == (
        "> WARNING: MEMORY.md is 230 lines (limit: 200). Only part of it was loaded: 30 of 230 lines were cut off, "
        'starting at line 201 ("- [M 201](m201.md) — hook 201"). Keep index entries to one line under ~200 chars; '
        "move detail into topic files."
    )
    # the seed's wording is unchanged
    assert truncate_index(text).warning == (
        "> WARNING: MEMORY.md is 230 lines (limit: 200). Only part of it was loaded. Keep index entries to one line "
        "under ~200 chars; move detail into topic files."
    )


def test_a_blank_first_cut_line_gets_no_quote() -> None:
    lines = [f"- [M {i}](m{i}.md)" for i in range(1, 211)]
    lines[200] = "   "
    assert "starting at line 201. Keep" in (truncate_index("\n".join(lines), STYLE).warning or "")


def test_a_single_line_over_the_size_cap_is_cut_inside_line_one() -> None:
    trunc = truncate_index("x" * 30000 + "\n- [b](b.md)", STYLE)
    assert "Only part of it was loaded: everything after the first 25000 characters of line 1 was cut off." in (trunc.warning or "")


def test_the_quote_is_cut_at_a_word_under_80_units() -> None:
    assert quote_cut("x" * 80) == "x" * 80  # an 80-unit line is quoted whole
    words = "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho"
    assert quote_cut(words) == "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi…"
    assert quote_cut("y" * 100) == "y" * 79 + "…"  # no space: the first 79 units
