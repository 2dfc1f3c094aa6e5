"""The folders other than a memory dir whose changes memtui journals (a merge of two stores is
journaled in their common folder, a settings change in its file's folder), kept as a list in the
state dir so that every memtui start settles an interrupted change there too, and ``memtui
undo`` finds it.

Layout: ``<state>/journal-roots/<sha256 of the folder's path>``, each a small file holding the
folder's absolute path (UTF-8). Written before the first change in that folder; never removed
(a folder's journal outlives its changes). At most ``MAX_ROOTS`` are read.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from memtui.core.base.safe_read import read_regular
from memtui.core.writes.atomic import atomic_write_bytes

ROOTS_DIR = "journal-roots"
# memtui's bounds: folders read from the list, and the size of one entry.
MAX_ROOTS = 1000
_MAX_ENTRY = 8192


def register_root(state_dir: Path, root: Path) -> None:
    """Record ``root`` (made absolute, links resolved) as a folder with a journal. Raises
    ``OSError`` when the state dir cannot be written."""
    path = os.path.realpath(root)
    folder = state_dir / ROOTS_DIR
    folder.mkdir(parents=True, exist_ok=True)
    entry = folder / hashlib.sha256(path.encode("utf-8", "surrogateescape")).hexdigest()
    if not entry.exists():
        atomic_write_bytes(entry, path.encode("utf-8", "surrogateescape"))


def registered_roots(state_dir: Path) -> list[Path]:
    """The folders recorded by ``register_root``, in name order (at most ``MAX_ROOTS``; an
    unreadable entry is skipped)."""
    folder = state_dir / ROOTS_DIR
    try:
        names = sorted(os.listdir(folder))[:MAX_ROOTS]
    except OSError:
        return []
    out: list[Path] = []
    for name in names:
        try:
            data, _ = read_regular(folder / name, _MAX_ENTRY)
        except OSError:
            continue
        text = data.decode("utf-8", "surrogateescape")
        if "\0" not in text and (text.startswith("/") or (len(text) > 2 and text[1] == ":")):
            out.append(Path(text))
    return out
