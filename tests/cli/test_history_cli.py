"""`memtui undo`, `memtui trash`, `memtui restore RELPATH`: thin CLI wrappers over the edit journal."""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from pathlib import Path

from click.testing import CliRunner, Result
from support.doctor import CLEAN_INDEX, clean_dir

from memtui.cli import main
from memtui.core.writes.edits import apply_plan, plan_delete
from memtui.core.writes.journal import Journal
from memtui.core.memory.memories import read_memory

NOW = "2026-03-10T12:00:00Z"


def run(memory_dir: Path, *args: str) -> Result:
    return CliRunner().invoke(main, ["--memory-dir", str(memory_dir), *args], env={"MEMTUI_NOW": NOW})


def state_dir() -> Path:
    return Path(os.environ["MEMTUI_STATE_DIR"])


def delete(memory_dir: Path, relpath: str) -> None:
    plan = plan_delete(memory_dir, read_memory(memory_dir / relpath, memory_dir))
    apply_plan(memory_dir, plan, Journal(state_dir(), memory_dir), datetime(2026, 3, 10, 12, tzinfo=UTC))


def test_undo_with_nothing_to_undo(tmp_path: Path) -> None:
    result = run(clean_dir(tmp_path), "undo")
    assert result.exit_code == 1 and "nothing to undo" in result.output


def test_trash_restore_round_trip(tmp_path: Path) -> None:
    memory_dir = clean_dir(tmp_path)
    original = (memory_dir / "feedback_squash.md").read_bytes()
    assert run(memory_dir, "trash").output.strip() == "the trash is empty"
    delete(memory_dir, "feedback_squash.md")
    assert not (memory_dir / "feedback_squash.md").exists()
    assert (memory_dir / "MEMORY.md").read_text() == "# Memory index\n\n"
    [item] = json.loads(run(memory_dir, "trash", "--json").stdout)
    assert item["path"] == "feedback_squash.md" and item["size"] == len(original)
    result = run(memory_dir, "restore", "feedback_squash.md")
    assert result.exit_code == 0, result.output
    assert (memory_dir / "feedback_squash.md").read_bytes() == original
    assert (memory_dir / "MEMORY.md").read_text() == CLEAN_INDEX
    assert json.loads(run(memory_dir, "trash", "--json").stdout) == []
    assert run(memory_dir, "restore", "feedback_squash.md").exit_code == 1


def test_undo_reverts_a_delete(tmp_path: Path) -> None:
    memory_dir = clean_dir(tmp_path)
    original = (memory_dir / "feedback_squash.md").read_bytes()
    delete(memory_dir, "feedback_squash.md")
    data = json.loads(run(memory_dir, "undo", "--json").stdout)
    assert data["title"] == "Undo: Delete feedback_squash.md"
    assert (memory_dir / "feedback_squash.md").read_bytes() == original
    assert (memory_dir / "MEMORY.md").read_text() == CLEAN_INDEX
