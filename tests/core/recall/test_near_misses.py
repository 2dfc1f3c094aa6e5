"""Near misses: highest score first, ties by path, for every selector, each list with one plain
line saying what its score is.

The memory dir is built so that the order is known without running BM25: besides one memory
that matches every word of the prompt (the pick), each other memory matches exactly one of the
prompt's words, twice (its description is indexed twice), in documents of the same length — so
its BM25 score is that word's idf times one shared factor, and the idf (Lucene's
``ln(1 + (N − df + 0.5) / (df + 0.5))``, N = 8 memories) falls as more memories hold the word:
"rebalance" is in 2 memories, "kafka" in 3, "partition" in 4. Two memories with the same text
in two folders (``a/bravo.md``, ``b/bravo.md``) tie, and so do the three "partition" ones; the
ranking itself puts the newer of a tie first, so a tie in path order is the near misses' own.
"""

from __future__ import annotations

import math
import os
from datetime import UTC, datetime
from pathlib import Path

import pytest

from memtui.core.recall import load_corpus, recall
from memtui.core.recall.corpus import RecallCorpus
from memtui.core.recall.engine import NearMiss, near_miss_scale, near_misses
from memtui.core.recall.semantic import fused_ranking

NOW = datetime(2026, 3, 10, 12, 0, tzinfo=UTC)
QUERY = "kafka partition rebalance"
# The near misses by construction (see the module docstring): one word each, rarest word first,
# ties by path; hotel.md ties with delta.md and golf.md and is the sixth, so it is left out.
ORDER = ["alpha.md", "a/bravo.md", "b/bravo.md", "delta.md", "golf.md"]


def _idf(df: int, n: int = 8) -> float:
    return math.log(1 + (n - df + 0.5) / (df + 0.5))


def write(d: Path, rel: str, description: str, age_days: float, *, name: str = "note", body: str = "") -> None:
    path = d / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"---\nname: {name}\ndescription: {description}\ntype: project\n---\n{body}\n", encoding="utf-8")
    stamp = NOW.timestamp() - age_days * 86_400
    os.utime(path, (stamp, stamp))


@pytest.fixture
def corpus(tmp_path: Path) -> RecallCorpus:
    d = tmp_path / "memory"
    write(d, "runbook.md", "kafka partition rebalance runbook", 9, name="kafka partition rebalance", body="kafka partition rebalance steps")
    write(d, "alpha.md", "rebalance notes for the team", 8)
    write(d, "a/bravo.md", "kafka notes for the team", 7)
    write(d, "b/bravo.md", "kafka notes for the team", 1)  # newer than its twin
    write(d, "delta.md", "partition notes for the team", 6)
    write(d, "golf.md", "partition notes for the team", 5)
    write(d, "hotel.md", "partition notes for the team", 2)  # the newest of the three
    write(d, "zulu.md", "lunch is on fridays", 3)
    return load_corpus(d)


def test_the_helper_sorts_by_the_score_shown_then_by_path_and_keeps_five() -> None:
    scored = [("e.md", 0.2), ("b.md", 0.5004), ("a.md", 0.5), ("c.md", 0.9), ("f.md", 0.1), ("d.md", 0.12345), ("g.md", 0.7)]
    assert near_misses(scored) == (
        NearMiss("c.md", 0.9), NearMiss("g.md", 0.7),
        NearMiss("a.md", 0.5), NearMiss("b.md", 0.5),  # 0.5004 is shown as 0.5: a tie, by path
        NearMiss("e.md", 0.2),
    )
    assert near_misses([], 5) == () and near_misses(scored, 2) == (NearMiss("c.md", 0.9), NearMiss("g.md", 0.7))


def test_lexical_near_misses_highest_first_ties_by_path(corpus: RecallCorpus) -> None:
    result = recall(QUERY, corpus, now=NOW, selector="lexical")
    assert [p.relpath for p in result.picks] == ["runbook.md"]
    assert [n.relpath for n in result.near_misses] == ORDER
    s = {n.relpath: n.score for n in result.near_misses}
    assert s["a/bravo.md"] == s["b/bravo.md"] and s["delta.md"] == s["golf.md"]
    # same tf and length: the scores are in the ratio of the words' idf (3 decimals shown)
    assert s["alpha.md"] / s["a/bravo.md"] == pytest.approx(_idf(2) / _idf(3), rel=5e-3)
    assert s["a/bravo.md"] / s["delta.md"] == pytest.approx(_idf(3) / _idf(4), rel=5e-3)
    assert result.near_score == "bm25"
    assert result.near_misses_scale == "BM25 word-match score, higher is closer (no fixed scale: compare within one prompt)"


def test_semantic_near_misses_by_evidence_not_by_fused_rank(corpus: RecallCorpus) -> None:
    """The semantic selector ranks by fused rank; its near misses are the candidates not picked
    with the most evidence, highest first — here the words decide it (each shares one word,
    whose share of the prompt's term weight falls with its idf), so the order is the lexical one."""
    result = recall(QUERY, corpus, now=NOW, selector="semantic")
    assert [p.relpath for p in result.picks] == ["runbook.md"]
    assert [n.relpath for n in result.near_misses] == ORDER
    evidence = {corpus.docs[f.index].relpath: round(f.evidence, 3) for f in fused_ranking(QUERY, corpus)}
    assert [n.score for n in result.near_misses] == [evidence[r] for r in ORDER]
    scores = [n.score for n in result.near_misses]
    assert scores == sorted(scores, reverse=True) and scores[1] == scores[2] and scores[3] == scores[4]
    assert result.near_score == "evidence"
    assert result.near_misses_scale == "match in meaning and words, higher is closer (a pick needs 1.00, 70% of the best's and a top-5 rank)"


def test_claude_near_misses_come_from_bm25_sorted_the_same_way(corpus: RecallCorpus) -> None:
    """Without a key the claude selector picks nothing; its near misses are the BM25 ranking's
    best, the pick-to-be included, in the same order."""
    result = recall(QUERY, corpus, now=NOW, selector="claude", environ={})
    assert result.picks == () and result.error
    assert [n.relpath for n in result.near_misses] == ["runbook.md", *ORDER[:4]]
    assert result.near_misses_scale == "BM25 word-match score, higher is closer (the model chose its picks without it)"


def test_a_skipped_prompt_keeps_its_selectors_score(corpus: RecallCorpus) -> None:
    """A one-word prompt is skipped; what recall would pick, and its near misses, come from the
    offline selector chosen, with that selector's scale."""
    result = recall("kafka", corpus, now=NOW, selector="semantic")
    assert result.skipped and result.would_pick_selector == "semantic" and result.near_score == "evidence"
    assert result.near_misses_scale.startswith("match in meaning and words")
    scores = [n.score for n in result.near_misses]
    assert scores == sorted(scores, reverse=True)


def test_the_scale_names_no_internal_module() -> None:
    for score, selector in (("bm25", "lexical"), ("bm25", "claude"), ("evidence", "semantic")):
        line = near_miss_scale(score, selector)  # type: ignore[arg-type]
        assert "memtui." not in line and "units" not in line
