"""The conflict rule finds the sentences that state a value with one pass over the whole text;
it must keep exactly the sentences the definition keeps (each sentence of the text checked on
its own for a digit or a trigger word, case-insensitively)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from memtui.core.verify import conflicts
from memtui.core.verify.conflicts import _sentences, _stating_sentences, _states_values


def by_definition(text: str, first_line: int) -> list[tuple[str, int]]:
    return [(s, line) for s, line in _sentences(text, first_line) if _states_values(s)]


# pieces that meet at the edges the rule cares about: trigger words in any case, digits, the
# sentence breaks, word characters glued to a trigger, non-ASCII letters (K and ſ fold to k / s)
PIECES = st.sampled_from([
    "on", "ON", "On-call", "oncall", "owned", "owned_by", "Owner:", "enabled", "DISABLED", "is", "set to", "maintained by",
    "x", "word", "3", "v2", "30 days", "2026-03-05", "_", "-", ".", ";", "!", "?", " ", "  ", "\n", "\n\n", "\n- ", "\n1) ",
    "é", "日本", "\u212a", "\u017f", "ﬁ", "İ", "\t",
])


@settings(max_examples=400, deadline=None)
@given(st.lists(PIECES, max_size=30).map("".join), st.integers(min_value=1, max_value=50))
def test_the_one_pass_keeps_the_sentences_the_definition_keeps(text: str, first_line: int) -> None:
    assert _stating_sentences(text, first_line) == by_definition(text, first_line)


def test_the_values_of_a_memory_text_are_those_of_its_stating_sentences() -> None:
    text = "Nothing here.\n\nThe cutover lands 2026-03-05. Flag is ENABLED; owner: Tomasz.\n- Retries: 5 attempts\n"
    assert [s for s, _ in _stating_sentences(text, 7)] == ["The cutover lands 2026-03-05.", "Flag is ENABLED;", "owner: Tomasz.", "- Retries: 5 attempts\n"]
    kinds = sorted(v.kind for v in conflicts.values_of(text, 7))
    assert kinds == ["date", "name:owner", "number:attempts", "yes-no:enabled/disabled"]
