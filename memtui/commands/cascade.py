"""``memtui cascade`` (what the agent loads, SPEC §3) and ``memtui imports approve|decline``."""

from __future__ import annotations

import os
from pathlib import Path

import click

from memtui.commands.common import CliContext, emit_json, fail, say, user_errors
from memtui.core.base.terminal import visible
from memtui.core.cascade import Cascade, CascadeFile, compute_cascade, project_key, record_decision

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
        f"\n{len(loaded)} files loaded: {cascade.files_chars:,} characters of files + {cascade.framing_chars:,} of headers "
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
@click.option("--json", "as_json", is_flag=True, help="Print the whole cascade as JSON.")
@click.pass_context
@user_errors
def cascade(ctx: click.Context, cwd: Path | None, reads: tuple[str, ...], rendered: bool, memory_prompt: bool, as_json: bool) -> None:
    """Show exactly which instruction files the agent loads, in order, and why."""
    obj, real_cwd = _context(ctx, cwd)
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


@click.group("imports")
def imports() -> None:
    """Decide whether this project's instruction files may import files outside the cwd."""


def _decide(ctx: click.Context, cwd: Path | None, decision: str) -> None:
    obj, real_cwd = _context(ctx, cwd)
    key = project_key(real_cwd)
    path = record_decision(obj.locations.state_dir, key, "approved" if decision == "approved" else "declined")
    say(f"external imports {decision} for {visible(key)} (recorded in {visible(str(path))})")
    if obj.flavor.external_import_flag:
        say(f"note: the agent itself reads {obj.flavor.external_import_flag} in ~/.claude.json, which memtui does not change")


@imports.command("approve")
@click.option("--cwd", "cwd", type=click.Path(path_type=Path), default=None, help="The project's working directory.")
@click.pass_context
@user_errors
def approve(ctx: click.Context, cwd: Path | None) -> None:
    """Let external imports load for this project."""
    _decide(ctx, cwd, "approved")


@imports.command("decline")
@click.option("--cwd", "cwd", type=click.Path(path_type=Path), default=None, help="The project's working directory.")
@click.pass_context
@user_errors
def decline(ctx: click.Context, cwd: Path | None) -> None:
    """Keep external imports out for this project (they are listed, not pending)."""
    _decide(ctx, cwd, "declined")
