"""memtui's own state for one memory dir: ``<state>/memdirs/<key>/`` (journal, inbox, dream,
extraction cursors).

The key is the memory dir's slug plus a hash of its full path: slugs are lossy (``mem_a`` and
``mem-a`` give the same slug), and two memory dirs must never share a journal, a trash or an
inbox.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from memtui.core.places.slug import slugify


class StateDirInsideMemoryDirError(OSError):
    """memtui's state dir lies inside the memory dir: the agent's recall would read memtui's
    backups and trash as memories, so memtui refuses to write its state there."""


def memdir_key(memory_dir: Path) -> str:
    """``<slug of the resolved path>-<8 hex of its SHA-256>``, at most 100 + 9 characters."""
    resolved = os.path.realpath(memory_dir)  # never raises: a symlink loop stays as written
    return f"{slugify(resolved)[:100]}-{hashlib.sha256(resolved.encode('utf-8', 'surrogatepass')).hexdigest()[:8]}"


def memdir_state(state_dir: Path, memory_dir: Path) -> Path:
    """The state folder of ``memory_dir``. Raises ``StateDirInsideMemoryDirError`` when the
    state dir is inside the memory dir (nothing may be written there)."""
    state = Path(os.path.realpath(state_dir))
    memory = Path(os.path.realpath(memory_dir))
    if state == memory or memory in state.parents:
        raise StateDirInsideMemoryDirError(
            22, f"memtui's state dir {state} is inside the memory dir; set MEMTUI_STATE_DIR elsewhere", str(state)
        )
    return state_dir / "memdirs" / memdir_key(memory_dir)
