"""A memory far larger than any real one (5 MB of pasted log) is listed and checked from its
first 1 MiB, with a diagnostic that says so, and memtui never rewrites it from that part."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from memtui.cli import main
from memtui.core.memory.memories import MAX_MEMORY_BYTES, read_memory
from memtui.core.recall.inject import read_for_injection
from memtui.core.writes.edits import EditError, plan_save

HEADER = "---\nname: pasted log\ndescription: a build log pasted whole\ntype: project\n---\n"


@pytest.fixture
def huge(tmp_path: Path) -> Path:
    mem = tmp_path / "memory"
    mem.mkdir()
    line = "2026-03-01 12:00:00 build step 1234 finished in 5 s on port 8080 — see `src/build.py`\n"
    body = line * (5_000_000 // len(line.encode()) + 1)
    (mem / "project_log.md").write_text(HEADER + body)
    (mem / "MEMORY.md").write_text("- [pasted log](project_log.md) — a build log pasted whole\n")
    return mem


def test_a_5_mb_memory_is_listed_from_its_start_with_the_reason(huge: Path) -> None:
    mem = read_memory(huge / "project_log.md", huge)
    assert (mem.name, mem.description, mem.type) == ("pasted log", "a build log pasted whole", "project")
    (diag,) = [d for d in mem.diagnostics if d.code == "too-large"]
    assert diag.message.startswith("skipped past the first 1.0 MB: the file is 4.8 MB, over memtui's 1.0 MB read cap")  # 5,000,000+ bytes = 4.8 MiB
    assert len(mem.text.encode()) <= MAX_MEMORY_BYTES


def test_memtui_never_rewrites_a_memory_it_read_only_the_start_of(huge: Path) -> None:
    mem = read_memory(huge / "project_log.md", huge)
    with pytest.raises(EditError, match="over memtui's read cap"):
        plan_save(huge, mem, HEADER + "short\n")


def test_recall_injects_its_first_4096_bytes_as_the_agent_does(huge: Path) -> None:
    content, truncated_by = read_for_injection(huge / "project_log.md")
    assert truncated_by == "bytes"
    assert content.startswith(HEADER)


@pytest.mark.parametrize("command", [["ls", "--json"], ["doctor", "--json"], ["index", "--json"], ["verify", "--json"]])
def test_every_command_reports_it_and_exits_cleanly(huge: Path, tmp_path: Path, command: list[str]) -> None:
    result = CliRunner().invoke(main, ["--project", str(tmp_path), "--memory-dir", str(huge), *command])
    assert result.exit_code in (0, 1), result.output
    assert "Traceback" not in result.output
    json.loads(result.stdout)
    if command[0] in ("ls", "doctor"):
        assert "over memtui's 1.0 MB read cap" in result.stdout
