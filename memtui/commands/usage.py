"""``memtui usage``: which memories the agent actually recalled, read and wrote, from its own
transcripts; which it never used; what memory costs per session start."""

from __future__ import annotations

import os
from pathlib import Path

import click
from rich.markup import escape as markup_escape

from memtui.commands.common import CliContext, common_options, emit_json, fail, print_table, rich_console, user_errors
from memtui.core.base.wording import counted
from memtui.core.base.terminal import visible
from memtui.core.memory.age import age_days_at, age_label
from memtui.core.sessions.usage import MemoryUsage, UsageReport, iso


def escape(text: str) -> str:
    """``text`` for a rich line: terminal controls shown as escapes, markup escaped."""
    return markup_escape(visible(text))


def _when(when: float | None, now: float) -> str:
    return "—" if when is None else age_label(age_days_at(when, now))


def startup_cost_for(obj: CliContext, report: UsageReport) -> object | None:
    """The startup cost of this project (``None`` when the cascade cannot be computed)."""
    from memtui.core.audit.cost import counting_model, startup_cost
    from memtui.core.audit.tokens import TokenCounter
    from memtui.core.cascade import compute_cascade

    loc = obj.locations
    try:
        cascade = compute_cascade(loc, Path(os.path.realpath(obj.project or os.getcwd())))
    except NotADirectoryError:
        return None
    counter = TokenCounter(counting_model(loc), state_dir=loc.state_dir)
    return startup_cost(cascade, report.sessions, counter)


@click.command("usage")
@click.option("--since", "since", type=click.FloatRange(min=0, min_open=True), default=None, metavar="DAYS",
              help="Only sessions active in the last DAYS days, and their uses from then on.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@common_options
@click.pass_obj
@user_errors
def usage_cmd(obj: CliContext, since: float | None, as_json: bool) -> None:
    """Per memory: how often the agent recalled, read and wrote it, in how many sessions, and when
    last — from its transcripts (sessions in any cwd of the repository, and their sub-agents)."""
    from memtui.core.sessions.usage import UsageIndex

    obj.readable_memory_dir()
    loc = obj.locations
    now = obj.now().timestamp()
    index = UsageIndex(loc)
    index.refresh()
    report = index.report(now, since)
    cost = startup_cost_for(obj, report)
    loads = index_loads_for(obj, now, since)
    if as_json:
        data = report.to_json()
        data["cost"] = None if cost is None else cost.to_json()  # type: ignore[attr-defined]
        data["index_loads"] = None if loads is None else [c.to_json() for c in loads]
        emit_json(data)
        return
    _print(report, cost, now)
    if loads:
        _print_loads(loads)


def index_loads_for(obj: CliContext, now: float, since: float | None) -> list | None:
    """The memory index each session and each of its sub-agents loaded, from their own
    transcripts (claude flavor; ``None`` for the others): ``memtui.core.stores.cost``."""
    loc = obj.locations
    if loc.flavor.name != "claude":
        return None
    from datetime import datetime, timezone

    from memtui.core.audit.cost import counting_model
    from memtui.core.audit.tokens import TokenCounter
    from memtui.core.stores.audit import repository_project_dirs, repository_sessions
    from memtui.core.stores.cost import index_costs

    sessions, subagents = repository_sessions(repository_project_dirs(loc))
    if since is not None:
        cutoff = datetime.fromtimestamp(now - since * 86400, timezone.utc).strftime("%Y-%m-%dT%H:%M:%S")
        sessions = [e for e in sessions if (e.last_time or e.first_time or "") >= cutoff]
    counter = TokenCounter(counting_model(loc), state_dir=loc.state_dir)
    return index_costs(sessions, subagents, counter)


# memtui's choice: the sessions the text output lists (the JSON has all).
SHOWN_LOADS = 10


def _print_loads(loads: list) -> None:
    from rich.table import Table

    console = rich_console()
    with_agents = sum(1 for c in loads if len(c.agents) > 1)
    console.print(f"\n[bold]memory index loaded[/] per session, its sub-agents included ({counted(len(loads), 'session')}, {with_agents} with sub-agents; newest {min(SHOWN_LOADS, len(loads))}):")
    table = Table(expand=False)
    for name, justify in (("session", "left"), ("started", "left"), ("itself", "right"), ("sub-agents", "left"), ("total", "right")):
        table.add_column(name, justify=justify, overflow="fold")  # type: ignore[arg-type]
    for c in loads[-SHOWN_LOADS:][::-1]:
        own, subs = c.agents[0], c.agents[1:]
        agents = ", ".join(f"{escape(a.agent_type or a.agent or '?')} {a.tokens}" for a in subs) or "—"
        table.add_row(escape(c.session[:8]), escape((c.time or "")[:16].replace("T", " ")), str(own.tokens), agents, str(c.total))
    print_table(console, table)
    if any(not c.total.exact for c in loads):
        console.print("[dim]~ estimated at 4 characters a token (no API key: ANTHROPIC_API_KEY)[/]")


def _row(m: MemoryUsage, now: float) -> tuple[str, ...]:
    return (escape(m.relpath), str(m.recalled), str(m.read), str(m.written), str(m.sessions), _when(m.last_used, now))


def _print(report: UsageReport, cost: object | None, now: float) -> None:
    from rich.table import Table

    console = rich_console()
    window = f" in the last {report.since_days:g} days" if report.since_days is not None else ""
    span = f" ({iso(report.first_time)} → {iso(report.last_time)})" if report.sessions else ""
    console.print(f"[bold]{len(report.sessions)}[/] {'session' if len(report.sessions) == 1 else 'sessions'}{window}{span}, {counted(report.transcripts, 'transcript')} read")
    used = sorted((m for m in report.memories if m.used), key=lambda m: (-(m.last_used or 0), m.relpath))
    if used:
        table = Table(expand=False)
        for name, justify in (("memory", "left"), ("recalled", "right"), ("read", "right"), ("written", "right"),
                              ("sessions", "right"), ("last used", "right")):
            table.add_column(name, justify=justify, overflow="fold" if name == "memory" else "ellipsis")  # type: ignore[arg-type]
        for m in used:
            table.add_row(*_row(m, now))
        print_table(console, table)
    never = report.never_used
    if never:
        console.print(f"\n[yellow]never used[/] ({len(never)} of {len(report.memories)}): candidates for review, not for deletion")
        for m in never:
            console.print(f"  {escape(m.relpath)}")
    if report.missing:
        console.print(f"\n[red]used, no longer there[/] ({len(report.missing)}):")
        for m in report.missing:
            console.print(f"  {escape(m.relpath)}  recalled {m.recalled}, read {m.read}, written {m.written}, last {_when(m.last_used, now)}")
    if cost is not None:
        console.print("\n" + escape(cost.summary()))  # type: ignore[attr-defined]
    for problem in report.problems:
        console.print(f"[yellow]note[/]: {escape(problem)}")
