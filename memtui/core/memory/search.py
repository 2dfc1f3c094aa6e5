"""Search of the memory catalog: every memory whose name, description, path or body contains
every term, case-insensitively, in catalog order — streamed, and answered from the catalog
database's FTS5 ``trigram`` index (``memtui.core.memory.catalogdb``).

The definition (``matches``): the terms are the query's whitespace-separated words,
case-folded (``str.casefold``); a memory matches when each is a substring of its
``haystack``, the name, description, path and body joined by line ends and case-folded.

How it is answered fast at 100,000 memories: the index holds each memory's haystack, cut into
trigrams (``case_sensitive 1``: the text is case-folded by Python before it goes in, so the
index folds exactly as the definition does). A term of three characters or more can only be in
a haystack holding all of its trigrams, so the memories holding them all (one FTS5 query,
``detail=none``: no positions, a small index) are the only candidates; each candidate is then
checked against the definition — the terms found in the name, description or path need no
read, the others the body (read for the occasion, not kept). Memories not indexed yet (new,
changed, or whose haystack the index cannot hold exactly) are always candidates, so the
answer never depends on how far the index is filled. Terms shorter than three characters
select nothing by themselves: every memory is a candidate for them.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from memtui.core.memory.catalogdb import CatalogDB
from memtui.core.memory.memories import Memory, with_text

# Positions handed back at a time: the first chunk as soon as this many match (a screenful and
# more), the later ones larger (memtui's choice).
FIRST_CHUNK = 60
CHUNK = 2_000
# Memories indexed per write transaction (another process waits at most for one).
INDEX_BATCH = 500
# The index is emptied and filled again once it holds more than twice as many entries as there
# are memories, plus this many (the entries of changed files stay in it, unreachable).
STALE_SLACK = 1000
_SURROGATE = re.compile("[\ud800-\udfff]")


def terms_of(query: str) -> list[str]:
    """The search terms of ``query``: its whitespace-separated words, case-folded."""
    return query.casefold().split()


def meta_text(mem: Memory) -> str:
    """The name, description and path of ``mem`` as the haystack starts: joined by line ends,
    case-folded."""
    return "\n".join(filter(None, (mem.name, mem.description, mem.relpath))).casefold()


def haystack(mem: Memory) -> str:
    """What a search looks in: name, description, path and body (``mem`` holds its text),
    joined by line ends, case-folded."""
    return "\n".join(filter(None, (mem.name, mem.description, mem.relpath, mem.body))).casefold()


def matches(mem: Memory, terms: Sequence[str]) -> bool:
    """Whether every term (``terms_of``) is in ``mem``'s haystack (its text read if needed)."""
    if not terms:
        return True
    head = meta_text(mem)
    rest = [t for t in terms if t not in head]
    if not rest:
        return True
    hay = haystack(with_text(mem)[0])
    return all(t in hay for t in rest)


def _fts_query(terms: Sequence[str]) -> str | None:
    """The FTS5 query that every haystack holding all ``terms`` matches (each term's trigrams,
    all required), or ``None`` when no term is long enough to select anything."""
    # (a trigram holding a lone surrogate is not in the index, which holds none: left out, the
    # query then selects more, never fewer)
    grams = sorted({g for t in terms if len(t) >= 3 for i in range(len(t) - 2) if not _SURROGATE.search(g := t[i : i + 3])})
    if not grams:
        return None
    return " AND ".join('"' + g.replace('"', '""') + '"' for g in grams)


@dataclass(frozen=True, slots=True)
class SearchChunk:
    """Positions (into the searched list, ascending) of matching memories found since the last
    chunk; ``done``: this is the last one."""

    positions: tuple[int, ...]
    done: bool


