"""The gates of Claude Code 2.1.328's dream that its captured runs left open, closed by the
settings its code reads (``memtui.core.dream.autodream``'s list): a deny or ask rule on
Edit/Write over the memory dir, the read block, auto memory off, a flag's ``minHours`` /
``minSessions`` override; and the diff of a file the agent's dream changed, from memtui's copy."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from support.cli_captures import Scene, build

from memtui.core.dream.autodream import check_autodream
from memtui.core.dream.gates import DreamContext
from memtui.core.dream.history import dream_history, item_diffs, remember_files
from memtui.core.places.flavor import CLAUDE
from memtui.core.places.locations import resolve_locations
from memtui.core.places.release import load_release

RELEASE = load_release("claude-2.1.328")


def open_scene(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, run: str = "dream1", state: str = "before") -> Scene:
    s = build(tmp_path, run, state)
    monkeypatch.setenv("HOME", str(s.home))
    return s


def status(s: Scene):  # type: ignore[no-untyped-def]
    return check_autodream(DreamContext.from_locations(resolve_locations(CLAUDE, s.project)), s.now(5), RELEASE)


def user_settings(s: Scene, **values: object) -> None:
    path = s.home / ".claude" / "settings.json"
    path.write_text(json.dumps({**json.loads(path.read_text()), **values}))


def test_the_captured_state_fires(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert status(open_scene(tmp_path, monkeypatch)).would_fire


@pytest.mark.parametrize(("rule", "covers"), [("Edit", True), ("Write(~/.claude/projects/**)", True), ("Edit(//etc/**)", False), ("Read", False), ("Edit(*.py)", False)])
def test_a_deny_rule_over_the_memory_dir_means_it_never_dreams(rule: str, covers: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    s = open_scene(tmp_path, monkeypatch)
    user_settings(s, permissions={"deny": [rule]})
    st = status(s)
    assert st.gate("permission_rule").ok is not covers
    if covers:
        assert st.blocking is st.gate("permission_rule") and st.verdict.startswith("Your Claude Code never dreams here")


def test_the_read_block_and_auto_memory_off(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    s = open_scene(tmp_path / "a", monkeypatch)
    user_settings(s, permissions={"blockReadsOutsideWorkingDirectories": True})
    assert status(s).blocking.id == "read_block"  # type: ignore[union-attr]
    s = open_scene(tmp_path / "b", monkeypatch)
    user_settings(s, autoMemoryEnabled=False)
    st = status(s)
    assert st.blocking.id == "auto_memory" and st.traps[0].code == "never-dreams"  # type: ignore[union-attr]


def test_the_flags_overrides(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A positive number overrides the default; 0 or a string does not (the CLI's rule)."""
    s = open_scene(tmp_path, monkeypatch)
    cfg = s.home / ".claude.json"
    cfg.write_text(json.dumps({"cachedGrowthBookFeatures": {"tengu_onyx_plover": {"enabled": True, "minSessions": 7, "minHours": 0}}}))
    st = status(s)
    assert (st.min_sessions, st.min_hours) == (7, 24)
    assert st.gate("sessions").sources[1] == "~/.claude.json cachedGrowthBookFeatures.tengu_onyx_plover.minSessions"
    assert st.blocking.id == "sessions"  # type: ignore[union-attr]


def test_the_agents_change_as_a_diff_from_memtuis_copy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The both run's dream changed MEMORY.md; memtui kept the index it had seen before."""
    s = open_scene(tmp_path, monkeypatch, "both", "after")
    ctx = DreamContext.from_locations(resolve_locations(CLAUDE, s.project))
    index = ctx.memory_dir / "MEMORY.md"
    dream = next(i for i in dream_history(ctx) if i.kind == "dream")

    old = "# Memory index\n\n- [Deploy](project_deploy.md) — how we deploy\n"
    index.write_text(old)
    os.utime(index, (dream.time - 3600, dream.time - 3600))
    assert remember_files(ctx, s.now(0)) >= 1
    index.write_text("# Memory index\n\n- [Release schedule](project_release_schedule.md) — deploy on Fridays, staging first\n")
    os.utime(index, (dream.time + 1, dream.time + 1))
    diffs = {d.relpath: d for d in item_diffs(ctx, dream)}
    assert diffs["MEMORY.md"].diff is not None
    assert "-- [Deploy](project_deploy.md) — how we deploy" in diffs["MEMORY.md"].diff
    assert "+- [Release schedule](project_release_schedule.md) — deploy on Fridays, staging first" in diffs["MEMORY.md"].diff
    assert diffs["user_role.md"].note == "unchanged since memtui's copy"  # the dream's Edit of it failed
    assert diffs["project_release_schedule.md"].note == "memtui has no copy from before this change"  # it created it
