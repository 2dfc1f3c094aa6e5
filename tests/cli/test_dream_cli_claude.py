"""``memtui --flavor claude dream status|history|request|reset-lock`` and ``extract --explain``
through click, on the states Claude Code 2.1.328's captured runs left (rebuilt under the test's
HOME; the clock frozen an hour after the run)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from support.cli_captures import Scene, build, runs

from memtui.cli import main

HOUR = 3600.0


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    return result.exit_code, result.output


def scene(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, state: str = "after") -> Scene:
    s = build(tmp_path, name, state)
    monkeypatch.setenv("HOME", str(s.home))
    monkeypatch.setenv("MEMTUI_NOW", s.now(HOUR).isoformat())
    return s


def test_status_json_lists_the_gates_in_the_clis_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    s = scene(tmp_path, monkeypatch, "gate_4of5", "before")
    monkeypatch.setenv("MEMTUI_NOW", s.now(5).isoformat())
    code, out = run("--flavor", "claude", "--release", "2.1.328", "dream", "status", "--json", "--project", str(s.project))
    assert code == 0
    data = json.loads(out)
    assert [g["id"] for g in data["gates"]] == ["remote", "entrypoint", "auto_memory", "read_block", "flag", "time", "throttle", "sessions", "permission_rule", "lock"]
    code, out = run("--flavor", "claude", "--release", "2.1.332", "dream", "status", "--json", "--project", str(s.project))
    assert [g["id"] for g in json.loads(out)["gates"]][-2:] == ["lock", "organization"]
    assert data["would_fire"] is False and data["blocking"] == "sessions"
    sessions = next(g for g in data["gates"] if g["id"] == "sessions")
    assert sessions["data"]["count"] == 3 and sessions["data"]["min_sessions"] == 5
    assert sorted(s["id"] for s in data["sessions"] if s["counted"]) == sorted(sessions["data"]["ids"])
    assert all(set(x) == {"id", "mtime", "counted", "why", "entrypoint"} for x in data["sessions"])
    flag = next(g for g in data["gates"] if g["id"] == "flag")
    assert flag["sources"] == ["~/.claude.json cachedGrowthBookFeatures.tengu_onyx_plover", "~/.claude/settings.json autoDreamEnabled"]
    assert data["verdict"].startswith("No dream yet: 3 session(s) since the last consolidation; 5 needed.")
    code, out = run("--flavor", "claude", "dream", "status", "--entrypoint", "sdk-cli", "--project", str(s.project))
    assert "  interactive       CLOSED `claude -p` and the SDKs never dream\n" in out
    assert "                           details: entrypoint sdk-cli; from CLAUDE_CODE_ENTRYPOINT\n" in out


def test_status_shows_the_failed_dream_and_reset_lock_undoes_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    s = scene(tmp_path, monkeypatch, "gate_fail")
    lock = s.memory_dir / ".consolidate-lock"
    before = (lock.read_bytes(), lock.stat().st_mtime)
    code, out = run("--flavor", "claude", "dream", "status", "--project", str(s.project))
    assert "trap: the last dream left no record:" in out and "fix: reset the lock" in out
    code, out = run("--flavor", "claude", "dream", "reset-lock", "--project", str(s.project))
    assert code == 0 and out.startswith("Reset the consolidation lock to never consolidated") and lock.read_bytes() == before[0]
    code, out = run("--flavor", "claude", "dream", "reset-lock", "--yes", "--project", str(s.project))
    assert code == 0 and lock.read_bytes() == b"" and lock.stat().st_mtime == 0.0
    code, out = run("--flavor", "claude", "undo", "--project", str(s.project))
    assert code == 0, out
    assert (lock.read_bytes(), lock.stat().st_mtime) == before


def test_history_json(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    s = scene(tmp_path, monkeypatch, "both")
    code, out = run("--flavor", "claude", "dream", "history", "--json", "--project", str(s.project))
    data = json.loads(out)
    assert [(i["who"], i["kind"], i["summary"]) for i in data] == [
        ("agent", "extract", "saved 1 memory"), ("agent", "dream", "consolidated 4 memory files"), ("agent", "extract", "saved 1 memory")]
    assert data[1]["files"] == ["project_release_schedule.md", "MEMORY.md", "project_deploy_2.md", "user_role.md"]
    assert {d["note"] for d in data[1]["diffs"]} == {"memtui has no copy from before this change"}


def test_request_is_the_clis_prompt(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    s = scene(tmp_path, monkeypatch, "dream1", "before")
    code, out = run("--flavor", "claude", "dream", "request", "--json", "--project", str(s.project))
    data = json.loads(out)
    assert data["model"] == runs()["dream1"]["files"]["dream_request"]["model"]
    assert data["memory_dir"] == f"{s.memory_dir}/" and len(data["session_ids"]) == 6
    assert data["messages"][0]["content"][-1]["text"].startswith("# Dream: Memory Consolidation\n")
    code, out = run("dream", "request", "--memory-dir", str(s.memory_dir))
    assert code == 2


def test_extract_explain(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    s = scene(tmp_path, monkeypatch, "x_p_prose")
    record = runs()["x_p_prose"]
    (name,) = {x["name"] for x in record["after"]["sessions"]} - {x["name"] for x in record["before"]["sessions"]}
    code, out = run("--flavor", "claude", "extract", "--explain", "--json", "--project", str(s.project), str(s.project_dir / name))
    assert code == 0, out
    data = json.loads(out)
    assert data["would_extract"] is False and data["blocking"] == "prose" and data["interactive"] is False
    assert next(g for g in data["gates"] if g["id"] == "prose")["log"] == next(d["text"] for d in record["debug"] if "skipping" in d["text"])
    code, out = run("--flavor", "claude", "extract", "--explain", "--project", str(s.project), str(s.project_dir / name))
    assert "prose            CLOSED no user message since the cursor has 3 words or more" in out
    assert out.rstrip().endswith("Claude Code would not extract: no user message since the cursor has 3 words or more.")


def test_apply_through_the_gates_follows_the_clis(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """memtui's own gated run is one more process of the CLI: its gates decide."""
    s = scene(tmp_path / "off", monkeypatch, "v_setting_false", "before")
    monkeypatch.setenv("MEMTUI_NOW", s.now(5).isoformat())
    code, out = run("--flavor", "claude", "dream", "apply", "--consolidator", "offline", "--json", "--project", str(s.project))
    data = json.loads(out)
    assert code == 1 and data["blocked"] and data["blocking"] == "flag"
    assert not (s.memory_dir / ".consolidate-lock").exists()
    s = scene(tmp_path / "on", monkeypatch, "v_enabled_setting_unset", "before")
    monkeypatch.setenv("MEMTUI_NOW", s.now(5).isoformat())
    code, out = run("--flavor", "claude", "dream", "apply", "--consolidator", "offline", "--json", "--project", str(s.project))
    assert code == 0, out
    assert (s.memory_dir / ".consolidate-lock").exists()
    code, out = run("--flavor", "claude", "dream", "apply", "--consolidator", "offline", "--json", "--project", str(s.project))
    assert code == 1 and json.loads(out)["blocking"] == "time"  # just consolidated
