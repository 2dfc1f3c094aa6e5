"""Memory files: tolerant parsing of every file below the memory dir (docs/behaviour.md §4.1, §4.2).

One memory per ``*.md`` file anywhere below the memory dir, except files named ``MEMORY.md``
(indexes). Parsing never fails a scan: each problem becomes one ``Diagnostic`` with a stable
``code`` (see ``DIAGNOSTIC_CODES``) and the file is still listed.

Type matching is exact and case-sensitive, as in the reference (``parseMemoryType``). Where
the type is read depends on the agent's memory format (``memtui.core.places.release``): the
seed design reads a top-level ``type`` only (``metadata.type`` is a *declared* type it does not
recognise), Claude Code reads ``metadata.type`` first, then ``type``; ``Feedback`` is never a
type.
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from memtui.core.base.diagnostics import Diagnostic, Severity
from memtui.core.base.gcpause import gc_paused
from memtui.core.memory.frontmatter import Frontmatter, parse_frontmatter
from memtui.core.memory.index import INDEX_NAME
from memtui.core.memory.lint import date_base, find_relative_dates, missing_sections
from memtui.core.base.safe_read import FileTooLargeError, read_head_regular, read_regular
from memtui.core.memory.catalogdb import CatalogDB, jsonable, key_text, stat_key
from memtui.core.places.behaviour import MemoryFormat
from memtui.core.places.releases.seed import SEED

# The seed design's reading of a memory: a top-level `type` only, scalars read as text.
SEED_FORMAT: MemoryFormat = SEED.memory_format

StrPath = str | os.PathLike[str]
MemoryType = Literal["user", "feedback", "project", "reference"]
MEMORY_TYPES: tuple[MemoryType, ...] = ("user", "feedback", "project", "reference")
TEAM_DIR = "team"
# The reference reads only this many lines of each file when it scans for recall
# (FRONTMATTER_MAX_LINES); a frontmatter block closing later is invisible to recall.
HEADER_LINES = 30
# Recall injects at most this much of a picked file (docs/behaviour.md §6 "Injection").
RECALL_MAX_BYTES = 4096
RECALL_MAX_LINES = 200
LOCK_FILE = ".consolidate-lock"
# memtui's cap on reading one memory file. A real memory is a few KB and recall injects at most
# its first 4,096 bytes: a memory over 1 MiB is pasted material, not something to remember. A larger file is listed from its first 1 MiB (its
# frontmatter and the start of its body) with ``too-large`` and not opened in the editor; this
# bounds every check's cost on a pathological file.
MAX_MEMORY_BYTES = 1024 * 1024

# code -> (severity, meaning). The meaning is the one-line explanation shown in help/notes.
DIAGNOSTIC_CODES: dict[str, tuple[Severity, str]] = {
    "unreadable": ("error", "the file could not be read; the agent drops it from recall"),
    "not-utf8": ("warning", "bytes that are not UTF-8; the agent reads them as U+FFFD"),
    "empty": ("warning", "the file is empty or whitespace only"),
    "no-frontmatter": ("warning", "no frontmatter: the agent sees no name, description or type"),
    "frontmatter-after-bom": ("error", "a BOM precedes `---`: the agent sees no frontmatter at all"),
    "frontmatter-after-blank": ("error", "blank lines precede `---`: the agent sees no frontmatter at all"),
    "frontmatter-unclosed": ("error", "`---` opens a frontmatter block that never closes"),
    "frontmatter-repaired": ("info", "invalid YAML, repaired by the agent's quoting retry (the fields are read)"),
    "frontmatter-invalid": ("error", "invalid YAML even after the quoting retry: the agent reads no fields"),
    "frontmatter-not-mapping": ("error", "the frontmatter is not a key: value mapping"),
    "frontmatter-beyond-header": ("error", "frontmatter closes after line 30: recall sees no description or type"),
    "type-missing": ("warning", "no `type`: the agent lists it untyped"),
    "type-nested": ("warning", "`type` nested under `metadata:`: the agent does not see it (fix: lift to top level)"),
    "type-case": ("warning", "type in the wrong case (e.g. `Feedback`): types are case-sensitive (fix: lower-case)"),
    "type-unknown": ("warning", "a type outside user/feedback/project/reference: the agent ignores it"),
    "description-missing": ("warning", "no `description`: recall has nothing to match this memory on"),
    "description-multiline": ("warning", "`description` spans several lines; it should be one line (it is the recall key)"),
    "name-missing": ("info", "no `name` field"),
    "name-empty": ("info", "`name` is there but empty (`name: \"\"`)"),
    "missing-why": ("info", "a feedback or project memory that labels no reason (`**Why:**`, `## Why`, `Reason:`, `原因：`…): the reason lets a later session judge the edge cases"),
    "missing-how-to-apply": ("info", "a feedback or project memory that labels no instruction (`**How to apply:**`, `## How to apply`, `做法：`…): it says when the memory matters"),
    "relative-date": ("warning", "a relative date (tomorrow, next Monday, 明天): read months later it points at the wrong day; shown with the date it meant"),
    "too-large": ("warning", "over memtui's 1 MiB read cap: listed and checked from its first 1 MiB, not opened in memtui's editor"),
    "over-recall-limit": ("info", "over 4,096 bytes / 200 lines: recall injects only the first part"),
    "not-indexed": ("info", "not linked from the index MEMORY.md"),
}


# Codes only a memory format that reads more than the seed's produces (Claude Code's).
FORMAT_CODES: dict[str, tuple[Severity, str]] = {
    "frontmatter-bom-stripped": ("info", "a BOM precedes `---`: this agent drops it and reads the frontmatter"),
    "type-shadowed": ("warning", "`type` given twice (top level and `metadata.type`): the agent reads only one of them"),
}


def _diag(code: str, message: str | None = None, path: StrPath | None = None, line: int | None = None) -> Diagnostic:
    severity, meaning = DIAGNOSTIC_CODES[code] if code in DIAGNOSTIC_CODES else FORMAT_CODES[code]
    return Diagnostic(code, severity, message or meaning, str(path) if path else None, line)


@dataclass(frozen=True, slots=True)
class Memory:
    """One memory file as memtui reads it.

    - ``file``: the path as a string (as the scan found it: absolute when the memory dir is);
      ``path``: the same as a ``Path`` (made on access: 20,000 ``Path`` objects cost a scan
      ~0.1 s); ``relpath``: POSIX, relative to the memory dir; ``team``: below ``team/``.
    - ``mtime``: epoch seconds; ``size``: bytes; ``sha256``: hex digest of the bytes (for
      conflict checks before writes).
    - ``name`` / ``description``: strings or ``None`` (non-string scalars are stringified).
    - ``type``: what the agent recognises (one of ``MEMORY_TYPES``) or ``None``;
      ``declared_type``: what the file says, nested or mis-cased included, or ``None``.
    - ``frontmatter``: the parsed mapping; ``body``: the text after it; ``body_line``: where the
      body starts (1-based); ``text``: the whole decoded file.

    ``text`` and ``body`` are one string: ``body`` is ``text[body_start:]``, cut on access. A
    record rebuilt from the catalog database (``memtui.core.memory.catalogdb``) holds no text: ``text`` reads
    the file on first access (decoded as the scan decodes it; ``""`` if it is gone). If the file
    changed since its ``sha256`` was taken, the record's other fields describe the old bytes —
    as they do for any record read before a change; writes check ``sha256`` against the disk.
    """

    file: str
    relpath: str
    team: bool
    mtime: float
    size: int
    sha256: str
    name: str | None
    description: str | None
    type: MemoryType | None
    declared_type: str | None
    frontmatter: dict[str, Any] = field(default_factory=dict)
    body_start: int = 0
    body_line: int = 1
    loaded_text: str | None = field(default="", compare=False, repr=False)
    diagnostics: tuple[Diagnostic, ...] = ()

    @property
    def path(self) -> Path:
        """``file`` as a ``Path``."""
        return Path(self.file)

    @property
    def text(self) -> str:
        """The whole decoded file (read now if this record came from the catalog database)."""
        text = self.loaded_text
        if text is None:
            try:
                data, _st = read_regular(self.path, MAX_MEMORY_BYTES)
            except OSError:
                data = b""
            text = data.decode("utf-8", errors="replace")
            if hashlib.sha256(data).hexdigest() != self.sha256:  # changed since the scan
                object.__setattr__(self, "body_start", len(text) - len(parse_frontmatter(text).body))
            object.__setattr__(self, "loaded_text", text)
        return text

    @property
    def body(self) -> str:
        """The text after the frontmatter (the whole text when there is none)."""
        return self.text[self.body_start :]


def with_text(mem: Memory) -> tuple[Memory, bool]:
    """``mem`` with its text loaded, for one use: ``mem`` itself when it holds its text, else a
    copy that holds it (``mem`` stays without, so a pass over 100,000 memories keeps no text
    alive). The flag says whether the text is the bytes ``mem`` describes (its ``sha256``):
    ``False`` when the file changed (or is gone) since the scan — its body is then cut where
    that text's frontmatter ends, as ``Memory.text`` does."""
    if mem.loaded_text is not None:
        return mem, True
    try:
        data, _st = read_regular(mem.path, MAX_MEMORY_BYTES)
    except OSError:
        data = b""
    text = data.decode("utf-8", errors="replace")
    if hashlib.sha256(data).hexdigest() == mem.sha256:
        return replace(mem, loaded_text=text), True
    return replace(mem, loaded_text=text, body_start=len(text) - len(parse_frontmatter(text).body)), False


