"""The relative-date search skips ASCII texts without a key word: every English phrase the
pattern can match contains one, so skipping never loses a finding."""

from __future__ import annotations

from datetime import UTC, datetime

from hypothesis import given, settings
from hypothesis import strategies as st

from memtui.core.memory import lint


@settings(max_examples=150, deadline=None)
@given(st.from_regex(lint._RELATIVE_EN, fullmatch=True).filter(str.isascii))
def test_every_english_phrase_holds_a_key_word(phrase: str) -> None:
    assert any(word in phrase.lower() for word in lint._EN_KEYWORDS)


def test_skipped_and_searched_texts() -> None:
    base = datetime(2026, 3, 10, 12, tzinfo=UTC)
    assert lint.find_relative_dates("Ship it after the freeze.\nNo dates here.", base) == []
    assert [d.phrase for d in lint.find_relative_dates("Ship it NEXT THURSDAY.", base)] == ["NEXT THURSDAY"]
    assert [d.phrase for d in lint.find_relative_dates("上周四发布", base)] == ["上周四"]
