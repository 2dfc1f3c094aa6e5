"""Moving a stray store's memories into the store that is read, as one journaled change.

``plan_merge(src, dst)`` looks at every memory file of ``src`` (``.md`` files other than its
``MEMORY.md``, below it, links not followed) and decides, per file:

- ``move``: ``dst`` has no file of that name — it is created there with the same bytes;
- ``same``: ``dst`` has the same bytes under that name — nothing to copy;
- ``renamed``: ``dst`` has *different* bytes under that name — the file goes in as
  ``<stem>-2.md`` (the first free number), so both versions stay and doctor's duplicate and
  conflict checks can compare them.

``src``'s ``MEMORY.md`` lines that link a moved or renamed file (retargeted to the new name)
are added to ``dst``'s ``MEMORY.md``, under the heading of the memory's type when it has one
(``add_entries``); a line for a ``same`` file only when ``dst``'s index links no such file; a
moved file at the top of ``src`` that its index does not link gets a line made from its
``name`` and ``description`` (as a team import makes one). The files of ``src`` are removed
(not with ``copy``), and its ``MEMORY.md`` too when every line of it was carried over or is a
heading or blank; other files are left where they are.

A move is planned against the two stores' common folder (``merge_root``), a copy against
``dst`` alone, and applied through ``apply_plan`` — checked against what was read, journaled
with every before-image, written atomically, rolled back whole on failure — in the journal of
that folder: ``dst``'s own for a copy, else one ``memtui undo`` consults for changes that touch
its memory dir (``merge_journals``). Whatever the folder, every file written or deleted must lie
in one of the two stores, links resolved, and be no link itself.
"""

from __future__ import annotations

import os
import posixpath
import re
from urllib.parse import unquote
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Literal

from memtui.core.base.safe_read import read_regular
from memtui.core.memory.index import INDEX_NAME, IndexEntry, parse_entries
from memtui.core.writes.edits import FileChange, Plan, apply_plan, undo, undo_plan
from memtui.core.writes.index_edit import add_entries, entry_line, link_target, memory_type_of, title_and_hook
from memtui.core.writes.journal import Journal, JournalEntry
from memtui.core.writes.roots import register_root, registered_roots

# memtui's bounds: memory files in one store, and the largest file moved (a memory is a few KB).
MAX_FILES = 10_000
MAX_FILE_BYTES = 4 * 1024 * 1024


class MergeError(ValueError):
    """The merge cannot be planned: the reason, in words."""


@dataclass(frozen=True, slots=True)
class MergeItem:
    """One file of ``src``: ``relpath`` (POSIX, in ``src``), ``target`` (POSIX, in ``dst``; ``None``
    when left or removed), ``action`` and ``reason`` (for a file left where it is, or ``src``'s
    index removed)."""

    relpath: str
    target: str | None
    action: Literal["move", "same", "renamed", "left", "removed"]
    reason: str = ""


@dataclass(frozen=True, slots=True)
class MergePlan:
    """What a merge does: ``src``/``dst`` (absolute), ``root`` (the folder the plan's relpaths
    are relative to, and whose journal records it), ``plan`` (``Plan``), ``items``,
    ``index_lines`` (the lines added to ``dst``'s index) and ``copy`` (``src`` is kept)."""

    src: Path
    dst: Path
    root: Path
    plan: Plan
    items: tuple[MergeItem, ...]
    index_lines: tuple[str, ...]
    copy: bool


def merge_root(src: Path, dst: Path, home: Path) -> Path:
    """The deepest folder holding both stores. Raises ``MergeError`` when it is ``/``, the
    home folder or above it (a change contained only by the whole home folder is not one memtui
    makes)."""
    root = Path(os.path.commonpath([str(src), str(dst)]))
    home_real = Path(os.path.realpath(home))
    if root == Path(root.anchor) or root == home_real or root in home_real.parents:
        raise MergeError(f"{src} and {dst} share no folder below {home_real} one move can be journaled in; `--copy` copies the memories (then remove {src}'s files yourself)")
    return root


def move_root(src: Path, dst: Path, home: Path, state_dir: Path) -> Path | None:
    """The folder a move of ``src`` into ``dst`` is journaled in (``merge_root``), or ``None``
    when there is none: no common folder below the home folder, or one holding memtui's state
    dir (a journal is never kept inside the folder it records)."""
    src, dst = Path(os.path.realpath(src)), Path(os.path.realpath(dst))
    try:
        root = merge_root(src, dst, home)
        Journal(state_dir, root)
    except (MergeError, OSError):
        return None
    return root


