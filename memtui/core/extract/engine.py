"""``extract()``: one extraction pass over a session transcript (docs/behaviour.md §7).

1. Lock the session (another pass running → skipped, nothing moves).
2. Read the transcript; the unread range is everything after the cursor.
3. Nothing new → skipped. **Mutual exclusion**: the main agent wrote a file inside the memory
   dir in the range (``Write``/``Edit`` ``file_path`` inside it) → skipped, and the cursor moves
   past the range (the agent had the full context; its memory is better than ours).
4. Run the extractor (``offline``, ``claude``, or ``auto``: claude when an API key is set or a
   client is given, else offline; in ``auto`` a failed claude run falls back to offline).
5. Each finding becomes a proposal: into the inbox (default), or written through the normal
   write path with ``apply=True`` (the reference's behaviour; ``originSessionId`` recorded).
6. Only then the cursor moves to the last entry read. Any failure (``ExtractorError``) leaves
   it where it was, so the next pass reads the range again.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from memtui.core.writes.edits import ApplyError, ConflictError, EditError, apply_plan
from memtui.core.extract.base import (
    Draft,
    ExtractionRequest,
    Extractor,
    ExtractorError,
    ExtractorName,
)
from memtui.core.extract.autoextract import AutoExtractStatus, check_autoextract
from memtui.core.extract.cursor import Cursor, CursorStore
from memtui.core.extract.offline import OfflineExtractor
from memtui.core.memory.headers import scan_headers
from memtui.core.memory.catalogdb import CatalogDB
from memtui.core.extract.inbox import (
    Inbox,
    Proposal,
    ProposalSource,
    free_path,
    proposal_id,
    proposal_plan,
)
from memtui.core.writes.journal import Journal
from memtui.core.places.locations import Locations
from memtui.core.places.release import Release, release_of
from memtui.core.sessions.transcripts import Transcript, read_transcript, writes_inside

if TYPE_CHECKING:
    import anthropic

ExtractorChoice = Literal["auto", "claude", "offline"]
EXTRACTOR_CHOICES: tuple[ExtractorChoice, ...] = ("auto", "claude", "offline")


@dataclass(frozen=True, slots=True)
class ExtractionResult:
    """The outcome of one pass.

    - ``skipped``: why nothing was extracted (``None`` when the extractor ran);
    - ``cursor_before`` / ``cursor``: the cursor's message uuid before and after;
    - ``start`` / ``end``: the entry range read (``entries[start:end]``);
    - ``extractor``: which one ran (``None`` when skipped), ``heuristic``: its findings are;
    - ``proposals``: every finding of this pass (already-known ones included);
      ``added``: ids newly put in the inbox; ``written``: relpaths written (``apply=True``);
    - ``agent_writes``: memory files the main agent wrote in the range (mutual exclusion);
    - ``notes``: other things worth saying (fallbacks, duplicates).
    """

    transcript_path: Path
    session_id: str | None
    skipped: str | None
    cursor_before: str | None
    cursor: str | None
    start: int
    end: int
    extractor: ExtractorName | None = None
    heuristic: bool = False
    proposals: tuple[Proposal, ...] = ()
    added: tuple[str, ...] = ()
    written: tuple[str, ...] = ()
    agent_writes: tuple[str, ...] = ()
    notes: tuple[str, ...] = field(default=())

    def to_json(self) -> dict[str, Any]:
        """The ``memtui extract --json`` shape: the issue's ``{skipped, cursor, proposals:
        [{path, type, name, description, body, source: {session_id, message_uuid}}], written}``
        (each proposal also carries ``id``, ``kind``, ``extractor``, ``heuristic``, ``status``…,
        see ``Proposal.to_json``) plus ``extractor``, ``heuristic``, ``session_id``,
        ``transcript``, ``range`` ``[start, end]``, ``added``, ``agent_writes``, ``notes``."""
        return {
            "skipped": self.skipped,
            "cursor": self.cursor,
            "proposals": [p.to_json() for p in self.proposals],
            "written": list(self.written),
            "extractor": self.extractor,
            "heuristic": self.heuristic,
            "session_id": self.session_id,
            "transcript": str(self.transcript_path),
            "range": [self.start, self.end],
            "added": list(self.added),
            "agent_writes": list(self.agent_writes),
            "notes": list(self.notes),
        }


def resolve_extractor(
    choice: ExtractorChoice,
    *,
    state_dir: Path,
    client: anthropic.Anthropic | None = None,
    model: str | None = None,
    environ: Mapping[str, str] | None = None,
    cwd: Path | None = None,
    on_event: Callable[[Any], None] | None = None,
    release: Release | None = None,
) -> Extractor:
    """The extractor for ``choice``. ``auto``: claude when ``client`` is given or an API key is
    in the environment (``recall.has_credentials``), else offline. ``claude`` without a client
    makes one with memtui's timeouts (``recall.make_client``). ``release``: the flavor's CLI
    release, whose extraction prompt, permissions and turn limit the claude extractor uses."""
    from memtui.core.recall.claude import has_credentials

    if choice == "offline" or (choice == "auto" and client is None and not has_credentials(environ)):
        return OfflineExtractor()
    from memtui.core.extract.claude import ClaudeExtractor

    return ClaudeExtractor(client=client, model=model, state_dir=state_dir, cwd=cwd, on_event=on_event, release=release)


def _session_of(transcript: Transcript, path: Path) -> str:
    return transcript.session_id or path.stem


def _last_position(transcript: Transcript, start: int, end: int, previous: Cursor | None) -> tuple[str | None, int]:
    for entry in reversed(transcript.entries[start:end]):
        if entry.uuid:
            return entry.uuid, entry.index
    if end > start:
        return None, end - 1
    return (previous.message_uuid, previous.entry_index) if previous else (None, -1)


def draft_id(draft: Draft, session_id: str) -> str:
    """The proposal id ``draft`` gets (see ``inbox.proposal_id``)."""
    if draft.kind == "update":
        content = f"{draft.path}\0{draft.text}"
    else:
        content = f"{draft.type}\0{draft.description}\0{draft.body}"
    return proposal_id(session_id, draft.message_uuid, draft.kind, content)


def _proposal(draft: Draft, memory_dir: Path, session_id: str, transcript: Path, name: ExtractorName,
              heuristic: bool, now: datetime, taken: set[str]) -> Proposal:
    path = draft.path if draft.path is not None else free_path(memory_dir, draft.type, draft.name, taken)
    return Proposal(
        id=draft_id(draft, session_id),
        kind=draft.kind,
        path=path,
        type=draft.type,
        name=draft.name,
        description=draft.description,
        body=draft.body,
        source=ProposalSource(session_id, draft.message_uuid, str(transcript), draft.quote),
        extractor=name,
        heuristic=heuristic,
        created=now.isoformat(),
        text=draft.text,
        before_sha256=draft.before_sha256,
        notes=draft.notes,
    )


def unread_range(transcript_path: Path, memory_dir: Path, state_dir: Path, *, ignore_cursor: bool = False) -> tuple[Transcript, int, int]:
    """The transcript and the range a pass would read now (``entries[start:end]``: after the
    session's cursor, or all with ``ignore_cursor``), without taking the lock or moving the
    cursor. Raises ``OSError`` when the transcript cannot be read."""
    transcript = read_transcript(transcript_path)
    session = _session_of(transcript, transcript_path)
    key = transcript_path.stem if transcript_path.stem.startswith("agent-") else session
    previous = CursorStore(state_dir, memory_dir).get(key)
    start = 0
    if previous is not None and not ignore_cursor:
        start, _ = previous.start_in(transcript)
    return transcript, start, len(transcript.entries)


def explain_extraction(transcript_path: Path, locations: Locations, state_dir: Path, *, ignore_cursor: bool = False,
                       interactive: bool | None = None) -> AutoExtractStatus | None:
    """What the flavor's CLI release would do with the range a pass would read now (its gates,
    see :mod:`memtui.core.extract.autoextract`), or ``None`` for a flavor with no release.
    Writes nothing. Raises ``OSError`` when the transcript cannot be read."""
    release = release_of(locations.flavor)
    if release is None:
        return None
    transcript, start, end = unread_range(transcript_path, locations.memory_dir, state_dir, ignore_cursor=ignore_cursor)
    return check_autoextract(transcript, start, end, locations.memory_dir, release, settings=locations.settings,
                             auto_memory_enabled=locations.auto_memory_enabled, auto_memory_source=locations.auto_memory_source,
                             project_root=locations.project_root, interactive=interactive)


def extract(
    transcript_path: Path,
    memory_dir: Path,
    state_dir: Path,
    now: datetime,
    *,
    extractor: ExtractorChoice | Extractor = "auto",
    apply: bool = False,
    client: anthropic.Anthropic | None = None,
    model: str | None = None,
    environ: Mapping[str, str] | None = None,
    ignore_cursor: bool = False,
    cancel: threading.Event | None = None,
    on_event: Callable[[Any], None] | None = None,
    release: Release | None = None,
) -> ExtractionResult:
    """One extraction pass over ``transcript_path`` for ``memory_dir`` (see the module
    docstring). ``ignore_cursor``: read the whole transcript (the cursor still moves after).
    ``release``: the flavor's CLI release (the claude extractor then sends its prompt).

    Raises ``OSError`` (the transcript cannot be read; the state dir cannot be written) and
    ``ExtractorError`` (the extractor or a write failed; the cursor did not move).
    """
    transcript = read_transcript(transcript_path)
    session = _session_of(transcript, transcript_path)
    store = CursorStore(state_dir, memory_dir)
    # One cursor per transcript file: a subagent's agent-*.jsonl shares its parent's sessionId
    # but is another conversation; keyed by session id, each pass would reset the other's cursor.
    key = transcript_path.stem if transcript_path.stem.startswith("agent-") else session
    lock = store.lock(key)
    if not lock.acquire():
        held = store.get(key)
        uuid = held.message_uuid if held else None
        return ExtractionResult(transcript_path, session, "another extraction of this session is running", uuid, uuid, 0, 0)
    with lock:
        previous = store.get(key)  # read under the lock: another pass may just have moved it
        before = previous.message_uuid if previous else None
        notes: list[str] = []
        start = 0
        if previous is not None and not ignore_cursor:
            start, note = previous.start_in(transcript)
            if note:
                notes.append(note)
        end = len(transcript.entries)

        def done(**kw: Any) -> ExtractionResult:
            uuid, index = _last_position(transcript, start, end, previous)
            store.set(Cursor(key, uuid, index, now.isoformat(), str(transcript_path)))
            return ExtractionResult(transcript_path, session, cursor_before=before, cursor=uuid, start=start, end=end,
                                    notes=tuple(notes), **kw)

        fresh = [e for e in transcript.entries[start:end] if not e.is_sidechain and e.type in ("user", "assistant")]
        if not fresh:
            if start >= end:
                return ExtractionResult(transcript_path, session, "nothing new since the cursor", before, before, start, end, notes=tuple(notes))
            return done(skipped="no new messages since the cursor")
        agent = writes_inside(transcript, memory_dir, start, end)
        if agent:
            paths = tuple(dict.fromkeys(str(c.input.get("file_path")) for c in agent))
            return done(skipped=f"the agent wrote memory itself in this range ({len(paths)} file(s)); extraction skipped",
                        agent_writes=paths)

        chosen = extractor if not isinstance(extractor, str) else resolve_extractor(
            extractor, state_dir=state_dir, client=client, model=model, environ=environ,
            cwd=Path(transcript.cwds[0]) if transcript.cwds else None, on_event=on_event, release=release)
        headers = scan_headers(memory_dir, cache=CatalogDB.for_memory_dir(state_dir, memory_dir))
        request = ExtractionRequest(transcript, start, end, memory_dir, session, now, headers, cancel)
        try:
            drafts, run_notes = chosen.run(request)
        except ExtractorError as exc:
            if extractor != "auto" or chosen.name == "offline":
                raise
            notes.append(f"the claude extractor failed ({exc.reason}); used the offline extractor instead")
            chosen = OfflineExtractor()
            drafts, run_notes = chosen.run(request)
        notes.extend(run_notes)

        inbox = Inbox(state_dir, memory_dir)
        taken = inbox.taken_paths()
        proposals: list[Proposal] = []
        added: list[str] = []
        written: list[str] = []
        journal = Journal(state_dir, memory_dir)
        for draft in drafts:
            known = inbox.has(draft_id(draft, session))
            proposal = inbox.get(draft_id(draft, session)) if known else _proposal(
                draft, memory_dir, session, transcript_path, chosen.name, chosen.heuristic, now, taken)
            proposals.append(proposal)
            if known:
                notes.append(f"already proposed: {proposal.id} ({proposal.path}, {proposal.status})")
                continue
            taken.add(proposal.path)
            if not apply:
                inbox.add(proposal)
                added.append(proposal.id)
                continue
            try:
                plan = proposal_plan(memory_dir, proposal)
                apply_plan(memory_dir, plan, journal, now)
            except (EditError, ConflictError, ApplyError, OSError) as exc:
                raise ExtractorError(f"writing {proposal.path} failed: {exc}") from exc
            rel = plan.changes[0].relpath
            written.append(rel)
            inbox.add(replace(proposal, status="accepted", decided=now.isoformat(), written=rel))
        return done(skipped=None, extractor=chosen.name, heuristic=chosen.heuristic, proposals=tuple(proposals),
                    added=tuple(added), written=tuple(written))
