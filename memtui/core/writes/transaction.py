"""Writing a journaled change into the memory dir, rolling it back, and settling at start-up a
change that a crash cut short.

**Order of steps and fsyncs** (a kill at any point leaves a state the next start settles to
"every file all-old or all-new"):

1. the ``journal-open/<id>`` marker is created and its directory fsynced;
2. the before-image of every file is written (each fsynced, then its directory), then
   ``entry.json`` with status ``pending`` (fsynced, then its directory) — nothing in the memory
   dir has been touched yet;
3. each file in turn (deletes last), with its own temp names ``.memtui-<id>-<n>a.tmp`` /
   ``…b.tmp`` next to it: the new bytes go into the temp file (written, mtime and mode set,
   fsynced); the temp file and the file **swap names** atomically (``renameat2``
   ``RENAME_EXCHANGE``); the directory is fsynced; the displaced version — now under the temp
   name — is compared with the before-image: the same bytes are removed, other bytes (someone
   else wrote the file after memtui's check) are copied into the entry's ``kept/`` (fsynced)
   first, the change stops and everything is rolled back, that version put back in place;
4. ``entry.json`` gets status ``applied`` (fsynced, then its directory);
5. the marker is removed.

A create links the temp file to the name (``link`` fails when the name exists: nothing is
overwritten); a delete renames the file away to its temp name and checks it the same way.
Where the file system cannot swap two names, a file is first hard-linked to its ``b`` temp
name (which keeps every write made into it in place) and then replaced by a rename: the one
window left is another process *renaming* a file over it between those two calls.

**Recovery** (``recover``, at every start of the CLI and the app): every entry with a marker is
settled under the write lock. No ``entry.json``: the change never touched a memory file — its
folder and marker are removed. ``pending``: it is rolled back — for each file, temp files are
looked at first (a version neither memtui's new bytes nor the before-image is kept), then a
file holding memtui's new bytes gets back the newest kept version, else its before-image (a
created file is removed; the directories the change created are removed when empty); a file
holding anything else was changed by someone since and is left as it is. The entry becomes
``failed`` with a note saying what was restored; ``memtui undo`` then walks back through the
changes before it as usual. Rolling back is idempotent: a kill during a recovery is settled by
the next one. Leftover temp files of ``atomic_write_bytes`` whose process is gone are removed
from the memory dir and ``team/``.

**No lost update**: every version memtui displaces is compared before it is let go, and kept
when it is not the one memtui expected — an outside write landing anywhere between memtui's
check and its swap is detected, put back, and the change refused (``OutsideWriteError``).
"""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from memtui.core.base.safe_read import read_regular
from memtui.core.places.statedir import StateDirInsideMemoryDirError
from memtui.core.writes import steps
from memtui.core.writes.atomic import TEMP_PREFIX, TEMP_SUFFIX, default_mode, new_file_mode, stale_temp
from memtui.core.writes.contained import ContainmentError, open_target
from memtui.core.writes.links import confirmed_links
from memtui.core.writes.journal import FORMAT, MAX_IMAGE_BYTES, Journal, JournalChange, JournalEntry, read_or_none, sha256_hex

__all__ = [
    "OutsideWriteError",
    "Recovered",
    "Rollback",
    "WriteStep",
    "missing_dirs",
    "recover",
    "recover_at_start",
    "rollback",
    "temp_name",
    "write_step",
]

# How often a rollback puts back a version another writer keeps replacing before it leaves the
# newest one in place (every displaced version is kept either way).
_MAX_PUT_BACK = 3


class OutsideWriteError(RuntimeError):
    """Another process wrote ``relpath`` between memtui's check and its write; its version was
    put back (and kept in the journal). ``kept``: where the copy is."""

    def __init__(self, relpath: str, kept: Path | None, expected_sha: str | None, actual_sha: str | None) -> None:
        super().__init__(f"{relpath} changed on disk while memtui was writing it")
        self.relpath = relpath
        self.kept = kept
        self.expected_sha = expected_sha
        self.actual_sha = actual_sha