class CatalogSearch:
    """Search over ``memories`` (a catalog's, in its order) with the index of ``db`` (``None``
    or disabled: every memory is a candidate). Thread-safe for one search at a time per
    instance; ``search`` may run in a worker while the UI waits for its chunks."""

    def __init__(self, memories: Sequence[Memory], db: CatalogDB | None) -> None:
        self.memories = memories
        self.db = db if db is not None and db.enabled else None
        self._lock = threading.Lock()
        self._fts_of: dict[int, int] | None = None  # search rowid -> position
        self._always: list[int] = []  # positions not (exactly) indexed: always candidates

    def _load_rows(self) -> None:
        if self._fts_of is not None:
            return
        fts_of: dict[int, int] = {}
        always: list[int] = []
        rows = {rel: (key, fts_id, exact) for rel, key, fts_id, exact in self.db.search_rows()} if self.db is not None else {}
        for pos, mem in enumerate(self.memories):
            row = rows.get(mem.relpath)
            if row is None or row[1] is None or not row[2] or self.db is None or row[0] != self.db.stored_key(mem.relpath):
                always.append(pos)
            else:
                fts_of[row[1]] = pos
        self._fts_of, self._always = fts_of, always

    def candidates(self, terms: Sequence[str]) -> list[int] | None:
        """Positions that may match ``terms``, ascending; ``None``: every position."""
        query = _fts_query(terms)
        if query is None or self.db is None:
            return None
        with self._lock:
            self._load_rows()
            assert self._fts_of is not None
            found = self.db.fts_match(query)
            if found is None:
                return None
            fts_of = self._fts_of
            return sorted({fts_of[r] for r in found if r in fts_of}.union(self._always))

    def search(self, query: str, allowed: Sequence[int] | None = None, cancel: threading.Event | None = None) -> Iterator[SearchChunk]:
        """The positions of the memories matching ``query`` (``terms_of``), in chunks
        (``FIRST_CHUNK`` first, then ``CHUNK``), among ``allowed`` positions (ascending;
        ``None``: all). Stops early when ``cancel`` is set."""
        terms = terms_of(query)
        pool: Sequence[int] = range(len(self.memories)) if allowed is None else allowed
        if terms:
            cands = self.candidates(terms)
            if cands is not None:
                keep = set(cands)
                pool = [p for p in pool if p in keep]
        found: list[int] = []
        limit = FIRST_CHUNK
        memories = self.memories
        for pos in pool:
            if cancel is not None and cancel.is_set():
                return
            if not terms or matches(memories[pos], terms):
                found.append(pos)
                if len(found) >= limit:
                    yield SearchChunk(tuple(found), False)
                    found = []
                    limit = CHUNK
        yield SearchChunk(tuple(found), True)

    def index_pending(self, limit: int = INDEX_BATCH) -> int:
        """Add up to ``limit`` memories that are not in the index yet (their text read now)
        and return how many were added (``0``: the index is complete, or cannot be written).
        A memory whose file changed since its row was stored is left for the next scan."""
        if self.db is None:
            return 0
        with self._lock:  # (held only to read the rows: a search meanwhile does not wait for the reads below)
            self._load_rows()
            assert self._fts_of is not None
            if len(self._fts_of) and self.db.search_size() > 2 * max(len(self.memories), 1) + STALE_SLACK:
                # more stale entries than live ones (files changed many times): start afresh
                self.db.reset_search()
                self._fts_of = None
                self._load_rows()
            pending = list(self._always)
        batch: dict[str, tuple[str, str, bool]] = {}
        rows = {rel: fts_id for rel, _key, fts_id, _exact in self.db.search_rows()} if pending else {}
        for pos in pending:
            mem = self.memories[pos]
            key = self.db.stored_key(mem.relpath)
            if key is None or rows.get(mem.relpath) is not None:
                continue
            full, same = with_text(mem)
            if not same:
                continue
            text = haystack(full)
            exact = _SURROGATE.search(text) is None
            batch[mem.relpath] = (key, text if exact else _SURROGATE.sub("\ufffd", text), exact)
            if len(batch) >= limit:
                break
        if not batch:
            return 0
        added = self.db.index_texts(batch)
        with self._lock:  # the new entries join the index's map; they are no longer read
            if self._fts_of is not None and added:
                positions = {self.memories[p].relpath: p for p in pending}
                exact = {rel for rel in added if batch[rel][2]}  # (a haystack held inexactly stays read)
                for rel, fts_id in added.items():
                    if (pos := positions.get(rel)) is not None and rel in exact:
                        self._fts_of[fts_id] = pos
                done = {positions[rel] for rel in exact if rel in positions}
                self._always = [p for p in self._always if p not in done]
        return len(added)
