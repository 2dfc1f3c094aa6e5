"""docs/behaviour.md §4.4: the index `MEMORY.md` — reference truncation and memtui's audit.

Truncation: trim; keep the first 200 lines; if the *original* trimmed text is over 25,000 UTF-16
units, cut at the last newline at or before unit 25,000 (hard cut if none); append
`> WARNING: MEMORY.md is <reason>. Only part of it was loaded. <advice>`; sizes are n/1024 to
one decimal with `.0` dropped.

Expected numbers were worked out by hand and cross-checked with a node model of the reference
(`truncateEntrypointContent`, JavaScript string lengths = UTF-16 units), e.g. 100 lines of 299
chars → 29,999 units → "29.3KB", cut after line 83 (its newline is at index 24,899). The
reason for both limits at once, "<N> lines and <size>", is the reference's wording (SPEC: "or
both").
"""

from __future__ import annotations

from pathlib import Path

import pytest

from memtui.core.memory.catalog import load_catalog
from memtui.core.memory.index import format_file_size, parse_entries, read_index, truncate_index

ADVICE = "Keep index entries to one line under ~200 chars; move detail into topic files."


def warning(reason: str) -> str:
    return f"> WARNING: MEMORY.md is {reason}. Only part of it was loaded. {ADVICE}"


def entry(k: int, width: int | None = None) -> str:
    line = f"- [Entry {k}](m{k}.md) — hook {k}"
    if width is not None:
        assert len(line) <= width
        line = line + " " + "x" * (width - len(line) - 1)
        assert len(line) == width
    return line


def index_text(n: int, width: int | None = None) -> str:
    return "\n".join(entry(k, width) for k in range(1, n + 1)) + "\n"


def write_index(root: Path, text: str, rel: str = "MEMORY.md") -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8", newline="")
    return path


