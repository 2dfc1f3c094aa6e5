"""The common options (``--project``, ``--memory-dir``, ``--flavor``, ``--settings``) go after any
command's name as well as before it: every command and group takes them (``demo`` aside: it runs
on its own sample workspace). Issue 30: ``memtui cascade --project X`` said "No such option"."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from memtui.cli import main
from support.cascade import write

COMMON = {"--project", "--memory-dir", "--flavor", "--settings"}
WITHOUT = {"demo"}  # the demo's project is the sample workspace it writes


def commands(group: click.Group, ctx: click.Context) -> Iterator[tuple[str, click.Command]]:
    """Every command below ``group`` (groups included), by its full name (``dream status``)."""
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        assert command is not None, name
        path = f"{ctx.command_path} {name}".removeprefix("memtui ")
        yield path, command
        if isinstance(command, click.Group):
            yield from commands(command, click.Context(command, info_name=name, parent=ctx))


def test_every_command_takes_the_common_options_after_its_name() -> None:
    found = dict(commands(main, click.Context(main, info_name="memtui")))
    # the walk reaches the groups' commands (a lazy group that listed nothing would pass vacuously)
    assert {"cascade", "imports approve", "imports decline", "dream status", "team import", "links confirm",
            "inbox accept", "hook stop", "recall eval", "recall query"} <= set(found)
    missing = {
        name: sorted(COMMON - {opt for param in command.params for opt in getattr(param, "opts", [])})
        for name, command in found.items()
        if name not in WITHOUT
    }
    assert {name: opts for name, opts in missing.items() if opts} == {}


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project with instructions at its root and in ``sub/``; the cwd elsewhere."""
    project = tmp_path / "proj"
    write(project, "AGENT.md", "Root rules.\n")
    write(project, "sub/AGENT.md", "Sub rules.\n")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    return project


def loaded(args: list[str]) -> list[str]:
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    return [f["path"] for f in json.loads(result.stdout)["files"] if f["loaded"]]


def test_cascade_takes_project_after_its_name(project: Path) -> None:
    assert loaded(["cascade", "--project", str(project), "--json"]) == [str(project / "AGENT.md")]
    sub = ["cascade", "--cwd", str(project / "sub"), "--project", str(project), "--json"]
    assert loaded(sub) == [str(project / "AGENT.md"), str(project / "sub" / "AGENT.md")]
    # after the name wins over before it, as for every command
    assert loaded(["--project", str(project / "sub"), "cascade", "--project", str(project), "--json"]) == [str(project / "AGENT.md")]


def test_imports_take_project_after_their_names(project: Path) -> None:
    runner = CliRunner()
    approved = runner.invoke(main, ["imports", "approve", "--project", str(project)])
    assert approved.exit_code == 0, approved.output
    assert approved.stdout.startswith(f"external imports approved for {project} (recorded in ")
    approvals = Path(os.environ["MEMTUI_STATE_DIR"]) / "approvals.json"
    assert json.loads(approvals.read_text())["projects"][str(project)]["external_imports"] == "approved"
    declined = runner.invoke(main, ["imports", "--project", str(project), "decline"])  # after the group's name
    assert declined.exit_code == 0, declined.output
    assert json.loads(approvals.read_text())["projects"][str(project)]["external_imports"] == "declined"


def test_a_project_that_is_no_directory_is_one_line(project: Path) -> None:
    result = CliRunner().invoke(main, ["cascade", "--project", str(project / "AGENT.md")])
    assert result.exit_code == 2
    assert result.stderr == f"memtui: --project {project / 'AGENT.md'}: not a directory\n"


def test_recall_routes_the_common_options_before_a_query_or_a_command(tmp_path: Path) -> None:
    memory = tmp_path / "m"
    memory.mkdir()
    # before a query: they go to `recall query` (the query is the first other word)
    query = CliRunner().invoke(main, ["recall", "--memory-dir", str(memory), "--flavor=agent", "deploy staging", "--selector", "lexical", "--json"])
    assert query.exit_code == 0, query.output
    assert json.loads(query.stdout)["selector"] == "lexical"
    # before a command's name: that command runs (`eval`, not a query "eval")
    result = CliRunner().invoke(main, ["recall", "--memory-dir", str(memory), "eval", "--set", str(tmp_path / "none.jsonl")])
    assert result.exit_code == 2
    assert result.stderr.startswith(f"memtui: Invalid value for '--set': File '{tmp_path / 'none.jsonl'}' does not exist")
