"""A dream as a transaction (docs/behaviour.md §8): apply snapshots and applies atomically, a failure
mid-apply restores every file and rolls the lock back, undo restores the tree byte for byte
(mtimes and the lock included)."""

from __future__ import annotations

import random
import subprocess
import sys
import threading
from datetime import timedelta
from pathlib import Path

import pytest
from support.dream import DAY, NOW, context, generated_body, memory, snapshot, write
from support.faults import failing_step, transaction_temps

from memtui.core.dream import (
    DreamCancelled,
    DreamContext,
    DreamDone,
    DreamError,
    DreamPlan,
    DreamSession,
    LockHeldError,
    dream_entries,
    plan_dream,
    read_lock,
    run_dream,
    stream_dream,
    undo_last_dream,
)
from memtui.core.dream.lock import LOCK_NAME
from memtui.core.writes.edits import ApplyError, ConflictError, EditError, FileChange, Plan
from memtui.core.writes.journal import Journal

T = NOW.timestamp()
MONDAY_NOON = 1772452800.0  # 2026-03-02T12:00:00Z


def five_dated(tmp_path: Path, *, lock_age_days: float | None = 3) -> DreamContext:
    """Five project memories whose only problem is "tomorrow": a plan of exactly five writes."""
    ctx = context(tmp_path)
    lines = []
    rng = random.Random(5)
    for i in range(5):
        rel = f"project_p{i}.md"
        body = generated_body(rng, i) + f"Milestone {i} is due tomorrow.\n"
        write(ctx.memory_dir / rel, memory(f"P{i}", f"Plan {i}", "project", body), MONDAY_NOON + i)
        lines.append(f"- [P{i}]({rel}) — plan {i}")
    write(ctx.memory_dir / "MEMORY.md", "\n".join(lines) + "\n", T - DAY)
    if lock_age_days is not None:
        write(ctx.memory_dir / LOCK_NAME, "", T - lock_age_days * DAY)
    return ctx


def test_the_plan_has_five_writes(tmp_path: Path) -> None:
    ctx = five_dated(tmp_path)
    dp = plan_dream(ctx, NOW)
    assert [c.relpath for c in dp.plan.changes] == [f"project_p{i}.md" for i in range(5)]
    assert (ctx.memory_dir / "project_p0.md").read_text().endswith("due tomorrow.\n")
    assert dp.plan.changes[0].after.decode().endswith("Milestone 0 is due on 2026-03-03.\n")  # type: ignore[union-attr]


def test_kill_after_the_second_of_five_writes_restores_all_and_rolls_the_lock_back(tmp_path: Path) -> None:
    ctx = five_dated(tmp_path)
    before = snapshot(ctx.memory_dir)
    session = DreamSession.start(ctx, NOW, force=True)
    assert read_lock(ctx.memory_dir).mtime == T  # taken
    dp = session.plan()
    # the third write fails: two are done
    with failing_step("write", ctx.memory_dir, 3, OSError(28, "No space left on device")) as calls, pytest.raises(ApplyError):
        session.apply(dp, NOW)
    assert transaction_temps(calls) == [0, 1, 2, 1, 0]  # the rollback wrote the first two back
    assert snapshot(ctx.memory_dir) == before  # all five files, the index and the lock as before
    assert read_lock(ctx.memory_dir).mtime == T - 3 * DAY
    assert [e.status for e in Journal(ctx.state_dir, ctx.memory_dir).entries()] == ["failed"]


def test_undo_after_apply_gives_a_byte_identical_tree(tmp_path: Path) -> None:
    ctx = five_dated(tmp_path, lock_age_days=None)
    write(ctx.memory_dir / "user_a.md", memory("A", "a", "user", "The user reviews pull requests in the morning before standup every day.\n"), T - 9 * DAY)
    write(ctx.memory_dir / "user_b.md", memory("B", "b", "user", "The user reviews pull requests in the morning before standup every day.\n"), T - 8 * DAY)
    write(ctx.memory_dir / "sub" / "reference_x.md", memory("X", "x", "reference", "Dashboards live in Grafana.\n"), T - 7 * DAY)
    before = snapshot(ctx.memory_dir)
    dp, entry = run_dream(ctx, NOW, force=True)
    assert entry is not None and entry.action == "dream"
    assert {c.kind for c in dp.plan.changes} == {"modify", "delete"}
    after = snapshot(ctx.memory_dir)
    assert after != before and "user_b.md" not in after
    assert read_lock(ctx.memory_dir).mtime == T and read_lock(ctx.memory_dir).body == ""
    assert [e.id for e in dream_entries(ctx)] == [entry.id]
    undo_entry = undo_last_dream(ctx, NOW + timedelta(minutes=5))
    assert undo_entry.undoes == entry.id
    assert snapshot(ctx.memory_dir) == before  # bytes and mtimes; no lock file, as before
    assert dream_entries(ctx) == []
    with pytest.raises(EditError):
        undo_last_dream(ctx, NOW)


