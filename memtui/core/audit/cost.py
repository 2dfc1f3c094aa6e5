"""What memory costs at a session's start, in tokens, beside what the transcripts recorded.

At startup the agent sends the instruction block (every instruction file of the cascade, and
``MEMORY.md`` when it loads); with recall on, ``MEMORY.md`` stays out and recalled memories come
with the prompts instead. ``startup_cost`` counts the block and each file (``TokenCounter``:
the API's count when a key is set, else an estimate), the index's share, and — with recall on —
the memory recalled per session on average (from the transcripts' ``relevant_memories``,
estimated). Beside it: the input tokens the transcripts recorded for each session's first
request (the whole request: system prompt, tools and the conversation, memory included).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from memtui.core.cascade.model import Cascade
from memtui.core.places.locations import Locations
from memtui.core.sessions.usage import SessionRecord

from .tokens import Count, TokenCounter


@dataclass(frozen=True, slots=True)
class FileCost:
    """One file of the instruction block: ``path``, ``layer``, ``chars`` (UTF-16 units) and
    its ``count``."""

    path: str
    layer: str
    chars: int
    count: Count


@dataclass(frozen=True, slots=True)
class RecordedStart:
    """What the transcripts recorded: ``sessions`` with a first request's usage, their
    ``mean`` and the ``latest`` session's input tokens (``None`` when none recorded)."""

    sessions: int = 0
    mean: int | None = None
    latest: int | None = None


@dataclass(frozen=True, slots=True)
class StartupCost:
    """Tokens of memory per session start (see the module docstring): ``files``, ``block`` (the
    instruction block as sent), ``index`` (``MEMORY.md``'s share, ``None`` when it does not
    load), ``recall_on``, ``recalled`` (memory recalled per session on average, ``None`` with
    recall off or no session), ``total``, ``model`` and ``reason`` (why counts are estimated,
    ``None`` when exact), ``recorded``."""

    files: tuple[FileCost, ...]
    block: Count
    index: Count | None
    recall_on: bool
    recalled: Count | None
    total: Count
    model: str
    reason: str | None
    recorded: RecordedStart

    def to_json(self) -> dict[str, Any]:
        """``{tokens, exact, instruction_block, index, recall_on, recalled_per_session, model,
        estimated_because, files: [{path, layer, chars, tokens, exact}], recorded: {sessions,
        mean_first_request_input_tokens, latest_first_request_input_tokens}}``."""
        return {
            "tokens": self.total.tokens,
            "exact": self.total.exact,
            "instruction_block": self.block.tokens,
            "index": None if self.index is None else self.index.tokens,
            "recall_on": self.recall_on,
            "recalled_per_session": None if self.recalled is None else self.recalled.tokens,
            "model": self.model,
            "estimated_because": self.reason,
            "files": [{"path": f.path, "layer": f.layer, "chars": f.chars, "tokens": f.count.tokens, "exact": f.count.exact} for f in self.files],
            "recorded": {
                "sessions": self.recorded.sessions,
                "mean_first_request_input_tokens": self.recorded.mean,
                "latest_first_request_input_tokens": self.recorded.latest,
            },
        }

    def summary(self) -> str:
        """One line for a person: ``memory at session start: ~3,210 tokens (…)``."""
        parts = [f"instruction block {self.block}"]
        if self.index is not None:
            parts.append(f"MEMORY.md {self.index}")
        if self.recalled is not None:
            parts.append(f"recalled per session {self.recalled}")
        line = f"memory at session start: {self.total} tokens ({', '.join(parts)})"
        if self.recorded.latest is not None:
            line += f" · recorded first request: {self.recorded.latest:,} input tokens (latest session)"
        return line


def counting_model(locations: Locations) -> str:
    """The model memory is counted for: the settings ``model``, else the release's main-loop
    default (Claude Code 2.1.328: ``claude-opus-5-5``), else the recall selector's default."""
    from memtui.core.places.release import release_of
    from memtui.core.recall.claude import DEFAULT_MODEL

    value, _ = locations.settings.get("model")
    if isinstance(value, str) and value.strip():
        return value.strip()
    release = release_of(locations.flavor)
    return release.main_model_default if release is not None else DEFAULT_MODEL


def recorded_start(sessions: Sequence[SessionRecord]) -> RecordedStart:
    """The first-request input tokens the transcripts of ``sessions`` (oldest first) recorded."""
    values = [s.start_tokens for s in sessions if s.start_tokens is not None]
    if not values:
        return RecordedStart()
    return RecordedStart(len(values), round(sum(values) / len(values)), values[-1])


def startup_cost(cascade: Cascade, sessions: Sequence[SessionRecord], counter: TokenCounter) -> StartupCost:
    """The cost of ``cascade``'s startup context (see the module docstring); ``sessions`` (oldest
    first) give the recalled memory per session and the recorded usage."""
    files = tuple(FileCost(f.path, f.layer, f.chars, counter.count(f.content)) for f in cascade.loaded_files)
    block = counter.count(cascade.rendered)
    index = next((fc.count for fc in files if fc.layer == "automem"), None)
    recall_on = cascade.recall is not None and bool(cascade.recall.on)
    recalled: Count | None = None
    if recall_on and sessions:
        units = sum(s.recalled_units for s in sessions) / len(sessions)
        recalled = Count((round(units) + 3) // 4, False)  # estimate_tokens' rule over the mean length
    total = block if recalled is None else block + recalled
    return StartupCost(files, block, index, recall_on, recalled, total, counter.model, counter.reason, recorded_start(sessions))
