"""The lexical index of a memory dir, kept in memtui's state dir so a warm recall loads it.

Building the BM25 index (``LexicalIndex.build``: every document tokenised, its glosses looked
up, ``bm25s``'s score matrix) is most of a warm ``memtui recall`` with nothing changed: ~45 % of
a 6 s run at 20,000 memories, most of a 20 s run at 100,000 (benchmarks/README.md). What it
makes is kept next to the memory dir's catalog database (``<state>/memdirs/<key>/lexical/``,
``memtui.core.places.statedir.memdir_state``; ``lexical.<format>/`` for a memory format other
than the seed agent's, as the database) and loaded when nothing it is made from changed.

**What is kept** (everything ``LexicalIndex.scores``, ``rank``, ``term_share`` and
``matched_terms`` read): the score matrix in CSC form as three numpy ``.npy`` files —
``data`` (float32, one score per (token, document) pair), ``indices`` (int32, the document of
each pair), ``indptr`` (int64, one more than the vocabulary) — and the vocabulary, its tokens
in id order joined by ``"\\n"`` as UTF-8 bytes (``vocab``, uint8; no token holds a line
break). Then a small JSON manifest, ``<fingerprint>.json``: the recipe, the number of
documents, and each array's length and CRC-32. ``.npy`` files rather than SQLite blobs: they
are mapped (``np.memmap``, read-only) instead of copied into the process, so loading costs no
memory the build did not (a blob is read whole: 28 MB at 20,000 memories), and they are
written once beside the database instead of through its WAL.

**The fingerprint** (``index_fingerprint``, 64 hex digits) covers everything the index is made
from: each document's relpath and the parts of its text (description, name, type, body head;
the glosses are a function of those and of the gloss table) in corpus order; ``RECIPE``; the
code that tokenises and builds (size and mtime of ``_CODE_MODULES``, memtui's version:
``memtui.core.memory.catalogdb.code_fingerprint``); the versions of ``bm25s`` (its stop words
and scoring) and numpy (the arithmetic); the gloss table's own fingerprint
(``memtui.core.recall.gloss.table_fingerprint``). It hashes the texts recall already holds (no
file is read, nothing is glossed): ~0.2 s at 20,000 memories against 4–8 s for the build on
the shared benchmark machine (the load of the kept files: ~0.1 s).

**Trust**: every file is opened with ``open_regular`` (a FIFO or a device in its place is
refused, never waited on) and must be exactly as long as its header and the manifest say (a
truncated or oversized file is refused); dtypes, shapes, ``indptr``'s bounds and order, every
document index and every array's CRC-32 are checked, and the vocabulary must have one distinct
token per column. Anything else — a missing, foreign, truncated or damaged file — costs a
build, never a wrong answer or a crash. Each file is written whole (``replace_file``), the
manifest last, so a reader sees a complete set or none; the file names hold the fingerprint,
so two sets never mix. Deleting the files at any time is safe (a mapped file stays readable
until the run ends). After a set is written the files of other fingerprints are removed.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import time
import zlib
from array import array
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import orjson

from memtui.core.base.replace_file import replace_file
from memtui.core.base.safe_read import open_regular, read_regular
from memtui.core.memory.catalogdb import code_fingerprint
from memtui.core.recall.docs import RecallDoc

if TYPE_CHECKING:
    from memtui.core.recall.lexical import LexicalIndex

# The layout of the kept files; bumped when it or the meaning of a file changes.
RECIPE = "lexical-index/1"
# The folder below the memory dir's state folder.
FOLDER = "lexical"
# The arrays kept, each with its dtype.
ARRAYS: dict[str, np.dtype[Any]] = {
    "data": np.dtype(np.float32),
    "indices": np.dtype(np.int32),
    "indptr": np.dtype(np.int64),
    "vocab": np.dtype(np.uint8),
}
# The modules whose code decides the tokens and the scores (below ``memtui/core``).
_CODE_MODULES = ("recall/lexical", "recall/words", "recall/gloss", "recall/docs", "recall/keptlexical")
# memtui's caps on the manifest (a few hundred bytes) and on one array file (the 20,000-memory
# benchmark workspace's largest is 13 MB, the size grows with the memories' text).
MAX_MANIFEST_BYTES = 64 * 1024
MAX_ARRAY_BYTES = 4 * 1024**3
# A temp file this old is no writer's that is still running (as for the gloss table).
STALE_TEMP_SECONDS = 600
_TEMP_PREFIX = ".lexical-"


@lru_cache(maxsize=1)
def _versions() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return f"bm25s={version('bm25s')};numpy={np.__version__}"
    except PackageNotFoundError:  # pragma: no cover - a declared dependency
        return f"bm25s=?;numpy={np.__version__}"


def index_fingerprint(docs: Sequence[RecallDoc]) -> str | None:
    """The fingerprint the index of ``docs`` (in this order) is kept under (module docstring),
    64 hex digits; ``None`` when the gloss table's version cannot be read (nothing is kept)."""
    from memtui.core.recall.gloss import table_fingerprint

    table = table_fingerprint()
    if table is None:
        return None
    digest = hashlib.sha256()
    digest.update(repr((RECIPE, code_fingerprint(_CODE_MODULES), _versions(), table, len(docs))).encode())
    # each document's parts as ``document_text`` reads them (``None`` as ""), their lengths
    # first so that no two lists of parts hash alike; one join and one encoding for all
    # (~0.2 s at 20,000 memories)
    parts = [p or "" for d in docs for p in (d.relpath, d.header.description, d.name, d.header.type, d.body_head)]
    digest.update(array("q", map(len, parts)).tobytes())
    digest.update("".join(parts).encode("utf-8", "surrogatepass"))
    return digest.hexdigest()


