"""The inbox: memories an extractor proposed, waiting for a person to accept, edit or reject.

By default memtui's extractors do not write into the memory dir (the reference agent does):
each finding becomes a *proposal*, one JSON file in memtui's state dir
(``<state>/memdirs/<slug of the memory dir>/inbox/<id>.json``, written atomically; never
inside the memory dir, whose every ``*.md`` the agent recalls). Accepting one goes through
the normal write path (:mod:`memtui.core.writes.edits`: atomic, journaled, undoable, index entry
added) and records ``originSessionId`` in the new memory's frontmatter (docs/behaviour.md §4.2), so the
conversation it came from can be found again.

Proposal kinds: ``create`` (a new memory: ``type``/``name``/``description``/``body``) and
``update`` (the claude extractor rewrote an existing memory: ``text`` is the whole new file,
``before_sha256`` the hash of the bytes it was made from — accepting refuses with
``ConflictError`` when the file changed since).

Statuses: ``pending`` → ``accepted`` (``written`` = the relpath) or ``rejected``. Decided
proposals stay on disk so the same finding is not proposed again (ids are derived from the
source message and the content). While a proposal is being written it carries the writer's PID
(``accepting``) and its journal entry names it (``meta.inbox``): a crash in between is settled
by the next reader from the journal.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from memtui.core.base.jsontext import dumps_exact, loads_checked
from memtui.core.base.safe_read import MAX_STATE_BYTES, read_text_regular
from memtui.core.base.process import MAX_PID, pid_alive
from memtui.core.writes.atomic import atomic_write_bytes
from memtui.core.writes.edits import (
    ConflictError,
    EditError,
    FileChange,
    Plan,
    apply_plan,
    plan_create,
    suggest_filename,
    validate_relpath,
)
from memtui.core.memory.frontmatter import parse_frontmatter
from memtui.core.writes.journal import Journal, JournalEntry, read_or_none, sha256_hex
from memtui.core.memory.memories import MEMORY_TYPES, MemoryType
from memtui.core.writes.rewrite import set_top_level_key
from memtui.core.places.statedir import memdir_state

ProposalKind = Literal["create", "update"]
ProposalStatus = Literal["pending", "accepted", "rejected"]
# The frontmatter key the reference agent uses for a memory's source conversation (docs/behaviour.md §4.2).
ORIGIN_KEY = "originSessionId"
# Proposal ids: this many hex digits of a SHA-256 (memtui's choice; 48 bits, ample per memory dir).
ID_LENGTH = 12


class InboxError(ValueError):
    """An inbox operation that cannot be done: unknown or ambiguous id, a proposal already
    decided, an edit that makes the proposal invalid."""


@dataclass(frozen=True, slots=True)
class ProposalSource:
    """Where a proposal came from: ``session_id``; ``message_uuid`` of the transcript entry
    that said it (the human turn for the offline extractor; the last entry of the range for
    the claude extractor); ``transcript_path`` (absolute, as read); ``quote``: the sentence
    the offline extractor matched, else ``None``."""

    session_id: str | None
    message_uuid: str | None
    transcript_path: str | None = None
    quote: str | None = None

    def to_json(self) -> dict[str, Any]:
        """``{session_id, message_uuid, transcript_path, quote}``."""
        return {
            "session_id": self.session_id,
            "message_uuid": self.message_uuid,
            "transcript_path": self.transcript_path,
            "quote": self.quote,
        }


@dataclass(frozen=True, slots=True)
class Proposal:
    """One proposed memory. ``path``: POSIX relpath in the memory dir it would be written to.
    ``extractor``: ``offline`` or ``claude``; ``heuristic``: found by cue matching, not judged
    by a model (show it). ``created`` / ``decided``: ISO-8601. ``edited``: changed by a person
    before acceptance. ``text`` / ``before_sha256``: for ``update`` proposals only."""

    id: str
    kind: ProposalKind
    path: str
    type: MemoryType
    name: str
    description: str
    body: str
    source: ProposalSource
    extractor: str
    heuristic: bool
    created: str
    status: ProposalStatus = "pending"
    decided: str | None = None
    written: str | None = None
    edited: bool = False
    text: str | None = None
    before_sha256: str | None = None
    notes: tuple[str, ...] = field(default=())
    entry: str | None = None  # the journal entry that wrote it (an undo of it reopens the proposal)
    accepting: int | None = None  # PID of a process writing it now (a crash leaves it: see Inbox.all)

    def to_json(self) -> dict[str, Any]:
        """The stored (and ``--json``) shape: the issue's ``{path, type, name, description,
        body, source: {session_id, message_uuid}}`` plus ``id``, ``kind``, ``extractor``,
        ``heuristic``, ``status``, ``created``, ``decided``, ``written``, ``edited``, ``text``,
        ``before_sha256``, ``notes``."""
        return {
            "id": self.id,
            "kind": self.kind,
            "path": self.path,
            "type": self.type,
            "name": self.name,
            "description": self.description,
            "body": self.body,
            "source": self.source.to_json(),
            "extractor": self.extractor,
            "heuristic": self.heuristic,
            "status": self.status,
            "created": self.created,
            "decided": self.decided,
            "written": self.written,
            "edited": self.edited,
            "text": self.text,
            "before_sha256": self.before_sha256,
            "notes": list(self.notes),
            "entry": self.entry,
            "accepting": self.accepting,
        }

    @classmethod
    def from_json(cls, raw: dict[str, Any]) -> Proposal:
        """Inverse of ``to_json``. Raises ``KeyError``/``TypeError``/``ValueError`` on a bad file:
        not an object, an unknown type, kind or status, or a field of the wrong JSON type (the
        optional texts must be text or ``null``, ``notes`` a list of texts). ``accepting`` that
        is not a PID (``MAX_PID``) reads as ``None``."""
        if not isinstance(raw, dict):
            raise ValueError("a proposal is a JSON object")
        src = raw.get("source") or {}
        if not isinstance(src, dict) or not all(_text_or_none(src.get(k)) for k in ("session_id", "message_uuid", "transcript_path", "quote")):
            raise ValueError("bad proposal source")
        if raw["type"] not in MEMORY_TYPES or raw.get("kind", "create") not in ("create", "update") or raw.get("status", "pending") not in ("pending", "accepted", "rejected"):
            raise ValueError("bad proposal type, kind or status")
        if not all(_text_or_none(raw.get(k)) for k in ("decided", "written", "text", "before_sha256", "entry")):
            raise ValueError("bad proposal field")
        notes = raw.get("notes") or []
        if not isinstance(notes, list) or not all(isinstance(n, str) for n in notes):
            raise ValueError("bad proposal notes")
        accepting = raw.get("accepting")
        return cls(
            id=str(raw["id"]),
            kind=raw.get("kind", "create"),
            path=str(raw["path"]),
            type=raw["type"],
            name=str(raw["name"]),
            description=str(raw["description"]),
            body=str(raw["body"]),
            source=ProposalSource(src.get("session_id"), src.get("message_uuid"), src.get("transcript_path"), src.get("quote")),
            extractor=str(raw.get("extractor", "")),
            heuristic=bool(raw.get("heuristic", False)),
            created=str(raw.get("created", "")),
            status=raw.get("status", "pending"),
            decided=raw.get("decided"),
            written=raw.get("written"),
            edited=bool(raw.get("edited", False)),
            text=raw.get("text"),
            before_sha256=raw.get("before_sha256"),
            notes=tuple(notes),
            entry=raw.get("entry"),
            accepting=accepting if isinstance(accepting, int) and not isinstance(accepting, bool) and 0 < accepting <= MAX_PID else None,
        )


def _text_or_none(value: object) -> bool:
    return value is None or isinstance(value, str)


def proposal_id(session_id: str | None, message_uuid: str | None, kind: str, content: str) -> str:
    """The id of a proposal: the first 12 hex digits of SHA-256 over its session, source
    message, kind and content (for a ``create``: type, description and body; for an
    ``update``: path and new text), so re-extracting the same range proposes nothing new."""
    key = "\0".join([session_id or "", message_uuid or "", kind, content])
    return hashlib.sha256(key.encode("utf-8")).hexdigest()[:ID_LENGTH]


@dataclass(frozen=True, slots=True)
class AcceptResult:
    """The outcome of an accept: the decided ``proposal``, the journal ``entry`` (undo it with
    ``memtui undo``), and the ``relpath`` written."""

    proposal: Proposal
    entry: JournalEntry
    relpath: str


def proposal_plan(memory_dir: Path, proposal: Proposal) -> Plan:
    """The edit plan accepting ``proposal`` would apply (preview it with ``Plan.diff()``).

    ``create``: ``plan_create`` with ``originSessionId`` in the frontmatter (and the index
    entry). ``update``: the new text, with ``originSessionId`` set, checked against
    ``before_sha256``. Raises ``EditError`` (the target exists, a bad name) or
    ``memtui.core.writes.edits.ConflictError`` (an update whose file changed)."""
    origin = proposal.source.session_id
    if proposal.kind == "create":
        return plan_create(
            memory_dir,
            proposal.type,
            proposal.name,
            proposal.description,
            relpath=proposal.path,
            body=proposal.body,
            extra={ORIGIN_KEY: origin} if origin else None,
        )

    rel = validate_relpath(memory_dir, proposal.path)
    before = read_or_none(memory_dir / rel)
    if sha256_hex(before) != proposal.before_sha256:
        raise ConflictError(rel, proposal.before_sha256, sha256_hex(before))
    text = proposal.text or ""
    if origin:
        text = set_top_level_key(text, ORIGIN_KEY, origin).text
    after = text.encode("utf-8")
    if after == before:
        raise EditError(f"{rel}: the proposal changes nothing")
    return Plan(f"Update {rel} (extracted)", (FileChange(rel, before, after),), action="edit")


class Inbox:
    """The proposals of one memory dir, stored in ``state_dir``. Cheap to construct; every
    method reads the disk afresh (another process — the Stop hook — may add proposals)."""

    def __init__(self, state_dir: Path, memory_dir: Path) -> None:
        self.memory_dir = memory_dir
        self.state_dir = state_dir
        self.root = memdir_state(state_dir, memory_dir) / "inbox"

    def _file(self, ident: str) -> Path:
        return self.root / f"{ident}.json"

    def _save(self, proposal: Proposal) -> None:
        data = dumps_exact(proposal.to_json(), indent=1).encode("utf-8")
        atomic_write_bytes(self._file(proposal.id), data)

    def all(self) -> list[Proposal]:
        """Every stored proposal, oldest first (then by id). Unreadable files are skipped."""
        if not self.root.is_dir():
            return []
        found: list[Proposal] = []
        for child in self.root.glob("*.json"):
            try:
                found.append(Proposal.from_json(loads_checked(read_text_regular(child, MAX_STATE_BYTES, errors="strict"))))
            except (OSError, ValueError, KeyError, TypeError):
                continue
        found.sort(key=lambda p: (p.created, p.id))
        return self._reconcile(found)

    def _reconcile(self, proposals: list[Proposal]) -> list[Proposal]:
        """Settle proposals from the journal: an accepted proposal whose write was undone
        (``memtui undo``) is pending again; one whose accepting process died (a crash between
        the write and the proposal's own update) is accepted when the journal has its write
        applied, else pending again."""
        accepted = [p for p in proposals if p.status == "accepted" and p.entry]
        cut_short = {p.id for p in proposals if p.status == "pending" and p.accepting is not None and not pid_alive(p.accepting)}
        if not accepted and not cut_short:
            return proposals
        entries = Journal(self.state_dir, self.memory_dir).entries()
        undone = {e.undoes for e in entries if e.status == "applied" and e.undoes}
        wrote = {
            str(e.meta.get("inbox")): e
            for e in entries
            if e.status == "applied" and e.id not in undone and isinstance(e.meta, dict) and e.meta.get("inbox")
        }
        out: list[Proposal] = []
        for p in proposals:
            if p.status == "accepted" and p.entry in undone:
                p = replace(p, status="pending", decided=None, written=None, entry=None)
                self._save(p)
            elif p.id in cut_short:
                entry = wrote.get(p.id)
                if entry is not None:
                    written = entry.meta.get("written")
                    p = replace(p, status="accepted", decided=entry.time, written=str(written) if written else None, entry=entry.id, accepting=None)
                else:
                    p = replace(p, accepting=None)
                self._save(p)
            out.append(p)
        return out

    def pending(self) -> list[Proposal]:
        """The proposals waiting for a decision, oldest first (the inbox view's list)."""
        return [p for p in self.all() if p.status == "pending"]

    def count(self) -> int:
        """How many proposals are pending (the Memories pane's inbox badge)."""
        return len(self.pending())

    def taken_paths(self) -> set[str]:
        """Paths of pending proposals (new proposals must not collide with them)."""
        return {p.path for p in self.pending()}

    def has(self, ident: str) -> bool:
        """A proposal with exactly this id is stored, in any status."""
        return self._file(ident).exists()

    def add(self, proposal: Proposal) -> bool:
        """Store ``proposal``; ``False`` (nothing written) when a proposal with its id exists in
        any status. Raises ``OSError``."""
        if self._file(proposal.id).exists():
            return False
        self._save(proposal)
        return True

    def get(self, ident: str) -> Proposal:
        """The proposal whose id is ``ident`` or starts with it. Raises ``InboxError`` when none
        or several match."""
        ident = ident.strip()
        matches = [p for p in self.all() if p.id == ident] or [p for p in self.all() if ident and p.id.startswith(ident)]
        if not matches:
            raise InboxError(f"no proposal {ident!r} in the inbox")
        if len(matches) > 1:
            raise InboxError(f"{ident!r} matches {len(matches)} proposals: {', '.join(p.id for p in matches)}")
        return matches[0]

    def _pending(self, ident: str) -> Proposal:
        proposal = self.get(ident)
        if proposal.status != "pending":
            raise InboxError(f"proposal {proposal.id} was already {proposal.status}")
        return proposal

    def update(
        self,
        ident: str,
        *,
        type: MemoryType | None = None,
        name: str | None = None,
        description: str | None = None,
        body: str | None = None,
        path: str | None = None,
        text: str | None = None,
    ) -> Proposal:
        """Edit a pending proposal (the "edit" of edit-then-accept) and store it, ``edited``
        set. ``path`` is checked like any memory name; changing ``type`` or ``name`` without a
        ``path`` keeps the path. Raises ``InboxError``, ``EditError``."""
        proposal = self._pending(ident)
        changes: dict[str, Any] = {}
        if type is not None:
            if type not in MEMORY_TYPES:
                raise InboxError(f"{type!r} is not one of {', '.join(MEMORY_TYPES)}")
            changes["type"] = type
        if name is not None:
            if not name.strip():
                raise InboxError("a name is required")
            changes["name"] = " ".join(name.split())
        if description is not None:
            if not description.strip():
                raise InboxError("a one-line description is required: it is what recall matches on")
            changes["description"] = " ".join(description.split())
        if body is not None:
            changes["body"] = body if body.endswith("\n") or not body else body + "\n"
        if text is not None:
            if proposal.kind != "update":
                raise InboxError("only an update proposal has a whole text; edit name/description/body instead")
            changes["text"] = text
        if path is not None:
            changes["path"] = validate_relpath(self.memory_dir, path)
        if not changes:
            return proposal
        updated = replace(proposal, edited=True, **changes)
        self._save(updated)
        return updated

    def update_from_text(self, ident: str, text: str) -> Proposal:
        """Edit a pending proposal from the whole file text a person edited (the editor shows
        the file accepting would write): an ``update`` proposal takes the text as is; a
        ``create`` proposal takes ``name``/``description``/``type`` from the frontmatter (a type
        outside the four is refused) and the body after it. Raises ``InboxError``, ``EditError``."""
        proposal = self._pending(ident)
        if proposal.kind == "update":
            return self.update(ident, text=text)
        fm = parse_frontmatter(text)
        if not fm.present or fm.error is not None:
            raise InboxError("the edited text needs its frontmatter (name, description, type)")
        data = fm.data
        mem_type = data.get("type")
        if mem_type is not None and mem_type not in MEMORY_TYPES:
            raise InboxError(f"type {mem_type!r} is not one of {', '.join(MEMORY_TYPES)}")
        return self.update(
            ident,
            type=mem_type,
            name=str(data["name"]) if data.get("name") is not None else None,
            description=str(data["description"]) if data.get("description") is not None else None,
            body=fm.body.lstrip("\r\n"),
        )

    def plan(self, ident: str) -> Plan:
        """The plan accepting ``ident`` would apply (for a preview). See ``proposal_plan``."""
        return proposal_plan(self.memory_dir, self._pending(ident))

    def accept(self, ident: str, journal: Journal, now: datetime, **edits: Any) -> AcceptResult:
        """Write the proposal through the normal write path and mark it ``accepted``.

        ``edits``: keyword arguments of ``update`` applied first (edit-then-accept in one call).
        Raises ``InboxError``, ``EditError`` (e.g. the path exists now: edit ``path``),
        ``ConflictError``, ``ApplyError`` — the proposal then stays pending."""
        proposal = self.update(ident, **edits) if edits else self._pending(ident)
        plan = proposal_plan(self.memory_dir, proposal)
        rel = plan.changes[0].relpath
        # marked first: a crash after the write but before the proposal's update is settled
        # from the journal (see ``_reconcile``)
        self._save(replace(proposal, accepting=os.getpid()))
        try:
            entry = apply_plan(self.memory_dir, plan, journal, now, meta={"inbox": proposal.id, "written": rel})
        except BaseException:
            self._save(proposal)
            raise
        done = replace(proposal, status="accepted", decided=now.isoformat(), written=rel, entry=entry.id, accepting=None)
        self._save(done)
        return AcceptResult(done, entry, rel)

    def reject(self, ident: str, now: datetime) -> Proposal:
        """Mark a pending proposal ``rejected`` (kept, so it is not proposed again)."""
        proposal = self._pending(ident)
        done = replace(proposal, status="rejected", decided=now.isoformat())
        self._save(done)
        return done


def free_path(memory_dir: Path, mem_type: MemoryType, name: str, taken: set[str]) -> str:
    """``suggest_filename(type, name)``, or with ``_2``, ``_3``… before ``.md`` when that file
    exists in ``memory_dir`` or is in ``taken``."""
    base = suggest_filename(mem_type, name)
    candidate, n = base, 1
    while candidate in taken or os.path.lexists(memory_dir / candidate):
        n += 1
        candidate = f"{base[:-3]}_{n}.md"
    return candidate
