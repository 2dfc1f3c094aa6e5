"""A time-bounded search of the project for identifiers: which of a set of words occur.

In a git repository this is one ``git grep`` for all the words at once: fixed strings, whole
words, binary files skipped (``-I``), tracked and untracked files that no ignore rule hides
(``--untracked``), the memory dir left out, ``-o -h`` so only the matched words come back. The
output is read as it streams; the process is stopped as soon as every word has been seen or the
deadline passes. Without git, the files of a ``ProjectTree`` walk are read (up to
``MAX_FILE_BYTES`` each; a file with a NUL byte in its first 8 KiB is binary) and split into
identifiers.

``close_identifiers`` finds what a missing identifier may have become: the identifiers of the
project that share a part with it (``processOrder`` → ``process``, ``order``), by one more
bounded search, for ``rapidfuzz`` to rank.
"""

from __future__ import annotations

import os
import re
import selectors
import subprocess
import tempfile
import time
from collections.abc import Collection, Iterable
from dataclasses import dataclass

from memtui.core.base.safe_read import read_regular
from memtui.core.verify.tree import ProjectTree, git_env

# memtui's bounds: the default time a search may take (seconds), bytes read of one file without
# git, and identifiers gathered for close matches.
DEFAULT_TIMEOUT_S = 5.0
MAX_FILE_BYTES = 4 * 1024 * 1024
MAX_CANDIDATES = 200_000
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_PARTS = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")


@dataclass(frozen=True, slots=True)
class WordSearch:
    """``found``: the words that occur; ``complete``: the search covered the whole project
    (``False``: the deadline or a failure stopped it — a word not found is then unknown);
    ``how``: ``"git grep"`` or ``"walk"``; ``error``: why it stopped early, or ``None``."""

    found: frozenset[str]
    complete: bool
    how: str
    error: str | None = None


def _pathspec(tree: ProjectTree) -> list[str]:
    return ["--", ".", *(f":(exclude){e}" for e in tree.excluded)]


def _stream_git_grep(tree: ProjectTree, args: list[str], patterns: Collection[str], deadline: float, want: set[str] | None) -> tuple[set[str], bool, str | None]:
    """Run ``git grep args -f <patterns>`` and collect the distinct matches (one per line of
    output). Stops when ``want`` (if given) is all found or at ``deadline``."""
    found: set[str] = set()
    with tempfile.NamedTemporaryFile("w", encoding="utf-8", suffix=".patterns", delete=False) as fh:
        fh.write("\n".join(patterns) + "\n")
        pattern_file = fh.name
    try:
        try:
            proc = subprocess.Popen(
                ["git", "-C", str(tree.root), "grep", "--untracked", "-I", "-o", "-h", "--no-color", *args, "-f", pattern_file, *_pathspec(tree)],
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                stdin=subprocess.DEVNULL,
                env=git_env(),
            )
        except OSError as exc:
            return found, False, f"git grep could not start: {exc.strerror or exc}"
        assert proc.stdout is not None
        sel = selectors.DefaultSelector()
        sel.register(proc.stdout, selectors.EVENT_READ)
        rest = b""
        stopped: str | None = None
        try:
            while True:
                left = deadline - time.monotonic()
                if left <= 0:
                    stopped = "the time limit"
                    break
                if not sel.select(timeout=min(left, 0.5)):
                    continue
                chunk = os.read(proc.stdout.fileno(), 1 << 16)
                if not chunk:
                    break
                lines = (rest + chunk).split(b"\n")
                rest = lines.pop()
                found.update(line.decode("utf-8", errors="replace") for line in lines if line)
                if want is not None and want <= found:
                    break
        finally:
            sel.close()
            if proc.poll() is None:
                proc.kill()
            proc.wait()
            proc.stdout.close()
        if rest:
            found.add(rest.decode("utf-8", errors="replace"))
        if stopped is not None:
            return found, False, f"stopped at {stopped}"
        if want is not None and want <= found:
            return found, True, None
        # git grep exits 1 when nothing matched; 128 and up is an error
        if proc.returncode not in (0, 1) and proc.returncode >= 0:
            return found, False, f"git grep failed (exit {proc.returncode})"
        return found, True, None
    finally:
        os.unlink(pattern_file)


def _walk_files(tree: ProjectTree, deadline: float) -> Iterable[str | None]:
    """The text of each file of ``tree`` (binary and unreadable files skipped); ``None`` once
    the deadline passed."""
    for rel in sorted(tree.files):
        if time.monotonic() > deadline:
            yield None
            return
        try:
            data, _ = read_regular(tree.root / rel, MAX_FILE_BYTES)
        except OSError:
            continue
        if b"\0" in data[:8192]:
            continue
        yield data.decode("utf-8", errors="replace")


def find_words(tree: ProjectTree, words: Collection[str], *, timeout: float = DEFAULT_TIMEOUT_S) -> WordSearch:
    """Which of ``words`` (identifiers) occur as whole words in the project (see the module
    doc). Never raises; ``timeout`` in seconds."""
    want = set(words)
    if not want:
        return WordSearch(frozenset(), True, "none")
    deadline = time.monotonic() + timeout
    if tree.source == "git":
        found, complete, error = _stream_git_grep(tree, ["-F", "-w"], sorted(want), deadline, want)
        return WordSearch(frozenset(found & want), complete, "git grep", error)
    found_walk: set[str] = set()
    for text in _walk_files(tree, deadline):
        if text is None:
            return WordSearch(frozenset(found_walk), False, "walk", "stopped at the time limit")
        found_walk.update(w for w in _WORD.findall(text) if w in want)
        if found_walk >= want:
            break
    return WordSearch(frozenset(found_walk), True, "walk")


def word_parts(identifier: str) -> list[str]:
    """The lower-cased parts of an identifier of three letters or more: ``processOrder`` →
    ``process``, ``order``; ``write_batch`` → ``write``, ``batch``."""
    parts = [p.lower() for chunk in identifier.split("_") for p in _PARTS.findall(chunk)]
    return [p for p in dict.fromkeys(parts) if len(p) >= 3 and not p.isdigit()]


def close_identifiers(tree: ProjectTree, missing: Collection[str], *, timeout: float = DEFAULT_TIMEOUT_S) -> set[str]:
    """Identifiers of the project that contain a part (``word_parts``) of one of ``missing``,
    case-insensitively: the candidates a renamed symbol may now be. Bounded by ``timeout``
    and ``MAX_CANDIDATES``; never raises."""
    parts = sorted({p for w in missing for p in word_parts(w)})
    if not parts:
        return set()
    deadline = time.monotonic() + timeout
    if tree.source == "git":
        alternation = "|".join(re.escape(p) for p in parts)
        pattern = f"[A-Za-z0-9_]*({alternation})[A-Za-z0-9_]*"
        found, _complete, _error = _stream_git_grep(tree, ["-E", "-i"], [pattern], deadline, None)
        return set(list(found)[:MAX_CANDIDATES])
    out: set[str] = set()
    for text in _walk_files(tree, deadline):
        if text is None:
            break
        low_parts = parts
        for w in set(_WORD.findall(text)):
            lw = w.lower()
            if any(p in lw for p in low_parts):
                out.add(w)
        if len(out) >= MAX_CANDIDATES:
            break
    return out
