"""Counts of one read as English: "1 memory", "1 file loaded", "1 error" — in every command
that counts."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from memtui.cli import main


@pytest.fixture
def one(tmp_path: Path, isolated_env: Path) -> tuple[Path, Path]:
    """A project with one instruction file and a memory dir with one memory."""
    project = tmp_path / "proj"
    project.mkdir()
    (project / "AGENT.md").write_text("# rules\nbe brief\n")
    memory = tmp_path / "memory"
    memory.mkdir()
    (memory / "user_role.md").write_text("---\nname: role\ndescription: data engineer on ingest\ntype: user\n---\nData engineer.\n")
    return project, memory


def run(one: tuple[Path, Path], *args: str) -> Result:
    project, memory = one
    env = {"MEMTUI_NOW": "2026-01-01T00:00:00Z", "COLUMNS": "200"}
    return CliRunner(env=env).invoke(main, ["--flavor", "agent", "--project", str(project), "--memory-dir", str(memory), *args])


def test_one_memory_is_a_memory(one: tuple[Path, Path]) -> None:
    assert "(1 memory)" in run(one, "doctor").stdout
    assert "manifest: 1 of 1 memory " in run(one, "recall", "data engineer role", "--selector", "lexical").stdout
    verify = run(one, "verify").stdout
    assert "1 file via" in verify and "1 memory, 0 naming something in it" in verify
    assert "\n1 file loaded: " in run(one, "cascade").stdout


def test_one_error_is_an_error(one: tuple[Path, Path]) -> None:
    os.mkfifo(one[1] / "note.md")  # unreadable: the one error-severity finding
    result = run(one, "doctor")
    assert result.exit_code == 1
    assert "(2 memories)" in result.stdout and "\n1 error, " in result.stdout
