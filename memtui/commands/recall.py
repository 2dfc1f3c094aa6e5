"""``memtui recall``: what the agent would recall for a prompt, and why; ``memtui recall eval``:
how good each selector is on a labelled set, or (``--transcripts``) how far memtui's selectors
agree with the agent's own recall.

``recall`` is a group whose default command is ``query``: ``memtui recall "some prompt"`` means
``memtui recall query "some prompt"``. A prompt that is literally a command's name is given
through ``query``: ``memtui recall query eval``."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from memtui.commands.common import (
    CliContext,
    common_options,
    emit_json,
    fail,
    print_table,
    rich_console,
    say,
    user_errors,
)
from memtui.core.base.wording import DOES_NOT_RECALL, RECALLS, counted, details_line
from memtui.core.base.terminal import visible
from memtui.core.places.agentconfig import recall_state
from memtui.core.places.claude_json import read_global_config
from memtui.core.memory.catalogdb import CatalogDB
from memtui.core.recall import SELECTOR_NAMES, choose_model, load_corpus, recall
from memtui.core.recall.engine import RecallResult
from memtui.core.recall.inputs import recall_inputs, session_context, split_names

if TYPE_CHECKING:
    from memtui.core.recall.evaluate import Evaluation
    from memtui.core.verify.conflicts import Conflict


class RecallGroup(click.Group):
    """A group whose first argument, when it names no command, is the query of ``query``."""

    default_command = "query"

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:  # noqa: D102 - click API
        first = _after_common_options(args)
        if first < len(args) and args[first] not in self.commands and args[first] not in ctx.help_option_names:
            args = [self.default_command, *args]  # the common options before QUERY go to `query`
        return super().parse_args(ctx, args)


_COMMON_OPTIONS = ("--project", "--memory-dir", "--flavor", "--settings")


def _after_common_options(args: list[str]) -> int:
    """The index of the first of ``args`` past the leading common options (``--project DIR``,
    ``--flavor=claude``…): ``recall --project DIR eval`` names the command ``eval``."""
    i = 0
    while i < len(args) and args[i].split("=", 1)[0] in _COMMON_OPTIONS:
        i += 1 if "=" in args[i] else 2
    return i


@click.group("recall", cls=RecallGroup)
@common_options
def recall_cmd() -> None:
    """Which memories the agent would recall for a prompt, and how good memtui's selectors are.

    memtui recall QUERY is short for memtui recall query QUERY; memtui recall eval scores the
    selectors on a labelled set; memtui recall eval --transcripts scores them against the agent's
    own recalls."""


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
              help="auto: claude with an API key, else lexical (BM25, offline).")
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
    memory_dir, exists = obj.readable_memory_dir()
    release = loc.flavor.behaviour
    state_dir = loc.state_dir if exists else None
    # one database for the corpus and the conflict mark below (none for a dir not created yet)
    cache = CatalogDB.for_memory_dir(state_dir, memory_dir, fmt=release.memory_format) if state_dir is not None else None
    corpus = load_corpus(memory_dir, release.memory_format, state_dir=state_dir, cache=cache)
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
    from memtui.core.verify.conflicts import newer_conflicts_in

    newer = newer_conflicts_in(memory_dir, release.memory_format, cache) if (result.picks or result.would_pick) else {}
    if as_json:
        emit_json(result.to_json(newer))
        return
    _print(result, newer)


_SHOWN_CONFLICTS = 2  # per pick, as the Recall pane shows them


def _print_conflicts(console: Any, newer: Mapping[str, Sequence[Conflict]], relpath: str, escape: Callable[[str], str]) -> None:
    """The Recall pane's mark under a pick a newer memory contradicts (the first two)."""
    for conflict in newer.get(relpath, ())[:_SHOWN_CONFLICTS]:
        console.print(f"   [yellow]⚠ a newer memory disagrees: {escape(conflict.newer)} — {escape(conflict.describe())}[/]")


