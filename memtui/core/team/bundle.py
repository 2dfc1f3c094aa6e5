"""Team memory import: a sync server's bundle ``{key: content}`` into ``<memory dir>/team/``.

The reference agent keeps shared memory in ``<memory dir>/team/`` and syncs it as a flat map of
keys (relative paths) to file contents (chapter 17.9, docs/behaviour.md §4.5). A key is attacker-controlled
input (``../../.ssh/authorized_keys``), so every key goes through
:func:`memtui.core.writes.safepath.validate_team_key`; every content through the reference's
250,000-byte per-file limit and a secret scan (:mod:`memtui.core.memory.secretscan`).

Rejected entries do not stop the others: they are reported with a code and a reason. Every
entry is validated before the first write; the accepted changes are then written as ONE change
through memtui's single write path (:func:`memtui.core.writes.edits.apply_plan`): new and changed files
plus ``team/MEMORY.md`` with a line for each new memory (docs/behaviour.md §4.4: the index is updated in the
same transaction). That path checks nothing changed on disk since the import looked, journals
the before-images, writes each file atomically and, if a write fails midway, restores every file
and raises — the import becomes :class:`TeamWriteError` and nothing is partially imported
(folders the import created are removed too). A successful import is a journal entry like any
edit, so ``memtui undo`` reverts it.

An import only adds and updates: local team files the bundle does not name are left alone.
"""

from __future__ import annotations

import json
import os
import posixpath
import stat
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from memtui.core.base.safe_read import read_regular
from memtui.core.writes.edits import ApplyError, ConflictError, FileChange, Plan, apply_plan
from memtui.core.memory.frontmatter import parse_frontmatter
from memtui.core.memory.index import INDEX_NAME, IndexEntry, linked_relpaths, pushed_past_cap
from memtui.core.writes.index_edit import add_entries, entry_line, memory_type_of, title_and_hook
from memtui.core.writes.journal import Journal, read_or_none
from memtui.core.memory.memories import TEAM_DIR
from memtui.core.writes.contained import ContainmentError, check_target
from memtui.core.writes.safepath import UnsafePathError, validate_team_key
from memtui.core.memory.secretscan import find_secrets

__all__ = [
    "MAX_TEAM_FILE_BYTES",
    "AcceptedFile",
    "BundleError",
    "ImportReport",
    "RejectedKey",
    "TeamImportError",
    "TeamWriteError",
    "import_bundle",
    "load_bundle",
]

MAX_TEAM_FILE_BYTES = 250_000
"""Largest team file, in UTF-8 bytes, that an import accepts: the reference agent's per-file
limit for team memory sync (a file of exactly 250,000 bytes passes)."""

MAX_BUNDLE_BYTES = 256 * 1024 * 1024
"""Largest bundle file read (memtui's choice: a thousand team files at the per-file limit,
JSON-escaped); a bigger one, a FIFO or a device is refused (``unreadable``)."""

Status = Literal["created", "updated", "unchanged"]


class TeamImportError(Exception):
    """An import that did nothing: ``code`` is stable, ``reason`` a sentence."""

    def __init__(self, code: str, reason: str) -> None:
        super().__init__(reason)
        self.code = code
        self.reason = reason


class BundleError(TeamImportError, ValueError):
    """The bundle file is unreadable, not JSON, or not a JSON object. Codes: ``unreadable``,
    ``bad-json``, ``not-an-object``."""


class TeamWriteError(TeamImportError):
    """A write failed midway (``code`` ``write-failed``) and the write path rolled the import
    back. ``key``: the entry whose write failed, when the error names it (``None`` otherwise,
    e.g. a disk full mid-write or the team index failing); ``restore_failures``: the paths still
    not as before the import (empty: the team dir is exactly as it was)."""

    def __init__(self, key: str | None, cause: OSError, restore_failures: list[str]) -> None:
        what = cause.strerror or str(cause)
        if restore_failures:
            after = "could not restore: " + ", ".join(restore_failures)
        else:
            after = "the team dir was restored; nothing was imported"
        if key is not None:
            head = f"writing team key {key!r} failed ({what})"
        else:
            where = f": {cause.filename}" if cause.filename else ""
            head = f"the team import failed ({what}{where})"
        super().__init__("write-failed", f"{head}; {after}")
        self.key = key
        self.cause = cause
        self.restore_failures = restore_failures


