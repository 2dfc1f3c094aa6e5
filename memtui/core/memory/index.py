"""The auto-memory index ``MEMORY.md`` (docs/behaviour.md §4.4): reference truncation, entries, gauge.

Loading truncates exactly like the reference (``truncateEntrypointContent``): trim; keep the
first 200 lines; if what is left is over 25,000 UTF-16 code units, cut at the last newline at
or before unit 25,000 (hard cut if none); append the warning. Source of the constants: the
reference's ``MAX_ENTRYPOINT_LINES = 200`` and ``MAX_ENTRYPOINT_BYTES = 25_000`` (a JavaScript
string length, so UTF-16 units despite the name).
"""

from __future__ import annotations

import codecs
import os
import posixpath
import re
import stat
from collections.abc import Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO, Literal
from urllib.parse import quote, unquote, urlsplit

import orjson
from markdown_it import MarkdownIt

from memtui.core.base.safe_read import open_regular
from memtui.core.base.units import JS_WHITESPACE, js_trim, utf16_len, utf16_prefix, utf16_to_index
from memtui.core.memory.catalogdb import CatalogDB, StatKey, code_fingerprint, is_racy, key_text, pack, stat_key
from memtui.core.places.behaviour import IndexWarning

INDEX_NAME = "MEMORY.md"
MAX_INDEX_LINES = 200
MAX_INDEX_UNITS = 25_000
INDEX_ADVICE = "Keep index entries to one line under ~200 chars; move detail into topic files."

_md = MarkdownIt("commonmark")
MAX_INDEX_FILE_BYTES = 1024 * 1024
"""How much of an index memtui audits (1 MiB, memtui's choice): the entries of its first
``MAX_INDEX_FILE_BYTES`` bytes are parsed and checked (``IndexSkip.audited``), and the text of
that part is what the doctor reads. The agent loads at most ``MAX_INDEX_UNITS`` (25,000) UTF-16 units — at
most 75,000 UTF-8 bytes, 25,000 of ASCII — so this is 14 to 42 times the most it can load. Past
it, the file is read on in chunks and not kept (``MAX_INDEX_COUNT_BYTES``)."""

MAX_INDEX_COUNT_BYTES = 256 * 1024 * 1024
"""How much of an index over ``MAX_INDEX_FILE_BYTES`` is read on in chunks (256 MiB, about 4 s
at 15 ms per MiB; memtui's choice), holding one chunk at a time: its lines and UTF-16 units are
counted (the agent's truncation warning states both) and its links to known memories are found
(they index their memory). Past it the counts are of the first ``MAX_INDEX_COUNT_BYTES``."""

_CHUNK_BYTES = 1024 * 1024  # one read of an index past its audited head
# How much of the trimmed text of an index over the cap is kept for the truncation: what the
# agent keeps lies within its first 25,000 units, and the warning quotes the line after it.
_TRIMMED_WINDOW = 4 * MAX_INDEX_UNITS
# A link target the scan past the head recognises: ``](target)``, ``](<target>)`` or
# ``](target "title")``, at most 4,096 characters (PATH_MAX), no brackets or white space in it.
_MAX_TARGET = 4096
_TAIL_LINK = re.compile(r"\]\(<?([^()<>\s]{1,%d})>?[\s)]" % _MAX_TARGET)


def format_file_size(size: int) -> str:
    """The reference's ``formatFileSize``: ``N bytes`` under 1 KB, else KB/MB to one decimal
    with ``.0`` dropped (``24.4KB``, ``25KB``)."""
    kb = size / 1024
    if kb < 1:
        return f"{size} bytes"
    for unit, value in (("KB", kb), ("MB", kb / 1024), ("GB", kb / 1024 / 1024)):
        if value < 1024 or unit == "GB":
            text = f"{value:.1f}"
            return (text[:-2] if text.endswith(".0") else text) + unit
    raise AssertionError("unreachable")


@dataclass(frozen=True, slots=True)
class IndexTruncation:
    """What the agent loads of an index text.

    ``content``: the loaded text (warning appended when cut); ``lines`` / ``units``: of the
    trimmed original; ``truncated_by``: subset of ``("lines", "size")``; ``warning``: the exact
    ``> WARNING: …`` line or ``None``; ``kept``: the trimmed text that survived, before the warning.
    """

    content: str
    lines: int
    units: int
    truncated_by: tuple[Literal["lines", "size"], ...]
    warning: str | None
    kept: str


