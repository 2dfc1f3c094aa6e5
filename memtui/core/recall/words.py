"""The English words recall's lexical selector drops (stop words) and how it stems the rest;
shared by the lexical index and the glosses of Chinese and kanji words."""

from __future__ import annotations

_STOP_LIST = (
    "a an and are as at be but by can do does for from has have how i if in into is it its me my "
    "no not of on or our so than that the their them then there these this to was we what when "
    "where which who why will with you your"
)
# A short English stop-word list (memtui's choice).
STOP_WORDS = frozenset(_STOP_LIST.split())


def stem(word: str) -> str:
    """A light English suffix stemmer: *migrations*, *migrating* → *migrat*; a word of three
    letters or fewer, or not plain ASCII letters, is left alone."""
    if len(word) <= 3 or not word.isascii() or not word.isalpha():
        return word
    if word.endswith("ies") and len(word) > 4:
        word = word[:-3] + "y"
    elif word.endswith("sses"):
        word = word[:-2]
    elif word.endswith("s") and not word.endswith(("ss", "us", "is")):
        word = word[:-1]
    for suffix in ("ing", "ion", "ed"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)]
            break
    if word.endswith("e") and len(word) > 4:
        word = word[:-1]
    return word