@dataclass(frozen=True, slots=True)
class AcceptedFile:
    """An entry that passed every check. ``path`` is where it is (or would be) written, symlinks
    expanded; ``bytes`` the UTF-8 size of the content; ``status`` ``created``, ``updated`` or
    ``unchanged`` (same bytes already on disk: not rewritten)."""

    key: str
    path: Path
    bytes: int
    status: Status


@dataclass(frozen=True, slots=True)
class RejectedKey:
    """An entry that was not written. ``code``: one of :class:`UnsafePathError`'s codes, or
    ``not-a-string``, ``invalid-unicode``, ``too-large``, ``likely-secret``, ``is-directory``,
    ``not-a-regular-file``, ``unreadable``, ``duplicate-target``, ``file-and-folder``."""

    key: str
    code: str
    reason: str


@dataclass(frozen=True, slots=True)
class ImportReport:
    """What an import did (or, with ``dry_run``, would do), entries in bundle order.
    ``journal_entry``: the id ``memtui undo`` reverts (``None``: nothing was written);
    ``index_overflow``: entries of ``team/MEMORY.md`` the new lines push past the agent's cap."""

    team_dir: Path
    dry_run: bool
    accepted: tuple[AcceptedFile, ...]
    rejected: tuple[RejectedKey, ...]
    journal_entry: str | None = None
    index_overflow: tuple[IndexEntry, ...] = ()

    def to_json(self) -> dict[str, Any]:
        """``{team_dir, dry_run, accepted: [{key, path, bytes, status}], rejected: [{key, code,
        reason}]}`` with paths as strings."""
        return {
            "team_dir": str(self.team_dir),
            "dry_run": self.dry_run,
            "accepted": [
                {"key": a.key, "path": str(a.path), "bytes": a.bytes, "status": a.status} for a in self.accepted
            ],
            "rejected": [{"key": r.key, "code": r.code, "reason": r.reason} for r in self.rejected],
        }


def load_bundle(path: Path) -> dict[str, object]:
    """Read a bundle file: a JSON object ``{key: content}`` (UTF-8; a BOM is tolerated).

    Values are returned as parsed (strings, or anything else for :func:`import_bundle` to
    reject). A key given twice at the top level is refused, since JSON would silently keep
    the last one. Raises :class:`BundleError`.
    """
    try:
        raw = read_regular(path, MAX_BUNDLE_BYTES)[0]
    except OSError as exc:
        raise BundleError("unreadable", f"cannot read {path}: {exc.strerror or exc}") from exc
    try:
        parsed = json.loads(raw, object_pairs_hook=_Pairs)
    except (ValueError, RecursionError) as exc:
        raise BundleError("bad-json", f"{path} is not valid JSON: {exc}") from exc
    if not isinstance(parsed, _Pairs):
        kind = _json_kind(parsed)
        raise BundleError("not-an-object", f"{path} holds {kind}, not a JSON object {{key: content}}")
    bundle: dict[str, object] = {}
    for key, value in parsed:
        if key in bundle:
            raise BundleError("bad-json", f"{path} gives the key {key!r} twice")
        bundle[key] = value
    return bundle