# The seed design's warning: it says only that part of the index was loaded.
SEED_WARNING = IndexWarning(names_cut=False)
_JS_SPACE = re.compile("[" + JS_WHITESPACE + "]")


def quote_cut(text: str, units: int = 80) -> str:
    """A line quoted in the warning, at most ``units`` UTF-16 units: kept whole when it fits,
    else cut to ``units - 1`` units at the last space (when that keeps over half of it) and
    ended with ``…`` (Claude Code's ``truncateAtWord``)."""
    if utf16_len(text) <= units:
        return text
    head = utf16_prefix(text, units - 1)
    last = -1
    for m in _JS_SPACE.finditer(head):
        last = m.start()
    word = "" if last == -1 else js_trim_end(head[:last])
    return f"{word if utf16_len(word) > units / 2 else js_trim_end(head)}…"


def js_trim_end(text: str) -> str:
    """``text.trimEnd()`` as JavaScript computes it."""
    return text.rstrip(JS_WHITESPACE)


def _cut_clause(trimmed: str, kept: str, line_count: int, quote_units: int) -> str:
    """What was cut, as Claude Code says it: ``N of M lines were cut off, starting at line K
    ("<first cut line>")``, or — when the first line alone was cut inside — ``everything
    after the first N characters of line 1 was cut off``. ``trimmed`` may be a prefix of the
    trimmed index that holds ``kept`` and the character after it; a first cut line longer
    than it is quoted from the part it holds."""
    after = trimmed[len(kept) : len(kept) + 1]
    if after != "\n":
        return f"everything after the first {utf16_len(kept)} characters of line 1 was cut off"
    kept_lines = kept.count("\n") + 1
    start = len(kept) + 1
    end = trimmed.find("\n", start)
    first_cut = js_trim(trimmed[start : end if end >= 0 else None])
    quote = f' ("{quote_cut(first_cut, quote_units)}")' if first_cut else ""
    return f"{line_count - kept_lines} of {line_count} lines were cut off, starting at line {kept_lines + 1}{quote}"


def truncate_index(raw: str, warning_style: IndexWarning = SEED_WARNING) -> IndexTruncation:
    """Apply the reference's index truncation to ``raw`` (the decoded file text).

    ``warning_style``: how the release words the warning (``Behaviour.instructions.index_warning``):
    the seed says only that part was loaded; Claude Code also names the cut."""
    trimmed = js_trim(raw)
    return truncate_counted(trimmed, trimmed.count("\n") + 1, utf16_len(trimmed), warning_style)


def truncate_counted(trimmed: str, line_count: int, units: int, warning_style: IndexWarning = SEED_WARNING) -> IndexTruncation:
    """The reference's truncation of a trimmed index text of ``line_count`` lines and ``units``
    UTF-16 units, of which ``trimmed`` holds the start: all of it when it is within the caps
    (then ``trimmed`` must be all of it), else at least ``MAX_INDEX_UNITS + 1`` characters (or
    all of it) — what the agent keeps lies within the first 25,000 units and the character
    after it. ``truncate_index`` with the counts of the whole text."""
    by_lines = line_count > MAX_INDEX_LINES
    by_size = units > MAX_INDEX_UNITS
    if not by_lines and not by_size:
        return IndexTruncation(trimmed, line_count, units, (), None, trimmed)
    kept = trimmed
    if by_lines:
        end = -1
        for _ in range(MAX_INDEX_LINES):  # the end of line 200: "\n".join of the first 200 lines
            end = trimmed.find("\n", end + 1)
            if end < 0:
                break
        if end >= 0:
            kept = trimmed[:end]
    if utf16_len(kept) > MAX_INDEX_UNITS:
        limit = utf16_to_index(kept, MAX_INDEX_UNITS)
        # JavaScript lastIndexOf('\n', 25000): a newline at index <= 25000.
        cut = kept.rfind("\n", 0, limit + 1)
        kept = kept[: cut if cut > 0 else limit]
    if by_size and not by_lines:
        reason = f"{format_file_size(units)} (limit: {format_file_size(MAX_INDEX_UNITS)}) — index entries are too long"
    elif by_lines and not by_size:
        reason = f"{line_count} lines (limit: {MAX_INDEX_LINES})"
    else:
        reason = f"{line_count} lines and {format_file_size(units)}"
    loaded = "Only part of it was loaded"
    if warning_style.names_cut:
        loaded += ": " + _cut_clause(trimmed, kept, line_count, warning_style.quote_units)
    warning = f"> WARNING: {INDEX_NAME} is {reason}. {loaded}. {INDEX_ADVICE}"
    truncated_by: list[Literal["lines", "size"]] = []
    if by_lines:
        truncated_by.append("lines")
    if by_size:
        truncated_by.append("size")
    return IndexTruncation(f"{kept}\n\n{warning}", line_count, units, tuple(truncated_by), warning, kept)


