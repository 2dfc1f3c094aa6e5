"""The lexical selector: CJK-aware tokenisation, BM25 picks, near misses."""

from __future__ import annotations

import math
import os
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_recall_eval import QUERIES, write_workspace

from memtui.core.memory.headers import MemoryHeader
from memtui.core.recall import RecallDoc, lexical, load_corpus, recall
from memtui.core.recall.lexical import (
    CROSS_WEIGHT,
    LexicalIndex,
    Ranked,
    document_text,
    query_tokens,
    split_picks,
    token_ids,
    tokenize,
)

NOW = datetime(2026, 3, 10, 12, 0, tzinfo=UTC)


def test_tokenize_english_snake_case_and_stems() -> None:
    assert tokenize("Running the Migrations for feedback_no_mock_db!") == ["runn", "migrat", "feedback", "mock", "db"]


def test_tokenize_cjk_runs_become_bigrams() -> None:
    assert tokenize("迁移到Kafka的计划") == ["迁移", "移到", "kafka", "的计", "计划"]
    assert tokenize("テストでモック") == ["テス", "スト", "トで", "でモ", "モッ", "ック"]
    assert tokenize("데이터 베이스") == ["데이", "이터", "베이", "이스"]
    assert tokenize("用 Ｋａｆｋａ") == ["用", "kafka"]  # one-character run; NFKC folds full-width


def test_split_picks_ratio_and_near_misses() -> None:
    ranked = [Ranked(i, s) for i, s in enumerate([10.0, 6.0, 5.0, 4.9, 1.0, 0.5, 0.4, 0.3, 0.2, 0.1])]
    picks, near = split_picks(ranked)
    assert [r.index for r in picks] == [0, 1, 2]
    assert [r.index for r in near] == [3, 4, 5, 6, 7]
    assert split_picks([]) == ([], [])


def test_lexical_picks_chinese_and_english(tmp_path: Path) -> None:
    d = tmp_path / "memory"
    d.mkdir()
    for i, (name, desc) in enumerate([
        ("项目_迁移计划.md", "从 SQS 迁移到 Kafka 的计划和负责人"),
        ("feedback_db.md", "Integration tests hit a real database"),
        ("user_editor.md", "Uses neovim"),
    ]):
        (d / name).write_text(f"---\ndescription: {desc}\ntype: project\n---\n", encoding="utf-8")
        os.utime(d / name, (1000 + i, 1000 + i))
    corpus = load_corpus(d)
    res = recall("Kafka 迁移计划", corpus, now=NOW, selector="lexical")
    assert [p.relpath for p in res.picks] == ["项目_迁移计划.md"]
    assert res.picks[0].reason.startswith("BM25 ") and "迁移" in res.picks[0].reason
    res = recall("integration tests database", corpus, now=NOW, selector="lexical")
    assert [p.relpath for p in res.picks] == ["feedback_db.md"]
    assert res.online is False and res.request is None


def test_no_match_gives_no_picks(tmp_path: Path) -> None:
    d = tmp_path / "memory"
    d.mkdir()
    (d / "a.md").write_text("---\ndescription: kafka\n---\n")
    res = recall("completely unrelated words", load_corpus(d), now=NOW, selector="lexical")
    assert res.picks == () and res.near_misses == () and res.injected_text == ""


def test_empty_memory_dir(tmp_path: Path) -> None:
    res = recall("anything at all", load_corpus(tmp_path), now=NOW, selector="lexical")
    assert res.picks == () and res.manifest.count == 0


def doc(relpath: str, description: str | None = None, body: str = "") -> RecallDoc:
    """A recall doc whose indexed text is only what is given (no name, no type)."""
    return RecallDoc(MemoryHeader(Path("/m") / relpath, relpath, 0.0, description, None), None, body)


def test_token_ids_count_every_token_of_each_text() -> None:
    texts = ["Kafka 迁移到Kafka", "", "the and of", "xx\x00yy", "用 数据库", "s t 7 実装する"]
    ids, vocab = token_ids(texts)
    names = {i: t for t, i in vocab.items()}
    got = [Counter(names[i] for i in a.tolist()) for a in ids]
    assert got == [
        Counter({"kafka": 2, "迁移": 1, "移到": 1}),
        Counter(),
        Counter(),  # stop words only
        Counter({"xx": 1, "yy": 1}),  # a NUL inside a text separates words, nothing more
        Counter({"用": 1, "数据": 1, "据库": 1}),
        Counter({"実装": 1, "装す": 1}),  # single ASCII letters and digits, hiragana-only bigrams: dropped
    ]
    assert sorted(vocab.values()) == list(range(len(vocab)))


def test_bm25_score_worked_by_hand() -> None:
    # Two one-token docs: N = 2, df = 1, tf = 1, every length 1 = the mean length.
    # idf = ln(1 + (2 - 1 + 0.5) / (1 + 0.5)) = ln 2; tfc = 1 / (1.5 * (0.25 + 0.75 * 1/1) + 1) = 0.4.
    index = LexicalIndex.build([doc("kafka.md"), doc("redis.md")])
    scores = index.scores("kafka consumers")
    assert scores.dtype == np.float32
    assert scores[0] == np.float32(math.log(2) * 0.4) and scores[1] == 0