def parse_memory_type(raw: object) -> MemoryType | None:
    """The reference's ``parseMemoryType``: ``raw`` if it is exactly one of the four types."""
    if isinstance(raw, str):
        for t in MEMORY_TYPES:
            if raw == t:
                return t
    return None


def _scalar_text(value: object, fmt: MemoryFormat = SEED_FORMAT) -> str | None:
    if fmt.strings_only:
        return value if isinstance(value, str) and value else None
    if value is None or isinstance(value, (list, dict)):
        return None
    if isinstance(value, bool):
        return "true" if value else "false"  # as JavaScript prints it
    return str(value)


def _lookup(data: dict[str, Any], key: tuple[str, ...]) -> tuple[bool, object]:
    """``(present, value)`` of a key path: a top-level key is present when not null; a nested
    one when its parent is a mapping holding the key (a null there still counts)."""
    if len(key) == 1:
        value = data.get(key[0])
        return value is not None, value
    node: object = data
    for part in key[:-1]:
        node = node.get(part) if isinstance(node, dict) else None
    if isinstance(node, dict) and key[-1] in node:
        return True, node[key[-1]]
    return False, None


def type_value(data: dict[str, Any], fmt: MemoryFormat = SEED_FORMAT) -> tuple[object, tuple[str, ...] | None]:
    """The value the agent takes as the type, and the key path it came from: the first of the
    format's ``type_keys`` that is present (``(None, None)`` when none is)."""
    for key in fmt.type_keys:
        present, value = _lookup(data, key)
        if present:
            return value, key
    return None, None


