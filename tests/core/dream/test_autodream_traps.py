"""The traps of Claude Code 2.1.328's dream, on the states its captured runs left: the lock of
the failing run (every dream request answered HTTP 400, the lock kept its new mtime, no record
in the session), its reset through memtui's journal and the undo of that; a successful run's
records listed as history; and a memory dir whose sessions all ran under ``claude -p``."""

from __future__ import annotations

import gzip
import os
from pathlib import Path

import pytest
from support.cli_captures import CAPTURES, build, prompt, runs

from memtui.core.dream.autodream import check_autodream
from memtui.core.dream.gates import DreamContext
from memtui.core.dream.history import dream_history
from memtui.core.dream.reset import plan_lock_reset, reset_lock
from memtui.core.dream.run import undo_last_dream
from memtui.core.memory.catalog import iso_utc
from memtui.core.places.flavor import CLAUDE
from memtui.core.places.locations import resolve_locations
from memtui.core.places.release import load_release
from memtui.core.sessions.background import notice_text
from memtui.core.writes.edits import EditError

RELEASE = load_release("claude-2.1.328")
HOUR = 3600.0


def context(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, run: str, state: str = "after"):  # type: ignore[no-untyped-def]
    scene = build(tmp_path, run, state)
    monkeypatch.setenv("HOME", str(scene.home))
    return scene, DreamContext.from_locations(resolve_locations(CLAUDE, scene.project))


def own_session(run: str) -> str:
    name = next(p.name for p in (CAPTURES / "transcripts").iterdir() if p.name.startswith(run + "."))
    return name[len(run) + 1 : -len(".jsonl.gz")]


def test_the_lock_the_failing_run_left_is_diagnosed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """gate_fail: the CLI fired, every request of its dream got a 400, and it still stamped the
    lock with its PID and kept it; its session has no memory_saved / memory_update line."""
    scene, ctx = context(tmp_path, monkeypatch, "gate_fail")
    lock = runs()["gate_fail"]["after"]["lock"]
    stamp = scene.at - lock["age_s"]
    status = check_autodream(ctx, scene.now(HOUR), RELEASE)
    trap = next(t for t in status.traps if t.code == "failed-dream")
    assert trap.data["session"] == own_session("gate_fail")
    assert trap.data["pid"] == int(lock["content"])
    assert trap.data["stamp"] == iso_utc(stamp)
    assert trap.data["next_at"] == iso_utc(stamp + 24 * HOUR)  # 24 h: the release's minHours
    assert "no dream record (memory_saved / memory_update) followed" in trap.message
    assert trap.fix is not None and "memtui dream reset-lock" in trap.fix and "memtui undo" in trap.fix
    assert status.blocking is not None and status.blocking.id == "time"  # the trap: 24 h lost


def test_reset_and_undo_of_the_failed_dreams_lock(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    scene, ctx = context(tmp_path, monkeypatch, "gate_fail")
    lock_path = ctx.memory_dir / ".consolidate-lock"
    before = (lock_path.read_bytes(), lock_path.stat().st_mtime)
    now = scene.now(HOUR)
    plan = plan_lock_reset(ctx)
    assert "never consolidated" in plan.title  # no earlier dream in this project's transcripts
    entry = reset_lock(ctx, now)
    assert (lock_path.read_bytes(), lock_path.stat().st_mtime) == (b"", 0.0)
    after = check_autodream(ctx, now, RELEASE)
    assert after.would_fire, after.verdict  # every one of the 9 sessions counts again
    assert not [t for t in after.traps if t.code == "failed-dream"]
    with pytest.raises(EditError):
        plan_lock_reset(ctx)
    undone = undo_last_dream(ctx, now)
    assert undone.undoes == entry.id
    assert (lock_path.read_bytes(), lock_path.stat().st_mtime) == before


def test_a_dream_that_left_its_records_is_history_not_a_trap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """both: an extraction and a dream at the end of turn 1, both notices in turn 2."""
    scene, ctx = context(tmp_path, monkeypatch, "both")
    status = check_autodream(ctx, scene.now(HOUR), RELEASE)
    assert not [t for t in status.traps if t.code == "failed-dream"]
    items = dream_history(ctx)
    kinds = [(i.who, i.kind, i.summary) for i in items]
    assert kinds == [("agent", "extract", "saved 1 memory"), ("agent", "dream", "consolidated 4 memory files"), ("agent", "extract", "saved 1 memory")]
    dream = items[1]
    assert dream.files == ("project_release_schedule.md", "MEMORY.md", "project_deploy_2.md", "user_role.md")
    assert dream.session_id == own_session("both")
    # the turn-2 request carried both notices, the extraction's first, in one system message
    notices = prompt("both.notices.main1.txt").replace(runs()["both"]["paths"]["memory_dir"], str(ctx.memory_dir))
    assert notices == f"{items[2].notice}\n\n{dream.notice}"
    updates = [r for r in items[2].records + dream.records if r.line_type == "memory_update"]
    assert "\n\n".join(notice_text(RELEASE, r) or "" for r in updates) == notices


def test_sessions_all_run_under_print_mode(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Five copies of the CLI's own ``-p`` transcript (extract_p: entrypoint sdk-cli)."""
    scene, ctx = context(tmp_path, monkeypatch, "v_p_mode", "before")
    p_mode = gzip.decompress(next((CAPTURES / "transcripts").glob("extract_p.*.jsonl.gz")).read_bytes())
    for s in os.listdir(ctx.sessions_dir):
        if s.endswith(".jsonl"):
            path = ctx.sessions_dir / s
            stamp = path.stat().st_mtime
            path.write_bytes(p_mode)
            os.utime(path, (stamp, stamp))
    status = check_autodream(ctx, scene.now(5), RELEASE)
    trap = next(t for t in status.traps if t.code == "print-sessions-only")
    assert "sdk-cli" in trap.message and trap.data["sessions"] == 6
    assert status.would_fire  # they count: the first interactive turn dreams
