"""The auto-memory index ``MEMORY.md`` (docs/behaviour.md §4.4): reference truncation, entries, gauge.

Loading truncates exactly like the reference (``truncateEntrypointContent``): trim; keep the
first 200 lines; if what is left is over 25,000 UTF-16 code units, cut at the last newline at
or before unit 25,000 (hard cut if none); append the warning. Source of the constants: the
reference's ``MAX_ENTRYPOINT_LINES = 200`` and ``MAX_ENTRYPOINT_BYTES = 25_000`` (a JavaScript
string length, so UTF-16 units despite the name).
"""

from __future__ import annotations

import os
import posixpath
import re
import stat
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal
from urllib.parse import unquote, urlsplit

import orjson
from markdown_it import MarkdownIt

from memtui.core.base.safe_read import read_regular
from memtui.core.base.units import JS_WHITESPACE, js_trim, utf16_len, utf16_prefix, utf16_to_index
from memtui.core.memory.catalogdb import CatalogDB, StatKey, code_fingerprint, is_racy, key_text, pack, stat_key
from memtui.core.places.behaviour import IndexWarning

INDEX_NAME = "MEMORY.md"
MAX_INDEX_LINES = 200
MAX_INDEX_UNITS = 25_000
INDEX_ADVICE = "Keep index entries to one line under ~200 chars; move detail into topic files."

_md = MarkdownIt("commonmark")
# memtui's cap on reading an index file (the agent loads at most 25,000 units of it).
MAX_INDEX_FILE_BYTES = 32 * 1024 * 1024


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
    after the first N characters of line 1 was cut off``."""
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
    lines = trimmed.split("\n")
    line_count = len(lines)
    units = utf16_len(trimmed)
    by_lines = line_count > MAX_INDEX_LINES
    by_size = units > MAX_INDEX_UNITS
    if not by_lines and not by_size:
        return IndexTruncation(trimmed, line_count, units, (), None, trimmed)
    kept = "\n".join(lines[:MAX_INDEX_LINES]) if by_lines else trimmed
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


def parse_entries(text: str, index_dir_rel: str = "") -> list[IndexEntry]:
    """Every Markdown link in ``text``, one ``IndexEntry`` per link, in file order.

    ``index_dir_rel`` is the index's directory relative to the memory dir (``""`` for the main
    index, ``"team"`` for the team index). Links are found with markdown-it-py's inline parser,
    so links in code spans are not entries.
    """
    entries: list[IndexEntry] = []
    for lineno, line in enumerate(text.split("\n"), start=1):
        if "](" not in line:
            continue
        plain = _PLAIN_ENTRY.fullmatch(line)
        if plain is not None and "[" not in plain.group(3) and "<" not in plain.group(3):
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


@dataclass(frozen=True, slots=True)
class IndexReport:
    """The index of one memory dir, as the agent loads it and as memtui audits it.

    ``path``: the ``MEMORY.md`` path; ``exists``; ``truncation`` (``None`` when absent);
    ``entries``: every link; ``dropped``: entries past the loaded part; ``dangling``: link
    targets (as written) whose file does not exist; ``unindexed``: memory relpaths no entry
    points at; ``text``: the file's text as read and audited (``None`` when it was not read).

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
        content, lines, units, truncated_by, warning, kept, dropped, linked = orjson.loads(blob)
        trunc = IndexTruncation(content, lines, units, tuple(truncated_by), warning, kept)
        ok = (
            isinstance(content, str) and isinstance(kept, str) and (warning is None or isinstance(warning, str))
            and type(lines) is int and type(units) is int and type(dropped) is int and dropped >= 0
            and all(t in ("lines", "size") for t in truncated_by)
        )
        indexed = frozenset(linked) if ok and isinstance(linked, list) else None
    except (orjson.JSONDecodeError, TypeError, ValueError):
        return None
    if indexed is None or not all(isinstance(r, str) for r in indexed):
        return None
    unindexed = tuple(p for p in memory_relpaths if p not in indexed)
    return IndexReport(index_path, True, trunc, unindexed=unindexed, indexed=indexed, dropped_total=dropped)


def _store_summary(
    cache: CatalogDB, index_dir_rel: str, st: os.stat_result, warning_style: IndexWarning,
    trunc: IndexTruncation, dropped: int, indexed: AbstractSet[str],
) -> None:
    """Keep the summary of an index just read (its ``stat`` ``st``), unless the file is racy
    or the same summary is kept already."""
    key = stat_key(st)
    if is_racy(key) or not cache.enabled:
        return
    kind, fingerprint = SUMMARY_KIND + index_dir_rel, _summary_fingerprint(key, warning_style)
    if cache.result(kind, fingerprint) is not None:
        return
    value = [trunc.content, trunc.lines, trunc.units, list(trunc.truncated_by), trunc.warning, trunc.kept, dropped, sorted(indexed)]
    try:
        blob = pack(value)
    except TypeError:  # orjson.JSONEncodeError: a lone surrogate
        return
    cache.put_result(kind, fingerprint, blob)


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
    Never raises: an unreadable index is reported in ``error``.
    """
    index_path = memory_dir / index_dir_rel / INDEX_NAME if index_dir_rel else memory_dir / INDEX_NAME
    if summary and cache is not None and cache.enabled:
        held = _stored_summary(cache, index_path, index_dir_rel, memory_relpaths, warning_style)
        if held is not None:
            return held
    try:
        data, st = read_regular(index_path, MAX_INDEX_FILE_BYTES)
        raw = data.decode("utf-8", errors="replace")
    except FileNotFoundError:
        return IndexReport(index_path, False, None, unindexed=tuple(memory_relpaths))
    except OSError as exc:
        return IndexReport(index_path, True, None, unindexed=tuple(memory_relpaths), error=exc.strerror or str(exc))
    trunc = truncate_index(raw, warning_style)
    entries = parse_entries(raw, index_dir_rel)
    dropped = split_dropped(raw, trunc, entries)
    dangling: dict[str, None] = {}  # ordered, each target once
    indexed: set[str] = set()
    for entry in entries:
        if entry.relpath is None:
            continue
        indexed.add(entry.relpath)
        if check_links and entry.relpath not in known_files and entry.target not in dangling and not _is_file(memory_dir / entry.relpath):
            dangling[entry.target] = None
    unindexed = tuple(p for p in memory_relpaths if p not in indexed)
    if cache is not None:
        _store_summary(cache, index_dir_rel, st, warning_style, trunc, len(dropped), indexed)
    return IndexReport(index_path, True, trunc, tuple(entries), tuple(dropped), tuple(dangling), unindexed, None, frozenset(indexed), raw)
