"""``memtui dream status|plan|apply|undo``: the dream (docs/behaviour.md §8) from the command line — the
same core the Dream pane drives (``memtui.core.dream``).

- ``status``: every gate, what blocks, the lock holder (nothing written to the memory dir);
  for the claude flavor the gates of Claude Code's own auto-dream in its order, with their
  sources, the sessions counted, the traps and the verdict;
- ``history``: memtui's dreams and the agent's own dreams and extractions, with diffs;
- ``request``: the claude flavor's dream request as the agent would send it now;
- ``reset-lock``: after a dream that left no record, the lock back (undoable);
- ``plan``: a dry run — the four phases, then the plan with a diff and reason per file
  (nothing written, no gates, no lock); for the claude flavor, one line on whether the
  agent's own dream runs now (the gates are not memtui's: the plan does not wait for them);
- ``apply``: gates (``--force`` skips them), lock, plan, apply as one transaction; prints the
  journal id of the run;
- ``undo``: restores the last applied dream byte for byte (files, mtimes, the lock).

Exit codes: 0 done; 1 a gate is closed, the lock is held, a file changed meanwhile, or nothing
to undo; 2 usage or environment errors.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import click

from memtui.commands.common import (
    CliContext,
    common_options,
    emit_json,
    fail,
    say,
    user_errors,
)
from memtui.core.base.gcpause import gc_paused
from memtui.core.base.terminal import visible
from memtui.core.base.wording import counted, details_line, with_sources
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
from memtui.core.dream.autodream import AutoDreamStatus, Gate, check_autodream, counted_sessions, headline, shorten
from memtui.core.dream.autodream import status_to_json as autodream_to_json
from memtui.core.dream.history import dream_history, item_diffs, remember_files
from memtui.core.dream.prompt import build_dream_request, instructions_block
from memtui.core.dream.reset import plan_lock_reset, reset_lock
from memtui.core.memory.catalog import iso_utc
from memtui.core.places.release import release_of
from memtui.core.writes.edits import ApplyError, ConflictError, EditError

_CONSOLIDATOR = click.option(
    "--consolidator",
    type=click.Choice(["auto", "offline", "claude"]),
    default="auto",
    show_default=True,
    help="offline (deterministic) or claude (an agent on a staging copy); auto = claude when an API credential is set.",
)
_JSON = click.option("--json", "as_json", is_flag=True, help="Print JSON.")
_SESSION = click.option("--session", "session", default=None, metavar="ID", help="The current session's id (or its first 8+ characters): not counted by the sessions gate.")


def _context(obj: CliContext, session: str | None = None, *, reads_only: bool = False) -> DreamContext:
    """The dream context; ``reads_only``: a memory dir the agent has not created yet reads as
    empty (one line on stderr) instead of being refused."""
    if reads_only:
        obj.readable_memory_dir()
    else:
        obj.checked_memory_dir()
    return DreamContext.from_locations(obj.locations, current_session=_session_id(obj, session))


def _session_id(obj: CliContext, session: str | None) -> str | None:
    """``--session`` as given, or the whole id of the one session of the project it is the
    start of (8 hex digits or more); an ambiguous start is one line on stderr, exit 2."""
    from memtui.core.sessions.sessionid import AmbiguousSessionIdError, find_session_transcript

    if session is None:
        return None
    try:
        found = find_session_transcript(obj.locations.sessions_dir, session)
    except AmbiguousSessionIdError as exc:
        fail(f"--session {exc}", 2)
    return session if found is None else found.stem


def _consolidator(name: str) -> str:
    if name != "auto":
        return name
    from memtui.core.recall.claude import has_credentials

    return "claude" if has_credentials() else "offline"


def _claude_options(name: str, model: str | None) -> dict[str, Any]:
    return {"model": model} if name == "claude" and model else {}


@click.group("dream")
@common_options
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
    say(f"auto-dream   {'enabled' if data['enabled'] else 'disabled'}")
    say(f"time         {mark(t['ok'])} {since} (min {t['min_hours']:g} h){' — opens ' + t['opens_at'] if t['opens_at'] else ''}")
    c = g["scan"]
    say(f"scan         {mark(c['ok'])} {'last scan ' + c['last_scan_at'] if c['last_scan_at'] else 'no scan yet'}{' — next ' + c['next_scan_at'] if c['next_scan_at'] else ''}")
    s = g["sessions"]
    say(f"sessions     {mark(s['ok'])} {s['count']} since the last consolidation (min {s['min_sessions']})")
    k = g["lock"]
    holder = "free" if not k["exists"] else f"PID {k['holder_pid']} ({'alive' if k['holder_alive'] else 'not running'})" if k["holder_pid"] else "no holder"
    crashed = " — a crashed run, will be rolled back" if k["crashed"] else ""
    say(f"lock         {mark(k['ok'])} {holder}{crashed}")
    say("would run" if data["would_run"] else f"would not run: {visible(data['reasons'][0])}")


def _print_autodream(status: AutoDreamStatus) -> None:
    say(f"{status.release.cli} {status.release.version}'s auto-dream, gates in its order:")
    for g in status.gates:
        mark = "open  " if g.ok else "CLOSED"
        say(f"  {g.title:<17} {mark} {visible(g.detail)}")
        if g.details or g.sources:
            say(f"  {'':<17}        {visible(details_line(with_sources(g.details, g.sources)))}")
        if g.id == "organization":
            _print_marks(g)
        if not g.ok and g.opens:
            say(f"  {'':<17}        opens: {visible(g.opens)}")
        if not g.ok and g.effect:
            say(f"  {'':<17}        then: {visible(g.effect)}")
    counted = [s for s in status.sessions if s.counted]
    if status.sessions:
        say(f"sessions counted ({len(counted)} of {len(status.sessions)}):")
        for s in status.sessions:
            mark = "+" if s.counted else "-"
            why = "" if s.counted else f"  ({s.why})"
            say(f"  {mark} {visible(s.session_id)}  {iso_utc(s.mtime)}  {visible(s.entrypoint or '?')}{visible(why)}")
    blocking = status.blocking
    for trap in status.traps:
        if blocking is not None and blocking.never and trap.data.get("gate") == blocking.id:
            continue  # the verdict below says it
        say(f"trap: {visible(trap.title)}: {visible(trap.message)}")
        if trap.details:
            say(f"      {visible(details_line(trap.details))}")
        if trap.fix:
            say(f"      fix: {visible(trap.fix)}")
    say(visible(status.verdict))


def _print_marks(g: Gate) -> None:
    """The organization gate's marks (file, line, organization) and the lines that hold the
    mark's type but are no mark, one a line; ``and N more`` past those memtui kept."""
    marks, total = g.data.get("marks") or [], int(g.data.get("marks_total") or 0)
    for m in marks:
        say(f"  {'':<17}        marked: {visible(shorten(m['path']))} line {m['line']}: organization {visible(m['organization'])}")
    if total > len(marks):
        say(f"  {'':<17}        and {counted(total - len(marks), 'more mark')}")
    for i in g.data.get("ignored") or []:
        say(f"  {'':<17}        no mark: {visible(shorten(i['path']))} line {i['line']} ({visible(i['why'])})")


