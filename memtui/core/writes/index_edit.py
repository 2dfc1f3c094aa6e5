"""Edits of ``MEMORY.md`` that go with a memory edit (docs/behaviour.md §4.4): add, remove, retarget entries.

Every operation that creates, renames or deletes a memory updates its index in the same
transaction. Lines are edited one at a time; the rest of the index is kept byte for byte.

A new line goes under the heading that names its memory's type (``## User``, ``# Feedback``,
``### Project memories``), after that section's last line — not at the end of the file, where it
would sit under the wrong heading and be the first to fall past the agent's 200-line cap. An
index without such a heading gets the line at the end. Every writer of index lines (edits,
doctor, team import, the dream's Prune phase) goes through :func:`add_entries`.
"""

from __future__ import annotations

import posixpath
import re
from collections import defaultdict
from collections.abc import Sequence
from urllib.parse import quote

from memtui.core.memory.frontmatter import parse_frontmatter
from memtui.core.memory.index import MAX_INDEX_FILE_BYTES, IndexEntry, dropped_entries, parse_entries
from memtui.core.memory.memories import MEMORY_TYPES, declared_type_of
from memtui.core.writes.rewrite import newline_of

# The reference's guidance: one line per memory, under ~150 characters.
MAX_ENTRY_CHARS = 150


def link_target(relpath: str, index_dir_rel: str) -> str:
    """The link target for ``relpath`` as written in the index at ``index_dir_rel``."""
    rel = posixpath.relpath(relpath, index_dir_rel) if index_dir_rel else relpath
    needs = any(c in rel for c in " ()[]<>") or any(ord(c) < 32 or ord(c) == 127 for c in rel)
    return quote(rel, safe="/._-~") if needs else rel


def _printable(text: str) -> str:
    """``text`` with control characters (ESC, BEL, a newline…) turned into spaces: an index
    line is one line of text."""
    return "".join(c if c.isprintable() else " " for c in text)


def entry_line(title: str, relpath: str, hook: str | None, index_dir_rel: str = "") -> str:
    """``- [Title](file.md) — hook``, the hook cut so the line stays under 150 characters."""
    title = " ".join(_printable(title).split()).replace("[", "(").replace("]", ")") or _printable(relpath)
    head = f"- [{title}]({link_target(relpath, index_dir_rel)})"
    if not hook:
        return head
    hook = " ".join(_printable(hook).split())
    room = MAX_ENTRY_CHARS - len(head) - 3
    if room < 8:
        return head
    if len(hook) > room:
        hook = hook[: room - 1].rstrip() + "…"
    return f"{head} — {hook}"


# An ATX heading: up to 3 spaces, 1-6 '#', then its text (closing '#'s dropped).
_HEADING = re.compile(r"^[ ]{0,3}#{1,6}[ \t]+(.+?)(?:[ \t]+#+)?[ \t]*$")


def _rows(text: str) -> tuple[list[str], bool]:
    """``text`` split on ``\n`` (a row keeps its ``\r``), and whether it ended with a newline."""
    rows = text.split("\n")
    ends = rows[-1] == ""
    if ends:
        rows.pop()
    return rows, ends


def _join(rows: list[str], ends: bool, tail: list[str], nl: str) -> str:
    """``rows`` back into text, then ``tail`` lines appended (a missing final newline added)."""
    text = "\n".join(rows) + ("\n" if ends and rows else "")
    if tail:
        if text and not text.endswith("\n"):
            text += nl
        text += "".join(f"{line}{nl}" for line in tail)
    return text


def names_type(heading_text: str, mem_type: str) -> bool:
    """Whether a heading's text names ``mem_type`` as a word, any case, singular or plural
    (``User``, ``Feedback notes``, ``project memories``; not ``Userland``)."""
    return re.search(rf"\b{re.escape(mem_type.casefold())}s?\b", heading_text.casefold()) is not None


