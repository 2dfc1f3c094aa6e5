"""Embeddings of a corpus, cached per memory so that a second launch embeds only what changed.

A memory's embedding is kept under the memory's relpath with the key of the bytes it was made
from — ``(st_mtime_ns, st_size, st_ino, st_ctime_ns)``, the catalog database's key and invalidation
(any write to a file changes its ctime) — and the whole set under a fingerprint of the model and
of the text recipe (``fingerprint``): another model or recipe starts afresh. Like the catalog database,
a file modified within ``RACY_SECONDS`` of being read is embedded again next time (git's racy
rule).

The cache sits behind ``VectorStore`` (``load`` / ``save`` of ``{relpath: (key text, bytes)}``
under a kind and a fingerprint — the shape of the catalog database's per-memory derived data),
so it can move into that database; ``FileVectorStore`` keeps it as one ``.npz`` file in memtui's
state dir for the memory dir (never in the memory dir). It is only a cache: a missing, damaged or
foreign file is ignored and rewritten; a failed write is silent.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Protocol

import numpy as np

from memtui.core.base.replace_file import replace_file
from memtui.core.memory.catalogdb import RACY_SECONDS
from memtui.core.places.statedir import memdir_state
from memtui.core.recall.docs import RecallDoc
from memtui.core.recall.embedding import StaticModel
from memtui.core.recall.gloss import gloss_text, table_fingerprint
from memtui.core.recall.lexical import document_text

# The kind of derived data, and the file of ``FileVectorStore``.
KIND = "embedding"
FILE_NAME = "embeddings.npz"
# Stored as float16 (half the size; cosine similarities move by < 0.001).
STORE_DTYPE = np.float16


class VectorStore(Protocol):
    """Per-memory derived data: ``{relpath: (key text, value bytes)}`` under a ``kind`` and a
    ``fingerprint``."""

    def load(self, kind: str, fingerprint: str) -> dict[str, tuple[str, bytes]]:
        """What was saved under ``kind`` and ``fingerprint`` (empty when nothing or something
        else was). Never raises."""
        ...

    def save(self, kind: str, fingerprint: str, values: Mapping[str, tuple[str, bytes]]) -> None:
        """Keep ``values`` (all of them: what is not in it is dropped). Never raises."""
        ...


def key_text(key: tuple[int, int, int, int]) -> str:
    """The text form of a stat key: ``mtime_ns:size:ino:ctime_ns``."""
    return ":".join(map(str, key))


def is_racy(key: tuple[int, int, int, int], now: float | None = None) -> bool:
    """True when the file's mtime or ctime is within ``RACY_SECONDS`` of ``now`` (or later):
    a second write in the same clock tick could keep the key, so it is not cached."""
    limit = ((time.time() if now is None else now) - RACY_SECONDS) * 1e9
    return key[0] >= limit or key[3] >= limit


@dataclass
class FileVectorStore:
    """``VectorStore`` as one ``.npz`` file (no pickle: loading it runs no code) at ``path``."""

    path: Path

    @classmethod
    def for_memory_dir(cls, state_dir: Path, memory_dir: Path) -> FileVectorStore:
        """The store of ``memory_dir`` in memtui's state dir ``state_dir``."""
        return cls(memdir_state(state_dir, memory_dir) / FILE_NAME)

    def load(self, kind: str, fingerprint: str) -> dict[str, tuple[str, bytes]]:
        """See ``VectorStore.load``."""
        try:
            with np.load(self.path, allow_pickle=False) as z:
                if str(z["kind"]) != kind or str(z["fingerprint"]) != fingerprint:
                    return {}
                paths, keys, values = z["paths"], z["keys"], z["values"]
                if not (len(paths) == len(keys) == len(values)):
                    return {}
                return {str(p): (str(k), v.tobytes()) for p, k, v in zip(paths.tolist(), keys.tolist(), values, strict=True)}
        except (OSError, ValueError, KeyError, TypeError, EOFError):
            return {}
        except Exception:  # noqa: BLE001 - a damaged zip raises zipfile's own errors: only a cache
            return {}

    def save(self, kind: str, fingerprint: str, values: Mapping[str, tuple[str, bytes]]) -> None:
        """See ``VectorStore.save``: written to a temp file next to it, then renamed over."""
        sizes = {len(v) for _, v in values.values()}
        if len(sizes) > 1:
            return
        width = sizes.pop() if sizes else 0
        paths = list(values)
        matrix = np.frombuffer(b"".join(values[p][1] for p in paths), dtype=np.uint8).reshape(len(paths), width)
        def write(fh: BinaryIO) -> None:
            np.savez(fh, kind=np.str_(kind), fingerprint=np.str_(fingerprint), paths=np.array(paths, dtype=str),
                     keys=np.array([values[p][0] for p in paths], dtype=str), values=matrix)

        with contextlib.suppress(OSError):
            replace_file(self.path, write, prefix=".embeddings-")


