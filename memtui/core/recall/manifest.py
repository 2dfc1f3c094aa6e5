"""The manifest the reference sends to its selector, and the rules that skip recall (docs/behaviour.md §6).

A manifest line is ``- [type] <relpath> (<ISO-8601 mtime>): <description>``; ``[type] `` is
left out when the memory has no recognised type and ``: <description>`` when it has none.
The mtime is printed as JavaScript's ``new Date(mtimeMs).toISOString()``
(``2026-03-02T09:00:00.000Z``). Lines are joined with ``\\n`` (no trailing newline).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from memtui.core.memory.catalog import iso_utc
from memtui.core.memory.headers import MemoryHeader

# The reference's MAX_MEMORY_FILES: only the 200 newest memories reach the manifest.
MANIFEST_CAP = 200
# The reference's session recall budget (RELEVANT_MEMORIES_CONFIG.MAX_SESSION_BYTES =
# 60 * 1024): once this much surfaced memory content is in the conversation, recall stops.
# Measured like the reference, as the `.length` (UTF-16 code units) of the injected contents.
SESSION_BUDGET = 60 * 1024
_WHITESPACE = re.compile(r"\s")
# Chinese and Japanese script (Han, kana, their punctuation and half-width forms) and Hangul: text
# written without spaces between words.
_NO_SPACE_SCRIPT = re.compile("[\u3000-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\uff00-\uffef]")


@dataclass(frozen=True, slots=True)
class Manifest:
    """The manifest of a list of memories: ``headers`` (at most the cap, in order), ``lines``
    (one per header) and ``total`` (how many memories there were before the cap)."""

    headers: tuple[MemoryHeader, ...]
    lines: tuple[str, ...]
    total: int

    @property
    def text(self) -> str:
        """The lines joined with ``\\n``, as the reference's ``formatMemoryManifest`` does."""
        return "\n".join(self.lines)

    @property
    def count(self) -> int:
        """Number of lines."""
        return len(self.lines)


def manifest_line(header: MemoryHeader) -> str:
    """One manifest line for ``header`` (see the module docstring for the format)."""
    tag = f"[{header.type}] " if header.type else ""
    desc = f": {header.description}" if header.description else ""
    return f"- {tag}{header.relpath} ({iso_utc(header.mtime)}){desc}"


def build_manifest(headers: Sequence[MemoryHeader], cap: int = MANIFEST_CAP) -> Manifest:
    """The manifest of the first ``cap`` of ``headers`` (pass them newest first for the
    reference's manifest; 200: the reference's cap)."""
    kept = tuple(headers[:cap])
    return Manifest(kept, tuple(manifest_line(h) for h in kept), len(headers))


def skip_reason(query: str, surfaced_units: int = 0, budget: int = SESSION_BUDGET) -> str | None:
    """Why the reference would not run recall for ``query``, or ``None`` when it would.

    - a single word (no whitespace once trimmed, the empty query included): the reference's
      ``!/\\s/.test(text.trim())`` gate — which also skips every prompt written in Chinese or
      Japanese without spaces, and says so;
    - ``surfaced_units`` (UTF-16 units of memory content already surfaced this session) at or
      over ``budget`` (60 KiB: the reference's session budget).
    """
    if not _WHITESPACE.search(query.strip()):
        if _NO_SPACE_SCRIPT.search(query):
            return (
                "no whitespace: the agent counts a prompt without spaces as one word, so Chinese and Japanese"
                " prompts without spaces never get recall"
            )
        return "single-word query: the agent only recalls for prompts of two words or more"
    if surfaced_units >= budget:
        return (
            f"session budget spent: {surfaced_units:,} of {budget:,} characters of memories already shown in this session"
            " (the agent stops recalling there)"
        )
    return None
