"""An index over ``MAX_INDEX_FILE_BYTES`` is audited in its first part and counted whole.

The agent loads at most the first 200 lines / 25,000 UTF-16 units of ``MEMORY.md``; memtui
parses the entries of the first 1 MiB and reads the rest once, in chunks, to count its lines
and units (the truncation warning states both) and to find its links to known memories. The
expected figures below are worked out from the files' shapes.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memtui.core.memory import index as index_mod
from memtui.core.memory.catalog import index_to_json
from memtui.core.memory.index import (
    MAX_INDEX_FILE_BYTES,
    MAX_INDEX_LINES,
    MAX_INDEX_UNITS,
    IndexSkip,
    read_index,
    size_label,
    truncate_index,
)
from memtui.core.places.behaviour import IndexWarning

LINE = "- [Entry {0:06d}](e{0:06d}.md)"  # 28 characters, 29 with its newline or a space
N = 700_000  # 700,000 × 29 = 20,300,000 bytes
HEAD_LINES = MAX_INDEX_FILE_BYTES // 29  # 36,157 whole lines in the first 1,048,576 bytes


def _write(path: Path, sep: str) -> None:
    with path.open("w", encoding="ascii") as fh:
        for start in range(0, N, 10_000):
            fh.write("".join(LINE.format(i) + sep for i in range(start, start + 10_000)))


def test_a_20_mb_index_of_lines_is_audited_in_its_first_mb_and_counted_whole(tmp_path: Path) -> None:
    _write(tmp_path / "MEMORY.md", "\n")
    report = read_index(tmp_path, ["e000005.md", "e600000.md", "nope.md"], check_links=False)
    assert report.error is None
    # the audit: whole lines of the first 1 MiB
    assert report.skip == IndexSkip(size=20_300_000, audited=HEAD_LINES * 29, counted=20_300_000)
    assert HEAD_LINES * 29 == 1_048_553
    assert report.skip.note() == (
        "only the first 1.0 MB of MEMORY.md (19.4 MB) was audited (skipped: 18.4 MB, over the 1.0 MB cap): entries past it are not listed"
    )
    assert len(report.entries) == HEAD_LINES == 36_157
    assert report.entries[-1].target == "e036156.md" and report.entries[-1].line == 36_157
    assert len(report.dropped) == HEAD_LINES - MAX_INDEX_LINES == 35_957
    assert report.dropped[0].line == 201
    # the agent's view of the whole file: 700,000 lines (the last newline is trimmed), 20,299,999 units
    trunc = report.truncation
    assert trunc is not None
    assert (trunc.lines, trunc.units, trunc.truncated_by) == (700_000, 20_299_999, ("lines", "size"))
    assert trunc.warning == (
        "> WARNING: MEMORY.md is 700000 lines and 19.4MB. Only part of it was loaded. "
        "Keep index entries to one line under ~200 chars; move detail into topic files."
    )
    assert trunc.kept == "\n".join(LINE.format(i) for i in range(200))
    assert trunc.content == f"{trunc.kept}\n\n{trunc.warning}"
    # a link past the audited part still indexes its memory
    assert report.unindexed == ("nope.md",)
    assert {"e000005.md", "e600000.md"} <= report.indexed
    data = index_to_json(report)
    assert data["skipped"] == {"size_bytes": 20_300_000, "audited_bytes": 1_048_553, "counted_bytes": 20_300_000, "note": report.skip.note()}


def test_a_20_mb_index_on_one_line_is_cut_inside_the_line(tmp_path: Path) -> None:
    _write(tmp_path / "MEMORY.md", " ")
    style = IndexWarning(names_cut=True)
    report = read_index(tmp_path, ["e000001.md"], check_links=False, warning_style=style)
    assert report.skip == IndexSkip(size=20_300_000, audited=MAX_INDEX_FILE_BYTES, counted=20_300_000)
    # the links wholly inside the first 1,048,576 bytes: link i ends at byte 29·i + 28
    assert len(report.entries) == 36_157 and report.entries[-1].target == "e036156.md"
    trunc = report.truncation
    assert trunc is not None
    assert (trunc.lines, trunc.units, trunc.truncated_by) == (1, 20_299_999, ("size",))
    assert trunc.kept == ("".join(LINE.format(i) + " " for i in range(863)))[:MAX_INDEX_UNITS]  # no newline: a hard cut
    assert trunc.warning == (
        "> WARNING: MEMORY.md is 19.4MB (limit: 24.4KB) — index entries are too long. Only part of it was loaded: "
        "everything after the first 25000 characters of line 1 was cut off. "
        "Keep index entries to one line under ~200 chars; move detail into topic files."
    )
    # kept: the links whose `](target)` ends within 25,000 characters (i ≤ 861)
    assert len(report.dropped) == 36_157 - 862


def test_white_space_around_a_small_index_is_not_a_reason_to_skip_it(tmp_path: Path) -> None:
    (tmp_path / "MEMORY.md").write_text("\n\n\n- [A](a.md) — the one entry\n" + " " * (2 * MAX_INDEX_FILE_BYTES) + "\n\n")
    report = read_index(tmp_path, ["a.md", "b.md"], check_links=False)
    assert report.skip is None
    assert report.truncation == truncate_index("\n\n\n- [A](a.md) — the one entry\n")
    assert [(e.line, e.target) for e in report.entries] == [(4, "a.md")]
    assert report.unindexed == ("b.md",)


def test_a_file_at_the_cap_is_read_whole(tmp_path: Path) -> None:
    text = "- [A](a.md)\n" + "x" * (MAX_INDEX_FILE_BYTES - 12)
    assert len(text.encode()) == MAX_INDEX_FILE_BYTES
    (tmp_path / "MEMORY.md").write_text(text)
    report = read_index(tmp_path, [], check_links=False)
    assert report.skip is None and report.text == text


def test_the_size_labels() -> None:
    assert [size_label(n) for n in (999, 1000, 25_000, 1_048_553, 20_300_000, 5 * 1024**3)] == [
        "999 bytes", "1.0 KB", "24.4 KB", "1.0 MB", "19.4 MB", "5.0 GB",
    ]


def test_a_kept_summary_keeps_what_was_skipped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from memtui.core.memory import catalogdb
    from memtui.core.memory.catalogdb import CatalogDB

    monkeypatch.setattr(catalogdb, "RACY_SECONDS", -10)  # the file's ctime is now: else never kept
    mem = tmp_path / "mem"
    mem.mkdir()
    with (mem / "MEMORY.md").open("w") as fh:
        fh.write("".join(LINE.format(i) + "\n" for i in range(50_000)))  # 1,450,000 bytes
    db = CatalogDB.for_memory_dir(tmp_path / "state", mem)
    full = read_index(mem, [], cache=db)
    summary = read_index(mem, [], cache=db, summary=True)
    assert summary.is_summary and summary.skip == full.skip == IndexSkip(1_450_000, HEAD_LINES * 29, 1_450_000)
    assert summary.dropped_count == len(full.dropped) == HEAD_LINES - MAX_INDEX_LINES


# ---- the counted truncation is the reference's on the whole text, for any text ----------------

PIECES = st.sampled_from([
    "- [A](a.md) — hook\n", "- [é😀 B](b.md)\n", "深い行\n", "\r\n", "\n", "\n\n", " ", "\t", "\u3000", "\ufeff",
    "x" * 97, "- [Long](l.md) " + "y" * 300 + "\n", "😀" * 40,
])


@settings(max_examples=150, deadline=None)
@given(st.lists(PIECES, min_size=1, max_size=400).map("".join), st.sampled_from([16, 300, 4096]), st.sampled_from([7, 1000]),
       st.booleans())
def test_the_count_over_chunks_gives_the_reference_truncation(text: str, cap: int, chunk: int, names_cut: bool) -> None:
    style = IndexWarning(names_cut=names_cut)
    with pytest.MonkeyPatch.context() as mp, tempfile.TemporaryDirectory() as tmp:
        mp.setattr(index_mod, "MAX_INDEX_FILE_BYTES", cap)
        mp.setattr(index_mod, "_CHUNK_BYTES", chunk)
        (Path(tmp) / "MEMORY.md").write_text(text, encoding="utf-8", newline="")
        report = read_index(Path(tmp), ["a.md", "b.md", "l.md"], check_links=False, warning_style=style)
    assert report.truncation == truncate_index(text, style)
    linked = {e.relpath for e in index_mod.parse_entries(text)}
    assert set(report.unindexed) == {"a.md", "b.md", "l.md"} - linked
    if report.skip is None:
        assert [(e.line, e.target) for e in report.entries] == [(e.line, e.target) for e in index_mod.parse_entries(text)]
