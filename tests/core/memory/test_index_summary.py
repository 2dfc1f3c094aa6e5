"""The index's summary kept in the catalog database: a UI's first screenful takes the index's
truncation, dropped count and linked relpaths from it instead of parsing a long ``MEMORY.md``;
a changed, racy or unreadable index, or a damaged summary, is read and parsed as without it.

Expected figures are worked out by hand from the files each test writes: an index of 221
one-link lines keeps 200 (the line cap), so 21 entries are dropped.
"""

from __future__ import annotations

import os
import sqlite3
from datetime import UTC, datetime
from pathlib import Path
from typing import BinaryIO

import pytest

from memtui.core.memory import catalogdb
from memtui.core.memory import index as index_mod
from memtui.core.memory.catalog import load_catalog
from memtui.core.memory.catalogdb import DB_NAME, CatalogDB
from memtui.core.memory.index import SUMMARY_KIND, read_index
from memtui.core.places.behaviour import IndexWarning

OLD = 1_700_000_000
NOW = datetime(2026, 3, 10, 12, 0, tzinfo=UTC)


@pytest.fixture(autouse=True)
def no_racy_window(monkeypatch: pytest.MonkeyPatch) -> None:
    """A file a test writes has a ctime of now: without this it would always be racy."""
    monkeypatch.setattr(catalogdb, "RACY_SECONDS", -10)


def write(path: Path, text: str, mtime: float = OLD) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8", newline="")
    os.utime(path, (mtime, mtime))
    return path


def memory_dir(root: Path) -> Path:
    """Five memories m1..m5 (m5 newest), an index of 221 lines linking m1..m221 (m1..m4 exist;
    m5 is not linked: line 5 links m5x.md)."""
    mem = root / "memory"
    for k in range(1, 6):
        write(mem / f"m{k}.md", f"---\nname: M{k}\ndescription: d{k}\ntype: user\n---\nbody {k}\n", OLD + k * 100)
    lines = [f"- [M{k}](m{k}{'x' if k == 5 else ''}.md) — hook" for k in range(1, 222)]
    write(mem / "MEMORY.md", "\n".join(lines) + "\n")
    return mem


def db_of(root: Path, mem: Path) -> CatalogDB:
    return CatalogDB.for_memory_dir(root / "state", mem)


def reads_of_index(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Record every read of an index file by ``read_index``."""
    seen: list[str] = []
    real = index_mod.open_regular

    def counting(path: str | os.PathLike[str]) -> tuple[BinaryIO, os.stat_result]:
        seen.append(os.path.basename(path))
        return real(path)

    monkeypatch.setattr(index_mod, "open_regular", counting)
    return seen


def test_a_first_batch_takes_the_kept_summary_without_reading_the_index(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    mem = memory_dir(tmp_path)
    full = load_catalog(mem, NOW, cache=db_of(tmp_path, mem))  # reads the index, keeps its summary
    assert full.complete and len(full.index.entries) == 221 and len(full.index.dropped) == 21
    reads = reads_of_index(monkeypatch)
    batch = load_catalog(mem, NOW, newest=2, cache=db_of(tmp_path, mem))
    assert reads == []
    assert not batch.complete and [e.relpath for e in batch.entries] == ["m5.md", "m4.md"]
    index = batch.index
    assert index.is_summary and index.entries == () and index.dropped == () and index.dangling == ()
    assert index.dropped_count == 21 and full.index.dropped_count == 21
    assert index.truncation == full.index.truncation
    assert index.truncation is not None and index.truncation.lines == 221 and index.truncation.truncated_by == ("lines",)
    assert index.indexed == full.index.indexed and len(index.indexed) == 221  # m1..m221 with m5x.md for m5.md
    assert index.unindexed == ("m5.md",)
    assert [e.in_index for e in batch.entries] == [False, True]


def test_without_a_kept_summary_the_first_batch_parses_the_index(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    mem = memory_dir(tmp_path)
    load_catalog(mem, NOW, cache=CatalogDB(None, mem))  # no database: nothing kept
    report = read_index(mem, ["m1.md"], check_links=False, cache=db_of(tmp_path, mem), summary=True)
    assert not report.is_summary and len(report.entries) == 221 and report.dropped_count == 21


def test_a_changed_index_is_read_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    mem = memory_dir(tmp_path)
    load_catalog(mem, NOW, cache=db_of(tmp_path, mem))
    write(mem / "MEMORY.md", "- [M1](m1.md) — hook\n- [M5](m5.md) — hook\n")  # same mtime, other size
    reads = reads_of_index(monkeypatch)
    report = read_index(mem, ["m1.md", "m5.md", "m2.md"], check_links=False, cache=db_of(tmp_path, mem), summary=True)
    assert reads == ["MEMORY.md"]
    assert not report.is_summary and report.dropped_count == 0 and report.unindexed == ("m2.md",)
    # and that read kept the new summary
    again = read_index(mem, ["m1.md", "m5.md", "m2.md"], check_links=False, cache=db_of(tmp_path, mem), summary=True)
    assert reads == ["MEMORY.md"] and again.is_summary and again.indexed == frozenset({"m1.md", "m5.md"})


def test_a_racy_index_is_not_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(catalogdb, "RACY_SECONDS", 2)
    mem = memory_dir(tmp_path)  # MEMORY.md's ctime is now
    read_index(mem, [], cache=db_of(tmp_path, mem))
    report = read_index(mem, [], check_links=False, cache=db_of(tmp_path, mem), summary=True)
    assert not report.is_summary and len(report.entries) == 221


def test_another_warning_style_is_not_answered_by_the_kept_summary(tmp_path: Path) -> None:
    mem = memory_dir(tmp_path)
    read_index(mem, [], cache=db_of(tmp_path, mem))
    style = IndexWarning(names_cut=True)
    report = read_index(mem, [], check_links=False, cache=db_of(tmp_path, mem), summary=True, warning_style=style)
    assert not report.is_summary
    assert report.truncation is not None and report.truncation.warning is not None
    assert "21 of 221 lines were cut off, starting at line 201" in report.truncation.warning


@pytest.mark.parametrize("value", [b"not json", b"[1, 2]", b'["c", "x", 1, [], null, "k", 0, []]', b'["c", 1, 1, ["words"], null, "k", 0, []]',
                                   b'["c", 1, 1, [], null, "k", -1, []]', b'["c", 1, 1, [], null, "k", 0, [1]]'])
def test_a_damaged_summary_is_not_trusted(tmp_path: Path, value: bytes) -> None:
    mem = memory_dir(tmp_path)
    read_index(mem, [], cache=db_of(tmp_path, mem))
    db_file = next((tmp_path / "state").rglob(DB_NAME))
    with sqlite3.connect(db_file) as conn:
        assert conn.execute("UPDATE results SET value = ? WHERE kind = ?", (value, SUMMARY_KIND)).rowcount == 1
    report = read_index(mem, [], check_links=False, cache=db_of(tmp_path, mem), summary=True)
    assert not report.is_summary and len(report.entries) == 221 and report.dropped_count == 21


def test_a_missing_index_after_a_kept_summary(tmp_path: Path) -> None:
    mem = memory_dir(tmp_path)
    read_index(mem, [], cache=db_of(tmp_path, mem))
    (mem / "MEMORY.md").unlink()
    report = read_index(mem, ["m1.md"], check_links=False, cache=db_of(tmp_path, mem), summary=True)
    assert not report.exists and report.unindexed == ("m1.md",) and report.dropped_count == 0