@dataclass(frozen=True, slots=True)
class IndexEntry:
    """A link in the index: ``line`` (1-based, in the file as stored), ``title``, ``target``
    (the link as written), ``relpath`` (POSIX, relative to the memory dir, or ``None`` for
    links that leave it or are URLs), ``heading`` (the link sits in a heading line)."""

    line: int
    title: str
    target: str
    relpath: str | None
    heading: bool


# A list line holding one plain link (the index's usual shape): the title has no character
# Markdown gives a meaning to and no edge spaces; the target only characters link
# normalisation keeps as they are. Anything else goes through markdown-it.
_PLAIN_ENTRY = re.compile(r"[ ]{0,3}[-*+] \[([^\s\[\]\\`*_<>!&~]|[^\s\[\]\\`*_<>!&~][^\[\]\\`*_<>!&~]*[^\s\[\]\\`*_<>!&~])\]\(([A-Za-z0-9._/-]+)\)(.*)")


_PLAIN_TARGET = re.compile(r"[A-Za-z0-9._-][A-Za-z0-9._/-]*")


def _link_relpath(target: str, index_dir_rel: str) -> str | None:
    if _PLAIN_TARGET.fullmatch(target):  # no scheme, query, fragment or escape: the path as is
        segments = target.split("/")
        if "" not in segments and "." not in segments and ".." not in segments:  # already normal
            return f"{index_dir_rel}/{target}" if index_dir_rel else target
        path = target
    else:
        parts = urlsplit(target)
        if parts.scheme or parts.netloc or not parts.path:
            return None
        path = unquote(parts.path)
    if path.startswith("/"):
        return None
    joined = posixpath.normpath(posixpath.join(index_dir_rel, path)) if index_dir_rel else posixpath.normpath(path)
    if joined == ".." or joined.startswith("../"):
        return None
    return joined


def _plain_entry(line: str) -> re.Match[str] | None:
    """The match of ``_PLAIN_ENTRY`` when ``line`` is a plain entry with no other link or tag in
    its hook, else ``None``."""
    plain = _PLAIN_ENTRY.fullmatch(line)
    if plain is not None and "[" not in plain.group(3) and "<" not in plain.group(3):
        return plain
    return None


def markdown_chars(text: str) -> int:
    """How many characters of ``text``'s lines ``parse_entries`` reads with markdown-it's inline
    parser (about 1.5 s per million): those of lines holding ``](`` that are not a plain
    ``- [Title](file.md) — hook`` entry (read by one regular expression, about 0.1 s per
    million)."""
    return sum(len(line) for line in text.split("\n") if "](" in line and _plain_entry(line) is None)


# A line longer than this is not given to markdown-it (see ``parse_entries``).
MARKDOWN_LINE_CHARS = 64 * 1024
_SIMPLE_LINK = re.compile(r"(?<![!\\])\[([^\[\]\n]*)\]\(([^()\s]*)\)")


