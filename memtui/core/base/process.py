"""Whether a process still runs (for state a crashed memtui process left behind)."""

from __future__ import annotations

import os
from pathlib import Path


def pid_alive(pid: int | None) -> bool:
    """Whether process ``pid`` exists and is not a zombie (``kill(pid, 0)``; a permission error
    means it exists). ``None`` / ≤ 0 → ``False``; this process → ``True``."""
    if pid is None or pid <= 0:
        return False
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    except OSError:
        return False
    try:  # Linux: an unreaped child is a zombie — it finished, it holds nothing
        stat = Path(f"/proc/{pid}/stat").read_text()
        return stat.rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return True