def _print(result: RecallResult, newer: Mapping[str, Sequence[Conflict]]) -> None:
    from rich.markup import escape as markup_escape

    def escape(text: str) -> str:
        return markup_escape(visible(text))

    console = rich_console()
    badge = "[green]online[/]" if result.online else "[yellow]offline[/]"
    console.print(f"[bold]recall[/] selector [bold]{result.selector}[/] {badge}"
                  + (f" [dim]({escape(result.offline_reason)})[/]" if result.offline_reason else ""))
    if result.gate is not None:
        state = f"[green]{RECALLS}[/]" if result.gate.on else f"[yellow]{DOES_NOT_RECALL}[/]"
        console.print(f"{escape(result.release)} {state}: {escape(result.gate.reason)}")
        if result.gate.details:
            console.print(f"[dim]{escape(details_line(result.gate.details))}[/]")
        if result.would_only and not result.skipped:
            console.print("[yellow]preview[/]: what recall would pick if it were on (the agent loads MEMORY.md instead)")
    m = result.manifest
    console.print(f"manifest: {m.count} of {counted(m.total, 'memory', 'memories')} (the reference sends the {m.count} newest)")
    if result.recent_tools:
        console.print(f"recently used tools: {escape(', '.join(result.recent_tools))}")
    if result.skipped:
        if not result.skipped_by_gate:  # else the line above said why
            console.print(f"[yellow]skipped[/]: {escape(result.skipped)}")
        _print_would_pick(result, escape, newer)
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
        _print_conflicts(console, newer, p.relpath, escape)
    if result.near_misses:
        console.print("near misses: " + ", ".join(f"{escape(n.relpath)} ({n.score:.2f})" for n in result.near_misses))
        console.print(f"[dim]  score: {escape(result.near_misses_scale)}[/]")
    if result.injected_text:
        console.print("\n[bold]injected text[/]")
        say(result.injected_text, keep_crlf=True)  # exact bytes where safe: no wrapping, no markup


def _print_would_pick(result: RecallResult, escape: Callable[[str], str], newer: Mapping[str, Sequence[Conflict]]) -> None:
    console = rich_console()
    for note in result.notes:
        console.print(f"[yellow]note[/]: {escape(note)}")
    if not result.would_pick:
        console.print(f"[dim]recall would pick nothing ({escape(result.would_pick_selector or '')})[/]")
        return
    console.print(f"would pick ([yellow]not sent[/]: the agent skips this prompt; {escape(result.would_pick_selector or '')} selector):")
    for i, p in enumerate(result.would_pick, 1):
        kind = p.doc.header.type or "untyped"
        console.print(f"{i}. [bold]{escape(p.relpath)}[/] \\[{kind}] {p.age_label} [dim](not sent)[/]")
        if p.doc.header.description:
            console.print(f"   {escape(p.doc.header.description)}")
        console.print(f"   [dim]{escape(p.reason)}[/]")
        _print_conflicts(console, newer, p.relpath, escape)


EVAL_SELECTORS = ("semantic", "lexical", "claude", "hybrid")


@recall_cmd.command("eval")
@click.option("--transcripts", "from_transcripts", is_flag=True,
              help="Score against the agent's own recalls, from this project's transcripts (relevant_memories), "
                   "instead of a labelled set.")
@click.option("--set", "set_file", type=click.Path(dir_okay=False, exists=True, path_type=Path), default=None,
              help="A labelled set: JSONL of {\"query\", \"relevant\": [paths]} (default: the set shipped with memtui).")
@click.option("--memories", "memories", type=click.Path(file_okay=False, exists=True, path_type=Path), default=None,
              help="The memory dir of --set (default: memories/ beside it, else the memory dir memtui resolves).")
@click.option("--selector", "selectors", type=click.Choice(EVAL_SELECTORS), multiple=True,
              help="A selector to score (repeatable; default: semantic and lexical — claude and hybrid send one request per prompt).")