def _auto_note(ctx: DreamContext, now: datetime) -> AutoDreamStatus | None:
    """The flavor's CLI release's own auto-dream at ``now`` (``None`` for a flavor with none)."""
    release = release_of(ctx.flavor)
    return None if release is None else check_autodream(ctx, now, release)


@dream.command("status")
@_SESSION
@click.option("--entrypoint", default="cli", show_default=True, metavar="NAME",
              help="claude flavor: the session whose turn ends (cli = interactive; sdk-cli = `claude -p`).")
@_JSON
@common_options
@click.pass_obj
@user_errors
def status_cmd(obj: CliContext, session: str | None, entrypoint: str, as_json: bool) -> None:
    """The gates, in the order the agent checks them, and whether it dreams next (writes
    nothing but memtui's copies of the memory files, for the history's diffs)."""
    ctx = _context(obj, session, reads_only=True)
    release = release_of(ctx.flavor)
    if release is not None:
        remember_files(ctx, obj.now())
        auto = check_autodream(ctx, obj.now(), release, entrypoint=entrypoint)
        if as_json:
            emit_json(autodream_to_json(auto))
            return
        _print_autodream(auto)
        return
    status = check_gates(ctx, obj.now())
    if as_json:
        emit_json(status_to_json(status))
        return
    _print_status(status)


@dream.command("history")
@click.option("--diff", "with_diff", is_flag=True, help="Show the diff of each file the agent changed, where memtui has a copy from before.")
@_JSON
@common_options
@click.pass_obj
@user_errors
def history_cmd(obj: CliContext, with_diff: bool, as_json: bool) -> None:
    """memtui's dreams and the agent's own dreams and extractions (from its transcripts),
    newest first."""
    ctx = _context(obj, reads_only=True)
    items = dream_history(ctx)
    if as_json:
        out = []
        for item in items:
            data = item.to_json()
            if item.who == "agent":
                data["diffs"] = [{"path": d.relpath, "diff": d.diff, "source": d.source, "note": d.note} for d in item_diffs(ctx, item)]
            out.append(data)
        emit_json(out)
        return
    if not items:
        say("no dream or extraction recorded yet")
    for item in items:
        who = "memtui" if item.who == "memtui" else f"agent {item.session_id or ''}".rstrip()
        say(f"{iso_utc(item.time)[:19].replace('T', ' ')}  {item.kind:<10} {visible(who)}: {visible(item.summary)}")
        for rel in item.files:
            say(f"    {visible(rel)}")
        if with_diff and item.who == "agent":
            for d in item_diffs(ctx, item):
                if d.diff:
                    say(f"  ({visible(d.source)})")
                    say(d.diff.rstrip("\n"))
                elif d.note:
                    say(f"  {visible(d.relpath)}: {visible(d.note)}")


