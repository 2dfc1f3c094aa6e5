"""Which memories a listing shows: a type filter and a search, the same for ``memtui ls`` and
the Memories pane.

The type filter is one of the four memory types, ``"none"`` (no type the agent recognises:
untyped, ``Feedback``, a ``type`` nested under ``metadata:``) or ``"all"``. The search keeps
a memory when every word of it occurs, ignoring case, in the memory's name, description,
path or body (``memtui.core.memory.search``: a memory from the catalog database has its
text read for the check, not kept).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from memtui.core.memory.catalog import MemoryEntry
from memtui.core.memory.memories import MEMORY_TYPES
from memtui.core.memory.search import matches as search_matches

TypeFilter = Literal["all", "user", "feedback", "project", "reference", "none"]
# Every type filter, in the order a UI cycles through them.
TYPE_FILTERS: tuple[TypeFilter, ...] = ("all", *MEMORY_TYPES, "none")
# Other names a user may give for a filter (``memtui ls --type untyped``).
TYPE_FILTER_ALIASES: dict[str, TypeFilter] = {"untyped": "none"}


def type_filter(name: str | None) -> TypeFilter:
    """``name`` as a type filter (``None`` → ``"all"``; ``"untyped"`` → ``"none"``).

    Raises ``ValueError`` for a name that is neither a filter nor an alias."""
    if name is None:
        return "all"
    name = TYPE_FILTER_ALIASES.get(name, name)
    for known in TYPE_FILTERS:
        if known == name:
            return known
    raise ValueError(f"unknown type filter {name!r}; choose one of {', '.join(TYPE_FILTERS)}")


@dataclass(frozen=True, slots=True)
class MemoryFilter:
    """A type filter and the search words (already case-folded)."""

    type: TypeFilter = "all"
    terms: tuple[str, ...] = ()

    @classmethod
    def of(cls, type_name: str | None = None, search: str = "") -> MemoryFilter:
        """The filter for a type name (see ``type_filter``) and a search as typed: split on
        whitespace, case-folded. Raises ``ValueError`` for an unknown type name."""
        return cls(type_filter(type_name), tuple(search.casefold().split()))

    def type_matches(self, entry: MemoryEntry) -> bool:
        """Whether ``entry`` has the type asked for (the search words aside)."""
        return self.type == "all" or (entry.type or "none") == self.type

    def matches(self, entry: MemoryEntry) -> bool:
        """Whether ``entry`` has the type asked for and contains every search word."""
        return self.type_matches(entry) and search_matches(entry.memory, self.terms)

    def apply(self, entries: Iterable[MemoryEntry]) -> list[MemoryEntry]:
        """The entries that match, in their order."""
        if self.type == "all" and not self.terms:
            return list(entries)
        return [e for e in entries if self.matches(e)]
