"""A time-bounded look for identifiers in the project: which of a set of words occur, and what a
missing one may have become.

The files are the ``ProjectTree``'s (``git ls-files``, or the ``.gitignore``-aware walk), each
read once (up to ``MAX_FILE_BYTES``; a file with a NUL byte in its first 8 KiB is binary and
skipped) and split into identifiers (``[A-Za-z_][A-Za-z0-9_]*``) with one regular expression;
their set is the project's vocabulary. A claimed symbol occurs when each of its parts is in it.
The read stops at the deadline; what was read still counts, and the search says it is
incomplete (a word not found is then unknown, not missing).

Why not ``git grep``: with thousands of fixed strings and ``-w``/``-o`` it tries every pattern on
every line — 38 s for 3,000 symbols over 2,000 files on this project's benchmark machine, where
this pass takes 0.3 s for 4,000 (``benchmarks/verify_bench.py``). One ``git grep`` for one word is
the benchmark's baseline.

``close_identifiers`` answers from the same vocabulary: the identifiers that contain a part of a
missing one (``processOrder`` → ``process``, ``order``), for ``rapidfuzz`` to rank.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Collection
from dataclasses import dataclass, field

from memtui.core.base.wording import counted
from memtui.core.base.safe_read import read_regular
from memtui.core.verify.tree import ProjectTree

# memtui's bounds: the default time the read may take (seconds), bytes read of one file, and
# identifiers returned as close-match candidates.
DEFAULT_TIMEOUT_S = 5.0
MAX_FILE_BYTES = 4 * 1024 * 1024
MAX_CANDIDATES = 20_000
_WORD = re.compile(rb"[A-Za-z_][A-Za-z0-9_]*")
_PARTS = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")
_DEADLINE_EVERY = 64  # files read between two looks at the clock


@dataclass(slots=True)
class Vocabulary:
    """The identifiers of the project's text files: ``words`` (bytes, ASCII), ``complete``
    (every file was read), ``files`` read, ``error`` (why it stopped early, or ``None``)."""

    words: set[bytes] = field(default_factory=set)
    complete: bool = True
    files: int = 0
    error: str | None = None


@dataclass(frozen=True, slots=True)
class WordSearch:
    """``found``: the words that occur; ``complete``: the whole project was read (``False``: a
    word not found is unknown); ``how``: what was read; ``error``: why it stopped, or ``None``."""

    found: frozenset[str]
    complete: bool
    how: str
    error: str | None = None


def read_vocabulary(tree: ProjectTree, *, timeout: float = DEFAULT_TIMEOUT_S) -> Vocabulary:
    """The identifiers of ``tree``'s files (see the module doc). Never raises."""
    vocab = Vocabulary()
    deadline = time.monotonic() + timeout
    root = os.fspath(tree.root)
    for n, rel in enumerate(sorted(tree.files)):
        if n % _DEADLINE_EVERY == 0 and time.monotonic() > deadline:
            vocab.complete = False
            vocab.error = f"stopped at the time limit ({timeout:g} s) after {vocab.files:,} of {counted(len(tree.files), 'file')}"
            break
        try:
            data, _ = read_regular(os.path.join(root, rel), MAX_FILE_BYTES)
        except OSError:
            continue
        tree.remember_lines(rel, data)
        if b"\0" in data[:8192]:
            continue
        vocab.words.update(_WORD.findall(data))
        vocab.files += 1
    return vocab


def find_words(tree: ProjectTree, words: Collection[str], *, timeout: float = DEFAULT_TIMEOUT_S, vocabulary: Vocabulary | None = None) -> WordSearch:
    """Which of ``words`` (identifiers) occur as whole words in the project; ``vocabulary``: a
    read made earlier. Never raises; ``timeout`` in seconds."""
    if not words:
        return WordSearch(frozenset(), True, "none")
    vocab = vocabulary if vocabulary is not None else read_vocabulary(tree, timeout=timeout)
    found = frozenset(w for w in words if w.isascii() and w.encode("ascii") in vocab.words)
    return WordSearch(found, vocab.complete, f"{counted(vocab.files, 'file')} read", vocab.error)


def word_parts(identifier: str) -> list[str]:
    """The lower-cased parts of an identifier of three letters or more: ``processOrder`` →
    ``process``, ``order``; ``write_batch`` → ``write``, ``batch``."""
    parts = [p.lower() for chunk in identifier.split("_") for p in _PARTS.findall(chunk)]
    return [p for p in dict.fromkeys(parts) if len(p) >= 3 and not p.isdigit()]


def close_identifiers(vocabulary: Vocabulary, missing: Collection[str]) -> set[str]:
    """Identifiers of the vocabulary that contain a part (``word_parts``) of one of ``missing``,
    case-insensitively: the candidates a renamed symbol may now be (at most
    ``MAX_CANDIDATES``)."""
    parts = sorted({p for w in missing for p in word_parts(w)})
    if not parts or not vocabulary.words:
        return set()
    joined = b"\n".join(vocabulary.words).decode("ascii")
    pattern = re.compile("|".join(re.escape(p) for p in parts), re.IGNORECASE)
    out: set[str] = set()
    pos = 0
    while len(out) < MAX_CANDIDATES:
        m = pattern.search(joined, pos)
        if m is None:
            break
        start = joined.rfind("\n", 0, m.start()) + 1
        end = joined.find("\n", m.end())
        end = len(joined) if end < 0 else end
        out.add(joined[start:end])
        pos = end + 1  # one hit per identifier is enough
    return out
