"""What one transcript says about the memory store its session used (SPEC §14).

Claude Code 2.1.332 records, in every session's transcript (``projects/<slug>/<session>.jsonl``)
and in each sub-agent's (``<session>/subagents/agent-<id>.jsonl`` with ``.meta.json``):

- the dir the agent was **told**: the system text "You have a persistent file-based memory at
  `<dir>/`" (in the ``prompt_snapshot`` attachment and the ``api-request-shape`` line; absent when
  auto memory is off);
- the index it **loaded**: an ``instructions`` attachment whose ``files[]`` holds
  ``{"type": "AutoMem", "path": "<dir>/MEMORY.md", "content": …}`` (absent while MEMORY.md does
  not exist; a general-purpose sub-agent gets its own copy, Explore and Plan none);
- what it **wrote**: an assistant ``tool_use`` Write/Edit/MultiEdit with ``input.file_path``,
  and the result on a later line (``is_error`` when refused);
- ``cwd``, ``entrypoint`` (``cli`` interactive, ``sdk-cli`` for ``-p``), ``version`` and
  ``timestamp`` on most lines, and the ``session_context`` attachment's "Recent commits" (the
  repository the session ran in, by commit).

A transcript is read once per (size, mtime): line by line, at most ``MAX_TRANSCRIPT_BYTES``;
a line is decoded only when it carries one of the markers above. Reading never fails on
content; an unreadable file gives evidence with ``error`` set.
"""

from __future__ import annotations

import os
import re
import threading
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from memtui.core.base.safe_read import open_regular, read_regular
from memtui.core.sessions.transcripts import MAX_TRANSCRIPT_BYTES

# The tools whose ``file_path`` input writes a file (Claude Code 2.1.332's Write and Edit; the
# older MultiEdit and NotebookEdit name theirs alike).
WRITE_TOOLS = frozenset({"Write", "Edit", "MultiEdit", "NotebookEdit"})
# The system text that names the memory dir (Claude Code 2.1.328 and 2.1.332, captured).
TOLD_MARK = b"persistent file-based memory at `"
_TOLD_TEXT = re.compile(r"(?:^|\n\n)# Memory\n\nYou have a persistent file-based memory at `([^`\n]{1,4096})`")
# The lines whose system prompt carries it (Claude Code 2.1.328 and 2.1.332).
_SHAPE = b'{"type":"api-request-shape"'
_SNAPSHOT = b'"attachment":{"type":"prompt_snapshot"'
_TIMESTAMP = re.compile(rb'"timestamp":\s*"([0-9T:.+\-Z]{10,40})"')
_CWD = re.compile(rb'"cwd":\s*"((?:[^"\\]|\\.){1,4096})"')
_ENTRYPOINT = re.compile(rb'"entrypoint":\s*"([A-Za-z0-9_.\-]{1,40})"')
_VERSION = re.compile(rb'"version":\s*"(\d+\.\d+\.\d+[0-9A-Za-z.+\-]{0,40})"')
_COMMITS = re.compile(rb"Recent commits:\\n((?:[0-9a-f]{7,40} [^\\]{0,200}\\n){0,5}[0-9a-f]{7,40} )")
_HASH = re.compile(rb"(?:^|\\n)([0-9a-f]{7,40}) ")
# memtui's bounds: writes and loads kept per transcript (a session writes a few memories), the
# size of a sub-agent's ``.meta.json``, how many transcripts' evidence is kept in memory.
MAX_RECORDS = 10_000
# The dirs kept as told per transcript (a session is told one, a resumed one a few).
MAX_TOLD = 64
# The index text kept per load (Claude Code sends at most 25,000 UTF-16 units of MEMORY.md).
MAX_INDEX_CHARS = 100_000
MAX_META_BYTES = 64 * 1024
CACHE_ENTRIES = 8192
# The longest line decoded (an ``api-request`` body can be megabytes; the lines read here are small).
MAX_LINE_BYTES = 16 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class MemoryWrite:
    """One Write/Edit of a file: ``path`` as the tool was given it, ``tool``, ``time`` (ISO, of
    the tool call) and ``ok`` (the result came back without ``is_error``; ``None`` when the
    transcript holds no result for it)."""

    path: str
    tool: str
    time: str | None
    ok: bool | None


@dataclass(frozen=True, slots=True)
class LoadedIndex:
    """An AutoMem index the session loaded: ``path`` (``<dir>/MEMORY.md``), its ``content`` as
    sent (the CLI's text, already cut at its caps) and ``time``."""

    path: str
    content: str
    time: str | None

    @property
    def store(self) -> str:
        """The memory dir the index belongs to."""
        return os.path.dirname(self.path)


