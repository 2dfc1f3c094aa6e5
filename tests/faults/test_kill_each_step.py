"""A crash at any single step of any transaction is settled, at the next start, to every file
all-old or all-new — and from there the change can be made again or undone as usual.

For each kind of transaction (a hand edit, a rename, a dream, a team import, the doctor's "apply
all", an inbox accept, an undo, a restore from the trash), the transaction is run once to count
its write steps (every create, write, fsync, rename, swap, link, unlink, directory fsync and
mkdir of ``memtui.core.writes.steps``); then, for every k, a fresh copy is run in a forked
process that dies (``os._exit``, as abrupt as ``kill -9``) right after step k, and a memtui
start (the CLI) settles it. Deterministic: every k, not a random sample.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from support.faultlab import BUILDERS, KILLED, NOW_ISO, Workspace, files_only, run_child, run_inprocess, temp_files, tree

from memtui.core.writes.journal import Journal


@pytest.fixture(autouse=True)
def frozen_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMTUI_NOW", NOW_ISO)


def settled(ws: Workspace) -> Journal:
    """The journal of ``ws``, checked to hold nothing unsettled."""
    journal = Journal(ws.state_dir, ws.memory_dir)
    assert journal.open_ids() == []
    assert [e.id for e in journal.entries() if e.status == "pending"] == []
    assert journal.damaged() == []
    return journal


def check_inbox(ws: Workspace, applied: bool) -> None:
    """An accepted proposal is accepted exactly when its memory is there."""
    from memtui.core.extract.inbox import Inbox

    (proposal,) = Inbox(ws.state_dir, ws.memory_dir).all()
    assert proposal.status == ("accepted" if applied else "pending")
    assert proposal.accepting is None


@pytest.mark.parametrize("kind", sorted(BUILDERS))
def test_a_kill_after_any_single_step_is_settled_to_all_old_or_all_new(kind: str, tmp_path: Path) -> None:
    build = BUILDERS[kind]
    ref = build(tmp_path / "ref")
    old_ref = tree(ref.memory_dir)
    done = run_inprocess(ref, ref.args)  # also imports everything the forked children need
    assert done.code == 0, done
    new_ref = tree(ref.memory_dir)
    assert new_ref != old_ref
    outcomes = {"old": 0, "new": 0}
    for k in range(1, done.steps + 1):
        ws = build(tmp_path / f"k{k}")
        old = tree(ws.memory_dir, mtimes=True)
        killed = run_child(ws, ws.args, kill_at=k)
        assert killed.code == KILLED, (k, killed)
        start = run_inprocess(ws, ["undo", "--list"])  # any memtui start settles it
        assert start.code == 0, (k, start)
        assert temp_files(ws.memory_dir) == [], k
        journal = settled(ws)
        now = tree(ws.memory_dir)
        if now == new_ref:
            state = "new"
        else:
            assert tree(ws.memory_dir, mtimes=True) == old, f"step {k}: neither all-old nor all-new"
            state = "old"
        outcomes[state] += 1
        rolled_back = [e for e in journal.entries() if e.note and e.note.endswith("(at start-up)")]
        if rolled_back:
            assert "was rolled back" in start.stderr, (k, start.stderr)
        if kind == "inbox":
            check_inbox(ws, applied=state == "new")
        # from here the change is made again, or undone, as after any completed change
        if state == "old":
            again = run_inprocess(ws, ws.rerun_args or ws.args)
            assert again.code == 0, (k, again)
            assert tree(ws.memory_dir) == new_ref, k
        elif ws.undo_args is not None:
            undone = run_inprocess(ws, ws.undo_args)
            assert undone.code == 0, (k, undone)
            assert files_only(tree(ws.memory_dir)) == {p: v[0] for p, v in old.items() if v != "dir"}, k  # type: ignore[index]
        assert temp_files(ws.memory_dir) == [], k
    # both ends are reached: early kills roll back, the last ones find the change complete
    assert outcomes["old"] > 0 and outcomes["new"] > 0, outcomes
    print(f"faults: kill-after-step {kind}: {done.steps} kills, {done.steps} held ({outcomes['old']} all-old, {outcomes['new']} all-new)")


RECOVERY_SHARDS = 4  # the kill points of the change, dealt out so that test workers share them


@pytest.mark.parametrize("shard", range(RECOVERY_SHARDS))
def test_a_kill_during_the_recovery_itself_is_settled_by_the_next_start(tmp_path: Path, shard: int) -> None:
    """Recovery is a transaction too: killed after any of its own steps, the next start
    finishes it — for every kill point of a multi-file change that left files to restore
    (kill points ``k1`` with ``k1 % RECOVERY_SHARDS == shard``)."""
    build = BUILDERS["rename"]
    ref = build(tmp_path / "ref")
    done = run_inprocess(ref, ref.args)
    tried = 0
    for k1 in range(1 + shard, done.steps + 1, RECOVERY_SHARDS):
        probe = build(tmp_path / f"p{k1}")
        assert run_child(probe, probe.args, kill_at=k1).code == KILLED
        recovery = run_child(probe, ["__recover"])
        if "restored" not in recovery.stderr:  # nothing to restore: the intent, or the change done
            continue
        expected = tree(probe.memory_dir)
        for k2 in range(1, recovery.steps + 1):
            ws = build(tmp_path / f"k{k1}-{k2}")
            assert run_child(ws, ws.args, kill_at=k1).code == KILLED
            assert run_child(ws, ["__recover"], kill_at=k2).code == KILLED
            start = run_inprocess(ws, ["undo", "--list"])
            assert start.code == 0
            assert temp_files(ws.memory_dir) == []
            settled(ws)
            assert tree(ws.memory_dir) == expected, (k1, k2)
            tried += 1
    assert tried > 5
    print(f"faults: kill-during-recovery rename, shard {shard}: {tried} kills, {tried} held")


def test_the_app_settles_an_interrupted_change_when_it_starts(tmp_path: Path) -> None:
    from memtui.core.places.flavor import AGENT
    from memtui.core.places.locations import resolve_locations
    from memtui.tui.app import MemtuiApp

    build = BUILDERS["rename"]
    for k in range(1, 100):  # the first kill that leaves the memory dir half-changed
        ws = build(tmp_path / f"ws{k}")
        old = tree(ws.memory_dir)
        assert run_child(ws, ws.args, kill_at=k).code == KILLED
        if tree(ws.memory_dir) != old:
            break
    app = MemtuiApp(resolve_locations(AGENT, tmp_path, memory_dir=ws.memory_dir), watch=False)
    assert tree(ws.memory_dir) == old
    assert len(app.recovered) == 1 and "was rolled back" in app.recovered[0]
    settled(ws)
