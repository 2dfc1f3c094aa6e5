"""The source conversation of a proposal or of a memory (provenance).

A proposal knows its transcript and message; a memory written from extraction carries
``originSessionId`` (docs/behaviour.md §4.2), and memtui's inbox remembers which proposal wrote which file.
These functions turn either into a short excerpt of the conversation for display.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from memtui.core.extract.inbox import ORIGIN_KEY, Inbox, Proposal
from memtui.core.memory.memories import Memory
from memtui.core.sessions.transcripts import Entry, is_human_turn, read_transcript

# memtui's choices: turns shown around the source message, and characters kept per turn.
TURNS_BEFORE = 3
TURNS_AFTER = 2
TURN_MAX_CHARS = 600


@dataclass(frozen=True, slots=True)
class ExcerptTurn:
    """One turn: ``role`` (``user`` = a person typed it; ``assistant``), ``text`` (tool calls
    summarised as ``[Tool target]``, cut to 600 characters with ``…``), its ``uuid`` and
    ``timestamp``, and ``is_source``: the message the memory came from."""

    role: Literal["user", "assistant"]
    text: str
    uuid: str | None
    timestamp: str | None
    is_source: bool = False


@dataclass(frozen=True, slots=True)
class SourceExcerpt:
    """The excerpt: ``session_id``, ``transcript_path`` (``None`` when not found), ``turns``,
    and ``error`` (a sentence: transcript missing or unreadable, message not found)."""

    session_id: str | None
    transcript_path: Path | None
    turns: tuple[ExcerptTurn, ...] = ()
    error: str | None = None


def _turn_text(entry: Entry) -> str:
    parts: list[str] = []
    for block in entry.content:
        if block.type == "text" and block.text.strip():
            parts.append(block.text.strip())
        elif block.type == "tool_use" and block.name:
            target = block.input.get("file_path") or block.input.get("command") or block.input.get("pattern") or ""
            parts.append(f"[{block.name} {target}]".replace(" ]", "]"))
    text = "\n".join(parts)
    return text if len(text) <= TURN_MAX_CHARS else text[: TURN_MAX_CHARS - 1] + "…"


def _visible(entry: Entry, sidechains: bool = False) -> bool:
    if entry.is_sidechain and not sidechains:
        return False
    if entry.type == "assistant":
        return any(b.type in ("text", "tool_use") for b in entry.content)
    return is_human_turn(entry)


def source_excerpt(transcript_path: Path, message_uuid: str | None, session_id: str | None = None, *, sidechains: bool = False) -> SourceExcerpt:
    """Up to 3 turns before and 2 after the entry ``message_uuid`` in ``transcript_path``
    (human turns and assistant turns with text or tool calls; tool results left out; a
    sub-agent's turns only with ``sidechains``, for a sub-agent's own transcript). With
    ``message_uuid=None`` or not found: the last 6 turns, with ``error`` saying the message was
    not found (``None`` → no error). Never raises."""
    try:
        transcript = read_transcript(transcript_path)
    except OSError as exc:
        return SourceExcerpt(session_id, None, (), f"cannot read {transcript_path}: {exc.strerror or exc}")
    turns = [e for e in transcript.entries if _visible(e, sidechains)]
    pos = next((i for i, e in enumerate(transcript.entries) if message_uuid and e.uuid == message_uuid), None)
    error = None
    if pos is None:
        if message_uuid is not None:
            error = f"message {message_uuid} is not in the transcript any more"
        window = turns[-(TURNS_BEFORE + TURNS_AFTER + 1) :]
        source_index = -1
    else:
        # The visible turn at or just before the source entry.
        source_index = max((i for i, e in enumerate(turns) if e.index <= pos), default=0)
        window = turns[max(0, source_index - TURNS_BEFORE) : source_index + TURNS_AFTER + 1]
    out = tuple(
        ExcerptTurn("user" if e.type == "user" else "assistant", _turn_text(e), e.uuid, e.timestamp,
                    source_index >= 0 and e is turns[source_index])
        for e in window
    )
    return SourceExcerpt(session_id or transcript.session_id, transcript_path, out, error)


def find_transcript(sessions_dir: Path, session_id: str) -> Path | None:
    """``<sessions_dir>/<session_id>.jsonl`` when it exists (the reference names a session's
    transcript after its id), else ``None``."""
    if not session_id or "/" in session_id or "\\" in session_id or session_id.startswith("."):
        return None
    path = sessions_dir / f"{session_id}.jsonl"
    return path if path.is_file() else None


def proposal_excerpt(proposal: Proposal, sessions_dir: Path | None = None) -> SourceExcerpt:
    """The conversation around ``proposal``'s source message: its recorded transcript, else the
    session's transcript in ``sessions_dir``."""
    src = proposal.source
    path = Path(src.transcript_path) if src.transcript_path else None
    if (path is None or not path.is_file()) and sessions_dir is not None and src.session_id:
        path = find_transcript(sessions_dir, src.session_id) or path
    if path is None:
        return SourceExcerpt(src.session_id, None, (), "the proposal records no transcript")
    return source_excerpt(path, src.message_uuid, src.session_id)


def memory_excerpt(memory: Memory, inbox: Inbox, sessions_dir: Path) -> SourceExcerpt | None:
    """The source conversation of a memory: the accepted proposal that wrote it (exact message),
    else its ``originSessionId`` transcript in ``sessions_dir`` (last turns). ``None`` when the
    memory has no ``originSessionId`` and no proposal wrote it."""
    for proposal in reversed(inbox.all()):
        if proposal.status == "accepted" and proposal.written == memory.relpath:
            return proposal_excerpt(proposal, sessions_dir)
    origin = memory.frontmatter.get(ORIGIN_KEY)
    if not isinstance(origin, str) or not origin:
        return None
    path = find_transcript(sessions_dir, origin)
    if path is None:
        return SourceExcerpt(origin, None, (), f"no transcript {origin}.jsonl in {sessions_dir}")
    return source_excerpt(path, None, origin)
