"""The request of a CLI release's dream (the claude flavor: Claude Code 2.1.328), as memtui's
claude consolidator sends it.

The CLI's dream is a fork of the conversation that just ended: the main loop's model, system
prompt and tools, and one more user message, the dream prompt. memtui has no conversation to
fork, so it sends what the fork's prompt relies on:

- **the dream prompt**, byte for byte the CLI's (:func:`dream_prompt`: the release's template
  with the memory dir — with its final ``/`` —, the transcripts dir and the session list
  filled in the CLI's way: ``Sessions since last consolidation (N):`` and ``- <id>`` per line,
  in the order the session gate listed them);
- **the system prompt's ``# Memory`` section** (the prompt's "memory file format and type
  conventions from your system prompt's auto-memory section"), with the same memory dir;
- **the project's instructions** as the CLI's first user message carries them (the cascade's
  rendered context in a ``<system-reminder>``), so that "Reconcile memories against CLAUDE.md"
  has CLAUDE.md to read;
- **the main loop's model**: settings ``model``, else the release's default
  (``claude-opus-5-5``), overridable.

Every text names the live memory dir, as the CLI's does (``~/.claude/projects/<slug>/memory/``
or wherever the release resolves it). The consolidator's writes go to a staging copy all the
same: its tools map the live dir to the copy and back (``memtui.core.agent.alias.PathAlias``),
so the model never reads the copy's path; :attr:`DreamRequest.staging_dir` records it for a
person.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memtui.core.agent import request_text
from memtui.core.dream.gates import DreamContext
from memtui.core.places.release import Release, dir_text, fill

SYSTEM_REMINDER = "<system-reminder>\n{text}\n</system-reminder>"


def dream_prompt(release: Release, memory_dir: str, transcripts_dir: str, session_ids: Sequence[str], *, team: bool = False) -> str:
    """The release's dream prompt. ``memory_dir``: as the CLI writes it, with a final
    separator; ``transcripts_dir``: the project dir, without one; ``session_ids``: the counted
    sessions in the session gate's order; ``team``: team memory is on (adds the team block)."""
    facts = release.dream
    context = (
        "\n\n" + release.template("dream_tool_constraints.txt") + "\n\n"
        + facts.sessions_heading.format(count=len(session_ids)) + "\n"
        + "\n".join(f"- {sid}" for sid in session_ids)
    )
    return fill(
        release.template("dream_prompt.txt"),
        memory_dir=memory_dir,
        transcripts_dir=transcripts_dir,
        team_block=f"\n{release.template('dream_team_block.txt')}\n" if team else "",
        additional_context=f"\n\n## Additional context\n\n{context}",
    )


@dataclass(frozen=True, slots=True)
class DreamRequest:
    """One dream request: ``model``, ``max_tokens``, ``system`` (text), ``messages`` (API param
    dicts), what was substituted (``memory_dir``: the live memory dir as the model reads it,
    with its final ``/``; ``transcripts_dir``; ``session_ids``), where the model came from
    (``model_source``), and ``staging_dir``: where memtui's consolidator really wrote for that
    dir (its staging copy, never shown to the model; ``None`` for a request not sent)."""

    model: str
    model_source: str
    max_tokens: int
    system: str
    messages: tuple[dict[str, Any], ...]
    memory_dir: str
    transcripts_dir: str
    session_ids: tuple[str, ...]
    staging_dir: str | None = None

    @property
    def prompt(self) -> str:
        """The dream prompt (the last text block of the last message)."""
        content = self.messages[-1]["content"]
        return content[-1]["text"] if isinstance(content, list) else str(content)

    def to_json(self) -> dict[str, Any]:
        """``{model, model_source, max_tokens, system, messages, memory_dir, transcripts_dir,
        session_ids, staging_dir}`` (``staging_dir``: a string or ``null``)."""
        return {
            "model": self.model,
            "model_source": self.model_source,
            "max_tokens": self.max_tokens,
            "system": self.system,
            "messages": [dict(m) for m in self.messages],
            "memory_dir": self.memory_dir,
            "transcripts_dir": self.transcripts_dir,
            "session_ids": list(self.session_ids),
            "staging_dir": self.staging_dir,
        }

    def render(self) -> str:
        """The request as text for a person: model, the memory dir the model was given (and,
        for a request sent, where memtui staged its writes), system, then each message's
        blocks."""
        return request_text(f"model: {self.model} ({self.model_source})  ·  max_tokens {self.max_tokens}", self.memory_dir, self.staging_dir, self.system, self.messages)


def main_model(ctx: DreamContext, release: Release, override: str | None = None) -> tuple[str, str]:
    """The dream's model and where it came from: ``override`` (``--model``), else settings
    ``model`` (the layer named), else the release's main-loop default."""
    if override:
        return override, "--model"
    if ctx.settings is not None:
        value, source = ctx.settings.get("model")
        if isinstance(value, str) and value.strip():
            return value.strip(), f"settings ({source})"
    return release.main_model_default, f"{release.cli} {release.version} default"


def instructions_block(ctx: DreamContext) -> str | None:
    """The project's instructions as the CLI's first user message carries them (the cascade's
    rendered startup context), or ``None`` when nothing loads or the project is unknown."""
    if ctx.locations is None:
        return None
    from memtui.core.cascade import compute_cascade

    try:
        rendered = compute_cascade(ctx.locations, ctx.locations.project_root).rendered
    except (OSError, ValueError):
        return None
    return rendered or None


def build_dream_request(
    ctx: DreamContext,
    release: Release,
    session_ids: Sequence[str],
    *,
    staging_dir: Path | None = None,
    model: str | None = None,
    max_tokens: int,
    instructions: str | None = None,
) -> DreamRequest:
    """The request for ``ctx``: the dream prompt and the ``# Memory`` section over the live
    memory dir (``ctx.memory_dir``, as the CLI writes it), the project dir of ``ctx`` and
    ``session_ids``; ``instructions``: the rendered instructions, sent as they are;
    ``staging_dir``: where the consolidator's tools really write (recorded, never shown)."""
    mem_text = dir_text(ctx.memory_dir)
    transcripts = str(ctx.sessions_dir).rstrip("/")
    prompt = dream_prompt(release, mem_text, transcripts, session_ids)
    content: list[dict[str, Any]] = []
    if instructions:
        content.append({"type": "text", "text": SYSTEM_REMINDER.format(text=instructions)})
    content.append({"type": "text", "text": prompt})
    chosen, source = main_model(ctx, release, model)
    return DreamRequest(chosen, source, max_tokens, release.memory_section(mem_text), ({"role": "user", "content": content},),
                        mem_text, transcripts, tuple(session_ids), None if staging_dir is None else dir_text(staging_dir))