@dataclass(frozen=True, slots=True)
class SessionEvidence:
    """What one transcript records (see the module docstring).

    ``session_id``: the session (a sub-agent's: its parent's); ``agent_id``/``agent_type``: a
    sub-agent's id and ``agentType`` (``None`` for a main session); ``told``: the dirs the
    agent was told, without a trailing slash, in order of first mention; ``loaded``: the indexes
    it loaded; ``writes``: its Write/Edit calls of ``.md`` files; ``commits``: the short hashes
    of its "Recent commits"; ``first_time``/``last_time``: ISO timestamps; ``error``: why the
    file could not be read (then everything else is empty); ``truncated``: the file was longer
    than ``MAX_TRANSCRIPT_BYTES`` and only its start was read.
    """

    transcript: Path
    session_id: str
    agent_id: str | None
    agent_type: str | None
    cwd: str | None
    entrypoint: str | None
    version: str | None
    first_time: str | None
    last_time: str | None
    told: tuple[str, ...]
    loaded: tuple[LoadedIndex, ...]
    writes: tuple[MemoryWrite, ...]
    commits: tuple[str, ...]
    error: str | None = None
    truncated: bool = False

    @property
    def subagent(self) -> bool:
        """A sub-agent's transcript."""
        return self.agent_id is not None

    @property
    def read_dirs(self) -> tuple[str, ...]:
        """Every memory dir the session was told or whose index it loaded, in order."""
        return tuple(dict.fromkeys([*self.told, *(i.store for i in self.loaded)]))


def _absolute(path: str) -> bool:
    """An absolute path on this system, other than the root (``C:\\x`` on Windows only)."""
    if os.name == "nt":
        return bool(re.match(r"[A-Za-z]:[\\/].", path))
    return path.startswith("/") and path.strip("/") != ""


def _texts(value: Any, depth: int = 0) -> list[str]:
    """Every string in ``value`` (a system prompt: a string, or a list of blocks with ``text``),
    at most 4 levels deep."""
    if isinstance(value, str):
        return [value]
    if depth > 4:
        return []
    if isinstance(value, list):
        return [t for v in value for t in _texts(v, depth + 1)]
    if isinstance(value, dict):
        return [t for v in value.values() for t in _texts(v, depth + 1)]
    return []


def _object(line: bytes) -> dict[str, Any] | None:
    """The JSON object a line holds, or ``None`` (not JSON, or not an object)."""
    try:
        obj = orjson.loads(line)
    except orjson.JSONDecodeError:
        return None
    return obj if isinstance(obj, dict) else None


def _string(raw: bytes) -> str | None:
    try:
        value = orjson.loads(b'"' + raw + b'"')
    except orjson.JSONDecodeError:
        return None
    return value if isinstance(value, str) else None


def _first(pattern: re.Pattern[bytes], line: bytes) -> str | None:
    m = pattern.search(line)
    return _string(m.group(1)) if m else None


def _blocks(obj: dict[str, Any]) -> list[dict[str, Any]]:
    message = obj.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []


def agent_type(transcript: Path) -> str | None:
    """The ``agentType`` of a sub-agent transcript's ``<name>.meta.json`` (``None`` when absent
    or unreadable)."""
    meta = transcript.with_name(transcript.name[: -len(".jsonl")] + ".meta.json") if transcript.name.endswith(".jsonl") else None
    if meta is None:
        return None
    try:
        data, _ = read_regular(meta, MAX_META_BYTES)
        value = orjson.loads(data)
    except (OSError, orjson.JSONDecodeError):
        return None
    kind = value.get("agentType") if isinstance(value, dict) else None
    return kind if isinstance(kind, str) else None


