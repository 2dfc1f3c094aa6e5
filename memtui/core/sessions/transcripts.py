"""Transcripts: the agent's JSONL session files (docs/behaviour.md §7), read tolerantly.

One JSON object per line; ``type`` is ``user`` / ``assistant`` (other types — ``summary``,
``system``, ``attachment``, ``file-history-snapshot``… — are kept as entries but carry no
message); ``message.content`` is a string or a list of blocks: ``text``, ``tool_use
{id, name, input}``, ``tool_result {tool_use_id, content, is_error}``. Entries also carry
``timestamp``, ``cwd``, ``sessionId``, ``isMeta``, ``isSidechain`` and ``version``.

Claude Code 2.1.328 writes many more line types (``attachment``, ``api-request``,
``api-request-blob``, ``queue-operation``, ``last-prompt``, ``cost-state``, ``atis-latch``,
``tools-used``…): every line is kept as an entry, its type counted in
``Transcript.line_types``, and nothing is said per line; ``unknown_line_types`` compares the
counts with the types a release writes, for one summary at most. ``attachment`` lines (and
``system`` lines with a ``subtype``) are read through ``attachments``; typed readers for their
kinds are registered in ``ATTACHMENT_READERS`` (``instructions``, ``nested_memory``,
``relevant_memories`` here; a new kind is one more entry).

Reading never fails on content: a line that is not JSON, not an object, nested deeper than
``MAX_JSON_DEPTH`` (``memtui.core.base.jsontext``), or cut short (a session still being written
ends mid-line) is skipped and counted; unknown block types are
kept with their raw ``type``. Only an unreadable *file* raises ``OSError``.

Used by recall (recently used tools, already surfaced memories) and by extraction (did the
agent write inside the memory dir since the cursor).
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memtui.core.base.jsontext import JSONInputError, json_number, loads_checked
from memtui.core.base.safe_read import FileTooLargeError, open_regular
from memtui.core.base.units import utf16_len

# memtui's choice: the text kept from one tool_result. Results can be megabytes (a whole file
# read, a long build log); nothing memtui computes needs more than a preview.
TOOL_RESULT_TEXT_CAP = 8192
# The reference writes sub-agent transcripts as `agent-*.jsonl` next to the sessions; they are
# not sessions of their own (docs/behaviour.md §2 "Sessions dir").
SUBAGENT_PREFIX = "agent-"
# The tools whose `file_path` input writes a file (docs/behaviour.md §7: "Write/Edit").
WRITE_TOOLS: frozenset[str] = frozenset({"Write", "Edit"})


@dataclass(frozen=True, slots=True)
class Block:
    """One content block.

    ``type`` is the raw block type (``text``, ``tool_use``, ``tool_result``, ``image``, …).
    ``text``: the text of a ``text`` block, or the flattened text of a ``tool_result`` (cut to
    ``TOOL_RESULT_TEXT_CAP`` characters, ``truncated`` then true). ``id``/``name``/``input``:
    of a ``tool_use``. ``tool_use_id``/``is_error``: of a ``tool_result``.
    """

    type: str
    text: str = ""
    id: str | None = None
    name: str | None = None
    input: dict[str, Any] = field(default_factory=dict)
    tool_use_id: str | None = None
    is_error: bool = False
    truncated: bool = False


@dataclass(frozen=True, slots=True)
class Entry:
    """One parsed line. ``index``: position among the parsed entries (0-based); ``line``: the
    1-based line number in the file. ``type``: the raw entry type; ``role``: ``message.role``
    or ``None``; ``content``: the blocks (a string content becomes one ``text`` block);
    ``content_is_string``: the content was a bare string (how the reference stores what a
    person typed). ``raw``: the whole decoded object, minus ``message.content``."""

    index: int
    line: int
    type: str
    role: str | None
    content: tuple[Block, ...]
    content_is_string: bool
    uuid: str | None
    timestamp: str | None
    cwd: str | None
    session_id: str | None
    is_meta: bool
    is_sidechain: bool
    raw: dict[str, Any]

    @property
    def text(self) -> str:
        """The ``text`` blocks joined with a newline (``""`` when there are none)."""
        return "\n".join(b.text for b in self.content if b.type == "text")

    @property
    def version(self) -> str | None:
        """The agent's version that wrote this line (``version``), when it says."""
        value = self.raw.get("version")
        return value if isinstance(value, str) else None

    @property
    def attachment(self) -> Attachment | None:
        """The line's attachment: an ``attachment`` line's payload (kind = its ``type``), or a
        ``system`` line's event (kind = its ``subtype``, data = the line); else ``None``."""
        if self.type == "attachment":
            att = self.raw.get("attachment")
            if isinstance(att, dict) and isinstance(att.get("type"), str):
                return Attachment(att["type"], att, self.index, self.line)
        elif self.type == "system" and isinstance(self.raw.get("subtype"), str):
            return Attachment(self.raw["subtype"], self.raw, self.index, self.line)
        return None