def _paths(folder: Path, fingerprint: str) -> dict[str, Path]:
    return {name: folder / f"{fingerprint}.{name}.npy" for name in ARRAYS} | {"manifest": folder / f"{fingerprint}.json"}


def _crc(array: np.ndarray) -> int:
    return zlib.crc32(memoryview(array).cast("B")) if array.size else 0


def _map(path: Path, dtype: np.dtype[Any], length: int) -> np.ndarray:
    """The 1-D ``.npy`` array at ``path`` mapped read-only. Raises ``ValueError`` unless it
    holds exactly ``length`` items of ``dtype`` and nothing after them, ``OSError`` for a file
    that cannot be opened or is not a regular file."""
    fh, st = open_regular(path)
    with fh:
        if st.st_size > MAX_ARRAY_BYTES:
            raise ValueError("too large")
        major, _ = np.lib.format.read_magic(fh)
        read_header = np.lib.format.read_array_header_1_0 if major == 1 else np.lib.format.read_array_header_2_0
        shape, fortran, found = read_header(fh)
        if found != dtype or shape != (length,) or fortran:
            raise ValueError("another array")
        offset = fh.tell()
        if st.st_size != offset + length * dtype.itemsize:
            raise ValueError("truncated or too long")
        if length == 0:
            return np.zeros(0, dtype=dtype)
        return np.memmap(fh, dtype=dtype, mode="r", offset=offset, shape=(length,))


def load_index(docs: Sequence[RecallDoc], folder: Path, fingerprint: str) -> LexicalIndex | None:
    """The index of ``docs`` kept in ``folder`` under ``fingerprint``, or ``None`` when there is
    none or it fails a check (module docstring). Never raises."""
    from memtui.core.recall.lexical import LexicalIndex

    paths = _paths(folder, fingerprint)
    try:
        manifest = orjson.loads(read_regular(paths["manifest"], MAX_MANIFEST_BYTES)[0])
        if not (isinstance(manifest, dict) and manifest.get("recipe") == RECIPE and manifest.get("fingerprint") == fingerprint
                and manifest.get("num_docs") == len(docs) and isinstance(lengths := manifest.get("arrays"), dict)
                and set(lengths) == set(ARRAYS)):
            return None
        arrays: dict[str, np.ndarray] = {}
        for name, dtype in ARRAYS.items():
            length, crc = lengths[name]
            if type(length) is not int or type(crc) is not int or not 0 <= length <= MAX_ARRAY_BYTES:
                return None
            arrays[name] = _map(paths[name], dtype, length)
            if _crc(arrays[name]) != crc:
                return None
        data, indices, indptr = arrays["data"], arrays["indices"], arrays["indptr"]
        if (indices.size != data.size or indptr.size < 1 or indptr[0] != 0 or indptr[-1] != data.size
                or (indptr.size > 1 and np.any(indptr[1:] < indptr[:-1]))
                or (indices.size and (indices.min() < 0 or indices.max() >= len(docs)))):
            return None
        tokens = bytes(arrays["vocab"]).decode("utf-8", "surrogatepass").split("\n") if indptr.size > 1 else []
        vocab = dict(zip(tokens, range(len(tokens))))
        if len(tokens) != indptr.size - 1 or len(vocab) != len(tokens):
            return None
    except (OSError, ValueError, TypeError, EOFError, orjson.JSONDecodeError):
        return None
    return LexicalIndex.from_matrix(docs, {"data": data, "indices": indices, "indptr": indptr, "num_docs": len(docs)}, vocab)


