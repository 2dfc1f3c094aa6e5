"""``memtui hook stop``: reads the Stop hook's JSON on stdin, always exits 0,
logs every outcome in the state dir; garbage input and a missing transcript write nothing else."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from support.extract import SESSION, Talk
from support.pilot import wait_for

from memtui.cli import main
from memtui.core.extract.hook import HookInputError, parse_hook_input
from memtui.core.extract.inbox import Inbox

NOW = "2026-03-10T12:00:00Z"


def state() -> Path:
    return Path(os.environ["MEMTUI_STATE_DIR"])


def log_lines() -> list[dict[str, object]]:
    path = state() / "logs" / "hook.log"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()] if path.exists() else []


def hook(memory: Path, payload: str | bytes, *extra: str) -> Result:
    return CliRunner().invoke(main, ["--memory-dir", str(memory), "hook", "stop", *extra], input=payload,
                              env={"MEMTUI_NOW": NOW})


@pytest.fixture
def project(tmp_path: Path) -> tuple[Path, Path]:
    memory = tmp_path / "memory"
    memory.mkdir()
    talk = Talk(cwd=str(tmp_path))
    talk.human("From now on, run the linter before every commit.")
    talk.say("Will do.")
    return memory, talk.write(tmp_path / f"{SESSION}.jsonl")


def payload(transcript: Path, cwd: Path) -> str:
    return json.dumps({"session_id": SESSION, "transcript_path": str(transcript), "cwd": str(cwd),
                       "hook_event_name": "Stop", "stop_hook_active": False})


def state_tree() -> list[str]:
    root = state()
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()) if root.exists() else []


def test_good_input_extracts_into_the_inbox(project: tuple[Path, Path], tmp_path: Path) -> None:
    memory, transcript = project
    result = hook(memory, payload(transcript, tmp_path), "--wait", "--extractor", "offline")
    assert result.exit_code == 0 and result.output == ""
    (p,) = Inbox(state(), memory).pending()
    assert p.description == "Run the linter before every commit." and p.source.session_id == SESSION
    (line,) = log_lines()
    assert line["level"] == "info" and line["proposals"] == [p.id] and line["cursor"] == "u2"
    assert list(memory.iterdir()) == []


def test_good_input_detached_returns_at_once_and_extracts_in_the_background(project: tuple[Path, Path], tmp_path: Path) -> None:
    memory, transcript = project
    result = hook(memory, payload(transcript, tmp_path), "--extractor", "offline")
    assert result.exit_code == 0
    wait_for(lambda: bool(log_lines()), timeout=30, what="the background extraction's log line")
    (line,) = log_lines()
    assert line["level"] == "info", line
    assert len(Inbox(state(), memory).pending()) == 1


@pytest.mark.parametrize("garbage", [b"", b"not json", b"[1, 2]", b'{"session_id": 3}', b"\xff\xfe\x00",
                                     b'{"session_id": "s", "transcript_path": "rel.jsonl", "cwd": "/"}'])
@pytest.mark.parametrize("wait", [True, False])
def test_garbage_input_exits_0_and_writes_nothing(project: tuple[Path, Path], garbage: bytes, wait: bool) -> None:
    memory, _ = project
    result = hook(memory, garbage, *(["--wait"] if wait else []))
    assert result.exit_code == 0
    assert state_tree() == ["logs/hook.log"]
    (line,) = log_lines()
    assert line["level"] == "error" and str(line["message"]).startswith("bad hook input")
    assert list(memory.iterdir()) == []


@pytest.mark.parametrize("wait", [True, False])
def test_missing_transcript_exits_0_and_writes_nothing(project: tuple[Path, Path], tmp_path: Path, wait: bool) -> None:
    memory, _ = project
    result = hook(memory, payload(tmp_path / "gone.jsonl", tmp_path), *(["--wait"] if wait else []))
    assert result.exit_code == 0
    assert state_tree() == ["logs/hook.log"]
    (line,) = log_lines()
    assert "does not exist" in str(line["message"])
    assert list(memory.iterdir()) == []


def test_auto_memory_off_extracts_nothing(project: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    memory, transcript = project
    monkeypatch.setenv("AGENT_DISABLE_AUTO_MEMORY", "1")
    result = hook(memory, payload(transcript, tmp_path), "--wait")
    assert result.exit_code == 0 and Inbox(state(), memory).pending() == []
    assert "auto memory is off" in str(log_lines()[0]["message"])


def test_an_internal_failure_is_logged_not_raised(project: tuple[Path, Path], tmp_path: Path) -> None:
    _, transcript = project
    blocker = tmp_path / "file-not-dir"
    blocker.write_text("x")
    result = hook(blocker / "memory", payload(transcript, tmp_path), "--wait", "--extractor", "offline", "--apply")
    assert result.exit_code == 0
    (line,) = log_lines()
    assert line["level"] == "error" and "failed" in str(line["message"])


def test_parse_hook_input() -> None:
    parsed = parse_hook_input(b'{"session_id": "s", "transcript_path": "/t.jsonl", "cwd": "/w", "extra": 1}')
    assert (parsed.session_id, str(parsed.transcript_path), str(parsed.cwd)) == ("s", "/t.jsonl", "/w")
    for bad in (b"", b"null", b'{"session_id": "", "transcript_path": "/t", "cwd": "/"}', b'{"session_id": "s", "cwd": "/"}'):
        with pytest.raises(HookInputError):
            parse_hook_input(bad)


def test_the_hook_logs_with_the_injected_clock(project: tuple[Path, Path], tmp_path: Path) -> None:
    memory, _ = project
    hook(memory, b"not json", "--wait")
    (line,) = log_lines()
    assert line["time"] == "2026-03-10T12:00:00+00:00"  # MEMTUI_NOW, not the wall clock


def test_an_unusable_frozen_clock_is_logged_and_the_hook_still_runs(project: tuple[Path, Path], tmp_path: Path) -> None:
    memory, transcript = project
    result = CliRunner().invoke(main, ["--memory-dir", str(memory), "hook", "stop", "--wait", "--extractor", "offline"],
                                input=payload(transcript, tmp_path), env={"MEMTUI_NOW": "yesterday"})
    assert result.exit_code == 0
    warning, outcome = log_lines()
    assert warning["level"] == "warning" and "MEMTUI_NOW" in str(warning["message"])
    assert outcome["level"] == "info" and len(Inbox(state(), memory).pending()) == 1
