"""Team memory import: a sync server's bundle ``{key: content}`` into ``<memory dir>/team/``.

The reference agent keeps shared memory in ``<memory dir>/team/`` and syncs it as a flat map of
keys (relative paths) to file contents (chapter 17.9, SPEC §4.5). A key is attacker-controlled
input (``../../.ssh/authorized_keys``), so every key goes through
:func:`memtui.core.safepath.validate_team_key`; every content through the reference's
250,000-byte per-file limit and a secret scan (:mod:`memtui.core.secretscan`).

An import is all-or-nothing on disk (SPEC §10, "nothing lost"): every entry is validated
before the first write; accepted files are written atomically (temp file in the same dir,
fsync, ``os.replace``); if a write fails midway, the files already written are restored from
before-images kept in memory (content, mode, timestamps), directories the import created are
removed, and :class:`TeamWriteError` is raised — the team dir is as it was. Rejected entries do
not stop the others: they are reported with a code and a reason.

An import only adds and updates: local team files the bundle does not name are left alone.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from memtui.core.atomic import atomic_write_bytes
from memtui.core.memories import TEAM_DIR
from memtui.core.safepath import UnsafePathError, validate_team_key
from memtui.core.secretscan import find_secrets

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
    """A write failed midway (``code`` ``write-failed``). ``key`` is the entry being written;
    ``restore_failures`` lists the paths that could not be put back (empty: the team dir is
    exactly as before the import)."""

    def __init__(self, key: str, cause: OSError, restore_failures: list[str]) -> None:
        what = cause.strerror or str(cause)
        if restore_failures:
            after = "could not restore: " + ", ".join(restore_failures)
        else:
            after = "the team dir was restored; nothing was imported"
        super().__init__("write-failed", f"writing team key {key!r} failed ({what}); {after}")
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
    """What an import did (or, with ``dry_run``, would do), entries in bundle order."""

    team_dir: Path
    dry_run: bool
    accepted: tuple[AcceptedFile, ...]
    rejected: tuple[RejectedKey, ...]

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
        raw = path.read_bytes()
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


def import_bundle(bundle: Mapping[str, object], memory_dir: Path, *, dry_run: bool = False) -> ImportReport:
    """Import ``bundle`` (``{key: content}``, contents as ``str``) into ``memory_dir/team/``.

    Each entry is checked, in bundle order: the key with :func:`validate_team_key` (SPEC §9);
    the content is a string, encodable as UTF-8, at most :data:`MAX_TEAM_FILE_BYTES` bytes, and
    free of likely secrets; the target is not a directory or a special file; no two keys name
    the same file, and no key is both a file and a folder of another. Only then is anything
    written: new and changed files atomically, unchanged ones not at all. ``memory_dir`` must
    exist; ``team/`` and sub-folders are created as needed. With ``dry_run`` nothing is written
    and the report says what would be.

    Raises :class:`TeamImportError` (``no-memory-dir``) or :class:`TeamWriteError` (a write
    failed; everything already written was restored).
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
    if not dry_run:
        _write_all([p for p in planned if p.status != "unchanged"], team_dir)
    accepted = tuple(AcceptedFile(p.key, Path(p.path), len(p.data), p.status) for p in planned)
    return ImportReport(team_dir, dry_run, accepted, tuple(rejected[k] for k in sorted(rejected)))


class _Pairs(list[tuple[str, Any]]):
    """A JSON object as parsed, pairs in order (duplicates kept, so they can be refused)."""


@dataclass(slots=True)
class _Before:
    """A file as it was before the import: enough to put it back exactly."""

    data: bytes
    mode: int
    atime_ns: int
    mtime_ns: int


@dataclass(slots=True)
class _Planned:
    """An entry that passed the per-entry checks."""

    key: str
    path: str
    data: bytes
    status: Status
    before: _Before | None
    position: int = field(default=-1)


def _check(key: object, content: object, team_dir: Path) -> _Planned | RejectedKey:
    """Every per-entry check, first failure wins; reads the existing file for the before-image."""
    if not isinstance(key, str):
        return RejectedKey(str(key), "not-a-string", f"the key is {_json_kind(key)}, not a string")
    try:
        target = str(validate_team_key(key, team_dir))
    except UnsafePathError as exc:
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
        with open(target, "rb") as handle:
            existing = handle.read()
    except OSError as exc:
        return RejectedKey(
            key, "unreadable", f"the existing {target} cannot be read, so it could not be restored: {exc.strerror or exc}"
        )
    before = _Before(existing, stat.S_IMODE(st.st_mode), st.st_atime_ns, st.st_mtime_ns)
    return _Planned(key, target, data, "unchanged" if existing == data else "updated", before)


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


def _write_all(planned: list[_Planned], team_dir: Path) -> None:
    """Write every planned entry; on any failure undo what was done and raise."""
    written: list[_Planned] = []
    created_dirs: list[str] = []
    current = ""
    try:
        for p in planned:
            current = p.key
            _make_parents(os.path.dirname(p.path), created_dirs)
            atomic_write_bytes(Path(p.path), p.data, mode=None if p.before is None else p.before.mode)
            written.append(p)
    except BaseException as exc:
        failures = _restore(written, created_dirs)
        if isinstance(exc, OSError):
            raise TeamWriteError(current, exc, failures) from exc
        raise


def _make_parents(directory: str, created: list[str]) -> None:
    """``mkdir -p directory``, recording each folder it creates (outermost first)."""
    missing: list[str] = []
    while not os.path.isdir(directory):
        missing.append(directory)
        parent = os.path.dirname(directory)
        if parent == directory:
            break
        directory = parent
    for path in reversed(missing):
        os.mkdir(path)
        created.append(path)


def _restore(written: list[_Planned], created_dirs: list[str]) -> list[str]:
    """Undo ``written`` (newest first) from the before-images and remove the folders the import
    created; returns the paths that could not be put back."""
    failures: list[str] = []
    for p in reversed(written):
        try:
            if p.before is None:
                os.unlink(p.path)
            else:
                atomic_write_bytes(Path(p.path), p.before.data, mode=p.before.mode)
                os.utime(p.path, ns=(p.before.atime_ns, p.before.mtime_ns))
        except OSError:
            failures.append(p.path)
    for directory in reversed(created_dirs):
        try:
            os.rmdir(directory)
        except OSError:
            failures.append(directory)
    return failures


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
