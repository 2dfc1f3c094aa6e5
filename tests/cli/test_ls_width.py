"""On a terminal, ``memtui ls`` fits its table to the width (``COLUMNS``, else the terminal's, else
80 cells): the description is shortened, never the file name; ``--json`` is not affected.

click's runner is no terminal; ``TTY_COMPATIBLE=1`` (rich's switch, which memtui follows) makes it
one, ``NO_COLOR`` and ``plain`` keep the text only. Output that is no terminal: test_plain_tables.py."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from memtui.cli import main

NOW = "2026-01-01T00:00:00Z"
DESCRIPTION = "word " * 19 + "last!"  # 100 characters


def write(memory: Path, rel: str, name: str) -> None:
    path = memory / rel
    path.write_text(f"---\nname: {name}\ndescription: {DESCRIPTION}\ntype: user\n---\nbody\n")
    os.utime(path, (1767225600, 1767225600))  # NOW: "today"


def run(memory: Path, *args: str, columns: str | None) -> Result:
    env = {"MEMTUI_NOW": NOW, "COLUMNS": columns, "TTY_COMPATIBLE": "1", "NO_COLOR": "1"}
    return CliRunner(env=env).invoke(main, ["ls", "--memory-dir", str(memory), *args])


def plain(text: str) -> str:
    """``text`` without its bold and dim (the styles ``NO_COLOR`` leaves)."""
    return re.sub(r"\x1b\[[0-9;]*m", "", text)


def table_lines(result: Result) -> list[str]:
    assert result.exit_code == 0, result.output
    return [line for line in plain(result.stdout).splitlines() if line[:1] in "┏┃┡│└"]


@pytest.fixture
def memory(tmp_path: Path, isolated_env: Path) -> Path:
    memory = tmp_path / "m"
    memory.mkdir()
    write(memory, "user_role.md", "Role")
    return memory


@pytest.mark.parametrize("columns", ["80", None], ids=["COLUMNS=80", "no width known"])
def test_the_table_fits_80_columns_by_shortening_the_description(memory: Path, columns: str | None) -> None:
    # type 4 + age 5 ("today") + path 12 + "!" 1 + 6 cells of padding 2 + 7 rules = 41;
    # name "Role" 4 at full width; the description gets 80 - 41 - 4 = 35: 34 characters and "…"
    lines = table_lines(run(memory, columns=columns))
    assert {len(line) for line in lines} == {80}
    row = next(line for line in lines if "user_role.md" in line)
    assert f"│ {DESCRIPTION[:34]}… │" in row and "│ Role │" in row


def test_a_wide_output_shows_the_whole_description(memory: Path) -> None:
    lines = table_lines(run(memory, columns="200"))
    assert {len(line) for line in lines} == {41 + 4 + 100}
    assert any(DESCRIPTION in line for line in lines)


def test_the_file_name_is_never_cut(memory: Path) -> None:
    rel = "reference_a_rather_long_file_name_for_the_runbooks_of_ingest.md"  # 63 characters
    write(memory, rel, "Runbooks of the ingest service")
    lines = table_lines(run(memory, columns="60"))
    assert any(f"│ {rel} │" in line for line in lines)
    # the names wrap at their spaces down to 10 cells, the description keeps 12 (11 characters and "…")
    assert any("│ Runbooks   │ word word w… │" in line for line in lines)


def test_json_is_unchanged_by_the_width(memory: Path) -> None:
    assert json.loads(run(memory, "--json", columns="40").stdout)[0]["description"] == DESCRIPTION
