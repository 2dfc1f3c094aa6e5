"""A directory's files and their bytes, for tests that check what a run left on disk."""

from __future__ import annotations

import os
from pathlib import Path


def file_bytes(root: Path, *, skip: tuple[str, ...] = ()) -> dict[str, bytes]:
    """Every regular file below ``root`` (links not followed) but those named in ``skip``, by
    its POSIX path relative to ``root``, with its bytes."""
    out = {}
    for dirpath, _dirs, files in os.walk(root):
        for name in files:
            p = Path(dirpath, name)
            if not p.is_symlink() and name not in skip:
                out[p.relative_to(root).as_posix()] = p.read_bytes()
    return out
