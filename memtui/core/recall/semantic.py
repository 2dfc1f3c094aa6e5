"""The semantic selector: meaning (static embeddings) and words (BM25) fused, with a calibrated
threshold. Offline, chosen with ``--selector semantic`` (the default offline selector is the
lexical one: benchmarks/README.md, "Recall across languages").

**Ranking**: reciprocal rank fusion (RRF) of two rankings of the candidates — by cosine
similarity between the query's and each memory's WordLlama embedding
(``memtui.core.recall.embedding``; a memory's text is the lexical selector's document text) and
by BM25 (``memtui.core.recall.lexical``; only memories with a positive score) — each memory
scoring ``w / (RRF_K + dense rank) + 1 / (RRF_K + BM25 rank)`` (ranks from 1). ``w``
(``meaning_weight``) is 1 when the query's Chinese or kanji words have English glosses (query and
memories are embedded with their glosses, ``memtui.core.recall.gloss``), else the share of the
query's letters outside Chinese and Japanese script: the model's vocabulary is English-centric,
so its similarities say little about CJK text itself (on the evaluation set every Chinese or
Japanese text is 0.5–0.8 similar to every other), and the words — character bigrams — carry
those queries.

**Picks** (precision matters as much as recall: the agent picks only what is clearly useful and
an empty list is fine): of the best ``CANDIDATES`` by fused rank, a memory is picked when its
*evidence* reaches 1 and at least ``RELATIVE`` × the best candidate's, where evidence is the
larger of

- meaning: similarity / ``SIMILARITY_ALONE``, or similarity / ``SIMILARITY_WITH_TERMS`` when the
  memory also shares a query term (only for queries whose letters are mostly outside CJK
  script, ``latin_share ≥ 0.5``);
- words: the share of the query's term weight (BM25 idf) the memory matches /
  ``TERM_SHARE``.

So a prompt unrelated to every memory gets no pick. Every pick's reason gives the similarity
and the matched terms with their share.

The constants were calibrated on the calibration split of the evaluation set shipped with memtui
(``memtui/evalsets/recall``: 65 memories, 57 prompts in English, Chinese and Japanese) and
checked on its held-out split; ``memtui recall eval`` prints the figures.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from memtui.core.recall.corpus import RecallCorpus
from memtui.core.recall.docs import RecallDoc
from memtui.core.recall.gloss import gloss_text
from memtui.core.recall.lexical import _CJK_CHAR, MAX_PICKS

# Calibrated on the evaluation set's calibration split (see the module docstring).
RRF_K = 10
CANDIDATES = MAX_PICKS
SIMILARITY_ALONE = 0.30
SIMILARITY_WITH_TERMS = 0.15
TERM_SHARE = 0.06
RELATIVE = 0.7
# Queries whose letters are at least this share CJK are judged on their words alone.
MEANING_MIN_LATIN = 0.5


def meaning_weight(query: str) -> float:
    """The weight (0–1) of the meaning ranking for ``query``: 1 when its Chinese or kanji words
    have English glosses (the query is embedded with them), else ``latin_share``."""
    return 1.0 if gloss_text(query) else latin_share(query)


def latin_share(query: str) -> float:
    """The share (0–1) of the query's letters and digits outside Chinese, Japanese and Korean
    script (1 for a query without any)."""
    letters = [c for c in query if c.isalnum()]
    if not letters:
        return 1.0
    return 1 - sum(1 for c in letters if _CJK_CHAR.match(c)) / len(letters)


@dataclass(frozen=True, slots=True)
class Fused:
    """One candidate of the fused ranking: ``index`` into the corpus docs, ``score`` (RRF),
    ``similarity`` (cosine, −1–1), ``bm25`` (score, ≥ 0), ``share`` (of the query's term
    weight matched, 0–1) and ``evidence`` (≥ 1: enough to be picked; see the module
    docstring)."""

    index: int
    score: float
    similarity: float
    bm25: float
    share: float
    evidence: float


def fused_ranking(query: str, corpus: RecallCorpus, allowed: np.ndarray | None = None, limit: int | None = None) -> list[Fused]:
    """The candidates (``allowed``: a boolean mask over ``corpus.docs``, ``None`` for all) best
    first by fused score, ties newest first; at most ``limit``. Raises
    ``ModelUnavailableError`` when the embedding model cannot be loaded."""
    n = len(corpus.docs)
    if n == 0:
        return []
    dense = corpus.dense_index()
    lexical = corpus.lexical_index()
    sims = dense.similarities(query)
    bm25 = lexical.scores(query)
    share = lexical.term_share(query)
    ok = np.ones(n, dtype=bool) if allowed is None else allowed
    w = meaning_weight(query)
    fused = np.zeros(n, dtype=np.float64)
    if w > 0:
        order = np.flatnonzero(ok)[np.argsort(-sims[ok], kind="stable")]
        fused[order] += w / (RRF_K + np.arange(1, order.size + 1))
    matched = ok & (bm25 > 0)
    order = np.flatnonzero(matched)[np.argsort(-bm25[matched], kind="stable")]
    fused[order] += 1 / (RRF_K + np.arange(1, order.size + 1))
    candidates = np.flatnonzero(ok & (fused > 0))
    ranked = candidates[np.argsort(-fused[candidates], kind="stable")]
    if limit is not None:
        ranked = ranked[:limit]
    meaning = latin_share(query) >= MEANING_MIN_LATIN
    out = []
    for i in ranked.tolist():
        sim = float(sims[i])
        evidence = share[i] / TERM_SHARE
        if meaning:
            evidence = max(evidence, sim / (SIMILARITY_WITH_TERMS if bm25[i] > 0 else SIMILARITY_ALONE))
        out.append(Fused(i, float(fused[i]), sim, float(bm25[i]), float(share[i]), float(evidence)))
    return out


def split_semantic(ranked: Sequence[Fused]) -> tuple[list[Fused], list[Fused]]:
    """``(picks, the rest)`` of a fused ranking (see the module docstring): the rest is every
    candidate of ``ranked`` not picked, in its order — the near misses are the ``NEAR_MISSES``
    of them with the most evidence (``memtui.core.recall.engine.near_misses``)."""
    head = list(ranked[:CANDIDATES])
    best = max((f.evidence for f in head), default=0.0)
    picks = [f for f in head if f.evidence >= 1 and f.evidence >= RELATIVE * best]
    chosen = {f.index for f in picks}
    rest = [f for f in ranked if f.index not in chosen]
    return picks[:MAX_PICKS], rest


def reason(f: Fused, terms: Sequence[str], meaning: bool) -> str:
    """A pick's reason: its similarity (when meaning counts for the query) and the matched
    terms with their share of the query's term weight."""
    parts = [f"similarity {f.similarity:.2f}"] if meaning else []
    if terms:
        parts.append(f"matched: {', '.join(terms)} ({f.share:.0%} of the query's term weight)")
    elif not meaning:
        parts.append("no shared term")
    return "; ".join(parts)


def allowed_mask(candidates: Sequence[RecallDoc], corpus: RecallCorpus, excluded: tuple[int, ...] | None) -> np.ndarray | None:
    """The boolean mask over ``corpus.docs`` of ``candidates`` (``excluded``: their left-out
    positions when known), ``None`` for all."""
    if excluded is not None:
        if not excluded:
            return None
        mask = np.ones(len(corpus.docs), dtype=bool)
        mask[list(excluded)] = False
        return mask
    wanted = {d.relpath for d in candidates}
    return np.fromiter((d.relpath in wanted for d in corpus.docs), dtype=bool, count=len(corpus.docs))
