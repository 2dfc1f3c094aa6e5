"""Marking a memory superseded by a newer one that contradicts it (``possible-conflict``):
the doctor's ``mark-superseded`` fix and the dream's proposal share this edit.

The older memory keeps every line. Its frontmatter gets ``superseded_by: <newer relpath>`` (the
conflict check leaves such a memory alone from then on) and its body starts with one quoted
line naming the newer memory and what differs, so that an agent recalling the old memory reads
that first. Nothing is deleted: whether to drop the old memory stays the user's decision.
"""

from __future__ import annotations

import posixpath

from memtui.core.memory.frontmatter import parse_frontmatter
from memtui.core.verify.conflicts import SUPERSEDED_KEY, Conflict
from memtui.core.writes.rewrite import newline_of, set_top_level_key


def superseded_note(conflict: Conflict) -> str:
    """The body line: ``> **Superseded** by [newer](newer.md): it says 2026-12-15 where this
    says 2026-11-03.`` (the link relative to the older memory's directory)."""
    link = posixpath.relpath(conflict.newer, posixpath.dirname(conflict.older) or ".")
    says = "; ".join(f"it says {v.newer} where this says {v.older}" for v in conflict.values[:3])
    return f"> **Superseded** by [{conflict.newer}]({link}){': ' + says if says else ''}."


def mark_superseded(text: str, conflict: Conflict) -> str | None:
    """``text`` (the older memory) marked superseded by ``conflict.newer``, or ``None`` when it
    is marked already."""
    fm = parse_frontmatter(text)
    if fm.present and SUPERSEDED_KEY in fm.data:
        return None
    marked = set_top_level_key(text, SUPERSEDED_KEY, conflict.newer).text
    nl = newline_of(marked)
    fm = parse_frontmatter(marked)
    start = len(marked) - len(fm.body)
    while marked.startswith(nl, start):
        start += len(nl)
    return marked[:start] + superseded_note(conflict) + nl + nl + marked[start:]
