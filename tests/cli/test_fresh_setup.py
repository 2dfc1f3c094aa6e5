"""A fresh Claude Code setup — a project with CLAUDE.md, an empty ``~/.claude/``, no memory dir
until the agent's first save — reads as an empty memory dir in every command that only reads:
the normal empty result, exit 0, one line on stderr saying the dir does not exist yet."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from memtui.cli import main


def ascii_slug(path: Path) -> str:
    return "".join(c if c.isalnum() else "-" for c in str(path))


@pytest.fixture
def fresh(tmp_path: Path, isolated_env: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """The project and the memory dir Claude Code would create for it (absent)."""
    project = (tmp_path / "proj")
    project.mkdir()
    project = project.resolve()
    (project / "CLAUDE.md").write_text("# rules\n")
    (isolated_env / ".claude").mkdir()
    monkeypatch.setenv("MEMTUI_NOW", "2026-01-01T00:00:00Z")
    return project, isolated_env / ".claude" / "projects" / ascii_slug(project) / "memory"


def run(project: Path, *args: str) -> Result:
    return CliRunner().invoke(main, ["--project", str(project), *args])


READS = [["ls"], ["doctor"], ["index"], ["recall", "kafka cutover"], ["usage"], ["verify"], ["dream", "history"], ["undo", "--list"], ["trash"]]


@pytest.mark.parametrize("command", READS, ids=" ".join)
def test_reading_commands_read_a_missing_memory_dir_as_empty(fresh: tuple[Path, Path], command: list[str]) -> None:
    project, memory = fresh
    result = run(project, *command)
    assert result.exit_code == 0, result.output
    lines = result.stderr.splitlines()
    assert len(lines) == 1
    assert lines[0].startswith(f"memtui: no memory dir yet at {memory} (claude flavor")
    assert lines[0].endswith("the agent creates it when it first saves a memory; read as empty")
    assert not memory.exists()


def test_json_has_the_usual_shape_empty(fresh: tuple[Path, Path]) -> None:
    project, memory = fresh
    assert json.loads(run(project, "ls", "--json").stdout) == []
    doctor = json.loads(run(project, "doctor", "--json").stdout)
    assert (doctor["memory_dir"], doctor["memories"], doctor["findings"]) == (str(memory), 0, [])
    index = json.loads(run(project, "index", "--json").stdout)
    assert (index["path"], index["exists"], index["lines"], index["unindexed"]) == (str(memory / "MEMORY.md"), False, 0, [])
    recall = json.loads(run(project, "recall", "kafka cutover", "--json").stdout)
    assert (recall["manifest"]["count"], recall["picks"]) == (0, [])
    usage = json.loads(run(project, "usage", "--json").stdout)
    assert (usage["sessions"], usage["memories"]) == (0, [])
    verify = json.loads(run(project, "verify", "--json").stdout)
    assert (verify["counts"]["memories"], verify["conflicts"]) == (0, [])
    assert json.loads(run(project, "undo", "--list", "--json").stdout) == []
    assert json.loads(run(project, "trash", "--json").stdout) == []
    assert run(project, "trash").stdout == "the trash is empty\n"
    status = run(project, "dream", "status", "--json")
    assert status.exit_code == 0 and json.loads(status.stdout)["release"] == "claude-2.1.332"
    assert not memory.exists()


def test_dream_runs_still_refuse_and_create_nothing(fresh: tuple[Path, Path]) -> None:
    project, memory = fresh
    for command in (["dream", "plan"], ["dream", "apply"], ["undo"]):
        result = run(project, *command)
        assert result.exit_code == 1 and "no memory dir at" in result.stderr
    assert not memory.exists()


def test_a_memory_dir_given_that_does_not_exist_is_still_an_error(tmp_path: Path, isolated_env: Path) -> None:
    result = CliRunner().invoke(main, ["--memory-dir", str(tmp_path / "typo"), "ls"])
    assert result.exit_code == 1 and "no memory dir at" in result.stderr
