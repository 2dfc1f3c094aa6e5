"""A table printed where stdout is no terminal (``memtui ls | cat``, a file: click's runner is
one) is plain lines: the title, the header, one line per row, columns two spaces apart, no box,
and no name, path or description wrapped or shortened, whatever ``COLUMNS`` says (issue 30: names
were folded every ten characters). On a terminal the table is drawn: test_ls_width.py."""

from __future__ import annotations

import io
import os
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from rich.console import Console
from rich.table import Table
from rich.text import Text

from memtui.cli import main
from memtui.commands.common import print_table
from support.usage import rebuild_usage

NOW = "2026-01-01T00:00:00Z"
NOW_EPOCH = 1767225600
DESCRIPTION = "word " * 19 + "last!"  # 100 characters
NAME = "Deployment_pipeline_configuration for staging"  # 45 characters, a 33-character word


def write(memory: Path, rel: str, name: str, description: str, kind: str, mtime: int) -> None:
    path = memory / rel
    path.write_text(f"---\nname: {name}\ndescription: {description}\ntype: {kind}\n---\nbody\n")
    os.utime(path, (mtime, mtime))


@pytest.fixture
def memory(tmp_path: Path) -> Path:
    memory = tmp_path / "m"
    memory.mkdir()
    write(memory, "user_role.md", "Role", DESCRIPTION, "user", NOW_EPOCH)  # today
    write(memory, "project_deploy.md", NAME, "How the staging deploy works", "project", NOW_EPOCH - 86400)  # yesterday
    return memory


def ls(memory: Path, columns: str | None) -> Result:
    result = CliRunner(env={"MEMTUI_NOW": NOW, "COLUMNS": columns}).invoke(main, ["ls", "--memory-dir", str(memory)])
    assert result.exit_code == 0, result.output
    return result


def test_piped_ls_is_plain_lines_with_every_cell_whole(memory: Path) -> None:
    # widths: type 7 ("project"), age 9 ("yesterday", right-aligned), path 17 ("project_deploy.md"),
    # name 45, description 100, "!" 1; two spaces between columns; trailing spaces dropped
    header = "type" + " " * 11 + "age  path" + " " * 15 + "name" + " " * 43 + "description" + " " * 91 + "!"
    role = "user" + " " * 9 + "today  user_role.md" + " " * 7 + "Role" + " " * 43 + DESCRIPTION
    deploy = "project  yesterday  project_deploy.md  " + NAME + "  How the staging deploy works"
    assert ls(memory, None).stdout.splitlines()[:4] == [str(memory), header, role, deploy]


@pytest.mark.parametrize("columns", ["40", "80", "300"])
def test_piped_ls_is_the_same_whatever_the_width(memory: Path, columns: str) -> None:
    assert ls(memory, columns).stdout == ls(memory, None).stdout


def test_piped_usage_is_plain_lines(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ws = rebuild_usage(tmp_path, monkeypatch)
    monkeypatch.setenv("MEMTUI_NOW", "2026-12-02T00:00:00Z")
    result = CliRunner(env={"COLUMNS": "30"}).invoke(main, ["--flavor", "claude", "--project", str(ws.proj), "usage"])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    # memory 17 ("reference_dash.md"), then right-aligned: recalled 8, read 4, written 7, sessions 8, last used 9
    header = "memory" + " " * 13 + "recalled  read  written  sessions  last used"
    assert lines[1] == header
    assert "reference_dash.md         1     1        0         2      today" in lines
    assert not any(c in result.stdout for c in "┏┃│└")


def test_a_cell_longer_than_the_cap_shifts_its_own_line_only() -> None:
    out = io.StringIO()
    console = Console(file=out, width=80)  # a file: no terminal
    table = Table(title="[bold]title[/]")
    table.add_column("a")
    table.add_column("b", justify="right")
    table.add_column("c")
    table.add_row("x" * 200, "1", "[red]y[/]")
    table.add_row(Text("short\x1b[2J"), "22", "z")
    print_table(console, table)
    # column a pads to 120 cells (the cap), not to 200; the escape is shown, not sent; markup is dropped
    assert out.getvalue().splitlines() == [
        "title",
        "a" + " " * 119 + "   b  c",
        "x" * 200 + "   1  y",
        "short\\x1b[2J" + " " * 108 + "  22  z",
    ]