def import_bundle(
    bundle: Mapping[str, object],
    memory_dir: Path,
    *,
    state_dir: Path,
    now: datetime,
    dry_run: bool = False,
) -> ImportReport:
    """Import ``bundle`` (``{key: content}``, contents as ``str``) into ``memory_dir/team/``.

    Each entry is checked, in bundle order: the key with :func:`validate_team_key` (docs/behaviour.md §9);
    the content is a string, encodable as UTF-8, at most :data:`MAX_TEAM_FILE_BYTES` bytes, and
    free of likely secrets; the target is not a directory or a special file; no two keys name
    the same file, and no key is both a file and a folder of another. Only then is anything
    written, as one journaled change (``state_dir``: memtui's state dir; ``now``: its time):
    new and changed files, and ``team/MEMORY.md`` with a line for each new memory (``*.md``)
    it does not link yet — unless the bundle brings the team index itself. Unchanged files are
    not rewritten. ``memory_dir`` must exist; ``team/`` and sub-folders are created as needed.
    With ``dry_run`` nothing is written and the report says what would be.

    Raises :class:`TeamImportError` (``no-memory-dir``; ``index-unreadable``; ``conflict``: a
    file changed while the import ran, nothing written; ``journal-failed``: memtui's journal
    could not be written, nothing written) or :class:`TeamWriteError` (a write failed;
    everything already written was restored).
    """
    if not memory_dir.is_dir():
        raise TeamImportError("no-memory-dir", f"no memory dir at {memory_dir}")
    team_dir = memory_dir / TEAM_DIR
    candidates: list[_Planned] = []
    rejected: dict[int, RejectedKey] = {}
    for position, (key, content) in enumerate(bundle.items()):
        outcome = _check(key, content, team_dir)
        if isinstance(outcome, RejectedKey):
            rejected[position] = outcome
        else:
            outcome.position = position
            candidates.append(outcome)
    for position, rejection in _conflicts(candidates).items():
        rejected[position] = rejection
    planned = [p for p in candidates if p.position not in rejected]
    accepted = tuple(AcceptedFile(p.key, Path(p.path), len(p.data), p.status) for p in planned)
    refused = tuple(rejected[k] for k in sorted(rejected))
    changed = [p for p in planned if p.status != "unchanged"]
    if dry_run or not changed:
        return ImportReport(team_dir, dry_run, accepted, refused)
    plan = _plan(memory_dir, team_dir, changed, planned)
    entry_id = _apply(memory_dir, state_dir, now, plan, changed)
    return ImportReport(team_dir, dry_run, accepted, refused, entry_id, plan.index_overflow)


class _Pairs(list[tuple[str, Any]]):
    """A JSON object as parsed, pairs in order (duplicates kept, so they can be refused)."""


@dataclass(slots=True)
class _Planned:
    """An entry that passed the per-entry checks: ``path`` the real target, ``before`` its bytes
    now (``None``: it does not exist)."""

    key: str
    path: str
    data: bytes
    status: Status
    before: bytes | None
    position: int = field(default=-1)


def _check(key: object, content: object, team_dir: Path) -> _Planned | RejectedKey:
    """Every per-entry check, first failure wins; reads the existing file for the before-image."""
    if not isinstance(key, str):
        return RejectedKey(str(key), "not-a-string", f"the key is {_json_kind(key)}, not a string")
    try:
        target = str(validate_team_key(key, team_dir))
        # where the name leads from the memory dir itself: ``team/`` may be the link out
        check_target(team_dir.parent, posixpath.normpath(f"{team_dir.name}/{key}"))
    except UnsafePathError as exc:
        return RejectedKey(key, exc.code, exc.reason)
    except ContainmentError as exc:
        if exc.code != "not-a-file":  # a folder of that name: reported as `is-directory` below
            return RejectedKey(key, exc.code, exc.reason)
    if key.endswith("/"):
        return RejectedKey(key, "is-directory", "it ends with '/': it names a folder, not a file")
    if not isinstance(content, str):
        return RejectedKey(key, "not-a-string", f"its content is {_json_kind(content)}, not a string")
    try:
        data = content.encode("utf-8")
    except UnicodeEncodeError as exc:
        return RejectedKey(
            key, "invalid-unicode", f"its content is not valid Unicode (a lone surrogate at character {exc.start})"
        )
    if len(data) > MAX_TEAM_FILE_BYTES:
        return RejectedKey(
            key,
            "too-large",
            f"its content is {len(data):,} bytes (UTF-8); the reference agent's limit for a team file is "
            f"{MAX_TEAM_FILE_BYTES:,}",
        )
    found = find_secrets(content)
    if found:
        listed = ", ".join(f.describe() for f in found[:3]) + (f" and {len(found) - 3} more" if len(found) > 3 else "")
        return RejectedKey(
            key, "likely-secret", f"it looks like it holds a secret: {listed}; team memory is shared with everyone"
        )
    try:
        st = os.stat(target)
    except FileNotFoundError:
        return _Planned(key, target, data, "created", None)
    except OSError as exc:
        return RejectedKey(key, "unreadable", f"the existing {target} cannot be examined: {exc.strerror or exc}")
    if stat.S_ISDIR(st.st_mode):
        return RejectedKey(key, "is-directory", f"{target} is a folder, not a file")
    if not stat.S_ISREG(st.st_mode):
        return RejectedKey(key, "not-a-regular-file", f"{target} is not a regular file (a device, pipe or socket)")
    try:
        existing = read_regular(target, MAX_TEAM_FILE_BYTES * 64)[0]
    except OSError as exc:
        return RejectedKey(
            key, "unreadable", f"the existing {target} cannot be read, so it could not be restored: {exc.strerror or exc}"
        )
    return _Planned(key, target, data, "unchanged" if existing == data else "updated", existing)


