"""`memtui index` prints at most 100 of each list; `--json` has them all."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from memtui.cli import main


def test_a_one_line_index_of_300_dead_links_prints_100_and_the_count_of_the_rest(tmp_path: Path) -> None:
    mem = tmp_path / "memory"
    mem.mkdir()
    (mem / "MEMORY.md").write_text("".join(f"[x](x{i}.md) " for i in range(300)) + "\n")
    out = CliRunner().invoke(main, ["--project", str(tmp_path), "--memory-dir", str(mem), "index"]).output
    assert out.count("dangling x") == 100
    assert "… and 200 more dangling links (`memtui index --json` lists them all)" in out
    data = json.loads(CliRunner().invoke(main, ["--project", str(tmp_path), "--memory-dir", str(mem), "index", "--json"]).stdout)
    assert len(data["dangling"]) == 300
