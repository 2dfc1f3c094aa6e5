"""Duplicate and near-duplicate memories (docs/behaviour.md §4.3), fast enough for 20,000 memories.

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

Then, on the candidates: the size filter and a bound on the word intersection (numpy, in
batches), a bound on the rapidfuzz score from the texts' character counts, the exact Jaccard, a
bound on the score from the LCS of the texts' prefixes (``_lcs_bound``; 40 % of each at the
default threshold), and rapidfuzz on the survivors (each text's words sorted once, then ``fuzz.ratio``: rapidfuzz's own definition of
``token_sort_ratio``). The bounds only drop pairs that cannot pass the checks after them, so the
result is what checking every candidate would give (``_bounded_pairs``, ``_score_bound``,
``_lcs_bound``). On the 20,000-memory benchmark workspace: 1.55 million LSH candidates → 119,000
after the word bound → 26,500 after the character bound → 24,900 with Jaccard ≥ 0.5 → 869 after
the prefix bound → 862 pairs at ≥ 85; 4.7 s of CPU (25.7 s checking every candidate with Python
sets and scoring every Jaccard pair with ``token_sort_ratio``).

What the MinHash path reads of a memory before its text — its number of distinct words, its
signature and its word bitset — is its **sketch** (``NearSketches``). The doctor and the dream
keep each memory's sketch in the catalog database (``SketchBook``), so after an edit only the
changed memory is tokenised before the join, and a memory with a kept sketch is read only when
a bound keeps one of its pairs: 109 s → 32 s for a doctor after one edit at 100,000 memories
(benchmarks/README.md).
"""

from __future__ import annotations

import hashlib
import math
import os
import re
from array import array
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, overload

from rapidfuzz import fuzz
from rapidfuzz.distance import LCSseq

from memtui.core.doctor.model import Finding, finding
from memtui.core.memory.catalogdb import CatalogDB, code_fingerprint
from memtui.core.memory.memories import Memory, with_text

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
# A band bucket holding more memories than this gives no candidates (memtui's choice): with
# common words in every text, buckets of texts sharing only those grow with the store, and their
# pairs with its square; a near-duplicate shares most bands with its twin and is found through a
# smaller bucket (same pairs as without the cap on the benchmark workspaces: benchmarks/README.md).
MINHASH_BUCKET_CAP = 64

_CJK = r"\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
# A token is a maximal run of CJK characters or of other word characters; the two classes are
# disjoint, so finding each kind on its own finds the same runs as one alternation would.
_WORD_RUN = re.compile(rf"[^\W{_CJK}]+")
_CJK_RUN = re.compile(rf"[{_CJK}]+")
# Candidate pairs per numpy batch (memtui's choice: 2 MB per gathered bitset column).
_BATCH = 1 << 13
# Bits of the per-memory word bitset that bounds the intersection (memtui's choice; a multiple
# of 64: 256 bytes a memory; with ~170 words a memory few words share a bit).
_BOUND_BITS = 2048
# memtui's choice: memories whose bitsets are built at once (4096 × 2048 bits: 8 MB of booleans
# and a word array of their words, where the whole block at once took ~130 MB at 100,000).
_BITSET_ROWS = 4096
# Character buckets of the score bound (memtui's choice): characters get buckets in the order
# they are first seen, so up to 1,024 distinct characters (the benchmark workspace has 185) each
# have their own; beyond that they share, which only loosens the bound.
_CHAR_BUCKETS = 1024
# Float slack of the score bound: a pair is dropped only when its bound is this far below the
# threshold (the bound is exact arithmetic on integers; the slack covers the division).
_SCORE_EPS = 1e-6
# The prefixes ``_lcs_bound`` compares are this much longer than the least that can show a pair
# below the threshold (a share of ``1 - threshold`` of each text; memtui's choice, measured on the
# benchmark workspace: 0.40 at threshold 85 leaves 869 of 24,900 pairs, in a quarter of the time
# of scoring them all; 0.30 leaves 7,345).
_PREFIX_MARGIN = 0.25


def _norm(text: str) -> str:
    return " ".join(text.casefold().split())


def tokens(text: str) -> frozenset[str]:
    """The word set of ``text`` (already normalised): words of letters/digits (single letters
    dropped, single digits kept); runs of CJK characters, which have no spaces, as character
    bigrams (a lone CJK character as itself)."""
    return frozenset(_token_set(text))