def _read(path: Path) -> bytes | None:
    try:
        data, _ = read_regular(path, MAX_FILE_BYTES)
    except FileNotFoundError:
        return None
    return data


def _memory_files(src: Path) -> tuple[list[str], list[MergeItem]]:
    """The memory files of ``src`` (relpaths, sorted) and the files left, with why."""
    files: list[str] = []
    left: list[MergeItem] = []
    for dirpath, dirnames, filenames in os.walk(src):
        dirnames[:] = sorted(d for d in dirnames if not os.path.islink(os.path.join(dirpath, d)))
        for name in sorted(filenames):
            full = os.path.join(dirpath, name)
            rel = Path(os.path.relpath(full, src)).as_posix()
            if rel == INDEX_NAME:
                continue
            if os.path.islink(full):
                left.append(MergeItem(rel, None, "left", "a link"))
            elif not name.endswith(".md"):
                left.append(MergeItem(rel, None, "left", "not a memory file (.md)"))
            elif len(files) >= MAX_FILES:
                left.append(MergeItem(rel, None, "left", f"past the first {MAX_FILES:,} files"))
            else:
                files.append(rel)
    return files, left


def _free_name(rel: str, taken: set[str]) -> str:
    stem, ext = posixpath.splitext(rel)
    n = 2
    while f"{stem}-{n}{ext}" in taken:
        n += 1
    return f"{stem}-{n}{ext}"


def _retarget(line: str, entries: list[IndexEntry], renamed: dict[str, str]) -> str | None:
    """``line`` with the link of each renamed file pointing at its new name — the link itself,
    ``](target)`` or ``](<target>)`` as written, never the same name in a title or a hook — or
    ``None`` when a renamed file's link is not found so in the line."""
    for e in entries:
        new = renamed.get(e.relpath or "")
        if new is None:
            continue
        written = unquote(e.target)
        for old_form, new_form in ((f"](<{written}>", f"](<{new}>"), (f"]({e.target}", f"]({link_target(new, '')}")):
            m = re.search(re.escape(old_form) + r"(?=[)#\s])" if not old_form.endswith(">") else re.escape(old_form), line)
            if m:
                line = line[: m.start()] + new_form + line[m.end() :]
                break
        else:
            return None
    return line


def _inside_store(path: Path, src: Path, dst: Path) -> None:
    """Raise ``MergeError`` unless ``path`` (a file the merge writes or deletes) is no link and
    its folder, links resolved, is inside ``src`` or ``dst``: a merge touches the two stores
    and nothing else, whatever folder its journal is kept for."""
    if path.is_symlink():
        raise MergeError(f"{path} is a link; the merge does not write through it")
    folder = Path(os.path.realpath(path.parent))
    if not any(folder == store or store in folder.parents for store in (src, dst)):
        raise MergeError(f"{path} leads out of the two stores (through a link); nothing was merged")


