"""The journal's recovery: what a start does with a change left unsettled — by this memtui
(a crash at any step) or by an older one (entries already on users' disks) — and the write path
keeping every version it displaces."""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from pathlib import Path

import pytest

from memtui.core.memory.memories import read_memory
from memtui.core.writes import steps
from memtui.core.writes.edits import ConflictError, apply_plan, plan_rename, plan_save, undo, undoable_entries
from memtui.core.writes.journal import Journal, sha256_hex
from memtui.core.writes.transaction import recover, recover_at_start

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
OLD = NOW.timestamp() - 30 * 86_400


def write(path: Path, data: bytes, mtime: float = OLD) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    os.utime(path, (mtime, mtime))
    return path


@pytest.fixture
def mem(tmp_path: Path) -> Path:
    d = tmp_path / "memory"
    d.mkdir()
    return d


@pytest.fixture
def journal(tmp_path: Path, mem: Path) -> Journal:
    return Journal(tmp_path / "state", mem)


def legacy_pending(journal: Journal, mem: Path, files: dict[str, tuple[bytes | None, bytes | None]]) -> str:
    """An entry as memtui 0.1 wrote it and left it when killed mid-apply: format 1 (no
    ``format``/``meta``/``dirs``/``note``), status ``pending``, before-images, no marker."""
    entry_id = "0000003-20261130T110000"
    folder = journal.root / entry_id
    changes = []
    for rel, (before, after) in files.items():
        if before is not None:
            write(folder / "before" / rel, before)
        kind = "create" if before is None else "delete" if after is None else "modify"
        changes.append({"relpath": rel, "kind": kind, "before_sha": sha256_hex(before), "after_sha": sha256_hex(after), "before_mtime": OLD})
    raw = {"id": entry_id, "title": "Rename a.md → b.md", "time": NOW.isoformat(), "status": "pending", "changes": changes,
           "action": "rename", "undoes": None, "restores": None}
    (folder / "entry.json").write_text(json.dumps(raw))
    return entry_id


def test_a_pending_entry_of_an_older_memtui_is_rolled_back_at_start(mem: Path, journal: Journal, tmp_path: Path) -> None:
    a, index = b"---\ntype: user\n---\na\n", b"- [a](a.md)\n"
    # memtui 0.1 was killed after writing the index and the new file, before deleting a.md
    write(mem / "a.md", a)
    write(mem / "MEMORY.md", b"- [a](b.md)\n")
    write(mem / "b.md", a)
    legacy_pending(journal, mem, {"MEMORY.md": (index, b"- [a](b.md)\n"), "b.md": (None, a), "a.md": (a, None)})
    # and an older crash left an entry folder with before-images and no entry.json
    write(journal.root / "0000002-20261130T100000" / "before" / "x.md", b"x")
    messages = recover_at_start(tmp_path / "state", mem)
    assert len(messages) == 1 and "was rolled back" in messages[0] and "2 files restored" in messages[0]
    assert sorted(p.name for p in mem.iterdir()) == ["MEMORY.md", "a.md"]
    assert (mem / "MEMORY.md").read_bytes() == index and (mem / "MEMORY.md").stat().st_mtime == OLD
    assert not (journal.root / "0000002-20261130T100000").exists()
    assert [e.status for e in journal.entries()] == ["failed"]
    assert recover_at_start(tmp_path / "state", mem) == []  # settled once, and the format noted
    assert journal.format_file.read_text() == "2\n"


def test_entries_of_an_older_memtui_are_read_and_undone_as_before(mem: Path, journal: Journal) -> None:
    before, after = b"---\ntype: User\n---\nx\n", b"---\ntype: user\n---\nx\n"
    write(mem / "u.md", after)
    entry_id = legacy_pending(journal, mem, {"u.md": (before, after)})
    raw = json.loads((journal.root / entry_id / "entry.json").read_text())
    raw["status"] = "applied"
    (journal.root / entry_id / "entry.json").write_text(json.dumps(raw))
    (entry,) = undoable_entries(journal)
    assert (entry.format, entry.meta, entry.dirs, entry.note) == (1, {}, [], None)
    undo(mem, journal, NOW)
    assert (mem / "u.md").read_bytes() == before


