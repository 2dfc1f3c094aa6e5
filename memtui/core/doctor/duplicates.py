"""Duplicate and near-duplicate memories (SPEC §4.3), fast enough for 20,000 memories.

- **Duplicate**: the same body after whitespace is collapsed (bodies shorter than
  ``MIN_BODY_CHARS`` are not compared: "TODO" twice is not a duplicate memory).
- **Near-duplicate**: two memories of the same type (the recognised type, else the declared one
  lower-cased, else "untyped") whose ``description + body`` — case-folded, whitespace collapsed,
  first ``MAX_TEXT_CHARS`` characters — score at least ``NEAR_DUPLICATE_THRESHOLD`` with
  ``rapidfuzz.fuzz.token_sort_ratio`` (0–100: the edit similarity of the texts with their words
  sorted, so reordered sentences still match).

Comparing every pair is O(n²) full-text comparisons — minutes at 20,000 memories. Candidates
come from a **token-set prefix filter** instead (the AllPairs set-similarity join): a pair whose
word sets have Jaccard similarity ≥ ``PREFILTER_JACCARD`` must share a word among the rarest
``|x| - ceil(t·|x|) + 1`` words of each, so only pairs sharing a rare word are looked at, then
the size filter and the exact Jaccard, and only the survivors are scored with rapidfuzz. The
prefilter is a documented part of the definition: a pair with less word overlap than that is
not reported, whatever its character-level score.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections import defaultdict
from collections.abc import Sequence
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


def near_duplicate_pairs(texts: Sequence[str], blocks: Sequence[str], *, threshold: float = NEAR_DUPLICATE_THRESHOLD, jaccard: float = PREFILTER_JACCARD) -> list[NearPair]:
    """All pairs ``(a < b)`` in the same block scoring ≥ ``threshold`` (see the module doc).

    ``texts``: normalised ``description + body`` per memory; ``blocks``: the block key per memory.
    """
    toks = [tokens(t) for t in texts]
    df: dict[str, int] = defaultdict(int)
    for ts in toks:
        for t in ts:
            df[t] += 1
    order = {t: (n, t) for t, n in df.items()}
    # Each memory's words, rarest first; memories processed smallest set first (size filter).
    ranked = [sorted(ts, key=order.__getitem__) for ts in toks]
    ids = sorted((i for i, ts in enumerate(toks) if len(ts) >= MIN_TOKENS), key=lambda i: (len(toks[i]), i))
    postings: dict[tuple[str, str], list[int]] = defaultdict(list)
    pairs: list[NearPair] = []
    for x in ids:
        size = len(toks[x])
        prefix = ranked[x][: size - math.ceil(jaccard * size) + 1]
        seen: set[int] = set()
        block = blocks[x]
        for t in prefix:
            for y in postings[(block, t)]:
                if y in seen:
                    continue
                seen.add(y)
                if len(toks[y]) < jaccard * size:
                    continue  # size filter: too small to reach the Jaccard bound
                inter = len(toks[x] & toks[y])
                if inter < jaccard * (size + len(toks[y]) - inter):
                    continue
                score = fuzz.token_sort_ratio(texts[x], texts[y], score_cutoff=threshold)
                if score >= threshold:
                    a, b = (x, y) if x < y else (y, x)
                    pairs.append(NearPair(a, b, score))
            postings[(block, t)].append(x)
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
