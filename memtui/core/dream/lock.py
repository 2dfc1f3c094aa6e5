"""The consolidation lock ``<memory dir>/.consolidate-lock`` (docs/behaviour.md §8, seed chapter §17.8).

One file, two roles: its **body** names the holder (the PID, a decimal integer at the start —
the reference parses only that), its **mtime** is *last consolidated at* (absent file: never).

- **Acquire** is refused only when the mtime is under ``STALE_AFTER_S`` (60 min, the
  reference's holder-stale rule) old *and* the PID is alive; otherwise the lock is reclaimed.
  Acquire writes the body, re-reads it, and loses if another writer's body is there.
- **Success** leaves the mtime at the acquisition time.
- **Failure or cancel** rolls back: no prior mtime → delete the file; else empty the body and
  restore the prior mtime, so a failed dream does not count as a consolidation.

memtui additions (the reference reads neither, so they are compatible):

- the body carries ``prior-mtime: <epoch s>`` after the PID (``0`` = there was no file) and a
  random ``run:`` token. A run that crashed (dead PID, note present) is recognised: its prior
  mtime is what *last consolidated at* really is, and reclaiming keeps it as the prior again,
  instead of a crash blocking dreams for ``minHours``.
- the run token makes the write-then-reread check exact even between threads of one process
  (same PID); and the check-write-reread step runs under an advisory ``flock`` on the memory
  dir itself (nothing is written for it), so two memtui racers cannot both win.
- on success the body is emptied (mtime kept at acquisition): the holder is done, so the lock
  is not held by a process that lives on (the TUI) for the next 60 minutes.
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from memtui.core.base.clock import EPOCH_MAX
from memtui.core.base.process import parse_pid, pid_alive
from memtui.core.base.safe_read import FileTooLargeError, read_regular
from memtui.core.writes.atomic import atomic_write_bytes
from memtui.core.memory.memories import LOCK_FILE

LOCK_NAME = LOCK_FILE
# The reference's holder-stale rule: a lock whose mtime is older than this is reclaimed even
# when its PID is alive (a hung run must not block consolidation forever).
STALE_AFTER_S = 60 * 60
# A lock body is a PID and two notes; a bigger file (or a FIFO, a device) is read as empty.
_MAX_LOCK_BYTES = 64 * 1024
_PID = re.compile(r"^\s*([0-9]+)")
_PRIOR = re.compile(r"^prior-mtime:\s*([0-9.]{1,32})\s*$", re.MULTILINE)
_RUN = re.compile(r"^run:\s*(\S+)\s*$", re.MULTILINE)


class LockError(RuntimeError):
    """The lock could not be taken. ``holder_pid``: who holds it (``None`` if unknown);
    ``age_s``: seconds since its mtime (``None`` if unknown)."""

    def __init__(self, message: str, holder_pid: int | None = None, age_s: float | None = None) -> None:
        super().__init__(message)
        self.holder_pid = holder_pid
        self.age_s = age_s


class LockHeldError(LockError):
    """A live process took the lock under 60 minutes ago."""


class LockLostError(LockError):
    """Another writer replaced the body between our write and our re-read."""


@dataclass(frozen=True, slots=True)
class LockInfo:
    """The lock file as found. ``mtime``: epoch s or ``None`` (absent); ``holder_pid``: the
    body's leading integer, or ``None`` when there is none or it cannot name a process (``0``,
    over ``MAX_PID``: a 26-digit number is no holder); ``prior_mtime``: memtui's note (epoch s,
    ``0.0`` = there was no file before the run) or ``None`` (no note, or one that is not a
    time a ``datetime`` can hold); ``run``: the run token or ``None``; ``readable``: the body
    could be read (``False``: a FIFO, a directory, no permission — the CLI's read fails too; a
    body over 64 KiB is read by the CLI and counts as readable)."""

    path: Path
    exists: bool
    mtime: float | None
    body: str
    holder_pid: int | None
    prior_mtime: float | None
    run: str | None
    readable: bool = True

    @property
    def holder_alive(self) -> bool:
        """The PID in the body is a running process."""
        return pid_alive(self.holder_pid)

    @property
    def crashed(self) -> bool:
        """A memtui run that never finished: the note is there and its PID is dead."""
        return self.prior_mtime is not None and not self.holder_alive

    @property
    def last_consolidated_at(self) -> float | None:
        """Epoch s of the last finished consolidation, or ``None`` (never): the mtime, unless
        the body carries a prior-mtime note (a run in progress or crashed), then that note."""
        if not self.exists:
            return None
        if self.prior_mtime is not None:
            return self.prior_mtime or None
        return self.mtime

    def age_s(self, now: datetime) -> float | None:
        """Seconds from the mtime to ``now`` (``None`` when absent)."""
        return None if self.mtime is None else now.timestamp() - self.mtime

    def blocks(self, now: datetime) -> bool:
        """The reference's refusal rule: mtime under 60 minutes old and the PID alive."""
        age = self.age_s(now)
        return self.exists and age is not None and age < STALE_AFTER_S and self.holder_alive


