"""The recall corpus: one pass over the memory dir that feeds every selector.

Each memory file is read once, only its **first 30 lines** (the reference's
``FRONTMATTER_MAX_LINES``), exactly as ``memtui.core.memory.headers.scan_headers`` does; besides the
recall header (description, type, mtime) memtui keeps the ``name`` and the head of the body
that those 30 lines contain, for the lexical selector. Newest mtime first; ties keep path
order. Unreadable files are dropped, as the reference drops them.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from memtui.core.memory.catalog import CatalogChanges
from memtui.core.memory.catalogdb import CatalogDB, code_fingerprint, jsonable, key_text, pack, stat_key
from memtui.core.memory.frontmatter import parse_frontmatter
from memtui.core.memory.headers import MemoryHeader, read_head_stat
from memtui.core.memory.memories import SEED_FORMAT, StrPath, iter_memory_files, memory_type_of, parse_memory_type
from memtui.core.places.behaviour import MemoryFormat
from memtui.core.recall.docs import RecallDoc

if TYPE_CHECKING:
    from memtui.core.recall.lexical import LexicalIndex
    from memtui.core.recall.vectors import DenseIndex, VectorStore

# memtui's choice: how much of the body (within the 30 scanned lines) the lexical index sees.
BODY_HEAD_CHARS = 1000
# What a corpus keeps per memory in the catalog database (``CatalogDB.derived``): the parts of
# its ``RecallDoc`` read from the file's head, ``[description, type, name, body head]``, valid
# while the file's stat key and the code that makes them (these modules) are unchanged.
DOC_KIND = "recall-doc"
_DOC_MODULES = ("recall/corpus", "recall/docs", "memory/headers", "memory/frontmatter", "memory/memories", "base/safe_read")


@dataclass(slots=True)
class RecallCorpus:
    """Every memory of one dir, newest first, with a lazily built lexical index.

    Build it once (``load_corpus``) and reuse it across queries: the indexes are built on
    first use and kept here. ``vector_store``: where the embeddings of its memories are cached
    (``None``: embedded every time the dense index is built).
    """

    memory_dir: Path
    docs: tuple[RecallDoc, ...]
    vector_store: VectorStore | None = None
    # where the lexical index is kept between runs (``memtui.core.recall.keptlexical``; ``None``: not kept)
    index_folder: Path | None = None
    _index: LexicalIndex | None = field(default=None, repr=False)
    _dense: DenseIndex | None = field(default=None, repr=False)
    _positions: dict[str, int] | None = field(default=None, repr=False)

    def position(self, relpath: str) -> int | None:
        """The index in ``docs`` of the memory at ``relpath`` (POSIX, relative to the memory
        dir), or ``None``; the lookup table is built on first use."""
        if self._positions is None:
            self._positions = {d.header.relpath: i for i, d in enumerate(self.docs)}
        return self._positions.get(relpath)

    def lexical_index(self) -> LexicalIndex:
        """The BM25 index over ``docs`` (made on first use: loaded from ``index_folder`` when
        kept there for exactly these docs, else built and kept there)."""
        if self._index is None:
            from memtui.core.recall.keptlexical import lexical_index

            self._index = lexical_index(self.docs, self.index_folder)
        return self._index

    def dense_index(self) -> DenseIndex:
        """The embeddings of ``docs`` (built on first use through ``vector_store``). Raises
        ``ModelUnavailableError`` when the embedding model cannot be loaded."""
        if self._dense is None:
            from memtui.core.recall.embedding import load_model
            from memtui.core.recall.vectors import DenseIndex

            self._dense = DenseIndex.build(self.docs, load_model(), self.vector_store, f"body:{BODY_HEAD_CHARS}")
        return self._dense

    def without(self, surfaced: Iterable[str]) -> RecallCorpus:
        """A corpus without the memories already surfaced (``surfaced``: absolute paths or
        paths relative to the memory dir). Returns ``self`` when nothing is dropped."""
        drop = normalise_paths(self.memory_dir, surfaced)
        if not drop:
            return self
        kept = tuple(d for d in self.docs if d.relpath not in drop)
        return self if len(kept) == len(self.docs) else RecallCorpus(self.memory_dir, kept, self.vector_store)


def normalise_paths(memory_dir: Path, paths: Iterable[str]) -> set[str]:
    """``paths`` (absolute, or relative to ``memory_dir``) as POSIX relpaths below it; paths
    outside the memory dir are ignored."""
    base = os.path.normpath(os.path.abspath(memory_dir))
    out: set[str] = set()
    for raw in paths:
        raw = raw.strip()
        if not raw:
            continue
        full = os.path.normpath(raw if os.path.isabs(raw) else os.path.join(base, raw))
        rel = os.path.relpath(full, base)
        if rel == "." or rel.startswith(".." + os.sep) or rel == "..":
            continue
        out.add(Path(rel).as_posix())
    return out


def _doc(path: StrPath, relpath: str, fmt: MemoryFormat = SEED_FORMAT) -> RecallDoc | None:
    try:
        head, mtime, st = read_head_stat(path)
    except OSError:
        return None
    fm = parse_frontmatter(head, strip_bom=fmt.strip_bom)
    data = fm.data
    desc = data.get("description")
    if fmt.strings_only:
        description = desc if isinstance(desc, str) and desc else None
    else:
        description = None if desc is None or isinstance(desc, (list, dict)) or desc == "" else str(desc)
    name = data.get("name")
    header = MemoryHeader(path, relpath, mtime, description, memory_type_of(data, fmt))
    body = fm.body if fm.present else head
    key = (st.st_mtime_ns, st.st_size, st.st_ino, st.st_ctime_ns)
    return RecallDoc(header, None if name is None or isinstance(name, (list, dict)) else str(name), body[:BODY_HEAD_CHARS], key)


def _stored_doc(path: StrPath, relpath: str, st: os.stat_result, value: object) -> RecallDoc | None:
    """The doc a stored ``[description, type, name, body head]`` makes with the file's ``st``,
    or ``None`` when the value has another shape (the file is read again)."""
    if not isinstance(value, list) or len(value) != 4:
        return None
    description, mem_type, name, body = value
    if not all(v is None or isinstance(v, str) for v in (description, mem_type, name)) or not isinstance(body, str):
        return None
    header = MemoryHeader(path, relpath, st.st_mtime, description, parse_memory_type(mem_type))
    return RecallDoc(header, name, body, stat_key(st))


def _cached_docs(memory_dir: Path, fmt: MemoryFormat, cache: CatalogDB) -> list[RecallDoc]:
    """``_doc`` of every memory file, from ``cache`` for a file whose ``stat`` key is the one
    its value was stored under (with this code's fingerprint), else read now and stored unless
    racy. The scan's header rows are saved too (each file's, as ``scan_headers`` keeps them)."""
    import orjson

    fp = code_fingerprint(_DOC_MODULES)
    stored = cache.derived(DOC_KIND, fp)
    docs: list[RecallDoc] = []
    new: dict[str, tuple[str, bytes]] = {}
    for path, rel in iter_memory_files(memory_dir):
        _, st = cache.lookup_file(path, rel, header=True)  # (marks the row seen: kept by ``save``)
        if st is not None and (hit := stored.get(rel)) is not None and hit[0] == key_text(stat_key(st)):
            try:
                doc = _stored_doc(path, rel, st, orjson.loads(hit[1]))
            except orjson.JSONDecodeError:
                doc = None
            if doc is not None:
                docs.append(doc)
                continue
        doc = _doc(path, rel, fmt)
        if doc is None:
            continue
        docs.append(doc)
        h = doc.header
        value = [h.description, h.type, doc.name, doc.body_head]
        # stored only when the bytes read are the ones the stat before describes (not racy)
        if st is not None and doc.key == stat_key(st) and h.mtime == st.st_mtime and jsonable(value):
            if cache.store(rel, doc.key, None, [h.mtime, h.description, h.type]):
                new[rel] = (key_text(doc.key), pack(value))
    cache.save(complete=True)
    if new:
        cache.put_derived(DOC_KIND, fp, new)
    return docs


def load_corpus(
    memory_dir: Path,
    fmt: MemoryFormat = SEED_FORMAT,
    *,
    state_dir: Path | None = None,
    cache: CatalogDB | None = None,
) -> RecallCorpus:
    """Scan ``memory_dir`` (docs/behaviour.md §6 "Scan"): every ``*.md`` below it except ``MEMORY.md``,
    first 30 lines each, newest first, read in the agent's memory format ``fmt``. Paths are
    made absolute (the injected text names files by absolute path, as the reference does).
    ``state_dir``: memtui's state dir, where the embeddings are cached, the lexical index is
    kept (``memtui.core.recall.keptlexical``) and the memory dir's catalog database is
    (``None``: none of them). ``cache``: that database for ``fmt``, already open
    (``CatalogDB.for_memory_dir(state, memory_dir, fmt=fmt)``; default: opened from
    ``state_dir``): a file whose ``stat`` is unchanged since an earlier scan is not read again;
    the corpus is the same. A missing dir gives an empty corpus; never raises."""
    memory_dir = Path(os.path.abspath(memory_dir))
    if cache is None and state_dir is not None:
        cache = CatalogDB.for_memory_dir(state_dir, memory_dir, fmt=fmt)
    if cache is not None and cache.enabled:
        docs = _cached_docs(memory_dir, fmt, cache)
    else:
        docs = [d for path, rel in iter_memory_files(memory_dir) if (d := _doc(path, rel, fmt)) is not None]
    docs.sort(key=lambda d: -d.header.mtime)
    store: VectorStore | None = None
    folder: Path | None = None
    if state_dir is not None:
        from memtui.core.places.statedir import memdir_state
        from memtui.core.recall.keptlexical import FOLDER
        from memtui.core.recall.vectors import FileVectorStore

        try:
            store = FileVectorStore.for_memory_dir(state_dir, memory_dir)
            # one per memory format, as the catalog database: the same files read in another
            # format are other documents
            folder = memdir_state(state_dir, memory_dir) / (FOLDER if fmt.key == SEED_FORMAT.key else f"{FOLDER}.{fmt.key}")
        except OSError:  # the state dir inside the memory dir: nothing is cached there
            store, folder = None, None
    return RecallCorpus(memory_dir, tuple(docs), store, folder)


def corpus_from_docs(memory_dir: Path, docs: Sequence[RecallDoc]) -> RecallCorpus:
    """A corpus from ready-made docs (sorted newest first here)."""
    return RecallCorpus(memory_dir, tuple(sorted(docs, key=lambda d: -d.header.mtime)))


def corpus_changes(before: RecallCorpus, after: RecallCorpus) -> CatalogChanges:
    """What recall sees differently after a re-scan: memories added, removed, or with another
    header (mtime, description or type), by relpath."""
    old = {d.header.relpath: (d.header.mtime, d.header.description, d.header.type) for d in before.docs}
    new = {d.header.relpath: (d.header.mtime, d.header.description, d.header.type) for d in after.docs}
    return CatalogChanges(
        added=tuple(sorted(new.keys() - old.keys())),
        removed=tuple(sorted(old.keys() - new.keys())),
        changed=tuple(sorted(p for p in new.keys() & old.keys() if new[p] != old[p])),
    )
