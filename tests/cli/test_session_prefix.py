"""The app shows 8-character session ids; the commands that take a session id take those too
(a unique prefix of 8 hex digits or more), and an ambiguous one lists the ids it starts."""

from __future__ import annotations

import json
import shutil
from datetime import UTC, datetime
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from memtui.cli import main
from memtui.demo import DemoWorkspace, materialize

REMEMBER = "0fbf947b-f5e6-4b91-aa3c-54ebdc14f29a"  # the demo's "remember" session


@pytest.fixture
def demo(tmp_path: Path, isolated_env: Path) -> DemoWorkspace:
    return materialize(tmp_path / "demo", datetime(2026, 3, 10, 12, tzinfo=UTC))


def run(ws: DemoWorkspace, *args: str) -> Result:
    env = {"HOME": str(ws.home), "MEMTUI_NOW": "2026-03-10T12:00:00Z"}
    return CliRunner(env=env).invoke(main, ["--flavor", "agent", "--project", str(ws.project), *args])


def test_extract_takes_the_8_characters_the_app_shows(demo: DemoWorkspace) -> None:
    result = run(demo, "extract", REMEMBER[:8], "--extractor", "offline", "--json")
    assert result.exit_code == 0, result.output
    (proposal,) = json.loads(result.stdout)["proposals"]
    assert proposal["source"]["session_id"] == REMEMBER


def test_an_ambiguous_prefix_lists_the_candidates(demo: DemoWorkspace) -> None:
    original = next(demo.home.rglob(f"{REMEMBER}.jsonl"))
    twin = "0fbf947b-0000-4000-8000-000000000000"
    shutil.copy(original, original.with_name(f"{twin}.jsonl"))
    result = run(demo, "extract", "0fbf947b", "--extractor", "offline")
    assert result.exit_code == 2
    assert result.stderr == f"memtui: '0fbf947b' is the start of 2 session ids: {twin}, {REMEMBER}; give more of the id\n"
    assert run(demo, "extract", "0fbf947b-f", "--extractor", "offline", "--json").exit_code == 0


def test_seven_characters_are_not_an_id(demo: DemoWorkspace) -> None:
    result = run(demo, "extract", REMEMBER[:7], "--extractor", "offline")
    assert result.exit_code == 2 and "no session 0fbf947" in result.stderr


def test_dream_session_takes_a_prefix_and_refuses_an_ambiguous_one(demo: DemoWorkspace) -> None:
    assert run(demo, "dream", "status", "--session", REMEMBER[:8], "--json").exit_code == 0
    original = next(demo.home.rglob(f"{REMEMBER}.jsonl"))
    shutil.copy(original, original.with_name("0fbf947b-0000-4000-8000-000000000000.jsonl"))
    result = run(demo, "dream", "status", "--session", "0fbf947b", "--json")
    assert result.exit_code == 2 and "is the start of 2 session ids" in result.stderr