def lock_path(memory_dir: Path) -> Path:
    """``<memory_dir>/.consolidate-lock``."""
    return memory_dir / LOCK_NAME


def read_lock(memory_dir: Path) -> LockInfo:
    """Read the lock. An absent file is ``exists=False``; an unreadable body counts as empty, a
    PID or note that cannot be used as absent (see ``LockInfo``). Never raises."""
    path = lock_path(memory_dir)
    try:
        mtime = path.stat().st_mtime
    except OSError:
        return LockInfo(path, False, None, "", None, None, None)
    readable = True
    try:
        body = read_regular(path, _MAX_LOCK_BYTES)[0].decode("utf-8", errors="replace")
    except FileTooLargeError:
        body = ""
    except OSError:
        body, readable = "", False
    m = _PID.match(body)
    prior = _PRIOR.search(body)
    run = _RUN.search(body)
    return LockInfo(path, True, mtime, body, parse_pid(m.group(1)) if m else None, _prior_mtime(prior.group(1)) if prior else None,
                    run.group(1) if run else None, readable)


@dataclass(frozen=True, slots=True)
class LockAfterRollback:
    """The lock as the CLI leaves it when it took the lock and then gave it back without a
    dream (Claude Code 2.1.332's organization gate, or a fork that threw): ``exists``; ``body``
    (``""``); ``mtime`` (epoch s, the prior one put back; ``None`` when deleted); ``prior_ms``:
    the prior mtime the CLI kept, in ms (``0``: none, so it deleted the file)."""

    exists: bool
    body: str
    mtime: float | None
    prior_ms: float


def cli_rollback(info: LockInfo) -> LockAfterRollback:
    """What the CLI's take-then-roll-back does to the lock ``info`` describes (read from the
    2.1.332 bundle's lock functions; SPEC §13.1 and the dream oracle's README): taking it keeps the prior mtime in ms when both the ``stat`` and the read
    of the body succeed, else 0, and writes its PID; giving it back deletes the file when that
    prior mtime is 0 (no lock, an unreadable one, or one dated exactly 1970-01-01), else writes
    ``""`` and sets the mtime back. Pure: reads nothing."""
    prior_ms = (info.mtime or 0.0) * 1000.0 if info.exists and info.readable else 0.0
    if prior_ms == 0:
        return LockAfterRollback(False, "", None, 0.0)
    return LockAfterRollback(True, "", prior_ms / 1000.0, prior_ms)


def _prior_mtime(text: str) -> float | None:
    """The ``prior-mtime`` note's value (epoch s in ``0 … EPOCH_MAX``), or ``None`` when it is
    not one (``1.2.3``, a year past 9999): such a note is ignored, as if absent."""
    try:
        value = float(text)
    except ValueError:
        return None
    return value if 0 <= value <= EPOCH_MAX else None


