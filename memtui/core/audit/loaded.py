"""What a session actually loaded, beside what memtui computes now — each difference explained.

A Claude Code 2.1.328 transcript records the instruction files the agent loaded at startup (the
``instructions`` attachment: path, type, content as sent, in load order) and every file a read
loaded later (a ``nested_memory`` attachment after the ``Read``/``Write``/``Edit`` that caused
it; nested ``AGENTS.md`` files as a ``hook_additional_context`` attachment naming the call).
``compare_session`` computes the cascade for the session's cwd as things are now, replays the
session's reads in order (``simulate_read``) and pairs the two, file by file:

- ``same``: both loaded it with the same text;
- ``changed``: both loaded it, the text differs;
- ``recorded-only``: the session loaded it, memtui would not now;
- ``predicted-only``: memtui would load it, the session did not;
- ``moved``: both loaded it, in another order.

Each difference gets a reason: the file changed (or appeared, or went away) since the session
started; the recall gate (``MEMORY.md`` stays out while recall is on); the memory dir the
session used is another one now; a rule that loaded then is conditional now. A difference with
none of these reasons is a **fidelity bug** — memtui's model of the agent is wrong there — and is
marked to be reported.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from memtui.core.base.wording import counted
from memtui.core.base.units import utf16_len
from memtui.core.cascade import CascadeFile, compute_cascade, new_session, simulate_read
from memtui.core.places.locations import Locations
from memtui.core.sessions.background import parse_time
from memtui.core.sessions.projects import TranscriptFile, project_transcripts
from memtui.core.sessions.transcripts import (
    Transcript,
    read_instructions,
    read_nested_memory,
    read_transcript,
)

RowStatus = Literal["same", "changed", "recorded-only", "predicted-only", "moved"]
# The instructions attachment's file types -> memtui's layers (Claude Code 2.1.328).
LAYER_OF_TYPE = {"Managed": "managed", "User": "user", "Project": "project", "Local": "local", "AutoMem": "automem", "TeamMem": "teammem"}
READ_TOOLS = ("Read", "Write", "Edit")
_CONTENTS = re.compile(r"(?:^|\n)Contents of ([^\n]+?):\n\n")
FIDELITY_BUG = "not explained by a change since the session: a fidelity bug in memtui's model — please report it"


class SessionNotFoundError(LookupError):
    """No transcript of this project has the session asked for."""


@dataclass(frozen=True, slots=True)
class LoadedFile:
    """A file as one side loaded it: ``path``, ``layer``, ``chars`` (UTF-16 units) and
    ``content`` (the text as sent)."""

    path: str
    layer: str
    chars: int
    content: str


@dataclass(frozen=True, slots=True)
class Row:
    """One file of the comparison: ``recorded`` / ``predicted`` (``None`` on the side that did
    not load it), ``status``, ``reason`` (``""`` when the same) and ``bug`` (a difference
    nothing explains)."""

    path: str
    recorded: LoadedFile | None
    predicted: LoadedFile | None
    status: RowStatus
    reason: str = ""
    bug: bool = False

    def to_json(self) -> dict[str, Any]:
        """``{path, status, reason, fidelity_bug, recorded: {layer, chars}|null, predicted: …}``."""
        def side(f: LoadedFile | None) -> dict[str, Any] | None:
            return None if f is None else {"layer": f.layer, "chars": f.chars}

        return {"path": self.path, "status": self.status, "reason": self.reason, "fidelity_bug": self.bug,
                "recorded": side(self.recorded), "predicted": side(self.predicted)}


@dataclass(frozen=True, slots=True)
class ReadLoads:
    """One read of the session and what it loaded: ``target``, ``tool``, ``line`` (1-based line
    of the call in the transcript) and the ``rows`` of its comparison."""

    target: str
    tool: str
    line: int
    rows: tuple[Row, ...]

    def to_json(self) -> dict[str, Any]:
        """``{target, tool, line, files: [row…]}``."""
        return {"target": self.target, "tool": self.tool, "line": self.line, "files": [r.to_json() for r in self.rows]}


@dataclass(frozen=True, slots=True)
class SessionLoad:
    """A session's loads beside memtui's prediction (see the module docstring).

    ``session_id``, ``transcript``, ``cwd``, ``started`` (epoch s of its first line),
    ``version`` (the agent's), ``recalled`` (the session has ``relevant_memories``: recall was
    on), ``startup`` rows in recorded order (predicted-only files where memtui would put them),
    ``reads``, ``notes`` (what could not be compared, and why)."""

    session_id: str
    transcript: Path
    cwd: str | None
    started: float | None
    version: str | None
    recalled: bool
    startup: tuple[Row, ...]
    reads: tuple[ReadLoads, ...]
    notes: tuple[str, ...] = ()

    @property
    def differences(self) -> list[Row]:
        """Every row that is not ``same``, startup first."""
        return [r for r in (*self.startup, *(row for rd in self.reads for row in rd.rows)) if r.status != "same"]

    @property
    def bugs(self) -> list[Row]:
        """The differences nothing explains."""
        return [r for r in self.differences if r.bug]

    def to_json(self) -> dict[str, Any]:
        """The ``memtui cascade --session --json`` shape."""
        return {
            "session": self.session_id,
            "transcript": str(self.transcript),
            "cwd": self.cwd,
            "started": None if self.started is None else datetime.fromtimestamp(self.started, UTC).isoformat().replace("+00:00", "Z"),
            "version": self.version,
            "recall_in_session": self.recalled,
            "startup": [r.to_json() for r in self.startup],
            "reads": [r.to_json() for r in self.reads],
            "differences": len(self.differences),
            "fidelity_bugs": len(self.bugs),
            "notes": list(self.notes),
        }


def find_session(locations: Locations, session: str) -> TranscriptFile:
    """The main transcript of ``session`` (an id, a unique prefix of one of 8 hex digits or more:
    ``match_session_id``, or ``latest``: the most recently written) among the project's
    transcripts (the most recently written when one id has several). Raises
    ``SessionNotFoundError`` (an ambiguous prefix: the message lists the ids it starts)."""
    from memtui.core.sessions.sessionid import AmbiguousSessionIdError, match_session_id

    mains = [t for t in project_transcripts(locations) if not t.subagent]
    if not mains:
        raise SessionNotFoundError(f"no session transcripts for this project (looked in {locations.sessions_dir})")
    if session == "latest":
        return max(mains, key=lambda t: (t.mtime_ns, str(t.path)))
    try:
        found = match_session_id(session, (t.session_id for t in mains))
    except AmbiguousSessionIdError as exc:
        raise SessionNotFoundError(str(exc)) from exc
    if found is None:
        raise SessionNotFoundError(f"no session {session!r} among {counted(len(mains), 'session')} of this project")
    return max((t for t in mains if t.session_id == found), key=lambda t: (t.mtime_ns, str(t.path)))


def _mtime(path: str) -> float | None:
    try:
        return os.stat(path).st_mtime
    except (OSError, ValueError):  # ValueError: a NUL byte in a transcript's path names no file
        return None


def _changed_since(path: str, started: float | None) -> str | None:
    """Why ``path`` may read differently now than when the session started, or ``None``."""
    when = _mtime(path)
    if when is None:
        return "the file is gone since the session"
    if started is not None and when > started:
        stamp = datetime.fromtimestamp(when, UTC).strftime("%Y-%m-%d %H:%M")
        return f"the file changed since the session started (modified {stamp} UTC)"
    return None


def _predicted(f: CascadeFile, text: str | None = None) -> LoadedFile:
    content = f.content if text is None else text
    return LoadedFile(f.path, f.layer, utf16_len(content), content)


def _recorded(path: str, kind: str, content: str) -> LoadedFile:
    return LoadedFile(path, LAYER_OF_TYPE.get(kind, kind.lower()), utf16_len(content), content)


@dataclass
class _Context:
    started: float | None
    recalled: bool
    recall_now: bool
    considered: dict[str, CascadeFile] = field(default_factory=dict)


def _explain_recorded_only(rec: LoadedFile, ctx: _Context, predicted: Sequence[LoadedFile]) -> tuple[str, bool]:
    if (why := _changed_since(rec.path, ctx.started)) is not None:
        return why, False
    if rec.layer == "automem":
        other = next((p for p in predicted if p.layer == "automem"), None)
        if other is not None:
            return f"the session's memory dir was {Path(rec.path).parent}; memtui resolves {Path(other.path).parent} now (an override or setting changed)", False
        if ctx.recall_now:
            return "MEMORY.md loaded then (recall off); recall is on now, so the agent leaves it out", False
    seen = ctx.considered.get(rec.path)
    if seen is not None:
        if seen.status == "conditional":
            return f"a rule that loaded then but would not now: it is conditional ({', '.join(seen.patterns)}) — {FIDELITY_BUG}", True
        if seen.status == "excluded":
            return f"excluded now: {seen.reason} (settings may have changed since)", False
        return f"memtui skips it now ({seen.status}: {seen.reason}) — {FIDELITY_BUG}", True
    return f"memtui does not find it now — {FIDELITY_BUG}", True


def _explain_predicted_only(pred: LoadedFile, ctx: _Context, recorded: Sequence[LoadedFile]) -> tuple[str, bool]:
    if (why := _changed_since(pred.path, ctx.started)) is not None:
        return why.replace("changed since", "is new or changed since"), False
    if pred.layer == "automem":
        if any(r.layer == "automem" for r in recorded):
            return "the session used another memory dir (its MEMORY.md is listed as recorded only)", False
        if ctx.recalled:
            return "recall was on in that session (it recalled memories), and the agent leaves MEMORY.md out while recall is on; it is off now", False
        return ("the session did not load MEMORY.md: recall was probably on then (the cached flag in ~/.claude.json changes) "
                "or auto memory was off"), False
    return f"memtui would load it and the session did not — {FIDELITY_BUG}", True


def _pair(recorded: Sequence[LoadedFile], predicted: Sequence[LoadedFile], ctx: _Context) -> list[Row]:
    by_pred = {p.path: p for p in predicted}
    by_rec = {r.path: r for r in recorded}
    rows: list[Row] = []
    common_rec = [r.path for r in recorded if r.path in by_pred]
    common_pred = [p.path for p in predicted if p.path in by_rec]
    moved = {a for a, b in zip(common_rec, common_pred, strict=True) if a != b}
    for rec in recorded:
        pred = by_pred.get(rec.path)
        if pred is None:
            reason, bug = _explain_recorded_only(rec, ctx, predicted)
            rows.append(Row(rec.path, rec, None, "recorded-only", reason, bug))
        elif pred.content != rec.content or pred.layer != rec.layer:
            why = _changed_since(rec.path, ctx.started)
            if pred.layer != rec.layer:
                rows.append(Row(rec.path, rec, pred, "changed", f"loaded as {rec.layer} then, memtui says {pred.layer} — {FIDELITY_BUG}", True))
            else:
                rows.append(Row(rec.path, rec, pred, "changed", why or f"the same file, another text — {FIDELITY_BUG}", why is None))
        elif rec.path in moved:
            rows.append(Row(rec.path, rec, pred, "moved", f"loaded in another order then — {FIDELITY_BUG}", True))
        else:
            rows.append(Row(rec.path, rec, pred, "same"))
    # predicted-only files, after the recorded file that precedes them in memtui's order
    for i, pred in enumerate(predicted):
        if pred.path in by_rec:
            continue
        reason, bug = _explain_predicted_only(pred, ctx, recorded)
        before = next((p.path for p in reversed(predicted[:i]) if p.path in by_rec), None)
        at = 0 if before is None else next(j for j, r in enumerate(rows) if r.path == before) + 1
        while at < len(rows) and rows[at].status == "predicted-only":
            at += 1
        rows.insert(at, Row(pred.path, None, pred, "predicted-only", reason, bug))
    return rows


def _recorded_reads(transcript: Transcript) -> list[tuple[str, str, int, list[LoadedFile]]]:
    """The reads of the main chain with the files each loaded: ``(target, tool, line, files)``."""
    main = [e for e in transcript.entries if not e.is_sidechain]
    reads: list[tuple[str, str, int, list[LoadedFile]]] = []
    by_id: dict[str, int] = {}
    for entry in main:
        for block in entry.content:
            if entry.type == "assistant" and block.type == "tool_use" and block.name in READ_TOOLS:
                target = block.input.get("file_path")
                if isinstance(target, str) and target:
                    if block.id:
                        by_id[block.id] = len(reads)
                    reads.append((target, block.name or "Read", entry.line, []))
        att = entry.attachment
        if att is None or not reads:
            continue
        if att.kind == "nested_memory":
            nested = read_nested_memory(att)
            if nested is not None:
                reads[-1][3].append(_recorded(nested.path, nested.type, nested.content))
        elif att.kind == "hook_additional_context":
            ident = att.data.get("toolUseID")
            pos = by_id.get(ident.removesuffix("-context")) if isinstance(ident, str) else None
            texts = att.data.get("content")
            for text in texts if isinstance(texts, list) else []:
                if not isinstance(text, str):
                    continue
                marks = list(_CONTENTS.finditer(text))
                for k, m in enumerate(marks):
                    end = marks[k + 1].start() if k + 1 < len(marks) else len(text)
                    reads[len(reads) - 1 if pos is None else pos][3].append(_recorded(m.group(1), "Project", text[m.end() : end]))
    return reads


def compare_session(locations: Locations, transcript_path: Path, *, environ: dict[str, str] | None = None) -> SessionLoad:
    """Compare the session of ``transcript_path`` with memtui's cascade now (see the module
    docstring). Raises ``OSError`` when the transcript cannot be read."""
    transcript = read_transcript(transcript_path)
    session_id = transcript.session_id or transcript_path.stem
    main = [e for e in transcript.entries if not e.is_sidechain]
    cwd = next((e.cwd for e in main if e.cwd), None)
    started = next((t for e in main if (t := parse_time(e.timestamp)) is not None), None)
    recalled = any(e.attachment is not None and e.attachment.kind == "relevant_memories" for e in main)
    first = next((e.attachment for e in main if e.attachment is not None and e.attachment.kind == "instructions"), None)
    notes: list[str] = []
    base = SessionLoad(session_id, transcript_path, cwd, started, transcript.version, recalled, (), (), ())
    if first is None:
        notes.append("the transcript has no instructions attachment (another release, or a session cut short): nothing to compare")
        return _with(base, notes=notes)
    recorded = [_recorded(f.path, f.type, f.content) for f in read_instructions(first)]
    if cwd is None or not os.path.isdir(cwd):
        notes.append(f"the session's cwd {cwd} is not there any more: memtui cannot compute its cascade")
        rows = [Row(r.path, r, None, "recorded-only", "the cwd is gone", False) for r in recorded]
        return _with(base, startup=tuple(rows), notes=notes)
    cascade = compute_cascade(locations, Path(cwd), environ=environ)
    ctx = _Context(started, recalled, cascade.recall is not None and bool(cascade.recall.on))
    ctx.considered = {f.path: f for f in cascade.files if not f.loaded}
    predicted = [_predicted(f) for f in cascade.loaded_files]
    startup = _pair(recorded, predicted, ctx)
    reads = []
    state = new_session(cascade)
    for target, tool, line, loaded in _recorded_reads(transcript):
        step = simulate_read(cascade, state, target, tool=tool)
        pred = [_predicted(f, step.texts[i] if i < len(step.texts) else None) for i, f in enumerate(step.added)]
        ctx.considered = {f.path: f for f in step.considered}
        if loaded or pred:
            reads.append(ReadLoads(target, tool, line, tuple(_pair(loaded, pred, ctx))))
    if cascade.recall is not None:
        notes.append(f"recall now: {'on' if cascade.recall.on else 'off'} ({cascade.recall.reason})")
    return _with(base, startup=tuple(startup), reads=tuple(reads), notes=notes)


def _with(base: SessionLoad, **changes: Any) -> SessionLoad:
    from dataclasses import replace

    if "notes" in changes:
        changes["notes"] = tuple(changes["notes"])
    return replace(base, **changes)


def load_session(locations: Locations, session: str) -> SessionLoad:
    """``compare_session`` for ``session`` (an id, a prefix, or ``latest``; see
    ``find_session``). Raises ``SessionNotFoundError`` or ``OSError``."""
    return compare_session(locations, find_session(locations, session).path)


__all__ = ["FIDELITY_BUG", "LoadedFile", "ReadLoads", "Row", "SessionLoad", "SessionNotFoundError", "compare_session", "find_session", "load_session"]
