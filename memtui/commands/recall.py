"""``memtui recall``: what the agent would recall for a prompt, and why; ``memtui recall eval``:
how far memtui's selectors agree with the agent's own recall.

``recall`` is a group whose default command is ``query``: ``memtui recall "some prompt"`` means
``memtui recall query "some prompt"``. Its other commands: ``eval --transcripts`` (recall@5
against the agent's picks in its transcripts). A prompt that is literally a command's name is
given through ``query``: ``memtui recall query eval``."""

from __future__ import annotations

from pathlib import Path

import click

from memtui.commands.common import (
    CliContext,
    common_options,
    emit_json,
    fail,
    rich_console,
    say,
    user_errors,
)
from memtui.core.base.terminal import visible
from memtui.core.places.agentconfig import recall_state
from memtui.core.places.claude_json import read_global_config
from memtui.core.recall import SELECTOR_NAMES, choose_model, load_corpus, recall
from memtui.core.recall.engine import RecallResult
from memtui.core.recall.inputs import recall_inputs, session_context, split_names


class RecallGroup(click.Group):
    """A group whose first argument, when it names no command, is the query of ``query``."""

    default_command = "query"

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:  # noqa: D102 - click API
        if args and args[0] not in self.commands and args[0] not in ctx.help_option_names:
            args = [self.default_command, *args]
        return super().parse_args(ctx, args)


@click.group("recall", cls=RecallGroup)
def recall_cmd() -> None:
    """Which memories the agent would recall for a prompt, and how far memtui agrees with its own
    recall.

    memtui recall QUERY is short for memtui recall query QUERY; memtui recall eval --transcripts
    scores memtui's selectors against the agent's own recalls."""


@recall_cmd.command("query")
@click.argument("query")
@click.option("--tools", default=None, help="Recently used tools, comma-separated (added to those from --transcript).")
@click.option(
    "--transcript",
    type=click.Path(dir_okay=False, exists=True, path_type=Path),
    default=None,
    help="A session JSONL: recently used tools and already surfaced memories are read from it.",
)
@click.option("--surfaced", default=None, help="Memories already surfaced this session, comma-separated paths.")
@click.option("--selector", type=click.Choice(SELECTOR_NAMES), default="auto", show_default=True,
              help="auto: claude with an API key, else lexical.")
