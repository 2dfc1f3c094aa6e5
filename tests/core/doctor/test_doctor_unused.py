"""The doctor's ``unused`` finding: memories none of the agent's last 20 sessions used, only once
20 sessions are on record, as information (a candidate for review), never a fix or a deletion."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from memtui.core.doctor.run import run_doctor
from memtui.core.doctor.usage_checks import UNUSED_SESSIONS, project_usage
from memtui.core.places.flavor import get_flavor
from memtui.core.places.locations import resolve_locations
from support.usage import UsageWorkspace, rebuild_usage

NOW = datetime(2026, 12, 10, tzinfo=UTC)


def _more_sessions(ws: UsageWorkspace, count: int, read: str | None = None) -> None:
    """``count`` sessions like the captured "hello" one, on 2026-12-05 (after every memory's
    mtime), the first of them reading ``read``."""
    lines = ws.transcript("hello").read_text().splitlines()
    own = ws.transcript("hello").parent
    for i in range(count):
        sid = f"5e55{i:04d}-0000-4000-8000-000000000000"
        out = []
        for raw in lines:
            obj = json.loads(raw)
            if "sessionId" in obj:
                obj["sessionId"] = sid
            if "timestamp" in obj:
                obj["timestamp"] = f"2026-12-05T10:{i:02d}:00.000Z"
            out.append(json.dumps(obj, separators=(",", ":")))
        if i == 0 and read is not None:
            call = {"type": "assistant", "uuid": "u-read", "timestamp": "2026-12-05T10:00:30.000Z", "sessionId": sid, "cwd": str(ws.proj),
                    "message": {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_r", "name": "Read", "input": {"file_path": str(ws.memory_dir / read)}}]}}
            out.append(json.dumps(call, separators=(",", ":")))
        (own / f"{sid}.jsonl").write_text("\n".join(out) + "\n")


def _unused(ws: UsageWorkspace) -> dict[str, str]:
    loc = resolve_locations(get_flavor("claude"), ws.proj)
    report = run_doctor(ws.memory_dir, NOW, fmt=loc.flavor.behaviour.memory_format, usage=project_usage(loc, NOW))
    return {f.path: f.message for f in report.findings if f.code == "unused"}  # type: ignore[misc]


def test_nothing_is_said_with_too_few_sessions(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ws = rebuild_usage(tmp_path, monkeypatch)
    assert _unused(ws) == {}  # 4 sessions on record


def test_memories_unused_in_the_last_sessions_are_candidates(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ws = rebuild_usage(tmp_path, monkeypatch)
    _more_sessions(ws, UNUSED_SESSIONS, read="user_tz.md")
    found = _unused(ws)
    # every memory but user_tz.md (read in one of the last 20 sessions)
    assert sorted(found) == ["deploy.md", "feedback_tests.md", "project_kafka.md", "project_oncall.md",
                             "reference_dash.md", "team/reference_runbook.md", "user_role.md"]
    assert "since 2026-12-05" in found["deploy.md"] and "last used 2026-12-01" in found["deploy.md"]
    assert "never used in the sessions on record" in found["team/reference_runbook.md"]
    assert "Nothing is deleted" in found["deploy.md"]
    loc = resolve_locations(get_flavor("claude"), ws.proj)
    report = run_doctor(ws.memory_dir, NOW, usage=project_usage(loc, NOW))
    assert all(f.severity == "info" and f.fix is None for f in report.findings if f.code == "unused")


def test_a_memory_newer_than_the_window_is_not_judged(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ws = rebuild_usage(tmp_path, monkeypatch)
    _more_sessions(ws, UNUSED_SESSIONS)
    fresh = ws.memory_dir / "user_role.md"
    stamp = datetime(2026, 12, 6, tzinfo=UTC).timestamp()
    import os

    os.utime(fresh, (stamp, stamp))
    assert "user_role.md" not in _unused(ws)