@contextlib.contextmanager
def _dir_mutex(memory_dir: Path) -> Iterator[None]:
    """An exclusive ``flock`` on the memory dir (no file written); a no-op where unsupported."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows
        yield
        return
    fd = os.open(memory_dir, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        with contextlib.suppress(OSError):
            fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


def _set(path: Path, body: str, mtime: float) -> None:
    atomic_write_bytes(path, body.encode("utf-8"))
    os.utime(path, (mtime, mtime))


@dataclass(slots=True)
class LockHandle:
    """A held lock. ``prior_mtime``: what *last consolidated at* was before (``None`` =
    never); ``acquired_at``: epoch s (the mtime set on acquire); ``reclaimed``: what was
    taken over (``"stale"``, ``"dead-holder"``, ``"crashed-run"``, ``"empty"``) or ``None``."""

    memory_dir: Path
    prior_mtime: float | None
    acquired_at: float
    body: str
    reclaimed: str | None = None
    released: bool = False

    def _still_ours(self) -> bool:
        return read_lock(self.memory_dir).body == self.body

    def commit(self) -> bool:
        """Success: empty the body and keep the mtime at the acquisition time. Returns
        ``False`` (touching nothing) when someone else holds the lock now."""
        if self.released:
            return False
        self.released = True
        with _dir_mutex(self.memory_dir):
            if not self._still_ours():
                return False
            _set(lock_path(self.memory_dir), "", self.acquired_at)
        return True

    def rollback(self) -> bool:
        """Failure or cancel: delete the file when there was no prior consolidation, else
        empty the body and restore the prior mtime. ``False`` when no longer ours."""
        if self.released:
            return False
        self.released = True
        with _dir_mutex(self.memory_dir):
            if not self._still_ours():
                return False
            path = lock_path(self.memory_dir)
            if not self.prior_mtime:
                path.unlink(missing_ok=True)
            else:
                _set(path, "", self.prior_mtime)
        return True


def lock_body(pid: int, prior_mtime: float | None, run: str) -> str:
    """The body memtui writes: the PID first (all the reference reads), then the notes."""
    return f"{pid}\nprior-mtime: {prior_mtime or 0:.6f}\nrun: {run}\n"


def acquire_lock(memory_dir: Path, now: datetime, *, pid: int | None = None) -> LockHandle:
    """Take the lock at time ``now`` (the mtime it gets). ``pid`` defaults to ``os.getpid()``.

    Raises ``LockHeldError`` (a live holder, under 60 minutes), ``LockLostError`` (another
    writer won the write-then-reread race), ``OSError`` (the file cannot be written).
    """
    own = os.getpid() if pid is None else pid
    with _dir_mutex(memory_dir):
        info = read_lock(memory_dir)
        if info.blocks(now):
            raise LockHeldError(
                f"a dream is running: process {info.holder_pid} took the lock {_minutes(info.age_s(now))} ago",
                info.holder_pid,
                info.age_s(now),
            )
        reclaimed: str | None = None
        if info.exists:
            if info.prior_mtime is not None and not info.holder_alive:
                reclaimed = "crashed-run"
            elif info.holder_pid is not None and not info.holder_alive:
                reclaimed = "dead-holder"
            elif info.holder_pid is not None:
                reclaimed = "stale"
            else:
                reclaimed = "empty"
        prior = info.last_consolidated_at
        body = lock_body(own, prior, secrets.token_hex(8))
        stamp = now.timestamp()
        _set(lock_path(memory_dir), body, stamp)
        after = read_lock(memory_dir)
        if after.body != body:
            raise LockLostError(f"another process took the lock (PID {after.holder_pid})", after.holder_pid, 0.0)
    return LockHandle(memory_dir, prior, stamp, body, reclaimed)


def _minutes(seconds: float | None) -> str:
    if seconds is None:
        return "?"
    return f"{max(0, int(seconds // 60))} min"
