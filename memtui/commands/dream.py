"""``memtui dream status|plan|apply|undo``: the dream (SPEC §8) from the command line — the
same core the Dream pane drives (``memtui.core.dream``).

- ``status``: every gate, what blocks, the lock holder (nothing written);
- ``plan``: a dry run — the four phases, then the plan with a diff and reason per file
  (nothing written, no gates, no lock);
- ``apply``: gates (``--force`` skips them), lock, plan, apply as one transaction; prints the
  journal id of the run;
- ``undo``: restores the last applied dream byte for byte (files, mtimes, the lock).

Exit codes: 0 done; 1 a gate is closed, the lock is held, a file changed meanwhile, or nothing
to undo; 2 usage or environment errors.
"""

from __future__ import annotations

from typing import Any

import click

from memtui.commands.common import (
    CliContext,
    common_options,
    emit_json,
    fail,
    user_errors,
)
from memtui.core.dream import (
    DEFAULT_MAX_DELETIONS,
    DreamBlocked,
    DreamContext,
    DreamError,
    DreamPlan,
    GateStatus,
    LockError,
    check_gates,
    plan_dream,
    plan_to_json,
    run_dream,
    status_to_json,
    undo_last_dream,
)
from memtui.core.writes.edits import ApplyError, ConflictError, EditError

_CONSOLIDATOR = click.option(
    "--consolidator",
    type=click.Choice(["auto", "offline", "claude"]),
    default="auto",
    show_default=True,
    help="offline (deterministic) or claude (an agent on a staging copy); auto = claude when an API credential is set.",
)
_JSON = click.option("--json", "as_json", is_flag=True, help="Print JSON.")
_SESSION = click.option("--session", "session", default=None, metavar="ID", help="The current session's id: not counted by the sessions gate.")


def _context(obj: CliContext, session: str | None = None) -> DreamContext:
    obj.checked_memory_dir()
    return DreamContext.from_locations(obj.locations, current_session=session)


def _consolidator(name: str) -> str:
    if name != "auto":
        return name
    from memtui.core.recall.claude import has_credentials

    return "claude" if has_credentials() else "offline"


def _claude_options(name: str, model: str | None) -> dict[str, Any]:
    return {"model": model} if name == "claude" and model else {}


@click.group("dream")
def dream() -> None:
    """Consolidate the memory dir as the agent's background "dream" would — gated, locked,
    previewed as a plan, applied as one undoable transaction."""


def _print_status(status: GateStatus) -> None:
    data = status_to_json(status)
    g = data["gates"]

    def mark(ok: bool) -> str:
        return "open  " if ok else "CLOSED"

    t = g["time"]
    since = "never consolidated" if t["hours_since"] is None else f"{t['hours_since']:.1f} h since the last consolidation"
    click.echo(f"auto-dream   {'enabled' if data['enabled'] else 'disabled'}")
    click.echo(f"time         {mark(t['ok'])} {since} (min {t['min_hours']:g} h){' — opens ' + t['opens_at'] if t['opens_at'] else ''}")
    c = g["scan"]
    click.echo(f"scan         {mark(c['ok'])} {'last scan ' + c['last_scan_at'] if c['last_scan_at'] else 'no scan yet'}{' — next ' + c['next_scan_at'] if c['next_scan_at'] else ''}")
    s = g["sessions"]
    click.echo(f"sessions     {mark(s['ok'])} {s['count']} since the last consolidation (min {s['min_sessions']})")
    k = g["lock"]
    holder = "free" if not k["exists"] else f"PID {k['holder_pid']} ({'alive' if k['holder_alive'] else 'not running'})" if k["holder_pid"] else "no holder"
    crashed = " — a crashed run, will be rolled back" if k["crashed"] else ""
    click.echo(f"lock         {mark(k['ok'])} {holder}{crashed}")
    click.echo("would run" if data["would_run"] else f"would not run: {data['reasons'][0]}")


@dream.command("status")
@_SESSION
@_JSON
@common_options
@click.pass_obj
@user_errors
def status_cmd(obj: CliContext, session: str | None, as_json: bool) -> None:
    """The gates, cheapest first, and whether a dream would run now (writes nothing)."""
    status = check_gates(_context(obj, session), obj.now())
    if as_json:
        emit_json(status_to_json(status))
        return
    _print_status(status)