def memory_type_of(data: dict[str, Any], fmt: MemoryFormat = SEED_FORMAT) -> MemoryType | None:
    """The type the agent recognises in a frontmatter mapping, per ``fmt``."""
    return parse_memory_type(type_value(data, fmt)[0])


def declared_type_of(data: dict[str, Any], fmt: MemoryFormat = SEED_FORMAT) -> str | None:
    """What the file declares as its type: where the agent reads it (``fmt``), else wherever
    the file puts one (top-level ``type``, else ``metadata.type``); a non-scalar value (a list,
    a mapping) is shown as its kind, never expanded."""
    value, _key = type_value(data, fmt)
    if value is None:
        value = data.get("type")
    if value is None:
        meta = data.get("metadata")
        value = meta.get("type") if isinstance(meta, dict) else None
    if value is None:
        return None
    if isinstance(value, (list, dict)):
        return f"<a {'list' if isinstance(value, list) else 'mapping'}>"
    return str(value)[:200]


def _frontmatter_diagnostics(fm: Frontmatter, text: str, path: StrPath) -> list[Diagnostic]:
    diags: list[Diagnostic] = []
    if fm.bom_stripped:
        diags.append(_diag("frontmatter-bom-stripped", path=path, line=1))
    if not fm.present:
        if fm.leading == "bom":
            diags.append(_diag("frontmatter-after-bom", path=path, line=1))
        elif fm.leading == "blank":
            diags.append(_diag("frontmatter-after-blank", path=path, line=1))
        elif fm.unclosed:
            diags.append(_diag("frontmatter-unclosed", path=path, line=1))
        elif text.strip():
            diags.append(_diag("no-frontmatter", path=path))
        return diags
    if fm.error is not None:
        diags.append(_diag("frontmatter-invalid", f"invalid YAML even after the agent's quoting retry: {fm.error}; the agent reads no fields", path, 2))
    elif fm.repaired:
        diags.append(_diag("frontmatter-repaired", "invalid YAML (an unquoted `: ` or special character); repaired by the agent's quoting retry", path, 2))
    if fm.not_mapping:
        diags.append(_diag("frontmatter-not-mapping", path=path, line=2))
    # The closing `---` is on the line after the YAML (line 1 is the opening fence); the blank
    # lines the fence pattern eats after it do not count.
    closing_line = fm.raw.count("\n") + 2
    if closing_line > HEADER_LINES:
        diags.append(
            _diag(
                "frontmatter-beyond-header",
                f"frontmatter closes on line {closing_line}, after the {HEADER_LINES} lines recall reads: recall sees no description or type",
                path,
                closing_line,
            )
        )
    return diags


