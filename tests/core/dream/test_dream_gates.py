"""The dream's gates (docs/behaviour.md §8) with generated transcripts and a frozen clock."""

from __future__ import annotations

import os
from datetime import timedelta
from pathlib import Path

import pytest
from support.dream import DAY, NOW, context, transcript, write

from memtui.core.dream import DreamBlocked, DreamSession, check_gates, status_to_json
from memtui.core.dream.gates import DreamContext, last_scan_at
from memtui.core.dream.lock import LOCK_NAME
from memtui.core.places.settings import SettingsLayers

T = NOW.timestamp()


def consolidated(ctx: DreamContext, hours_ago: float) -> None:
    write(ctx.memory_dir / LOCK_NAME, "", T - hours_ago * 3600)


def sessions(ctx: DreamContext, n: int, *, hours_ago: float = 1.0, prefix: str = "s") -> list[str]:
    ids = [f"{prefix}{i}" for i in range(n)]
    for i, sid in enumerate(ids):
        transcript(ctx.sessions_dir, sid, T - hours_ago * 3600 - i)
    return ids


def test_first_run_needs_only_the_sessions_gate(tmp_path: Path) -> None:
    ctx = context(tmp_path)
    sessions(ctx, 4)
    status = check_gates(ctx, NOW)
    assert status.time.ok and status.time.hours_since is None
    assert status.lock.ok and not status.lock.exists
    assert (status.sessions.ok, status.sessions.count, status.blocking) == (False, 4, "sessions")
    sessions(ctx, 1, prefix="t")
    status = check_gates(ctx, NOW)
    assert status.would_run and status.sessions.count == 5


def test_time_gate_counts_hours_from_the_lock_mtime(tmp_path: Path) -> None:
    ctx = context(tmp_path)
    consolidated(ctx, 23)
    sessions(ctx, 9, hours_ago=1)
    status = check_gates(ctx, NOW)
    assert (status.time.ok, status.time.hours_since, status.blocking) == (False, 23.0, "time")
    assert status.time.opens_at == T - 23 * 3600 + 24 * 3600
    consolidated(ctx, 24)
    assert check_gates(ctx, NOW).would_run


def test_sessions_since_last_consolidation_exclude_subagents_older_and_current(tmp_path: Path) -> None:
    ctx = context(tmp_path, current_session="s0")
    consolidated(ctx, 30)
    sessions(ctx, 5, hours_ago=1)  # s0..s4, s0 is the current session
    sessions(ctx, 3, hours_ago=31, prefix="old")  # before the last consolidation
    transcript(ctx.sessions_dir, "agent-123", T - 3600)  # a sub-agent transcript
    write(ctx.sessions_dir / "notes.txt", "x", T - 3600)
    status = check_gates(ctx, NOW)
    assert status.sessions.ids == ("s1", "s2", "s3", "s4")  # newest first
    assert status.sessions.excluded == "s0"
    assert (status.sessions.ok, status.blocking) == (False, "sessions")
    transcript(ctx.sessions_dir, "s9", T - 60)
    status = check_gates(ctx, NOW)
    assert status.sessions.ids[0] == "s9" and status.sessions.count == 5 and status.would_run


def test_scan_throttle_one_scan_per_ten_minutes_persisted_in_the_state_dir(tmp_path: Path) -> None:
    ctx = context(tmp_path)
    sessions(ctx, 2)
    first = check_gates(ctx, NOW, record=True)
    assert first.scan.ok and first.sessions.count == 2
    assert last_scan_at(ctx) == T
    assert str(ctx.dream_state_dir).startswith(str(ctx.state_dir)) and not str(ctx.dream_state_dir).startswith(str(ctx.memory_dir))
    later = check_gates(ctx, NOW + timedelta(minutes=9, seconds=59), record=True)
    assert (later.scan.ok, later.blocking, later.sessions.count) == (False, "scan", 0)  # not scanned
    assert later.scan.next_scan_at == T + 600
    assert last_scan_at(ctx) == T  # a throttled check records nothing
    # status (record=False) still counts the sessions, to show them
    assert check_gates(ctx, NOW + timedelta(minutes=5)).sessions.count == 2
    again = check_gates(ctx, NOW + timedelta(minutes=10), record=True)
    assert again.scan.ok and again.sessions.count == 2 and last_scan_at(ctx) == T + 600


def test_gated_session_refuses_and_writes_no_lock(tmp_path: Path) -> None:
    ctx = context(tmp_path)
    sessions(ctx, 1)
    with pytest.raises(DreamBlocked) as err:
        DreamSession.start(ctx, NOW)
    assert err.value.status.blocking == "sessions"
    assert not (ctx.memory_dir / LOCK_NAME).exists()


def test_live_lock_blocks_the_lock_gate(tmp_path: Path) -> None:
    ctx = context(tmp_path)
    sessions(ctx, 6)
    write(ctx.memory_dir / LOCK_NAME, f"{os.getpid()}\nprior-mtime: {T - 3 * DAY}\nrun: x\n", T - 120)
    status = check_gates(ctx, NOW)
    # the run in progress has not consolidated yet: time counts from its prior mtime
    assert status.time.ok and status.time.hours_since == 72.0
    assert (status.lock.ok, status.lock.holder_pid, status.lock.holder_alive, status.blocking) == (False, os.getpid(), True, "lock")


def layers(**user: object) -> SettingsLayers:
    return SettingsLayers({"user": user}, {"user": Path("/u/settings.json")})


def test_settings_from_the_layers(tmp_path: Path) -> None:
    ctx = context(tmp_path, settings=layers(minHours=2, minSessions=1))
    consolidated(ctx, 3)
    sessions(ctx, 1)
    status = check_gates(ctx, NOW)
    assert (status.time.min_hours, status.sessions.min_sessions, status.would_run) == (2.0, 1, True)
    assert status.settings.sources == {"autoDreamEnabled": "default", "minHours": "user", "minSessions": "user"}


def test_invalid_settings_fall_back_with_a_diagnostic(tmp_path: Path) -> None:
    ctx = context(tmp_path, settings=layers(minHours="soon", minSessions=True, autoDreamEnabled="yes"))
    status = check_gates(ctx, NOW)
    assert (status.time.min_hours, status.sessions.min_sessions, status.enabled) == (24.0, 5, True)
    assert [d.code for d in status.settings.diagnostics] == ["dream-setting-invalid"] * 3


def test_auto_dream_disabled_blocks_first(tmp_path: Path) -> None:
    ctx = context(tmp_path, settings=layers(autoDreamEnabled=False))
    sessions(ctx, 9)
    status = check_gates(ctx, NOW)
    assert (status.enabled, status.would_run, status.blocking) == (False, False, "enabled")
    off = check_gates(context(tmp_path / "b", auto_memory_enabled=False), NOW)
    assert off.enabled is False


def test_status_json_shape(tmp_path: Path) -> None:
    ctx = context(tmp_path)
    consolidated(ctx, 30)
    sessions(ctx, 2)
    data = status_to_json(check_gates(ctx, NOW))
    assert data["enabled"] is True and data["would_run"] is False
    assert data["gates"]["time"] == {"ok": True, "hours_since": 30.0, "min_hours": 24.0, "opens_at": None}
    assert data["gates"]["sessions"] == {"ok": False, "count": 2, "min_sessions": 5, "ids": ["s0", "s1"], "excluded": None}
    assert data["gates"]["lock"] == {
        "ok": True, "holder_pid": None, "holder_alive": False,
        "last_consolidated_at": "2026-03-09T06:00:00.000Z", "crashed": False, "exists": True,
    }
    assert data["blocking"] == "sessions"
