"""Merging duplicate memories without losing a sentence (docs/behaviour.md §8 "merge duplicates into
existing files"): into the older file, keeping every distinct sentence.

A sentence is a run of a line ending in ``.``/``!``/``?`` (followed by a space) or ``。！？``.
A sentence of the newer file is *already there* when its ``normalize_prose`` form (NFKC,
case-folded, Markdown marks and list markers removed, whitespace collapsed — the doctor's
containment rule) is a substring of the kept file's. Missing sentences are appended to the kept
file's body, line by line as they were written, after a blank line.
"""

from __future__ import annotations

import re

from memtui.core.doctor.content import normalize_prose
from memtui.core.writes.rewrite import newline_of

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|(?<=[。！？])")
_LIST_MARK = re.compile(r"^(\s*(?:[-*+]|\d+[.)])\s+)")


def sentences(line: str) -> list[str]:
    """The sentences of one line (stripped, empty ones dropped)."""
    return [s.strip() for s in _SENTENCE_END.split(line.strip()) if s.strip()]


def missing_lines(kept_text: str, other_parts: list[str]) -> list[str]:
    """The lines to append to ``kept_text`` so that every sentence of ``other_parts`` (texts:
    a description, a body) is in it. A line whose sentences are all missing is kept whole
    (list marker included); a partly present line keeps only its missing sentences."""
    have = normalize_prose(kept_text)
    out: list[str] = []
    for part in other_parts:
        for raw in part.replace("\r\n", "\n").split("\n"):
            line = raw.rstrip()
            sents = sentences(line)
            if not sents:
                continue
            missing = [s for s in sents if normalize_prose(s) and normalize_prose(s) not in have]
            if not missing:
                continue
            if len(missing) == len(sents):
                new = line.strip() if not _LIST_MARK.match(line) else line.lstrip()
            else:
                new = " ".join(missing)
            out.append(new)
            have = f"{have} {normalize_prose(new)}"
    return out


def append_block(text: str, lines: list[str]) -> str:
    """``text`` with ``lines`` appended after a blank line (the file's line ends kept)."""
    if not lines:
        return text
    nl = newline_of(text) if text else "\n"
    if text and not text.endswith("\n"):
        text += nl
    if text.strip():
        text += nl
    return text + nl.join(lines) + nl
