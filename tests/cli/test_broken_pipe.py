"""A reader that stops early (``memtui where | head -1``) ends memtui quietly, as it ends any
Unix tool: no message, exit 1 (click's own status for a closed stdout)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest


@pytest.mark.parametrize("command", [["where"], ["cascade"], ["ls", "--json"], ["--help"]], ids=" ".join)
def test_a_closed_stdout_is_a_quiet_exit(command: list[str], tmp_path: Path, isolated_env: Path) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    (project / "AGENT.md").write_text("# rules\n" + "be brief\n" * 2000)
    memory = tmp_path / "memory"
    memory.mkdir()
    (memory / "user_role.md").write_text("---\nname: role\ndescription: the user's role\ntype: user\n---\nData engineer.\n")
    env = {**os.environ, "MEMTUI_NOW": "2026-01-01T00:00:00Z"}
    args = [sys.executable, "-c", "from memtui.cli import main; main()", "--project", str(project), "--memory-dir", str(memory), *command]
    read, write = os.pipe()
    os.close(read)  # the reader is gone before memtui writes its first byte
    try:
        proc = subprocess.run(args, stdout=write, stderr=subprocess.PIPE, cwd=project, env=env, timeout=120)
    finally:
        os.close(write)
    assert proc.stderr.decode() == ""
    assert proc.returncode == 1
