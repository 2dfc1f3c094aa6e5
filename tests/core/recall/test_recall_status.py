"""The recall badge (``selector_status``) agrees with what the selector does: claude and hybrid
without a key recall nothing (their result is a "no API key" error), so the badge never
promises BM25 for them."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from memtui.core.recall import choose_selector, load_corpus, recall, selector_status
from memtui.core.recall.engine import NO_KEY

NOW = datetime(2026, 3, 10, 12, 0, tzinfo=UTC)
KEY = {"ANTHROPIC_API_KEY": "x"}


@pytest.fixture
def corpus(tmp_path: Path):  # type: ignore[no-untyped-def]
    (tmp_path / "project_kafka.md").write_text("---\ndescription: Kafka migration plan\ntype: project\n---\nbody\n", encoding="utf-8")
    return load_corpus(tmp_path)


@pytest.mark.parametrize("name", ["claude", "hybrid"])
def test_without_a_key_claude_and_hybrid_say_no_key_as_their_result_does(corpus, name: str) -> None:  # type: ignore[no-untyped-def]
    choice = choose_selector(name, environ={})  # type: ignore[arg-type]
    result = recall("kafka migration plan", corpus, now=NOW, selector=name, environ={})  # type: ignore[arg-type]
    status = selector_status(choice, "claude-sonnet-5-5", result)
    assert (status.state, status.chip) == ("no-key", "NO KEY")
    assert "BM25" not in status.title and "as you type" not in status.title
    assert status.reason == result.error  # the badge and the result say the same thing


def test_lexical_is_offline_for_want_of_a_key_or_by_choice() -> None:
    without = selector_status(choose_selector("auto", environ={}), "m")
    assert (without.chip, without.title) == ("OFFLINE", "lexical (BM25) as you type")
    assert without.reason is not None and without.reason.startswith("no API key")
    chosen = selector_status(choose_selector("lexical", environ=KEY), "m")
    assert (chosen.chip, chosen.reason) == ("OFFLINE", "by choice: an API key is set")


def test_with_a_key_claude_is_online_and_a_failed_result_is_an_error(corpus) -> None:  # type: ignore[no-untyped-def]
    choice = choose_selector("claude", environ=KEY)
    assert selector_status(choice, "m") == selector_status(choice, "m", None)
    online = selector_status(choice, "m")
    assert (online.chip, online.title, online.reason) == ("ONLINE", "claude · m", "Enter sends one request")
    assert selector_status(choice, "m", asking=True).reason == "asking…"
    lexical_result = recall("kafka migration plan", corpus, now=NOW, selector="lexical", environ={})
    assert selector_status(choice, "m", lexical_result).chip == "ONLINE"  # another selector's result does not count


def test_the_semantic_selector_is_offline_as_you_type_with_its_kind() -> None:
    status = selector_status(choose_selector("semantic", environ={}), "m")
    assert (status.state, status.chip, status.title) == ("offline", "OFFLINE", "semantic (embeddings + BM25) as you type")
    assert status.reason == NO_KEY
    keyed = selector_status(choose_selector("semantic", environ={"ANTHROPIC_API_KEY": "x"}), "m")
    assert keyed.reason == "by choice: an API key is set"
