"""Panes that are not shown import nothing heavy: opening memtui on its Memories pane, or running
`memtui ls`, leaves the anthropic SDK, numpy, bm25s, pydantic and the embedding model's
libraries unimported until a pane or a command that needs them is used.

Each check runs in a fresh interpreter: this test process may already have imported them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from support.memories import NOW, write_memory_dir

# The top-level packages the Recall, Dream and Doctor panes need and the Memories pane does not
# (the SDK and its HTTP client, numpy, bm25s, pydantic, the embedding model's loaders).
HEAVY = ("anthropic", "httpx2", "numpy", "bm25s", "pydantic", "safetensors", "tokenizers", "wordllama")

_APP_SCRIPT = """
import asyncio, sys
from pathlib import Path
from memtui.core.places.flavor import AGENT
from memtui.tui.app import MemtuiApp
from memtui.tui.memories import MemoriesPane
from memtui.tui.widgets.memory_table import MemoryTable
from textual.worker import WorkerCancelled

HEAVY = {heavy!r}

def loaded():
    return sorted({{m.split(".")[0] for m in sys.modules}} & set(HEAVY))

async def main():
    app = MemtuiApp.for_project(AGENT, Path({project!r}), memory_dir=Path({memory!r}), watch=False)
    async with app.run_test(size=(120, 36)) as pilot:
        for _ in range(3000):
            await pilot.pause(0.01)
            if app.query_one(MemoryTable).row_count:
                break
        print("ROWS", app.query_one(MemoryTable).row_count, "SHOWN", app.query_one(MemoriesPane).display)
        print("AT-FIRST-ROWS", loaded())
        while True:  # every background worker of the Memories pane done too
            try:
                await app.workers.wait_for_complete()
            except WorkerCancelled:
                continue
            break
        await pilot.pause()
        print("SETTLED", loaded())

asyncio.run(main())
"""


def _env(root: Path) -> dict[str, str]:
    return {
        "HOME": str(root / "home"),
        "MEMTUI_STATE_DIR": str(root / "state"),
        "MEMTUI_MANAGED_DIR": str(root / "managed"),
        "XDG_STATE_HOME": str(root / "xdg-state"),
        "XDG_CONFIG_HOME": str(root / "xdg-config"),
        "MEMTUI_NOW": NOW.isoformat(),
        "PATH": "/usr/bin:/bin",
    }


def test_the_memories_pane_imports_nothing_heavy(tmp_path: Path) -> None:
    (tmp_path / "home").mkdir()
    project = tmp_path / "project"
    project.mkdir()
    memory = tmp_path / "memory"
    write_memory_dir(memory)
    script = _APP_SCRIPT.format(heavy=HEAVY, project=str(project), memory=str(memory))
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=_env(tmp_path), timeout=120, check=False)
    assert out.returncode == 0, out.stderr[-3000:]
    assert "ROWS 5 SHOWN True" in out.stdout, out.stdout
    assert "AT-FIRST-ROWS []" in out.stdout, out.stdout
    assert "SETTLED []" in out.stdout, out.stdout


def test_ls_imports_nothing_heavy(tmp_path: Path) -> None:
    (tmp_path / "home").mkdir()
    memory = tmp_path / "memory"
    write_memory_dir(memory)
    script = (
        "import sys\n"
        "from memtui.cli import main\n"
        f"sys.argv = ['memtui', '--memory-dir', {str(memory)!r}, 'ls', *sys.argv[1:]]\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        f"print('HEAVY', sorted({{m.split('.')[0] for m in sys.modules}} & set({HEAVY!r})), file=sys.stderr)\n"
    )
    for extra in ([], ["--json"]):
        out = subprocess.run([sys.executable, "-c", script, *extra], capture_output=True, text=True, env=_env(tmp_path), timeout=60, check=False)
        assert "feedback_terse.md" in out.stdout, (out.stdout, out.stderr)
        assert "HEAVY []" in out.stderr, out.stderr[-3000:]