@dataclass(frozen=True, slots=True)
class WriteStep:
    """One file to write: ``after`` ``None`` deletes it; ``after_mtime`` epoch s (``None``:
    now)."""

    relpath: str
    before: bytes | None
    after: bytes | None
    after_mtime: float | None = None


@dataclass(slots=True)
class Rollback:
    """What a rollback did: files given back their earlier bytes, files left alone because
    someone changed them since (their other versions are in ``kept``), files it could not
    restore (``OSError``), and the kept copies it made."""

    restored: list[str] = field(default_factory=list)
    left: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    kept: list[Path] = field(default_factory=list)

    @property
    def complete(self) -> bool:
        """Every file is settled (none failed)."""
        return not self.failed


@dataclass(frozen=True, slots=True)
class Recovered:
    """One change settled by ``recover``: ``entry_id``, ``title``, ``outcome`` (``rolled-back``,
    ``discarded``: cut short before it touched any file, ``settled``: it had finished,
    ``incomplete``: some files could not be restored yet, ``damaged``: its record cannot be
    read) and ``message``, a sentence for the user."""

    entry_id: str
    title: str
    outcome: str
    message: str


def temp_name(entry_id: str, index: int, tag: str) -> str:
    """The temp file name of change ``index`` of entry ``entry_id`` (``tag`` ``a``: the new
    bytes, ``b``: a version moved away)."""
    return f"{TEMP_PREFIX}{entry_id}-{index}{tag}{TEMP_SUFFIX}"


def missing_dirs(memory_dir: Path, relpaths: Sequence[str]) -> list[str]:
    """Directories (relative, POSIX) that writing ``relpaths`` would create, outermost first."""
    out: list[str] = []
    for relpath in relpaths:
        parts = relpath.split("/")[:-1]
        for n in range(1, len(parts) + 1):
            rel = "/".join(parts[:n])
            if rel not in out and not os.path.lexists(memory_dir / rel):
                out.append(rel)
    return out


# ----- one file -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Version:
    data: bytes | None  # None: the name was empty
    mtime_ns: int | None  # epoch ns
    mtime: float | None = None  # epoch s, when no ns value is known (entries of memtui 0.1)


def _read_version(path: Path, dir_fd: int | None = None) -> _Version:
    data, st = read_regular(os.path.basename(path) if dir_fd is not None else path, MAX_IMAGE_BYTES, dir_fd=dir_fd)
    return _Version(data, st.st_mtime_ns)


