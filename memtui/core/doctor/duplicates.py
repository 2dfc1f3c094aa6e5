"""Duplicate and near-duplicate memories (SPEC §4.3), fast enough for 20,000 memories.

- **Duplicate**: the same body after whitespace is collapsed (bodies shorter than
  ``MIN_BODY_CHARS`` are not compared: "TODO" twice is not a duplicate memory).
- **Near-duplicate**: two memories of the same type (the recognised type, else the declared one
  lower-cased, else "untyped") whose ``description + body`` — case-folded, whitespace collapsed,
  first ``MAX_TEXT_CHARS`` characters — score at least ``NEAR_DUPLICATE_THRESHOLD`` with
  ``rapidfuzz.fuzz.token_sort_ratio`` (0–100: the edit similarity of the texts with their words
  sorted, so reordered sentences still match).

Comparing every pair is O(n²) full-text comparisons — minutes at 20,000 memories. Only pairs
whose word sets have Jaccard similarity ≥ ``PREFILTER_JACCARD`` are scored (a documented part of
the definition: a pair with less word overlap is not reported, whatever its character score).
Candidates for that bound come from, per type block:

- up to ``EXACT_BLOCK_MAX`` memories: a **token-set prefix filter** (the AllPairs set-similarity
  join, exact): a pair with Jaccard ≥ t shares a word among the rarest ``|x| - ceil(t·|x|) + 1``
  words of each;
- larger blocks: **MinHash LSH** (64 hashes, 16 bands of 4 rows), linear in the number of
  memories but approximate: a pair with Jaccard 0.7 is found with probability 0.98, 0.8 → 0.9996.

Then the size filter, the exact Jaccard, and rapidfuzz on the survivors.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections import defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from rapidfuzz import fuzz

from memtui.core.doctor.model import Finding, finding
from memtui.core.memories import Memory

NEAR_DUPLICATE_THRESHOLD = 85.0
PREFILTER_JACCARD = 0.5
MIN_BODY_CHARS = 20
MAX_TEXT_CHARS = 2000
MIN_TOKENS = 4  # fewer distinct words: too short to call a near-duplicate
MAX_LISTED = 5  # others named in one finding's message
# Blocks larger than this switch from the exact prefix filter (whose candidate count grows about
# quadratically with common vocabulary) to MinHash LSH; measured in benchmarks/README.md.
EXACT_BLOCK_MAX = 2000
MINHASH_BANDS = 16
MINHASH_ROWS = 4
MINHASH_SEED = 20260302

_CJK = r"\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
_TOKEN = re.compile(rf"[{_CJK}]+|[^\W{_CJK}]+")
_CJK_RUN = re.compile(rf"^[{_CJK}]+$")


def _norm(text: str) -> str:
    return " ".join(text.casefold().split())


def tokens(text: str) -> frozenset[str]:
    """The word set of ``text`` (already normalised): words of letters/digits; runs of CJK
    characters, which have no spaces, as character bigrams."""
    out: set[str] = set()
    for tok in _TOKEN.findall(text):
        if _CJK_RUN.match(tok):
            out.update(tok[i : i + 2] for i in range(max(1, len(tok) - 1)))
        elif len(tok) > 1 or tok.isdigit():
            out.add(tok)
    return frozenset(out)


@dataclass(frozen=True, slots=True)
class NearPair:
    """Two memories (indexes into the input) and their rapidfuzz score."""

    a: int
    b: int
    score: float


def _block_of(mem: Memory) -> str:
    return mem.type or (mem.declared_type or "").lower() or "untyped"


def _prefix_candidates(ids: list[int], toks: list[frozenset[str]], jaccard: float) -> Iterator[tuple[int, int]]:
    """Exact candidates: pairs sharing a word among the rarest ``|x| - ceil(t·|x|) + 1`` of each."""
    df: dict[str, int] = defaultdict(int)
    for i in ids:
        for t in toks[i]:
            df[t] += 1
    key = {t: (n, t) for t, n in df.items()}
    postings: dict[str, list[int]] = defaultdict(list)
    for x in sorted(ids, key=lambda i: (len(toks[i]), i)):
        size = len(toks[x])
        seen: set[int] = set()
        for t in sorted(toks[x], key=key.__getitem__)[: size - math.ceil(jaccard * size) + 1]:
            for y in postings[t]:
                if y not in seen:
                    seen.add(y)
                    yield x, y
            postings[t].append(x)


def _minhash_candidates(ids: list[int], toks: list[frozenset[str]]) -> Iterator[tuple[int, int]]:
    """Approximate candidates for large blocks: MinHash LSH, ``MINHASH_BANDS`` bands of
    ``MINHASH_ROWS`` rows (a pair with Jaccard J is a candidate with probability
    ``1 - (1 - J**4)**16``: 0.98 at 0.7, 0.9996 at 0.8, 0.64 at 0.5). Deterministic: CRC-32 word
    hashes, fixed-seed permutations."""
    import zlib

    import numpy as np

    prime = (1 << 31) - 1
    rng = np.random.RandomState(MINHASH_SEED)
    n_hashes = MINHASH_BANDS * MINHASH_ROWS
    a = rng.randint(1, prime, size=n_hashes).astype(np.int64)
    b = rng.randint(0, prime, size=n_hashes).astype(np.int64)
    lens = np.array([len(toks[i]) for i in ids], dtype=np.int64)
    offsets = np.concatenate([[0], np.cumsum(lens)[:-1]])
    words = np.fromiter((zlib.crc32(t.encode("utf-8", "surrogatepass")) & prime for i in ids for t in toks[i]), dtype=np.int64, count=int(lens.sum()))
    sig = np.empty((len(ids), n_hashes), dtype=np.uint64)
    for j in range(n_hashes):
        sig[:, j] = np.minimum.reduceat((a[j] * words + b[j]) % prime, offsets)
    emitted: set[tuple[int, int]] = set()
    for band in range(MINHASH_BANDS):
        key = np.full(len(ids), 0xCBF29CE484222325, dtype=np.uint64)
        for col in range(band * MINHASH_ROWS, (band + 1) * MINHASH_ROWS):
            key = (key ^ sig[:, col]) * np.uint64(0x100000001B3)
        order = np.argsort(key, kind="stable")
        sorted_keys = key[order]
        starts = np.flatnonzero(np.r_[True, sorted_keys[1:] != sorted_keys[:-1]])
        ends = np.r_[starts[1:], len(ids)]
        for s0, e0 in zip(starts[ends - starts > 1].tolist(), ends[ends - starts > 1].tolist(), strict=True):
            group = sorted(ids[k] for k in order[s0:e0].tolist())
            for gi, x in enumerate(group):
                for y in group[gi + 1 :]:
                    if (x, y) not in emitted:
                        emitted.add((x, y))
                        yield x, y


def near_duplicate_pairs(texts: Sequence[str], blocks: Sequence[str], *, threshold: float = NEAR_DUPLICATE_THRESHOLD, jaccard: float = PREFILTER_JACCARD) -> list[NearPair]:
    """All pairs ``(a < b)`` in the same block scoring ≥ ``threshold`` (see the module doc).

    ``texts``: normalised ``description + body`` per memory; ``blocks``: the block key per memory.
    Blocks up to ``EXACT_BLOCK_MAX`` memories use the exact prefix filter, larger ones MinHash LSH.
    """
    toks = [tokens(t) for t in texts]
    by_block: dict[str, list[int]] = defaultdict(list)
    for i, block in enumerate(blocks):
        if len(toks[i]) >= MIN_TOKENS:
            by_block[block].append(i)
    pairs: list[NearPair] = []
    for block in sorted(by_block):
        ids = by_block[block]
        candidates = _prefix_candidates(ids, toks, jaccard) if len(ids) <= EXACT_BLOCK_MAX else _minhash_candidates(ids, toks)
        for x, y in candidates:
            small, large = sorted((len(toks[x]), len(toks[y])))
            if small < jaccard * large:
                continue  # size filter: cannot reach the Jaccard bound
            inter = len(toks[x] & toks[y])
            if inter < jaccard * (small + large - inter):
                continue
            score = fuzz.token_sort_ratio(texts[x], texts[y], score_cutoff=threshold)
            if score >= threshold:
                pairs.append(NearPair(min(x, y), max(x, y), score))
    pairs.sort(key=lambda p: (p.a, p.b))
    return pairs


def duplicate_findings(memories: Sequence[Memory], *, threshold: float = NEAR_DUPLICATE_THRESHOLD) -> list[Finding]:
    """``duplicate`` and ``near-duplicate`` findings, one per memory that has any, naming the
    others (``data["others"]``: relpaths; near-duplicates also ``data["scores"]``)."""
    out: list[Finding] = []
    groups: dict[str, list[int]] = defaultdict(list)
    for i, mem in enumerate(memories):
        body = _norm(mem.body)
        if len(body) >= MIN_BODY_CHARS:
            groups[hashlib.sha256(body.encode("utf-8", "surrogatepass")).hexdigest()].append(i)
    exact: dict[int, list[int]] = {}
    for members in groups.values():
        if len(members) > 1:
            for i in members:
                exact[i] = [j for j in members if j != i]
    for i, others in sorted(exact.items()):
        names = sorted(memories[j].relpath for j in others)
        listed = ", ".join(names[:MAX_LISTED]) + (f" and {len(names) - MAX_LISTED} more" if len(names) > MAX_LISTED else "")
        out.append(finding("duplicate", memories[i].relpath, None, f"the same body as {listed}: keep one (merge what differs)", others=names))

    texts = [_norm(f"{mem.description or ''}\n{mem.body}")[:MAX_TEXT_CHARS] for mem in memories]
    blocks = [_block_of(mem) for mem in memories]
    near: dict[int, list[tuple[str, float]]] = defaultdict(list)
    for pair in near_duplicate_pairs(texts, blocks, threshold=threshold):
        if exact.get(pair.a) and pair.b in exact[pair.a]:
            continue  # already an exact duplicate
        near[pair.a].append((memories[pair.b].relpath, pair.score))
        near[pair.b].append((memories[pair.a].relpath, pair.score))
    for i, scored in sorted(near.items()):
        scored.sort(key=lambda o: (-o[1], o[0]))
        listed = ", ".join(f"{p} ({s:.0f}%)" for p, s in scored[:MAX_LISTED])
        if len(scored) > MAX_LISTED:
            listed += f" and {len(scored) - MAX_LISTED} more"
        out.append(
            finding(
                "near-duplicate",
                memories[i].relpath,
                None,
                f"nearly the same as {listed} (same type, description + body): merge them so recall picks one",
                others=[p for p, _ in scored],
                scores=[round(s, 1) for _, s in scored],
            )
        )
    return out