@dream.command("request")
@click.option("--model", default=None, help="The model (default: settings `model`, else the agent's main-loop default).")
@_JSON
@common_options
@click.pass_obj
@user_errors
def request_cmd(obj: CliContext, model: str | None, as_json: bool) -> None:
    """claude flavor: the dream request as the agent would send it now (its prompt over the
    real memory dir and the sessions its gate counts); memtui's consolidator sends the same
    prompt over its staging copy."""
    ctx = _context(obj)
    release = release_of(ctx.flavor)
    if release is None:
        fail("the agent flavor's dream has no fixed request; `memtui dream plan --consolidator claude` runs memtui's", 2)
    from memtui.core.agent import DEFAULT_MAX_TOKENS

    request = build_dream_request(ctx, release, counted_sessions(ctx), model=model, max_tokens=DEFAULT_MAX_TOKENS,
                                  instructions=instructions_block(ctx))
    if as_json:
        emit_json(request.to_json())
        return
    say(request.render(), keep_crlf=True)


@dream.command("reset-lock")
@click.option("--yes", is_flag=True, help="Do it without showing the change first.")
@_JSON
@common_options
@click.pass_obj
@user_errors
def reset_lock_cmd(obj: CliContext, yes: bool, as_json: bool) -> None:
    """Set the consolidation lock back to the last dream the transcripts record (or to "never"),
    after a dream that left no record; `memtui undo` puts it back."""
    ctx = _context(obj)
    try:
        plan = plan_lock_reset(ctx)
    except EditError as exc:
        fail(str(exc), 1)
    if not yes and not as_json:
        say(visible(plan.title))
        say("run again with --yes to do it")
        return
    try:
        entry = reset_lock(ctx, obj.now())
    except (EditError, ConflictError, ApplyError) as exc:
        fail(str(exc), 1)
    if as_json:
        emit_json({"id": entry.id, "title": entry.title})
        return
    say(f"{visible(entry.title)}  (undo with `memtui undo`)")


def _print_plan(dp: DreamPlan, *, diffs: bool = True) -> None:
    say(visible(dp.plan.title))
    for change, reason in dp.items():
        say(f"  {change.kind:<6} {visible(change.relpath)} — {visible(reason)}")
    for f in dp.findings:
        where = f"{f.path}:{f.line}" if f.path and f.line else (f.path or "")
        say(f"  note   {visible(where)} {f.code}: {visible(f.message)}".rstrip())
    if diffs:
        for change in dp.plan.changes:
            say("")
            say(change.diff().rstrip("\n"))


@dream.command("plan")
@_CONSOLIDATOR
@click.option("--model", default=None, help="The model of the claude consolidator (default: settings `model`, else claude-sonnet-5-5; claude flavor: the agent's main-loop model).")
@click.option("--max-deletions", type=click.IntRange(0), default=DEFAULT_MAX_DELETIONS, show_default=True, help="At most this many files deleted per run.")
@_JSON
@common_options
@click.pass_obj
@user_errors
def plan_cmd(obj: CliContext, consolidator: str, model: str | None, max_deletions: int, as_json: bool) -> None:
    """A dry run: the four phases and the plan, with a diff and reason per file (writes nothing)."""
    name = _consolidator(consolidator)
    ctx = _context(obj)
    try:
        dp = plan_dream(ctx, obj.now(), name, max_deletions=max_deletions, **_claude_options(name, model))  # type: ignore[arg-type]
    except DreamError as exc:
        fail(str(exc), 1)
    auto = _auto_note(ctx, obj.now())
    if as_json:
        with gc_paused():  # a dict per event: no cyclic collection walking them meanwhile
            data = plan_to_json(dp)
            if auto is not None:
                data["agent_dream"] = {"release": auto.release.name, "would_fire": auto.would_fire, "blocking": auto.blocking.id if auto.blocking else None,
                                       "reason": auto.reason, "headline": headline(auto)}
            emit_json(data)
        return
    _print_plan(dp)
    if auto is not None:
        say("")
        say(f"{auto.release.cli} {auto.release.version}'s own dream: {visible(headline(auto))} (`memtui dream status` says why)")


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
            blocked = autodream_to_json(exc.status) if isinstance(exc.status, AutoDreamStatus) else status_to_json(exc.status)
            emit_json({"run_id": None, "blocked": True, **blocked})
            raise SystemExit(1) from exc
        fail(f"{exc} (--force skips the gates)", 1)
    except (LockError, ConflictError, ApplyError, DreamError) as exc:
        fail(str(exc), 1)
    if as_json:
        data = plan_to_json(dp, with_events=False)
        emit_json({"run_id": entry.id if entry else None, "consolidator": dp.consolidator, "changes": [{k: c[k] for k in ("path", "action", "reason")} for c in data["changes"]], "findings": data["findings"]})
        return
    _print_plan(dp, diffs=False)
    say(f"applied: {entry.id}  (undo with `memtui dream undo`)" if entry else "nothing to change; the consolidation is recorded")


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
    say(visible(entry.title))
    for change in entry.changes:
        say(f"  {change.kind:<6} {visible(change.relpath)}")