def _conflicts(planned: list[_Planned]) -> dict[int, RejectedKey]:
    """Entries that cannot all be written: two keys naming one file (``a.md``, ``./a.md``, or a
    symlink and its target), or one key's file being a folder on another key's path."""
    by_path: dict[str, list[_Planned]] = {}
    for p in planned:
        by_path.setdefault(p.path, []).append(p)
    out: dict[int, RejectedKey] = {}
    for group in by_path.values():
        if len(group) > 1:
            names = ", ".join(repr(p.key) for p in group)
            for p in group:
                out[p.position] = RejectedKey(
                    p.key, "duplicate-target", f"the keys {names} all name the file {p.path}; which one wins is unclear"
                )
    for p in planned:
        parent = os.path.dirname(p.path)
        while parent != os.path.dirname(parent):
            for other in by_path.get(parent, ()):
                for q in (p, other):
                    out.setdefault(
                        q.position,
                        RejectedKey(
                            q.key,
                            "file-and-folder",
                            f"{other.key!r} is a file in this bundle but {p.key!r} needs it to be a folder",
                        ),
                    )
            parent = os.path.dirname(parent)
    return out


def _relpath(path: str, team_dir: Path, real_team_dir: str | None = None) -> str:
    """``team/<path inside the team dir>`` for the write path (the real target: a symlink inside
    the team dir is written through, never replaced by a copy). ``real_team_dir``: the team
    dir with its links resolved, when the caller has it."""
    inside = Path(os.path.relpath(path, real_team_dir or os.path.realpath(team_dir))).as_posix()
    return f"{TEAM_DIR}/{inside}"


def _plan(memory_dir: Path, team_dir: Path, changed: list[_Planned], planned: list[_Planned]) -> Plan:
    """One plan: every new or changed file (bundle order), then the team index with a line for
    each new memory it does not link yet, all added in one edit of its text (``add_entries``).
    Raises :class:`TeamImportError` (``index-unreadable``)."""
    real_team_dir = os.path.realpath(team_dir)
    rel_of = {p.path: _relpath(p.path, team_dir, real_team_dir) for p in planned}
    changes = [FileChange(rel_of[p.path], p.before, p.data) for p in changed]
    index_rel = f"{TEAM_DIR}/{INDEX_NAME}"
    overflow: list[IndexEntry] = []
    notes: list[str] = []
    if index_rel not in rel_of.values():  # else the bundle's index wins
        try:
            before = read_or_none(memory_dir / index_rel)
        except OSError as exc:
            raise TeamImportError(
                "index-unreadable", f"the team index {memory_dir / index_rel} cannot be read: {exc.strerror or exc}"
            ) from exc
        text = (before or b"").decode("utf-8", errors="surrogateescape")
        linked = linked_relpaths(text, {rel_of[p.path] for p in changed}, TEAM_DIR)
        items: list[tuple[str | None, str]] = []
        for p in changed:
            rel = rel_of[p.path]
            if p.status != "created" or not rel.endswith(".md") or Path(rel).name == INDEX_NAME or rel in linked:
                continue
            text_of_file = p.data.decode("utf-8")
            title, hook = title_and_hook(text_of_file, rel)
            items.append((memory_type_of(text_of_file), entry_line(title, rel, hook, TEAM_DIR)))
            linked.add(rel)
        if items:
            new_text = add_entries(text, items)
            after = new_text.encode("utf-8", errors="surrogateescape")
            changes.append(FileChange(index_rel, before, after))
            overflow = pushed_past_cap(before, after, [line for _, line in items], TEAM_DIR)
            notes.append(f"added {len(items)} line{'' if len(items) == 1 else 's'} to {index_rel}")
    n = len(changed)
    return Plan(
        f"Team import: {n} file{'' if n == 1 else 's'}",
        tuple(changes),
        tuple(overflow),
        tuple(notes),
        action="team-import",
    )


