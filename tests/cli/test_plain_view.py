"""``memtui`` with no command where the app cannot show (``TERM=dumb``, or stdout no terminal:
click's runner is none) prints the plain view instead — one line on stderr saying why, then
``memtui where`` and ``memtui ls`` — and exits 0 (issue 30: ``TERM=dumb memtui`` opened the app)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from click.testing import CliRunner

import memtui.cli
from memtui.cli import main

NOW = "2026-01-01T00:00:00Z"
HINT = "here is the plain view (`memtui where`, then `memtui ls`). Run `memtui --help` for the commands.\n"


@pytest.fixture
def memory(tmp_path: Path) -> Path:
    memory = tmp_path / "m"
    memory.mkdir()
    path = memory / "user_role.md"
    path.write_text("---\nname: Role\ndescription: Data engineer\ntype: user\n---\nbody\n")
    os.utime(path, (1767225600, 1767225600))  # NOW: "today"
    return memory


@pytest.fixture
def opened(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """The app runs the test would have started (none expected)."""
    runs: list[object] = []
    monkeypatch.setattr(memtui.cli, "open_app", lambda *args: runs.append(args))
    return runs


@pytest.mark.parametrize(
    ("term", "why"),
    [("dumb", "TERM=dumb: this terminal cannot show the app"), ("xterm-256color", "the output is not a terminal, so the app cannot open")],
)
def test_no_command_without_a_usable_terminal_prints_where_then_ls(memory: Path, opened: list[object], term: str, why: str) -> None:
    runner = CliRunner(env={"TERM": term, "MEMTUI_NOW": NOW})
    common = ["--flavor", "agent", "--memory-dir", str(memory)]
    result = runner.invoke(main, common)
    assert result.exit_code == 0, result.output
    assert opened == []
    assert result.stderr == f"memtui: {why}; {HINT}"
    where, ls = runner.invoke(main, [*common, "where"]), runner.invoke(main, [*common, "ls"])
    assert result.stdout == f"{where.stdout}\n{ls.stdout}"
    # what the two parts are: the memory dir among the places, then the memories
    assert f"memory dir          {memory}  (from option)" in where.stdout.splitlines()
    assert ls.stdout.splitlines()[2] == "user  today  user_role.md  Role  Data engineer"


def test_demo_on_a_dumb_terminal_writes_the_workspace_and_says_how_to_open_it(opened: list[object], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TERM", "dumb")
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))  # the workspace is written here
    result = CliRunner().invoke(main, ["demo"])
    assert result.exit_code == 0, result.output
    assert opened == []
    assert "TERM=dumb: this terminal cannot show the app; the demo workspace is written and left on disk instead (as with --no-app).\n" in result.stderr
    assert result.stdout.startswith(f"demo workspace: {tmp_path}")
    assert " memtui --flavor agent --project " in result.stdout
