"""The catalog database: a second scan of unchanged files gives exactly what parsing gives,
without parsing; any change to a file, a racy mtime, a damaged or foreign database file or a
state dir inside the memory dir falls back to parsing (memtui.core.memory.catalogdb,
memtui.core.memory.memories.scan_memories)."""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from memtui.core.memory import memories as memories_mod
from memtui.core.memory import catalogdb
from memtui.core.memory.memories import scan_memories
from memtui.core.memory.catalogdb import DB_NAME, CatalogDB

OLD = 1_700_000_000  # 2023-11-14: long before the racy window


@pytest.fixture(autouse=True)
def no_racy_window(monkeypatch: pytest.MonkeyPatch) -> None:
    """Files written by a test have a ctime of now (it cannot be set back): without this every
    one would be 'racy' and never cached. The racy test sets the window back to 2 s."""
    monkeypatch.setattr(catalogdb, "RACY_SECONDS", -10)


def write(path: Path, text: str | bytes, mtime: float = OLD) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8", newline="")
    os.utime(path, (mtime, mtime))
    return path


def tricky_dir(root: Path) -> Path:
    """One file per kind of problem the parser reports (each gives a different record)."""
    mem = root / "memory"
    write(mem / "plain.md", "---\nname: Tabs\ndescription: Prefers tabs\ntype: user\n---\nUse tabs.\n")
    write(mem / "crlf.md", "---\r\nname: C\r\ndescription: CRLF file\r\ntype: feedback\r\n---\r\nRule.\r\n")
    write(mem / "nested.md", "---\nname: N\ndescription: nested\nmetadata:\n  type: project\n---\nbody\n")
    write(mem / "case.md", "---\nname: K\ndescription: case\ntype: Feedback\n---\nx\n")
    write(mem / "colon.md", "---\nname: Colon\ndescription: a: b {c}\ntype: reference\n---\nbody\n")
    write(mem / "invalid.md", "---\nname: [unclosed\ndescription: x\n---\nbody\n")
    write(mem / "bom.md", "\ufeff---\nname: B\ndescription: b\ntype: user\n---\nbody\n")
    write(mem / "none.md", "just text, no frontmatter\n")
    write(mem / "bytes.md", b"---\nname: Bad\ndescription: caf\xe9\ntype: user\n---\nbody \xff\n")
    write(mem / "dates.md", "---\nname: D\ndescription: deploy\ntype: project\n---\nShip it tomorrow.\n")
    write(mem / "team" / "shared.md", "---\nname: S\ndescription: shared\ntype: reference\n---\nbody\n")
    write(mem / "deep" / "long.md", "---\n" + "".join(f"k{i}: v\n" for i in range(40)) + "description: late\ntype: user\n---\nbody\n")
    return mem


