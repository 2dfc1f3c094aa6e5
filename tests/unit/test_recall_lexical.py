"""The lexical selector: CJK-aware tokenisation, BM25 picks, near misses."""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path

from memtui.core.recall import load_corpus, recall
from memtui.core.recall.lexical import Ranked, split_picks, tokenize

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
