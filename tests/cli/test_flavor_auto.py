"""``--flavor auto`` (the default) in every command: a Claude Code project opens as the claude
flavor without a flag; a memory dir missing or empty while the other flavor has files here
says so and names the flag that switches."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from memtui.cli import main


def ascii_slug(path: Path) -> str:
    return "".join(c if c.isalnum() else "-" for c in str(path))


def run(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


@pytest.fixture
def claude_project(tmp_path: Path, isolated_env: Path) -> tuple[Path, Path]:
    """A project with CLAUDE.md and one memory in Claude Code's memory dir for it."""
    project = (tmp_path / "proj")
    project.mkdir()
    project = project.resolve()
    (project / "CLAUDE.md").write_text("# rules\n")
    memory = isolated_env / ".claude" / "projects" / ascii_slug(project) / "memory"
    memory.mkdir(parents=True)
    (memory / "user_role.md").write_text("---\nname: role\ndescription: the user's role\ntype: user\n---\nData engineer.\n")
    return project, memory


def test_a_claude_project_is_read_as_claude_without_a_flag(claude_project: tuple[Path, Path]) -> None:
    project, memory = claude_project
    result = run("--project", str(project), "ls", "--json")
    assert result.exit_code == 0, result.output
    assert [m["name"] for m in json.loads(result.stdout)] == ["role"]
    where = run("--project", str(project), "where")
    assert "flavor" in where.stdout and "claude  (auto: Claude Code's CLAUDE.md, ~/.claude/projects/" in where.stdout
    assert json.loads(run("--project", str(project), "where", "--json").stdout)["memory_dir"] == str(memory)


def test_the_agent_flavor_asked_for_says_where_claudes_memories_are(claude_project: tuple[Path, Path]) -> None:
    project, memory = claude_project
    for command in (["doctor"], ["ls"], ["recall", "x"], ["index"]):
        result = run("--project", str(project), "--flavor", "agent", *command)
        # the agent flavor's dir is not there yet: read as empty, with the hint
        assert result.exit_code == 0, (command, result.output)
        assert "no memory dir" in result.stderr and "agent flavor, --flavor agent" in result.stderr
        assert f"its memory dir {memory} has memories): try `--flavor claude`" in result.stderr


def test_an_empty_memory_dir_with_the_other_flavors_files_says_so(tmp_path: Path, isolated_env: Path) -> None:
    project = (tmp_path / "proj")
    project.mkdir()
    project = project.resolve()
    (project / "AGENT.md").write_text("x")
    (project / "CLAUDE.md").write_text("x")
    (isolated_env / ".agent" / "projects" / ascii_slug(project) / "memory").mkdir(parents=True)
    result = run("--project", str(project), "ls")
    assert result.exit_code == 0
    assert "has no memories (agent flavor, auto: both flavors' files found" in result.stderr
    assert "the claude flavor has files here (CLAUDE.md found): try `--flavor claude`" in result.stderr


def test_auto_is_a_flavor_choice_and_an_unknown_env_value_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert run("--project", str(tmp_path), "--flavor", "auto", "where", "--json").exit_code == 0
    monkeypatch.setenv("MEMTUI_FLAVOR", "cursor")
    result = run("--project", str(tmp_path), "where")
    assert result.exit_code == 2 and "unknown flavor 'cursor'" in result.stderr
