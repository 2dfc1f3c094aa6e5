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

The memory dir the model is given is the consolidator's staging copy (writes land there and
become the plan); :func:`build_dream_request` with the real memory dir shows what the CLI itself
would send now.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

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
    dicts), and what was substituted (``memory_dir`` as shown, ``transcripts_dir``,
    ``session_ids``) and where the model came from (``model_source``)."""

    model: str
    model_source: str
    max_tokens: int
    system: str
    messages: tuple[dict[str, Any], ...]
    memory_dir: str
    transcripts_dir: str
    session_ids: tuple[str, ...]

    @property
    def prompt(self) -> str:
        """The dream prompt (the last text block of the last message)."""
        content = self.messages[-1]["content"]
        return content[-1]["text"] if isinstance(content, list) else str(content)

    def to_json(self) -> dict[str, Any]:
        """``{model, model_source, max_tokens, system, messages, memory_dir, transcripts_dir,
        session_ids}``."""
        return {
            "model": self.model,
            "model_source": self.model_source,
            "max_tokens": self.max_tokens,
            "system": self.system,
            "messages": [dict(m) for m in self.messages],
            "memory_dir": self.memory_dir,
            "transcripts_dir": self.transcripts_dir,
            "session_ids": list(self.session_ids),
        }

    def render(self) -> str:
        """The request as text for a person: model, system, then each message's blocks."""
        lines = [f"model: {self.model} ({self.model_source})  ·  max_tokens {self.max_tokens}", "", "── system ──", self.system]
        for i, message in enumerate(self.messages):
            content = message["content"]
            blocks = content if isinstance(content, list) else [{"type": "text", "text": content}]
            for j, block in enumerate(blocks):
                lines += ["", f"── messages[{i}] {message['role']} · block {j} ──", str(block.get("text", block))]
        return "\n".join(lines)


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
    memory_dir: Path | None = None,
    model: str | None = None,
    max_tokens: int,
    instructions: str | None = None,
) -> DreamRequest:
    """The request for ``ctx``: the dream prompt over ``memory_dir`` (default the real memory
    dir; the consolidator passes its staging copy), the project dir of ``ctx`` and
    ``session_ids``; ``instructions``: the rendered instructions (their memory dir paths are
    rewritten to ``memory_dir``)."""
    shown = memory_dir if memory_dir is not None else ctx.memory_dir
    mem_text = dir_text(shown)
    prompt = dream_prompt(release, mem_text, str(ctx.sessions_dir).rstrip("/"), session_ids)
    content: list[dict[str, Any]] = []
    if instructions:
        text = instructions.replace(dir_text(ctx.memory_dir), mem_text) if shown != ctx.memory_dir else instructions
        content.append({"type": "text", "text": SYSTEM_REMINDER.format(text=text)})
    content.append({"type": "text", "text": prompt})
    chosen, source = main_model(ctx, release, model)
    return DreamRequest(chosen, source, max_tokens, release.memory_section(mem_text), ({"role": "user", "content": content},),
                        mem_text, str(ctx.sessions_dir).rstrip("/"), tuple(session_ids))