@dataclass(frozen=True, slots=True)
class Attachment:
    """What an ``attachment`` line (or a ``system`` line with a ``subtype``) carries: ``kind``
    (``instructions``, ``nested_memory``, ``relevant_memories``, ``memory_update``,
    ``memory_saved``…), ``data`` (the raw mapping), ``entry`` (the entry's index) and ``line``
    (1-based line in the file)."""

    kind: str
    data: Mapping[str, Any]
    entry: int
    line: int


@dataclass(frozen=True, slots=True)
class Transcript:
    """A read transcript: ``entries`` in file order; ``skipped_lines``: 1-based numbers of
    lines that were not a JSON object (blank lines are not counted); ``truncated_tail``: the
    last line was cut short (no final newline and not valid JSON); ``line_types``: how many
    lines of each ``type`` there were."""

    path: Path | None
    entries: tuple[Entry, ...]
    skipped_lines: tuple[int, ...] = ()
    truncated_tail: bool = False
    line_types: Mapping[str, int] = field(default_factory=dict)

    @property
    def session_id(self) -> str | None:
        """The first ``sessionId`` found, else ``None``."""
        return next((e.session_id for e in self.entries if e.session_id), None)

    @property
    def version(self) -> str | None:
        """The agent's version on the newest line that says one (``None`` when none does)."""
        return next((e.version for e in reversed(self.entries) if e.version), None)

    @property
    def cwds(self) -> tuple[str, ...]:
        """Every distinct ``cwd`` in order of appearance (several hint at a slug collision)."""
        seen: dict[str, None] = {}
        for e in self.entries:
            if e.cwd:
                seen.setdefault(e.cwd, None)
        return tuple(seen)


@dataclass(frozen=True, slots=True)
class ToolCall:
    """A ``tool_use`` block with its result: ``entry``/``result_entry`` are entry indexes;
    ``result`` is the matching ``tool_result`` block or ``None`` when none came (yet)."""

    id: str
    name: str
    input: dict[str, Any]
    entry: int
    result: Block | None = None
    result_entry: int | None = None

    @property
    def errored(self) -> bool:
        """The result says ``is_error: true``."""
        return self.result is not None and self.result.is_error


@dataclass(frozen=True, slots=True)
class SessionFile:
    """One session transcript in a sessions dir: ``session_id`` is the file stem; ``mtime``
    epoch seconds; ``size`` bytes."""

    path: Path
    session_id: str
    mtime: float
    size: int


