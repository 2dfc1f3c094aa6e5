"""Byte-preserving rewrites of a memory's frontmatter (docs/behaviour.md §4.2 "Writing back").

Only the lines that must change are touched: unknown keys, key order, comments, quoting,
line ends (CRLF stays CRLF) and the body bytes are kept exactly. python-frontmatter's ``dumps``
is not used: it re-serialises every key and strips the body.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from memtui.core.memory.frontmatter import BOM, FRONTMATTER_RE

_TOP_KEY = re.compile(r"^([A-Za-z_][\w-]*)\s*:")


@dataclass(frozen=True, slots=True)
class Rewrite:
    """The new text and a sentence per thing changed besides the asked-for edit."""

    text: str
    notes: tuple[str, ...] = ()


def newline_of(text: str) -> str:
    """The file's line end: ``\\r\\n`` when its first line ends so, else ``\\n``."""
    first = text.find("\n")
    return "\r\n" if first > 0 and text[first - 1] == "\r" else "\n"


def _strip_leading_trap(text: str) -> tuple[str, list[str]]:
    """Remove a BOM / blank lines in front of a ``---`` block (they hide it from the agent)."""
    notes: list[str] = []
    if text.startswith(BOM):
        text = text[1:]
        notes.append("removed the BOM in front of the frontmatter (it hid the frontmatter from the agent)")
    stripped = text.lstrip(" \t\r\n")
    if stripped != text and stripped.startswith("---"):
        text = stripped
        notes.append("removed blank lines in front of the frontmatter (they hid it from the agent)")
    return text, notes


def set_top_level_key(text: str, key: str, value: str, *, drop_nested: tuple[str, str] | None = None) -> Rewrite:
    """Set top-level ``key: value`` in ``text``'s frontmatter, touching nothing else.

    - replaces the value of an existing top-level ``key:`` line (its line end kept);
    - otherwise inserts ``key: value`` as the last line of the block;
    - no frontmatter block: one is added at the top (``---``/``key: value``/``---``);
    - ``drop_nested=("metadata", "type")`` also removes ``metadata.type`` (and ``metadata:``
      when that leaves it empty) — the "lift to top level" fix.

    ``value`` is written as given (callers pass plain words or quote them).
    """
    text, notes = _strip_leading_trap(text)
    nl = newline_of(text)
    m = FRONTMATTER_RE.match(text)
    if not m:
        return Rewrite(f"---{nl}{key}: {value}{nl}---{nl}{text}", (*notes, "added a frontmatter block"))
    raw_start = text.index("\n") + 1
    raw_end = m.start(1) + len(m.group(1))
    lines = text[raw_start:raw_end].splitlines(keepends=True)
    if drop_nested is not None:
        lines = _drop_nested(lines, *drop_nested)
    for i, line in enumerate(lines):
        km = _TOP_KEY.match(line)
        if km and km.group(1) == key:
            ending = line[len(line.rstrip("\r\n")) :] or nl
            lines[i] = f"{key}: {value}{ending}"
            break
    else:
        if lines and not lines[-1].endswith("\n"):
            lines[-1] += nl
        lines.append(f"{key}: {value}{nl}")
    return Rewrite(text[:raw_start] + "".join(lines) + text[raw_end:], tuple(notes))


def _drop_nested(lines: list[str], parent: str, child: str) -> list[str]:
    out: list[str] = []
    i = 0
    while i < len(lines):
        km = _TOP_KEY.match(lines[i])
        if km and km.group(1) == parent and not lines[i].split(":", 1)[1].strip():
            block = [lines[i]]
            j = i + 1
            while j < len(lines) and lines[j][:1] in (" ", "\t") and lines[j].strip():
                block.append(lines[j])
                j += 1
            kept = [ln for ln in block[1:] if not re.match(rf"^[ \t]+{re.escape(child)}\s*:", ln)]
            if kept:
                out.append(block[0])
                out.extend(kept)
            i = j
            continue
        out.append(lines[i])
        i += 1
    return out


def set_nested_key(text: str, parent: str, child: str, value: str) -> Rewrite:
    """Set ``parent.child: value`` (a key of a block mapping, e.g. ``metadata.type``) in
    ``text``'s frontmatter, touching nothing else.

    - replaces the value of an existing ``  child:`` line under a ``parent:`` block (its
      indentation and line end kept);
    - a ``parent:`` block without that key gets ``child: value`` as its first line, indented
      like the block's other lines (two spaces when it has none);
    - no ``parent:`` key: ``parent:`` + ``  child: value`` are appended to the block;
    - no frontmatter block: one is added at the top.

    A ``parent:`` written in flow style (``metadata: {type: x}``) is left alone and the value is
    not set (``Rewrite.notes`` says so and the text is unchanged).
    """
    text, notes = _strip_leading_trap(text)
    nl = newline_of(text)
    m = FRONTMATTER_RE.match(text)
    if not m:
        return Rewrite(f"---{nl}{parent}:{nl}  {child}: {value}{nl}---{nl}{text}", (*notes, "added a frontmatter block"))
    raw_start = text.index("\n") + 1
    raw_end = m.start(1) + len(m.group(1))
    lines = text[raw_start:raw_end].splitlines(keepends=True)
    for i, line in enumerate(lines):
        km = _TOP_KEY.match(line)
        if not km or km.group(1) != parent:
            continue
        rest = line.split(":", 1)[1].strip()
        if rest and not rest.startswith("#"):
            return Rewrite(text, (*notes, f"`{parent}:` is written in flow style; {parent}.{child} was not changed"))
        j = i + 1
        indent = None
        while j < len(lines) and lines[j][:1] in (" ", "\t") and lines[j].strip():
            sub = re.match(r"^([ \t]+)([A-Za-z_][\w-]*)\s*:", lines[j])
            if sub and indent is None:
                indent = sub.group(1)
            if sub and sub.group(2) == child and sub.group(1) == indent:
                ending = lines[j][len(lines[j].rstrip("\r\n")) :] or nl
                lines[j] = f"{sub.group(1)}{child}: {value}{ending}"
                return Rewrite(text[:raw_start] + "".join(lines) + text[raw_end:], tuple(notes))
            j += 1
        if not line.endswith("\n"):
            lines[i] = line + nl
        lines.insert(i + 1, f"{indent or '  '}{child}: {value}{nl}")
        return Rewrite(text[:raw_start] + "".join(lines) + text[raw_end:], tuple(notes))
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += nl
    lines.append(f"{parent}:{nl}  {child}: {value}{nl}")
    return Rewrite(text[:raw_start] + "".join(lines) + text[raw_end:], tuple(notes))
