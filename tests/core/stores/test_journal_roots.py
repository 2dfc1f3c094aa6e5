"""The state dir's list of folders with a journal (merges, settings): a hostile entry is skipped,
never a crash or a hang at start."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from memtui.core.writes.roots import ROOTS_DIR, register_root, registered_roots
from memtui.core.writes.transaction import recover_at_start


def test_registered_folders_are_listed_once(tmp_path: Path) -> None:
    state = tmp_path / "state"
    register_root(state, tmp_path / "a")
    register_root(state, tmp_path / "a")
    assert registered_roots(state) == [Path(os.path.realpath(tmp_path / "a"))]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_hostile_entries_are_skipped_at_start(tmp_path: Path) -> None:
    state = tmp_path / "state"
    folder = state / ROOTS_DIR
    folder.mkdir(parents=True)
    (folder / "nul").write_bytes(b"/tmp/x\x00y")
    (folder / "relative").write_bytes(b"relative/path")
    (folder / "huge").write_bytes(b"/" + b"a" * 100_000)
    os.mkfifo(folder / "fifo")
    (folder / "dir").mkdir()
    memory = tmp_path / "memory"
    memory.mkdir()
    assert registered_roots(state) == []
    assert recover_at_start(state, memory) == []
