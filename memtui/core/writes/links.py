"""Memories (and indexes) that are symlinks, and the links a user confirmed memtui may write
through.

People keep memory files in a dotfiles repository and link them into the memory dir. memtui
writes a memory that is a link at the link's target: always when the target is inside the
memory dir (the link stays a link), and when it leads outside only after the user confirmed
*that* link to *that* target (``memtui links confirm RELPATH``). A confirmation is stored in the
memory dir's state folder (``links.json``: relpath → the target's real path at confirmation);
a link re-pointed since is refused again until confirmed anew.
"""

from __future__ import annotations

import errno
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from memtui.core.base.safe_read import read_regular
from memtui.core.memory.index import INDEX_NAME
from memtui.core.memory.memories import MAX_MEMORY_BYTES, TEAM_DIR, Memory, iter_memory_files
from memtui.core.writes.atomic import atomic_write_bytes
from memtui.core.writes.contained import ContainmentError, check_target

__all__ = ["LinkedMemory", "confirm_link", "confirmed_links", "forget_link", "edit_refusal", "linked_memories", "write_refusal"]

LINKS_FILE = "links.json"
# links.json holds one entry per confirmed link: far below this.
_MAX_LINKS_BYTES = 4 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class LinkedMemory:
    """A memory file that is a symlink: ``relpath`` (POSIX, in the memory dir), ``target`` (its
    real path, or what the link says when it leads nowhere), ``inside`` (the target is in the
    memory dir), ``exists`` (the target is there), ``confirmed`` (the user confirmed writing
    through it to this very target)."""

    relpath: str
    target: str
    inside: bool
    exists: bool
    confirmed: bool

    @property
    def writable(self) -> bool:
        """memtui writes through it: the target exists, inside the memory dir or confirmed."""
        return self.exists and (self.inside or self.confirmed)

    def to_json(self) -> dict[str, object]:
        """The CLI's ``--json`` shape."""
        return {"relpath": self.relpath, "target": self.target, "inside": self.inside, "exists": self.exists, "confirmed": self.confirmed, "writable": self.writable}


def confirmed_links(state: Path) -> dict[str, str]:
    """The confirmed links of one memory dir (``state``: its state folder, ``Journal.base``):
    relpath → real target path. A missing or damaged file is no confirmation."""
    try:
        data = json.loads(read_regular(state / LINKS_FILE, _MAX_LINKS_BYTES)[0])
    except (OSError, ValueError, RecursionError):
        return {}
    links = data.get("links") if isinstance(data, dict) else None
    if not isinstance(links, dict):
        return {}
    return {k: v for k, v in links.items() if isinstance(k, str) and isinstance(v, str)}


def _iter_links(memory_dir: Path) -> Iterator[tuple[str, Path]]:
    """The memory files and indexes (``MEMORY.md``, ``team/MEMORY.md``) that are symlinks."""
    for rel in (INDEX_NAME, f"{TEAM_DIR}/{INDEX_NAME}"):
        if os.path.islink(memory_dir / rel):
            yield rel, memory_dir / rel
    for path, rel in iter_memory_files(memory_dir):
        if os.path.islink(path):
            yield rel, Path(path)


def linked_memories(memory_dir: Path, state: Path) -> list[LinkedMemory]:
    """Every index and memory file of ``memory_dir`` that is a symlink, indexes first, then in
    the scan's order."""
    root = Path(os.path.realpath(memory_dir))
    confirmed = confirmed_links(state)
    out: list[LinkedMemory] = []
    for rel, path in _iter_links(memory_dir):
        try:
            target = os.path.realpath(path, strict=True)
            exists = True
        except OSError:
            target = os.readlink(path) if os.path.islink(path) else str(path)
            exists = False
        inside = exists and root in Path(target).parents
        out.append(LinkedMemory(rel, target, inside, exists, confirmed.get(rel) == target))
    return out


def _save(state: Path, links: dict[str, str]) -> None:
    body = json.dumps({"links": dict(sorted(links.items()))}, ensure_ascii=False, indent=1).encode("utf-8")
    atomic_write_bytes(state / LINKS_FILE, body, mode=0o600)


