"""The English words recall's lexical selector drops (stop words) and how it stems the rest;
shared by the lexical index and the glosses of Chinese and kanji words."""

from __future__ import annotations

from functools import cache

_STOP_LIST = (
    "a an and are as at be but by can do does for from has have how i if in into is it its me my "
    "no not of on or our so than that the their them then there these this to was we what when "
    "where which who why will with you your"
)
# memtui's own short English stop-word list; ``stop_words`` adds NLTK's.
OWN_STOP_WORDS = frozenset(_STOP_LIST.split())


@cache
def stop_words() -> frozenset[str]:
    """The English words recall drops: ``OWN_STOP_WORDS`` and NLTK's English list as bm25s
    ships it (``bm25s.stopwords.STOPWORDS_EN_PLUS``, 179 words, among them the pieces a
    contraction splits into: *s*, *t*, *don*, *ll*…). Read on first use (bm25s takes ~0.4 s to
    import)."""
    from bm25s.stopwords import STOPWORDS_EN_PLUS

    return OWN_STOP_WORDS | frozenset(STOPWORDS_EN_PLUS)


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
