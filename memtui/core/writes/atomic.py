"""Atomic file writes (docs/behaviour.md §10): a temp file in the same directory, fsync, rename, fsync the
directory.

A reader never sees a half-written file, and a failure at any point leaves the original
intact and no temp file behind. This is the writer of memtui's own state (the journal, the
inbox, cursors) and of files outside any transaction (the consolidation lock, an agent's
staging copy); memory files changed by an edit go through the journaled, displacing writes of
:mod:`memtui.core.writes.transaction`.

Temp files are named ``.memtui-<pid>-<random>.tmp``: a temp file left by a process that was
killed can be told from one a live process is still writing (``stale_temp``), and memtui's
recovery removes the former.
"""

from __future__ import annotations

import os
import re
import secrets
from pathlib import Path

from memtui.core.base.process import pid_alive as process_alive
from memtui.core.writes import steps

TEMP_PREFIX = ".memtui-"
TEMP_SUFFIX = ".tmp"
# `.memtui-<pid>-<16 hex>.tmp` (this module), `.memtui-<entry id>-<n><a|b>.tmp` (transactions)
# and `.memtui-<8 chars>.tmp` (``tempfile.mkstemp``, memtui before 0.2).
_PID_TEMP = re.compile(r"\.memtui-(\d+)-[0-9a-f]{16}\.tmp")
_LEGACY_TEMP = re.compile(r"\.memtui-[a-z0-9_]{8}\.tmp")


def default_mode(path: Path) -> int:
    """The permission bits a rewrite of ``path`` keeps (those of the file there), else what a
    plain ``open`` would give a new file (0o666 less the umask)."""
    try:
        return os.stat(path).st_mode & 0o777
    except OSError:
        return new_file_mode()


def new_file_mode() -> int:
    """The permission bits a plain ``open`` gives a new file: 0o666 less the umask."""
    return 0o666 & ~_umask()


def atomic_write_bytes(path: Path, data: bytes, *, mode: int | None = None, mtime: float | None = None, mtime_ns: int | None = None) -> None:
    """Replace ``path`` with ``data`` atomically, creating parent directories.

    ``mode``: permission bits to give the file (default: ``default_mode``); ``mtime``: epoch
    seconds to give it (``mtime_ns``: epoch ns, exactly; default: now), set before the rename so no reader sees the new bytes
    with another mtime. The temp file's name does not derive from ``path``, so a long
    legitimate name never overflows NAME_MAX. Raises ``OSError`` (the original, if any, is
    untouched and the temp file removed).
    """
    if not path.parent.is_dir():
        steps.make_dirs(path.parent)
    tmp = path.parent / f"{TEMP_PREFIX}{os.getpid()}-{secrets.token_hex(8)}{TEMP_SUFFIX}"
    steps.create_file(tmp, data, mode=default_mode(path) if mode is None else mode, mtime=mtime, mtime_ns=mtime_ns)
    try:
        steps.rename(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    steps.fsync_dir(path.parent)


def stale_temp(name: str, *, pid_alive: bool | None = None) -> bool:
    """Whether ``name`` is a temp file of ``atomic_write_bytes`` whose writer is gone: its PID
    is not a running process (``pid_alive`` overrides the check), or it has the old random
    name. Transaction temp files are not matched (the journal's recovery owns them)."""
    m = _PID_TEMP.fullmatch(name)
    if m is not None:
        alive = process_alive(int(m.group(1))) if pid_alive is None else pid_alive
        return not alive
    return _LEGACY_TEMP.fullmatch(name) is not None


def _umask() -> int:
    current = os.umask(0o022)
    os.umask(current)
    return current
