"""A dream's plan: one ``memtui.core.writes.edits.Plan`` (``action="dream"``) plus, per file, the
reason, and the findings and events of the run that made it (docs/behaviour.md §8 "Transaction").

Nothing here writes: ``Workspace`` holds the files a consolidator edits in memory (bytes as
loaded, text as edited, one or more reasons each) and turns them into a ``DreamPlan``. The
plan is applied by ``memtui.core.dream.run`` through ``apply_plan`` (conflict check, journal
before-images in memtui's state dir, atomic writes, rollback), so every dream can be undone.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memtui.core.dream.events import DreamEvent, Finding, event_to_json
from memtui.core.writes.edits import FileChange, Plan
from memtui.core.writes.journal import MAX_IMAGE_BYTES, read_or_none

# The cap (memtui's choice): a dream deletes at most this many files per run; the
# remaining duplicates wait for the next dream.
DEFAULT_MAX_DELETIONS = 5


@dataclass(frozen=True, slots=True)
class DreamPlan:
    """``plan``: the change set (``action="dream"``); ``reasons``: one sentence (or several,
    ``; ``-joined) per ``plan.changes`` item, same order; ``findings`` and ``events`` of the
    run; ``consolidator``: ``"offline"`` or ``"claude"``."""

    plan: Plan
    reasons: tuple[str, ...]
    findings: tuple[Finding, ...] = ()
    events: tuple[DreamEvent, ...] = ()
    consolidator: str = "offline"
    notes: tuple[str, ...] = field(default=())
    # The request a release's dream sent (``memtui.core.dream.prompt.DreamRequest``), or None.
    request: Any = None

    @property
    def empty(self) -> bool:
        """Nothing to change."""
        return not self.plan.changes

    @property
    def deletions(self) -> int:
        """How many files the plan deletes."""
        return sum(1 for c in self.plan.changes if c.kind == "delete")

    def items(self) -> list[tuple[FileChange, str]]:
        """``(change, reason)`` pairs in plan order."""
        return list(zip(self.plan.changes, self.reasons, strict=True))


def plan_to_json(dp: DreamPlan, *, with_events: bool = True) -> dict[str, Any]:
    """The ``memtui dream plan --json`` shape: ``{consolidator, title, changes: [{path,
    action, reason, diff}], findings: [{code, path, line, message, phase}], events: [...]}``."""
    return {
        "consolidator": dp.consolidator,
        "title": dp.plan.title,
        "changes": [{"path": c.relpath, "action": c.kind, "reason": r, "diff": c.diff()} for c, r in dp.items()],
        "findings": [{"code": f.code, "path": f.path, "line": f.line, "message": f.message, "phase": f.phase} for f in dp.findings],
        "events": [event_to_json(e) for e in dp.events] if with_events else [],
        **({"request": dp.request.to_json()} if dp.request is not None else {}),
    }


class Workspace:
    """The files a consolidator edits, in memory. Texts are decoded with ``surrogateescape``
    so non-UTF-8 bytes survive a round trip; every edit carries a reason.

    A file is loaded from bytes (``seed``, or read on first ``get``) or from its text when that
    text is exactly its bytes decoded as UTF-8 (``seed_text``: the bytes are then re-made by
    encoding, not kept — one copy of each memory instead of three at 20,000 memories)."""

    def __init__(self, memory_dir: Path) -> None:
        self.memory_dir = memory_dir
        self._root = os.fspath(memory_dir)
        # files not loaded yet that ``exists`` found readable (each one is looked at once a plan)
        self._present: set[str] = set()
        self._bytes: dict[str, bytes | None] = {}  # loaded from bytes (None: absent)
        self._loaded_text: dict[str, str] = {}  # loaded from its UTF-8 text
        self._text: dict[str, str | None] = {}  # current text of every loaded file (None: absent or deleted)
        # files that exist but could not be read (a FIFO, a /dev/zero link, over the cap) -> why:
        # never part of a plan, whatever a phase does with them
        self.unreadable: dict[str, str] = {}
        self.reasons: dict[str, list[str]] = {}
        self.mtimes: dict[str, float | None] = {}

    def seed(self, relpath: str, data: bytes | None) -> None:
        """Record bytes already read for ``relpath`` (saves reading it again)."""
        if relpath not in self._text:
            self._bytes[relpath] = data
            self._text[relpath] = None if data is None else data.decode("utf-8", errors="surrogateescape")

    def seed_text(self, relpath: str, text: str) -> None:
        """Record the text of ``relpath`` already read; the caller vouches that it is the file's
        bytes decoded as UTF-8 (``text.encode("utf-8")`` gives them back exactly)."""
        if relpath not in self._text:
            self._loaded_text[relpath] = text
            self._text[relpath] = text

    def original(self, relpath: str) -> bytes | None:
        """The bytes ``relpath`` had when loaded (``None``: it did not exist)."""
        self.get(relpath)
        if relpath in self._loaded_text:
            return self._loaded_text[relpath].encode("utf-8")
        return self._bytes[relpath]

    def known(self, relpath: str) -> bool:
        """Whether ``relpath`` was loaded (or edited) already."""
        return relpath in self._text

    def get(self, relpath: str) -> str | None:
        """The current text of ``relpath`` (``None``: absent or deleted)."""
        if relpath not in self._text:
            try:
                data = read_or_none(self.memory_dir / relpath)
            except OSError as exc:
                self.unreadable[relpath] = exc.strerror or str(exc)
                data = b""
            self.seed(relpath, data)
        return self._text[relpath]

    def exists(self, relpath: str) -> bool:
        """Whether ``relpath`` exists after the edits so far. A file not loaded yet is not read
        for the answer when it is a regular file within the size cap that may be read (what
        ``get`` would find there is text: it exists); anything else is read, so that a file
        that cannot be is recorded in ``unreadable`` as before. Such a file is looked at once:
        later calls give the first answer (a plan sees the dir as it first found it; applying
        checks each file's bytes again)."""
        if relpath not in self._text:
            if relpath in self._present:
                return True
            path = os.path.join(self._root, relpath)
            try:
                st = os.stat(path)
            except OSError:
                st = None
            if st is not None and stat.S_ISREG(st.st_mode) and st.st_size <= MAX_IMAGE_BYTES and os.access(path, os.R_OK):
                self._present.add(relpath)
                return True
        return self.get(relpath) is not None

    def found(self, relpath: str) -> bool:
        """Whether ``exists`` found ``relpath`` on disk, not loaded, a regular file that may be
        read (its first answer: the file is not looked at again)."""
        return relpath in self._present

    def set(self, relpath: str, text: str, reason: str, *, mtime: float | None = None) -> None:
        """Replace the text (``mtime``: epoch s the written file gets; ``None`` = the apply time)."""
        self.get(relpath)
        self._text[relpath] = text
        self.reasons.setdefault(relpath, []).append(reason)
        self.mtimes[relpath] = mtime

    def delete(self, relpath: str, reason: str) -> None:
        """Delete ``relpath`` (its before-image in the journal is the trash)."""
        self.get(relpath)
        self._text[relpath] = None
        self.reasons.setdefault(relpath, []).append(reason)
        self.mtimes.pop(relpath, None)

    def _after(self, relpath: str) -> bytes | None:
        text = self._text[relpath]
        return None if text is None else text.encode("utf-8", errors="surrogateescape")

    def changed(self) -> list[str]:
        """Relpaths whose bytes differ from before, sorted (deletes sort last when applied)."""
        out = []
        for rel, text in self._text.items():
            if rel in self._loaded_text and text is self._loaded_text[rel]:
                continue  # untouched since loaded
            if rel in self.unreadable:
                continue  # never read: never written
            if self._after(rel) != self.original(rel):
                out.append(rel)
        return sorted(out)

    def to_plan(self, title: str, findings: list[Finding], events: list[DreamEvent], consolidator: str) -> DreamPlan:
        """The ``DreamPlan`` of the edits (files edited back to their old bytes are left out)."""
        changes: list[FileChange] = []
        reasons: list[str] = []
        for rel, why in sorted(self.unreadable.items()):
            findings = [*findings, Finding("orient", "file-unreadable", rel, f"{rel} could not be read ({why}): the dream leaves it as it is")]
        for rel in self.changed():
            after = self._after(rel)
            changes.append(FileChange(rel, self.original(rel), after, self.mtimes.get(rel) if after is not None else None))
            reasons.append("; ".join(dict.fromkeys(self.reasons.get(rel, ["changed"]))))
        return DreamPlan(Plan(title, tuple(changes), action="dream"), tuple(reasons), tuple(findings), tuple(events), consolidator)