def _field_line(fm: Frontmatter, key: str) -> int | None:
    for i, line in enumerate(fm.raw.split("\n"), start=2):
        if line.startswith(f"{key}:"):
            return i
    return None


def _type_diagnostics(
    fm: Frontmatter, declared: str | None, mem_type: MemoryType | None, path: StrPath, fmt: MemoryFormat = SEED_FORMAT
) -> list[Diagnostic]:
    if not fm.present or fm.error is not None or fm.not_mapping:
        return []
    data = fm.data
    _value, source = type_value(data, fmt)
    if mem_type is not None:
        top, nested = data.get("type"), _lookup(data, ("metadata", "type"))
        if source is not None and len(fmt.type_keys) > 1 and top is not None and nested[0] and top != nested[1]:
            where = ".".join(source)
            return [
                _diag(
                    "type-shadowed",
                    f"`type: {top}` at the top level and `metadata.type: {nested[1]}`: the agent reads `{where}` ({mem_type})",
                    path,
                    _field_line(fm, "type"),
                )
            ]
        return []
    if declared is None:
        return [_diag("type-missing", path=path)]
    if source is None:
        return [
            _diag(
                "type-nested",
                f"`type: {declared}` is nested under `metadata:`; the agent only reads a top-level `type` (fix: lift it)",
                path,
                _field_line(fm, "metadata"),
            )
        ]
    field_key = source[0] if source is not None else "type"
    if declared.lower() in MEMORY_TYPES:
        return [
            _diag(
                "type-case",
                f"`type: {declared}` is not recognised: types are case-sensitive (fix: `{declared.lower()}`)",
                path,
                _field_line(fm, field_key),
            )
        ]
    return [
        _diag(
            "type-unknown",
            f"`type: {declared}` is not one of user, feedback, project, reference; the agent ignores it",
            path,
            _field_line(fm, field_key),
        )
    ]


def _body_diagnostics(fm: Frontmatter, mem_type: MemoryType | None, declared: str | None, mtime: float, path: StrPath, relpath: str = "") -> list[Diagnostic]:
    shape = mem_type or (declared.lower() if declared else None)
    diags: list[Diagnostic] = []
    if shape in ("feedback", "project"):
        for section in missing_sections(fm.body):
            code = "missing-why" if section == "Why:" else "missing-how-to-apply"
            what = "why (the reason behind it)" if section == "Why:" else "how to apply it"
            diags.append(_diag(code, f"advice: no labelled {what}; a {shape} memory usually says `**{section}**` after the {'rule' if shape == 'feedback' else 'fact'}", path))
    if fm.present:
        based = date_base(relpath or os.fspath(path), fm.data, mtime)
        for rd in find_relative_dates(fm.body, based.moment, first_line=fm.body_line):
            meant = f"meant {rd.resolved.isoformat()}" if rd.resolved else "cannot be resolved"
            diags.append(
                _diag(
                    "relative-date",
                    f"relative date “{rd.phrase}” {meant} (from {based.describe()}); write the absolute date",
                    path,
                    rd.line,
                )
            )
    return diags


