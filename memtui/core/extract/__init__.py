"""Extraction (docs/behaviour.md §7): capture memories from finished conversations.

- ``cues`` / ``offline``: the offline extractor (explicit "remember…" cues only, heuristic);
- ``claude``: the claude extractor (an agent run under the shared tool policy, writes staged);
- ``cursor``: the per-session cursor and lock in memtui's state dir;
- ``engine``: ``extract()`` — lock, cursor, mutual exclusion, extractor, inbox or apply;
- ``excerpt``: the source conversation of a proposal or memory (provenance);
- ``hook``: the agent's Stop hook input and memtui's hook log.

- ``inbox``: the proposals waiting for a person to accept, edit or reject.
"""

from __future__ import annotations

from memtui.core.extract.base import (
    Draft,
    ExtractionRequest,
    Extractor,
    ExtractorError,
    ExtractorName,
)
from memtui.core.extract.cues import Cue, find_cues
from memtui.core.extract.cursor import Cursor, CursorStore
from memtui.core.extract.engine import (
    EXTRACTOR_CHOICES,
    ExtractionResult,
    ExtractorChoice,
    extract,
    resolve_extractor,
)
from memtui.core.extract.excerpt import (
    ExcerptTurn,
    SourceExcerpt,
    find_transcript,
    memory_excerpt,
    proposal_excerpt,
    source_excerpt,
)
from memtui.core.extract.offline import OfflineExtractor

__all__ = [
    "EXTRACTOR_CHOICES",
    "Cue",
    "Cursor",
    "CursorStore",
    "Draft",
    "ExcerptTurn",
    "ExtractionRequest",
    "ExtractionResult",
    "Extractor",
    "ExtractorChoice",
    "ExtractorError",
    "ExtractorName",
    "OfflineExtractor",
    "SourceExcerpt",
    "extract",
    "find_cues",
    "find_transcript",
    "memory_excerpt",
    "proposal_excerpt",
    "resolve_extractor",
    "source_excerpt",
]
