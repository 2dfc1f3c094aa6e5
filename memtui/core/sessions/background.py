"""What a Claude Code session transcript says about the CLI's own background memory work: its
dreams and extractions, and whether the session ran interactively.

Two kinds of line record that work (Claude Code 2.1.328):

- ``{"type": "system", "subtype": "memory_saved", "writtenPaths": [...], "verb": "Improved"}``
  right after a dream finished (``verb`` set), or ``{…, "teamCount": 0}`` after an extraction
  saved memories (only the memory files, not ``MEMORY.md``);
- ``{"type": "attachment", "attachment": {"type": "memory_update", "source": "dream"|"extract",
  "summary": "consolidated 4 memory files", "paths": [...], "inContextPaths": [...]},
  "rendered": [{"content": "<system-reminder>…"}]}`` when the next turn tells the model
  ("Background memory consolidation updated your memory directory: …").

Every line also carries ``entrypoint`` (``cli`` for an interactive session, ``sdk-cli`` under
``claude -p``, ``sdk-ts`` / ``sdk-py`` from the SDKs) and most carry ``timestamp``.

The sessions of a project are listed as the CLI lists them for its dream's session gate:
``*.jsonl`` directly in the project dir whose name is a session id (a UUID), in directory
order, with the file's mtime in whole milliseconds (JavaScript's ``Date#getTime``).

Transcripts can be megabytes (request bodies are logged): a line is parsed only when it holds
one of the markers, and a file that only grew since it was last read is read from where the
last read stopped. Reading never fails on content; an unreadable file gives no records.
"""

from __future__ import annotations

import os
import re
import threading
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from memtui.core.base.clock import EPOCH_MAX, EPOCH_MIN
from memtui.core.base.jsontext import JSONInputError, loads_checked
from memtui.core.base.safe_read import open_regular
from memtui.core.places.release import Release

# A session id: the CLI names a session's transcript <uuid>.jsonl.
SESSION_ID = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")
_MARKERS = (b'"memory_saved"', b'"memory_update"')
_ENTRYPOINT = re.compile(rb'(?<!\\)"entrypoint":\s*"([^"\\]{1,40})"')
_TIMESTAMP = re.compile(rb'(?<!\\)"timestamp":\s*"([0-9T:.+\-Z]{10,40})"')
BackgroundKind = Literal["dream", "extract", "other"]


@dataclass(frozen=True, slots=True)
class SessionFileInfo:
    """One session transcript as the CLI's session gate sees it: ``session_id`` (the file
    stem), ``path``, ``mtime`` (epoch s) and ``mtime_ms`` (whole milliseconds, the value the
    CLI compares)."""

    session_id: str
    path: Path
    mtime: float
    mtime_ms: int