def parse_memory_bytes(path: StrPath, relpath: str, data: bytes, mtime: float, fmt: MemoryFormat = SEED_FORMAT) -> Memory:
    """Parse one memory file's bytes as the agent of memory format ``fmt`` reads them (where
    the type is, whether a BOM hides the frontmatter, how ``name``/``description`` are read).
    Never raises."""
    diags: list[Diagnostic] = []
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        text = data.decode("utf-8", errors="replace")
        line = data.count(b"\n", 0, exc.start) + 1
        diags.append(_diag("not-utf8", f"bytes that are not UTF-8 (first at byte {exc.start}); the agent reads them as U+FFFD", path, line))
    if not text.strip():
        diags.append(_diag("empty", path=path))
    fm = parse_frontmatter(text, strip_bom=fmt.strip_bom)
    diags.extend(_frontmatter_diagnostics(fm, text, path))
    meta = fm.data
    declared = declared_type_of(meta, fmt)
    mem_type = memory_type_of(meta, fmt)
    diags.extend(_type_diagnostics(fm, declared, mem_type, path, fmt))
    name = _scalar_text(meta.get("name"), fmt)
    description = _scalar_text(meta.get("description"), fmt)
    if fm.present and fm.error is None and not fm.not_mapping:
        if description is None or not description.strip():
            diags.append(_diag("description-missing", path=path))
        elif "\n" in description.strip():
            diags.append(_diag("description-multiline", path=path, line=_field_line(fm, "description")))
        if name is None:
            diags.append(_diag("name-missing", path=path))
        elif not name.strip():
            diags.append(_diag("name-empty", f"`name` is empty (`name: {meta.get('name')!r}`): the agent shows no name for this memory", path, _field_line(fm, "name")))
    diags.extend(_body_diagnostics(fm, mem_type, declared, mtime, path, relpath))
    lines = text.count("\n") + (0 if text.endswith("\n") else 1)
    if len(data) > RECALL_MAX_BYTES or lines > RECALL_MAX_LINES:
        diags.append(
            _diag(
                "over-recall-limit",
                f"{len(data):,} bytes, {lines} lines: recall injects only the first {RECALL_MAX_BYTES:,} bytes / {RECALL_MAX_LINES} lines",
                path,
            )
        )
    return Memory(
        file=os.fspath(path),
        relpath=relpath,
        team=relpath.split("/", 1)[0] == TEAM_DIR and "/" in relpath,
        mtime=mtime,
        size=len(data),
        sha256=hashlib.sha256(data).hexdigest(),
        name=name,
        description=description,
        type=mem_type,
        declared_type=declared,
        frontmatter=meta,
        body_start=len(text) - len(fm.body),
        body_line=fm.body_line,
        loaded_text=text,
        diagnostics=tuple(diags),
    )


def lost_fields(before: Memory, after: Memory) -> tuple[str, ...]:
    """What the agent saw in ``before`` and no longer sees in ``after`` (the same file, edited):
    one sentence per field among ``name``, ``description`` and ``type`` that was there and is
    gone — the frontmatter broken (a line typed above its opening ``---``), the key deleted, a
    type the agent does not recognise. ``()``: nothing lost. A field whose value changed to
    another usable value is not a loss."""
    lost: list[str] = []
    if before.name and not after.name:
        lost.append(f"name “{before.name}”: the agent sees no name")
    if before.description and not after.description:
        lost.append(f"description “{before.description}”: recall has nothing to match on")
    if before.type and not after.type:
        now = f"“{after.declared_type}”, not a type the agent knows" if after.declared_type else "untyped"
        lost.append(f"type {before.type}: the memory becomes {now}")
    if lost:
        new = {d.code for d in before.diagnostics}
        lost.extend(f"why: {d.message}" for d in after.diagnostics if d.code not in new and d.severity in ("error", "warning"))
    return tuple(lost)


def unreadable_memory(path: StrPath, relpath: str, error: OSError) -> Memory:
    """A placeholder record for a file that could not be read (listed, with ``unreadable``);
    a link to nothing is named as such, with the link's own mtime."""
    why = f"cannot read: {error.strerror or error}"
    mtime = 0.0
    try:
        st = os.lstat(path)
        mtime = st.st_mtime
        if stat.S_ISLNK(st.st_mode) and isinstance(error, FileNotFoundError):
            why = f"a link to {os.readlink(path)}, which does not exist"
    except OSError:
        pass
    return Memory(
        file=os.fspath(path),
        relpath=relpath,
        team=relpath.startswith(f"{TEAM_DIR}/"),
        mtime=mtime,
        size=0,
        sha256="",
        name=None,
        description=None,
        type=None,
        declared_type=None,
        diagnostics=(_diag("unreadable", why, path),),
    )


def _to_cache(mem: Memory) -> list[Any] | None:
    """The scan-cache value of a parsed memory (``None`` when its frontmatter would not survive
    JSON). Layout: ``["m", mtime, size, sha256, frontmatter, body_start, body_line, diagnostics,
    header_visible]`` (name, description and types are derived from the frontmatter again, as
    the parse derives them); ``header_visible``: the
    frontmatter closes within the 30 lines recall reads, so recall sees the same fields (``None``:
    not known, for a file over the header scan's 1 MiB read cap)."""
    if not jsonable(mem.frontmatter):
        return None
    diags = [[d.code, d.severity, d.message, d.line] for d in mem.diagnostics]
    # (over 1 MiB the header scan's read cap could cut the block: unknown, the header scan reads)
    header_visible = None if mem.size > 1 << 20 else not any(d.code == "frontmatter-beyond-header" for d in mem.diagnostics)
    return ["m", mem.mtime, mem.size, mem.sha256, mem.frontmatter, mem.body_start, mem.body_line, diags, header_visible]


