"""What every extractor receives and returns (docs/behaviour.md §7): the request, drafts, errors."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Literal, Protocol

from memtui.core.memory.headers import MemoryHeader
from memtui.core.extract.inbox import ProposalKind
from memtui.core.memory.memories import MemoryType
from memtui.core.sessions.transcripts import Entry, Transcript

ExtractorName = Literal["offline", "claude"]


class ExtractorError(RuntimeError):
    """An extractor could not finish (API error, turn limit with nothing usable, cancelled).
    The cursor does not move. ``reason``: one sentence for a person."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True, slots=True)
class ExtractionRequest:
    """What an extractor reads: the ``transcript``, the unread range ``entries[start:end]``,
    the ``memory_dir`` and its ``headers`` (newest first: the manifest the claude extractor is
    given so it updates rather than duplicates), the ``session_id`` and the clock ``now``.
    ``cancel``: set it to stop between turns."""

    transcript: Transcript
    start: int
    end: int
    memory_dir: Path
    session_id: str | None
    now: datetime
    headers: Sequence[MemoryHeader] = ()
    cancel: threading.Event | None = None

    @property
    def entries(self) -> tuple[Entry, ...]:
        """The unread main-chain entries (sidechain entries are a sub-agent's, not the talk)."""
        return tuple(e for e in self.transcript.entries[self.start : self.end] if not e.is_sidechain)


@dataclass(frozen=True, slots=True)
class Draft:
    """One finding before it becomes a proposal. ``kind``: ``create`` (``path`` optional:
    memtui picks ``<type>_<name>.md``) or ``update`` (``path`` of the existing memory, ``text``
    the whole new file, ``before_sha256`` of the bytes it replaces). ``message_uuid``: the entry
    it came from; ``quote``: the matched sentence (offline)."""

    kind: ProposalKind
    type: MemoryType
    name: str
    description: str
    body: str
    message_uuid: str | None
    quote: str | None = None
    path: str | None = None
    text: str | None = None
    before_sha256: str | None = None
    notes: tuple[str, ...] = field(default=())


class Extractor(Protocol):
    """An extractor: ``name``, whether its findings are ``heuristic``, and ``run`` (raises
    ``ExtractorError``; returns the drafts, possibly none, and notes)."""

    name: ExtractorName
    heuristic: bool

    def run(self, request: ExtractionRequest) -> tuple[list[Draft], list[str]]:
        """Read ``request`` and return ``(drafts, notes)``."""
        ...