def keep_index(index: LexicalIndex, folder: Path, fingerprint: str) -> bool:
    """Write ``index`` to ``folder`` under ``fingerprint`` (each file whole, the manifest last),
    then remove the files of other fingerprints and stale temp files. Returns whether the set
    was written; never raises (an unwritable state dir only costs the next run a build)."""
    matrix, vocab = index.matrix()
    if matrix is None or not vocab:
        return False
    tokens = list(vocab)
    if any(vocab[t] != i for i, t in enumerate(tokens)) or any("\n" in t for t in tokens):
        return False  # (never: ids are dense in insertion order, tokens hold no line break)
    if any(np.asarray(matrix[name]).dtype != ARRAYS[name] for name in ("data", "indices", "indptr")):
        return False  # (never: a cast could change a score)
    arrays = {
        "data": np.ascontiguousarray(matrix["data"]),
        "indices": np.ascontiguousarray(matrix["indices"]),
        "indptr": np.ascontiguousarray(matrix["indptr"]),
        "vocab": np.frombuffer("\n".join(tokens).encode("utf-8", "surrogatepass"), dtype=ARRAYS["vocab"]),
    }
    manifest = {"recipe": RECIPE, "fingerprint": fingerprint, "num_docs": len(index.docs),
                "arrays": {name: [int(a.size), _crc(a)] for name, a in arrays.items()}}
    paths = _paths(folder, fingerprint)
    try:
        for name, array in arrays.items():
            replace_file(paths[name], lambda fh, a=array: np.save(fh, a, allow_pickle=False), prefix=_TEMP_PREFIX)
        replace_file(paths["manifest"], lambda fh: fh.write(orjson.dumps(manifest)), prefix=_TEMP_PREFIX)
    except (OSError, ValueError):
        return False
    _remove_others(folder, fingerprint)
    return True


def _remove_others(folder: Path, fingerprint: str) -> None:
    """Remove the kept files of other fingerprints, and temp files older than
    ``STALE_TEMP_SECONDS`` (a killed writer's)."""
    stale = time.time() - STALE_TEMP_SECONDS
    with contextlib.suppress(OSError), os.scandir(folder) as listing:
        for entry in listing:
            with contextlib.suppress(OSError):
                if entry.name.startswith(_TEMP_PREFIX):
                    if entry.stat(follow_symlinks=False).st_mtime < stale:
                        os.unlink(entry.path)
                elif not entry.name.startswith(fingerprint + ".") and not entry.is_dir(follow_symlinks=False):
                    os.unlink(entry.path)


def lexical_index(docs: Sequence[RecallDoc], folder: Path | None) -> LexicalIndex:
    """The BM25 index of ``docs``: loaded from ``folder`` when a set kept there is this
    index's (module docstring), else built and kept there. ``folder`` ``None``: built, nothing
    kept. Never raises for the kept files (a bad set costs a build)."""
    from memtui.core.recall.lexical import LexicalIndex

    fingerprint = index_fingerprint(docs) if folder is not None and docs else None
    if folder is not None and fingerprint is not None:
        loaded = load_index(docs, folder, fingerprint)
        if loaded is not None:
            return loaded
    index = LexicalIndex.build(docs)
    if folder is not None and fingerprint is not None:
        keep_index(index, folder, fingerprint)
    return index
