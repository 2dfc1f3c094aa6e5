"""Edits of ``MEMORY.md`` that go with a memory edit (SPEC §4.4): add, remove, retarget entries.

Every operation that creates, renames or deletes a memory updates its index in the same
transaction. Lines are edited one at a time; the rest of the index is kept byte for byte.
"""

from __future__ import annotations

import posixpath
from urllib.parse import quote

from memtui.core.index import IndexEntry, dropped_entries, parse_entries
from memtui.core.rewrite import newline_of

# The reference's guidance: one line per memory, under ~150 characters.
MAX_ENTRY_CHARS = 150


def link_target(relpath: str, index_dir_rel: str) -> str:
    """The link target for ``relpath`` as written in the index at ``index_dir_rel``."""
    rel = posixpath.relpath(relpath, index_dir_rel) if index_dir_rel else relpath
    return quote(rel, safe="/._-~") if any(c in rel for c in " ()[]<>") else rel


def entry_line(title: str, relpath: str, hook: str | None, index_dir_rel: str = "") -> str:
    """``- [Title](file.md) — hook``, the hook cut so the line stays under 150 characters."""
    title = " ".join(title.split()).replace("[", "(").replace("]", ")") or relpath
    head = f"- [{title}]({link_target(relpath, index_dir_rel)})"
    if not hook:
        return head
    hook = " ".join(hook.split())
    room = MAX_ENTRY_CHARS - len(head) - 3
    if room < 8:
        return head
    if len(hook) > room:
        hook = hook[: room - 1].rstrip() + "…"
    return f"{head} — {hook}"


def add_entry(index_text: str, line: str) -> str:
    """``index_text`` with ``line`` appended (the file's line ends kept)."""
    nl = newline_of(index_text) if index_text else "\n"
    if index_text and not index_text.endswith("\n"):
        index_text += nl
    return f"{index_text}{line}{nl}"


def _entries_by_line(index_text: str, index_dir_rel: str) -> dict[int, list[IndexEntry]]:
    by_line: dict[int, list[IndexEntry]] = {}
    for entry in parse_entries(index_text, index_dir_rel):
        by_line.setdefault(entry.line, []).append(entry)
    return by_line


def remove_entries(index_text: str, relpath: str, index_dir_rel: str = "") -> tuple[str, int]:
    """Remove each line whose links all point at ``relpath``. Returns the text and the number
    of lines removed (a line that also links elsewhere is kept)."""
    by_line = _entries_by_line(index_text, index_dir_rel)
    lines = index_text.splitlines(keepends=True)
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
    by_line = _entries_by_line(index_text, index_dir_rel)
    lines = index_text.splitlines(keepends=True)
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

    before = {(e.relpath, e.title) for e in dropped_entries(before_text, index_dir_rel)} if before_text else set()
    return [e for e in dropped_entries(after_text, index_dir_rel) if (e.relpath, e.title) not in before]