def _lexists(path: Path, dir_fd: int | None) -> bool:
    """Whether the name exists (a dangling link counts), in the folder ``dir_fd`` when given."""
    try:
        os.stat(os.path.basename(path) if dir_fd is not None else path, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        return False
    return True


def _mode(path: Path, dir_fd: int | None) -> int:
    """``default_mode`` of the name in the folder ``dir_fd``."""
    if dir_fd is None:
        return default_mode(path)
    try:
        return os.stat(path.name, dir_fd=dir_fd).st_mode & 0o777
    except OSError:
        return new_file_mode()


def _put(
    path: Path,
    data: bytes | None,
    *,
    mode: int,
    new_tmp: Path,
    old_tmp: Path,
    create: bool,
    mtime: float | None = None,
    mtime_ns: int | None = None,
    dir_fd: int | None = None,
) -> _Version:
    """Put ``data`` at ``path`` (``None``: remove it), moving away what was there; returns the
    version moved away (``data`` ``None``: nothing was there). When nothing is there and not
    ``create``, nothing is written. Temp names are left clean. ``dir_fd``: the open folder of
    ``path`` and both temp names (every step acts relative to it). Raises ``OSError`` (``path``
    untouched, unless the error came after the swap: then the displaced version is still
    under a temp name, where ``rollback`` finds it)."""
    parent = path.parent
    if data is None:
        try:
            steps.rename(path, old_tmp, dir_fd=dir_fd)
        except FileNotFoundError:
            return _Version(None, None)
        steps.fsync_dir(parent, dir_fd=dir_fd)
        return _take(old_tmp, dir_fd)
    if not _lexists(path, dir_fd) and not create:
        return _Version(None, None)
    steps.unlink(new_tmp, dir_fd=dir_fd)
    steps.create_file(new_tmp, data, mode=mode, mtime=mtime, mtime_ns=mtime_ns, dir_fd=dir_fd)
    try:
        if not _lexists(path, dir_fd) and _link_new(new_tmp, path, dir_fd):
            return _Version(None, None)
        try:
            steps.swap(new_tmp, path, dir_fd=dir_fd)
            displaced_at = new_tmp
        except steps.SwapUnsupported:
            steps.unlink(old_tmp, dir_fd=dir_fd)
            steps.link(path, old_tmp, dir_fd=dir_fd)  # the file's inode stays reachable: writes into it are kept
            steps.rename(new_tmp, path, dir_fd=dir_fd)
            displaced_at = old_tmp
        except FileNotFoundError:  # removed between the look and the swap
            if create and _link_new(new_tmp, path, dir_fd):
                return _Version(None, None)
            steps.unlink(new_tmp, dir_fd=dir_fd)
            return _Version(None, None)
    except BaseException:
        if _lexists(new_tmp, dir_fd) and _is_ours(new_tmp, data, dir_fd):
            steps.unlink(new_tmp, dir_fd=dir_fd)
        raise
    steps.fsync_dir(parent, dir_fd=dir_fd)
    return _take(displaced_at, dir_fd)


def _link_new(new_tmp: Path, path: Path, dir_fd: int | None = None) -> bool:
    """Give the temp file ``new_tmp`` the name ``path`` unless that name exists (``False``)."""
    try:
        steps.link(new_tmp, path, dir_fd=dir_fd)
    except FileExistsError:
        return False
    steps.unlink(new_tmp, dir_fd=dir_fd)
    steps.fsync_dir(path.parent, dir_fd=dir_fd)
    return True


def _is_ours(path: Path, data: bytes, dir_fd: int | None = None) -> bool:
    try:
        return _read_version(path, dir_fd).data == data
    except OSError:
        return False


def _take(path: Path, dir_fd: int | None = None) -> _Version:
    """Read the version moved to the temp name ``path``, then remove the name. Raises
    ``OSError`` (the name kept) when it cannot be read — e.g. not a regular file."""
    version = _read_version(path, dir_fd)
    steps.unlink(path, dir_fd=dir_fd)
    return version


def write_step(memory_dir: Path, journal: Journal, entry: JournalEntry, index: int, step: WriteStep, confirmed: Mapping[str, str] | None = None) -> None:
    """Write change ``index`` of ``entry`` (its intent already journaled), into the folder
    ``open_target`` opened and checked (a memory that is a link inside the memory dir gets
    the bytes at its target; a delete removes the link itself). Raises ``ContainmentError``
    (the name leads outside the memory dir: nothing written), ``OutsideWriteError`` when the
    version it displaced is not the expected before-image (that version is kept in the journal
    first), ``OSError``. ``confirmed``: the memory dir's confirmed links, when the caller has
    read them (else read here)."""
    if confirmed is None:
        confirmed = confirmed_links(journal.base)
    with open_target(memory_dir, step.relpath, follow_final=step.after is not None, create_dirs=step.after is not None, confirmed=confirmed) as target:
        fd = target.dir_fd
        path = target.path
        new_tmp = target.folder / temp_name(entry.id, index, "a")
        old_tmp = target.folder / temp_name(entry.id, index, "b")
        mode = _mode(path, fd)
        if step.before is None and step.after is not None:
            steps.unlink(new_tmp, dir_fd=fd)
            steps.create_file(new_tmp, step.after, mode=mode, mtime=step.after_mtime, dir_fd=fd)
            try:
                steps.link(new_tmp, path, dir_fd=fd)
            except FileExistsError:
                steps.unlink(new_tmp, dir_fd=fd)
                raise OutsideWriteError(step.relpath, None, None, "?") from None
            steps.unlink(new_tmp, dir_fd=fd)
            steps.fsync_dir(target.folder, dir_fd=fd)
            return
        displaced = _put(path, step.after, mode=mode, mtime=step.after_mtime, new_tmp=new_tmp, old_tmp=old_tmp, create=False, dir_fd=fd)
    if displaced.data != step.before:
        kept = journal.keep(entry.id, index, displaced.data, displaced.mtime_ns) if displaced.data is not None else None
        raise OutsideWriteError(step.relpath, kept, sha256_hex(step.before), sha256_hex(displaced.data))


# ----- rollback ---------------------------------------------------------------------------------


def rollback(memory_dir: Path, journal: Journal, entry: JournalEntry) -> Rollback:
    """Give every file of ``entry`` back the bytes it had before it (see the module docstring),
    last change first. Never raises ``OSError``: files it could not settle are in ``failed``."""
    result = Rollback()
    confirmed = confirmed_links(journal.base)
    for index in reversed(range(len(entry.changes))):
        jc = entry.changes[index]
        try:
            _rollback_one(memory_dir, journal, entry, index, jc, result, confirmed)
        except OSError:
            result.failed.append(jc.relpath)
    for rel in reversed(entry.dirs):
        try:
            os.rmdir(memory_dir / rel)
        except OSError:
            pass
    return result


def _rollback_one(
    memory_dir: Path, journal: Journal, entry: JournalEntry, index: int, jc: JournalChange, result: Rollback, confirmed: Mapping[str, str]
) -> None:
    """Settle change ``index`` of ``entry`` in the folder ``open_target`` opens for it (the
    same one the write used: a link inside the memory dir leads to its target). Raises
    ``OSError`` (``ContainmentError`` when the name now leads outside the memory dir)."""
    try:
        where = open_target(memory_dir, jc.relpath, create_dirs=jc.before_sha is not None, confirmed=confirmed)
    except FileNotFoundError:  # the folder of a created file was never made: nothing to undo
        return
    with where:
        _rollback_in(where.dir_fd, where.path, journal, entry, index, jc, result)


def _rollback_in(fd: int, path: Path, journal: Journal, entry: JournalEntry, index: int, jc: JournalChange, result: Rollback) -> None:
    parent = path.parent
    try:
        current: bytes | None = _read_version(path, fd).data
    except FileNotFoundError:
        current = None
    ours = current is None if jc.after_sha is None else sha256_hex(current) == jc.after_sha
    for tag in ("a", "b"):  # temp files first: an outside version may wait under one
        tmp = parent / temp_name(entry.id, index, tag)
        if not _lexists(tmp, fd):
            continue
        version = _read_version(tmp, fd)
        # before the swap, "a" holds memtui's own new bytes — empty when the crash came between
        # creating it and writing it: nothing anyone wrote
        partial = tag == "a" and not ours and not version.data
        if not partial and sha256_hex(version.data) not in (jc.after_sha, jc.before_sha) and version.data is not None:
            result.kept.append(_keep_once(journal, entry.id, index, version))
        steps.unlink(tmp, dir_fd=fd)
    if not ours:
        if sha256_hex(current) != jc.before_sha:
            result.left.append(jc.relpath)
        return
    kept = journal.kept(entry.id, index)
    if kept:
        newest = _read_version(kept[-1])
        target = newest
    else:
        before = journal.before_image(entry.id, jc.relpath)
        if sha256_hex(before) != jc.before_sha:
            raise OSError(2, "the journal's copy of the file is missing or damaged", str(path))
        target = _Version(before, jc.before_mtime_ns, jc.before_mtime)
    expected = jc.after_sha
    new_tmp = parent / temp_name(entry.id, index, "a")
    old_tmp = parent / temp_name(entry.id, index, "b")
    for _ in range(_MAX_PUT_BACK):
        displaced = _put(
            path,
            target.data,
            mode=_mode(path, fd),
            mtime=target.mtime,
            mtime_ns=target.mtime_ns,
            new_tmp=new_tmp,
            old_tmp=old_tmp,
            create=True,
            dir_fd=fd,
        )
        if sha256_hex(displaced.data) == expected:
            break
        # someone wrote the file while it was being restored: theirs is newer — keep it, put it back
        if displaced.data is not None:
            result.kept.append(_keep_once(journal, entry.id, index, displaced))
        expected, target = sha256_hex(target.data), displaced
    result.restored.append(jc.relpath)


def _keep_once(journal: Journal, entry_id: str, index: int, version: _Version) -> Path:
    assert version.data is not None
    for path in journal.kept(entry_id, index):
        try:
            if read_regular(path, MAX_IMAGE_BYTES)[0] == version.data:
                return path
        except OSError:
            continue
    return journal.keep(entry_id, index, version.data, version.mtime_ns)


# ----- recovery ---------------------------------------------------------------------------------


def recover(memory_dir: Path, journal: Journal, *, wait: bool = True) -> list[Recovered]:
    """Settle every change a crash left unsettled in ``memory_dir`` (see the module docstring)
    and remove stale temp files. Returns what was done (empty: nothing to do). Cheap when there
    is nothing: one directory listing and one ``stat``. ``wait=False``: when another memtui
    holds the write lock (it is applying a change), do nothing (``[]``). Raises ``OSError``
    when the journal cannot be read or locked."""
    if not memory_dir.is_dir():
        return []
    migrated = os.path.exists(journal.format_file) or not journal.root.exists()
    if migrated and not journal.open_ids():
        _remove_stale_temps(memory_dir, ())
        return []
    out: list[Recovered] = []
    touched: set[str] = set()
    with contextlib.ExitStack() as stack:
        try:
            stack.enter_context(journal.write_lock(wait=wait))
        except BlockingIOError:
            return []
        if not migrated:
            _migrate(journal)
        for entry_id in journal.open_ids():
            found = _settle(memory_dir, journal, entry_id)
            if found is not None:
                out.append(found[0])
                touched.update(found[1])
    _remove_stale_temps(memory_dir, touched)
    return out


def recover_at_start(state_dir: Path, memory_dir: Path) -> list[str]:
    """What the CLI, the app and the hook call when they start: ``recover`` without waiting for
    a live writer — in ``memory_dir`` and in every folder another change was journaled in
    (``memtui.core.writes.roots``: merges of stores, settings) — as sentences for the user
    (empty: nothing to say). Never raises: a journal that cannot be read is one sentence."""
    from memtui.core.writes.roots import registered_roots

    messages: list[str] = []
    folders = [memory_dir, *(r for r in registered_roots(state_dir) if r != memory_dir)]
    for folder in folders:  # the memory dir, then the folders of merges and settings changes
        try:
            journal = Journal(state_dir, folder)
        except StateDirInsideMemoryDirError:
            continue  # memtui writes no state there: nothing to recover (the doctor says why)
        except (OSError, ValueError) as exc:  # a listed folder that cannot be one
            messages.append(f"could not check {folder} for interrupted changes: {getattr(exc, 'strerror', None) or exc}")
            continue
        try:
            messages.extend(r.message for r in recover(folder, journal, wait=False) if r.outcome != "settled")
        except OSError as exc:
            where = f" ({exc.filename})" if exc.filename else ""
            messages.append(f"could not check for interrupted changes{where}: {exc.strerror or exc}")
    return messages


def _settle(memory_dir: Path, journal: Journal, entry_id: str) -> tuple[Recovered, list[str]] | None:
    marker = journal.open_dir / entry_id
    folder = journal.entry_dir(entry_id)
    if not (folder / "entry.json").exists():
        shutil.rmtree(folder, ignore_errors=True)
        steps.fsync_dir(journal.root)
        steps.unlink(marker)
        return None  # the intent was never complete: no memory file was touched
    try:
        entry = journal.load(entry_id)
    except (OSError, ValueError) as exc:
        steps.unlink(marker)
        msg = f"the record of an interrupted change ({entry_id}) cannot be read ({exc}); its files were left as they are"
        return Recovered(entry_id, entry_id, "damaged", msg), []
    parents = sorted({os.path.dirname(c.relpath) for c in entry.changes})
    if entry.status != "pending":
        journal.settle(entry)
        return Recovered(entry.id, entry.title, "settled", f"“{entry.title}” had finished ({entry.status})"), parents
    result = rollback(memory_dir, journal, entry)
    entry.note = _note(result, at_start=True)
    if not result.complete:
        journal.save(entry)
        msg = f"an interrupted change, “{entry.title}”, could not be fully rolled back: {entry.note}; memtui will try again at its next start"
        return Recovered(entry.id, entry.title, "incomplete", msg), parents
    entry.status = "failed"
    journal.settle(entry)
    msg = f"an interrupted change, “{entry.title}”, was rolled back: {entry.note}"
    return Recovered(entry.id, entry.title, "rolled-back", msg), parents


def _note(result: Rollback, *, at_start: bool) -> str:
    parts: list[str] = []
    if result.restored:
        n = len(result.restored)
        parts.append(f"{n} file{'' if n == 1 else 's'} restored")
    if not result.restored and not result.left and not result.failed:
        parts.append("no file had been changed yet")
    if result.left:
        parts.append(f"left as found (changed by someone else since): {', '.join(result.left)}")
    if result.kept:
        parts.append(f"other versions kept in {result.kept[0].parent}")
    if result.failed:
        parts.append(f"could not restore {', '.join(result.failed)}")
    return "; ".join(parts) + (" (at start-up)" if at_start else "")


def rollback_note(result: Rollback) -> str:
    """A sentence on ``result`` for an entry's ``note``."""
    return _note(result, at_start=False)


def _migrate(journal: Journal) -> None:
    """Give a ``journal-open`` marker to every pending entry an older memtui left, and drop
    entry folders with no ``entry.json`` (an older memtui wrote it before touching any memory
    file); then write ``journal-format``."""
    if journal.root.is_dir():
        steps.make_dirs(journal.open_dir)
        for child in sorted(journal.root.iterdir()):
            if not child.is_dir():
                continue
            if not (child / "entry.json").exists():
                if child.name.split("-", 1)[0].isdigit() and (not os.listdir(child) or (child / "before").is_dir()):
                    shutil.rmtree(child, ignore_errors=True)
                continue
            try:
                entry = journal.load(child.name)
            except (OSError, ValueError):
                continue
            if entry.status == "pending" and not os.path.lexists(journal.open_dir / entry.id):
                steps.create_file(journal.open_dir / entry.id, b"", mode=0o600)
        steps.fsync_dir(journal.open_dir)
    from memtui.core.writes.atomic import atomic_write_bytes

    atomic_write_bytes(journal.format_file, f"{FORMAT}\n".encode())


def _remove_stale_temps(memory_dir: Path, parents: set[str] | Sequence[str]) -> None:
    """Remove temp files of ``atomic_write_bytes`` left by processes that are gone, in the
    memory dir, ``team/`` and the given folders (relative). Never raises."""
    for rel in {"", "team", *parents}:
        folder = memory_dir / rel if rel else memory_dir
        try:
            names = [e.name for e in os.scandir(folder) if e.name.startswith(TEMP_PREFIX) and e.name.endswith(TEMP_SUFFIX)]
        except OSError:
            continue
        for name in names:
            if stale_temp(name):
                try:
                    steps.unlink(folder / name)
                except OSError:
                    pass
