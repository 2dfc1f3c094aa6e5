"""A ranking's shape and how picks are cut from it, shared by the lexical and semantic selectors
and by ``recall()``: plain Python, so that what imports the recall engine (every pane at start)
does not pay for numpy and bm25s before a query is ranked."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from operator import attrgetter

# The reference's cap on recalled files per turn (`.slice(0, 5)` and "up to 5" in its prompt).
MAX_PICKS = 5
# memtui's choices, tuned on tests/unit/test_recall_eval.py: a pick must score at least this
# share of the best match; near misses are the next few positive scores.
PICK_RATIO = 0.5
NEAR_MISSES = 5
# memtui's choice: a lexical pick must also match at least this share of the query's term
# weight (BM25 idf; ``LexicalIndex.term_share``), so that one shared common word ("match",
# "order", a city) does not make an unrelated prompt pick. On the three labelled sets in the
# tree (benchmarks/README.md, "Recall across languages") every correct pick matched 3.3 % or
# more, and 16 of 161 wrong ones less.
MIN_SHARE = 0.03
# A doc's relpath without the property call (used over all docs: ``map`` stays in C).
RELPATH = attrgetter("header.relpath")


@dataclass(frozen=True, slots=True)
class Ranked:
    """A scored document: ``index`` into the corpus docs, BM25 ``score`` (> 0)."""

    index: int
    score: float


def split_picks(ranked: Sequence[Ranked], max_picks: int = MAX_PICKS, ratio: float = PICK_RATIO) -> tuple[list[Ranked], list[Ranked]]:
    """``(picks, near_misses)`` from a ranking: picks score at least ``ratio`` × the top score
    (at most ``max_picks``); near misses are the next ``NEAR_MISSES`` ranked docs."""
    if not ranked:
        return [], []
    floor = ranked[0].score * ratio
    picks = [r for r in ranked[:max_picks] if r.score >= floor]
    rest = list(ranked[len(picks) : len(picks) + NEAR_MISSES])
    return picks, rest