def _flatten(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for item in content:
            if isinstance(item, dict) and item.get("type") == "text" and isinstance(item.get("text"), str):
                parts.append(item["text"])
            elif isinstance(item, str):
                parts.append(item)
        return "\n".join(parts)
    return ""


def _block(raw: object) -> Block | None:
    if isinstance(raw, str):
        return Block("text", text=raw)
    if not isinstance(raw, dict):
        return None
    kind = raw.get("type")
    if not isinstance(kind, str):
        return None
    if kind == "text":
        text = raw.get("text")
        return Block("text", text=text if isinstance(text, str) else "")
    if kind == "tool_use":
        ident, name, inp = raw.get("id"), raw.get("name"), raw.get("input")
        return Block(
            "tool_use",
            id=ident if isinstance(ident, str) else None,
            name=name if isinstance(name, str) else None,
            input=inp if isinstance(inp, dict) else {},
        )
    if kind == "tool_result":
        ident = raw.get("tool_use_id")
        text = _flatten(raw.get("content"))
        cut = len(text) > TOOL_RESULT_TEXT_CAP
        return Block(
            "tool_result",
            text=text[:TOOL_RESULT_TEXT_CAP],
            tool_use_id=ident if isinstance(ident, str) else None,
            is_error=raw.get("is_error") is True,
            truncated=cut,
        )
    return Block(kind)


def _str(value: object) -> str | None:
    return value if isinstance(value, str) else None


def parse_entry(obj: dict[str, Any], index: int, line: int) -> Entry:
    """One decoded JSONL object as an ``Entry`` (never raises; missing fields become ``None``)."""
    message = obj.get("message")
    role: str | None = None
    blocks: list[Block] = []
    is_string = False
    raw = dict(obj)
    if isinstance(message, dict):
        role = _str(message.get("role"))
        content = message.get("content")
        if isinstance(content, str):
            is_string = True
            blocks.append(Block("text", text=content))
        elif isinstance(content, list):
            blocks.extend(b for item in content if (b := _block(item)) is not None)
        raw["message"] = {k: v for k, v in message.items() if k != "content"}
    kind = obj.get("type")
    return Entry(
        index=index,
        line=line,
        type=kind if isinstance(kind, str) else "",
        role=role,
        content=tuple(blocks),
        content_is_string=is_string,
        uuid=_str(obj.get("uuid")),
        timestamp=_str(obj.get("timestamp")),
        cwd=_str(obj.get("cwd")),
        session_id=_str(obj.get("sessionId")),
        is_meta=obj.get("isMeta") is True,
        is_sidechain=obj.get("isSidechain") is True,
        raw=raw,
    )


def parse_lines(lines: Iterable[bytes | str], path: Path | None = None) -> Transcript:
    """Parse JSONL lines (bytes or text, with or without their newline) into a ``Transcript``.

    Lines that are blank are ignored; lines that are not a JSON object are skipped and their
    numbers recorded. Never raises.
    """
    entries: list[Entry] = []
    skipped: list[int] = []
    last_bad_unterminated = False
    for number, raw_line in enumerate(lines, start=1):
        text = raw_line.decode("utf-8", errors="replace") if isinstance(raw_line, bytes) else raw_line
        terminated = text.endswith("\n")
        if not text.strip():
            last_bad_unterminated = False
            continue
        try:
            obj = loads_checked(text)
        except JSONInputError:  # not JSON, NaN, or nested past MAX_JSON_DEPTH: skipped like any bad line
            obj = None
        if not isinstance(obj, dict):
            skipped.append(number)
            last_bad_unterminated = not terminated
            continue
        last_bad_unterminated = False
        entries.append(parse_entry(obj, len(entries), number))
    types = Counter(e.type for e in entries)
    return Transcript(path, tuple(entries), tuple(skipped), last_bad_unterminated, dict(types))


# The largest transcript read (memtui's choice: long sessions reach tens of MB; a parsed
# transcript takes about 6 times its size in memory, so a bigger file, a FIFO or a device is
# refused, and named, rather than read).
MAX_TRANSCRIPT_BYTES = 100 * 1024 * 1024


def too_large(size: int) -> FileTooLargeError:
    """The error for a transcript of ``size`` bytes over ``MAX_TRANSCRIPT_BYTES``."""
    mib = 1024 * 1024
    return FileTooLargeError(27, f"skipped: {size / mib:.1f} MB, over the {MAX_TRANSCRIPT_BYTES // mib} MB cap of a transcript")


def read_transcript(path: Path) -> Transcript:
    """Read one JSONL transcript. Raises ``OSError`` when the file cannot be opened/read,
    ``NotRegularFileError`` (a FIFO, a device), ``FileTooLargeError`` (over
    ``MAX_TRANSCRIPT_BYTES``)."""
    fh, st = open_regular(path)
    with fh:
        if st.st_size > MAX_TRANSCRIPT_BYTES:
            error = too_large(st.st_size)
            error.filename = str(path)
            raise error
        return parse_lines(fh, path)


def list_sessions(sessions_dir: Path) -> list[SessionFile]:
    """The session transcripts (``*.jsonl``, not ``agent-*.jsonl``) directly in
    ``sessions_dir``, newest mtime first. A missing or unreadable dir gives ``[]``."""
    found: list[SessionFile] = []
    try:
        items = list(os.scandir(sessions_dir))
    except OSError:
        return []
    for item in items:
        name = item.name
        if not name.endswith(".jsonl") or name.startswith(SUBAGENT_PREFIX):
            continue
        try:
            if not item.is_file():
                continue
            st = item.stat()
        except OSError:
            continue
        found.append(SessionFile(Path(item.path), name[: -len(".jsonl")], st.st_mtime, st.st_size))
    found.sort(key=lambda s: (-s.mtime, s.session_id))
    return found


def is_human_turn(entry: Entry) -> bool:
    """A message a person typed: a ``user`` entry, not ``isMeta``, whose content is a string or
    has at least one non-empty ``text`` block (a user entry holding only ``tool_result`` blocks
    is the harness answering a tool call, not a person)."""
    if entry.type != "user" or entry.is_meta:
        return False
    if entry.content_is_string:
        return bool(entry.text.strip())
    return any(b.type == "text" and b.text.strip() for b in entry.content)


def last_human_turn(transcript: Transcript, *, include_sidechains: bool = False) -> Entry | None:
    """The last human turn (see ``is_human_turn``), or ``None``. Sidechain (sub-agent) entries
    are ignored unless ``include_sidechains``."""
    for entry in reversed(transcript.entries):
        if (include_sidechains or not entry.is_sidechain) and is_human_turn(entry):
            return entry
    return None


def tool_calls(entries: Sequence[Entry], start: int = 0, end: int | None = None) -> list[ToolCall]:
    """Every ``tool_use`` in assistant entries ``entries[start:end]``, in order, each paired with
    the first ``tool_result`` naming its id anywhere after it in the same slice."""
    window = entries[start:end]
    calls: list[ToolCall] = []
    by_id: dict[str, int] = {}
    for entry in window:
        for block in entry.content:
            if entry.type == "assistant" and block.type == "tool_use" and block.id and block.name:
                by_id[block.id] = len(calls)
                calls.append(ToolCall(block.id, block.name, block.input, entry.index))
            elif block.type == "tool_result" and block.tool_use_id in by_id:
                pos = by_id[block.tool_use_id]
                if calls[pos].result is None:
                    old = calls[pos]
                    calls[pos] = ToolCall(old.id, old.name, old.input, old.entry, block, entry.index)
    return calls


def recently_used_tools(transcript: Transcript) -> tuple[str, ...]:
    """docs/behaviour.md §6: names of tools called since the last human turn that got a ``tool_result``,
    minus every tool that errored there (one failure removes the name, as the reference's
    ``collectRecentSuccessfulTools`` does). Order: first successful use. Sidechains ignored.

    With no human turn at all, the whole transcript counts.
    """
    last = last_human_turn(transcript)
    start = last.index + 1 if last is not None else 0
    main = [e for e in transcript.entries if not e.is_sidechain]
    # Re-index the slice start against the main-chain list.
    pos = next((i for i, e in enumerate(main) if e.index >= start), len(main))
    calls = tool_calls(main, pos)
    failed = {c.name for c in calls if c.errored}
    names: dict[str, None] = {}
    for c in calls:
        if c.result is not None and c.name not in failed:
            names.setdefault(c.name, None)
    return tuple(names)


def _inside(target: str, directory: Path) -> bool:
    base = os.path.normpath(os.path.abspath(directory))
    path = os.path.normpath(target)
    return path == base or path.startswith(base.rstrip(os.sep) + os.sep)


def writes_inside(
    transcript: Transcript, directory: Path, start: int = 0, end: int | None = None
) -> list[ToolCall]:
    """docs/behaviour.md §7: the ``Write``/``Edit`` calls of assistant entries ``[start:end]`` whose
    ``file_path`` lies inside ``directory`` (compared on a separator boundary after
    normalising; a relative ``file_path`` is resolved against the entry's ``cwd``).
    Whether the call succeeded is not considered, as in the reference."""
    hits: list[ToolCall] = []
    for call in tool_calls(transcript.entries, start, end):
        if call.name not in WRITE_TOOLS:
            continue
        target = call.input.get("file_path")
        if not isinstance(target, str) or not target:
            continue
        if not os.path.isabs(target):
            cwd = transcript.entries[call.entry].cwd
            if not cwd:
                continue
            target = os.path.join(cwd, target)
        if _inside(target, directory):
            hits.append(call)
    return hits


def surfaced_memories(transcript: Transcript) -> tuple[tuple[str, ...], int]:
    """Memories the session already surfaced: the paths in ``attachment`` entries of type
    ``relevant_memories`` (first-seen order) and the total length of their ``content``
    (UTF-16 code units, the reference's ``content.length``; see ``recall`` for the 60 KiB
    budget it is compared to)."""
    paths: dict[str, None] = {}
    total = 0
    for att in attachments(transcript, "relevant_memories"):
        mems = att.data.get("memories")
        if not isinstance(mems, list):
            continue
        for mem in mems:
            if not isinstance(mem, dict):
                continue
            if isinstance(mem.get("path"), str):
                paths.setdefault(mem["path"], None)
            content = mem.get("content")
            if isinstance(content, str):
                total += utf16_len(content)
    return tuple(paths), total


def unknown_line_types(transcript: Transcript, known: Iterable[str]) -> dict[str, int]:
    """The line types of ``transcript`` outside ``known`` (a release's ``transcript_types``),
    with their counts: one summary, never one finding per line."""
    allowed = set(known)
    return {kind: n for kind, n in sorted(transcript.line_types.items()) if kind not in allowed}


def attachments(transcript: Transcript, *kinds: str) -> list[Attachment]:
    """The attachments of ``transcript`` in file order, only those of ``kinds`` when given."""
    out: list[Attachment] = []
    for entry in transcript.entries:
        att = entry.attachment
        if att is not None and (not kinds or att.kind in kinds):
            out.append(att)
    return out


@dataclass(frozen=True, slots=True)
class InstructionFile:
    """One file of an ``instructions`` attachment (what the agent put in its first message):
    ``path``, ``type`` (``Project``, ``Local``, ``User``, ``Managed``, ``AutoMem``…) and
    ``content`` as sent."""

    path: str
    type: str
    content: str


@dataclass(frozen=True, slots=True)
class NestedMemory:
    """A ``nested_memory`` attachment (a file loaded after a read): ``path``, ``type``,
    ``content`` as sent, ``raw_content`` (the file as on disk, when it differed) and
    ``is_rule``."""

    path: str
    type: str
    content: str
    raw_content: str | None
    is_rule: bool


@dataclass(frozen=True, slots=True)
class SurfacedMemory:
    """One memory of a ``relevant_memories`` attachment (a recall): ``path``, ``content`` as
    injected, ``mtime_ms`` and ``header`` (as sent, when recorded)."""

    path: str
    content: str
    mtime_ms: float | None
    header: str | None


def _str_field(data: Mapping[str, Any], key: str) -> str:
    value = data.get(key)
    return value if isinstance(value, str) else ""


def read_instructions(att: Attachment) -> tuple[InstructionFile, ...]:
    """The files of an ``instructions`` attachment (entries that are not objects skipped)."""
    files = att.data.get("files")
    return tuple(
        InstructionFile(_str_field(f, "path"), _str_field(f, "type"), _str_field(f, "content"))
        for f in (files if isinstance(files, list) else [])
        if isinstance(f, dict)
    )


def read_nested_memory(att: Attachment) -> NestedMemory | None:
    """The file of a ``nested_memory`` attachment, or ``None`` when it holds none."""
    content = att.data.get("content")
    if not isinstance(content, dict):
        return None
    raw = content.get("rawContent")
    path = _str_field(content, "path") or _str_field(att.data, "path")
    return NestedMemory(path, _str_field(content, "type"), _str_field(content, "content"), raw if isinstance(raw, str) else None, content.get("isRule") is True)


def read_relevant_memories(att: Attachment) -> tuple[SurfacedMemory, ...]:
    """The memories of a ``relevant_memories`` attachment (``mtime_ms`` ``None`` unless a
    finite number)."""
    mems = att.data.get("memories")
    out: list[SurfacedMemory] = []
    for m in mems if isinstance(mems, list) else []:
        if not isinstance(m, dict) or not isinstance(m.get("path"), str):
            continue
        mtime = m.get("mtimeMs")
        header = m.get("header")
        out.append(
            SurfacedMemory(
                m["path"],
                _str_field(m, "content"),
                json_number(mtime),
                header if isinstance(header, str) else None,
            )
        )
    return tuple(out)


# Attachment kind -> its typed reader. A new kind is one more entry (its reader takes an
# ``Attachment`` and never raises on a malformed payload).
ATTACHMENT_READERS: dict[str, Callable[[Attachment], Any]] = {
    "instructions": read_instructions,
    "nested_memory": read_nested_memory,
    "relevant_memories": read_relevant_memories,
}


def read_attachment(att: Attachment) -> Any:
    """``att`` through the reader registered for its kind; ``None`` for a kind without one."""
    reader = ATTACHMENT_READERS.get(att.kind)
    return reader(att) if reader is not None else None
