"""The events a dream streams while it runs (docs/behaviour.md §8 "Phases, streamed live as events").

A consolidator calls ``emit(event)`` for each step; the CLI collects them for ``--json``, the
Dream pane turns each into a message. Events are small frozen dataclasses; ``event_to_json``
gives the ``memtui dream plan --json`` shape of one (``{"kind": ..., **fields}``).

The four phases, in order (docs/behaviour.md §8, seed chapter §17.8): ``orient`` (list the dir, read the
index, skim topic files), ``gather`` (recent signal: transcripts since the last consolidation,
drifted memories), ``consolidate`` (merge duplicates, relative → absolute dates), ``prune``
(index under the cap, one-line entries, dangling pointers).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from functools import cache
from typing import Any, Literal

Phase = Literal["orient", "gather", "consolidate", "prune"]
PHASES: tuple[Phase, ...] = ("orient", "gather", "consolidate", "prune")
ChangeAction = Literal["create", "modify", "delete"]
LogLevel = Literal["debug", "info", "warning", "error"]


@dataclass(frozen=True, slots=True)
class PhaseStarted:
    """A phase began. ``title``: one line saying what it does."""

    phase: Phase
    title: str
    kind: str = field(default="phase-started", init=False)


@dataclass(frozen=True, slots=True)
class PhaseFinished:
    """A phase ended. ``summary``: one line of what it found or did."""

    phase: Phase
    summary: str
    kind: str = field(default="phase-finished", init=False)


@dataclass(frozen=True, slots=True)
class FileRead:
    """A file was read: ``path`` (relative to the memory dir, or absolute for a transcript),
    ``size`` in bytes."""

    phase: Phase
    path: str
    size: int
    kind: str = field(default="file-read", init=False)


@dataclass(frozen=True, slots=True)
class Finding:
    """Something the dream noticed but does not change (or explains a change): ``code``
    (kebab-case, see ``DREAM_FINDING_CODES``), ``path`` (relative to the memory dir or
    ``None``), ``line`` (1-based or ``None``), ``message`` (one sentence)."""

    phase: Phase
    code: str
    path: str | None
    message: str
    line: int | None = None
    kind: str = field(default="finding", init=False)


@dataclass(frozen=True, slots=True)
class ProposedChange:
    """A file the plan creates, modifies or deletes, and why (one sentence)."""

    phase: Phase
    path: str
    action: ChangeAction
    reason: str
    kind: str = field(default="proposed-change", init=False)


@dataclass(frozen=True, slots=True)
class Progress:
    """``done`` of ``total`` steps of ``phase`` (``total`` ≥ 1; a phase with no work reports
    1/1). Sent often: a UI may drop all but the newest per phase."""

    phase: Phase
    done: int
    total: int
    kind: str = field(default="progress", init=False)


@dataclass(frozen=True, slots=True)
class LogLine:
    """One line for the streaming log."""

    phase: Phase | None
    level: LogLevel
    text: str
    kind: str = field(default="log", init=False)


DreamEvent = PhaseStarted | PhaseFinished | FileRead | Finding | ProposedChange | Progress | LogLine
Emit = Callable[[DreamEvent], None]

# Finding codes a dream reports (memtui's own catalog).
DREAM_FINDING_CODES: dict[str, str] = {
    "relative-date-kept": "a relative date that names no exact day (next week, in May): left as written",
    "duplicate-deferred": "duplicates left for the next dream: this run reached its deletion cap",
    "duplicate-across-types": "the same text in memories of different types: not merged",
    "index-over-cap": "the index stays over 200 lines / 25,000 characters: its remaining lines are not memory entries",
    "index-missing": "no MEMORY.md: the dream creates one",
    "team-untouched": "team/ memory is shared with others: the dream leaves it alone",
    "session-unreadable": "a transcript could not be read",
    "file-unreadable": "a file could not be read (a FIFO, a device, too large): the dream leaves it as it is",
    "memory-drifted": "a memory changed since the last consolidation",
    "agent-error": "the Claude consolidator stopped with an error",
    "agent-tool-refused": "the Claude consolidator tried a tool call the policy refuses",
    "reconcile-claude-md": "a memory names a command differently from an instruction file: verify which is current (CLAUDE.md is never edited)",
}


class DreamError(RuntimeError):
    """A dream could not be planned or applied (e.g. too many deletions, a lost lock)."""


class DreamCancelled(Exception):
    """The dream was cancelled (the cancel event was set) before it finished a plan."""


def check_cancel(cancel: threading.Event | None) -> None:
    """Raise ``DreamCancelled`` when ``cancel`` is set (called between steps)."""
    if cancel is not None and cancel.is_set():
        raise DreamCancelled("the dream was cancelled")


@cache
def _field_names(cls: type) -> tuple[str, ...]:
    return tuple(f.name for f in fields(cls) if f.name != "kind")


def event_to_json(event: DreamEvent) -> dict[str, Any]:
    """``{"kind": ..., <fields>}`` (the ``events`` items of ``memtui dream plan --json``). Every
    field of an event is a string, a number or ``None``: they are taken as they are (what
    ``dataclasses.asdict`` gives for them, without its deep copy)."""
    out: dict[str, Any] = {"kind": event.kind}
    for name in _field_names(type(event)):
        out[name] = getattr(event, name)
    return out


class EventLog:
    """An ``Emit`` that keeps every event (``events``) and forwards each to ``forward``."""

    def __init__(self, forward: Emit | None = None) -> None:
        self.events: list[DreamEvent] = []
        self._forward = forward

    def __call__(self, event: DreamEvent) -> None:
        self.events.append(event)
        if self._forward is not None:
            self._forward(event)
