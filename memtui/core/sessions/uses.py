"""What one transcript records about the agent's use of its memory files.

Three kinds of use, each from the line that records it (Claude Code 2.1.328's transcript):

- ``recalled``: a memory of a ``relevant_memories`` attachment (recall put it in the context);
- ``read``: a ``Read`` tool call of the main agent or a sub-agent on the file;
- ``written``: a ``Write`` / ``Edit`` / ``MultiEdit`` / ``NotebookEdit`` tool call on the file,
  or a path of a ``memory_saved`` line (the agent's background extraction or dream wrote it:
  those forks keep no transcript of their own).

A tool call whose result came back as an error (``is_error: true``) is not a use. Only paths
inside the memory dir count (absolute, or relative to the line's ``cwd``); which of them are
memories is decided later, against the memory dir's files.

Transcripts are large (request bodies are logged) and mostly irrelevant here: a line is decoded
only when it holds one of the markers of the lines above and, for tool calls and recalls, the
memory dir's path; lines that only copy the conversation (``api-request*``, ``prompt_snapshot``)
are skipped on their first bytes. Reading is incremental: ``UsesReader`` keeps where it stopped
(whole lines only: a line still being written is read next time), so a transcript that grew is
read from there. Reading never fails on content: a line that is not JSON is counted and skipped.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, Literal

import orjson

from memtui.core.base.units import utf16_len
from memtui.core.base.safe_read import open_regular
from memtui.core.sessions.background import parse_time
from memtui.core.sessions.transcripts import MAX_TRANSCRIPT_BYTES, too_large

UseKind = Literal["recalled", "read", "written"]
USE_KINDS: tuple[UseKind, ...] = ("recalled", "read", "written")
# The tools whose ``file_path`` (``notebook_path``) input reads / writes a file (Claude Code 2.1.328).
READ_TOOLS: frozenset[str] = frozenset({"Read"})
WRITE_TOOLS: frozenset[str] = frozenset({"Write", "Edit", "MultiEdit", "NotebookEdit"})
# Lines that copy the conversation rather than record a step of it, recognised by their first
# bytes (the CLI writes ``type`` first on these lines, and ``attachment.type`` within ~100 bytes).
_COPY_PREFIXES = (b'{"type":"api-request', b'{"type":"last-prompt', b'{"type":"queue-operation')
_SNAPSHOT = b'"attachment":{"type":"prompt_snapshot"'
# A line worth decoding names one of these (a recall, a tool call or its result, a background
# write, a request's usage).
_RECORD_MARKERS = (b'"relevant_memories"', b'"tool_use"', b'"tool_result"', b'"memory_saved"', b'"usage"')
_HEAD = 256
_TIMESTAMP = re.compile(rb'(?<!\\)"timestamp":\s*"([0-9T:.+\-Z]{10,40})"')
_CWD = re.compile(rb'(?<!\\)"cwd":\s*"((?:[^"\\]|\\.){1,4096})"')
_SESSION = re.compile(rb'(?<!\\)"sessionId":\s*"([0-9A-Za-z_\-]{1,100})"')
_VERSION = re.compile(rb'(?<!\\)"version":\s*"(\d+\.\d+\.\d+[0-9A-Za-z.+\-]{0,40})"')
# How far back from the end of what was read the last timestamp is looked for.
_TAIL_BYTES = 256 * 1024
# memtui's choices: how much of a transcript is read at once, and how much of its start is
# searched for the session's id, cwd, version and first timestamp (the first lines carry them).
CHUNK_BYTES = 16 * 1024 * 1024
FACTS_BYTES = 256 * 1024


@dataclass(frozen=True, slots=True)
class MemoryUse:
    """One use of a file inside the memory dir.

    ``kind``: ``recalled`` / ``read`` / ``written``; ``relpath``: the file, POSIX, relative to
    the memory dir; ``time``: epoch s of the line's ``timestamp`` (``None`` when it has none);
    ``line``: 1-based line of the transcript; ``uuid``: that line's ``uuid`` (where to open the
    conversation); ``tool``: the tool (``Read``, ``Write``…), ``recall``, or ``extract`` /
    ``dream`` for a background write; ``key``: what identifies the use across copies of a
    conversation (a tool call's id; a line's uuid and the path)."""

    kind: UseKind
    relpath: str
    time: float | None
    line: int
    uuid: str | None
    tool: str
    key: str


@dataclass(slots=True)
class TranscriptState:
    """Where the reading of one transcript stands, and what it found so far.

    ``offset``: bytes consumed (whole lines); ``lines``: lines consumed; ``skipped``: lines that
    were not a JSON object; ``session_id`` / ``cwd`` / ``version``: the first found;
    ``first_time`` / ``last_time``: epoch s of the first and the last timestamp;
    ``start_tokens``: the input tokens of the first request the session's first assistant
    message records (``input_tokens`` + cache creation + cache read; ``None`` until found);
    ``recalled_units``: UTF-16 units of recalled memory content injected (the session's recall
    budget); ``uses`` in file order; ``pending``: tool-call ids of uses whose result is not in
    yet (an error result then removes the use)."""

    offset: int = 0
    lines: int = 0
    skipped: int = 0
    session_id: str | None = None
    cwd: str | None = None
    version: str | None = None
    first_time: float | None = None
    last_time: float | None = None
    start_tokens: int | None = None
    recalled_units: int = 0
    uses: list[MemoryUse] = field(default_factory=list)
    pending: set[str] = field(default_factory=set)
    errored: set[str] = field(default_factory=set)


def _needles(memory_dir: Path) -> tuple[bytes, ...]:
    """The memory dir's path as a transcript writes it (absolute, and its realpath when that
    differs), UTF-8, as a JSON string holds it (``\\`` doubled)."""
    forms = {os.path.normpath(os.path.abspath(memory_dir)), os.path.realpath(memory_dir)}
    return tuple(sorted(f.replace("\\", "\\\\").encode("utf-8", "surrogatepass") for f in forms))


class MemoryPaths:
    """Turns a path a transcript names into a path relative to the memory dir (or ``None``)."""

    def __init__(self, memory_dir: Path) -> None:
        self.bases = tuple(dict.fromkeys((os.path.normpath(os.path.abspath(memory_dir)), os.path.realpath(memory_dir))))
        self._prefixes = tuple(b.rstrip(os.sep) + os.sep for b in self.bases)
        self.needles = _needles(memory_dir)

    def relpath(self, raw: object, cwd: str | None) -> str | None:
        """``raw`` (absolute, or relative to ``cwd``) below the memory dir, as a POSIX relpath;
        ``None`` for anything else (the memory dir itself included)."""
        if not isinstance(raw, str) or not raw or "\0" in raw:
            return None
        if raw[:1] != os.sep and not os.path.isabs(raw):
            if not cwd:
                return None
            raw = os.path.join(cwd, raw)
        path = os.path.normpath(raw) if "/." in raw or "//" in raw or os.sep != "/" else raw
        for prefix in self._prefixes:
            if path.startswith(prefix):
                rel = path[len(prefix) :]
                return rel if os.sep == "/" else rel.replace(os.sep, "/")
        return None

    def mentioned(self, raw: bytes) -> bool:
        """``raw`` (a line) names the memory dir."""
        return any(n in raw for n in self.needles)


def _str(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _tool_path(block: dict[str, Any]) -> object:
    inp = block.get("input")
    if not isinstance(inp, dict):
        return None
    return inp.get("file_path") if "file_path" in inp else inp.get("notebook_path")


class UsesReader:
    """Reads memory uses from transcripts for one memory dir (see the module docstring)."""

    def __init__(self, memory_dir: Path) -> None:
        self.paths = MemoryPaths(memory_dir)

    def read(self, path: Path, state: TranscriptState | None = None) -> TranscriptState:
        """Read ``path`` from ``state.offset`` (from the start without a state) and return the
        updated state (``state`` itself is updated). Raises ``OSError`` when the file cannot be
        opened or read, is not a regular file, or is over ``MAX_TRANSCRIPT_BYTES``."""
        state = TranscriptState() if state is None else state
        fh, st = open_regular(path)  # a FIFO or a device raises, never blocks
        with fh:
            if st.st_size > MAX_TRANSCRIPT_BYTES:
                raise too_large(st.st_size)
            self.read_stream(fh, state)
        return state

    def read_stream(self, fh: BinaryIO, state: TranscriptState) -> None:
        """``read`` over an open binary file (seekable): whole lines from ``state.offset``, in
        chunks of ``CHUNK_BYTES`` (a line longer than a chunk is read whole)."""
        fh.seek(state.offset)
        start = state.offset
        carry = b""
        while True:
            block = fh.read(CHUNK_BYTES)
            if not block:
                break
            data = carry + block
            cut = data.rfind(b"\n") + 1
            if cut == 0:
                carry = data  # no whole line yet
                continue
            self._chunk(data, cut, state)
            carry = data[cut:]
        if state.offset > start:
            self._last_time(fh, start, state)

    def _chunk(self, data: bytes, end: int, state: TranscriptState) -> None:
        """The whole lines ``data[:end]`` (``end`` just after a newline): the session's facts
        from the first lines, then only the lines holding a marker (see the module docstring),
        in file order."""
        if state.session_id is None or state.first_time is None or state.cwd is None or state.version is None:
            self._facts(data, end, state)
        starts: set[int] = set()
        finders = [*self.paths.needles, b'"memory_saved"']
        if state.pending or b'"is_error"' in data:
            finders += [b'"is_error":true', b'"is_error": true']
        for needle in finders:
            at = data.find(needle, 0, end)
            while at != -1:
                line_start = data.rfind(b"\n", 0, at) + 1
                starts.add(line_start)
                line_end = data.find(b"\n", at, end)
                at = data.find(needle, line_end, end)
        if state.start_tokens is None:
            at = data.find(b'"usage"', 0, end)
            while at != -1:
                line_start = data.rfind(b"\n", 0, at) + 1
                line_end = data.find(b"\n", at, end)
                if b'"assistant"' in data[line_start : min(line_end, line_start + 2048)]:
                    starts.add(line_start)
                    break
                at = data.find(b'"usage"', line_end, end)
        base_lines = state.lines
        prev = before = 0
        for line_start in sorted(starts):
            before += data.count(b"\n", prev, line_start)  # the lines above this one
            prev = line_start
            state.lines = base_lines + before + 1  # this line's number (1-based)
            self._line(data[line_start : data.find(b"\n", line_start, end) + 1], state)
        state.lines = base_lines + before + data.count(b"\n", prev, end)
        state.offset += end

    def _facts(self, data: bytes, end: int, state: TranscriptState) -> None:
        """The session id, cwd, version and first timestamp, from the first lines that say."""
        head = data[: min(end, FACTS_BYTES)]
        if state.session_id is None and (m := _SESSION.search(head)):
            state.session_id = m.group(1).decode("ascii")
        if state.first_time is None and (t := _TIMESTAMP.search(head)):
            state.first_time = parse_time(t.group(1).decode("ascii", "replace"))
        if state.cwd is None and (c := _CWD.search(head)):
            state.cwd = _decode_json_string(c.group(1))
        if state.version is None and (v := _VERSION.search(head)):
            state.version = v.group(1).decode("ascii", "replace")

    # ---------------------------------------------------------------- one line
    def _line(self, raw: bytes, state: TranscriptState) -> None:
        if raw.startswith(_COPY_PREFIXES) or _SNAPSHOT in raw[:_HEAD] or not any(m in raw for m in _RECORD_MARKERS):
            return
        try:
            obj = orjson.loads(raw)
        except orjson.JSONDecodeError:
            state.skipped += 1
            return
        if isinstance(obj, dict):
            self._record(obj, state)

    def _record(self, obj: dict[str, Any], state: TranscriptState) -> None:
        kind = obj.get("type")
        when = parse_time(obj.get("timestamp"))
        uuid = _str(obj.get("uuid"))
        cwd = _str(obj.get("cwd")) or state.cwd
        line = state.lines
        message = obj.get("message")
        content = message.get("content") if isinstance(message, dict) else None
        if kind == "assistant" and isinstance(message, dict):
            usage = message.get("usage")
            if state.start_tokens is None and isinstance(usage, dict) and obj.get("isSidechain") is not True:
                state.start_tokens = sum(v for k in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
                                         if isinstance(v := usage.get(k), int) and not isinstance(v, bool))
            for block in content if isinstance(content, list) else ():
                if not isinstance(block, dict) or block.get("type") != "tool_use":
                    continue
                name, ident = _str(block.get("name")), _str(block.get("id"))
                if name not in READ_TOOLS and name not in WRITE_TOOLS:
                    continue
                rel = self.paths.relpath(_tool_path(block), cwd)
                if rel is None or name is None:
                    continue
                key = ident or f"{uuid}:{rel}"
                if key in state.errored:
                    continue
                state.uses.append(MemoryUse("read" if name in READ_TOOLS else "written", rel, when, line, uuid, name, key))
                if ident:
                    state.pending.add(ident)
        elif kind == "user" and isinstance(content, list):
            for block in content:
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    ident = _str(block.get("tool_use_id"))
                    if ident is None or ident not in state.pending:
                        continue
                    state.pending.discard(ident)
                    if block.get("is_error") is True:
                        state.errored.add(ident)
                        state.uses = [u for u in state.uses if u.key != ident]
        elif kind == "attachment":
            att = obj.get("attachment")
            if isinstance(att, dict) and att.get("type") == "relevant_memories" and isinstance(att.get("memories"), list):
                for mem in att["memories"]:
                    if not isinstance(mem, dict):
                        continue
                    if isinstance(mem.get("content"), str):
                        state.recalled_units += utf16_len(mem["content"])
                    rel = self.paths.relpath(mem.get("path"), cwd)
                    if rel is not None:
                        state.uses.append(MemoryUse("recalled", rel, when, line, uuid, "recall", f"{uuid}:{rel}"))
        elif kind == "system" and obj.get("subtype") == "memory_saved":
            source = "dream" if isinstance(obj.get("verb"), str) else "extract"
            written = obj.get("writtenPaths")
            for raw_path in written if isinstance(written, list) else ():
                rel = self.paths.relpath(raw_path, cwd)
                if rel is not None:
                    state.uses.append(MemoryUse("written", rel, when, line, uuid, source, f"{uuid}:{rel}"))

    @staticmethod
    def _last_time(fh: BinaryIO, start: int, state: TranscriptState) -> None:
        """The last timestamp of what was just read, from its tail (escaped copies skipped)."""
        tail_from = max(start, state.offset - _TAIL_BYTES)
        fh.seek(tail_from)
        tail = fh.read(state.offset - tail_from)
        at = len(tail)
        while (at := tail.rfind(b'"timestamp"', 0, at)) != -1:
            m = _TIMESTAMP.match(tail, at) if at == 0 or tail[at - 1] != 0x5C else None  # 0x5C: a backslash
            if m is not None:
                state.last_time = parse_time(m.group(1).decode("ascii", "replace")) or state.last_time
                return


def _decode_json_string(raw: bytes) -> str | None:
    try:
        value = orjson.loads(b'"' + raw + b'"')
    except orjson.JSONDecodeError:
        return None
    return value if isinstance(value, str) else None


def dedupe(uses: Sequence[MemoryUse]) -> list[MemoryUse]:
    """``uses`` with each ``key`` once (the first), in order: a conversation copied into
    another transcript (a resumed session) records the same calls again."""
    seen: set[tuple[str, str]] = set()
    out: list[MemoryUse] = []
    for use in uses:
        k = (use.key, use.relpath)
        if k not in seen:
            seen.add(k)
            out.append(use)
    return out