def confirm_link(memory_dir: Path, state: Path, relpath: str) -> LinkedMemory:
    """Record that memtui may write the memory ``relpath`` (a link) at its current target.
    Raises ``ValueError`` when ``relpath`` is not a memory that is a link to an existing file,
    ``OSError`` when the state folder cannot be written."""
    found = next((m for m in linked_memories(memory_dir, state) if m.relpath == relpath), None)
    if found is None:
        path = memory_dir / relpath
        if os.path.islink(path) and os.path.isdir(path):
            raise ValueError(f"{relpath} is a linked folder: memtui never writes through a folder link (the agent does not read memories in it either)")
        if os.path.isabs(relpath) or relpath.startswith("../"):
            raise ValueError(f"{relpath}: name the memory by its path inside {memory_dir} (as `memtui links` lists it)")
        if os.path.islink(path):
            raise ValueError(f"{relpath} is a link, but not a memory file (a name ending in .md) or an index")
        if os.path.lexists(path):
            raise ValueError(f"{relpath} is not a symlink: memtui writes it as it is, nothing to confirm")
        raise ValueError(f"{relpath} does not exist in {memory_dir}")
    if not found.exists:
        try:
            os.path.realpath(memory_dir / relpath, strict=True)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise ValueError(f"{relpath} is part of a symlink loop: it leads to no file") from exc
        raise ValueError(f"{relpath} is a link to {found.target}, which does not exist")
    if not os.path.isfile(found.target):
        raise ValueError(f"{relpath} is a link to {found.target}, which is not a file")
    links = confirmed_links(state)
    links[relpath] = found.target
    _save(state, links)
    return LinkedMemory(found.relpath, found.target, found.inside, True, True)


def forget_link(state: Path, relpath: str) -> bool:
    """Withdraw the confirmation of ``relpath``; ``False`` when there was none. Raises
    ``OSError``."""
    links = confirmed_links(state)
    if links.pop(relpath, None) is None:
        return False
    _save(state, links)
    return True


def edit_refusal(memory_dir: Path, state: Path, memory: Memory) -> str | None:
    """Why memtui will not rewrite ``memory`` from its text (read only in part: over the read
    cap, or unreadable; bytes that are not UTF-8, which a text editor would replace; or
    ``write_refusal``), or ``None``: for saying so before an editor opens, so that no typing is
    lost. The reason is a sentence about the file (``"it is not valid UTF-8 text …"``), to
    follow its relpath. Never raises ``OSError`` for a file it cannot read again (the scan's
    diagnostic is used instead); ``write_refusal`` may raise ``OSError`` for the state dir."""
    if memory.sha256 == "":
        return next((d.message for d in memory.diagnostics if d.code in ("too-large", "unreadable")), "memtui could not read it whole")
    not_utf8 = next((d for d in memory.diagnostics if d.code == "not-utf8"), None)
    if not_utf8 is not None:
        return _not_utf8_refusal(memory, not_utf8.line)
    return write_refusal(memory_dir, state, memory.relpath)


def _not_utf8_refusal(memory: Memory, line: int | None) -> str:
    """The refusal for a memory the scan found bytes that are not UTF-8 in: the first such byte
    and its line (1-based), read from the file now; ``line`` (the scan's) when it cannot be."""
    where = f"at line {line}" if line else ""
    try:
        data, _st = read_regular(memory.path, MAX_MEMORY_BYTES)
        data.decode("utf-8")
    except OSError:
        pass
    except UnicodeDecodeError as exc:
        first_line = data.count(b"\n", 0, exc.start) + 1
        where = f"byte 0x{data[exc.start]:02X} at line {first_line}"
    return (
        f"it is not valid UTF-8 text{f' ({where})' if where else ''}; memtui will not edit it, to keep its bytes. "
        "Convert it to UTF-8 first, e.g. iconv -f latin1 -t utf-8."
    )


def write_refusal(memory_dir: Path, state: Path, relpath: str) -> str | None:
    """Why a write of the memory ``relpath`` would be refused now (a link or a linked folder
    leading outside the memory dir, not confirmed; a link to nothing), or ``None``: for saying
    so before the user starts an edit."""
    try:
        check_target(memory_dir, relpath, confirmed=confirmed_links(state))
    except ContainmentError as exc:
        return exc.reason
    return None