_SEVERITIES = frozenset({"error", "warning", "info"})


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _from_cache(path: str, relpath: str, value: list[Any], fmt: MemoryFormat = SEED_FORMAT) -> Memory | None:
    """The memory a ``_to_cache`` value describes (its text read on first use), or ``None``
    for a value of another shape (a header-only entry, a foreign file)."""
    try:
        kind, mtime, size, sha, meta, body_start, body_line, raw_diags, _hv = value
        if kind != "m" or not isinstance(meta, dict) or not isinstance(sha, str):
            return None
        if not (isinstance(mtime, float) and _is_int(size) and _is_int(body_start) and _is_int(body_line)):
            return None  # a hand-edited or damaged cache: parse the file instead
        where = path
        diags = tuple(Diagnostic(code, severity, message, where, line) for code, severity, message, line in raw_diags)
        if not all(isinstance(d.code, str) and d.severity in _SEVERITIES and isinstance(d.message, str) and (d.line is None or _is_int(d.line)) for d in diags):
            return None
    except (TypeError, ValueError):
        return None
    return Memory(
        file=os.fspath(path),
        relpath=relpath,
        team=relpath.split("/", 1)[0] == TEAM_DIR and "/" in relpath,
        mtime=mtime,
        size=size,
        sha256=sha,
        name=_scalar_text(meta.get("name"), fmt),
        description=_scalar_text(meta.get("description"), fmt),
        type=memory_type_of(meta, fmt),
        declared_type=declared_type_of(meta, fmt),
        frontmatter=meta,
        body_start=body_start,
        body_line=body_line,
        loaded_text=None,
        diagnostics=diags,
    )


def header_of_record(mem: Memory, value: list[Any], fmt: MemoryFormat = SEED_FORMAT) -> list[Any] | None:
    """The header (``[mtime, description, type]``: what the header scan and recall read in the
    first 30 lines, as the agent of format ``fmt`` reads them) a parse record implies, or
    ``None`` when it cannot tell (a file over the header scan's 1 MiB read cap)."""
    header_visible = value[8]
    if header_visible is None:
        return None
    data = mem.frontmatter if header_visible else {}
    desc = data.get("description")
    if fmt.strings_only:
        description = desc if isinstance(desc, str) and desc else None
    else:
        description = None if desc is None or isinstance(desc, (list, dict)) or desc == "" else str(desc)
    return [mem.mtime, description, memory_type_of(data, fmt)]


def _read_memory(path: StrPath, relpath: str, cache: CatalogDB | None, fmt: MemoryFormat = SEED_FORMAT) -> Memory:
    """``read_memory`` with a known relpath, answered from ``cache`` when the file's ``stat``
    matches an entry (and stored there after a parse)."""
    if cache is not None:
        value, st = cache.lookup_file(path, relpath)
        mem = _from_cache(os.fspath(path), relpath, value, fmt) if value is not None and st is not None else None
        if mem is not None and st is not None and mem.mtime == st.st_mtime and mem.size == st.st_size:  # the entry's own
            return mem
    try:
        data, st = read_regular(path, MAX_MEMORY_BYTES)
    except FileTooLargeError:
        return _too_large_memory(path, relpath, fmt)
    except OSError as exc:
        return unreadable_memory(path, relpath, exc)
    mem = parse_memory_bytes(path, relpath, data, st.st_mtime) if fmt is SEED_FORMAT else parse_memory_bytes(path, relpath, data, st.st_mtime, fmt)
    if cache is not None and (value := _to_cache(mem)) is not None and cache.store(relpath, stat_key(st), value, header_of_record(mem, value, fmt)):
        # as a row read back from the database: the text is read when asked for (a scan of
        # 100,000 files keeps none of them)
        return replace(mem, loaded_text=None)
    return mem


def _too_large_memory(path: StrPath, relpath: str, fmt: MemoryFormat) -> Memory:
    """A memory over ``MAX_MEMORY_BYTES``, parsed from its first ``MAX_MEMORY_BYTES`` (less a
    UTF-8 character the cap cuts) with ``too-large``; its ``sha256`` is empty, so no edit made
    from this text rewrites it (a doctor fix reads the whole file again and keeps every byte)."""
    try:
        head, st = read_head_regular(path, MAX_MEMORY_BYTES)
    except OSError as exc:
        return unreadable_memory(path, relpath, exc)
    for drop in range(4):  # a UTF-8 character cut by the cap is left out whole
        try:
            head[: len(head) - drop].decode("utf-8")
        except UnicodeDecodeError:
            continue
        head = head[: len(head) - drop]
        break
    mem = parse_memory_bytes(path, relpath, head, st.st_mtime, fmt)
    message = (
        f"skipped past the first {_size_text(MAX_MEMORY_BYTES)}: the file is {_size_text(st.st_size)}, over memtui's {_size_text(MAX_MEMORY_BYTES)} read cap, "
        "so only its frontmatter and first part are checked and memtui's editor will not open it; recall injects only its first "
        f"{RECALL_MAX_BYTES:,} bytes (a long log is better kept out of memory, with a line here saying where it is)"
    )
    return replace(mem, sha256="", size=st.st_size, diagnostics=(*mem.diagnostics, _diag("too-large", message, path)))