# --- format_file_size -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("n", "expected"),
    [(0, "0 bytes"), (1023, "1023 bytes"), (1024, "1KB"), (1536, "1.5KB"), (25_000, "24.4KB"), (25_600, "25KB"),
     (29_999, "29.3KB"), (37_749, "36.9KB"), (1024 * 1024, "1MB"), (1024 * 1024 * 3 // 2, "1.5MB")],
)
def test_format_file_size(n: int, expected: str) -> None:
    assert format_file_size(n) == expected


# --- line truncation ------------------------------------------------------------------------------


def test_221_lines_keep_200_and_warn() -> None:
    raw = index_text(221)
    t = truncate_index(raw)
    assert t.lines == 221
    assert t.truncated_by == ("lines",)
    assert t.warning == warning("221 lines (limit: 200)")
    assert t.warning == (
        "> WARNING: MEMORY.md is 221 lines (limit: 200). Only part of it was loaded. "
        "Keep index entries to one line under ~200 chars; move detail into topic files."
    )
    kept = "\n".join(entry(k) for k in range(1, 201))
    assert t.kept == kept
    assert t.content == kept + "\n\n" + t.warning


def test_200_lines_are_not_truncated() -> None:
    raw = index_text(200)
    t = truncate_index(raw)
    assert t.truncated_by == ()
    assert t.warning is None
    assert t.content == raw.strip()
    assert t.lines == 200


def test_surrounding_blank_lines_are_trimmed_before_counting() -> None:
    raw = "\n\n  \n" + index_text(200) + "\n\n\n"
    t = truncate_index(raw)
    assert t.lines == 200
    assert t.warning is None
    assert t.content == index_text(200).strip()


def test_201_lines_under_the_size_cap_is_lines_only() -> None:
    t = truncate_index(index_text(201, width=120))  # 24,320 units: under the size cap
    assert t.units == 24_320
    assert t.truncated_by == ("lines",)
    assert t.warning == warning("201 lines (limit: 200)")
    assert t.kept == index_text(200, width=120).rstrip("\n")


# --- size truncation ------------------------------------------------------------------------------


def test_long_lines_cut_at_last_newline_before_25000_units() -> None:
    t = truncate_index(index_text(100, width=299))
    assert t.units == 29_999
    assert t.lines == 100
    assert t.truncated_by == ("size",)
    assert t.warning == warning("29.3KB (limit: 24.4KB) — index entries are too long")
    assert len(t.kept) == 24_899
    assert t.kept == "\n".join(entry(k, 299) for k in range(1, 84))


def test_newline_exactly_at_unit_25000_is_a_valid_cut() -> None:
    raw = "x" * 100 + "\n" + "y" * 24_899 + "\n" + "z" * 50
    t = truncate_index(raw)
    assert t.kept == "x" * 100 + "\n" + "y" * 24_899
    assert len(t.kept) == 25_000


def test_newline_at_unit_25001_is_past_the_cut() -> None:
    raw = "x" * 100 + "\n" + "y" * 24_900 + "\n" + "z" * 50
    t = truncate_index(raw)
    assert t.kept == "x" * 100


def test_hard_cut_when_there_is_no_newline() -> None:
    t = truncate_index("q" * 30_000)
    assert t.kept == "q" * 25_000
    assert t.warning == warning("29.3KB (limit: 24.4KB) — index entries are too long")
    assert t.content == "q" * 25_000 + "\n\n" + t.warning


def test_both_limits_at_once() -> None:
    t = truncate_index(index_text(250, width=150))
    assert t.lines == 250
    assert t.units == 37_749
    assert t.truncated_by == ("lines", "size")
    assert t.warning == warning("250 lines and 36.9KB")
    assert t.kept == "\n".join(entry(k, 150) for k in range(1, 166))  # newline of line 165 at 24,914


def test_size_reason_uses_the_original_size_even_if_200_lines_fit() -> None:
    t = truncate_index(index_text(300, width=100))  # 30,299 units; 200 lines = 20,199 units
    assert t.truncated_by == ("lines", "size")
    assert t.warning == warning("300 lines and 29.6KB")
    assert t.kept == index_text(200, width=100).rstrip("\n")


# --- UTF-16 code units ----------------------------------------------------------------------------


def test_emoji_count_two_units_each() -> None:
    raw = "😀" * 12_600  # 12,600 code points but 25,200 UTF-16 units: over the cap
    t = truncate_index(raw)
    assert t.units == 25_200
    assert t.truncated_by == ("size",)
    assert t.warning == warning("24.6KB (limit: 24.4KB) — index entries are too long")
    assert t.kept == "😀" * 12_500


def test_emoji_lines_cut_at_the_right_newline() -> None:
    raw = "\n".join(["😀" * 100] * 130)  # each line 200 units; 26,129 units in all
    t = truncate_index(raw)
    assert t.units == 26_129
    assert t.warning == warning("25.5KB (limit: 24.4KB) — index entries are too long")
    assert t.kept == "\n".join(["😀" * 100] * 124)  # newline after line 124 is at unit 24,923


def test_cjk_counts_one_unit_not_three_bytes() -> None:
    raw = "笔" * 24_000 + "\n" + "记" * 500  # 24,501 units, 73,501 UTF-8 bytes
    t = truncate_index(raw)
    assert t.units == 24_501
    assert t.truncated_by == ()
    assert t.warning is None


def test_bom_is_trimmed_like_javascript_trim() -> None:
    t = truncate_index("\ufeff# Memory\n- [a](a.md)\n")
    assert t.content == "# Memory\n- [a](a.md)"
    assert t.units == 20


# --- entries, dropped, dangling, unindexed ---------------------------------------------------------


def test_dropped_entries_of_a_221_line_index(tmp_path: Path) -> None:
    write_index(tmp_path, index_text(221))
    report = read_index(tmp_path, [])
    assert len(report.dropped) == 21
    assert [(e.line, e.title, e.target) for e in report.dropped] == [(k, f"Entry {k}", f"m{k}.md") for k in range(201, 222)]


def test_dropped_line_numbers_count_trimmed_leading_lines(tmp_path: Path) -> None:
    write_index(tmp_path, "\n\n" + index_text(201))
    report = read_index(tmp_path, [])
    assert report.truncation is not None
    assert report.truncation.warning == warning("201 lines (limit: 200)")
    assert [(e.line, e.target) for e in report.dropped] == [(203, "m201.md")]


def test_dropped_entries_after_a_size_cut(tmp_path: Path) -> None:
    write_index(tmp_path, index_text(100, width=299))
    report = read_index(tmp_path, [])
    assert [e.line for e in report.dropped] == list(range(84, 101))


def test_entry_cut_through_by_a_hard_cut_is_dropped(tmp_path: Path) -> None:
    write_index(tmp_path, "- [A](a.md) " + "x" * 30_000 + " [B](b.md)")
    report = read_index(tmp_path, [])
    assert [e.target for e in report.entries] == ["a.md", "b.md"]
    assert [e.target for e in report.dropped] == ["b.md"]


def test_no_dropped_entries_when_not_truncated(tmp_path: Path) -> None:
    write_index(tmp_path, index_text(200))
    assert read_index(tmp_path, []).dropped == ()


def test_dangling_unindexed_heading_encoded_and_dot_slash_links(tmp_path: Path) -> None:
    for rel in ("feedback_a.md", "project_freeze.md", "my note.md", "dot.md", "sub/deep.md", "orphan.md", "team/t.md"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("x\n")
    write_index(
        tmp_path,
        "# Memory index\n"
        "\n"
        "## Feedback\n"
        "- [A](feedback_a.md) — hook\n"
        "### [Release freeze](project_freeze.md)\n"
        "- [Note](my%20note.md) — url-encoded\n"
        "- [Dot](./dot.md) — dot slash\n"
        "- [Deep](sub/deep.md)\n"
        "- [Gone](project_gone.md) — missing file\n"
        "- [Site](https://example.com/page.md) — not a memory\n"
        "- `[Code](code_span.md)` is not a link\n",
    )
    report = read_index(tmp_path, ["feedback_a.md", "project_freeze.md", "my note.md", "dot.md", "sub/deep.md", "orphan.md"])
    assert report.exists
    assert report.dangling == ("project_gone.md",)
    assert report.unindexed == ("orphan.md",)
    assert report.dropped == ()
    by_target = {e.target: e for e in report.entries}
    assert "code_span.md" not in by_target
    freeze = by_target["project_freeze.md"]
    assert (freeze.title, freeze.heading, freeze.line) == ("Release freeze", True, 5)
    assert by_target["feedback_a.md"].heading is False
    assert by_target["my%20note.md"].relpath == "my note.md"
    assert by_target["./dot.md"].relpath == "dot.md"
    assert by_target["https://example.com/page.md"].relpath is None


def test_dangling_target_listed_once(tmp_path: Path) -> None:
    write_index(tmp_path, "- [Gone](gone.md)\n- [Gone again](gone.md)\n")
    assert read_index(tmp_path, []).dangling == ("gone.md",)


def test_missing_index(tmp_path: Path) -> None:
    report = read_index(tmp_path, ["a.md", "b.md"])
    assert report.exists is False
    assert report.truncation is None
    assert report.unindexed == ("a.md", "b.md")


def test_team_index_links_are_relative_to_team_dir(tmp_path: Path) -> None:
    (tmp_path / "team").mkdir()
    (tmp_path / "team" / "reference_tracker.md").write_text("x\n")
    write_index(tmp_path, "- [Tracker](reference_tracker.md)\n- [Gone](gone.md)\n", rel="team/MEMORY.md")
    report = read_index(tmp_path, ["team/reference_tracker.md"], index_dir_rel="team")
    assert report.unindexed == ()
    assert report.dangling == ("gone.md",)


def test_parse_entries_multiple_links_on_a_line() -> None:
    entries = parse_entries("- [A](a.md) see also [B](b.md)\nplain line\n")
    assert [(e.line, e.title, e.target) for e in entries] == [(1, "A", "a.md"), (1, "B", "b.md")]


def test_catalog_in_index_and_team_index(tmp_path: Path) -> None:
    from datetime import UTC, datetime

    text = "---\nname: n\ndescription: d\ntype: reference\n---\nbody\n"
    for rel in ("a.md", "b.md", "team/t.md", "team/u.md"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    write_index(tmp_path, "- [A](a.md)\n")
    write_index(tmp_path, "- [T](t.md)\n", rel="team/MEMORY.md")
    catalog = load_catalog(tmp_path, datetime(2026, 3, 10, tzinfo=UTC))
    assert {e.relpath: e.in_index for e in catalog.entries} == {"a.md": True, "b.md": False, "team/t.md": True, "team/u.md": False}
    assert catalog.index.unindexed == ("b.md",)
    assert catalog.team_index is not None and catalog.team_index.unindexed == ("team/u.md",)