def parse_entries(text: str, index_dir_rel: str = "") -> list[IndexEntry]:
    """Every Markdown link in ``text``, one ``IndexEntry`` per link, in file order.

    ``index_dir_rel`` is the index's directory relative to the memory dir (``""`` for the main
    index, ``"team"`` for the team index). Links are found with markdown-it-py's inline parser,
    so links in code spans are not entries; on a line over ``MARKDOWN_LINE_CHARS`` characters
    (64 KiB: a hostile one-line index), plain ``[title](target)`` links are found by pattern,
    which bounds the time (markdown-it spends ~17 µs a character on ``![_![_…``).
    """
    entries: list[IndexEntry] = []
    for lineno, line in enumerate(text.split("\n"), start=1):
        if "](" not in line:
            continue
        plain = _plain_entry(line)
        if plain is not None:
            # The usual `- [Title](file.md) — hook` line: no Markdown in the title, a target
            # markdown-it leaves as written, no other link: the tokens are known without parsing.
            target = plain.group(2)
            if "/" not in target and target not in (".", ".."):  # a file name of this dir, as _link_relpath gives it
                relpath: str | None = f"{index_dir_rel}/{target}" if index_dir_rel else target
            else:
                relpath = _link_relpath(target, index_dir_rel)
            entries.append(IndexEntry(lineno, plain.group(1), target, relpath, False))
            continue
        heading = line.lstrip().startswith("#")
        if len(line) > MARKDOWN_LINE_CHARS:
            # markdown-it takes ~17 µs a character on bracket-heavy text: a line this long (no
            # index line a person wrote is) gets its plain `[title](target)` links by pattern
            for m in _SIMPLE_LINK.finditer(line):
                entries.append(IndexEntry(lineno, m.group(1), m.group(2), _link_relpath(m.group(2), index_dir_rel), heading))
            continue
        for token in _md.parseInline(line):
            children = token.children or []
            for i, child in enumerate(children):
                if child.type != "link_open":
                    continue
                href = str(child.attrGet("href") or "")
                title_parts: list[str] = []
                for j in range(i + 1, len(children)):  # indices, not a slice: a slice copies the rest of the line's tokens per link
                    sub = children[j]
                    if sub.type == "link_close":
                        break
                    title_parts.append(sub.content)
                entries.append(IndexEntry(lineno, "".join(title_parts), href, _link_relpath(href, index_dir_rel), heading))
    return entries


def split_dropped(raw: str, trunc: IndexTruncation, entries: list[IndexEntry]) -> list[IndexEntry]:
    """The ``entries`` of ``raw`` that fall past what ``trunc`` kept (the agent never sees them)."""
    if not trunc.truncated_by:
        return []
    # Line numbers of the stored file that survived: leading blank lines were trimmed away.
    leading = len(raw) - len(raw.lstrip(JS_WHITESPACE))
    kept_last_line = raw.count("\n", 0, leading) + 1 + trunc.kept.count("\n")
    kept_tail = trunc.kept.rsplit("\n", 1)[-1]
    dropped: list[IndexEntry] = []
    for entry in entries:
        if entry.line > kept_last_line:
            dropped.append(entry)
        elif entry.line == kept_last_line and f"]({entry.target})" not in kept_tail:
            dropped.append(entry)  # a hard cut went through the link
    return dropped


def dropped_entries(raw: str, index_dir_rel: str = "") -> list[IndexEntry]:
    """The entries of index text ``raw`` that the agent's truncation drops."""
    return split_dropped(raw, truncate_index(raw), parse_entries(raw, index_dir_rel))


def size_label(size: int) -> str:
    """``size`` bytes for a sentence, as the memory scan's ``too-large`` says them: units of
    1,024 to one decimal (``20.7 MB``, ``1.0 MB``, ``24.4 KB``), the larger unit from 1,000 of
    the smaller on (1,048,516 bytes: ``1.0 MB``), ``N bytes`` under 1,000."""
    value, unit = float(size), "bytes"
    for bigger in ("KB", "MB", "GB"):
        if value < 1000:
            break
        value, unit = value / 1024, bigger
    return f"{size} bytes" if unit == "bytes" else f"{value:.1f} {unit}"