def _token_set(text: str) -> set[str]:
    out = set(_WORD_RUN.findall(text))
    out.difference_update([t for t in out if len(t) == 1 and not t.isdigit()])
    for run in _CJK_RUN.findall(text):
        if len(run) == 1:
            out.add(run)
        else:
            out.update(map(str.__add__, run[:-1], run[1:]))
    return out


@dataclass(frozen=True, slots=True)
class NearPair:
    """Two memories (indexes into the input) and their rapidfuzz score."""

    a: int
    b: int
    score: float


def block_of(mem: Memory) -> str:
    """The type block near-duplicates are compared within: the recognised type, else the
    declared type lower-cased, else ``untyped``."""
    return mem.type or (mem.declared_type or "").lower() or "untyped"


def near_text(mem: Memory) -> str:
    """The text near-duplicates are judged on: description + body, case-folded, whitespace
    collapsed, the first ``MAX_TEXT_CHARS`` characters."""
    return _norm(f"{mem.description or ''}\n{mem.body}")[:MAX_TEXT_CHARS]


def body_key(body: str) -> str | None:
    """What exact duplicates share: the SHA-256 of the body with whitespace collapsed
    (``None`` for a body shorter than ``MIN_BODY_CHARS``)."""
    norm = _norm(body)
    return hashlib.sha256(norm.encode("utf-8", "surrogatepass")).hexdigest() if len(norm) >= MIN_BODY_CHARS else None


class NearTexts(Sequence[str]):
    """``near_text`` of each memory, made when asked for and not kept (``near_duplicate_pairs``
    reads each once, and again only for the pairs its bounds keep): ~25 MB less at 20,000
    memories than a list of them. A memory read from the catalog database has its file read
    for the occasion, not kept (``with_text``)."""

    def __init__(self, memories: Sequence[Memory]) -> None:
        self._memories = memories

    def __len__(self) -> int:
        return len(self._memories)

    @overload
    def __getitem__(self, index: int) -> str: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[str]: ...

    def __getitem__(self, index: int | slice) -> str | Sequence[str]:
        if isinstance(index, slice):
            return [near_text(with_text(m)[0]) for m in self._memories[index]]
        return near_text(with_text(self._memories[index])[0])


class _TokenTable:
    """The word sets of all texts as integer ids (one vocabulary for all), in one flat array:
    memory ``i``'s ids are ``ids[starts[i]:starts[i + 1]]`` — 4 bytes a word: 14 MB for the
    20,000-memory benchmark workspace, where a frozenset of strings per memory took 18 KB each
    (~165 words), 360 MB in all."""

    def __init__(self, texts: Iterable[str] = ()) -> None:
        self.vocab: dict[str, int] = {}
        self.ids = array("i")
        self.starts = array("q", [0])
        for text in texts:
            self.add(text)

    def add(self, text: str) -> None:
        """The word set of the next text."""
        vocab = self.vocab
        new_id = vocab.setdefault  # an unseen word gets the next id (the size before it is added)
        self.ids.extend([new_id(t, len(vocab)) for t in _token_set(text)])
        self.starts.append(len(self.ids))

    def __len__(self) -> int:
        return len(self.starts) - 1

    def size(self, i: int) -> int:
        return self.starts[i + 1] - self.starts[i]

    def set_of(self, i: int) -> frozenset[int]:
        return frozenset(self.ids[self.starts[i] : self.starts[i + 1]])


def _prefix_candidates(ids: list[int], toks: Mapping[int, frozenset[str]], jaccard: float) -> Iterator[tuple[int, int]]:
    """Exact candidates: pairs sharing a word among the rarest ``|x| - ceil(t·|x|) + 1`` of each
    (rarest first, ties by the word: any fixed order of the words finds every such pair)."""
    df: dict[str, int] = defaultdict(int)
    for i in ids:
        for t in toks[i]:
            df[t] += 1
    key = {t: (n, t) for t, n in df.items()}
    postings: dict[int, list[int]] = defaultdict(list)
    for x in sorted(ids, key=lambda i: (len(toks[i]), i)):
        size = len(toks[x])
        seen: set[int] = set()
        for t in sorted(toks[x], key=key.__getitem__)[: size - math.ceil(jaccard * size) + 1]:
            for y in postings[t]:
                if y not in seen:
                    seen.add(y)
                    yield x, y
            postings[t].append(x)


