"""Doctor checks of the index ``MEMORY.md`` (docs/behaviour.md §4.4): what the agent loads of it, links to
missing files, memories it does not list, entries past the cap, lines over ~150 characters,
heading-style entries, a frontmatter block.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import urlsplit

from memtui.core.doctor.model import Finding, finding
from memtui.core.memory.frontmatter import FRONTMATTER_RE
from memtui.core.memory.lint import find_relative_dates
from memtui.core.memory.index import (
    INDEX_NAME,
    MAX_INDEX_LINES,
    MAX_INDEX_UNITS,
    IndexReport,
    read_index,
)
from memtui.core.writes.index_edit import MAX_ENTRY_CHARS

# A list-line entry: ``- [Title](target)`` then the hook after a separator.
ENTRY_LINE = re.compile(r"^(?P<head>[ \t]*[-*+][ \t]+\[(?P<title>[^\]\n]*)\]\((?P<target>[^)\s]*)\))(?P<sep>[ \t]*(?:[—–:]|-{1,2})[ \t]*|[ \t]+)(?P<hook>\S.*?)[ \t]*$")
HEADING_ENTRY = re.compile(r"^[ \t]*#{1,6}[ \t]+(?=\[)")
SHORT_HOOK_MIN = 8  # a shortened hook keeps at least this many characters, else no fix


def index_relpath(index_dir_rel: str) -> str:
    """``MEMORY.md`` or ``team/MEMORY.md``."""
    return f"{index_dir_rel}/{INDEX_NAME}" if index_dir_rel else INDEX_NAME


def shorten_line(line: str) -> str | None:
    """``line`` (an entry, no line end) with its hook cut to fit ``MAX_ENTRY_CHARS`` with an
    ellipsis, or ``None`` when it is not a ``- [..](..) — hook`` entry or cannot be shortened so."""
    m = ENTRY_LINE.match(line)
    if not m:
        return None
    head = m.group("head") + m.group("sep")
    room = MAX_ENTRY_CHARS - len(head)
    if room < SHORT_HOOK_MIN + 1:
        return None
    return head + m.group("hook")[: room - 1].rstrip() + "…"


# What an index line says of a memory it no longer stands by: "SUPERSEDED by plan 018",
# "(obsolete)", "[DEPRECATED]", "已废弃". The English words in lower case only in brackets or
# right before "by"/":" — "deprecated APIs" is a memory about deprecated things, not a retired one.
_HOOK = re.compile(r"^[ \t]*(?:[-*+][ \t]+|#{1,6}[ \t]+)?\[[^\]\n]*\]\([^)\s]*\)")
# The hook's parts: a mark speaks of the memory only where a part starts or ends with it
# ("— SUPERSEDED by plan 18", "obsolete since 2024-05; kept for audit", "notes (obsolete)"); in the
# middle of a sentence it speaks of something else ("flags marked SUPERSEDED in flags.yaml",
# "ADR-7 (superseded by ADR-12) still matters", "已废弃的接口列表").
_PARTS = re.compile(r"\s+[—–-]\s+|[—–;；|，]|,\s")
_MARK_WORDS = (
    r"superseded|obsolete|outdated|deprecated|retired|stale|no longer (?:valid|used|true|current|relevant|accurate|applies)"
    r"|obsolet[oa]|desactualizad[oa]|veraltet|已废弃|已作废|已过时|已過時|已廢棄|废弃|作废|過時|过时|廃止済み?|古い情報|폐기됨?"
)
# at a part's start: the mark, then the part's end, a comma, "by"/"since"/"see"/"in favour of",
# or a colon that points on ("DEPRECATED: see auth-v2"; not "retired: db1, db2", a list)
_MARK_START = re.compile(
    rf"^[(\[]?\s*(?:{_MARK_WORDS})\s*[)\]]?(?=\s*$|\s*[.。(（]|\s+(?:by|since|as of|in favou?r of|see|use|kept|por|seit)\b|\s*[:：]\s*(?:see|use|replaced|superseded|→|->|見て|参见|参考|见))",
    re.IGNORECASE,
)
# in brackets at a part's start or end: "(obsolete) the Heroku steps", "notes (obsolete)"
_MARK_END = re.compile(rf"^[(\[（]\s*(?:{_MARK_WORDS}|old)\s*[)\]）](?!\()|[(\[（]\s*(?:{_MARK_WORDS}|old)\s*[)\]）]\s*$", re.IGNORECASE)


def superseded_marker(line: str) -> str | None:
    """The words by which an index ``line`` calls its memory superseded or obsolete, or ``None``
    (only the hook after the link is read: a title "[Old]" is a name)."""
    head = _HOOK.match(line)
    hook = line[head.end() :] if head else line
    for part in _PARTS.split(hook):
        part = part.strip(" \t:")
        m = _MARK_START.match(part) or _MARK_END.search(part)
        if m is not None:
            return m.group(0).strip()
    return None


def _leaves_memory_dir(target: str) -> bool:
    """A link that is a path (no scheme, no host, not a bare ``#fragment``) yet no memory
    relpath: it climbs out with ``..`` or is absolute."""
    parts = urlsplit(target)
    return not parts.scheme and not parts.netloc and bool(parts.path)


def index_findings(memory_dir: Path, report: IndexReport, memory_relpaths: set[str], index_dir_rel: str = "") -> list[Finding]:
    """Findings about one index (``index_dir_rel`` ``""`` for the main, ``"team"`` for the team
    index). ``memory_relpaths``: every memory below the memory dir. The index's text and links
    are the ones ``report`` read (the file is read again only for a report that holds no text).
    Of an index over ``MAX_INDEX_FILE_BYTES`` only the part ``report`` audited is checked; the
    ``index-truncated`` finding says so (``IndexReport.skip``)."""
    rel = index_relpath(index_dir_rel)
    out: list[Finding] = []
    if not report.exists:
        if report.unindexed:
            out.append(finding("index-missing", rel, None, f"no {rel}: the agent loads no index here; {len(report.unindexed)} memor{'y is' if len(report.unindexed) == 1 else 'ies are'} unindexed (fix: `not-indexed`)"))
    elif report.error is not None:
        out.append(finding("index-unreadable", rel, None, f"{rel} cannot be read: {report.error}"))
        return out
    for relpath in report.unindexed:
        out.append(finding("not-indexed", relpath, None, f"not linked from {rel}: the index is how the agent knows the memory exists", fix="add-index-entry", index=rel))
    if not report.exists:
        return out
    if report.text is not None:
        raw = report.text
        entries = list(report.entries)
        skip = report.skip
    else:
        again = read_index(memory_dir, [], index_dir_rel=index_dir_rel, check_links=False)
        if again.error is not None or again.text is None:  # replaced by a FIFO or a device since the scan
            out.append(finding("index-unreadable", rel, None, f"{rel} cannot be read: {again.error or 'it is gone'}"))
            return out
        raw = again.text
        entries = list(again.entries)
        skip = again.skip
    lines = raw.split("\n")
    if FRONTMATTER_RE.match(raw):
        out.append(finding("index-frontmatter", rel, 1, f"{rel} starts with a frontmatter block: the index has none; the agent loads those lines as index text"))
    trunc = report.truncation
    if trunc is not None and trunc.warning:
        note = f"; {skip.note(rel)}" if skip is not None else ""
        out.append(finding("index-truncated", rel, None, f"{trunc.warning.removeprefix('> WARNING: ')} ({trunc.lines} lines, {trunc.units:,} characters; the agent loads at most {MAX_INDEX_LINES} lines / {MAX_INDEX_UNITS:,} characters{note})",
                           **({"audited_bytes": skip.audited, "size_bytes": skip.size} if skip is not None else {})))
    for entry in report.dropped:
        out.append(finding("index-past-cap", rel, entry.line, f"[{entry.title}]({entry.target}) is past the cap: the agent never loads this entry", target=entry.target))
    by_line: dict[int, list[str | None]] = {}
    for entry in entries:
        by_line.setdefault(entry.line, []).append(entry.relpath)
    # per line: the one relpath all its links point at (``None`` for none or several), and the
    # superseded mark of its hook — once per line, not per link (a one-line index holds thousands)
    sole: dict[int, str | None] = {n: rels[0] if len(set(rels)) == 1 else None for n, rels in by_line.items()}
    markers: dict[int, str | None] = {}
    dangling = set(report.dangling)
    for entry in entries:
        if entry.relpath is None and _leaves_memory_dir(entry.target):
            where = "outside the memory dir" if not entry.target.startswith("/") else "an absolute path"
            out.append(
                finding(
                    "index-link-outside",
                    rel,
                    entry.line,
                    f"[{entry.title}]({entry.target}) points {where}: recall only reads memories below the memory dir, so this entry is not a memory (link it from an instruction file, or copy what matters into a memory)",
                    target=entry.target,
                )
            )
        if entry.target in dangling:
            only_this = entry.relpath is not None and sole[entry.line] == entry.relpath
            out.append(
                finding(
                    "index-dangling",
                    rel,
                    entry.line,
                    f"[{entry.title}]({entry.target}) links to a file that does not exist",
                    fix="drop-index-line" if only_this and entry.relpath is not None else None,
                    target=entry.target,
                    relpath=entry.relpath,
                )
            )
        if entry.relpath is not None and entry.target not in dangling and entry.relpath in memory_relpaths:
            if entry.line not in markers:
                markers[entry.line] = superseded_marker(lines[entry.line - 1])
            marker = markers[entry.line]
            if marker is not None:
                out.append(
                    finding(
                        "index-superseded",
                        rel,
                        entry.line,
                        f"marked “{marker}” here, yet recall still reads {entry.relpath} and may pick it: delete it, or fold what holds into its replacement",
                        target=entry.target,
                        relpath=entry.relpath,
                        marker=marker,
                    )
                )
        if entry.heading:
            line = lines[entry.line - 1].rstrip("\r")
            single = len(by_line[entry.line]) == 1 and HEADING_ENTRY.match(line) is not None
            out.append(
                finding(
                    "index-heading-entry",
                    rel,
                    entry.line,
                    f"[{entry.title}]({entry.target}) is a heading, not a `- ` entry line",
                    fix="entry-from-heading" if single else None,
                    target=entry.target,
                )
            )
    # a relative date in an index line: the agent loads the line in every later session
    epoch = datetime(2000, 1, 1, tzinfo=UTC)  # only the phrases are used: no date is claimed
    for rd in find_relative_dates(raw, epoch):
        out.append(
            finding(
                "relative-date",
                rel,
                rd.line,
                f"relative date “{rd.phrase}” in the index: the agent loads this line in every later session, when it names another day; write the date",
                phrase=rd.phrase,
                column=rd.column,
                resolved=None,
                where="index",
            )
        )
    for number, line in enumerate(lines, start=1):
        text = line.rstrip("\r")
        if len(text) <= MAX_ENTRY_CHARS:
            continue
        links = by_line.get(number, [])
        target_rel = links[0] if len(links) == 1 else None
        out.append(
            finding(
                "index-line-too-long",
                rel,
                number,
                f"{len(text)} characters (keep entries under ~{MAX_ENTRY_CHARS}: the index is loaded every session and cut at {MAX_INDEX_UNITS:,} characters)",
                relpath=target_rel,
                chars=len(text),
            )
        )
    return out
