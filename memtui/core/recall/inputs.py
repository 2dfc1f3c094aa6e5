"""What a recall takes besides the query, built the same way by ``memtui recall`` and the
Recall pane: the recently used tools, the memories already surfaced in the session and their
weight against the session budget — typed in, or read from a session transcript.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from memtui.core.recall.corpus import RecallCorpus
from memtui.core.recall.engine import surfaced_size
from memtui.core.sessions.transcripts import read_transcript, recently_used_tools, surfaced_memories


def split_names(value: str | None) -> list[str]:
    """A comma-separated list as typed (``"Bash, Edit"``): names stripped, blanks dropped,
    the first occurrence of each kept."""
    return unique(v.strip() for v in (value or "").split(","))


def unique(names: Iterable[str]) -> list[str]:
    """``names`` without blanks and repeats, in first-occurrence order."""
    return list(dict.fromkeys(n for n in names if n))


@dataclass(frozen=True, slots=True)
class SessionContext:
    """What one session transcript brings to recall: ``tools`` (its recently used tools, as
    the agent lists them), ``surfaced`` (memory paths it already surfaced) and ``units`` (their
    UTF-16 units, counted against the 60 KiB session budget)."""

    session_id: str
    tools: tuple[str, ...]
    surfaced: tuple[str, ...]
    units: int


def session_context(path: Path) -> SessionContext:
    """Read the transcript at ``path`` (its stem is the session id). Raises ``OSError`` when
    it cannot be read; bad lines inside it are skipped."""
    transcript = read_transcript(path)
    surfaced, units = surfaced_memories(transcript)
    return SessionContext(path.stem, recently_used_tools(transcript), surfaced, units)


@dataclass(frozen=True, slots=True)
class RecallInputs:
    """The arguments of ``recall()`` besides the query: ``recent_tools``, ``surfaced`` (paths)
    and ``surfaced_units`` (``None``: recall counts the surfaced files itself)."""

    recent_tools: tuple[str, ...] = ()
    surfaced: tuple[str, ...] = ()
    surfaced_units: int | None = None


def recall_inputs(
    corpus: RecallCorpus,
    *,
    tools: Iterable[str] = (),
    session: SessionContext | None = None,
    surfaced: Iterable[str] = (),
) -> RecallInputs:
    """The inputs of one recall. ``tools``: the recently used tools in order (a UI fills its
    tools box with the session's, then the user's); ``session``: a transcript's context;
    ``surfaced``: more paths already surfaced (``--surfaced``).

    With a session, the surfaced paths are ``surfaced`` then the session's, and their weight is
    the session's count plus the size of ``surfaced`` today (``surfaced_size``); without one,
    the weight is left to recall."""
    given = unique(surfaced)
    if session is None:
        return RecallInputs(tuple(unique(tools)), tuple(given), None)
    return RecallInputs(
        tuple(unique(tools)),
        (*given, *session.surfaced),
        session.units + surfaced_size(corpus, given),
    )