def _apply(memory_dir: Path, state_dir: Path, now: datetime, plan: Plan, changed: list[_Planned]) -> str:
    """Apply ``plan`` through the write path; returns the journal entry id. On a failed write,
    checks the rollback and removes the folders the import created, then raises
    :class:`TeamWriteError`."""
    new_dirs = _missing_dirs(memory_dir, plan)
    try:
        return apply_plan(memory_dir, plan, Journal(state_dir, memory_dir), now).id
    except ApplyError as exc:
        cause = exc.__cause__ if isinstance(exc.__cause__, OSError) else exc
        failures = _not_restored(memory_dir, plan) + _remove_dirs(new_dirs)
        team_dir = memory_dir / TEAM_DIR
        key = next((p.key for p in changed if _relpath(p.path, team_dir) == exc.relpath), None)
        raise TeamWriteError(key if key is not None else _failed_key(cause, changed), cause, failures) from exc
    except ConflictError as exc:
        raise TeamImportError("conflict", f"{exc}; run the import again") from exc
    except OSError as exc:  # the journal (or its lock) in the state dir: nothing was touched
        where = f" ({exc.filename})" if exc.filename else ""
        raise TeamImportError(
            "journal-failed", f"memtui's journal could not be written{where}: {exc.strerror or exc}; nothing was imported"
        ) from exc


def _missing_dirs(memory_dir: Path, plan: Plan) -> list[str]:
    """Folders the plan's writes would create (``team/`` included), outermost first."""
    out: dict[str, None] = {}  # ordered, each folder once
    for change in plan.changes:
        parts = change.relpath.split("/")[:-1]
        for n in range(1, len(parts) + 1):
            directory = os.path.join(memory_dir, *parts[:n])
            if directory not in out and not os.path.lexists(directory):
                out[directory] = None
    return list(out)


def _not_restored(memory_dir: Path, plan: Plan) -> list[str]:
    """Paths whose bytes are not what they were before the plan (the write path restores them;
    this reports what it could not)."""
    failures: list[str] = []
    for change in plan.changes:
        path = memory_dir / change.relpath
        try:
            ok = read_or_none(path) == change.before
        except OSError:
            ok = False
        if not ok:
            failures.append(str(path))
    return failures


def _remove_dirs(directories: list[str]) -> list[str]:
    """Remove the (now empty) folders a failed import created, innermost first; returns those
    that could not be removed."""
    failures: list[str] = []
    for directory in reversed(directories):
        try:
            os.rmdir(directory)
        except FileNotFoundError:
            pass
        except OSError:
            failures.append(directory)
    return failures


def _failed_key(cause: OSError, changed: list[_Planned]) -> str | None:
    """The key whose target the failed call named, if it named one."""
    named = {os.fspath(n) for n in (cause.filename, cause.filename2) if isinstance(n, (str, os.PathLike))}
    return next((p.key for p in changed if p.path in named), None)


def _json_kind(value: object) -> str:
    """``a number``, ``an object``… for messages about JSON values."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, (list, tuple)) and not isinstance(value, _Pairs):
        return "an array"
    if isinstance(value, (dict, _Pairs)):
        return "an object"
    return f"a {type(value).__name__}"
