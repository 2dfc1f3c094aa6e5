"""The CLI imports a subcommand's module only when that subcommand runs: `memtui ls` must not
pay for numpy, bm25s or the anthropic SDK (≈300 ms of imports)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import click

from memtui.cli import LAZY_COMMANDS, main


def test_every_lazy_command_resolves_to_its_name() -> None:
    ctx = click.Context(main)
    for name in LAZY_COMMANDS:
        command = main.get_command(ctx, name)
        assert command is not None and command.name == name
    assert main.list_commands(ctx) == sorted(LAZY_COMMANDS)


def test_ls_does_not_import_the_recall_or_dream_stack(tmp_path: Path) -> None:
    memory = tmp_path / "memory"
    memory.mkdir()
    (memory / "a.md").write_text("---\ndescription: a\ntype: user\n---\nbody\n")
    script = (
        "import sys\n"
        "from memtui.cli import main\n"
        f"sys.argv = ['memtui', '--memory-dir', {str(memory)!r}, 'ls', '--json']\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "heavy = sorted(m for m in ('numpy', 'bm25s', 'anthropic', 'textual') if m in sys.modules)\n"
        "print('HEAVY', heavy, file=sys.stderr)\n"
    )
    env = {"HOME": str(tmp_path), "MEMTUI_STATE_DIR": str(tmp_path / "state"), "PATH": "/usr/bin:/bin"}
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=60, check=False)
    assert '"path": "a.md"' in out.stdout
    assert "HEAVY []" in out.stderr
