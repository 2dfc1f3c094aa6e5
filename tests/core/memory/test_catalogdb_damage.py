"""Whatever happens to the catalog database file, the doctor, the offline dream plan and the
search answer exactly as they do without it, and the next run rebuilds it: deleted between
two runs or while a run holds it open, replaced by garbage bytes, by another application's
SQLite file, by a FIFO (opening one for reading would block) or a directory.

The expected answers are the doctor's findings with no database at all and the dream plan of a
fresh state dir (nothing stored yet); the search's are the definition applied to every memory."""

from __future__ import annotations

import os
import shutil
import sqlite3
from dataclasses import replace
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from support.dream import DAY, NOW, context, generate_store, memory, write

from memtui.core.doctor import run_doctor
from memtui.core.dream import DreamContext, plan_dream, plan_to_json
from memtui.core.dream import offline as offline_mod
from memtui.core.memory import catalogdb
from memtui.core.memory.catalogdb import CatalogDB
from memtui.core.memory.memories import scan_memories
from memtui.core.memory.search import CatalogSearch, matches, terms_of

T = NOW.timestamp()
BODY = "Integration tests must hit a real Postgres database, never mocks. Ship the fix tomorrow.\n"


@pytest.fixture(autouse=True)
def no_racy_window(monkeypatch: pytest.MonkeyPatch) -> None:
    """The files are written just now (their ctime cannot be set back): without this none
    would be stored, and the runs below would never read the database."""
    monkeypatch.setattr(catalogdb, "RACY_SECONDS", -10)


def build(tmp_path: Path) -> DreamContext:
    """A store with something for every stored result: near and exact duplicates, relative
    dates, an index over the line cap, a secret."""
    ctx = context(tmp_path)
    m = ctx.memory_dir
    generate_store(m, 220)
    write(m / "feedback_db.md", memory("Real database", "Tests hit a real database", "feedback", BODY), T - 20 * DAY)
    write(m / "feedback_db_copy.md", memory("Real database", "Tests hit a real database", "feedback", BODY), T - 3 * DAY)
    write(m / "feedback_db_near.md", memory("Real db", "Tests hit a real database", "feedback", BODY + "Use the shared fixture.\n"), T - 2 * DAY)
    write(m / "reference_key.md", memory("Key", "The staging key", "reference", "aws_access_key_id = AKIAIOSFODNN7EXAMPLE\n"), T - 5 * DAY)
    return ctx


def doctor_json(ctx: DreamContext, cache: CatalogDB | None) -> list[Any]:
    report = run_doctor(ctx.memory_dir, NOW, cache=cache)
    return [(f.code, f.severity, f.path, f.line, f.message) for f in report.findings]


def dream_json(ctx: DreamContext) -> dict[str, Any]:
    return plan_to_json(plan_dream(ctx, NOW, "offline"))


def db_path(ctx: DreamContext) -> Path:
    db = CatalogDB.for_memory_dir(ctx.state_dir, ctx.memory_dir)
    assert db.path is not None
    db.close()
    return db.path


def remove(path: Path) -> None:
    for suffix in ("", "-wal", "-shm"):
        p = Path(f"{path}{suffix}")
        if p.is_dir():
            shutil.rmtree(p)
        else:
            p.unlink(missing_ok=True)


def garbage(path: Path) -> None:
    remove(path)
    path.write_bytes(b"SQLite format 3\x00" + b"\x5a" * 9000)


def foreign(path: Path) -> None:
    remove(path)
    other = sqlite3.connect(path)
    other.execute("CREATE TABLE memories(relpath TEXT, key TEXT, record BLOB)")  # our table's name, not ours
    other.execute("CREATE TABLE derived(relpath TEXT, kind TEXT, key TEXT, fingerprint TEXT, value BLOB)")
    other.execute("INSERT INTO memories VALUES ('feedback_db.md', 'x', 'y')")
    other.commit()
    other.close()


def fifo(path: Path) -> None:
    remove(path)
    os.mkfifo(path)


def directory(path: Path) -> None:
    remove(path)
    path.mkdir()


DAMAGE: dict[str, Callable[[Path], None]] = {"deleted": remove, "garbage": garbage, "foreign": foreign, "fifo": fifo, "directory": directory}


