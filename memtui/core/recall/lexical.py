"""The lexical selector: BM25 (``bm25s``) over what recall knows of each memory.

Offline and instant, so it is the default when no API key is configured, the live
as-you-type preview, the source of "near misses" for every selector, and the prefilter of the
hybrid selector. It is memtui's stand-in for the reference's Sonnet selector, not a copy of
the reference.

**Document** of a memory: description (twice: it is the recall key), name, file name words,
type, and the head of the body within the 30 scanned lines.

**Across languages**: the document also holds the English glosses (``memtui.core.recall.gloss``,
CC-CEDICT) of the Chinese and kanji words of its description, name (their first
``GLOSSED_CHARS`` characters) and file name, each marked
with ``GLOSS_MARK``; a query is scored with its own tokens, then at ``CROSS_WEIGHT`` with its
words marked as glosses (an English prompt meets a Chinese memory) and with the glosses of its
own Chinese words (a Chinese prompt meets an English memory) — ``query_tokens``.

**Tokenisation** (``tokenize``): NFKC, lower case; runs of Chinese, Japanese or Korean
characters become overlapping character bigrams (a one-character run stays a unigram), so
"迁移到Kafka" matches "Kafka 迁移" without a word segmenter, minus those of hiragana alone
(particles and inflections: で, する, えて); other text splits into runs of letters and digits
(``snake_case`` and ``kebab-case`` split too), minus English stop words
(``memtui.core.recall.words``) and single ASCII letters and digits (the *s* of *what's*), with
a light suffix stemmer (``migrations``/``migrating`` → ``migrat``).

**Scoring**: ``bm25s`` with its defaults (Lucene variant, k1 = 1.5, b = 0.75, float32
scores). The index is built by ``bm25s.BM25.index`` through its documented extension point,
``build_index_from_ids``, overridden here to do the same arithmetic on whole numpy arrays
instead of one Python ``Counter`` and ``set`` per document; the scores are bit-for-bit those
of bm25s's own build (tests/unit/test_recall_lexical.py). Tokens go to the index as ids
(``token_ids``), never as one Python string per token: a thousand documents at a time as one
array of code points, words split by ``str.split`` once every other character is a space (each
distinct word stemmed once), CJK bigrams coded as integers. At 20,000 memories
(benchmarks/run.py) that took the build from 4–7 s and a 640 MB peak to about 1.1 s and
230 MB.

**Picks**: the best documents whose score is at least ``PICK_RATIO`` of the top score, at
most 5; **near misses**: the next ones with a positive score.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Iterable, Sequence
from collections.abc import Set as AbstractSet
from functools import cache
from itertools import islice
from typing import Any

import numpy as np

from memtui.core.recall.docs import RecallDoc
from memtui.core.recall.gloss import gloss_text, glosses
from memtui.core.recall.words import stop_words
from memtui.core.recall.words import stem as _stem
from memtui.core.recall.ranking import MAX_PICKS, NEAR_MISSES, PICK_RATIO, RELPATH, Ranked, split_picks  # noqa: F401 - their home before, still imported from here

# memtui's choice: documents tokenised per regular-expression pass when building the index
# (about 1 MB of text at the ~860 characters per document of benchmarks/generate.py); bounds
# the run strings alive at once.
BUILD_BATCH = 1000

# memtui's choices: the prefix of a memory's gloss tokens (a digit in it: the stemmer leaves
# such a token alone), and the weight of a match across languages against a match of the
# text's own words (checked on the calibration split of memtui/evalsets/recall and on
# benchmarks/heldback_recall; benchmarks/README.md, "Recall across languages").
GLOSS_MARK = "gl0ss"
CROSS_WEIGHT = 0.5
# memtui's choice: of a description and a name, the first this many characters are glossed (a
# description is one line; a 1,000-word one made the index build 3.5 times slower).
GLOSSED_CHARS = 500

# Code point ranges whose runs are split into bigrams.
_CJK_RANGES = (
    (0x1100, 0x11FF),  # Hangul Jamo
    (0x3040, 0x309F),  # Hiragana
    (0x30A0, 0x30FF),  # Katakana
    (0x3130, 0x318F),  # Hangul compatibility Jamo
    (0x3400, 0x4DBF),  # CJK extension A
    (0x4E00, 0x9FFF),  # CJK unified ideographs
    (0xAC00, 0xD7AF),  # Hangul syllables
    (0xF900, 0xFAFF),  # CJK compatibility ideographs
    (0xFF66, 0xFF9F),  # half-width Katakana
)
_CJK = "".join(f"{chr(lo)}-{chr(hi)}" for lo, hi in _CJK_RANGES)
_CJK_CHAR = re.compile(f"[{_CJK}]")
# A run: a maximal stretch of CJK characters, or of letters and digits that are not CJK (the
# words, ``[^\\W_]+``, of the text between CJK runs).
_RUN = re.compile(f"[{_CJK}]+|[^\\W_{_CJK}]+")
# For the index build: is the code point (clamped to 0xFFFF, which is not CJK) CJK?
_CJK_TABLE = np.zeros(0x10000, dtype=bool)
for _lo, _hi in _CJK_RANGES:
    _CJK_TABLE[_lo : _hi + 1] = True


def _normalise(text: str) -> str:
    return unicodedata.normalize("NFKC", text).lower()


def _is_hiragana(chars: str) -> bool:
    return all(0x3040 <= ord(c) <= 0x309F for c in chars)


def _run_tokens(run: str) -> tuple[str, ...]:
    """The tokens of one run of ``_RUN`` in normalised text: bigrams of a CJK run (a single
    character alone) but those of hiragana only, else the stemmed word, or nothing for a stop
    word or a single ASCII letter or digit."""
    if _CJK_CHAR.match(run):
        if len(run) == 1:
            return () if _is_hiragana(run) else (run,)
        return tuple(b for b in (run[i : i + 2] for i in range(len(run) - 1)) if not _is_hiragana(b))
    return () if run in stop_words() or len(run) == 1 and run.isascii() else (_stem(run),)


def tokenize(text: str) -> list[str]:
    """The tokens of ``text`` (see the module docstring). Order follows the text."""
    return [t for run in _RUN.findall(_normalise(text)) for t in _run_tokens(run)]


def query_tokens(query: str) -> list[tuple[str, float]]:
    """The tokens a query is scored with, each with its weight: its own (``tokenize``, weight
    1); then, across languages (weight ``CROSS_WEIGHT``), each of its own word tokens marked as
    a gloss (``GLOSS_MARK`` + token: it meets the English glosses of a Chinese or kanji memory)
    and the English glosses of its own Chinese or kanji words (``memtui.core.recall.gloss``:
    they meet an English memory's words). A gloss never meets a gloss: two Chinese texts meet
    through their characters. In that order; the query's own tokens as often as ``tokenize``
    gives them (BM25 counts a repeated query word each time), the others once."""
    own = tokenize(query)
    out = [(t, 1.0) for t in own]
    seen = set(own)
    cross = [GLOSS_MARK + t for t in dict.fromkeys(own) if not _CJK_CHAR.match(t)] + _gloss_tokens(query)
    for t in dict.fromkeys(cross):
        if t not in seen:
            out.append((t, CROSS_WEIGHT))
    return out


def display_token(token: str) -> str:
    """A token as the reasons show it: a gloss match as ``word (gloss)``."""
    return f"{token.removeprefix(GLOSS_MARK)} (gloss)" if token.startswith(GLOSS_MARK) else token


# A Han word → the tokens of its gloss words (``tokenize``), filled as words are met: the
# same few thousand words recur across a corpus, each stemmed once.
_GLOSS_TOKENS: dict[str, tuple[str, ...]] = {}


def _gloss_tokens(text: str) -> list[str]:
    """The tokens of the English glosses of ``text``'s Chinese or kanji words: those of
    ``tokenize(gloss_text(text))``, deduplicated, in order."""
    out: dict[str, None] = {}
    for word, words in glosses(text):
        tokens = _GLOSS_TOKENS.get(word)
        if tokens is None:
            tokens = _GLOSS_TOKENS[word] = tuple(tokenize(" ".join(words)))
        out.update(dict.fromkeys(tokens))
    return list(out)


def _marked_glosses(text: str) -> str:
    """The English glosses of ``text``'s Chinese or kanji words, each stemmed and marked with
    ``GLOSS_MARK`` (the mark's digit keeps the stemmer off it), space-separated."""
    return " ".join(GLOSS_MARK + t for t in _gloss_tokens(text))


@cache
def _word_table() -> np.ndarray:
    """For each code point of the Basic Multilingual Plane: is it a word character of ``_RUN``
    (``[^\\W_]``, i.e. ``str.isalnum``) outside the CJK ranges? (~10 ms, once.)"""
    alnum = np.fromiter((chr(c).isalnum() for c in range(0x10000)), dtype=bool, count=0x10000)
    return alnum & ~_CJK_TABLE


class _WordIds(dict[str, int]):
    """A word run → the id in ``vocab`` of its token, -2 for a stop word, -1 for the NUL that
    ends a document; a new word is stemmed and numbered when first looked up (so known words
    are looked up without leaving C)."""

    def __init__(self, vocab: dict[str, int]) -> None:
        super().__init__({"\x00": -1})
        self.vocab = vocab

    def __missing__(self, run: str) -> int:
        tid = -2 if run in stop_words() or len(run) == 1 and run.isascii() else self.vocab.setdefault(_stem(run), len(self.vocab))
        self[run] = tid
        return tid


def token_ids(texts: Iterable[str]) -> tuple[list[np.ndarray], dict[str, int]]:
    """``(ids, vocab)``: for each text, the ids of the tokens of ``tokenize(text)`` (an int32
    array holding each token as often as ``tokenize`` gives it, word tokens first, then CJK
    ones), and the vocabulary (token → id, dense from 0).

    Texts are joined ``BUILD_BATCH`` at a time with a NUL after each (a NUL inside a text is
    read as the separator it is for ``tokenize``), normalised at once and turned into an array
    of code points. Words: every character that is not a word character (nor an end-of-document
    NUL) becomes a space and ``str.split`` gives the runs, each distinct one stemmed once. CJK:
    the bigrams and lone characters are coded as integers (``first << 21 | second``; a lone
    character is its code point) and only the distinct ones become strings."""
    vocab: dict[str, int] = {}
    word_ids = _WordIds(vocab)
    cjk_keys = np.zeros(0, dtype=np.int64)  # the CJK tokens seen so far, sorted, ...
    cjk_ids = np.zeros(0, dtype=np.int64)  # ... and their ids
    out: list[np.ndarray] = []
    it = iter(texts)
    while batch := list(islice(it, BUILD_BATCH)):
        text = _normalise("".join(t.replace("\x00", " ") + " \x00 " for t in batch))
        codes = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
        del text
        bmp = np.minimum(codes, 0xFFFF)  # U+FFFF is neither a word character nor CJK
        word = _word_table()[bmp]
        beyond = np.flatnonzero(codes > 0xFFFF)
        if beyond.size:  # letters and digits past the BMP (none is CJK for ``_CJK_RANGES``)
            word[beyond] = [chr(c).isalnum() for c in codes[beyond].tolist()]
        spaced = np.where(word | (codes == 0), codes, 32).tobytes().decode("utf-32-le")
        runs = spaced.split()  # the word runs and the NULs, as ``_RUN`` finds the words
        del spaced, word
        words = np.fromiter(map(word_ids.__getitem__, runs), dtype=np.int64, count=len(runs))
        del runs
        ends = words == -1
        word_docs = (np.cumsum(ends) - ends)[words >= 0]
        words = words[words >= 0]

        cjk = _CJK_TABLE[bmp]
        hira = (bmp >= 0x3040) & (bmp <= 0x309F)
        pair = cjk[:-1] & cjk[1:]
        starts = np.flatnonzero(pair & ~(hira[:-1] & hira[1:]))
        lone = np.flatnonzero(cjk & ~hira & ~np.concatenate(([False], pair)) & ~np.concatenate((pair, [False])))
        keys = np.concatenate(((codes[starts].astype(np.int64) << 21) | codes[starts + 1], codes[lone].astype(np.int64)))
        cjk_docs = np.searchsorted(np.flatnonzero(codes == 0), np.concatenate((starts, lone)))
        del codes, bmp, cjk, pair, hira
        unique, inverse = np.unique(keys, return_inverse=True)
        at = np.minimum(np.searchsorted(cjk_keys, unique), max(cjk_keys.size - 1, 0))
        known = cjk_keys[at] == unique if cjk_keys.size else np.zeros(unique.size, dtype=bool)
        new = unique[~known]
        new_ids = np.arange(len(vocab), len(vocab) + new.size, dtype=np.int64)
        vocab.update(zip(map(_cjk_token, new.tolist()), new_ids.tolist(), strict=True))
        lookup = np.empty(unique.size, dtype=np.int64)
        lookup[known] = cjk_ids[at[known]]
        lookup[~known] = new_ids
        cjk_keys, cjk_ids = np.concatenate((cjk_keys, new)), np.concatenate((cjk_ids, new_ids))
        order = np.argsort(cjk_keys)
        cjk_keys, cjk_ids = cjk_keys[order], cjk_ids[order]

        docs = np.concatenate((word_docs, cjk_docs))
        ids = np.concatenate((words, lookup[inverse]))[np.argsort(docs, kind="stable")].astype(np.int32)
        out.extend(np.split(ids, np.cumsum(np.bincount(docs, minlength=len(batch)))[:-1]))
    return out, vocab


def _cjk_token(key: int) -> str:
    return chr(key >> 21) + chr(key & 0x1FFFFF) if key >> 21 else chr(key)


@cache
def _bm25_class() -> Any:
    """``bm25s.BM25`` with a vectorised ``build_index_from_ids`` (imported on first use:
    bm25s takes ~0.2 s to import)."""
    import bm25s  # type: ignore[import-untyped]

    class VectorBM25(bm25s.BM25):  # type: ignore[misc]
        """bm25s's Lucene BM25; ``build_index_from_ids`` computes the same float32 score
        matrix as bm25s's own (same formula, same float64 intermediates), on whole arrays."""

        def build_index_from_ids(self, unique_token_ids: Sequence[int], corpus_token_ids: Sequence[Sequence[int]],
                                 show_progress: bool = True, leave_progress: bool = False) -> dict[str, Any]:
            """The score matrix (``{"data", "indices", "indptr", "num_docs"}``, CSC: one column
            per token id, doc indices ascending within a column) for ``corpus_token_ids``, one
            sequence of token ids (< ``len(unique_token_ids)``) per document. Other variants
            than Lucene fall back to bm25s's own build."""
            if self.method != "lucene" or self.idf_method != "lucene":
                return super().build_index_from_ids(unique_token_ids, corpus_token_ids, show_progress, leave_progress)  # type: ignore[no-any-return]
            n_docs, n_vocab = len(corpus_token_ids), len(unique_token_ids)
            lengths = np.fromiter(map(len, corpus_token_ids), dtype=np.int64, count=n_docs)
            # (token << 32 | doc) for every token, sorted: the CSC order; equal neighbours are
            # repeats of one token in one doc. In place where possible (20,000 memories: 4.3
            # million tokens, 34 MB per int64 array).
            keys = np.empty(int(lengths.sum()), dtype=np.int64)
            if n_docs:
                np.concatenate(corpus_token_ids, out=keys)
            keys <<= 32
            keys |= np.repeat(np.arange(n_docs, dtype=np.int32), lengths)
            keys.sort()
            starts = np.ones(keys.size, dtype=bool)
            np.not_equal(keys[1:], keys[:-1], out=starts[1:])
            first = np.flatnonzero(starts)
            tf = np.empty(first.size, dtype=self.dtype)
            np.subtract(first[1:], first[:-1], out=tf[:-1])
            tf[-1:] = keys.size - first[-1:]
            del first  # (at 100,000 memories each of these arrays is 60-170 MB: one at a time)
            pairs = keys[starts]
            del keys, starts
            docs = (pairs & 0xFFFFFFFF).astype(self.int_dtype)
            tokens = pairs
            tokens >>= 32
            df = np.bincount(tokens, minlength=n_vocab)
            # bm25s (Lucene): idf = log(1 + (N - df + 0.5) / (df + 0.5)) in Python floats, kept
            # as float32; tfc = tf / (k1 * ((1 - b) + b * l_d / l_avg) + tf) in float64, l_d the
            # doc's token count, l_avg their mean; score = float32(idf * tfc).
            values, which = np.unique(df, return_inverse=True)
            idf = np.array([math.log(1 + (n_docs - v + 0.5) / (v + 0.5)) for v in values.tolist()], dtype=self.dtype)[which]
            l_avg = lengths.mean() if tokens.size else np.float64(1)  # (no token: nothing to score)
            weight = idf[tokens]
            del tokens, pairs
            den = (self.k1 * ((1 - self.b) + self.b * lengths / l_avg))[docs]
            den += tf
            np.divide(tf, den, out=den)
            del tf
            den *= weight
            del weight
            indptr = np.zeros(n_vocab + 1, dtype=np.int64)
            np.cumsum(df, out=indptr[1:])
            self.nonoccurrence_array = None
            return {"data": den.astype(self.dtype), "indices": docs, "indptr": indptr, "num_docs": n_docs}

    return VectorBM25


def document_text(doc: RecallDoc, marked: bool = True) -> str:
    """The text indexed for ``doc`` (see the module docstring), then the English glosses of the
    Chinese or kanji words of its description, name and file name (``memtui.core.recall.gloss``):
    ``marked`` (for the lexical index) each stemmed and marked with ``GLOSS_MARK``, else as
    plain words (the text the semantic selector embeds)."""
    header = doc.header
    stem = doc.relpath.rsplit("/", 1)[-1].removesuffix(".md")
    desc = header.description or ""
    name = doc.name or ""
    key = f"{desc[:GLOSSED_CHARS]}\n{name[:GLOSSED_CHARS]}\n{stem}"
    parts = [desc, desc, name, stem.replace("_", " ").replace("-", " "), header.type or "", doc.body_head,
             _marked_glosses(key) if marked else gloss_text(key)]
    return "\n".join(p for p in parts if p)


class LexicalIndex:
    """A BM25 index over a fixed list of docs (same order). Build with ``LexicalIndex.build``."""

    def __init__(self, docs: Sequence[RecallDoc], retriever: Any | None) -> None:
        self.docs = tuple(docs)
        self._retriever = retriever
        self._positions: dict[str, int] | None = None

    @classmethod
    def build(cls, docs: Sequence[RecallDoc]) -> LexicalIndex:
        """Tokenise and index ``docs`` (an empty list gives an index that matches nothing)."""
        if not docs:
            return cls(docs, None)
        ids, vocab = token_ids(document_text(d) for d in docs)
        retriever = _bm25_class()()
        retriever.index((ids, vocab), create_empty_token=False, show_progress=False)
        return cls(docs, retriever)

    @classmethod
    def from_matrix(cls, docs: Sequence[RecallDoc], matrix: dict[str, Any], vocab: dict[str, int]) -> LexicalIndex:
        """The index whose score matrix (``{"data", "indices", "indptr", "num_docs"}``, as
        ``build_index_from_ids`` returns it) and vocabulary (token → column, dense from 0) are
        given, e.g. kept by ``memtui.core.recall.keptlexical``; the arrays are used as they are
        (a read-only ``np.memmap`` will do). The caller vouches that they are consistent:
        ``num_docs == len(docs)``, every index below it, one column per token."""
        retriever = _bm25_class()()
        retriever.scores = matrix
        retriever.vocab_dict = vocab
        retriever.unique_token_ids_set = set(vocab.values())  # (as ``bm25s.BM25.index`` and ``load`` set it)
        retriever.nonoccurrence_array = None  # (Lucene scores need none)
        return cls(docs, retriever)

    def matrix(self) -> tuple[dict[str, Any] | None, dict[str, int]]:
        """``(score matrix, vocabulary)`` as ``from_matrix`` takes them; ``(None, {})`` for an
        index over no docs."""
        if self._retriever is None:
            return None, {}
        return self._retriever.scores, self._retriever.vocab_dict

    def scores(self, query: str) -> np.ndarray:
        """BM25 score of every doc for ``query`` (float array aligned with ``docs``)."""
        if self._retriever is None:
            return np.zeros(0, dtype=np.float32)
        vocab: dict[str, int] = self._retriever.vocab_dict
        out = np.zeros(len(self.docs), dtype=np.float32)
        for weight in (1.0, CROSS_WEIGHT):
            ids = [vocab[t] for t, w in query_tokens(query) if w == weight and t in vocab]
            if ids:
                scores = self._retriever.get_scores_from_ids(ids)
                out += scores if weight == 1.0 else np.float32(weight) * scores
        return out

    def rank(self, query: str, allowed: AbstractSet[str] | np.ndarray | None = None, limit: int | None = None) -> list[Ranked]:
        """Docs with a positive score, best first (ties: newer first, i.e. corpus order).
        ``allowed``: only docs whose relpath is in it, or whose entry is true when it is a
        boolean array aligned with ``docs``; ``limit``: at most this many (the
        ranking is then computed by partial sort; ties straddling the cut are broken
        arbitrarily)."""
        scores = self.scores(query)
        if scores.size == 0:
            return []
        if isinstance(allowed, np.ndarray):
            scores = np.where(allowed, scores, 0)
        elif allowed is not None:
            mask = np.fromiter(map(allowed.__contains__, map(RELPATH, self.docs)), dtype=bool, count=len(self.docs))
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

    def term_share(self, query: str) -> np.ndarray:
        """For every doc, the share (0–1) of the query's term weight it matches: the summed BM25
        idf of the distinct query tokens the doc contains over that of all of them (a token no
        memory contains weighs the most, as a term in no document does). Aligned with
        ``docs``; zeros when the query has no token."""
        out = np.zeros(len(self.docs), dtype=np.float64)
        if self._retriever is None:
            return out
        vocab: dict[str, int] = self._retriever.vocab_dict
        matrix: dict[str, Any] = self._retriever.scores
        indices, indptr = matrix["indices"], matrix["indptr"]
        n = len(self.docs)
        weights: list[tuple[int | None, float]] = []
        for t, weight in dict(query_tokens(query)).items():  # each token once (one weight each), in query order
            tid = vocab.get(t)
            df = 0 if tid is None else int(indptr[tid + 1] - indptr[tid])
            weights.append((tid, weight * math.log(1 + (n - df + 0.5) / (df + 0.5))))  # bm25s's Lucene idf
        total = sum(w for _, w in weights)
        if total <= 0:
            return out
        for tid, w in weights:
            if tid is not None:
                out[indices[indptr[tid] : indptr[tid + 1]]] += w / total
        return out

    def matched_terms(self, query: str, index: int) -> list[str]:
        """The query tokens (deduplicated, in query order) that doc ``index`` contains: those
        whose column of the score matrix has an entry for ``index``."""
        if self._retriever is None:
            return []
        vocab: dict[str, int] = self._retriever.vocab_dict
        matrix: dict[str, Any] = self._retriever.scores
        indices, indptr = matrix["indices"], matrix["indptr"]
        seen: dict[str, None] = {}
        for t, _ in query_tokens(query):
            tid = vocab.get(t)
            if tid is None:
                continue
            column = indices[indptr[tid] : indptr[tid + 1]]
            at = int(np.searchsorted(column, index))
            if at < column.size and column[at] == index:
                seen[display_token(t)] = None
        return list(seen)
