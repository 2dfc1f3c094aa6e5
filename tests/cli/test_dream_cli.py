"""``memtui dream status|plan|apply|undo`` end to end through click (isolated HOME and state
dir from conftest; a frozen clock through ``MEMTUI_NOW``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from support.dream import DAY, NOW, memory, snapshot, write

from memtui.cli import main

T = NOW.timestamp()
BODY = "The user reviews pull requests in the morning before the daily standup meeting.\n"


@pytest.fixture
def mem(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("MEMTUI_NOW", "2026-03-10T12:00:00Z")
    d = tmp_path / "memory"
    write(d / "user_a.md", memory("A", "Reviews in the morning", "user", BODY), T - 9 * DAY)
    write(d / "user_b.md", memory("B", "Reviews before standup", "user", BODY), T - 3 * DAY)
    write(d / "MEMORY.md", "- [A](user_a.md) — reviews\n- [Gone](gone.md) — missing\n", T - 9 * DAY)
    return d


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    return result.exit_code, result.output


def test_status_json(mem: Path) -> None:
    code, out = run("dream", "status", "--json", "--memory-dir", str(mem))
    assert code == 0
    data = json.loads(out)
    assert set(data) >= {"enabled", "gates", "would_run"}
    assert set(data["gates"]) >= {"time", "sessions", "lock"}
    assert set(data["gates"]["time"]) >= {"ok", "hours_since", "min_hours"}
    assert set(data["gates"]["sessions"]) >= {"ok", "count", "min_sessions", "ids"}
    assert set(data["gates"]["lock"]) >= {"ok", "holder_pid", "holder_alive", "last_consolidated_at"}
    assert data["would_run"] is False and data["blocking"] == "sessions"
    code, out = run("dream", "status", "--memory-dir", str(mem))
    assert "sessions     CLOSED 0 since the last consolidation (min 5)" in out


def test_plan_writes_nothing(mem: Path) -> None:
    before = snapshot(mem)
    code, out = run("dream", "plan", "--json", "--consolidator", "offline", "--memory-dir", str(mem))
    assert code == 0
    data = json.loads(out)
    assert [(c["path"], c["action"]) for c in data["changes"]] == [("MEMORY.md", "modify"), ("user_a.md", "modify"), ("user_b.md", "delete")]
    assert all(set(c) == {"path", "action", "reason", "diff"} for c in data["changes"])
    assert data["changes"][2]["diff"].startswith("--- a/user_b.md\n+++ /dev/null\n")
    assert data["events"][0] == {"kind": "phase-started", "phase": "orient", "title": "list the memory dir, read the index, skim the memories"}
    assert snapshot(mem) == before
    code, out = run("dream", "plan", "--consolidator", "offline", "--memory-dir", str(mem))
    assert code == 0 and "delete user_b.md — merged into user_a.md" in out


def test_apply_is_gated_then_forced_then_undone(mem: Path) -> None:
    before = snapshot(mem)
    code, out = run("dream", "apply", "--consolidator", "offline", "--memory-dir", str(mem))
    assert code == 1 and "would not run" in out and out.rstrip().endswith("(--force skips the gates)")
    assert snapshot(mem) == before
    code, out = run("dream", "apply", "--force", "--json", "--consolidator", "offline", "--memory-dir", str(mem))
    assert code == 0
    data = json.loads(out)
    assert data["run_id"].endswith("-20260310T120000")  # <sequence>-<frozen clock>
    assert {c["path"] for c in data["changes"]} == {"MEMORY.md", "user_a.md", "user_b.md"}
    assert not (mem / "user_b.md").exists()
    code, out = run("dream", "status", "--json", "--memory-dir", str(mem))
    assert json.loads(out)["gates"]["time"]["hours_since"] == 0.0
    code, out = run("dream", "undo", "--json", "--memory-dir", str(mem))
    assert code == 0 and json.loads(out)["undoes"] == data["run_id"]
    assert snapshot(mem) == before
    code, out = run("dream", "undo", "--memory-dir", str(mem))
    assert code == 1 and "no applied dream to undo" in out


def test_missing_memory_dir_is_one_line(tmp_path: Path) -> None:
    code, out = run("dream", "status", "--memory-dir", str(tmp_path / "nope"))
    assert code == 1 and out.startswith("memtui: no memory dir at")


def test_claude_without_credentials_is_one_line(mem: Path) -> None:
    code, out = run("dream", "plan", "--consolidator", "claude", "--memory-dir", str(mem))
    assert code in (1, 2) and out.startswith("memtui:") and "Traceback" not in out