def _word_hashes(table: _TokenTable) -> Any:
    """CRC-32 of each vocabulary word (UTF-8), masked to 31 bits: ``int32[len(vocab)]`` (the
    hashing below widens to 64 bits)."""
    import zlib

    import numpy as np

    prime = (1 << 31) - 1
    return np.fromiter((zlib.crc32(t.encode("utf-8", "surrogatepass")) & prime for t in table.vocab), dtype=np.int32, count=len(table.vocab))


def _minhash_params() -> tuple[Any, Any]:
    """The ``MINHASH_BANDS · MINHASH_ROWS`` hash functions ``(a·w + b) mod (2**31 - 1)``: ``a``
    and ``b`` as ``int64`` arrays, from the fixed seed ``MINHASH_SEED``."""
    import numpy as np

    prime = (1 << 31) - 1
    rng = np.random.RandomState(MINHASH_SEED)
    n_hashes = MINHASH_BANDS * MINHASH_ROWS
    a = rng.randint(1, prime, size=n_hashes).astype(np.int64)
    b = rng.randint(0, prime, size=n_hashes).astype(np.int64)
    return a, b


def _signatures(words: Any, lens: Any) -> Any:
    """Each memory's MinHash signature: ``uint32[n, MINHASH_BANDS · MINHASH_ROWS]``, the least
    of each hash function over its words (``words``: CRC-32 word hashes, flat; ``lens``: words
    per memory); a memory without words has zeros. Worked out ``_BITSET_ROWS`` memories at a
    time (one reused ``int64`` buffer of their words)."""
    import numpy as np

    prime = (1 << 31) - 1
    a, b = _minhash_params()
    lens = np.asarray(lens, dtype=np.int64)
    n = len(lens)
    sig = np.zeros((n, len(a)), dtype=np.uint32)  # each value < 2**31 (mod the prime)
    ends = np.cumsum(lens)
    for lo in range(0, n, _BITSET_ROWS):
        hi = min(n, lo + _BITSET_ROWS)
        first = int(ends[lo] - lens[lo])
        chunk = words[first : int(ends[hi - 1])]
        full = lens[lo:hi] > 0
        if not full.any():
            continue
        # rows without words start where the next row starts: leaving them out, each offset
        # begins a row that has words and ends where the next such row begins
        offsets = (ends[lo:hi] - lens[lo:hi] - first)[full]
        rows = np.flatnonzero(full) + lo
        buf = np.empty(chunk.shape, dtype=np.int64)
        for j in range(len(a)):  # (a·w + b) mod prime, in one reused buffer
            np.multiply(chunk, a[j], out=buf)
            buf += b[j]
            np.remainder(buf, prime, out=buf)
            sig[rows, j] = np.minimum.reduceat(buf, offsets)
    return sig


def _minhash_candidates(ids: list[int], words: Any, lens: Any) -> Any:
    """Approximate candidates for large blocks: MinHash LSH, ``MINHASH_BANDS`` bands of
    ``MINHASH_ROWS`` rows (a pair with Jaccard J is a candidate with probability
    ``1 - (1 - J**4)**16``: 0.98 at 0.7, 0.9996 at 0.8, 0.64 at 0.5), buckets of at most
    ``MINHASH_BUCKET_CAP`` memories (so at most ``n · cap / 2`` pairs a band). Deterministic: CRC-32 word
    hashes (``words``: flat, ``lens`` per memory), fixed-seed permutations. Returns the pairs
    sharing a band as positions into ``ids``: ``int64[k, 2]``, ``x < y``, sorted, unique."""
    return _band_pairs(_signatures(words, lens))


