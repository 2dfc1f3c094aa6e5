"""A key pasted into a memory is reported once, masked, by the secret check: no other check
quotes it (a backticked key or a path holding one is not a claim about the code)."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from memtui.cli import main

KEY = "ghp_" + "n687neLfjVHq8xiM0OGr4hTxoF54Fzbka8FR"


@pytest.mark.parametrize("command", [["doctor", "--verbose"], ["doctor", "--json"], ["verify"], ["verify", "--json"]])
def test_no_report_quotes_a_pasted_key(tmp_path: Path, command: list[str]) -> None:
    project, mem = tmp_path / "p", tmp_path / "m"
    (project / "src").mkdir(parents=True)
    (project / "src" / "a.py").write_text("x = 1\n")
    mem.mkdir()
    (mem / "reference_ci.md").write_text(f"---\nname: ci\ndescription: the CI token\ntype: reference\n---\n\nUse this: `{KEY}` and `src/{KEY}.py`\n")
    result = CliRunner().invoke(main, ["--project", str(project), "--memory-dir", str(mem), *command])
    assert result.exit_code in (0, 1, 2), result.output
    assert KEY not in result.output
    assert KEY[4:] not in result.output
    if command[0] == "doctor":
        assert "ghp_… (40 chars)" in result.output