@click.option("--model", default=None, help="Model for claude/hybrid (default: the release's, e.g. claude-sonnet-5-5).")
@click.option("--preview", is_flag=True, help="Recall even when this user's agent does not (show what it would pick).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@common_options
@click.pass_obj
@user_errors
def recall_query(
    obj: CliContext,
    query: str,
    tools: str | None,
    transcript: Path | None,
    surfaced: str | None,
    selector: str,
    model: str | None,
    preview: bool,
    as_json: bool,
) -> None:
    """Show the memories the agent would recall for QUERY, why, and the text it would inject."""
    loc = obj.locations
    memory_dir = obj.checked_memory_dir()
    release = loc.flavor.behaviour
    corpus = load_corpus(memory_dir, release.memory_format)
    config = loc.agent_config if loc.agent_config is not None else read_global_config()
    gate = None if release.recall_gate.always else recall_state(release.recall_gate, config)
    session = session_context(transcript) if transcript is not None else None
    inputs = recall_inputs(
        corpus,
        tools=[*(session.tools if session else ()), *split_names(tools)],
        session=session,
        surfaced=split_names(surfaced),
    )
    settings_model, _ = loc.settings.get("model")
    result = recall(
        query,
        corpus,
        now=obj.now(),
        selector=selector,  # type: ignore[arg-type]
        recent_tools=inputs.recent_tools,
        surfaced=inputs.surfaced,
        surfaced_units=inputs.surfaced_units,
        model=choose_model(model, settings_model, release.recall_request),
        behaviour=release,
        gate=gate,
        preview=preview,
    )
    if as_json:
        emit_json(result.to_json())
        return
    _print(result)


def _print(result: RecallResult) -> None:
    from rich.markup import escape as markup_escape

    def escape(text: str) -> str:
        return markup_escape(visible(text))

    console = rich_console()
    badge = "[green]online[/]" if result.online else "[yellow]offline[/]"
    console.print(f"[bold]recall[/] selector [bold]{result.selector}[/] {badge}"
                  + (f" [dim]({escape(result.offline_reason)})[/]" if result.offline_reason else ""))
    if result.gate is not None:
        state = "[green]recalls[/]" if result.gate.on else "[yellow]does not recall[/]"
        console.print(f"{escape(result.release)} {state}: {escape(result.gate.reason)}")
        if result.would_only and not result.skipped:
            console.print("[yellow]preview[/]: what recall would pick if it were on (the agent loads MEMORY.md instead)")
    m = result.manifest
    console.print(f"manifest: {m.count} of {m.total} memories (the reference sends the {m.count} newest)")
    if result.recent_tools:
        console.print(f"recently used tools: {escape(', '.join(result.recent_tools))}")
    if result.skipped:
        console.print(f"[yellow]skipped[/]: {escape(result.skipped)}")
        return
    if result.error:
        console.print(f"[red]error[/]: {escape(result.error)}")
    for note in result.notes:
        console.print(f"[yellow]note[/]: {escape(note)}")
    if not result.picks:
        console.print("[dim]no memories recalled[/]")
    for i, p in enumerate(result.picks, 1):
        kind = p.doc.header.type or "untyped"
        outside = " [magenta](outside the reference's 200-newest window)[/]" if not p.in_reference_window else ""
        console.print(f"{i}. [bold]{escape(p.relpath)}[/] \\[{kind}] {p.age_label}{outside}")
        if p.doc.header.description:
            console.print(f"   {escape(p.doc.header.description)}")
        console.print(f"   [dim]{escape(p.reason)}[/]")
    if result.near_misses:
        console.print("near misses: " + ", ".join(f"{escape(n.relpath)} ({n.score:.2f})" for n in result.near_misses))
    if result.injected_text:
        console.print("\n[bold]injected text[/]")
        say(result.injected_text, keep_crlf=True)  # exact bytes where safe: no wrapping, no markup


@recall_cmd.command("eval")
@click.option("--transcripts", "from_transcripts", is_flag=True,
              help="Score against the agent's own recalls, from this project's transcripts (relevant_memories).")
@click.option("--model", default=None, help="Model for the hybrid selector (default: the release's).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@common_options
@click.pass_obj
@user_errors
def recall_eval(obj: CliContext, from_transcripts: bool, model: str | None, as_json: bool) -> None:
    """recall@5 of memtui's offline (lexical) and hybrid selectors against what the agent's own
    recall picked for the same prompts: how far to trust the offline preview on your prompts."""
    from rich.markup import escape as markup_escape

    from memtui.core.audit.agreement import evaluate

    def escape(text: str) -> str:
        return markup_escape(visible(text))

    if not from_transcripts:
        fail("say what to score against: --transcripts (the agent's own recalls)", 2)
    obj.checked_memory_dir()
    loc = obj.locations
    result = evaluate(loc, obj.now(), model=model)
    if as_json:
        emit_json(result.to_json())
        return
    console = rich_console()
    console.print(f"{len(result.prompts)} recall(s) of the agent in {result.sessions_with_recall} of {result.sessions} sessions")
    if not result.prompts:
        console.print("[dim]no session recorded a recall (relevant_memories): the agent's recall is off by default in "
                      "Claude Code 2.1.328 (flag tengu_moth_copse)[/]")
        return
    for name in result.selectors:
        if name in result.skipped:
            console.print(f"  {name:<8} [yellow]skipped[/]: {escape(result.skipped[name])}")
            continue
        mean, pooled = result.mean(name), result.pooled(name)
        figure = "—" if mean is None else f"{mean:.2f}"
        console.print(f"  {name:<8} recall@5 [bold]{figure}[/]" + ("" if pooled is None else f"  (pooled {pooled:.2f})"))
    for p in result.prompts:
        console.print(f"\n[dim]{escape(p.recalled.session_id[:8])}:{p.recalled.line}[/] {escape(p.recalled.prompt[:100])}")
        console.print(f"  claude   {escape(', '.join(p.recalled.claude))}" + (f"  [dim](gone: {escape(', '.join(p.gone))})[/]" if p.gone else ""))
        for name, picks in p.picks.items():
            if picks is not None:
                console.print(f"  {name:<8} {escape(', '.join(picks) or '—')}")