class _Reader:
    """The state of one transcript's scan."""

    def __init__(self) -> None:
        self.cwd: str | None = None
        self.entrypoint: str | None = None
        self.version: str | None = None
        self.first: str | None = None
        self.last: str | None = None
        self.told: dict[str, None] = {}
        self.loaded: list[LoadedIndex] = []
        self.writes: list[MemoryWrite] = []
        self.pending: dict[str, int] = {}
        self.commits: tuple[str, ...] = ()
        self.texts: dict[str, str] = {}  # one copy of each index text

    def _told(self, line: bytes) -> None:
        """The dirs named by the told text of the system prompt a line records: an
        ``api-request-shape`` line's ``shape.system[].text`` or a ``prompt_snapshot``
        attachment's ``systemPrompt`` — never the same words in a message or a tool's result
        (a page the agent fetched can hold any sentence), and only the sentence that opens the
        prompt's ``# Memory`` section. Only absolute paths other than the root, free of NUL,
        count."""
        obj = _object(line)
        if obj is None:
            return
        if obj.get("type") == "api-request-shape":
            shape = obj.get("shape")
            prompt: Any = shape.get("system") if isinstance(shape, dict) else None
        else:
            att = obj.get("attachment")
            prompt = att.get("systemPrompt") if isinstance(att, dict) and att.get("type") == "prompt_snapshot" else None
        for text in _texts(prompt):
            for m in _TOLD_TEXT.finditer(text):
                value = m.group(1).rstrip("/\\")
                if _absolute(value) and "\0" not in value and len(self.told) < MAX_TOLD:
                    self.told.setdefault(value, None)

    def line(self, line: bytes) -> None:
        stamp = _TIMESTAMP.search(line)
        time = stamp.group(1).decode("ascii") if stamp else None
        if time:
            self.first = self.first or time
            self.last = time
        if self.cwd is None:
            cwd = _first(_CWD, line)
            self.cwd = cwd if cwd is None or "\0" not in cwd else None
        if self.entrypoint is None:
            self.entrypoint = _first(_ENTRYPOINT, line)
        if self.version is None:
            self.version = _first(_VERSION, line)
        if TOLD_MARK in line and (line.startswith(_SHAPE) or _SNAPSHOT in line[:4096]):
            self._told(line)
        if line.startswith(b'{"type":"api-request'):
            return  # copies of the conversation: the told text above is all they add
        if not self.commits and b'"session_context"' in line:
            m = _COMMITS.search(line)
            if m:
                self.commits = tuple(h.decode("ascii") for h in _HASH.findall(m.group(1)))
        wants = (b'"AutoMem"' in line, b'"tool_use"' in line, b'"tool_result"' in line)
        if not any(wants):
            return
        obj = _object(line)
        if obj is None:
            return
        if wants[0]:
            att = obj.get("attachment")
            files = att.get("files") if isinstance(att, dict) and att.get("type") == "instructions" else None
            for f in files if isinstance(files, list) else []:
                if isinstance(f, dict) and f.get("type") == "AutoMem" and isinstance(f.get("path"), str) and len(self.loaded) < MAX_RECORDS:
                    content = f.get("content")
                    text = content[:MAX_INDEX_CHARS] if isinstance(content, str) else ""
                    self.loaded.append(LoadedIndex(f["path"], self.texts.setdefault(text, text), time))
        for block in _blocks(obj):
            kind = block.get("type")
            if kind == "tool_use" and block.get("name") in WRITE_TOOLS and len(self.writes) < MAX_RECORDS:
                args = block.get("input")
                path = args.get("file_path") or args.get("notebook_path") if isinstance(args, dict) else None
                if isinstance(path, str) and path.lower().endswith(".md"):
                    if isinstance(block.get("id"), str):
                        self.pending[block["id"]] = len(self.writes)
                    self.writes.append(MemoryWrite(path, str(block["name"]), time, None))
            elif kind == "tool_result" and isinstance(block.get("tool_use_id"), str):
                at = self.pending.pop(block["tool_use_id"], None)
                if at is not None:
                    w = self.writes[at]
                    self.writes[at] = MemoryWrite(w.path, w.tool, w.time, block.get("is_error") is not True)


_CACHE: OrderedDict[tuple[str, int, int], SessionEvidence] = OrderedDict()
_LOCK = threading.Lock()


def read_evidence(transcript: Path, session_id: str, agent_id: str | None = None) -> SessionEvidence:
    """The evidence of one transcript (cached by path, size and mtime). Never raises."""
    try:
        st = os.stat(transcript)
        key = (str(transcript), st.st_size, st.st_mtime_ns)
    except OSError as exc:
        return SessionEvidence(transcript, session_id, agent_id, None, None, None, None, None, None, (), (), (), (), error=exc.strerror or str(exc))
    with _LOCK:
        hit = _CACHE.get(key)
        if hit is not None:
            _CACHE.move_to_end(key)
            return hit
    evidence = _scan(transcript, session_id, agent_id)
    with _LOCK:
        _CACHE[key] = evidence
        while len(_CACHE) > CACHE_ENTRIES:
            _CACHE.popitem(last=False)
    return evidence


def _scan(transcript: Path, session_id: str, agent_id: str | None) -> SessionEvidence:
    reader = _Reader()
    truncated = False
    error: str | None = None
    try:
        fh, _ = open_regular(transcript)
    except OSError as exc:
        error = exc.strerror or str(exc)
    else:
        with fh:
            seen = 0
            skipping = False  # inside a line longer than MAX_LINE_BYTES: skipped to its end
            while True:
                line = fh.readline(MAX_LINE_BYTES)
                if not line:
                    break
                seen += len(line)
                if seen > MAX_TRANSCRIPT_BYTES:
                    truncated = True
                    break
                ends = line.endswith(b"\n")
                if not skipping and ends:
                    reader.line(line)
                skipping = not ends
    kind = agent_type(transcript) if agent_id is not None else None
    return SessionEvidence(
        transcript,
        session_id,
        agent_id,
        kind,
        reader.cwd,
        reader.entrypoint,
        reader.version,
        reader.first,
        reader.last,
        tuple(reader.told),
        tuple(reader.loaded),
        tuple(reader.writes),
        reader.commits,
        error=error,
        truncated=truncated,
    )