@dataclass(frozen=True, slots=True)
class IndexSkip:
    """What memtui left unaudited of an index over ``MAX_INDEX_FILE_BYTES``: ``size`` — the
    file's bytes (as read); ``audited`` — the bytes of its start whose entries were parsed
    (whole lines when the last line within the cap starts in its second half, else all of the
    cap: the start of a long line is audited, its links past the cap are not); ``counted`` —
    the bytes over which lines and UTF-16 units were counted (``size`` unless the file is over
    ``MAX_INDEX_COUNT_BYTES``)."""

    size: int
    audited: int
    counted: int

    def note(self, name: str = INDEX_NAME) -> str:
        """``only the first 1 MB of MEMORY.md (20.8 MB) was audited (skipped: 19.8 MB, over the
        1 MB cap): entries past it are not listed``, plus a clause when the count stopped."""
        text = (
            f"only the first {size_label(self.audited)} of {name} ({size_label(self.size)}) was audited "
            f"(skipped: {size_label(self.size - self.audited)}, over the {size_label(MAX_INDEX_FILE_BYTES)} cap): "
            "entries past it are not listed"
        )
        if self.counted < self.size:
            text += f"; its lines and characters were counted in the first {size_label(self.counted)} only"
        return text


def linked_relpaths(text: str, wanted: AbstractSet[str], index_dir_rel: str = "") -> set[str | None]:
    """The relpaths the index text ``text`` links (``None`` for a link out of the memory dir):
    every entry's when ``text`` is within ``MAX_INDEX_FILE_BYTES`` characters; past it, as
    ``read_index`` audits an index over the cap, the entries' of its first part and those of
    ``wanted`` that a later link points at (``_written_forms``), without parsing the rest."""
    if len(text) <= MAX_INDEX_FILE_BYTES:
        return {e.relpath for e in parse_entries(text, index_dir_rel)}
    cut = text.rfind("\n", MAX_INDEX_FILE_BYTES // 2, MAX_INDEX_FILE_BYTES) + 1 or MAX_INDEX_FILE_BYTES
    out: set[str | None] = {e.relpath for e in parse_entries(text[:cut], index_dir_rel)}
    forms = _written_forms(wanted, index_dir_rel)
    out.update(forms[target] for target in forms.keys() & set(_TAIL_LINK.findall(text, cut)))
    return out


def pushed_past_cap(before: bytes | None, after: bytes, added: Sequence[str], index_dir_rel: str = "") -> list[IndexEntry]:
    """The entries an edit that added the lines ``added`` to an index (its bytes ``before`` →
    ``after``) pushes past the agent's cap: those past it in ``after`` that were not past it in
    ``before`` (matched by relpath and title; ``writes.index_edit.newly_dropped``). An index over
    ``MAX_INDEX_FILE_BYTES`` (far over the cap already, and audited only in part) is not parsed
    again: the added lines' own entries are given."""
    if max(len(before or b""), len(after)) > MAX_INDEX_FILE_BYTES:
        return [entry for line in added for entry in parse_entries(line, index_dir_rel)]
    old = {(e.relpath, e.title) for e in dropped_entries(before.decode("utf-8", errors="surrogateescape"), index_dir_rel)} if before else set()
    return [e for e in dropped_entries(after.decode("utf-8", errors="surrogateescape"), index_dir_rel) if (e.relpath, e.title) not in old]


@dataclass(frozen=True, slots=True)
class IndexReport:
    """The index of one memory dir, as the agent loads it and as memtui audits it.

    ``path``: the ``MEMORY.md`` path; ``exists``; ``truncation`` (``None`` when absent);
    ``entries``: every link; ``dropped``: entries past the loaded part; ``dangling``: link
    targets (as written) whose file does not exist; ``unindexed``: memory relpaths no entry
    points at; ``text``: the file's text as read and audited (``None`` when it was not read);
    ``skip``: ``None`` when the whole file was audited, else what was not (an index over
    ``MAX_INDEX_FILE_BYTES``: ``text``, ``entries`` and ``dropped`` are of its first part, while
    ``truncation`` counts the whole file, and ``indexed`` / ``unindexed`` take its later links
    to known memories into account; ``dangling`` is of the first part).

    A summary (``read_index(..., summary=True)`` answered from the catalog database, for a
    UI's first screenful) holds no entries: ``entries``, ``dropped`` and ``dangling`` are
    empty, ``dropped_total`` counts the dropped entries, ``indexed`` and ``truncation`` are
    whole. ``dropped_count`` is the count either way.
    """

    path: Path
    exists: bool
    truncation: IndexTruncation | None
    entries: tuple[IndexEntry, ...] = ()
    dropped: tuple[IndexEntry, ...] = ()
    dangling: tuple[str, ...] = ()
    unindexed: tuple[str, ...] = ()
    error: str | None = None
    indexed: frozenset[str] = field(default_factory=frozenset)
    text: str | None = field(default=None, repr=False, compare=False)
    dropped_total: int = -1  # a summary's count of dropped entries (``-1``: ``len(dropped)``)
    skip: IndexSkip | None = None

    @property
    def dropped_count(self) -> int:
        """How many entries fall past what the agent loads."""
        return self.dropped_total if self.dropped_total >= 0 else len(self.dropped)

    @property
    def is_summary(self) -> bool:
        """Whether this report came from the catalog database without its entries."""
        return self.dropped_total >= 0


def _is_file(path: Path) -> bool:
    try:
        return path.is_file()
    except (OSError, ValueError):  # a name too long, a NUL: no such file
        return False


# What the catalog database keeps of an index (``CatalogDB.result`` kind ``index:<dir>``): its
# truncation, the number of dropped entries and the relpaths it links, under the file's stat
# key, this code's fingerprint and the warning style.
SUMMARY_KIND = "index:"
_SUMMARY_MODULES = ("memory/index", "base/units")


def _summary_fingerprint(key: StatKey, warning_style: IndexWarning) -> str:
    return f"{key_text(key)}|{warning_style!r}|{code_fingerprint(_SUMMARY_MODULES)}"


def _stored_summary(
    cache: CatalogDB, index_path: Path, index_dir_rel: str, memory_relpaths: list[str], warning_style: IndexWarning
) -> IndexReport | None:
    """The summary report of the index at ``index_path`` from ``cache`` when the file's stat
    key is the one it was stored under, else ``None``."""
    try:
        st = os.stat(index_path)
    except (OSError, ValueError):
        return None
    if not stat.S_ISREG(st.st_mode):
        return None
    blob = cache.result(SUMMARY_KIND + index_dir_rel, _summary_fingerprint(stat_key(st), warning_style))
    if blob is None:
        return None
    try:
        content, lines, units, truncated_by, warning, kept, dropped, linked, skipped = orjson.loads(blob)
        trunc = IndexTruncation(content, lines, units, tuple(truncated_by), warning, kept)
        skip = None if skipped is None else IndexSkip(*skipped)
        ok = (
            isinstance(content, str) and isinstance(kept, str) and (warning is None or isinstance(warning, str))
            and type(lines) is int and type(units) is int and type(dropped) is int and dropped >= 0
            and all(t in ("lines", "size") for t in truncated_by)
            and (skip is None or all(type(n) is int for n in skipped))
        )
        indexed = frozenset(linked) if ok and isinstance(linked, list) else None
    except (orjson.JSONDecodeError, TypeError, ValueError):
        return None
    if indexed is None or not all(isinstance(r, str) for r in indexed):
        return None
    unindexed = tuple(p for p in memory_relpaths if p not in indexed)
    return IndexReport(index_path, True, trunc, unindexed=unindexed, indexed=indexed, dropped_total=dropped, skip=skip)


def _store_summary(
    cache: CatalogDB, index_dir_rel: str, st: os.stat_result, warning_style: IndexWarning,
    trunc: IndexTruncation, dropped: int, indexed: AbstractSet[str], skip: IndexSkip | None,
) -> None:
    """Keep the summary of an index just read (its ``stat`` ``st``), unless the file is racy
    or the same summary is kept already."""
    key = stat_key(st)
    if is_racy(key) or not cache.enabled:
        return
    kind, fingerprint = SUMMARY_KIND + index_dir_rel, _summary_fingerprint(key, warning_style)
    if cache.result(kind, fingerprint) is not None:
        return
    value = [trunc.content, trunc.lines, trunc.units, list(trunc.truncated_by), trunc.warning, trunc.kept, dropped, sorted(indexed),
             None if skip is None else [skip.size, skip.audited, skip.counted]]
    try:
        blob = pack(value)
    except TypeError:  # orjson.JSONEncodeError: a lone surrogate
        return
    cache.put_result(kind, fingerprint, blob)


def _written_forms(relpaths: AbstractSet[str], index_dir_rel: str) -> dict[str, str]:
    """Link target → relpath for each of ``relpaths`` below the index's dir, as an index links
    it: the path from the index's dir, with ``./`` in front, and percent-encoded (``my%20note.md``)."""
    prefix = f"{index_dir_rel}/" if index_dir_rel else ""
    out: dict[str, str] = {}
    for rel in relpaths:
        if not rel.startswith(prefix):
            continue
        inside = rel[len(prefix) :]
        for form in (inside, f"./{inside}", quote(inside, safe="/._-~")):
            out.setdefault(form, rel)
    return out


@dataclass(frozen=True, slots=True)
class _PastCap:
    """An index over ``MAX_INDEX_FILE_BYTES``, read once in chunks: ``head`` — the audited text
    (see ``IndexSkip.audited``); ``trimmed`` — the start of the JavaScript-trimmed text, at most
    ``_TRIMMED_WINDOW`` characters (all of it when shorter); ``lines`` / ``units`` — of the
    trimmed text; ``lead_newlines`` — the newlines the trim took off its start; ``linked`` —
    the wanted relpaths a link past the head points at."""

    head: str
    trimmed: str
    lines: int
    units: int
    lead_newlines: int
    skip: IndexSkip
    linked: frozenset[str]


def _read_past_cap(stream: BinaryIO, first: bytes, size: int, wanted: AbstractSet[str], index_dir_rel: str) -> _PastCap:
    """Read on an index whose first ``MAX_INDEX_FILE_BYTES + 1`` bytes are ``first`` from
    ``stream`` (positioned after them), one chunk at a time up to ``MAX_INDEX_COUNT_BYTES``;
    ``size``: the file's size when it was opened.

    Decoded as UTF-8 with replacement (as ``bytes.decode``, split across chunks by an
    incremental decoder). Kept: the audited head and the first characters of the trimmed text;
    counted: characters, newlines, UTF-16 units, and the white space at either end (JavaScript's
    ``trim`` set, all BMP: one unit each). Links past the head are found with ``_TAIL_LINK``
    and kept when their target is one of ``wanted`` as an index links it (``_written_forms``)."""
    forms = _written_forms(wanted, index_dir_rel)
    # whole lines, unless the last one began in the first half: then its start is audited too
    cut = first.rfind(b"\n", MAX_INDEX_FILE_BYTES // 2, MAX_INDEX_FILE_BYTES) + 1 or MAX_INDEX_FILE_BYTES
    head = codecs.getincrementaldecoder("utf-8")("replace").decode(first[:cut])  # a split last character is held back
    decoder = codecs.getincrementaldecoder("utf-8")("replace")
    window: list[str] = []
    window_len = 0
    leading = True
    lead_chars = lead_newlines = 0
    tail_chars = tail_newlines = 0  # the run of white space at the end of what was read
    chars = newlines = units = 0
    counted = 0
    linked: set[str] = set()
    pending = ""  # text past the head not yet searched for links
    data = first
    done = False
    while True:
        counted += len(data)
        text = decoder.decode(data, final=done)
        if pending or chars + len(text) > len(head):
            pending += text[max(len(head) - chars, 0) :]
        chars += len(text)
        newlines += text.count("\n")
        units += utf16_len(text)
        rest = text
        if leading:
            rest = text.lstrip(JS_WHITESPACE)
            lead_chars += len(text) - len(rest)
            lead_newlines += text.count("\n", 0, len(text) - len(rest))
            leading = not rest
        if rest and window_len < _TRIMMED_WINDOW:
            window.append(rest[: _TRIMMED_WINDOW - window_len])
            window_len += len(window[-1])
        body = text.rstrip(JS_WHITESPACE)
        if text and not body:
            tail_chars += len(text)
            tail_newlines += text.count("\n")
        elif text:
            tail_chars = len(text) - len(body)
            tail_newlines = text.count("\n", len(body))
        if pending:
            linked.update(forms[target] for target in forms.keys() & set(_TAIL_LINK.findall(pending)))
            # a link may go on in the next chunk: its start is searched again (a set keeps it once)
            pending = pending[-(_MAX_TARGET + 5) :]
        if done:
            break
        room = MAX_INDEX_COUNT_BYTES - counted
        data = stream.read(min(_CHUNK_BYTES, room)) if room > 0 else b""
        done = not data
    more = bool(stream.read(1))
    if more:  # the count stopped at MAX_INDEX_COUNT_BYTES: the file's end is not known
        tail_chars = tail_newlines = 0
    trimmed_chars = chars - lead_chars - tail_chars
    if leading or trimmed_chars <= 0:
        trimmed, lines, trimmed_units = "", 1, 0
    else:
        trimmed = "".join(window)[:trimmed_chars]
        lines = newlines - lead_newlines - tail_newlines + 1
        trimmed_units = units - lead_chars - tail_chars
    skip = IndexSkip(max(size, counted + 1) if more else counted, cut, counted)
    return _PastCap(head, trimmed, lines, trimmed_units, lead_newlines, skip, frozenset(linked))


def read_index(
    memory_dir: Path,
    memory_relpaths: list[str],
    *,
    index_dir_rel: str = "",
    check_links: bool = True,
    known_files: AbstractSet[str] = frozenset(),
    warning_style: IndexWarning = SEED_WARNING,
    cache: CatalogDB | None = None,
    summary: bool = False,
) -> IndexReport:
    """Audit ``<memory_dir>/<index_dir_rel>/MEMORY.md`` against the memories found.

    ``memory_relpaths``: POSIX relpaths (to ``memory_dir``) of the memories this index is
    meant to cover. ``check_links=False`` skips the one ``stat`` per link that finds dangling
    links (``dangling`` is then empty); ``known_files``: relpaths the caller has just read as
    regular files (a scan's memories), whose links need no ``stat``; ``warning_style``: the
    release's index warning. ``cache``: the memory dir's ``CatalogDB``, where what a summary
    needs is kept after each read of an unchanged (not racy) file; ``summary``: answer with a
    summary report (see ``IndexReport``; no dangling links) from ``cache`` when it holds one
    for the file as it is, without reading it — else the index is read as without.

    An index over ``MAX_INDEX_FILE_BYTES`` is audited in its first part and read on only to
    count and to find links to the memories (``IndexReport.skip``); when the agent loads all
    of it (white space around it), all it loads is audited. Never raises: an unreadable
    index is reported in ``error``.
    """
    index_path = memory_dir / index_dir_rel / INDEX_NAME if index_dir_rel else memory_dir / INDEX_NAME
    if summary and cache is not None and cache.enabled:
        held = _stored_summary(cache, index_path, index_dir_rel, memory_relpaths, warning_style)
        if held is not None:
            return held
    past: _PastCap | None = None
    try:
        stream, st = open_regular(index_path)
        with stream:
            first = stream.read(MAX_INDEX_FILE_BYTES + 1)
            if len(first) > MAX_INDEX_FILE_BYTES:
                past = _read_past_cap(stream, first, st.st_size, frozenset(memory_relpaths), index_dir_rel)
        raw = past.head if past is not None else first.decode("utf-8", errors="replace")
    except FileNotFoundError:
        return IndexReport(index_path, False, None, unindexed=tuple(memory_relpaths))
    except OSError as exc:
        return IndexReport(index_path, True, None, unindexed=tuple(memory_relpaths), error=exc.strerror or str(exc))
    skip: IndexSkip | None = None
    if past is None:
        trunc = truncate_index(raw, warning_style)
    else:
        trunc = truncate_counted(past.trimmed, past.lines, past.units, warning_style)
        if trunc.truncated_by or past.lead_newlines > MAX_INDEX_FILE_BYTES:
            skip = past.skip
        else:  # white space around what the agent loads: that is audited, on its own lines
            raw = "\n" * past.lead_newlines + past.trimmed
    entries = parse_entries(raw, index_dir_rel)
    dropped = split_dropped(raw, trunc, entries)
    dangling: dict[str, None] = {}  # ordered, each target once
    indexed: set[str] = set(past.linked) if skip is not None and past is not None else set()
    for entry in entries:
        if entry.relpath is None:
            continue
        indexed.add(entry.relpath)
        if check_links and entry.relpath not in known_files and entry.target not in dangling and not _is_file(memory_dir / entry.relpath):
            dangling[entry.target] = None
    unindexed = tuple(p for p in memory_relpaths if p not in indexed)
    if cache is not None:
        _store_summary(cache, index_dir_rel, st, warning_style, trunc, len(dropped), indexed, skip)
    return IndexReport(index_path, True, trunc, tuple(entries), tuple(dropped), tuple(dangling), unindexed, None, frozenset(indexed), raw, skip=skip)
