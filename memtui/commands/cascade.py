"""``memtui cascade`` (what the agent loads, docs/behaviour.md §3) and ``memtui imports approve|decline``."""

from __future__ import annotations

import os
from pathlib import Path

import click

from memtui.commands.common import CliContext, common_options, emit_json, fail, say, user_errors
from memtui.core.base.wording import counted, details_line
from memtui.core.base.terminal import visible
from memtui.core.cascade import Cascade, CascadeFile, compute_cascade, project_key, record_decision
from memtui.core.cascade.approvals import agent_approval_note

_MARKERS = {
    "loaded": " ",
    "conditional": "?",
    "pending-approval": "!",
}


def _context(ctx: click.Context, cwd: Path | None) -> tuple[CliContext, Path]:
    obj = ctx.find_object(CliContext)
    if obj is None:  # pragma: no cover - the group always sets it
        fail("internal: no CLI context")
    if cwd is not None:
        if not cwd.is_dir():
            fail(f"--cwd {cwd}: not a directory")
        if obj.project is None:
            obj.project = cwd
    effective = cwd if cwd is not None else (obj.project if obj.project is not None else Path(os.getcwd()))
    return obj, Path(os.path.realpath(effective))


def _line(f: CascadeFile) -> str:
    marker = _MARKERS.get(f.status, "-")
    indent = "  " * (f.depth + 1)
    size = f"{f.chars:>7,} ch ~{f.tokens_est:>6,} tok" if f.loaded else f"{'':>21}"
    tag = "" if f.status == "loaded" else f"  [{f.status}]"
    return f"{marker} {size}{indent}{visible(f.path)}{tag}"


def _print_text(cascade: Cascade) -> None:
    current = None
    for f in cascade.files:
        if f.layer != current:
            current = f.layer
            say(f"{f.layer}:")
        say(_line(f))
    loaded = cascade.loaded_files
    say(
        f"\n{counted(len(loaded), 'file')} loaded: {cascade.files_chars:,} characters of files + {cascade.framing_chars:,} of headers "
        f"and preamble = {cascade.total_chars:,} characters, ~{cascade.total_tokens_est:,} tokens"
    )
    if cascade.pending_external_imports:
        say("\nexternal imports pending approval (`memtui imports approve`):")
        for p in cascade.pending_external_imports:
            say(f"  {visible(p.path)}  (imported by {visible(p.imported_by)}:{p.line})")
    for step in cascade.reads:
        say(f"\nread {visible(step.target)}:")
        if not step.added:
            say("  adds nothing")
        for f in step.added:
            say(f"  + {visible(f.path)}  ({visible(f.reason)})")
    if cascade.diagnostics:
        say("\ndiagnostics:")
        for d in cascade.diagnostics:
            where = f"{d.path}:{d.line}" if d.line else (d.path or "")
            say(f"  {d.severity:<7} {d.code:<32} {visible(where)}\n          {visible(d.message)}")
    for note in cascade.notes:
        say(f"\nnote: {visible(note)}")


@click.command("cascade")
@click.option("--cwd", "cwd", type=click.Path(path_type=Path), default=None, help="The agent's working directory (default: --project, else the current directory).")
@click.option("--read", "reads", multiple=True, help="Simulate the agent reading this path, relative to the cwd (repeatable, in order).")
@click.option("--rendered", is_flag=True, help="Print only the exact text the model receives in its first message (the instruction block); with --read, each read's messages follow after an `[after reading PATH]` line.")
@click.option("--memory-prompt", "memory_prompt", is_flag=True, help="Print only the `# Memory` section of the system prompt, as the agent builds it.")
@click.option("--session", "session", default=None, metavar="ID|latest",
              help="Compare what a session of this project actually loaded (its transcript) with what memtui computes now.")
@click.option("--json", "as_json", is_flag=True, help="Print the whole cascade as JSON.")
@common_options
@click.pass_context
@user_errors
def cascade(ctx: click.Context, cwd: Path | None, reads: tuple[str, ...], rendered: bool, memory_prompt: bool, session: str | None, as_json: bool) -> None:
    """Show exactly which instruction files the agent loads, in order, and why."""
    obj, real_cwd = _context(ctx, cwd)
    if session is not None:
        _session(obj, session, as_json)
        return
    result = compute_cascade(obj.locations, real_cwd, reads=list(reads))
    if as_json:
        emit_json(result.to_json())
    elif memory_prompt:
        say(result.memory_prompt, nl=False, keep_crlf=True)
    elif rendered:
        say(result.rendered, nl=False, keep_crlf=True)
        for step in result.reads:
            if step.messages:
                say(f"\n\n[after reading {visible(step.target)}]\n{step.rendered}", nl=False, keep_crlf=True)
    else:
        _print_text(result)


