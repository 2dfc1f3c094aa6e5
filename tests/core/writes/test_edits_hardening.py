"""The write path under attack: racing writers, colliding state dirs, a tampered journal,
interrupted writes, hostile names — each found by trying to lose data, now refused or rolled back."""

from __future__ import annotations

import json
import os
import threading
from datetime import UTC, datetime
from pathlib import Path

import pytest

from memtui.core.writes import edits
from memtui.core.writes import journal as journal_mod
from memtui.core.writes.edits import (
    ApplyError,
    ConflictError,
    EditError,
    FileChange,
    Plan,
    apply_plan,
    plan_create,
    plan_delete,
    plan_retype,
    plan_save,
    restore_plan,
    trash,
    undo,
    undo_plan,
)
from memtui.core.writes.journal import Journal
from memtui.core.memory.memories import read_memory
from memtui.core.places.statedir import StateDirInsideMemoryDirError
from memtui.core.writes.transaction import recover
from support.faults import failing_step

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
OLD = NOW.timestamp() - 40 * 86_400


def make(mem: Path, rel: str, data: bytes, mtime: float = OLD) -> Path:
    path = mem / rel
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


def test_two_writers_of_one_loaded_file_one_wins_the_other_gets_a_conflict(mem: Path, tmp_path: Path) -> None:
    make(mem, "u.md", b"---\ntype: user\n---\noriginal\n")
    loaded = read_memory(mem / "u.md", mem)
    plans = [plan_save(mem, loaded, "---\ntype: user\n---\nA\n"), plan_save(mem, loaded, "---\ntype: user\n---\nB\n")]
    outcomes: list[str] = []
    barrier = threading.Barrier(2)

    def write(plan: Plan) -> None:
        barrier.wait()
        try:
            apply_plan(mem, plan, Journal(tmp_path / "state", mem), NOW)  # each its own Journal, as two processes
            outcomes.append("applied")
        except ConflictError:
            outcomes.append("conflict")

    threads = [threading.Thread(target=write, args=(p,)) for p in plans]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(outcomes) == ["applied", "conflict"]
    assert (mem / "u.md").read_bytes() in (b"---\ntype: user\n---\nA\n", b"---\ntype: user\n---\nB\n")
    ids = [e.id for e in Journal(tmp_path / "state", mem).entries()]
    assert len(ids) == len(set(ids)) == 1


def test_memory_dirs_whose_slugs_collide_keep_separate_trash(tmp_path: Path) -> None:
    a, b = tmp_path / "mem_a", tmp_path / "mem-a"
    a.mkdir()
    b.mkdir()
    make(a, "user_x.md", b"---\ntype: user\n---\nA's\n")
    ja, jb = Journal(tmp_path / "state", a), Journal(tmp_path / "state", b)
    assert ja.root != jb.root
    apply_plan(a, plan_delete(a, read_memory(a / "user_x.md", a)), ja, NOW)
    assert [i.relpath for i in trash(ja)] == ["user_x.md"]
    assert trash(jb) == []