@dataclass(frozen=True, slots=True)
class EmbeddedCorpus:
    """The embeddings of a list of docs: ``vectors`` (one unit float32 row per doc, same
    order), ``embedded`` (how many were computed now) and ``cached`` (how many came from the
    store)."""

    vectors: np.ndarray
    embedded: int
    cached: int


def embed_docs(
    docs: Sequence[RecallDoc],
    embed: Callable[[Sequence[str]], np.ndarray],
    dimensions: int,
    text: Callable[[RecallDoc], str],
    fingerprint: str,
    store: VectorStore | None = None,
    *,
    now: float | None = None,
) -> EmbeddedCorpus:
    """Embed ``docs`` (``embed`` of ``text(doc)``: unit rows of ``dimensions`` floats), reusing
    what ``store`` holds under ``fingerprint`` for docs whose key is unchanged, and saving the
    result when anything changed (a doc without a key, or with a racy one, is embedded every
    time and not saved)."""
    cached = store.load(KIND, fingerprint) if store is not None else {}
    width = dimensions * np.dtype(STORE_DTYPE).itemsize
    vectors = np.zeros((len(docs), dimensions), dtype=np.float32)
    keys = [key_text(d.key) if d.key is not None else None for d in docs]
    missing: list[int] = []
    for i, (d, k) in enumerate(zip(docs, keys, strict=True)):
        hit = cached.get(d.relpath)
        if k is not None and hit is not None and hit[0] == k and len(hit[1]) == width:
            vectors[i] = np.frombuffer(hit[1], dtype=STORE_DTYPE)
        else:
            missing.append(i)
    if missing:
        vectors[missing] = embed([text(docs[i]) for i in missing])
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    np.divide(vectors, norms, out=vectors, where=norms > 0)
    if store is not None and (missing or len(cached) != len(docs)):
        half = vectors.astype(STORE_DTYPE)
        keep = {
            d.relpath: (k, half[i].tobytes())
            for i, (d, k) in enumerate(zip(docs, keys, strict=True))
            if d.key is not None and k is not None and not is_racy(d.key, now)
        }
        store.save(KIND, fingerprint, keep)
    return EmbeddedCorpus(vectors, len(missing), len(docs) - len(missing))


# The recipe of the text embedded for a memory (``memtui.core.recall.lexical.document_text`` over
# ``BODY_HEAD_CHARS`` of body, glosses as plain words): part of the fingerprint with the gloss
# table's (``memtui.core.recall.gloss.table_fingerprint``), bumped when the recipe changes.
TEXT_RECIPE = "document_text/3"


def _embedded_text(doc: RecallDoc) -> str:
    return document_text(doc, marked=False)


@dataclass(frozen=True, slots=True)
class DenseIndex:
    """The embeddings of a fixed list of docs (same order) under ``model``; ``embedded`` /
    ``cached``: how many were computed when it was built / came from the store."""

    docs: tuple[RecallDoc, ...]
    vectors: np.ndarray
    model: StaticModel
    embedded: int
    cached: int

    @classmethod
    def build(cls, docs: Sequence[RecallDoc], model: StaticModel, store: VectorStore | None = None, recipe: str = "") -> DenseIndex:
        """Embed ``docs`` with ``model`` through the cache ``store`` (see ``embed_docs``);
        ``recipe``: what else decides the text (part of the fingerprint)."""
        fingerprint = f"{model.model_id};{TEXT_RECIPE};glosses {table_fingerprint()};{recipe}"
        done = embed_docs(docs, model.embed, model.dimensions, _embedded_text, fingerprint, store)
        return cls(tuple(docs), done.vectors, model, done.embedded, done.cached)

    def similarities(self, query: str) -> np.ndarray:
        """The cosine similarity of ``query`` to every doc (float32, aligned with ``docs``)."""
        if not self.docs:
            return np.zeros(0, dtype=np.float32)
        glossed = gloss_text(query)
        q = self.model.embed([f"{query}\n{glossed}" if glossed else query])[0]
        result: np.ndarray = self.vectors @ q
        return result
