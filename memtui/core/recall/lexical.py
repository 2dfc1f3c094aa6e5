"""The lexical selector: BM25 (``bm25s``) over what recall knows of each memory.

Offline and instant, so it is the default when no API key is configured, the live
as-you-type preview, the source of "near misses" for every selector, and the prefilter of the
hybrid selector. It is memtui's stand-in for the reference's Sonnet selector, not a copy of
the reference.

**Document** of a memory: description (twice: it is the recall key), name, file name words,
type, and the head of the body within the 30 scanned lines.

**Tokenisation** (``tokenize``): NFKC, lower case; runs of Chinese, Japanese or Korean
characters become overlapping character bigrams (a one-character run stays a unigram), so
"迁移到Kafka" matches "Kafka 迁移" without a word segmenter; other text splits into runs of
letters and digits (``snake_case`` and ``kebab-case`` split too), minus a short English
stop-word list, with a light suffix stemmer (``migrations``/``migrating`` → ``migrat``).

**Picks**: the best documents whose score is at least ``PICK_RATIO`` of the top score, at
most 5; **near misses**: the next ones with a positive score.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from memtui.core.recall.corpus import RecallDoc

# The reference's cap on recalled files per turn (`.slice(0, 5)` and "up to 5" in its prompt).
MAX_PICKS = 5
# memtui's choices, tuned on tests/unit/test_recall_eval.py: a pick must score at least this
# share of the best match; near misses are the next few positive scores.
PICK_RATIO = 0.5
NEAR_MISSES = 5

_CJK = (
    "\u1100-\u11ff"  # Hangul Jamo
    "\u3040-\u309f"  # Hiragana
    "\u30a0-\u30ff"  # Katakana
    "\u3130-\u318f"  # Hangul compatibility Jamo
    "\u3400-\u4dbf"  # CJK extension A
    "\u4e00-\u9fff"  # CJK unified ideographs
    "\uac00-\ud7af"  # Hangul syllables
    "\uf900-\ufaff"  # CJK compatibility ideographs
    "\uff66-\uff9f"  # half-width Katakana
)
_CJK_RUN = re.compile(f"[{_CJK}]+")
_WORD = re.compile(r"[^\W_]+")
_STOP = frozenset(
    "a an and are as at be but by can do does for from has have how i if in into is it its me my "
    "no not of on or our so than that the their them then there these this to was we what when "
    "where which who why will with you your".split()
)


def _stem(word: str) -> str:
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


def _words(text: str) -> Iterable[str]:
    for word in _WORD.findall(text):
        if word not in _STOP:
            yield _stem(word)


def tokenize(text: str) -> list[str]:
    """The tokens of ``text`` (see the module docstring). Order follows the text."""
    text = unicodedata.normalize("NFKC", text).lower()
    tokens: list[str] = []
    pos = 0
    for match in _CJK_RUN.finditer(text):
        tokens.extend(_words(text[pos : match.start()]))
        run = match.group()
        if len(run) == 1:
            tokens.append(run)
        else:
            tokens.extend(run[i : i + 2] for i in range(len(run) - 1))
        pos = match.end()
    tokens.extend(_words(text[pos:]))
    return tokens


def document_text(doc: RecallDoc) -> str:
    """The text indexed for ``doc`` (see the module docstring)."""
    header = doc.header
    stem = doc.relpath.rsplit("/", 1)[-1].removesuffix(".md")
    desc = header.description or ""
    parts = [desc, desc, doc.name or "", stem.replace("_", " ").replace("-", " "), header.type or "", doc.body_head]
    return "\n".join(p for p in parts if p)


@dataclass(frozen=True, slots=True)
class Ranked:
    """A scored document: ``index`` into the corpus docs, BM25 ``score`` (> 0)."""

    index: int
    score: float


class LexicalIndex:
    """A BM25 index over a fixed list of docs (same order). Build with ``LexicalIndex.build``."""

    def __init__(self, docs: Sequence[RecallDoc], token_sets: Sequence[frozenset[str]], retriever: object | None) -> None:
        self.docs = tuple(docs)
        self._token_sets = tuple(token_sets)
        self._retriever = retriever
        self._positions: dict[str, int] | None = None

    @classmethod
    def build(cls, docs: Sequence[RecallDoc]) -> LexicalIndex:
        """Tokenise and index ``docs`` (an empty list gives an index that matches nothing)."""
        import bm25s  # type: ignore[import-untyped]

        corpus = [tokenize(document_text(d)) for d in docs]
        retriever = None
        if docs:
            retriever = bm25s.BM25()
            retriever.index(corpus, show_progress=False)
        return cls(docs, [frozenset(t) for t in corpus], retriever)

    def scores(self, query: str) -> np.ndarray:
        """BM25 score of every doc for ``query`` (float array aligned with ``docs``)."""
        if self._retriever is None:
            return np.zeros(0, dtype=np.float32)
        vocab: dict[str, int] = getattr(self._retriever, "vocab_dict")
        ids = [vocab[t] for t in tokenize(query) if t in vocab]
        if not ids:
            return np.zeros(len(self.docs), dtype=np.float32)
        result: np.ndarray = getattr(self._retriever, "get_scores_from_ids")(ids)
        return result

    def rank(self, query: str, allowed: frozenset[str] | None = None, limit: int | None = None) -> list[Ranked]:
        """Docs with a positive score, best first (ties: newer first, i.e. corpus order).
        ``allowed``: only docs whose relpath is in it; ``limit``: at most this many (the
        ranking is then computed by partial sort; ties straddling the cut are broken
        arbitrarily)."""
        scores = self.scores(query)
        if scores.size == 0:
            return []
        if allowed is not None:
            mask = np.fromiter((d.relpath in allowed for d in self.docs), dtype=bool, count=len(self.docs))
            scores = np.where(mask, scores, 0)
        idx = np.flatnonzero(scores > 0)
        if idx.size == 0:
            return []
        sub = scores[idx]
        if limit is not None and idx.size > limit:
            part = np.argpartition(-sub, limit - 1)[:limit]
            order = part[np.lexsort((idx[part], -sub[part]))]
        else:
            order = np.lexsort((idx, -sub))
        return [Ranked(int(idx[o]), float(sub[o])) for o in order]

    def position(self, relpath: str) -> int | None:
        """The index of the doc with ``relpath``, or ``None``."""
        if self._positions is None:
            self._positions = {d.relpath: i for i, d in enumerate(self.docs)}
        return self._positions.get(relpath)

    def matched_terms(self, query: str, index: int) -> list[str]:
        """The query tokens (deduplicated, in query order) that doc ``index`` contains."""
        seen: dict[str, None] = {}
        tokens = self._token_sets[index]
        for t in tokenize(query):
            if t in tokens:
                seen.setdefault(t, None)
        return list(seen)


def split_picks(ranked: Sequence[Ranked], max_picks: int = MAX_PICKS, ratio: float = PICK_RATIO) -> tuple[list[Ranked], list[Ranked]]:
    """``(picks, near_misses)`` from a ranking: picks score at least ``ratio`` × the top score
    (at most ``max_picks``); near misses are the next ``NEAR_MISSES`` ranked docs."""
    if not ranked:
        return [], []
    floor = ranked[0].score * ratio
    picks = [r for r in ranked[:max_picks] if r.score >= floor]
    rest = list(ranked[len(picks) : len(picks) + NEAR_MISSES])
    return picks, rest