def plan_merge(src: Path, dst: Path, *, home: Path, copy: bool = False) -> MergePlan:
    """The merge of store ``src`` into store ``dst`` (see the module docstring). Reads only.
    Raises ``MergeError`` (same store, one inside the other, ``src`` not a folder, nothing to
    merge, no common folder for a move, a name of ``dst`` that is a link or a folder, a file it
    would write or delete outside the two stores) or ``OSError`` (a file could not be read, or
    is over ``MAX_FILE_BYTES``)."""
    src = Path(os.path.realpath(src))
    dst = Path(os.path.realpath(dst))
    if src == dst:
        raise MergeError(f"{src} is the store it would be merged into")
    if src in dst.parents or dst in src.parents:
        raise MergeError(f"{src} and {dst}: one store is inside the other")
    if not src.is_dir():
        raise MergeError(f"{src} is not a folder")
    if dst.exists() and not dst.is_dir():
        raise MergeError(f"{dst} is not a folder")
    # a copy changes DST alone: it is DST's own change (its journal, its undo); a move changes
    # both stores, in the journal of their common folder
    root = dst if copy else merge_root(src, dst, home)
    files, left = _memory_files(src)
    if not files:
        raise MergeError(f"{src} holds no memory files to merge")

    def rel(path: Path) -> str:
        return Path(os.path.relpath(path, root)).as_posix()

    taken = set()
    if dst.is_dir():
        for dirpath, _dirs, names in os.walk(dst):
            taken.update(Path(os.path.relpath(os.path.join(dirpath, n), dst)).as_posix() for n in names)
    changes: list[FileChange] = []
    items: list[MergeItem] = []
    renamed: dict[str, str] = {}
    datas: dict[str, bytes] = {}
    for relpath in files:
        data = _read(src / relpath)
        if data is None:
            continue
        there = dst / relpath
        if os.path.isdir(there) and not os.path.islink(there):
            raise MergeError(f"{there} is a folder: {relpath} cannot come in under that name")
        if os.path.islink(there) or (os.path.lexists(there) and Path(os.path.realpath(there)) == Path(os.path.realpath(src / relpath))):
            raise MergeError(f"{there} is a link (to {os.path.realpath(there)}); the merge does not compare or write through it")
        datas[relpath] = data
        existing = _read(dst / relpath) if relpath in taken else None
        if existing is None and relpath not in taken:
            target, action = relpath, "move"
        elif existing == data:
            target, action = relpath, "same"
        else:
            target, action = _free_name(relpath, taken), "renamed"
            renamed[relpath] = target
        taken.add(target)
        items.append(MergeItem(relpath, target, action))  # type: ignore[arg-type]
        if action != "same":
            changes.append(FileChange(rel(dst / target), None, data))
        if not copy:
            changes.append(FileChange(rel(src / relpath), data, None))
    src_index = _read(src / INDEX_NAME)
    dst_index = _read(dst / INDEX_NAME)
    # surrogateescape: bytes that are not UTF-8 come back as they were
    dst_text = (dst_index or b"").decode("utf-8", "surrogateescape")
    dst_links = {e.relpath for e in parse_entries(dst_text)} if dst_text else set()
    added: list[tuple[str | None, str]] = []
    carried_all = True
    carried: set[str] = set()  # the merged files a carried line links
    if src_index is not None:
        src_text = src_index.decode("utf-8", "surrogateescape").removeprefix("\ufeff")
        entries: dict[int, list[IndexEntry]] = {}
        for e in parse_entries(src_text):
            entries.setdefault(e.line, []).append(e)
        by_item = {i.relpath: i for i in items}
        for n, row in enumerate(src_text.split("\n"), start=1):
            line = row.rstrip("\r")
            found = entries.get(n)
            if not found:
                if line.strip() and not line.lstrip().startswith("#"):
                    carried_all = False
                continue
            if any(e.relpath is None or e.relpath not in by_item for e in found):
                carried_all = False
                continue
            item = by_item[found[0].relpath]  # type: ignore[index]
            if item.action == "same" and item.target in dst_links:
                continue
            retargeted = _retarget(line, found, renamed)
            if retargeted is None:
                carried_all = False  # SRC's index keeps the line; the file gets a line of its own below
                continue
            added.append((memory_type_of(datas[item.relpath].decode("utf-8", "replace")), retargeted))
            carried.update(e.relpath for e in found if e.relpath is not None)
        if not copy and carried_all:
            changes.append(FileChange(rel(src / INDEX_NAME), src_index, None))
            left.append(MergeItem(INDEX_NAME, None, "removed", "every line of it is carried over, or a heading"))
    for item in items:  # a merged memory no carried line links comes in with a line of its own
        if item.action == "same" or item.relpath in carried or posixpath.dirname(item.relpath) != "":
            continue
        text = datas[item.relpath].decode("utf-8", "replace")
        title, hook = title_and_hook(text, item.target or item.relpath)
        added.append((memory_type_of(text), entry_line(title, item.target or item.relpath, hook)))
    if added:
        new_index = add_entries(dst_text, added).encode("utf-8", "surrogateescape")
        changes.append(FileChange(rel(dst / INDEX_NAME), dst_index, new_index))
    if src_index is not None and not carried_all:
        left.append(MergeItem(INDEX_NAME, None, "left", "it holds lines that are not index entries of merged files"))
    if not changes:
        raise MergeError(f"every memory of {src} is already in {dst}")
    for change in changes:
        _inside_store(root / change.relpath, src, dst)
    verb = "Copy" if copy else "Move"
    plan = Plan(f"{verb} the memories of {src} into {dst}", tuple(changes), action="merge")
    return MergePlan(src, dst, root, plan, tuple(items + left), tuple(line for _, line in added), copy)