@click.option("--model", default=None, help="Model for claude/hybrid (default: the release's).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@common_options
@click.pass_obj
@user_errors
def recall_eval(obj: CliContext, from_transcripts: bool, set_file: Path | None, memories: Path | None,
                selectors: tuple[str, ...], model: str | None, as_json: bool) -> None:
    """Score memtui's recall selectors on a labelled set: recall@5, precision@5 and MRR, per
    language and per split. With --transcripts: recall@5 of the offline (lexical) and hybrid
    selectors against what the agent's own recall picked for the same prompts."""
    if from_transcripts:
        if set_file is not None or memories is not None or selectors:
            fail("--transcripts scores against the agent's own recalls: --set, --memories and --selector do not apply", 2)
        _eval_transcripts(obj, model, as_json)
        return
    from memtui.core.recall.engine import resolve_selector, selector_picks
    from memtui.core.recall.evaluate import SHIPPED_SET, EvalSetError, default_memory_dir, evaluate, load_set

    source = set_file or SHIPPED_SET
    if memories is None and set_file is not None and not default_memory_dir(set_file).is_dir():
        memories = obj.locations.memory_dir
    try:
        labelled = load_set(source, memories)
    except EvalSetError as exc:
        fail(str(exc), 2)
    if not labelled.memory_dir.is_dir():
        fail(f"no memory dir at {labelled.memory_dir}", 1)
    release = obj.locations.flavor.behaviour
    settings_model, _ = obj.locations.settings.get("model")
    chosen_model = choose_model(model, settings_model, release.recall_request)
    names = selectors or ("semantic", "lexical")
    built = {}
    skipped = {}
    for name in names:
        selector, offline = resolve_selector(name, model=chosen_model, shape=release.recall_request)  # type: ignore[arg-type]
        if name in ("claude", "hybrid") and offline is not None:
            skipped[name] = offline
        built[name] = selector
    result = evaluate(labelled, names, lambda name, query, corpus: selector_picks(built[name], query, corpus),
                      fmt=release.memory_format, skipped=skipped, state_dir=obj.locations.state_dir)
    if as_json:
        emit_json(result.to_json())
        return
    _print_eval(result)


def _print_eval(result: Evaluation) -> None:
    from rich.markup import escape as markup_escape
    from rich.table import Table

    def escape(text: str) -> str:
        return markup_escape(visible(text))

    def fig(v: float | None) -> str:
        return "—" if v is None else f"{v:.2f}"

    console = rich_console()
    s = result.set
    console.print(f"set [bold]{escape(str(s.source))}[/]: {counted(len(s.prompts), 'prompt')} over {counted(result.memories, 'memory', 'memories')} in {escape(str(s.memory_dir))}")
    if result.agent_skips:
        console.print(f"[yellow]{len(result.agent_skips)}[/] of them the agent would skip (no whitespace): scored on what recall would pick")
    for line, path in s.missing:
        console.print(f"[yellow]note[/]: line {line}: {escape(path)} is not a memory of the dir")
    table = Table(box=None, pad_edge=False)
    for column in ("selector", "prompts", "recall@5", "precision@5", "MRR", "quiet"):
        table.add_column(column, justify="left" if column == "selector" else "right")
    groups = result.groups()
    for name in result.selectors:
        if name in result.skipped:
            continue
        rows = [("", result.scores(name))]
        for keeps in groups.values():
            rows += [(label, result.scores(name, keep)) for label, keep in keeps.items()]
        for label, sc in rows:
            title = f"[bold]{name}[/]" if not label else f"  {escape(label)}"
            quiet = f"{sc.quiet}/{sc.unrelated}" if sc.unrelated else "—"
            table.add_row(title, str(sc.prompts), fig(sc.recall_at_5), fig(sc.precision_at_5), fig(sc.mrr), quiet)
    print_table(console, table)
    for name, why in result.skipped.items():
        console.print(f"{name}: [yellow]not run[/]: {escape(why)}")


def _eval_transcripts(obj: CliContext, model: str | None, as_json: bool) -> None:
    from rich.markup import escape as markup_escape

    from memtui.core.audit.agreement import evaluate

    def escape(text: str) -> str:
        return markup_escape(visible(text))

    obj.checked_memory_dir()
    result = evaluate(obj.locations, obj.now(), model=model)
    if as_json:
        emit_json(result.to_json())
        return
    console = rich_console()
    console.print(f"{counted(len(result.prompts), 'recall')} of the agent in {result.sessions_with_recall} of {counted(result.sessions, 'session')}")
    if not result.prompts:
        gate = obj.locations.flavor.behaviour.recall_gate
        off_note, off_details = gate.off_by_default_note(), gate.off_by_default_details()
        console.print("[dim]no session recorded a recall (relevant_memories)" + (f": {off_note}" if off_note else "") + "[/]")
        if off_details:
            console.print(f"[dim]{escape(details_line(off_details))}[/]")
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
