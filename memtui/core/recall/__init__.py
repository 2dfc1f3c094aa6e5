"""Recall (docs/behaviour.md §6): which memories the agent pulls into a conversation for a prompt, and why.

- ``corpus``: the one-pass scan (first 30 lines of each memory, newest first);
- ``manifest``: the reference's manifest lines, the 200 cap and the skip rules;
- ``lexical``: the offline BM25 selector (CJK-aware tokenisation);
- ``claude``: the reference's side request (system prompt, user message, structured output);
- ``schema``: the structured output as a pydantic model (imported when a request is sent);
- ``ranking``: a ranking's shape and how picks are cut from it (no numpy);
- ``inject``: the exact text injected for the picks;
- ``engine``: ``recall()`` tying them together, and the ``hybrid`` selector;
- ``status``: what the recall badge says about the chosen selector.
"""

from __future__ import annotations

from memtui.core.recall.claude import (
    DEFAULT_MODEL,
    SYSTEM_PROMPT,
    ClaudeRequest,
    has_credentials,
    make_client,
)
from memtui.core.recall.corpus import RecallCorpus, RecallDoc, load_corpus
from memtui.core.recall.engine import (
    SELECTOR_NAMES,
    ClaudeSelector,
    HybridSelector,
    LexicalSelector,
    NearMiss,
    Pick,
    RecallResult,
    Selection,
    Selector,
    SelectorName,
    OfflineCause,
    SelectorChoice,
    choose_model,
    choose_selector,
    recall,
    resolve_selector,
)
from memtui.core.recall.inject import InjectedMemory
from memtui.core.recall.status import SelectorState, SelectorStatus, selector_status
from memtui.core.recall.manifest import (
    MANIFEST_CAP,
    SESSION_BUDGET,
    Manifest,
    build_manifest,
    manifest_line,
    skip_reason,
)


def __getattr__(name: str) -> object:
    # ``SelectedMemories`` is a pydantic model: imported on first use (see ``schema``).
    if name == "SelectedMemories":
        from memtui.core.recall.schema import SelectedMemories

        return SelectedMemories
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "DEFAULT_MODEL",
    "MANIFEST_CAP",
    "SELECTOR_NAMES",
    "SESSION_BUDGET",
    "SYSTEM_PROMPT",
    "ClaudeRequest",
    "ClaudeSelector",
    "HybridSelector",
    "InjectedMemory",
    "LexicalSelector",
    "Manifest",
    "NearMiss",
    "Pick",
    "RecallCorpus",
    "RecallDoc",
    "RecallResult",
    "SelectedMemories",
    "Selection",
    "Selector",
    "SelectorName",
    "build_manifest",
    "choose_model",
    "has_credentials",
    "load_corpus",
    "make_client",
    "manifest_line",
    "recall",
    "resolve_selector",
    "choose_selector",
    "SelectorChoice",
    "SelectorState",
    "SelectorStatus",
    "selector_status",
    "OfflineCause",
    "skip_reason",
]