def _section_ends(rows: list[str], types: set[str]) -> dict[str, int]:
    """For each type in ``types``: the row index just after the last non-blank row of the first
    section whose heading names it (a section runs to the next heading of any level). A heading
    holding a link (``### [Title](file.md)``) is an index entry written as a heading: a row of
    its section, not a section of its own."""
    headings: list[tuple[int, str]] = []
    for i, row in enumerate(rows):
        m = _HEADING.match(row.rstrip("\r"))
        if m is not None and "](" not in m.group(1):
            headings.append((i, m.group(1)))
    where: dict[str, int] = {}
    for k, (h, title) in enumerate(headings):
        end = headings[k + 1][0] if k + 1 < len(headings) else len(rows)
        for mem_type in types - where.keys():
            if names_type(title, mem_type):
                where[mem_type] = 1 + max([h, *(j for j in range(h + 1, end) if rows[j].strip())])
    return where


def add_entries(index_text: str, items: Sequence[tuple[str | None, str]]) -> str:
    """``index_text`` with each ``(type, line)`` added: after the last line of the section whose
    heading names the type (see :func:`names_type`), else — no such heading, or no type — at the
    end. Lines for one place keep their order; the rest of the text is kept byte for byte, its
    line ends (``\r\n``) used for the new lines; a missing final newline is added only when a
    line goes at the end."""
    if not items:
        return index_text
    nl = newline_of(index_text) if index_text else "\n"
    cr = "\r" if nl == "\r\n" else ""
    rows, ends = _rows(index_text)
    where = _section_ends(rows, {t for t, _ in items if t})
    placed: dict[int, list[str]] = defaultdict(list)
    tail: list[str] = []
    for mem_type, line in items:
        at = where.get(mem_type) if mem_type else None
        if at is None:
            tail.append(line)
        else:
            placed[at].append(line)
    at_end = placed.pop(len(rows), [])
    for at in sorted(placed, reverse=True):
        rows[at:at] = [line + cr for line in placed[at]]
    return _join(rows, ends, at_end + tail, nl)


def add_entry(index_text: str, line: str, mem_type: str | None = None) -> str:
    """``index_text`` with ``line`` added under the heading of ``mem_type``, else at the end
    (:func:`add_entries`)."""
    return add_entries(index_text, [(mem_type, line)])


def restore_entry(index_text: str, line: str, old_index_text: str, mem_type: str | None = None) -> str:
    """``index_text`` with ``line`` — a line of ``old_index_text`` that was removed — put back
    where it was: between the same two neighbour lines, when they are still there, next to each
    other and only once (first or last line: its one neighbour still first or last). Else as
    :func:`add_entry` does, under its type's heading. ``line`` is given without its line end."""
    old_rows, _ = _rows(old_index_text)
    want = line.rstrip("\r")
    i = next((k for k, row in enumerate(old_rows) if row.rstrip("\r") == want), None)
    if i is None:
        return add_entry(index_text, line, mem_type)
    before = old_rows[i - 1].rstrip("\r") if i > 0 else None
    after = old_rows[i + 1].rstrip("\r") if i + 1 < len(old_rows) else None
    rows, ends = _rows(index_text)
    plain = [row.rstrip("\r") for row in rows]
    nl = newline_of(index_text) if index_text else "\n"
    if before is None and after is None:
        return add_entry(index_text, line, mem_type)
    if before is None:
        spots = [0] if plain and plain[0] == after else []
    elif after is None:
        spots = [len(plain)] if plain and plain[-1] == before else []
    elif not (before.strip() or after.strip()):
        spots = []  # two blank lines say nothing about the place
    else:
        spots = [k + 1 for k in range(len(plain) - 1) if plain[k] == before and plain[k + 1] == after]
    if len(spots) != 1:
        return add_entry(index_text, line, mem_type)
    at = spots[0]
    if at == len(rows):
        return _join(rows, ends, [line], nl)
    rows.insert(at, line + ("\r" if nl == "\r\n" else ""))
    return _join(rows, ends, [], nl)


def memory_type_of(memory_text: str) -> str | None:
    """The type a memory file declares, for placing its index line: top level or
    ``metadata.type``, any case (``Feedback`` is placed under ``## Feedback`` too); ``None`` when
    it declares none of the four."""
    declared = declared_type_of(parse_frontmatter(memory_text).data)
    folded = declared.casefold() if declared else None
    return folded if folded in MEMORY_TYPES else None


