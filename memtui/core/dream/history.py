"""The dream history of a memory dir: memtui's applied dreams (its journal) beside the agent's
own dreams and extractions (the ``memory_saved`` / ``memory_update`` lines of its session
transcripts), newest first, each with when, which files and — where memtui holds a copy of a
file from before the agent's change — the diff.

memtui's copies: the before-images of its journal (the content of a file before each of its
own changes) and the files it has seen (:func:`remember_files`, called when the Dream pane or
``memtui dream status`` looks at the memory dir): ``<state>/memdirs/<key>/dream/seen/``, one
copy per content (SHA-256), the newest ``SEEN_PER_FILE`` versions of each file. Nothing is
ever written inside the memory dir.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import os
import re
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from memtui.core.base.clock import EPOCH_MAX, EPOCH_MIN
from memtui.core.base.jsontext import json_number, loads_checked
from memtui.core.base.safe_read import MAX_STATE_BYTES, read_regular, read_text_regular
from memtui.core.dream.gates import DreamContext
from memtui.core.memory.catalog import iso_utc
from memtui.core.sessions.background import BackgroundRecord, SessionActivity, project_activity
from memtui.core.writes.atomic import atomic_write_bytes
from memtui.core.writes.journal import MAX_IMAGE_BYTES, Journal, read_or_none

# memtui's choices: versions kept per file, the largest file copied, and the largest memory dir
# whose files are copied at all (beyond it, only the journal's before-images serve).
SEEN_PER_FILE = 5
SEEN_MAX_BYTES = 256 * 1024
SEEN_MAX_FILES = 2_000
_HEX = re.compile(r"[0-9a-f]{64}")

Who = Literal["memtui", "agent"]


@dataclass(frozen=True, slots=True)
class FileDiff:
    """One file of an agent's change: ``relpath`` (to the memory dir; absolute when outside),
    ``diff`` (unified, ``None`` when memtui has no copy from before), ``source`` of the
    before-image (``seen 2026-…`` / ``journal <id>``), ``note`` (why there is no diff)."""

    relpath: str
    diff: str | None
    source: str | None = None
    note: str | None = None


@dataclass(frozen=True, slots=True)
class HistoryItem:
    """One consolidation or extraction: ``time`` (epoch s), ``who`` (``memtui`` or ``agent``),
    ``kind`` (``dream``, ``extract``, or memtui's ``lock-reset``), ``session_id`` (the agent's),
    ``files`` (relpaths), ``summary`` (one line), ``journal_id`` (memtui's entry), ``notice``
    (the text the agent's next turn was sent), ``records`` (the transcript lines)."""

    time: float
    who: Who
    kind: str
    session_id: str | None
    files: tuple[str, ...]
    summary: str
    journal_id: str | None = None
    notice: str | None = None
    records: tuple[BackgroundRecord, ...] = ()

    def to_json(self) -> dict[str, Any]:
        """``{time, who, kind, session_id, files, summary, journal_id, notice, lines}``."""
        return {
            "time": iso_utc(self.time), "who": self.who, "kind": self.kind, "session_id": self.session_id, "files": list(self.files),
            "summary": self.summary, "journal_id": self.journal_id, "notice": self.notice,
            "lines": [{"type": r.line_type, "transcript": str(r.transcript), "line": r.line} for r in self.records],
        }


def _rel(path: str, memory_dir: Path) -> str:
    try:
        return Path(path).relative_to(memory_dir).as_posix()
    except ValueError:
        try:
            return Path(os.path.realpath(path)).relative_to(os.path.realpath(memory_dir)).as_posix()
        except ValueError:
            return path


def agent_items(ctx: DreamContext, activities: list[SessionActivity] | None = None) -> list[HistoryItem]:
    """The agent's dreams and extractions: each ``memory_saved`` line with the first
    ``memory_update`` of the same kind that follows it in the same session (the notice of the
    next turn); a ``memory_update`` with no ``memory_saved`` before it stands alone."""
    acts = activities if activities is not None else project_activity(ctx.sessions_dir)
    items: list[HistoryItem] = []
    for act in acts:
        used: set[int] = set()
        records = list(act.records)
        for i, rec in enumerate(records):
            if rec.line_type != "memory_saved":
                continue
            update = next((j for j in range(i + 1, len(records)) if j not in used and records[j].line_type == "memory_update" and records[j].kind == rec.kind), None)
            group = [rec]
            if update is not None:
                used.add(update)
                group.append(records[update])
            items.append(_item(ctx, act, group))
        for j, rec in enumerate(records):
            if rec.line_type == "memory_update" and j not in used:
                items.append(_item(ctx, act, [rec]))
    return items


def _item(ctx: DreamContext, act: SessionActivity, group: list[BackgroundRecord]) -> HistoryItem:
    first = group[0]
    paths: dict[str, None] = {}
    for rec in reversed(group):  # the notice's list (index included) first
        for p in rec.paths:
            paths.setdefault(_rel(p, ctx.memory_dir), None)
    update = next((r for r in group if r.line_type == "memory_update"), None)
    saved = next((r for r in group if r.line_type == "memory_saved"), None)
    if update is not None and update.summary:
        summary = update.summary
    elif saved is not None and saved.verb:
        summary = f"{saved.verb} {len(saved.paths)} memor{'y' if len(saved.paths) == 1 else 'ies'}"
    else:
        summary = f"saved {len(first.paths)} memor{'y' if len(first.paths) == 1 else 'ies'}"
    when = min((r.time for r in group if r.time is not None), default=0.0)
    return HistoryItem(when, "agent", first.kind, first.session_id or act.session_id, tuple(paths), summary,
                       notice=update.notice if update is not None else None, records=tuple(group))


def memtui_items(ctx: DreamContext) -> list[HistoryItem]:
    """memtui's applied dreams and lock resets still in effect (its journal)."""
    journal = Journal(ctx.state_dir, ctx.memory_dir)
    entries = journal.entries()
    undone = {e.undoes for e in entries if e.status == "applied" and e.undoes}
    out = []
    for e in entries:
        if e.status != "applied" or e.action not in ("dream", "dream-lock") or e.id in undone:
            continue
        when = datetime.fromisoformat(e.time).timestamp()
        kind = "dream" if e.action == "dream" else "lock-reset"
        out.append(HistoryItem(when, "memtui", kind, None, tuple(c.relpath for c in e.changes), e.title, journal_id=e.id))
    return out


def dream_history(ctx: DreamContext, activities: list[SessionActivity] | None = None) -> list[HistoryItem]:
    """memtui's and the agent's items, newest first."""
    items = agent_items(ctx, activities) + memtui_items(ctx)
    return sorted(items, key=lambda i: i.time, reverse=True)


# ----- memtui's copies of the files it has seen ----------------------------------------------------


def _seen_dir(ctx: DreamContext) -> Path:
    return ctx.dream_state_dir / "seen"


def _seen_index(ctx: DreamContext) -> dict[str, list[dict[str, Any]]]:
    """``seen/index.json``: relpath → its kept versions, oldest first, each ``{sha: str, mtime,
    size, seen_at}`` (numbers). An unreadable or damaged file is an empty index; an entry that
    is not a list of such objects is dropped (its copies are no longer offered as diffs)."""
    try:
        data = loads_checked(read_text_regular(_seen_dir(ctx) / "index.json", MAX_STATE_BYTES, errors="strict"))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {rel: versions for rel, versions in data.items() if isinstance(versions, list) and all(_seen_version(v) for v in versions)}


def _seen_version(value: object) -> bool:
    """One kept version as ``remember_files`` writes it: a hex ``sha``, an ``mtime`` in
    ``EPOCH_MIN … EPOCH_MAX``, an integer ``size`` ≥ 0."""
    if not isinstance(value, dict):
        return False
    sha, size = value.get("sha"), value.get("size")
    return (
        isinstance(sha, str) and _HEX.fullmatch(sha) is not None
        and json_number(value.get("mtime"), EPOCH_MIN, EPOCH_MAX) is not None
        and isinstance(size, int) and not isinstance(size, bool) and size >= 0
    )


def remember_files(ctx: DreamContext, now: datetime) -> int:
    """Keep a copy of every ``.md`` file of the memory dir whose content memtui has not kept
    yet (at most ``SEEN_MAX_FILES`` files, each ≤ ``SEEN_MAX_BYTES``), so that a later change
    by the agent can be shown as a diff. Returns how many copies were added. Never raises
    (a state dir that cannot be written keeps nothing)."""
    try:
        index = _seen_index(ctx)
        files = []
        for dirpath, dirnames, names in os.walk(ctx.memory_dir):
            dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
            files.extend(Path(dirpath) / n for n in names if n.endswith(".md"))
            if len(files) > SEEN_MAX_FILES:
                return 0
        added = 0
        for path in files:
            rel = path.relative_to(ctx.memory_dir).as_posix()
            try:
                st = path.stat()
            except OSError:
                continue
            versions = index.setdefault(rel, [])
            if versions and versions[-1].get("mtime") == st.st_mtime and versions[-1].get("size") == st.st_size:
                continue
            if st.st_size > SEEN_MAX_BYTES:
                continue
            try:
                data = read_or_none(path)
            except OSError:
                continue
            if data is None:
                continue
            sha = hashlib.sha256(data).hexdigest()
            obj = _seen_dir(ctx) / "objects" / sha
            if not obj.exists():
                atomic_write_bytes(obj, data)
            versions.append({"sha": sha, "mtime": st.st_mtime, "size": st.st_size, "seen_at": now.timestamp()})
            del versions[:-SEEN_PER_FILE]
            added += 1
        if added:
            atomic_write_bytes(_seen_dir(ctx) / "index.json", json.dumps(index, indent=0).encode("utf-8"))
        return added
    except OSError:
        return 0


def before_image(ctx: DreamContext, relpath: str, before: float) -> tuple[bytes, str] | None:
    """memtui's newest copy of ``relpath`` as it was before ``before`` (epoch s): a seen
    version whose mtime is older, or a journal before-image taken earlier — whichever is newer
    — with where it came from."""
    best: tuple[float, bytes, str] | None = None
    for v in _seen_index(ctx).get(relpath, []):
        mtime = v["mtime"]
        if mtime < before - 1.0:
            try:
                data = read_regular(_seen_dir(ctx) / "objects" / v["sha"], MAX_IMAGE_BYTES)[0]
            except OSError:
                continue
            if best is None or mtime > best[0]:
                best = (mtime, data, f"memtui's copy of {iso_utc(mtime)[:16].replace('T', ' ')}")
    journal = Journal(ctx.state_dir, ctx.memory_dir)
    for e in journal.entries():
        when = datetime.fromisoformat(e.time).timestamp()
        if when >= before or e.status != "applied":
            continue
        for c in e.changes:
            if c.relpath == relpath and c.before_sha is not None:
                data = journal.before_image(e.id, relpath)
                if data is not None and (best is None or when > best[0]):
                    best = (when, data, f"journal {e.id} (before memtui's change)")
    return None if best is None else (best[1], best[2])


def item_diffs(ctx: DreamContext, item: HistoryItem) -> list[FileDiff]:
    """The diff of each file of an agent's ``item``: memtui's copy from before it → the file now
    (a file gone is shown deleted). Files outside the memory dir, and files memtui has no copy
    of, carry a note instead."""
    out: list[FileDiff] = []
    for rel in item.files:
        if rel.startswith("/"):
            out.append(FileDiff(rel, None, note="outside the memory dir"))
            continue
        found = before_image(ctx, rel, item.time)
        try:
            now_bytes = read_or_none(ctx.memory_dir / rel)
        except OSError:
            now_bytes = None
        if found is None:
            out.append(FileDiff(rel, None, note="memtui has no copy from before this change"))
            continue
        old, source = found
        a = old.decode("utf-8", errors="replace").splitlines(keepends=True)
        b = (now_bytes or b"").decode("utf-8", errors="replace").splitlines(keepends=True)
        diff = "".join(difflib.unified_diff(a, b, f"a/{rel}", "/dev/null" if now_bytes is None else f"b/{rel} (now)"))
        out.append(FileDiff(rel, diff, source, None if diff else "unchanged since memtui's copy"))
    return out
