"""Reading files that a repository or an agent controls, without hanging or exhausting memory.

A memory dir or a checked-out repository can hold a FIFO (``open`` blocks forever), a symlink
to ``/dev/zero`` (a read never ends) or a multi-gigabyte file. Every read of such a path goes
through ``read_regular`` (or ``read_head_regular``, ``read_text_regular``, ``open_regular``
for a stream): regular files only, and never more than a cap.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from typing import BinaryIO


# The cap on memtui's own small state files (cursors, proposals, approvals, run records): far
# above any real one, far below what would strain memory.
MAX_STATE_BYTES = 16 * 1024 * 1024


class NotRegularFileError(OSError):
    """The path is a FIFO, a device, a socket or a directory (following symlinks)."""


class FileTooLargeError(OSError):
    """The file is bigger than the cap the caller set."""


def read_regular(path: str | os.PathLike[str], max_bytes: int, *, dir_fd: int | None = None) -> tuple[bytes, os.stat_result]:
    """The bytes of the regular file at ``path`` and its ``stat`` result.

    Opens with ``O_NONBLOCK`` so that a FIFO cannot block, then checks the file type on the
    open descriptor (no race with a swap between check and open). ``dir_fd``: an open folder
    ``path`` is relative to. Raises ``NotRegularFileError``, ``FileTooLargeError`` (size over
    ``max_bytes``), or ``OSError``.
    """
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    fd = os.open(path, flags, dir_fd=dir_fd)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            kind = "a directory" if stat.S_ISDIR(st.st_mode) else "a FIFO" if stat.S_ISFIFO(st.st_mode) else "a device or socket"
            raise NotRegularFileError(errno.EINVAL, f"not a regular file ({kind})", str(path))
        if st.st_size > max_bytes:
            raise FileTooLargeError(errno.EFBIG, f"{st.st_size:,} bytes, over the {max_bytes:,}-byte limit", str(path))
        chunks: list[bytes] = []
        remaining = max_bytes + 1
        while remaining > 0:
            chunk = os.read(fd, min(remaining, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            remaining -= len(chunk)
        data = b"".join(chunks)
        if len(data) > max_bytes:  # grew while we read
            raise FileTooLargeError(errno.EFBIG, f"over the {max_bytes:,}-byte limit", str(path))
        return data, st
    finally:
        os.close(fd)


def read_head_regular(path: str | os.PathLike[str], max_bytes: int) -> tuple[bytes, os.stat_result]:
    """Up to ``max_bytes`` from the start of the regular file at ``path`` (never more), and its
    ``stat``. Raises ``NotRegularFileError`` or ``OSError``."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    fd = os.open(path, flags)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise NotRegularFileError(errno.EINVAL, "not a regular file", str(path))
        chunks: list[bytes] = []
        remaining = max_bytes
        got = 0
        while remaining > 0:
            chunk = os.read(fd, min(remaining, 1 << 16))
            if not chunk:
                break
            chunks.append(chunk)
            remaining -= len(chunk)
            got += len(chunk)
            if got >= st.st_size:  # the whole file as it was at open: no read just to see EOF
                break
        return b"".join(chunks), st
    finally:
        os.close(fd)


def open_regular(path: str | os.PathLike[str]) -> tuple[BinaryIO, os.stat_result]:
    """The regular file at ``path`` opened for reading in binary mode (blocking reads), and
    its ``stat``, for readers that stream a file too large to hold (a transcript). Opened with
    ``O_NONBLOCK`` (a FIFO cannot block the open), checked on the descriptor, then switched to
    blocking reads. Raises ``NotRegularFileError`` or ``OSError``; the caller closes it."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    fd = os.open(path, flags)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            kind = "a directory" if stat.S_ISDIR(st.st_mode) else "a FIFO" if stat.S_ISFIFO(st.st_mode) else "a device or socket"
            raise NotRegularFileError(errno.EINVAL, f"not a regular file ({kind})", str(path))
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        return os.fdopen(fd, "rb"), st
    except BaseException:
        os.close(fd)
        raise


def read_text_regular(path: str | os.PathLike[str], max_bytes: int, *, errors: str = "replace") -> str:
    """The regular file at ``path`` decoded as UTF-8 (``errors`` as for ``bytes.decode``),
    at most ``max_bytes``. Raises what ``read_regular`` raises."""
    return read_regular(path, max_bytes)[0].decode("utf-8", errors=errors)