def test_undo_restores_a_prior_lock_exactly(tmp_path: Path) -> None:
    ctx = five_dated(tmp_path, lock_age_days=2)
    before = snapshot(ctx.memory_dir)
    run_dream(ctx, NOW, force=True)
    undo_last_dream(ctx, NOW)
    assert snapshot(ctx.memory_dir) == before


def test_undo_leaves_a_newer_consolidation_alone(tmp_path: Path) -> None:
    ctx = five_dated(tmp_path, lock_age_days=2)
    run_dream(ctx, NOW, force=True)
    write(ctx.memory_dir / LOCK_NAME, "", T + 3600)  # another consolidation since
    undo_last_dream(ctx, NOW)
    assert read_lock(ctx.memory_dir).mtime == T + 3600


def test_a_conflict_writes_nothing_and_rolls_the_lock_back(tmp_path: Path) -> None:
    ctx = five_dated(tmp_path)
    session = DreamSession.start(ctx, NOW, force=True)
    dp = session.plan()
    write(ctx.memory_dir / "project_p3.md", "edited by the agent meanwhile\n")
    before = snapshot(ctx.memory_dir)
    with pytest.raises(ConflictError):
        session.apply(dp, NOW)
    after = snapshot(ctx.memory_dir)
    assert {k: v for k, v in after.items() if k != LOCK_NAME} == {k: v for k, v in before.items() if k != LOCK_NAME}
    assert read_lock(ctx.memory_dir).mtime == T - 3 * DAY


def test_cancel_and_discard_roll_the_lock_back(tmp_path: Path) -> None:
    ctx = five_dated(tmp_path, lock_age_days=None)
    cancel = threading.Event()
    cancel.set()
    session = DreamSession.start(ctx, NOW, force=True)
    with pytest.raises(DreamCancelled):
        session.plan(cancel=cancel)
    assert not (ctx.memory_dir / LOCK_NAME).exists()  # no prior consolidation: deleted
    ctx2 = five_dated(tmp_path / "b", lock_age_days=4)
    with DreamSession.start(ctx2, NOW, force=True) as session2:
        session2.plan()
    assert read_lock(ctx2.memory_dir).mtime == T - 4 * DAY  # left without apply: discarded


def test_a_held_lock_refuses_a_forced_dream(tmp_path: Path) -> None:
    ctx = five_dated(tmp_path)
    session = DreamSession.start(ctx, NOW, force=True)
    with pytest.raises(LockHeldError):
        DreamSession.start(ctx, NOW + timedelta(minutes=1), force=True)
    session.discard()


def test_an_empty_plan_still_counts_as_a_consolidation(tmp_path: Path) -> None:
    ctx = context(tmp_path)
    write(ctx.memory_dir / "user_a.md", memory("A", "a", "user", "Prefers tabs.\n"), T - DAY)
    write(ctx.memory_dir / "MEMORY.md", "- [A](user_a.md) — a\n", T - DAY)
    dp, entry = run_dream(ctx, NOW, force=True)
    assert dp.empty and entry is None
    assert read_lock(ctx.memory_dir).mtime == T


def test_the_deletion_cap_is_enforced_on_any_consolidator(tmp_path: Path) -> None:
    ctx = context(tmp_path)
    for i in range(6):
        write(ctx.memory_dir / f"user_{i}.md", "x\n")

    def greedy(ctx: DreamContext, now: object, emit: object, cancel: object) -> DreamPlan:
        changes = tuple(FileChange(f"user_{i}.md", b"x\n", None) for i in range(6))
        return DreamPlan(Plan("greedy", changes, action="dream"), ("gone",) * 6)

    with pytest.raises(DreamError, match="at most 5"):
        plan_dream(ctx, NOW, greedy)
    with pytest.raises(DreamError):
        run_dream(ctx, NOW, greedy, force=True)
    assert not (ctx.memory_dir / LOCK_NAME).exists()
    assert all((ctx.memory_dir / f"user_{i}.md").exists() for i in range(6))


def test_stream_dream_yields_events_then_the_plan(tmp_path: Path) -> None:
    ctx = five_dated(tmp_path)
    items = list(stream_dream(lambda emit: plan_dream(ctx, NOW, emit=emit)))
    assert isinstance(items[-1], DreamDone) and len(items[-1].plan.plan.changes) == 5
    assert items[0].kind == "phase-started"
    cancel = threading.Event()
    cancel.set()
    with pytest.raises(DreamCancelled):
        list(stream_dream(lambda emit: plan_dream(ctx, NOW, emit=emit, cancel=cancel), cancel))


def test_the_dream_core_imports_no_ui_library() -> None:
    modules = ["memtui.core.dream", "memtui.core.dream.claude", "memtui.core.dream.offline", "memtui.core.dream.run"]
    for module in modules:
        code = f"import sys, {module}; print(sorted(m for m in ('textual', 'rich') if m in sys.modules))"
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
        assert out.stdout.strip() == "[]", module