def list_cli_sessions(project_dir: Path) -> list[SessionFileInfo]:
    """The session transcripts of ``project_dir`` in directory order (the CLI's ``readdir``):
    ``*.jsonl`` whose stem is a session id, each with its ``stat`` mtime. A missing dir gives
    ``[]``; a file that cannot be stat'ed is left out."""
    try:
        names = os.listdir(project_dir)
    except OSError:
        return []
    out: list[SessionFileInfo] = []
    for name in names:
        if not name.endswith(".jsonl") or not SESSION_ID.match(name[:-6]):
            continue
        path = project_dir / name
        try:
            st = path.stat()
        except OSError:
            continue
        out.append(SessionFileInfo(name[:-6], path, st.st_mtime, st.st_mtime_ns // 1_000_000))
    return out


@dataclass(frozen=True, slots=True)
class BackgroundRecord:
    """One line about the CLI's background work. ``kind``: ``dream`` or ``extract`` (``other``
    for a source the release does not name); ``line_type``: ``memory_saved`` or
    ``memory_update``; ``time``: epoch s of the line's ``timestamp`` (``None`` when absent);
    ``paths``: the files (``writtenPaths`` / ``paths``, absolute, as written); ``verb`` (a
    dream's ``memory_saved``), ``summary`` and ``in_context_paths`` (a ``memory_update``),
    ``team_count`` (an extraction's ``memory_saved``), ``notice`` (the ``memory_update`` text
    the model was sent, without its ``<system-reminder>`` wrapper); ``line``: 1-based."""

    kind: BackgroundKind
    line_type: Literal["memory_saved", "memory_update"]
    time: float | None
    session_id: str | None
    transcript: Path
    line: int
    paths: tuple[str, ...] = ()
    verb: str | None = None
    summary: str | None = None
    in_context_paths: tuple[str, ...] = ()
    team_count: int | None = None
    notice: str | None = None


@dataclass(frozen=True, slots=True)
class SessionActivity:
    """What one transcript says: ``entrypoint`` (the first one found; ``None`` when no line
    has one), ``first_time`` / ``last_time`` (epoch s of its first and last line timestamps:
    the CLI appends in time order), ``records`` in file order."""

    path: Path
    session_id: str
    entrypoint: str | None
    first_time: float | None = None
    last_time: float | None = None
    records: tuple[BackgroundRecord, ...] = ()

    def interactive(self, sdk_entrypoints: tuple[str, ...]) -> bool | None:
        """Whether the session ran interactively (``None``: unknown, no entrypoint recorded)."""
        if self.entrypoint is None:
            return None
        return self.entrypoint not in sdk_entrypoints

    def spans(self, when: float, slack: float = 0.0) -> bool:
        """Whether the session has lines from before ``when`` and up to ``when - slack`` or
        later (it was running at ``when``, give or take ``slack`` seconds)."""
        if self.first_time is None or self.last_time is None:
            return False
        return self.first_time <= when + slack and self.last_time >= when - slack


def parse_time(value: object) -> float | None:
    """An ISO-8601 ``timestamp`` (``2026-12-01T20:11:06.702Z``) as epoch s, or ``None`` when it
    is not one or names an instant outside ``EPOCH_MIN … EPOCH_MAX`` (``0001-01-01T00:00+14:00``
    is in year 0 in UTC: no ``datetime`` can show it)."""
    if not isinstance(value, str) or not value:
        return None
    try:
        when = datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
    except (ValueError, OverflowError):
        return None
    return when if EPOCH_MIN <= when <= EPOCH_MAX else None


def _strs(value: object) -> tuple[str, ...]:
    return tuple(v for v in value if isinstance(v, str)) if isinstance(value, list) else ()


_WRAP = re.compile(r"^<system-reminder>\n?(.*?)\n?</system-reminder>$", re.DOTALL)


def _record(obj: dict[str, Any], path: Path, line: int) -> BackgroundRecord | None:
    session = obj.get("sessionId") if isinstance(obj.get("sessionId"), str) else None
    when = parse_time(obj.get("timestamp"))
    if obj.get("type") == "system" and obj.get("subtype") == "memory_saved":
        verb = obj.get("verb") if isinstance(obj.get("verb"), str) else None
        team = obj.get("teamCount")
        return BackgroundRecord(
            "dream" if verb is not None else "extract", "memory_saved", when, session, path, line,
            _strs(obj.get("writtenPaths")), verb=verb, team_count=team if isinstance(team, int) and not isinstance(team, bool) else None,
        )
    att = obj.get("attachment")
    if obj.get("type") == "attachment" and isinstance(att, dict) and att.get("type") == "memory_update":
        source = att.get("source")
        kind: BackgroundKind = source if source in ("dream", "extract") else "other"
        notice = None
        rendered = obj.get("rendered")
        if isinstance(rendered, list) and rendered and isinstance(rendered[0], dict) and isinstance(rendered[0].get("content"), str):
            text = rendered[0]["content"]
            m = _WRAP.match(text)
            notice = m.group(1) if m else text
        summary = att.get("summary")
        return BackgroundRecord(
            kind, "memory_update", when, session, path, line, _strs(att.get("paths")),
            summary=summary if isinstance(summary, str) else None, in_context_paths=_strs(att.get("inContextPaths")), notice=notice,
        )
    return None


@dataclass(slots=True)
class _Progress:
    key: tuple[int, int]  # (mtime_ns, size) when read
    offset: int  # bytes consumed (whole lines)
    lines: int
    entrypoint: str | None
    first_time: float | None = None
    last_time: float | None = None
    records: list[BackgroundRecord] = field(default_factory=list)


_CACHE: dict[Path, _Progress] = {}
_CACHE_LOCK = threading.Lock()
# memtui's bound on the transcripts remembered between reads in one process.
_CACHE_MAX = 4_096


def read_activity(path: Path) -> SessionActivity:
    """Read ``path`` (a session transcript) for its background records, entrypoint and line
    times. A file that only grew since the last read in this process is read from where that
    read stopped. Never raises: an unreadable file gives an empty activity."""
    stem = path.name[:-6] if path.name.endswith(".jsonl") else path.name
    try:
        st = path.stat()
    except OSError:
        return SessionActivity(path, stem, None)
    key = (st.st_mtime_ns, st.st_size)
    with _CACHE_LOCK:
        prev = _CACHE.get(path)
    if prev is None or st.st_size < prev.offset:
        prev = _Progress(key, 0, 0, None)
    elif prev.key != key:
        prev = _Progress(key, prev.offset, prev.lines, prev.entrypoint, prev.first_time, prev.last_time, list(prev.records))
    if prev.offset < st.st_size:
        try:
            _read_from(path, prev)
        except OSError:
            return SessionActivity(path, stem, None)
    prev.key = key
    with _CACHE_LOCK:
        if len(_CACHE) >= _CACHE_MAX:
            _CACHE.clear()
        _CACHE[path] = prev
    return SessionActivity(path, stem, prev.entrypoint, prev.first_time, prev.last_time, tuple(prev.records))


# How far back from the end of what was read the last timestamp is looked for (a request blob
# line can be ~100 KB; a file whose last timestamped line is further back keeps the one before).
_TAIL_BYTES = 256 * 1024


def _read_from(path: Path, progress: _Progress) -> None:
    """Read whole lines from ``progress.offset``: the entrypoint and the first timestamp from
    the first lines that have them, every marked line parsed, then the last timestamp from the
    tail of what was read."""
    fh, _ = open_regular(path)  # a FIFO or a device among the transcripts: NotRegularFileError, never a hang
    with fh:
        fh.seek(progress.offset)
        start = progress.offset
        for raw in fh:
            if not raw.endswith(b"\n"):
                break  # a line still being written: read it next time, whole
            progress.offset += len(raw)
            progress.lines += 1
            if progress.entrypoint is None or progress.first_time is None:
                # the line's own keys come before any nested copy: look near its start first
                head = raw[:4096]
                if progress.entrypoint is None and (m := _ENTRYPOINT.search(head)):
                    progress.entrypoint = m.group(1).decode("ascii", "replace")
                if progress.first_time is None and (t := _TIMESTAMP.search(head) or (_TIMESTAMP.search(raw[-4096:]) if len(raw) > 4096 else None)):
                    progress.first_time = parse_time(t.group(1).decode("ascii", "replace"))
            if b'"memory_' not in raw or not any(marker in raw for marker in _MARKERS):
                continue
            try:
                obj = loads_checked(raw)
            except JSONInputError:  # not JSON (or not UTF-8, or nested too deep): no record
                continue
            if isinstance(obj, dict):
                rec = _record(obj, path, progress.lines)
                if rec is not None:
                    progress.records.append(rec)
        if progress.offset > start:
            tail_from = max(start, progress.offset - _TAIL_BYTES)
            fh.seek(tail_from)
            tail = fh.read(progress.offset - tail_from)
            at = len(tail)
            while (at := tail.rfind(b'"timestamp"', 0, at)) != -1:
                m = _TIMESTAMP.match(tail, at) if at == 0 or tail[at - 1] != 0x5C else None  # 0x5C: a backslash (an escaped copy)
                if m is not None:
                    progress.last_time = parse_time(m.group(1).decode("ascii", "replace")) or progress.last_time
                    break


def project_activity(project_dir: Path) -> list[SessionActivity]:
    """The activity of every session transcript of ``project_dir`` (see ``list_cli_sessions``),
    in directory order."""
    return [read_activity(s.path) for s in list_cli_sessions(project_dir)]


def notice_text(release: Release, record: BackgroundRecord) -> str | None:
    """The system message a ``memory_update`` record puts in the next main-loop request, as the
    release writes it: ``<source> updated your memory directory: <summary>``, ``Files changed:``
    (``, ``-joined), the stale-copy line for the paths already in context, the ambient-context
    line. ``None`` for a ``memory_saved`` record or an unknown source."""
    parts = release.memory_update
    label = parts["sources"].get(record.kind)
    if record.line_type != "memory_update" or label is None:
        return None
    lines = [parts["headline"].format(source=label, summary=record.summary or "")]
    if record.paths:
        lines.append(parts["files_changed"].format(paths=", ".join(record.paths)))
    if record.in_context_paths:
        lines.append(parts["stale"].format(paths=", ".join(record.in_context_paths)))
    lines.append(parts["ambient"])
    return "\n".join(lines)