def apply_merge(merge: MergePlan, state_dir: Path, now: datetime) -> JournalEntry:
    """Apply ``merge`` as one transaction in the journal of ``merge.root`` (``apply_plan``'s
    errors: ``ConflictError``, ``ApplyError``, ``OSError``)."""
    journal = Journal(state_dir, merge.root)
    register_root(state_dir, merge.root)  # every start settles it, `memtui undo` finds it
    meta = {"src": str(merge.src), "dst": str(merge.dst), "copy": merge.copy}
    return apply_plan(merge.root, merge.plan, journal, now, meta=meta)


def merge_journals(state_dir: Path, memory_dir: Path) -> list[tuple[Path, Journal]]:
    """The journals of the folders merges were journaled in (``register_root``) that hold an
    entry, each with its folder (``memory_dir``'s own excluded)."""
    out: list[tuple[Path, Journal]] = []
    memory_dir = Path(os.path.realpath(memory_dir))
    for folder in registered_roots(state_dir):
        if folder == memory_dir:
            continue
        try:
            journal = Journal(state_dir, folder)
        except (OSError, ValueError):  # the state dir is inside this folder; a bad entry
            continue
        if journal.base.is_dir():
            out.append((folder, journal))
    return out


def touches(entry: JournalEntry, root: Path, memory_dir: Path) -> bool:
    """Whether a merge ``entry`` of the journal of ``root`` merged into or out of
    ``memory_dir`` (its recorded source or destination), or changed a file in it."""
    if entry.action != "merge":
        return False
    here = os.path.realpath(memory_dir)
    meta = entry.meta if isinstance(entry.meta, dict) else {}
    if here in (meta.get("src"), meta.get("dst")):
        return True
    inside = Path(os.path.relpath(here, root)).as_posix().rstrip("/") + "/"
    return any(c.relpath.startswith(inside) for c in entry.changes)


def undo_merge(root: Path, journal: Journal, now: datetime, entry_id: str | None = None) -> JournalEntry:
    """Revert a merge (``edits.undo`` in the journal of ``root``), then remove the folders the
    merge created (a store that did not exist) when they are left empty. The folders go after
    the transaction: a crash in between leaves an empty folder, which Claude Code reads as no
    store."""
    plan = undo_plan(root, journal, entry_id)
    entry = undo(root, journal, now, plan.undoes)
    try:
        created = journal.load(plan.undoes).dirs if plan.undoes else []
    except (OSError, ValueError):
        created = []
    for rel in reversed(created):
        try:
            os.rmdir(root / rel)
        except OSError:
            pass  # not empty (someone wrote there since), or already gone: kept
    return entry


def undo_candidates(state_dir: Path, memory_dir: Path, home: Path, settings_files: list[Path]) -> list[tuple[Path, Journal, JournalEntry]]:
    """The changes ``memtui undo`` can revert for ``memory_dir``, newest first, each with the
    folder its journal records and that journal: the memory dir's own changes, the store merges
    into or out of it (``merge_journals``) and the settings changed in ``settings_files``'
    folders (``memtui stores setting``)."""
    from memtui.core.stores.settings_fix import settings_journals
    from memtui.core.writes.edits import undoable_entries

    journal = Journal(state_dir, memory_dir)
    out = [(memory_dir, journal, e) for e in undoable_entries(journal)]
    for folder, other in merge_journals(state_dir, memory_dir):
        out.extend((folder, other, e) for e in undoable_entries(other) if touches(e, folder, memory_dir))
    for folder, other in settings_journals(state_dir, settings_files):
        out.extend((folder, other, e) for e in undoable_entries(other) if e.action == "setting")
    unique = {(str(folder), e.id): (folder, j, e) for folder, j, e in out}
    return sorted(unique.values(), key=lambda c: c[2].time, reverse=True)


def undo_candidate(root: Path, journal: Journal, entry: JournalEntry, memory_dir: Path, now: datetime) -> JournalEntry:
    """Revert one of ``undo_candidates``: a merge with ``undo_merge`` (the folder it created
    goes too), anything else with ``edits.undo``."""
    if root != memory_dir and entry.action == "merge":
        return undo_merge(root, journal, now, entry.id)
    return undo(root, journal, now, entry.id)