def _size_text(size: int) -> str:
    """``5.0 MB``, ``1.0 MB``, ``812 KB``: a size for a sentence (decimal point kept)."""
    for unit, scale in (("GB", 1024**3), ("MB", 1024**2), ("KB", 1024)):
        if size >= scale:
            return f"{size / scale:.1f} {unit}"
    return f"{size} bytes"


def read_memory(path: Path, memory_dir: Path, fmt: MemoryFormat = SEED_FORMAT) -> Memory:
    """Read and parse the memory at ``path`` (below ``memory_dir``) in memory format ``fmt``.
    Never raises: a FIFO, a device or an unreadable file is listed with a diagnostic, a file
    over ``MAX_MEMORY_BYTES`` from its first part (``too-large``)."""
    return _read_memory(path, Path(os.path.relpath(path, memory_dir)).as_posix(), None, fmt)


def iter_memory_files(memory_dir: Path) -> Iterator[tuple[str, str]]:
    """Every memory file below ``memory_dir`` as ``(path string, POSIX relpath)``: names
    ending in ``.md`` (case-sensitive, as the agent matches), except ``MEMORY.md``. Symlinked
    directories are not followed (the agent's recursive listing does not follow them). The
    path is ``memory_dir`` joined with the relpath (absolute when ``memory_dir`` is)."""
    top = os.fspath(memory_dir)
    for dirpath, dirnames, filenames in os.walk(top):
        dirnames.sort()
        rel_dir = os.path.relpath(dirpath, top)
        prefix = "" if rel_dir == "." else f"{Path(rel_dir).as_posix()}/"
        for fname in sorted(filenames):
            if not fname.endswith(".md") or fname == INDEX_NAME:
                continue
            yield os.path.join(dirpath, fname), prefix + fname


def iter_memory_paths(memory_dir: Path) -> Iterator[tuple[Path, str]]:
    """``iter_memory_files`` with ``Path`` objects."""
    for path, rel in iter_memory_files(memory_dir):
        yield Path(path), rel


def stray_files(memory_dir: Path) -> list[Diagnostic]:
    """Findings about files below ``memory_dir`` the agent never reads as memories (other
    extensions, ``.MD`` in the wrong case, anything in a folder that is a symlink). The lock
    file is expected and not reported."""
    diags: list[Diagnostic] = []
    for dirpath, dirnames, filenames in os.walk(memory_dir):
        dirnames.sort()
        for dname in dirnames:
            folder = Path(dirpath) / dname
            if folder.is_symlink():
                rel = folder.relative_to(memory_dir).as_posix()
                try:
                    target = os.path.realpath(folder, strict=True)
                except OSError:
                    target = os.readlink(folder)
                diags.append(
                    Diagnostic(
                        "linked-folder",
                        "warning",
                        f"{rel}/ is a link to {target}: the agent's memory scan does not enter linked folders, so no memory in it is listed "
                        "or recalled (an index line can still send the agent to one), and memtui lists none and never writes through it",
                        str(folder),
                    )
                )
        for fname in sorted(filenames):
            if fname.endswith(".md") or fname == LOCK_FILE:
                continue
            path = Path(dirpath) / fname
            if fname.lower().endswith(".md"):
                diags.append(Diagnostic("md-extension-case", "warning", f"{fname}: the agent only reads names ending in lower-case `.md`", str(path)))
            else:
                diags.append(Diagnostic("not-a-memory", "info", f"{fname}: not a `.md` file; the agent never reads it as a memory", str(path)))
    return diags


@dataclass(frozen=True, slots=True)
class MemoryScan:
    """The memories of one dir, newest mtime first, and dir-level findings."""

    memory_dir: Path
    memories: tuple[Memory, ...]
    diagnostics: tuple[Diagnostic, ...] = ()
    total: int = -1  # memory files in the dir; more than len(memories) for a partial scan

    @property
    def complete(self) -> bool:
        """Every memory file was read."""
        return self.total < 0 or self.total == len(self.memories)


class MemoryDirError(OSError):
    """The memory dir does not exist or is not a directory."""