def parse_count(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Record the relpath of every file parsed from its bytes."""
    seen: list[str] = []
    real = memories_mod.parse_memory_bytes

    def counting(path: Path, relpath: str, data: bytes, mtime: float) -> memories_mod.Memory:
        seen.append(relpath)
        return real(path, relpath, data, mtime)

    monkeypatch.setattr(memories_mod, "parse_memory_bytes", counting)
    return seen


def snapshot(scan: memories_mod.MemoryScan) -> list[tuple[object, ...]]:
    return [
        (m.relpath, m.team, m.mtime, m.size, m.sha256, m.name, m.description, m.type, m.declared_type, m.frontmatter,
         m.body_line, m.text, m.body, m.diagnostics)
        for m in scan.memories
    ]  # fmt: skip


def rewrite_rows(db: Path, column: str, damage: Callable[[list[object]], None]) -> int:
    """Apply ``damage`` to the JSON list in ``column`` (``record`` or ``header``) of every row
    of the database file, as another program could; returns the rows changed."""
    conn = sqlite3.connect(db)
    rows = conn.execute(f"SELECT relpath, {column} FROM memories WHERE {column} IS NOT NULL").fetchall()
    for rel, blob in rows:
        value = json.loads(blob)
        damage(value)
        conn.execute(f"UPDATE memories SET {column} = ? WHERE relpath = ?", (json.dumps(value).encode(), rel))
    conn.commit()
    conn.close()
    return len(rows)


def assert_damaged_entries_are_parsed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, damage: Callable[[list[object]], None]) -> None:
    """Fill the database, ``damage`` every stored record in the file: the next scan must parse
    all 12 files and give exactly what parsing gives."""
    mem = tricky_dir(tmp_path)
    state = tmp_path / "state"
    uncached = snapshot(scan_memories(mem))
    cache = CatalogDB.for_memory_dir(state, mem)
    scan_memories(mem, cache=cache)
    assert cache.path is not None
    cache.close()
    assert rewrite_rows(cache.path, "record", damage) == 12
    parsed = parse_count(monkeypatch)
    assert snapshot(scan_memories(mem, cache=CatalogDB.for_memory_dir(state, mem))) == uncached
    assert len(parsed) == 12


def test_a_warm_scan_equals_parsing_and_parses_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    mem = tricky_dir(tmp_path)
    state = tmp_path / "state"
    uncached = snapshot(scan_memories(mem))
    parsed = parse_count(monkeypatch)
    first = scan_memories(mem, cache=CatalogDB.for_memory_dir(state, mem))
    assert len(parsed) == 12  # a cold cache parses every file...
    cache = CatalogDB.for_memory_dir(state, mem)
    second = scan_memories(mem, cache=cache)
    assert len(parsed) == 12  # ...a warm one none
    assert (cache.hits, cache.misses) == (12, 0)
    assert snapshot(first) == uncached
    assert snapshot(second) == uncached  # text, body and every diagnostic included


def test_a_changed_file_is_parsed_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    mem = tricky_dir(tmp_path)
    state = tmp_path / "state"
    scan_memories(mem, cache=CatalogDB.for_memory_dir(state, mem))
    # same size, same mtime: only the ctime (and the bytes) differ — still a change
    path = mem / "plain.md"
    path.write_text(path.read_text().replace("Prefers tabs", "Prefers TABS"))
    os.utime(path, (OLD, OLD))
    parsed = parse_count(monkeypatch)
    scan = scan_memories(mem, cache=CatalogDB.for_memory_dir(state, mem))
    assert parsed == ["plain.md"]
    assert {m.relpath: m.description for m in scan.memories}["plain.md"] == "Prefers TABS"


def test_a_file_modified_just_now_is_not_trusted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(catalogdb, "RACY_SECONDS", 2)
    mem = tmp_path / "memory"
    write(mem / "fresh.md", "---\ndescription: fresh\ntype: user\n---\n", mtime=__import__("time").time())
    state = tmp_path / "state"
    scan_memories(mem, cache=CatalogDB.for_memory_dir(state, mem))
    parsed = parse_count(monkeypatch)
    scan_memories(mem, cache=CatalogDB.for_memory_dir(state, mem))
    assert parsed == ["fresh.md"]  # racy: parsed on every scan until its mtime is 2 s old


def test_deleted_files_leave_the_cache_and_new_ones_are_parsed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    mem = tricky_dir(tmp_path)
    state = tmp_path / "state"
    scan_memories(mem, cache=CatalogDB.for_memory_dir(state, mem))
    (mem / "plain.md").unlink()
    write(mem / "new.md", "---\ndescription: new\ntype: user\n---\n")
    parsed = parse_count(monkeypatch)
    scan = scan_memories(mem, cache=CatalogDB.for_memory_dir(state, mem))
    assert parsed == ["new.md"]
    assert "plain.md" not in {m.relpath for m in scan.memories}
    cache = CatalogDB.for_memory_dir(state, mem)
    assert cache.lookup("plain.md", (0, 0, 0, 0)) is None
    assert cache.path is not None
    assert ("plain.md",) not in sqlite3.connect(cache.path).execute("SELECT relpath FROM memories").fetchall()


@pytest.mark.parametrize("garbage", [b"", b"{not json", b"[1, 2]", b'{"schema": 1, "code": "other", "entries": {}}'])
def test_a_torn_or_foreign_cache_is_ignored_and_rewritten(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, garbage: bytes) -> None:
    mem = tricky_dir(tmp_path)
    state = tmp_path / "state"
    uncached = snapshot(scan_memories(mem))
    cache = CatalogDB.for_memory_dir(state, mem)
    assert cache.path is not None
    cache.close()
    write(cache.path, garbage)
    assert snapshot(scan_memories(mem, cache=CatalogDB.for_memory_dir(state, mem))) == uncached
    parsed = parse_count(monkeypatch)
    assert snapshot(scan_memories(mem, cache=CatalogDB.for_memory_dir(state, mem))) == uncached
    assert parsed == []


def test_garbled_entries_are_parsed_not_trusted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def damage(value: list[object]) -> None:
        value[:] = ["m", "not enough fields"]

    assert_damaged_entries_are_parsed(tmp_path, monkeypatch, damage)


def test_no_cache_when_the_state_dir_is_inside_the_memory_dir(tmp_path: Path) -> None:
    mem = tricky_dir(tmp_path)
    cache = CatalogDB.for_memory_dir(mem / ".state", mem)
    assert cache.path is None
    scan_memories(mem, cache=cache)
    assert not (mem / ".state").exists()
    assert not list(mem.rglob(DB_NAME + "*"))


def test_frontmatter_json_cannot_hold_is_parsed_each_time(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    mem = tmp_path / "memory"
    write(mem / "big.md", "---\ndescription: big\ntype: user\nsize: 123456789012345678901234567890\n---\n")
    state = tmp_path / "state"
    scan_memories(mem, cache=CatalogDB.for_memory_dir(state, mem))
    parsed = parse_count(monkeypatch)
    scan = scan_memories(mem, cache=CatalogDB.for_memory_dir(state, mem))
    assert parsed == ["big.md"]
    assert scan.memories[0].frontmatter["size"] == 123456789012345678901234567890


def test_a_file_name_that_is_not_utf8_is_listed_and_parsed_each_time(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """SQLite text is UTF-8: a name whose bytes are not (b"user_\\xff.md") has no row, and
    the scan, the search index and the derived data go on around it."""
    mem = tricky_dir(tmp_path)
    odd = os.fsdecode(b"user_\xff\xfe.md")
    write(mem / odd, "---\nname: Bytes\ndescription: not UTF-8\ntype: user\n---\nb\n")
    state = tmp_path / "state"
    uncached = snapshot(scan_memories(mem))
    scan_memories(mem, cache=CatalogDB.for_memory_dir(state, mem))
    parsed = parse_count(monkeypatch)
    cache = CatalogDB.for_memory_dir(state, mem)
    assert snapshot(scan_memories(mem, cache=cache)) == uncached
    assert parsed == [odd]
    assert (cache.hits, cache.misses) == (12, 1)
    cache.put_derived("k", "f", {odd: ("1:2:3:4", b"x"), "plain.md": (cache.stored_key("plain.md") or "", b"y")})
    assert set(cache.derived("k", "f")) == {"plain.md"}


def test_a_cached_record_reads_its_text_when_asked(tmp_path: Path) -> None:
    mem = tricky_dir(tmp_path)
    state = tmp_path / "state"
    scan_memories(mem, cache=CatalogDB.for_memory_dir(state, mem))
    scan = scan_memories(mem, cache=CatalogDB.for_memory_dir(state, mem))
    record = next(m for m in scan.memories if m.relpath == "plain.md")
    assert record.loaded_text is None  # not read by the scan
    # the file changes after the scan: the text is what is on disk now, its body cut where
    # this text's frontmatter ends (the record's sha256 still names the bytes it describes)
    (mem / "plain.md").write_text("---\nname: Tabs\ndescription: longer description now\ntype: user\n---\nUse tabs!\n")
    assert record.text.endswith("Use tabs!\n")
    assert record.body == "Use tabs!\n"


def test_ls_json_is_the_same_from_a_warm_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from click.testing import CliRunner

    from memtui.cli import main

    mem = tricky_dir(tmp_path)
    write(mem / "MEMORY.md", "- [Tabs](plain.md) — tabs\n- [Gone](gone.md) — dangling\n")
    monkeypatch.setenv("MEMTUI_NOW", "2026-11-30T12:00:00Z")
    runner = CliRunner()
    cold = runner.invoke(main, ["--memory-dir", str(mem), "ls", "--json"])
    assert cold.exit_code == 0, cold.output
    parsed = parse_count(monkeypatch)
    warm = runner.invoke(main, ["--memory-dir", str(mem), "ls", "--json"])
    assert warm.exit_code == 0, warm.output
    assert parsed == []
    assert warm.output == cold.output
    index = runner.invoke(main, ["--memory-dir", str(mem), "index", "--json"])
    assert '"gone.md"' in index.output.split('"dangling"')[1].split("]")[0]  # still found dangling


def test_header_scan_from_the_cache_equals_reading_the_heads(tmp_path: Path) -> None:
    from memtui.core.memory.headers import scan_headers

    mem = tricky_dir(tmp_path)
    state = tmp_path / "state"
    expected = scan_headers(mem)
    # the long frontmatter closes after line 30: recall sees no description there
    assert {h.relpath: h.description for h in expected}["deep/long.md"] is None
    cold = CatalogDB.for_memory_dir(state, mem)
    assert scan_headers(mem, cache=cold) == expected  # header entries stored
    warm = CatalogDB.for_memory_dir(state, mem)
    assert scan_headers(mem, cache=warm) == expected
    assert (warm.hits, warm.misses) == (12, 0)
    scan_memories(mem, cache=CatalogDB.for_memory_dir(state, mem))  # full records join them
    full = CatalogDB.for_memory_dir(state, mem)
    assert full.path is not None
    assert sqlite3.connect(full.path).execute("SELECT count(*) FROM memories WHERE record IS NULL").fetchone() == (0,)
    assert scan_headers(mem, cache=full) == expected
    assert (full.hits, full.misses) == (12, 0)


@pytest.mark.parametrize(
    "field, bad",
    [(1, "yesterday"), (2, "big"), (5, "x"), (6, None), (7, [["code", "fatal", "m", None]]), (7, [["code", "error", 5, None]]), (4, ["list"])],
)
def test_a_cache_entry_with_wrong_types_is_parsed_not_trusted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, field: int, bad: object) -> None:
    def damage(value: list[object]) -> None:
        value[field] = bad

    assert_damaged_entries_are_parsed(tmp_path, monkeypatch, damage)


def test_a_header_entry_with_wrong_types_is_read_again(tmp_path: Path) -> None:
    from memtui.core.memory.headers import scan_headers

    mem = tricky_dir(tmp_path)
    state = tmp_path / "state"
    expected = scan_headers(mem)
    cache = CatalogDB.for_memory_dir(state, mem)
    scan_headers(mem, cache=cache)
    assert cache.path is not None
    cache.close()

    def damage(value: list[object]) -> None:
        value[0:2] = ["noon", 42]

    assert rewrite_rows(cache.path, "header", damage) == 12
    assert scan_headers(mem, cache=CatalogDB.for_memory_dir(state, mem)) == expected


def test_the_doctor_finds_the_same_from_a_warm_cache(tmp_path: Path) -> None:
    from datetime import UTC, datetime

    from memtui.core.doctor import run_doctor

    mem = tricky_dir(tmp_path)
    write(mem / "copy.md", (mem / "plain.md").read_bytes())  # an exact duplicate
    write(mem / "MEMORY.md", "- [Tabs](plain.md) — tabs\n- [Gone](gone.md) — dangling\n")
    now = datetime(2026, 11, 30, 12, tzinfo=UTC)
    state = tmp_path / "state"
    expected = run_doctor(mem, now).findings
    assert {"index-dangling", "frontmatter-after-bom", "frontmatter-repaired"} <= {f.code for f in expected}
    run_doctor(mem, now, cache=CatalogDB.for_memory_dir(state, mem))
    warm = CatalogDB.for_memory_dir(state, mem)
    assert run_doctor(mem, now, cache=warm).findings == expected
    assert warm.misses == 0


@pytest.mark.parametrize("kind", ["fifo", "dir"])
def test_a_cache_path_that_is_not_a_file_is_ignored(tmp_path: Path, kind: str) -> None:
    mem = tricky_dir(tmp_path)
    state = tmp_path / "state"
    cache = CatalogDB.for_memory_dir(state, mem)
    assert cache.path is not None
    cache.close()
    for suffix in ("", "-wal", "-shm"):
        Path(f"{cache.path}{suffix}").unlink(missing_ok=True)
    if kind == "fifo":
        os.mkfifo(cache.path)  # opening it for reading would block forever
    else:
        cache.path.mkdir()
    expected = snapshot(scan_memories(mem))
    assert snapshot(scan_memories(mem, cache=CatalogDB.for_memory_dir(state, mem))) == expected


def test_only_what_json_keeps_exactly_is_cacheable() -> None:
    from memtui.core.memory.catalogdb import jsonable

    assert jsonable({"name": "x", "n": 3, "f": 1.5, "ok": True, "none": None, "list": [1, "a", {"k": "v"}]})
    # a value orjson refuses or changes would stop the whole cache from being written
    assert not jsonable({"big": 2**64})
    assert not jsonable({"inf": float("inf")})
    assert not jsonable({"half": "pair \ud800"})
    assert not jsonable({1: "int key"})
    assert not jsonable({"t": (1, 2)})


def test_a_rewrite_touched_back_to_its_old_mtime_is_racy_by_its_ctime(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(catalogdb, "RACY_SECONDS", 2)
    mem = tmp_path / "memory"
    write(mem / "touched.md", "---\ndescription: old\ntype: user\n---\n")  # mtime set back to 2023; ctime is now
    state = tmp_path / "state"
    scan_memories(mem, cache=CatalogDB.for_memory_dir(state, mem))
    parsed = parse_count(monkeypatch)
    scan_memories(mem, cache=CatalogDB.for_memory_dir(state, mem))
    assert parsed == ["touched.md"]


@pytest.mark.parametrize("field, bad", [(1, True), (1, 1e300), (2, 999)])
def test_an_entry_whose_mtime_or_size_is_not_the_files_is_parsed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, field: int, bad: object) -> None:
    def damage(value: list[object]) -> None:
        value[field] = bad

    assert_damaged_entries_are_parsed(tmp_path, monkeypatch, damage)


def _db_path(state: Path, mem: Path) -> Path:
    db = CatalogDB.for_memory_dir(state, mem)
    assert db.path is not None
    db.close()
    return db.path


def test_another_applications_sqlite_file_is_rebuilt_not_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    mem = tricky_dir(tmp_path)
    state = tmp_path / "state"
    uncached = snapshot(scan_memories(mem))
    path = _db_path(state, mem)
    for suffix in ("", "-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    other = sqlite3.connect(path)
    other.execute("CREATE TABLE memories(relpath TEXT, key TEXT, record BLOB)")  # same names, not ours
    other.execute("INSERT INTO memories VALUES ('plain.md', 'x', 'y')")
    other.commit()
    other.close()
    db = CatalogDB.for_memory_dir(state, mem)
    assert db.rebuilt
    assert snapshot(scan_memories(mem, cache=db)) == uncached
    parsed = parse_count(monkeypatch)
    assert snapshot(scan_memories(mem, cache=CatalogDB.for_memory_dir(state, mem))) == uncached
    assert parsed == []


@pytest.mark.parametrize("pragma", ["user_version = 999", "application_id = 7"])
def test_a_database_of_another_schema_is_rebuilt(tmp_path: Path, pragma: str) -> None:
    mem = tricky_dir(tmp_path)
    state = tmp_path / "state"
    scan_memories(mem, cache=CatalogDB.for_memory_dir(state, mem))
    path = _db_path(state, mem)
    conn = sqlite3.connect(path)
    conn.execute(f"PRAGMA {pragma}")
    conn.commit()
    conn.close()
    db = CatalogDB.for_memory_dir(state, mem)
    assert db.rebuilt and db.enabled
    assert db.lookup("plain.md", (0, 0, 0, 0)) is None
    assert snapshot(scan_memories(mem, cache=db)) == snapshot(scan_memories(mem))


def test_the_database_of_another_memory_dir_is_not_trusted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    mem = tricky_dir(tmp_path)
    state = tmp_path / "state"
    twin = tmp_path / "twin"
    import shutil

    shutil.copytree(mem, twin)
    scan_memories(twin, cache=CatalogDB.for_memory_dir(state, twin))
    source = _db_path(state, twin)
    target = _db_path(state, mem)
    for suffix in ("", "-wal", "-shm"):
        Path(f"{target}{suffix}").unlink(missing_ok=True)
    shutil.copy(source, target)
    parsed = parse_count(monkeypatch)
    scan_memories(mem, cache=CatalogDB.for_memory_dir(state, mem))
    assert len(parsed) == 12


def test_a_damaged_database_costs_only_a_rebuild(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    mem = tricky_dir(tmp_path)
    state = tmp_path / "state"
    uncached = snapshot(scan_memories(mem))
    scan_memories(mem, cache=CatalogDB.for_memory_dir(state, mem))
    path = _db_path(state, mem)
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # every page in the main file
    conn.close()
    data = bytearray(path.read_bytes())
    assert len(data) > 4096 * 2
    for at in range(4096 + 100, len(data), 37):  # the header stays; every page after it is noise
        data[at] = (data[at] * 7 + 13) % 256
    path.write_bytes(bytes(data))
    assert snapshot(scan_memories(mem, cache=CatalogDB.for_memory_dir(state, mem))) == uncached
    parsed = parse_count(monkeypatch)
    assert snapshot(scan_memories(mem, cache=CatalogDB.for_memory_dir(state, mem))) == uncached
    assert parsed == []  # rebuilt by the scan before


def test_deleting_the_database_mid_run_costs_only_a_rebuild(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    mem = tricky_dir(tmp_path)
    state = tmp_path / "state"
    uncached = snapshot(scan_memories(mem))
    scan_memories(mem, cache=CatalogDB.for_memory_dir(state, mem))
    running = CatalogDB.for_memory_dir(state, mem)  # a TUI holding the database open
    assert running.lookup("plain.md", (0, 0, 0, 0)) is None  # its rows are loaded
    assert running.path is not None
    for suffix in ("", "-wal", "-shm"):
        Path(f"{running.path}{suffix}").unlink(missing_ok=True)
    write(mem / "new.md", "---\ndescription: new\ntype: user\n---\n")
    # the open instance goes on (its writes land in the deleted file) ...
    assert len(scan_memories(mem, cache=running).memories) == 13
    # ... and the next process starts a new database, parses everything once, then nothing
    parsed = parse_count(monkeypatch)
    fresh = snapshot(scan_memories(mem, cache=CatalogDB.for_memory_dir(state, mem)))
    assert len(parsed) == 13
    assert fresh == snapshot(scan_memories(mem))
    parsed.clear()
    assert snapshot(scan_memories(mem, cache=CatalogDB.for_memory_dir(state, mem))) == fresh
    assert parsed == []
    assert uncached == [row for row in fresh if row[0] != "new.md"]


def test_a_writer_holding_the_database_blocks_no_reader(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import time

    monkeypatch.setattr(catalogdb, "BUSY_SECONDS", 0.2)
    mem = tricky_dir(tmp_path)
    state = tmp_path / "state"
    scan_memories(mem, cache=CatalogDB.for_memory_dir(state, mem))
    path = _db_path(state, mem)
    other = sqlite3.connect(path, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")  # another process in the middle of a write
    other.execute("UPDATE meta SET value = value WHERE key = 'code'")
    try:
        write(mem / "new.md", "---\ndescription: new\ntype: user\n---\n")
        start = time.monotonic()
        scan = scan_memories(mem, cache=CatalogDB.for_memory_dir(state, mem))  # reads; its write gives up
        assert time.monotonic() - start < 5
        assert len(scan.memories) == 13
    finally:
        other.execute("ROLLBACK")
        other.close()
    parsed = parse_count(monkeypatch)
    scan_memories(mem, cache=CatalogDB.for_memory_dir(state, mem))
    assert parsed == ["new.md"]  # the skipped write is made by the next scan


def _scan_in_a_process(args: tuple[str, str, int]) -> int:
    mem, state, rounds = args
    catalogdb.RACY_SECONDS = -10  # (a fresh interpreter: the files were written just now)
    total = 0
    for _ in range(rounds):
        total += len(scan_memories(Path(mem), cache=CatalogDB.for_memory_dir(Path(state), Path(mem))).memories)
    return total


def test_concurrent_processes_leave_a_sound_database(tmp_path: Path) -> None:
    import multiprocessing

    mem = tmp_path / "memory"
    for i in range(300):
        write(mem / f"m{i:03d}.md", f"---\nname: n{i}\ndescription: d{i}\ntype: user\n---\nbody {i}\n")
    state = tmp_path / "state"
    with multiprocessing.get_context("spawn").Pool(3) as pool:
        counts = pool.map(_scan_in_a_process, [(str(mem), str(state), 3)] * 3)
    assert counts == [900, 900, 900]
    path = _db_path(state, mem)
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    assert conn.execute("SELECT count(*) FROM memories").fetchone() == (300,)
    conn.close()


def ten_memories(root: Path) -> Path:
    """m0.md … m9.md, m9 the newest (100 s apart, long ago)."""
    mem = root / "memory"
    for i in range(10):
        write(mem / f"m{i}.md", f"---\nname: M{i}\ndescription: memory {i}\ntype: user\n---\nbody {i}\n", OLD + i * 100)
    return mem


def test_a_first_batch_comes_from_the_newest_rows_without_walking_the_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With a warm database, the newest 3 are its 3 newest rows, each file's stat checked,
    none parsed, and the dir not listed; the total is what the database knows."""
    mem = ten_memories(tmp_path)
    state = tmp_path / "state"
    scan_memories(mem, cache=CatalogDB.for_memory_dir(state, mem))
    expected = snapshot(scan_memories(mem, newest=3))  # the walk's answer, by stat
    parsed = parse_count(monkeypatch)

    def no_walk(_dir: Path) -> object:
        raise AssertionError("the dir was walked")

    monkeypatch.setattr(memories_mod, "iter_memory_files", no_walk)
    first = scan_memories(mem, newest=3, cache=CatalogDB.for_memory_dir(state, mem))
    assert [m.relpath for m in first.memories] == ["m9.md", "m8.md", "m7.md"]
    assert snapshot(first) == expected
    assert first.total == 10 and not first.complete
    assert parsed == []


def test_a_first_batch_parses_a_changed_file_and_leaves_out_a_deleted_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    mem = ten_memories(tmp_path)
    state = tmp_path / "state"
    scan_memories(mem, cache=CatalogDB.for_memory_dir(state, mem))
    write(mem / "m8.md", "---\nname: M8\ndescription: rewritten\ntype: user\n---\nnew body\n", OLD + 800)  # same mtime, new bytes
    (mem / "m9.md").unlink()
    parsed = parse_count(monkeypatch)
    first = scan_memories(mem, newest=3, cache=CatalogDB.for_memory_dir(state, mem))
    assert [(m.relpath, m.description) for m in first.memories] == [("m8.md", "rewritten"), ("m7.md", "memory 7")]
    assert parsed == ["m8.md"]
    assert first.total == 10 and not first.complete  # the database's count: the full scan corrects it
    full = scan_memories(mem, cache=CatalogDB.for_memory_dir(state, mem))
    assert full.total == 9 and full.complete


def test_a_database_with_no_more_rows_than_the_batch_walks_the_dir(tmp_path: Path) -> None:
    """A new database (or one knowing only a few files) cannot say which files are newest."""
    mem = ten_memories(tmp_path)
    state = tmp_path / "state"
    first = scan_memories(mem, newest=3, cache=CatalogDB.for_memory_dir(state, mem))  # nothing stored yet
    assert [m.relpath for m in first.memories] == ["m9.md", "m8.md", "m7.md"] and first.total == 10
    write(mem / "m10.md", "---\ndescription: newest\ntype: user\n---\nx\n", OLD + 5000)
    assert scan_memories(mem, newest=20, cache=CatalogDB.for_memory_dir(state, mem)).complete


def test_a_first_batch_never_follows_a_stored_path_out_of_the_dir(tmp_path: Path) -> None:
    """Rows are not trusted: a relpath with ``..``, an absolute one or the index is skipped."""
    mem = ten_memories(tmp_path)
    state = tmp_path / "state"
    write(tmp_path / "outside.md", "---\ndescription: secret\ntype: user\n---\nx\n", OLD + 9000)
    cache = CatalogDB.for_memory_dir(state, mem)
    scan_memories(mem, cache=cache)
    assert cache.path is not None
    cache.close()
    conn = sqlite3.connect(cache.path)
    for rel in ("../outside.md", str(tmp_path / "outside.md").lstrip("/"), "/" + str(tmp_path / "outside.md").lstrip("/"), "MEMORY.md"):
        conn.execute("INSERT INTO memories(relpath, key, record, header, mtime_ns) VALUES (?, '1:1:1:1', NULL, NULL, ?)", (rel, (OLD + 9000) * 10**9))
    conn.commit()
    conn.close()
    first = scan_memories(mem, newest=6, cache=CatalogDB.for_memory_dir(state, mem))  # the 4 bad rows are the newest
    assert [m.relpath for m in first.memories] == ["m9.md", "m8.md"]


def test_released_records_keep_their_keys_and_a_later_scan_parses_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    mem = tricky_dir(tmp_path)
    state = tmp_path / "state"
    uncached = snapshot(scan_memories(mem))
    scan_memories(mem, cache=CatalogDB.for_memory_dir(state, mem))
    cache = CatalogDB.for_memory_dir(state, mem)
    scan_memories(mem, cache=cache)  # warm: every record read into memory
    keys = {rel: cache.stored_key(rel) for rel in ("plain.md", "deep/long.md")}
    cache.release_records()
    assert {rel: cache.stored_key(rel) for rel in keys} == keys and None not in keys.values()
    parsed = parse_count(monkeypatch)
    assert snapshot(scan_memories(mem, cache=cache)) == uncached  # the same instance: every file parsed again
    assert len(parsed) == 12
    parsed.clear()
    assert snapshot(scan_memories(mem, cache=CatalogDB.for_memory_dir(state, mem))) == uncached
    assert parsed == []  # and the database still holds every record