def _print_plan(dp: DreamPlan, *, diffs: bool = True) -> None:
    click.echo(dp.plan.title)
    for change, reason in dp.items():
        click.echo(f"  {change.kind:<6} {change.relpath} — {reason}")
    for f in dp.findings:
        where = f"{f.path}:{f.line}" if f.path and f.line else (f.path or "")
        click.echo(f"  note   {where} {f.code}: {f.message}".rstrip())
    if diffs:
        for change in dp.plan.changes:
            click.echo("")
            click.echo(change.diff().rstrip("\n"))


@dream.command("plan")
@_CONSOLIDATOR
@click.option("--model", default=None, help="The model of the claude consolidator (default: settings `model`, else claude-sonnet-5-5).")
@click.option("--max-deletions", type=click.IntRange(0), default=DEFAULT_MAX_DELETIONS, show_default=True, help="At most this many files deleted per run.")
@_JSON
@common_options
@click.pass_obj
@user_errors
def plan_cmd(obj: CliContext, consolidator: str, model: str | None, max_deletions: int, as_json: bool) -> None:
    """A dry run: the four phases and the plan, with a diff and reason per file (writes nothing)."""
    name = _consolidator(consolidator)
    try:
        dp = plan_dream(_context(obj), obj.now(), name, max_deletions=max_deletions, **_claude_options(name, model))  # type: ignore[arg-type]
    except DreamError as exc:
        fail(str(exc), 1)
    if as_json:
        emit_json(plan_to_json(dp))
        return
    _print_plan(dp)


@dream.command("apply")
@click.option("--force", is_flag=True, help="Skip the gates (the lock is still taken).")
@_CONSOLIDATOR
@click.option("--model", default=None, help="The model of the claude consolidator.")
@click.option("--max-deletions", type=click.IntRange(0), default=DEFAULT_MAX_DELETIONS, show_default=True, help="At most this many files deleted per run.")
@_SESSION
@_JSON
@common_options
@click.pass_obj
@user_errors
def apply_cmd(obj: CliContext, force: bool, consolidator: str, model: str | None, max_deletions: int, session: str | None, as_json: bool) -> None:
    """Run the gates, take the lock, plan and apply as one transaction; print the run id."""
    name = _consolidator(consolidator)
    ctx = _context(obj, session)
    try:
        dp, entry = run_dream(ctx, obj.now(), name, force=force, max_deletions=max_deletions, **_claude_options(name, model))  # type: ignore[arg-type]
    except DreamBlocked as exc:
        if as_json:
            emit_json({"run_id": None, "blocked": True, **status_to_json(exc.status)})
            raise SystemExit(1) from exc
        fail(str(exc), 1)
    except (LockError, ConflictError, ApplyError, DreamError) as exc:
        fail(str(exc), 1)
    if as_json:
        data = plan_to_json(dp, with_events=False)
        emit_json({"run_id": entry.id if entry else None, "consolidator": dp.consolidator, "changes": [{k: c[k] for k in ("path", "action", "reason")} for c in data["changes"]], "findings": data["findings"]})
        return
    _print_plan(dp, diffs=False)
    click.echo(f"applied: {entry.id}  (undo with `memtui dream undo`)" if entry else "nothing to change; the consolidation is recorded")


@dream.command("undo")
@_JSON
@common_options
@click.pass_obj
@user_errors
def undo_cmd(obj: CliContext, as_json: bool) -> None:
    """Undo the last applied dream: every file back byte for byte (deleted ones too)."""
    ctx = _context(obj)
    try:
        entry = undo_last_dream(ctx, obj.now())
    except (EditError, ConflictError, ApplyError) as exc:
        fail(str(exc), 1)
    if as_json:
        emit_json({"id": entry.id, "title": entry.title, "undoes": entry.undoes, "files": [{"path": c.relpath, "kind": c.kind} for c in entry.changes]})
        return
    click.echo(entry.title)
    for change in entry.changes:
        click.echo(f"  {change.kind:<6} {change.relpath}")