def _entries_by_line(index_text: str, index_dir_rel: str, relpath: str) -> dict[int, list[IndexEntry]]:
    """The entries of the lines of ``index_text`` that may link to ``relpath``, by line number.

    Only a line holding ``relpath``'s file name, or a character that can spell it another way in
    a link (``%`` escapes, ``\\`` escapes, ``&`` entities), is parsed: a link's target keeps the
    file name otherwise, so every other line cannot link there. A line longer than
    ``MAX_INDEX_FILE_BYTES`` characters is not parsed (left as it is), which bounds the work on a
    hostile one-line index."""
    name = posixpath.basename(relpath)
    by_line: dict[int, list[IndexEntry]] = {}
    for number, line in enumerate(index_text.split("\n"), start=1):
        if "](" not in line or len(line) > MAX_INDEX_FILE_BYTES:
            continue
        if name not in line and not any(c in line for c in "%\\&"):
            continue
        for entry in parse_entries(line, index_dir_rel):
            by_line.setdefault(number, []).append(entry)
    return by_line


def _lines(text: str) -> list[str]:
    """``text`` split after each ``\n`` only (each line keeps its end) — as the index is
    numbered; ``splitlines`` would also split on U+2028, a form feed or a lone ``\r``."""
    parts = text.split("\n")
    return [p + "\n" for p in parts[:-1]] + ([parts[-1]] if parts[-1] else [])


def remove_entries(index_text: str, relpath: str, index_dir_rel: str = "") -> tuple[str, int]:
    """Remove each line whose links all point at ``relpath``. Returns the text and the number
    of lines removed (a line that also links elsewhere is kept)."""
    by_line = _entries_by_line(index_text, index_dir_rel, relpath)
    lines = _lines(index_text)
    kept: list[str] = []
    removed = 0
    for number, line in enumerate(lines, start=1):
        entries = by_line.get(number, [])
        if entries and all(e.relpath == relpath for e in entries):
            removed += 1
            continue
        kept.append(line)
    return "".join(kept), removed


def retarget_entries(index_text: str, old: str, new: str, index_dir_rel: str = "") -> tuple[str, int]:
    """Point every link to ``old`` at ``new`` instead. Returns the text and the count changed."""
    by_line = _entries_by_line(index_text, index_dir_rel, old)
    lines = _lines(index_text)
    count = 0
    new_target = link_target(new, index_dir_rel)
    for number, entries in by_line.items():
        for entry in entries:
            if entry.relpath == old and number <= len(lines):
                lines[number - 1] = lines[number - 1].replace(f"]({entry.target})", f"]({new_target})", 1)
                count += 1
    return "".join(lines), count


def newly_dropped(before_text: str | None, after_text: str, index_dir_rel: str = "") -> list[IndexEntry]:
    """Entries past the agent's cap (200 lines / 25,000 units) in ``after_text`` that were not
    past it in ``before_text`` — what an edit would push out of the loaded index."""

    if max(len(before_text or ""), len(after_text)) > MAX_INDEX_FILE_BYTES:
        return []  # far past the cap already and audited only in part: not parsed again
    before = {(e.relpath, e.title) for e in dropped_entries(before_text, index_dir_rel)} if before_text else set()
    return [e for e in dropped_entries(after_text, index_dir_rel) if (e.relpath, e.title) not in before]


def title_and_hook(text: str, relpath: str) -> tuple[str, str | None]:
    """The index title of a memory (its frontmatter ``name``, else the file stem) and hook (its
    ``description``), for a line made for it (``entry_line``)."""
    data = parse_frontmatter(text).data
    name, description = data.get("name"), data.get("description")
    title = str(name) if isinstance(name, (str, int, float)) and str(name).strip() else posixpath.splitext(posixpath.basename(relpath))[0]
    hook = str(description) if isinstance(description, (str, int, float)) and str(description).strip() else None
    return title, hook