def _stat_mtime(path: str) -> float:
    try:
        return os.stat(path).st_mtime
    except OSError:
        return 0.0


def _is_memory_relpath(relpath: str) -> bool:
    """Whether ``relpath`` (read from the database, never trusted) names a memory file the
    walk could list: relative, no ``.``/``..``/empty part (nothing outside the dir), no NUL,
    a ``.md`` name other than ``MEMORY.md``."""
    parts = relpath.split("/")
    return (
        relpath.endswith(".md")
        and parts[-1] != INDEX_NAME
        and "\0" not in relpath
        and all(part not in ("", ".", "..") for part in parts)
    )


def _newest_known(memory_dir: Path, newest: int, cache: CatalogDB, fmt: MemoryFormat) -> MemoryScan | None:
    """The quick first batch from the catalog database's newest rows (see ``scan_memories``),
    or ``None`` when it knows ``newest`` rows or fewer (a new database: walk the dir)."""
    count, rows = cache.newest(newest)
    if count <= newest:
        return None
    top = os.fspath(memory_dir)
    memories: list[Memory] = []
    with gc_paused():
        for relpath, key, value in rows:
            if not _is_memory_relpath(relpath):
                continue
            path = os.path.join(top, relpath)
            try:
                st = os.stat(path)
            except (OSError, ValueError):
                continue  # gone since the last scan
            mem = _from_cache(path, relpath, value, fmt) if value is not None and key_text(stat_key(st)) == key else None
            if mem is None or mem.mtime != st.st_mtime or mem.size != st.st_size:
                mem = _read_memory(path, relpath, None, fmt)
            memories.append(mem)
    memories.sort(key=lambda m: (-m.mtime, m.relpath))
    return MemoryScan(memory_dir, tuple(memories), (), max(count, len(memories) + 1))


def scan_memories(
    memory_dir: Path,
    *,
    newest: int | None = None,
    cache: CatalogDB | None = None,
    fmt: MemoryFormat = SEED_FORMAT,
    missing_ok: bool = False,
) -> MemoryScan:
    """Read and parse every memory below ``memory_dir``; newest mtime first (ties by relpath).

    ``fmt``: the memory format of the agent (``Behaviour.memory_format``); ``cache`` must be the
    database of that format (``CatalogDB.for_memory_dir(..., fmt=fmt)``).

    ``cache``: the memory dir's ``CatalogDB`` (``memtui.core.memory.catalogdb``) that answers for files whose ``stat``
    is unchanged since a previous scan (their text is then read on first use) and is saved
    after a full scan (not after a ``newest`` batch); ``None`` reads and parses every file.

    ``newest``: read only the ``newest`` most recently modified files — a quick first batch
    for a UI with thousands of memories; ``MemoryScan.total`` still counts all, and dir-level
    findings are left out. With a ``cache`` that knows more than ``newest`` rows, the batch is
    the newest rows it knows (each file's ``stat`` checked against its row, a changed one
    parsed, a vanished one left out) and ``total`` is its row count: no walk of the dir, so a
    file added since the last scan waits for the full scan. Otherwise the dir is walked and
    every file's ``stat`` compared. Raises ``MemoryDirError`` when ``memory_dir`` is
    missing or not a directory; a bad file never raises (it is listed with diagnostics).
    ``missing_ok``: a dir that does not exist yet (the agent creates it when it first saves a
    memory) is an empty scan instead; something else at that path still raises.
    """
    if missing_ok and not os.path.lexists(memory_dir):
        return MemoryScan(memory_dir, (), (), 0)
    if not memory_dir.is_dir():
        what = "does not exist" if not memory_dir.exists() else "is not a directory"
        raise MemoryDirError(2, f"memory dir {what}", str(memory_dir))
    if newest is not None and cache is not None and (known := _newest_known(memory_dir, newest, cache, fmt)) is not None:
        return known
    paths = list(iter_memory_files(memory_dir))
    total = len(paths)
    if newest is not None and newest < total:
        stamped = sorted(((_stat_mtime(path), rel, path) for path, rel in paths), key=lambda t: (-t[0], t[1]))
        paths = [(path, rel) for _, rel, path in stamped[:newest]]
    with gc_paused():
        memories = [_read_memory(path, rel, cache, fmt) for path, rel in paths]
    memories.sort(key=lambda m: (-m.mtime, m.relpath))
    if cache is not None and len(paths) == total:  # a quick first batch leaves it to the full scan
        cache.save(complete=True)
    strays = stray_files(memory_dir) if len(paths) == total else []
    return MemoryScan(memory_dir, tuple(memories), tuple(strays), total)