def _band_pairs(sig: Any) -> Any:
    """The pairs of memories (rows of the signatures ``sig``) sharing a band bucket of at most
    ``MINHASH_BUCKET_CAP`` memories: ``int64[k, 2]``, ``x < y``, sorted, unique."""
    import numpy as np

    n = len(sig)
    found: list[Any] = []
    for band in range(MINHASH_BANDS):
        key = np.full(n, 0xCBF29CE484222325, dtype=np.uint64)
        for col in range(band * MINHASH_ROWS, (band + 1) * MINHASH_ROWS):
            key = (key ^ sig[:, col]) * np.uint64(0x100000001B3)
        order = np.argsort(key, kind="stable")
        sorted_keys = key[order]
        starts = np.flatnonzero(np.r_[True, sorted_keys[1:] != sorted_keys[:-1]])
        sizes = np.diff(np.r_[starts, n])
        keep = (sizes > 1) & (sizes <= MINHASH_BUCKET_CAP)
        starts, sizes = starts[keep], sizes[keep]
        if not len(starts):
            continue
        # every position p of a group [s, s + g) pairs with the positions after it in the group
        first = np.repeat(starts, sizes) + _ramp(sizes)
        after = np.repeat(starts + sizes, sizes) - first - 1
        left = np.repeat(first, after)
        right = left + 1 + _ramp(after)
        x, y = order[left], order[right]
        found.append(np.minimum(x, y) * n + np.maximum(x, y))
    if not found:
        return np.empty((0, 2), dtype=np.int64)
    keys = np.concatenate(found)
    found.clear()
    keys.sort()
    keys = keys[np.r_[True, keys[1:] != keys[:-1]]]
    return np.stack([keys // n, keys % n], axis=1)


def _ramp(sizes: Any) -> Any:
    """``0, 1, …, s - 1`` for each ``s`` of ``sizes``, concatenated (``int64``)."""
    import numpy as np

    return np.arange(int(sizes.sum()), dtype=np.int64) - np.repeat(np.cumsum(sizes) - sizes, sizes)


def _bounded_pairs(pairs: Any, words: Any, lens: Any, jaccard: float) -> Any:
    """The candidate ``pairs`` (positions, as ``_minhash_candidates`` returns them) that can
    still reach the Jaccard bound ``t`` — no pair that reaches it is dropped:

    - size: ``min(|x|, |y|) ≥ t·max(|x|, |y|)`` (the check ``near_duplicate_pairs`` makes);
    - intersection: each memory's words set bit ``hash mod _BOUND_BITS`` of a bitset. A word
      both memories have sets the same bit in both, so ``|x ∩ y| ≤ popcount(bits_x & bits_y) +
      min(extra_x, extra_y)``, ``extra``: a memory's words minus its set bits (words that
      landed on an already set bit). A pair whose bound ``u`` has ``u < t·(|x| + |y| - u)``
      has a smaller Jaccard than ``t`` (the left side grows with ``u``, the right side shrinks).
    """
    return _within_bound(pairs, _bitsets(words, lens), lens, jaccard)


def _bitsets(words: Any, lens: Any) -> Any:
    """Each memory's word bitset: bit ``hash mod _BOUND_BITS`` set for each of its words
    (``words``: flat, ``lens`` per memory): ``uint64[n, _BOUND_BITS // 64]``."""
    import numpy as np

    lens = np.asarray(lens, dtype=np.int64)
    n = len(lens)
    bits = np.zeros((n, _BOUND_BITS // 64), dtype=np.uint64)
    ends = np.cumsum(lens)
    for lo in range(0, n, _BITSET_ROWS):  # a few memories at a time: the temporaries stay small
        hi = min(n, lo + _BITSET_ROWS)
        first = int(ends[lo] - lens[lo])
        dense = np.zeros((hi - lo) * _BOUND_BITS, dtype=bool)  # row-major (hi - lo) × _BOUND_BITS
        at = np.repeat(np.arange(0, (hi - lo) * _BOUND_BITS, _BOUND_BITS, dtype=np.int64), lens[lo:hi])
        at += words[first : int(ends[hi - 1])] % _BOUND_BITS
        dense[at] = True
        bits[lo:hi] = np.packbits(dense.reshape(hi - lo, _BOUND_BITS), axis=1).view(np.uint64)
    return bits


def _within_bound(pairs: Any, bits: Any, lens: Any, jaccard: float) -> Any:
    """``_bounded_pairs`` from the memories' bitsets (``_bitsets``) and word counts."""
    import numpy as np

    if not len(pairs):
        return pairs
    lens = np.asarray(lens, dtype=np.int64)
    extra = lens - _popcount(bits)
    keep: list[Any] = []
    for lo in range(0, len(pairs), _BATCH):
        x, y = pairs[lo : lo + _BATCH, 0], pairs[lo : lo + _BATCH, 1]
        sx, sy = lens[x], lens[y]
        small, large = np.minimum(sx, sy), np.maximum(sx, sy)
        ok = ~(small < jaccard * large)
        x, y, small, large = x[ok], y[ok], small[ok], large[ok]
        bound = _popcount(bits[x] & bits[y]) + np.minimum(extra[x], extra[y])
        ok = ~(bound < jaccard * (small + large - bound))
        keep.append(np.stack([x[ok], y[ok]], axis=1))
    return np.concatenate(keep)


def _popcount(bits: Any) -> Any:
    """Set bits per row of a ``uint64[n, w]`` array: ``int64[n]``."""
    import numpy as np

    return np.bitwise_count(bits).sum(axis=1, dtype=np.int64)


def _score_bound(pairs: Any, texts: Sequence[str], ids: list[int], threshold: float) -> Any:
    """The ``pairs`` (positions into ``ids``) whose ``token_sort_ratio`` can still reach
    ``threshold`` — no pair that reaches it is dropped.

    ``token_sort_ratio`` is ``ratio`` of the texts with their whitespace-split words sorted and
    joined by single spaces: ``200·LCS / (len_x + len_y)``, LCS the longest common subsequence.
    Sorting moves words, not characters, so each joined text has the characters of
    ``" ".join(text.split())``; and a common subsequence uses a character at most as often as
    either text has it, so ``LCS ≤ Σ_c min(count_x(c), count_y(c))`` (characters counted in
    ``_CHAR_BUCKETS`` buckets: a sum over buckets is ≥ the sum over characters). Pairs whose
    bound is below ``threshold - _SCORE_EPS`` (float slack) are dropped.
    """
    import numpy as np

    if not len(pairs):
        return pairs
    rows, where = np.unique(pairs, return_inverse=True)
    where = where.reshape(pairs.shape)
    length = np.zeros(len(rows), dtype=np.int64)
    bucket: dict[int, int] = {}
    per_row: list[tuple[Any, Any]] = []
    for r, p in enumerate(rows.tolist()):
        joined = " ".join(texts[ids[p]].split())
        chars, n = np.unique(np.frombuffer(joined.encode("utf-32-le", "surrogatepass"), dtype=np.uint32), return_counts=True)
        per_row.append((np.array([bucket.setdefault(c, len(bucket) % _CHAR_BUCKETS) for c in chars.tolist()], dtype=np.int64), n))
        length[r] = len(joined)
    counts = np.zeros((len(rows), _CHAR_BUCKETS), dtype=np.uint16 if int(length.max()) < 1 << 16 else np.int64)
    for r, (b, n) in enumerate(per_row):
        np.add.at(counts[r], b, n)
    del per_row
    keep: list[Any] = []
    step = max(1, (_BATCH * 64) // _CHAR_BUCKETS)
    for lo in range(0, len(pairs), step):
        x, y = where[lo : lo + step, 0], where[lo : lo + step, 1]
        common = np.minimum(counts[x], counts[y]).sum(axis=1, dtype=np.int64)
        ok = 200.0 * common / (length[x] + length[y]) >= threshold - _SCORE_EPS
        keep.append(pairs[lo : lo + step][ok])
    return np.concatenate(keep)


def _lcs_bound(a: str, b: str, share: float) -> int:
    """An upper bound on the longest common subsequence of ``a`` and ``b`` from their prefixes
    of ``share`` of each: ``LCS(a[:k], b[:m]) + max(len(a) - k, len(b) - m)``.

    Why: the characters of a common subsequence matched inside both prefixes come first in it
    (positions only grow); every other one lies in ``a[k:]`` or in ``b[m:]``, and those form its
    tail, no longer than the longer of the two rests. Costs about ``share²`` of the full LCS."""
    k, m = int(len(a) * share), int(len(b) * share)
    if k >= len(a) and m >= len(b):
        return int(LCSseq.similarity(a, b))
    return int(LCSseq.similarity(a[:k], b[:m])) + max(len(a) - k, len(b) - m)


def near_duplicate_pairs(
    texts: Sequence[str],
    blocks: Sequence[str],
    *,
    threshold: float = NEAR_DUPLICATE_THRESHOLD,
    jaccard: float = PREFILTER_JACCARD,
    sketches: NearSketches | None = None,
) -> list[NearPair]:
    """All pairs ``(a < b)`` in the same block scoring ≥ ``threshold`` (see the module doc).

    ``texts``: normalised ``description + body`` per memory; each is read once to tokenise,
    then again only for the pairs the bounds keep — a lazy sequence keeps memory low.
    ``blocks``: the block key per memory. Blocks up to ``EXACT_BLOCK_MAX`` memories use the
    exact prefix filter (plain Python: a small store does not pay numpy's import), larger ones
    MinHash LSH and the numpy bounds. ``sketches``: the texts' sketches when the caller has
    them (``SketchBook``: kept in the catalog database); then a text is read only in a small
    block or for a pair the bounds keep.
    """
    if sketches is None:
        sketches = sketches_of(_TokenTable(texts))
    sizes = sketches.sizes
    size_array: Any = None
    by_block: dict[str, list[int]] = defaultdict(list)
    for i, block in enumerate(blocks):
        if sizes[i] >= MIN_TOKENS:
            by_block[block].append(i)
    share = min(1.0, 1.0 - threshold / 100 + _PREFIX_MARGIN)
    pairs: list[NearPair] = []
    # token_sort_ratio is ratio of the texts with their words sorted (rapidfuzz's definition):
    # each text is sorted once, not once per pair
    sorted_text: dict[int, str] = {}

    def words(i: int) -> frozenset[int]:
        """Memory ``i``'s word set as word ids (its text tokenised now when its sketch was
        kept: one reading gives its words and its sorted text)."""
        found = sketches.word_ids(i)
        if found is None:
            text = texts[i]
            sorted_text[i] = " ".join(sorted(text.split()))
            found = sketches.add_words(i, text)
        return found

    def check(x: int, y: int, sx: frozenset[int], sy: frozenset[int]) -> None:
        small, large = sorted((len(sx), len(sy)))
        if small < jaccard * large:
            return  # size filter: cannot reach the Jaccard bound
        inter = len(sx & sy)
        if inter < jaccard * (small + large - inter):
            return
        for i in (x, y):
            if i not in sorted_text:
                sorted_text[i] = " ".join(sorted(texts[i].split()))
        sa, sb = sorted_text[x], sorted_text[y]
        if 200.0 * _lcs_bound(sa, sb, share) / (len(sa) + len(sb)) < threshold - _SCORE_EPS:
            return  # cannot reach the threshold (``_lcs_bound``)
        score = fuzz.ratio(sa, sb, score_cutoff=threshold)
        if score >= threshold:
            pairs.append(NearPair(min(x, y), max(x, y), score))

    for block in sorted(by_block):
        ids = by_block[block]
        sorted_text.clear()
        if len(ids) <= EXACT_BLOCK_MAX:
            toks = {i: words(i) for i in ids}
            for x, y in _prefix_candidates(ids, toks, jaccard):
                check(x, y, toks[x], toks[y])
            continue
        import numpy as np

        sig, bits = sketches.arrays()
        if size_array is None:
            size_array = np.asarray(sizes, dtype=np.int64)
        rows = np.asarray(ids, dtype=np.int64)
        candidates = _band_pairs(sig[rows])
        candidates = _within_bound(candidates, bits[rows], size_array[rows], jaccard)
        candidates = _score_bound(candidates, texts, ids, threshold)
        last, sx = -1, frozenset[int]()
        for px, py in candidates.tolist():  # sorted: the pairs of one x come together
            x, y = ids[px], ids[py]
            if x != last:
                last, sx = x, words(x)
            check(x, y, sx, words(y))
    pairs.sort(key=lambda p: (p.a, p.b))
    return pairs


class NearSketches:
    """What the near-duplicate join reads of each memory before its text (in input order):
    ``sizes`` (distinct words per memory) and, made when a block is large enough to need them
    (``arrays()``: numpy, which a small store never imports), each memory's MinHash signature
    (``uint32[n, 64]``) and the word bitset of the intersection bound
    (``uint64[n, _BOUND_BITS // 64]``)."""

    __slots__ = ("_arrays", "_make", "_rows", "_table", "sizes")

    def __init__(self, sizes: list[int], make: Callable[[], tuple[Any, Any]], table: _TokenTable,
                 rows: dict[int, int] | None = None) -> None:
        self.sizes = sizes
        self._make: Callable[[], tuple[Any, Any]] | None = make
        self._arrays: tuple[Any, Any] | None = None
        self._table = table  # the words of the memories tokenised in this run, one vocabulary
        self._rows = rows  # memory -> its row of ``table`` (``None``: every memory, same number)

    def word_ids(self, i: int) -> frozenset[int] | None:
        """Memory ``i``'s word set as word ids when it was tokenised in this run, else ``None``."""
        if self._rows is None:
            return self._table.set_of(i)
        row = self._rows.get(i)
        return None if row is None else self._table.set_of(row)

    def add_words(self, i: int, text: str) -> frozenset[int]:
        """Tokenise memory ``i``'s ``text`` (its sketch was kept) into the same vocabulary;
        its word set as word ids."""
        assert self._rows is not None
        self._rows[i] = len(self._table)
        self._table.add(text)
        return self._table.set_of(self._rows[i])

    def arrays(self) -> tuple[Any, Any]:
        """``(signatures, bitsets)``."""
        if self._arrays is None:
            assert self._make is not None
            self._arrays, self._make = self._make(), None
        return self._arrays


def sketches_of(table: _TokenTable) -> NearSketches:
    """The sketches of the texts of ``table``."""

    def make() -> tuple[Any, Any]:
        import numpy as np

        words = _word_hashes(table)[np.frombuffer(table.ids, dtype=np.int32)]
        lens = np.diff(np.frombuffer(table.starts, dtype=np.int64))
        return _signatures(words, lens), _bitsets(words, lens)

    return NearSketches([table.size(i) for i in range(len(table))], make, table)


# One kept sketch, little-endian: the distinct words (int64), the signature (uint32 each), the
# bitset (uint64 each).
_SIG_WIDTH = MINHASH_BANDS * MINHASH_ROWS
_SKETCH_BYTES = 8 + 4 * _SIG_WIDTH + _BOUND_BITS // 8
# The catalog database's kind for a memory's kept sketch.
SKETCH_KIND = "near-sketch"


class SketchBook:
    """The memories' near-duplicate sketches, each from the catalog database when the memory's
    bytes did not change (``CatalogDB.derived``, kind ``SKETCH_KIND``, 520 bytes a memory),
    else from its text: a run after one memory changed reads one text, not every text, before
    the join. Fill it in memory order: ``needs_text(relpath, key)`` tells whether ``add`` must
    be given the memory's ``near_text``; ``finish()`` returns the sketches and keeps the new
    ones."""

    def __init__(self, db: CatalogDB | None) -> None:
        self._db = db
        self._fp = code_fingerprint(_NEAR_MODULES)
        self._stored = db.derived(SKETCH_KIND, self._fp) if db is not None else {}
        self._kept: list[bytes | None] = []  # per memory: its kept sketch, or None (made from the text)
        self._table = _TokenTable()
        self._fresh: list[tuple[int, str, str | None]] = []  # (position, relpath, key to keep it under)

    def needs_text(self, relpath: str, key: str | None) -> bool:
        """Whether the memory ``relpath`` (row key ``key``) has no kept sketch to use."""
        hit = self._stored.get(relpath)
        return key is None or hit is None or hit[0] != key or len(hit[1]) != _SKETCH_BYTES

    def add(self, relpath: str, key: str | None, text: str | None, *, keep: bool) -> None:
        """The next memory: ``text`` its ``near_text`` (``None`` when ``needs_text`` said no);
        ``keep``: its sketch may be kept under ``key`` (the text is the bytes the row
        describes)."""
        if text is None:
            self._kept.append(self._stored[relpath][1])
            return
        self._fresh.append((len(self._kept), relpath, key if keep else None))
        self._kept.append(None)
        self._table.add(text)

    def finish(self) -> NearSketches:
        """Every memory's sketch, in the order added; the new ones are kept when the arrays are
        made (a small store, which never needs them, keeps none and imports no numpy)."""
        blobs, fresh, table, db, fp = self._kept, self._fresh, self._table, self._db, self._fp
        self._kept, self._fresh, self._stored, self._table = [], [], {}, _TokenTable()
        sizes = [int.from_bytes(blob[:8], "little", signed=True) if blob is not None else 0 for blob in blobs]
        for k, (pos, _rel, _key) in enumerate(fresh):
            sizes[pos] = table.size(k)

        def make() -> tuple[Any, Any]:
            import numpy as np

            n = len(blobs)
            sig = np.zeros((n, _SIG_WIDTH), dtype=np.uint32)
            bits = np.zeros((n, _BOUND_BITS // 64), dtype=np.uint64)
            kept = [i for i, blob in enumerate(blobs) if blob is not None]
            if kept:
                raw = np.frombuffer(b"".join([blobs[i] or b"" for i in kept]), dtype=np.uint8).reshape(len(kept), _SKETCH_BYTES)
                rows = np.asarray(kept, dtype=np.int64)
                sig[rows] = raw[:, 8 : 8 + 4 * _SIG_WIDTH].copy().view("<u4")
                bits[rows] = raw[:, 8 + 4 * _SIG_WIDTH :].copy().view("<u8")
                del raw
            blobs.clear()
            if fresh:
                # the fresh memories are the table's first rows (the join may add others later)
                made_sig, made_bits = sketches_of(table).arrays()
                rows = np.asarray([pos for pos, _rel, _key in fresh], dtype=np.int64)
                sig[rows], bits[rows] = made_sig[: len(fresh)], made_bits[: len(fresh)]
                if db is not None:
                    new = {rel: (key, sizes[pos].to_bytes(8, "little", signed=True) + sig[pos].astype("<u4").tobytes() + bits[pos].astype("<u8").tobytes())
                           for pos, rel, key in fresh if key is not None}
                    if new:
                        db.put_derived(SKETCH_KIND, fp, new)
            return sig, bits

        return NearSketches(sizes, make, table, {pos: k for k, (pos, _rel, _key) in enumerate(fresh)})


# The code a stored near-duplicate result depends on (a change to it recomputes).
_NEAR_MODULES = ("doctor/duplicates",)


def near_pairs_fingerprint(memories: Sequence[Memory], blocks: Sequence[str], threshold: float, jaccard: float = PREFILTER_JACCARD) -> str:
    """What a near-duplicate result depends on: the code, the thresholds, and each memory's
    relpath, bytes (``sha256``) and block, in order."""
    digest = hashlib.sha256(f"{code_fingerprint(_NEAR_MODULES)}\0{threshold!r}\0{jaccard!r}\0{EXACT_BLOCK_MAX}\n".encode())
    for mem, block in zip(memories, blocks, strict=True):
        digest.update(f"{mem.relpath}\0{mem.sha256}\0{block}\n".encode("utf-8", "surrogatepass"))
    return digest.hexdigest()


def stored_near_pairs(cache: CatalogDB | None, kind: str, fingerprint: str) -> list[NearPair] | None:
    """The pairs stored in ``cache`` as ``kind`` under ``fingerprint``, or ``None``."""
    import orjson

    blob = cache.result(kind, fingerprint) if cache is not None else None
    if blob is None:
        return None
    try:
        raw = orjson.loads(blob)
        pairs = [NearPair(int(a), int(b), float(score)) for a, b, score in raw]
    except (orjson.JSONDecodeError, TypeError, ValueError):
        return None
    return pairs


def store_near_pairs(cache: CatalogDB | None, kind: str, fingerprint: str, pairs: Sequence[NearPair]) -> None:
    """Keep ``pairs`` in ``cache`` as ``kind`` under ``fingerprint``."""
    import orjson

    if cache is not None:
        cache.put_result(kind, fingerprint, orjson.dumps([[p.a, p.b, p.score] for p in pairs]))


def duplicate_findings(
    memories: Sequence[Memory],
    *,
    threshold: float = NEAR_DUPLICATE_THRESHOLD,
    body_keys: Sequence[str | None] | None = None,
    pairs: Sequence[NearPair] | None = None,
) -> list[Finding]:
    """``duplicate`` and ``near-duplicate`` findings, one per memory that has any, naming the
    others (``data["others"]``: relpaths; near-duplicates also ``data["scores"]``).
    ``body_keys``: ``body_key`` of each memory and ``pairs``: its near-duplicate pairs, when
    the caller has them (else made here from the texts)."""
    out: list[Finding] = []
    groups: dict[str, list[int]] = defaultdict(list)
    for i, mem in enumerate(memories):
        key = body_keys[i] if body_keys is not None else body_key(with_text(mem)[0].body)
        if key is not None:
            groups[key].append(i)
    exact: dict[int, list[int]] = {}
    for members in groups.values():
        if len(members) > 1:
            for i in members:
                exact[i] = [j for j in members if j != i]
    real = {i: os.path.realpath(memories[i].file) for i in exact}  # a memory and a link to it are one file
    for i, others in sorted(exact.items()):
        names = sorted(memories[j].relpath for j in others if real[j] != real[i])
        aliases = sorted(memories[j].relpath for j in others if real[j] == real[i])
        if names:
            listed = ", ".join(names[:MAX_LISTED]) + (f" and {len(names) - MAX_LISTED} more" if len(names) > MAX_LISTED else "")
            out.append(finding("duplicate", memories[i].relpath, None, f"the same body as {listed}: keep one (merge what differs)", others=names))
        elif aliases and os.path.islink(memories[i].file):
            out.append(
                finding(
                    "duplicate",
                    memories[i].relpath,
                    None,
                    f"a link to {aliases[0]}: one file the agent lists twice, under two names (nothing to merge; remove the link if one name is enough)",
                    others=aliases,
                )
            )

    if pairs is None:
        pairs = near_duplicate_pairs(NearTexts(memories), [block_of(mem) for mem in memories], threshold=threshold)
    near: dict[int, list[tuple[str, float]]] = defaultdict(list)
    for pair in pairs:
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
