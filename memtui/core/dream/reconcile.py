"""The offline consolidator's share of "Reconcile memories against CLAUDE.md" (Claude Code
2.1.328's dream prompt): for each ``feedback`` or ``project`` memory, does it contradict an
instruction on the same topic?

Judging a contradiction needs a model; what can be told without one is where a memory and an
instruction name the same command differently: a code span of the memory (```make release```)
and one of an instruction line (```make deploy```) that start with the same word but differ.
Each such pair is a finding naming both places — "verify which is current" — and nothing is
changed: the prompt's rule is that a dream never edits CLAUDE.md, and the offline consolidator
cannot tell which side is stale. Spans that are equal agree (not a conflict).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from memtui.core.dream.events import Finding
from memtui.core.dream.gates import DreamContext

_SPAN = re.compile(r"`([^`\n]{2,80})`")
# The memory types the prompt reconciles ("feedback/project types, where tagged").
RECONCILED_TYPES = ("feedback", "project")


@dataclass(frozen=True, slots=True)
class InstructionFile:
    """An instruction file the agent loads: ``path`` (absolute) and its ``content``."""

    path: Path
    content: str


def _spans(text: str) -> list[str]:
    return [" ".join(m.group(1).split()) for m in _SPAN.finditer(text)]


def reconcile_findings(memories: Iterable[tuple[str, str | None, str]], instructions: Sequence[InstructionFile]) -> list[Finding]:
    """``reconcile-claude-md`` findings for ``memories`` (``(relpath, type, body)``) against
    ``instructions``: a code span of a ``feedback``/``project`` memory whose first word an
    instruction line's span shares, with a different span and none equal to it in that line."""
    lines: list[tuple[InstructionFile, int, list[str]]] = []
    for f in instructions:
        for number, line in enumerate(f.content.splitlines(), 1):
            spans = _spans(line)
            if spans:
                lines.append((f, number, spans))
    out: list[Finding] = []
    for relpath, kind, body in memories:
        if kind not in RECONCILED_TYPES:
            continue
        for span in dict.fromkeys(_spans(body)):
            head = span.split()[0]
            for f, number, spans in lines:
                same_head = [s for s in spans if s.split()[0] == head]
                if not same_head or span in spans:
                    continue
                out.append(Finding(
                    "consolidate", "reconcile-claude-md", relpath,
                    f"`{span}` here, `{same_head[0]}` in {f.path.name} line {number} ({f.path}): contradicts CLAUDE.md? — verify which is current; "
                    "the dream never edits CLAUDE.md (if the memory is stale, fix or drop it; if CLAUDE.md is, update it yourself)",
                ))
                break
    return out


# The cascade layers that hold instructions (not memory).
INSTRUCTION_LAYERS = ("managed", "user", "project", "local")


def instruction_files(ctx: DreamContext) -> list[InstructionFile]:
    """The instruction files the agent loads at startup in ``ctx``'s project (the cascade's
    loaded files of the managed, user, project and local layers); ``[]`` when the project is
    unknown or its cascade cannot be computed."""
    if ctx.locations is None:
        return []
    from memtui.core.cascade import compute_cascade

    try:
        cascade = compute_cascade(ctx.locations, ctx.locations.project_root)
    except (OSError, ValueError):
        return []
    return [InstructionFile(Path(f.path), f.content) for f in cascade.files if f.loaded and f.layer in INSTRUCTION_LAYERS and f.content]
