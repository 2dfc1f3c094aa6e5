"""Atomic file writes (SPEC §10): a temp file in the same directory, fsync, ``os.replace``.

A reader never sees a half-written file, and a failure at any point leaves the original
intact and no temp file behind.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path


def atomic_write_bytes(path: Path, data: bytes, *, mode: int | None = None) -> None:
    """Replace ``path`` with ``data`` atomically, creating parent directories.

    ``mode``: permission bits to give the file (default: those of the file being replaced, else
    0o666 less the umask, as a plain ``open`` would). The temp file's name does not derive from
    ``path``, so a long legitimate name never overflows NAME_MAX. Raises ``OSError`` (the
    original, if any, is untouched and the temp file removed).
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    if mode is None:
        try:
            mode = os.stat(path).st_mode & 0o777
        except FileNotFoundError:
            mode = 0o666 & ~_umask()
    fd, tmp_name = tempfile.mkstemp(prefix=".memtui-", suffix=".tmp", dir=path.parent)
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
    _fsync_dir(path.parent)


def _umask() -> int:
    current = os.umask(0o022)
    os.umask(current)
    return current


def _fsync_dir(directory: Path) -> None:
    """Make a rename durable (POSIX); a no-op where directories cannot be opened."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