def test_an_outside_write_between_the_check_and_the_swap_is_put_back_and_kept(mem: Path, journal: Journal) -> None:
    write(mem / "u.md", b"---\ntype: user\n---\nold\n")
    write(mem / "MEMORY.md", b"- [u](u.md)\n")
    plan = plan_rename(mem, read_memory(mem / "u.md", mem), "v.md")
    theirs = b"- [u](u.md) \xe2\x80\x94 the agent added this\n"
    swaps: list[str] = []

    def agent_writes_the_index(step: str, path: str) -> None:
        if step == "write" and Path(path).parent == mem and not swaps:
            swaps.append(path)
            (mem / "MEMORY.md").write_bytes(theirs)  # lands after memtui's check, before its swap

    previous = steps.set_fault_hook(agent_writes_the_index)
    try:
        with pytest.raises(ConflictError, match="MEMORY.md changed on disk since memtui checked it"):
            apply_plan(mem, plan, journal, NOW)
    finally:
        steps.set_fault_hook(previous)
    assert (mem / "MEMORY.md").read_bytes() == theirs  # their version, in place
    assert sorted(p.name for p in mem.iterdir()) == ["MEMORY.md", "u.md"]  # nothing else changed
    (entry,) = journal.entries()
    assert entry.status == "failed"
    (kept,) = journal.kept(entry.id, 0)
    assert kept.read_bytes() == theirs


def test_without_an_atomic_swap_the_displaced_version_is_still_checked(mem: Path, journal: Journal, monkeypatch: pytest.MonkeyPatch) -> None:
    def no_swap(a: object, b: object, **_: object) -> None:
        raise steps.SwapUnsupported(38, "not here", str(b))

    monkeypatch.setattr(steps, "swap", no_swap)
    write(mem / "u.md", b"---\ntype: user\n---\nold\n")
    plan = plan_save(mem, read_memory(mem / "u.md", mem), "---\ntype: user\n---\nnew\n")
    apply_plan(mem, plan, journal, NOW)
    assert (mem / "u.md").read_bytes() == b"---\ntype: user\n---\nnew\n"
    plan = plan_save(mem, read_memory(mem / "u.md", mem), "---\ntype: user\n---\nnewer\n")

    def in_place(step: str, path: str) -> None:  # the agent rewrites the file in place
        if step == "write" and Path(path).parent == mem:
            (mem / "u.md").write_bytes(b"agent")

    previous = steps.set_fault_hook(in_place)
    try:
        with pytest.raises(ConflictError):
            apply_plan(mem, plan, journal, NOW)
    finally:
        steps.set_fault_hook(previous)
    assert (mem / "u.md").read_bytes() == b"agent"
    assert sorted(p.name for p in mem.iterdir()) == ["u.md"]


def test_temp_files_of_dead_writers_are_removed_and_live_ones_kept(mem: Path, journal: Journal, tmp_path: Path) -> None:
    dead = write(mem / ".memtui-999999999-0123456789abcdef.tmp", b"half")  # no such process
    live = write(mem / f".memtui-{os.getpid()}-0123456789abcdef.tmp", b"being written")
    legacy = write(mem / "team" / ".memtui-a1b2c3d4.tmp", b"from memtui 0.1")
    other = write(mem / ".memtui-notes.tmp", b"not ours")
    recover_at_start(tmp_path / "state", mem)
    assert not dead.exists() and not legacy.exists()
    assert live.exists() and other.exists()


def test_a_start_never_waits_for_a_live_writer(mem: Path, journal: Journal, tmp_path: Path) -> None:
    write(mem / "u.md", b"x")
    (journal.open_dir).mkdir(parents=True)
    (journal.open_dir / "0000001-20261130T120000").write_bytes(b"")  # as if a change were under way
    import fcntl

    journal.root.mkdir(parents=True, exist_ok=True)
    fd = os.open(journal.root.parent / "write.lock", os.O_RDWR | os.O_CREAT)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # another memtui applying a change right now
        assert recover(mem, journal, wait=False) == []
    finally:
        os.close(fd)
    assert recover(mem, journal) == []  # its intent never completed: nothing was touched
    assert journal.open_ids() == []


def test_a_journal_that_cannot_be_read_is_one_sentence(mem: Path, tmp_path: Path) -> None:
    state = tmp_path / "state"
    state.mkdir()
    journal = Journal(state, mem)
    journal.base.mkdir(parents=True)
    (journal.base / "journal").write_text("a file where the journal's folder should be")
    (journal.base / "journal-open").mkdir()
    (journal.base / "journal-open" / "0000001-20261130T120000").write_bytes(b"")
    messages = recover_at_start(state, mem)
    assert len(messages) == 1 and messages[0].startswith("could not check for interrupted changes")
