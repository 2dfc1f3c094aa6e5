"""Whether a process still runs (for state a crashed memtui process left behind), and reading a
PID out of a file someone else may have written."""

from __future__ import annotations

import os
from pathlib import Path

# The largest PID any system hands out: ``pid_t`` is a signed 32-bit integer (Linux stops at
# 2**22, macOS at 99,998). A bigger number names no process; ``os.kill`` would overflow on it.
MAX_PID = 2**31 - 1


def parse_pid(text: str) -> int | None:
    """``text`` (ASCII digits, nothing else) as a PID in ``1 … MAX_PID``; ``None`` for ``0``,
    anything longer than 10 digits, out of range, or not digits. Never raises."""
    if not (0 < len(text) <= 10 and text.isascii() and text.isdigit()):
        return None
    pid = int(text)
    return pid if 0 < pid <= MAX_PID else None


def pid_alive(pid: int | None) -> bool:
    """Whether process ``pid`` exists and is not a zombie (``kill(pid, 0)``; a permission error
    means it exists). ``None``, a ``bool``, ≤ 0 or over ``MAX_PID`` → ``False``; this
    process → ``True``. Never raises."""
    if pid is None or isinstance(pid, bool) or not isinstance(pid, int) or not 0 < pid <= MAX_PID:
        return False
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    except (OSError, OverflowError):
        return False
    try:  # Linux: an unreaped child is a zombie — it finished, it holds nothing
        stat = Path(f"/proc/{pid}/stat").read_text()
        return stat.rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return True