_SESSION_MARKS = {"same": "=", "changed": "~", "recorded-only": "-", "predicted-only": "+", "moved": "↕"}


def _session(obj: CliContext, session: str, as_json: bool) -> None:
    """``cascade --session``: the session's loads beside the prediction; exit 1 on a fidelity bug."""

    from memtui.commands.common import rich_console
    from memtui.core.audit.loaded import SessionNotFoundError, load_session

    try:
        result = load_session(obj.locations, session)
    except SessionNotFoundError as exc:
        fail(str(exc), 1)
    if as_json:
        emit_json(result.to_json())
    else:
        console = rich_console()
        started = result.to_json()["started"] or "?"
        console.print(f"[bold]session {escape(result.session_id)}[/] started {started} in {escape(str(result.cwd))}"
                      + (f" (Claude Code {escape(result.version)})" if result.version else ""))
        console.print(f"[dim]{escape(str(result.transcript))}[/]")
        console.print("\n[bold]startup[/]  (recorded ch · memtui ch)")
        for row in result.startup:
            _session_row(console, row)
        for rd in result.reads:
            console.print(f"\n[bold]{escape(rd.tool)} {escape(rd.target)}[/] (line {rd.line})")
            for row in rd.rows:
                _session_row(console, row)
        diffs, bugs = result.differences, result.bugs
        if not diffs:
            console.print("\n[green]no difference[/]: memtui predicts what this session loaded")
        else:
            console.print(f"\n{len(diffs)} difference(s): {len(diffs) - len(bugs)} explained"
                          + (f", [red]{len(bugs)} fidelity bug(s) to report[/]" if bugs else ""))
        for note in result.notes:
            console.print(f"[dim]note: {escape(note)}[/]")
    if result.bugs:
        raise SystemExit(1)


def escape(text: str) -> str:
    """``text`` for a rich line: terminal controls shown as escapes, markup escaped."""
    from rich.markup import escape as markup_escape

    from memtui.core.base.terminal import visible

    return markup_escape(visible(text))


def _session_row(console: object, row: object) -> None:
    r = row  # Row
    rec = f"{r.recorded.chars:>7,}" if r.recorded else f"{'':>7}"  # type: ignore[attr-defined]
    pred = f"{r.predicted.chars:>7,}" if r.predicted else f"{'':>7}"  # type: ignore[attr-defined]
    style = "red" if r.bug else ("" if r.status == "same" else "yellow")  # type: ignore[attr-defined]
    mark = _SESSION_MARKS[r.status]  # type: ignore[attr-defined]
    line = f"{mark} {rec} {pred}  {escape(r.path)}"  # type: ignore[attr-defined]
    console.print(f"[{style}]{line}[/]" if style else line)  # type: ignore[attr-defined]
    if r.reason:  # type: ignore[attr-defined]
        console.print(f"      [dim]{escape(r.reason)}[/]")  # type: ignore[attr-defined]


@click.group("imports")
@common_options
def imports() -> None:
    """Decide whether this project's instruction files may import files outside the cwd."""


def _decide(ctx: click.Context, cwd: Path | None, decision: str) -> None:
    obj, real_cwd = _context(ctx, cwd)
    key = project_key(real_cwd)
    path = record_decision(obj.locations.state_dir, key, "approved" if decision == "approved" else "declined")
    say(f"external imports {decision} for {visible(key)} (recorded in {visible(str(path))})")
    note = agent_approval_note(obj.flavor)
    if note is not None:
        sentence, details = note
        say(f"note: {sentence}")
        say(f"  {details_line(details)}")


@imports.command("approve")
@click.option("--cwd", "cwd", type=click.Path(path_type=Path), default=None, help="The project's working directory.")
@common_options
@click.pass_context
@user_errors
def approve(ctx: click.Context, cwd: Path | None) -> None:
    """Let external imports load for this project."""
    _decide(ctx, cwd, "approved")


@imports.command("decline")
@click.option("--cwd", "cwd", type=click.Path(path_type=Path), default=None, help="The project's working directory.")
@common_options
@click.pass_context
@user_errors
def decline(ctx: click.Context, cwd: Path | None) -> None:
    """Keep external imports out for this project (they are listed, not pending)."""
    _decide(ctx, cwd, "declined")