def test_scores_are_those_of_bm25s_own_build(tmp_path: Path) -> None:
    import bm25s  # type: ignore[import-untyped]

    corpus = load_corpus(write_workspace(tmp_path / "memory"))
    docs = [*corpus.docs, doc("the.md"), doc("a_b.md", "kafka kafka kafka 迁移 迁移", "x\x00y"), doc("c.md", "用")]
    index = LexicalIndex.build(docs)
    reference = bm25s.BM25()  # bm25s's own build: a Counter and a set per document
    reference.index([tokenize(document_text(d)) for d in docs], show_progress=False)
    for query, _ in QUERIES:
        expected = np.zeros(len(docs), dtype=np.float32)
        for weight in (1.0, CROSS_WEIGHT):  # a query's own tokens, then its cross-language ones
            ids = [reference.vocab_dict[t] for t, w in query_tokens(query) if w == weight and t in reference.vocab_dict]
            if ids:
                expected += np.float32(weight) * reference.get_scores_from_ids(ids)
        assert np.array_equal(index.scores(query), expected), query
    assert index.scores("用 kafka")[-2:].tolist() != [0.0, 0.0]


def test_matched_terms_in_query_order() -> None:
    index = LexicalIndex.build([doc("a.md", "Kafka migration plan"), doc("b.md", "Redis cache plans")])
    assert index.matched_terms("plans for the kafka migrations, kafka again", 0) == ["plan", "kafka", "migrat"]
    assert index.matched_terms("plans for the kafka migrations", 1) == ["plan"]
    assert index.matched_terms("nothing shared", 0) == []


def test_a_corpus_without_any_token(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("---\ndescription: the\n---\n", encoding="utf-8")
    res = recall("kafka migration plan", load_corpus(tmp_path), now=NOW, selector="lexical")
    assert res.picks == () and res.near_misses == ()


def test_token_ids_across_batches(monkeypatch: pytest.MonkeyPatch) -> None:
    # Two texts per batch: the CJK bigrams and words of the later batches are the ones met first.
    monkeypatch.setattr(lexical, "BUILD_BATCH", 2)
    ids, vocab = token_ids(["迁移 kafka", "迁移计划", "", "计划 迁移 kafka", "移"])
    names = {i: t for t, i in vocab.items()}
    assert [Counter(names[i] for i in a.tolist()) for a in ids] == [
        Counter({"迁移": 1, "kafka": 1}),
        Counter({"迁移": 1, "移计": 1, "计划": 1}),
        Counter(),
        Counter({"计划": 1, "迁移": 1, "kafka": 1}),
        Counter({"移": 1}),
    ]
    assert len(vocab) == 5 and sorted(vocab.values()) == list(range(5))


def test_token_ids_beyond_the_bmp() -> None:
    # U+20000 (CJK extension B) is a letter but outside the bigram ranges: a word; an emoji
    # separates words; NFKC makes 𝟘 (mathematical double-struck zero) a 0.
    ids, vocab = token_ids(["𠀀𠀀 Abc", "xx😀yy 𝟘𝟘"])
    names = {i: t for t, i in vocab.items()}
    assert [Counter(names[i] for i in a.tolist()) for a in ids] == [
        Counter({"𠀀𠀀": 1, "abc": 1}),
        Counter({"xx": 1, "yy": 1, "00": 1}),
    ]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.text(alphabet="aZ9_-. \n\x00éßΣİﬁ①Ｋ𠀀😀𝟘ǅⅫ٣\u0301\u200b\x85迁移テスト・데이ｶﾞ\u3000すで", max_size=30), max_size=8))
def test_token_ids_count_what_tokenize_gives(texts: list[str]) -> None:
    ids, vocab = token_ids(texts)
    names = {i: t for t, i in vocab.items()}
    assert [Counter(names[i] for i in a.tolist()) for a in ids] == [Counter(tokenize(t)) for t in texts]


def test_contraction_pieces_common_words_and_particles_match_nothing() -> None:
    # NLTK's English stop words (bm25s's list) hold "what", "s", "it", "about"; で is a lone
    # hiragana particle; "debounce" loses its final e to the stemmer.
    assert tokenize("what's it about?") == []
    assert tokenize("JavaScriptでdebounce") == ["javascript", "debounc"]


def test_one_shared_word_in_a_long_prompt_is_a_near_miss_not_a_pick(tmp_path: Path) -> None:
    from memtui.core.recall.engine import LexicalSelector
    from memtui.core.recall.ranking import MIN_SHARE

    d = tmp_path / "memory"
    d.mkdir()
    (d / "project_matchmaking.md").write_text("---\ndescription: Ranked match pool tuning for the EU region\ntype: project\n---\n")
    (d / "user_editor.md").write_text("---\ndescription: Uses neovim in a fish shell\ntype: user\n---\n")
    corpus = load_corpus(d)
    # "a regex that matches e-mail addresses", in Chinese: 匹配 glosses as "match", and nothing else
    # of the prompt's many bigrams and glosses is in either memory.
    query = "帮我写一个匹配邮箱地址的正则"
    index = corpus.lexical_index()
    pos = index.position("project_matchmaking.md")
    assert pos is not None and index.scores(query)[pos] > 0 and index.term_share(query)[pos] < MIN_SHARE
    sel = LexicalSelector().select(query, corpus.docs, corpus, [])
    assert sel.picks == () and [n.relpath for n in sel.near_misses] == ["project_matchmaking.md"]
    # The same memory is picked for a prompt about it.
    sel = LexicalSelector().select("tune the ranked match pool", corpus.docs, corpus, [])
    assert [doc.relpath for doc, _ in sel.picks] == ["project_matchmaking.md"]
