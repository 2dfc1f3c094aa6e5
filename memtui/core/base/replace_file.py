"""Replacing one of memtui's own state files (a cache, the import approvals) as a whole: readers
see the old file or the new one, never a part. For memory files, which must also be journaled and
undoable, see ``memtui.core.writes``."""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO


def replace_file(path: Path, write: Callable[[BinaryIO], object], *, prefix: str, fsync: bool = False) -> None:
    """Write ``path`` anew: ``write`` fills a temp file made in the same directory (created with
    its parents when missing; its name starts with ``prefix`` and ends in ``.tmp``), flushed and,
    with ``fsync``, synced to disk, then renamed over ``path``. On any error the temp file is
    removed and ``path`` is left as it was. Raises ``OSError`` (or what ``write`` raises)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=prefix, suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            write(fh)
            fh.flush()
            if fsync:
                os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