def reference(ctx: DreamContext) -> tuple[list[Any], dict[str, Any]]:
    """The doctor without a database and the dream plan of a fresh state dir."""
    fresh = replace(ctx, state_dir=ctx.state_dir.parent / f"fresh-{len(list(ctx.state_dir.parent.glob('fresh-*')))}")
    return doctor_json(ctx, None), dream_json(fresh)


@pytest.mark.parametrize("kind", list(DAMAGE))
def test_a_damaged_database_changes_no_answer(tmp_path: Path, kind: str) -> None:
    ctx = build(tmp_path)
    doctor_expected, dream_expected = reference(ctx)
    assert doctor_json(ctx, CatalogDB.for_memory_dir(ctx.state_dir, ctx.memory_dir)) == doctor_expected
    assert dream_json(ctx) == dream_expected  # the database holds every result now
    path = db_path(ctx)
    DAMAGE[kind](path)
    assert doctor_json(ctx, CatalogDB.for_memory_dir(ctx.state_dir, ctx.memory_dir)) == doctor_expected
    assert dream_json(ctx) == dream_expected
    if kind in ("fifo", "directory"):
        remove(path)  # not memtui's to delete: with it gone, the next run makes a new one
    assert doctor_json(ctx, CatalogDB.for_memory_dir(ctx.state_dir, ctx.memory_dir)) == doctor_expected
    # rebuilt: a later run finds every memory in it
    warm = CatalogDB.for_memory_dir(ctx.state_dir, ctx.memory_dir)
    assert warm.enabled
    scan_memories(ctx.memory_dir, cache=warm)
    assert (warm.hits, warm.misses) == (len(list(ctx.memory_dir.glob("*.md"))) - 1, 0)  # MEMORY.md is no memory
    assert dream_json(ctx) == dream_expected


def test_deleting_the_database_while_a_run_holds_it_changes_no_answer(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ctx = build(tmp_path)
    doctor_expected, dream_expected = reference(ctx)
    assert doctor_json(ctx, CatalogDB.for_memory_dir(ctx.state_dir, ctx.memory_dir)) == doctor_expected
    assert dream_json(ctx) == dream_expected
    path = db_path(ctx)

    held = CatalogDB.for_memory_dir(ctx.state_dir, ctx.memory_dir)  # the doctor opened it ...
    remove(path)  # ... and then it is deleted
    assert doctor_json(ctx, held) == doctor_expected

    opened = CatalogDB.for_memory_dir

    def open_then_delete(state_dir: Path, memory_dir: Path, **kw: Any) -> CatalogDB:
        db = opened(state_dir, memory_dir, **kw)
        if db.path is not None:
            remove(db.path)
        return db

    monkeypatch.setattr(offline_mod.CatalogDB, "for_memory_dir", staticmethod(open_then_delete))
    assert dream_json(ctx) == dream_expected
    monkeypatch.undo()
    monkeypatch.setattr(catalogdb, "RACY_SECONDS", -10)
    # the next runs start a new database and answer the same
    assert dream_json(ctx) == dream_expected
    assert doctor_json(ctx, CatalogDB.for_memory_dir(ctx.state_dir, ctx.memory_dir)) == doctor_expected


@pytest.mark.parametrize("kind", ["deleted-while-open", *DAMAGE])
def test_search_answers_by_the_definition_whatever_the_database(tmp_path: Path, kind: str) -> None:
    ctx = build(tmp_path)
    state, mem = ctx.state_dir, ctx.memory_dir
    db = CatalogDB.for_memory_dir(state, mem)
    memories = scan_memories(mem, cache=db).memories
    filler = CatalogSearch(memories, db)
    while filler.index_pending():
        pass
    path = db_path(ctx)
    if kind == "deleted-while-open":
        db = CatalogDB.for_memory_dir(state, mem)
        memories = scan_memories(mem, cache=db).memories
        remove(path)
    else:
        DAMAGE[kind](path)
        db = CatalogDB.for_memory_dir(state, mem)
        memories = scan_memories(mem, cache=db).memories
    search = CatalogSearch(memories, db)
    for query in ("postgres database", "AKIA", "shared fixture", "zzz-nowhere", "Real db"):
        want = [i for i, m in enumerate(memories) if matches(m, terms_of(query))]
        got = [p for chunk in search.search(query, None, None) for p in chunk.positions]
        assert got == want, query