def test_a_deleted_memory_survives_any_number_of_later_changes(mem: Path, journal: Journal, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(journal_mod, "KEEP_ENTRIES", 5)
    make(mem, "gone.md", b"---\ntype: user\n---\nkeep me\n")
    make(mem, "u.md", b"---\ntype: user\n---\n0\n")
    apply_plan(mem, plan_delete(mem, read_memory(mem / "gone.md", mem)), journal, NOW)
    for i in range(1, 12):
        apply_plan(mem, plan_save(mem, read_memory(mem / "u.md", mem), f"---\ntype: user\n---\n{i}\n"), journal, NOW)
    assert len(list(journal.root.iterdir())) == 6  # 5 newest + the deletion still in the trash
    (item,) = trash(journal)
    apply_plan(mem, restore_plan(mem, journal, item), journal, NOW)
    assert (mem / "gone.md").read_bytes() == b"---\ntype: user\n---\nkeep me\n"


def test_a_lost_before_image_never_turns_undo_into_a_delete(mem: Path, journal: Journal) -> None:
    make(mem, "u.md", b"---\ntype: User\n---\nx\n")
    entry = apply_plan(mem, plan_retype(mem, read_memory(mem / "u.md", mem), "user"), journal, NOW)
    (journal.root / entry.id / "before" / "u.md").unlink()
    with pytest.raises(EditError, match="missing or damaged"):
        undo_plan(mem, journal)
    assert (mem / "u.md").read_bytes() == b"---\ntype: user\n---\nx\n"


def test_a_journal_entry_naming_a_path_outside_is_ignored(mem: Path, journal: Journal, tmp_path: Path) -> None:
    victim = tmp_path / "outside" / "victim.txt"
    victim.parent.mkdir()
    victim.write_text("precious")
    make(mem, "u.md", b"---\ntype: User\n---\nx\n")
    entry = apply_plan(mem, plan_retype(mem, read_memory(mem / "u.md", mem), "user"), journal, NOW)
    raw = json.loads((journal.root / entry.id / "entry.json").read_text())
    raw["changes"][0]["relpath"] = "../outside/victim.txt"
    (journal.root / entry.id / "entry.json").write_text(json.dumps(raw))
    assert journal.damaged() == [entry.id]
    with pytest.raises(EditError):
        undo(mem, journal, NOW)
    assert victim.read_text() == "precious"


@pytest.mark.parametrize("garbage", ["[1, 2]", '{"id": 5}', "not json", '{"changes": [{"relpath": 3}]}'])
def test_garbage_entries_are_skipped_not_a_traceback(mem: Path, journal: Journal, garbage: str) -> None:
    bad = journal.root / "0000009-20261130T120000"
    bad.mkdir(parents=True)
    (bad / "entry.json").write_text(garbage)
    assert journal.entries() == [] and trash(journal) == []
    assert journal.damaged() == [bad.name]


def test_an_interrupted_apply_is_rolled_back_and_the_interrupt_goes_on(mem: Path, journal: Journal) -> None:
    make(mem, "a.md", b"---\ntype: user\n---\na\n")
    make(mem, "MEMORY.md", b"- [a](a.md) \xe2\x80\x94 h\n")
    before = {p.name: p.read_bytes() for p in mem.iterdir()}
    plan = edits.plan_rename(mem, read_memory(mem / "a.md", mem), "b.md")
    with failing_step("write", mem, 2, KeyboardInterrupt()), pytest.raises(KeyboardInterrupt):
        apply_plan(mem, plan, journal, NOW)
    assert {p.name: p.read_bytes() for p in mem.iterdir()} == before
    assert [e.status for e in journal.entries()] == ["failed"]


def test_a_rollback_that_fails_says_so_and_where_the_copies_are(mem: Path, journal: Journal) -> None:
    make(mem, "a.md", b"---\ntype: user\n---\na\n")
    make(mem, "MEMORY.md", b"- [a](a.md) \xe2\x80\x94 h\n")
    plan = edits.plan_rename(mem, read_memory(mem / "a.md", mem), "b.md")
    disk_full = OSError(28, "No space left on device")
    with failing_step("write", mem, {2, 3}, disk_full), pytest.raises(ApplyError) as info:
        apply_plan(mem, plan, journal, NOW)
    assert "could not restore MEMORY.md" in str(info.value)
    assert "every file was restored" not in str(info.value)
    # the entry stays unsettled: the next start tries again, and this time the disk has room
    assert [e.status for e in journal.entries()] == ["pending"]
    (recovered,) = recover(mem, journal)
    assert recovered.outcome == "rolled-back"
    assert (mem / "MEMORY.md").read_bytes() == b"- [a](a.md) \xe2\x80\x94 h\n"
    assert sorted(p.name for p in mem.iterdir()) == ["MEMORY.md", "a.md"]


def test_names_the_agent_would_misread_are_written_so_it_reads_them_back(mem: Path, journal: Journal) -> None:
    apply_plan(mem, plan_create(mem, "user", "pg --- stage\x1b2", "1e3"), journal, NOW)
    (path,) = [p for p in mem.iterdir() if p.name != "MEMORY.md"]
    memory = read_memory(path, mem)
    assert memory.name == "pg — stage 2"
    assert memory.description == "1e3"  # quoted: YAML 1.2 would read a plain 1e3 as 1000.0
    assert memory.type == "user"


def test_a_hand_edit_keeps_crlf_and_refuses_non_utf8(mem: Path, journal: Journal) -> None:
    make(mem, "c.md", b"---\r\ntype: user\r\n---\r\nold\r\n")
    apply_plan(mem, plan_save(mem, read_memory(mem / "c.md", mem), "---\ntype: user\n---\nnew\n"), journal, NOW)
    assert (mem / "c.md").read_bytes() == b"---\r\ntype: user\r\n---\r\nnew\r\n"
    make(mem, "bin.md", b"---\ntype: user\n---\n\xff\xfe latin\n")
    with pytest.raises(EditError, match="not UTF-8"):
        plan_save(mem, read_memory(mem / "bin.md", mem), "anything")


def test_a_symlinked_memory_is_not_replaced_by_a_copy(mem: Path, journal: Journal, tmp_path: Path) -> None:
    target = tmp_path / "outside.md"
    target.write_text("---\ntype: User\n---\nx\n")
    (mem / "link.md").symlink_to(target)
    plan = plan_retype(mem, read_memory(mem / "link.md", mem), "user")
    with pytest.raises(ApplyError, match="outside the memory dir"):  # a link out, not confirmed
        apply_plan(mem, plan, journal, NOW)
    assert (mem / "link.md").is_symlink()
    assert target.read_text() == "---\ntype: User\n---\nx\n"


def test_retype_and_restore_keep_the_memory_age(mem: Path, journal: Journal) -> None:
    make(mem, "u.md", b"---\ntype: User\n---\nx\n")
    apply_plan(mem, plan_retype(mem, read_memory(mem / "u.md", mem), "user"), journal, NOW)
    assert (mem / "u.md").stat().st_mtime == OLD
    apply_plan(mem, plan_delete(mem, read_memory(mem / "u.md", mem)), journal, NOW)
    apply_plan(mem, restore_plan(mem, journal, trash(journal)[0]), journal, NOW)
    assert (mem / "u.md").stat().st_mtime == OLD


def test_undoing_a_restore_puts_the_memory_back_in_the_trash(mem: Path, journal: Journal) -> None:
    make(mem, "u.md", b"---\ntype: user\n---\nx\n")
    apply_plan(mem, plan_delete(mem, read_memory(mem / "u.md", mem)), journal, NOW)
    apply_plan(mem, restore_plan(mem, journal, trash(journal)[0]), journal, NOW)
    assert trash(journal) == []
    undo(mem, journal, NOW)
    assert not (mem / "u.md").exists()
    assert [i.relpath for i in trash(journal)] == ["u.md"]


def test_files_a_dream_deleted_are_in_the_trash(mem: Path, journal: Journal) -> None:
    make(mem, "dup.md", b"---\ntype: user\n---\nsame\n")
    apply_plan(mem, Plan("Dream", (FileChange("dup.md", (mem / "dup.md").read_bytes(), None),), action="dream"), journal, NOW)
    assert [i.relpath for i in trash(journal)] == ["dup.md"]


def test_no_state_is_written_inside_the_memory_dir(mem: Path) -> None:
    with pytest.raises(StateDirInsideMemoryDirError):
        Journal(mem / ".memtui", mem)


def test_a_doctor_fix_keeps_the_memory_age_so_its_other_dates_keep_their_base(mem: Path, journal: Journal) -> None:
    from memtui.core.doctor import fix_plan, run_doctor

    monday = datetime(2026, 3, 2, 9, 0, tzinfo=UTC).timestamp()
    make(mem, "project_m.md", b"---\nname: M\ndescription: d\ntype: Project\n---\n\nBackup tomorrow, migration next Thursday.\n\n**Why:** x\n\n**How to apply:** y\n", monday)
    report = run_doctor(mem, NOW)
    (case,) = [f for f in report.findings if f.code == "type-case" and f.fix]
    apply_plan(mem, fix_plan(mem, case), journal, NOW)
    assert (mem / "project_m.md").stat().st_mtime == monday
    # "tomorrow" still means the Monday's Tuesday
    assert any(f.data.get("resolved") == "2026-03-03" for f in run_doctor(mem, NOW).findings if f.code == "relative-date")


def test_an_older_change_can_be_undone_when_the_agent_changed_the_index_since_the_last(mem: Path, journal: Journal) -> None:
    from click.testing import CliRunner

    from memtui.cli import main

    make(mem, "u.md", b"---\ntype: User\n---\nx\n")
    make(mem, "MEMORY.md", b"- [u](u.md) \xe2\x80\x94 h\n")
    retype = apply_plan(mem, plan_retype(mem, read_memory(mem / "u.md", mem), "user"), journal, NOW)
    apply_plan(mem, plan_create(mem, "user", "New", "n"), journal, NOW)
    with (mem / "MEMORY.md").open("ab") as fh:  # the agent appends to the index
        fh.write(b"- [agent](a.md) \xe2\x80\x94 by the agent\n")
    with pytest.raises(ConflictError, match="memtui undo --list"):
        undo_plan(mem, journal)
    env = {"MEMTUI_STATE_DIR": str(journal.root.parent.parent.parent)}
    listed = CliRunner().invoke(main, ["undo", "--list", "--memory-dir", str(mem)], env=env)
    assert retype.id in listed.output
    result = CliRunner().invoke(main, ["undo", "--entry", retype.id, "--memory-dir", str(mem)], env=env)
    assert result.exit_code == 0, result.output
    assert (mem / "u.md").read_bytes() == b"---\ntype: User\n---\nx\n"


def test_a_read_only_memory_dir_gets_a_clear_error_and_loses_nothing(mem: Path, journal: Journal) -> None:
    make(mem, "u.md", b"---\ntype: User\n---\nx\n")
    plan = plan_retype(mem, read_memory(mem / "u.md", mem), "user")
    mem.chmod(0o555)
    try:
        if os.access(mem, os.W_OK):  # root ignores permission bits: make the first write fail instead
            with failing_step("write", mem, 1, PermissionError(13, "Permission denied")), pytest.raises(ApplyError, match="Permission denied.*every file was restored"):
                apply_plan(mem, plan, journal, NOW)
        else:
            with pytest.raises(ApplyError, match="Permission denied.*every file was restored"):
                apply_plan(mem, plan, journal, NOW)
    finally:
        mem.chmod(0o755)
    assert (mem / "u.md").read_bytes() == b"---\ntype: User\n---\nx\n"
    assert sorted(p.name for p in mem.iterdir()) == ["u.md"]  # no temp file left


def test_a_file_deleted_between_loading_and_saving_is_a_conflict(mem: Path, journal: Journal) -> None:
    make(mem, "u.md", b"---\ntype: User\n---\nx\n")
    plan = plan_retype(mem, read_memory(mem / "u.md", mem), "user")
    (mem / "u.md").unlink()
    with pytest.raises(ConflictError, match="was deleted"):
        apply_plan(mem, plan, journal, NOW)
    assert list(mem.iterdir()) == []


@pytest.mark.parametrize("body", [b"x" * 1_000_000 + b"\n", b"y" * 50_000], ids=["1MB", "50KB-line"])
def test_big_files_and_long_lines_keep_every_byte_through_a_retype(mem: Path, journal: Journal, body: bytes) -> None:
    data = b"---\nname: Big\ntype: Project\n---\n" + body
    make(mem, "big.md", data)
    apply_plan(mem, plan_retype(mem, read_memory(mem / "big.md", mem), "project"), journal, NOW)
    assert (mem / "big.md").read_bytes() == data.replace(b"type: Project\n", b"type: project\n")
    undo(mem, journal, NOW)
    assert (mem / "big.md").read_bytes() == data


def test_a_memory_over_the_read_cap_is_never_rewritten(mem: Path) -> None:
    data = b"---\nname: Big\ntype: Project\n---\n" + b"x" * 10_000_000 + b"\n"
    make(mem, "big.md", data)
    with pytest.raises(EditError, match="over memtui's read cap"):
        plan_retype(mem, read_memory(mem / "big.md", mem), "project")
    assert (mem / "big.md").read_bytes() == data
