"""The offline extractor's cues: explicit requests in English, Chinese and Japanese
become one proposal each; mentions in passing and questions never do."""

from __future__ import annotations

import pytest

from memtui.core.extract.cues import (
    cue_description,
    cue_name,
    find_cues,
    split_sentences,
)


def one(text: str) -> tuple[str, str, str, str]:
    cues = find_cues(text)
    assert len(cues) == 1, cues
    c = cues[0]
    return c.kind, c.lang, c.statement, c.type


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Draft the notes. And remember that we never deploy on Fridays.",
         ("remember", "en", "We never deploy on Fridays.", "feedback")),
        ("remember to run ruff before committing", ("remember", "en", "Run ruff before committing.", "feedback")),
        ("Please remember: I'm a data scientist looking at the logging system.",
         ("remember", "en", "I'm a data scientist looking at the logging system.", "user")),
        ("Keep in mind that staging is shared with QA.", ("remember", "en", "Staging is shared with QA.", "feedback")),
        ("From now on, use uv instead of pip.", ("from-now-on", "en", "Use uv instead of pip.", "feedback")),
        ("Use tabs from now on!", ("from-now-on", "en", "Use tabs.", "feedback")),
        ("Don't ever push straight to main.", ("never", "en", "Don't ever push straight to main.", "feedback")),
        ("don’t ever squash merge", ("never", "en", "Don't ever squash merge.", "feedback")),
    ],
)
def test_english_cues(text: str, expected: tuple[str, str, str, str]) -> None:
    assert one(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("记住：提交信息一律用英文。", ("remember", "zh", "提交信息一律用英文。", "feedback")),
        ("请记住我是数据科学家", ("remember", "zh", "我是数据科学家。", "user")),
        ("以后提交信息都用英文", ("from-now-on", "zh", "提交信息都用英文。", "feedback")),
        ("从现在开始不要用 mock 数据库。", ("from-now-on", "zh", "不要用 mock 数据库。", "feedback")),
    ],
)
def test_chinese_cues(text: str, expected: tuple[str, str, str, str]) -> None:
    assert one(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("金曜日にはデプロイしないことを覚えておいてください。", ("remember", "ja", "金曜日にはデプロイしない。", "feedback")),
        ("覚えておいて：私はデータサイエンティストです", ("remember", "ja", "私はデータサイエンティストです。", "user")),
        ("今後はテストに本物のDBを使ってください。", ("from-now-on", "ja", "テストに本物のDBを使ってください。", "feedback")),
    ],
)
def test_japanese_cues(text: str, expected: tuple[str, str, str, str]) -> None:
    assert one(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "I don't remember the port.",
        "Do you remember the port?",
        "remember when we broke prod?",
        "I can't remember which flag it was, can you check",
        "We should remember this for the retro maybe",
        "It will be faster from now on?",
        "我不记得端口了",
        "我没记住端口号",
        "你记住了吗？",
        "以后再说吧",
        "ポート番号は覚えていません",
        "覚えてない",
        "覚えてる？",
        "Please fix the failing test.",
    ],
)
def test_passing_mentions_and_questions_are_not_cues(text: str) -> None:
    assert find_cues(text) == []


def test_several_cues_in_one_turn_each_count() -> None:
    cues = find_cues("Remember that the API key rotates monthly.\nFrom now on, run the linter first. 记住：周五不部署。")
    assert [(c.kind, c.lang) for c in cues] == [("remember", "en"), ("from-now-on", "en"), ("remember", "zh")]


def test_names_and_descriptions() -> None:
    assert cue_name("We never deploy on Fridays, so make it a Monday.") == "We never deploy on Fridays"
    assert cue_name("One two three four five six seven eight nine ten.") == "One two three four five six seven eight"
    assert cue_name("提交信息一律用英文，除非是中文仓库。") == "提交信息一律用英文"
    long = "word " * 60
    desc = cue_description(long)
    assert len(desc) <= 150 and desc.endswith("…") and "\n" not in desc
    assert cue_description("Short.") == "Short."


def test_sentence_split() -> None:
    assert split_sentences("One. Two!  Three?\nFour。五") == ["One.", "Two!", "Three?", "Four。", "五"]
