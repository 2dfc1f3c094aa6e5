"""``memtui doctor [--json] [--fix CODE...] [--yes]``: the lint catalog (docs/behaviour.md §4.3) over the
memory dir, grouped by file; safe fixes previewed as diffs, applied (undoably) with ``--yes``.

Exit status: 1 when an error-severity finding remains (or a fix could not be applied), else 0 —
usable as a pre-commit hook or CI step. 2 for a usage error.
"""

from __future__ import annotations

import os
import shlex
from pathlib import Path
from typing import Any

import click

from memtui.commands.common import (
    CliContext,
    common_options,
    emit_json,
    fail,
    say,
    say_parts,
    user_errors,
    warn,
)
from memtui.core.base.gcpause import gc_paused
from memtui.core.base.wording import counted
from memtui.core.base.terminal import visible
from memtui.core.doctor import (
    DOCTOR_CODES,
    FIX_OF_CODE,
    FIXES,
    DoctorReport,
    Finding,
    FixError,
    combined_fix_plan,
    instruction_texts,
    run_doctor,
)
from memtui.core.doctor.model import FileGroup, file_groups, folder_moves, move_of, note_kinds
from memtui.core.doctor.project_checks import add_project_findings
from memtui.core.doctor.usage_checks import project_usage
from memtui.core.writes.edits import ApplyError, ConflictError, Plan, apply_plan
from memtui.core.writes.journal import Journal
from memtui.core.writes.links import confirmed_links
from memtui.core.memory.catalogdb import CatalogDB
from memtui.core.verify import verify_root
from memtui.core.verify.judge import auto_judge

_SEVERITY_COLOR = {"error": "red", "warning": "yellow", "info": "cyan"}


def _instruction_texts(obj: CliContext) -> list[str]:
    cwd = obj.project if obj.project is not None else Path(os.getcwd())
    return instruction_texts(obj.locations, cwd)


def _parse_codes(values: tuple[str, ...]) -> list[str]:
    codes: list[str] = []
    for value in values:
        for code in (c.strip() for c in value.split(",")):
            if not code:
                continue
            if code != "all" and code not in DOCTOR_CODES and code not in FIXES:
                fail(f"--fix {code}: not a doctor code or fix id (see `memtui doctor --help`)")
            if code not in codes:
                codes.append(code)
    return codes


def _selected(report: DoctorReport, code: str) -> list[Finding]:
    return report.certain() if code == "all" else report.fixable({code})


def _say_finding(f: Finding, times: int = 1, at: tuple[int, ...] = ()) -> None:
    where = f"{f.line:>5}" if f.line else "     "
    fix = [(f"  [⚒ --fix {f.fix}]", {"dim": True})] if f.fix else []
    lines = f": lines {', '.join(str(n) for n in at)}" if len(at) > 1 else ""
    again = [(f"  (×{times}{lines})", {"dim": True})] if times > 1 else []
    say_parts(f"  {where}  ", (f"{f.severity:<7}", {"fg": _SEVERITY_COLOR[f.severity]}), f" {f.code:<24} {visible(f.message)}", *again, *fix)


def _say_group(group: FileGroup) -> None:
    say("")
    say(visible(group.path) if group.path else "(memory dir)", bold=True)
    for (f, times), at in zip(group.lines, group.at or [()] * len(group.lines), strict=True):
        _say_finding(f, times, at)


def _print_report(report: DoctorReport, *, verbose: bool = False) -> None:
    counts = report.counts()
    certain = len(report.certain())
    offered = len(report.fixable())
    summary = _counts(counts) if report.findings else "no findings"
    if certain:
        summary += f"; {certain} certain fix{'es' if certain != 1 else ''} (`--fix all` previews them)"
    if offered > certain:
        summary += f"; {offered - certain} more offered, one code at a time (`--fix CODE`, ⚒ below)"
    say(f"{visible(str(report.memory_dir))}  ({counted(report.memories, 'memory', 'memories')})")
    say(summary, bold=True)
    shown = report.findings if verbose else [f for f in report.findings if f.severity != "info" or f.path is None]
    moves = [] if verbose else folder_moves(f for f in shown if f.severity == "warning")
    if moves:  # one line per folder the code moved out of, instead of a line per stale path in it
        explained = {id(f) for f in shown if move_of(f, moves) is not None}
        say("")
        say("The code moved; these memories still name the old folders (`--verbose` lists each path):", bold=True)
        for move in moves:
            where = sorted({f.path or "" for f in shown if move_of(f, moves) is move})
            names = ", ".join(visible(w) for w in where[:4]) + (f", {len(where) - 4} more" if len(where) > 4 else "")
            say(f"  `{visible(move.old)}/` → `{visible(move.new) or '.'}/`: {counted(move.count, 'path')} in {names}")
        shown = [f for f in shown if id(f) not in explained]
    for group in file_groups(shown):
        _say_group(group)
    kinds = [] if verbose else note_kinds(report.findings)
    if kinds:
        say("")
        say(f"{counted(sum(k.count for k in kinds), 'note')} (advice, not defects), by kind:", bold=True)
        for kind in kinds:
            say_parts("  ", (f"{kind.count:>4}", {"fg": _SEVERITY_COLOR["info"]}), f" {kind.code:<24} {counted(kind.files, 'file')}: {visible(kind.meaning)}")
        say("`memtui doctor --verbose` lists every note under its file.", dim=True)
    for note in report.notes:
        say("")
        say(f"note: {note}", dim=True)
    if report.verification is not None and not report.verification.missing:
        v = report.verification.counts()
        say("")
        say(f"claims about the code: {v['verified']} verified, {v['stale']} stale, {v['unchecked']} not checked ({report.verification.source}, {visible(str(report.verification.root))})")
        for note in report.verification.notes:
            say(f"note: {visible(note)}", dim=True)


def _counts(counts: dict[str, int]) -> str:
    """``1 error, 2 warnings, 0 notes``."""
    return f"{counted(counts['error'], 'error')}, {counted(counts['warning'], 'warning')}, {counted(counts['info'], 'note')}"


def _plan_json(plan: Plan) -> dict[str, Any]:
    return {
        "title": plan.title,
        "files": [{"path": c.relpath, "kind": c.kind} for c in plan.changes],
        "diff": plan.diff(),
        "notes": list(plan.notes),
        "skipped": list(plan.skipped),
        "index_overflow": [{"line": e.line, "title": e.title, "target": e.target} for e in plan.index_overflow],
    }


@click.command("doctor")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.option("--fix", "fix_codes", multiple=True, metavar="CODE", help="Fix the findings of this code or fix id (repeatable, or comma-separated; `all` = every certain fix: the type and frontmatter traps, heading entries). Without --yes: show the diffs only.")
@click.option("--yes", is_flag=True, help="Apply the --fix changes (undo with `memtui undo`).")
@click.option("--verbose", "-v", is_flag=True, help="List every finding, the notes (advice) too, under its file.")
@click.option("--judge", type=click.Choice(["auto", "offline", "claude"]), default="auto", show_default=True, help="Conflicts between memories: the offline rule, or Claude's judgement (auto: when an API key is set).")
@common_options
@click.pass_obj
@user_errors
def doctor(obj: CliContext, as_json: bool, fix_codes: tuple[str, ...], yes: bool, verbose: bool, judge: str) -> None:
    """Check the memories and the index against the lint catalog; preview or apply safe fixes.

    Exits 1 when an error-severity finding remains, else 0.
    """
    codes = _parse_codes(fix_codes)
    if yes and not codes:
        fail("--yes applies --fix CODE changes; give at least one --fix")
    memory_dir, exists = obj.readable_memory_dir()
    instructions = _instruction_texts(obj)
    checks = {"project_root": verify_root(obj.locations), "judge": auto_judge(mode=judge)}
    usage = project_usage(obj.locations, obj.now())
    report = run_doctor(
        memory_dir,
        obj.now(),
        instruction_texts=instructions,
        cache=CatalogDB.for_memory_dir(obj.locations.state_dir, memory_dir, fmt=obj.locations.flavor.behaviour.memory_format) if exists else None,
        fmt=obj.locations.flavor.behaviour.memory_format,
        warning_style=obj.locations.flavor.behaviour.instructions.index_warning,
        **checks,
        usage=usage,
        missing_ok=True,
    )
    report = add_project_findings(report, obj.locations)
    if not codes:
        if as_json:
            with gc_paused():  # a dict per finding: no cyclic collection walking them meanwhile
                emit_json(report.to_json(fragment=True))
        else:
            _print_report(report, verbose=verbose)
        raise SystemExit(1 if report.has_errors else 0)

    journal = Journal(obj.locations.state_dir, memory_dir)
    selected: list[Finding] = []
    chosen: set[tuple[object, ...]] = set()  # what ``selected`` holds, to take each finding once
    skipped: list[dict[str, str]] = []
    for code in codes:
        found = _selected(report, code)
        if not found:
            if code == "all" and report.fixable():
                why = "no certain fix; the offered ones are applied one code at a time (`--fix CODE`)"
            else:
                why = "nothing to fix" if code == "all" or code in FIXES or code in FIX_OF_CODE else "no safe fix for this code"
            skipped.append({"code": code, "reason": why})
            if not as_json:
                say(f"{code}: {why}")
        for f in found:
            key = (f.code, f.severity, f.path, f.line, f.message, f.fix, repr(f.data))
            if key not in chosen:
                chosen.add(key)
                selected.append(f)
    plan: Plan | None = None
    error: str | None = None
    entry_id: str | None = None
    if selected:
        try:
            # One plan for every selected finding: the preview is exactly what --yes applies,
            # and one `memtui undo` reverts it.
            plan = combined_fix_plan(memory_dir, selected, confirmed_links=confirmed_links(journal.base))
        except FixError as exc:
            error = str(exc)
    if plan is not None and not as_json:
        say(f"# {visible(plan.title)}", bold=True)
        say(plan.diff(), nl=False)
        for entry in plan.index_overflow:
            say(f"warning: pushes [{visible(entry.title)}]({visible(entry.target)}) past the index cap", fg="yellow")
        for why in plan.skipped:
            say(f"not fixed: {visible(why)}", fg="yellow")
    if plan is not None and yes:
        try:
            entry_id = apply_plan(memory_dir, plan, journal, obj.now()).id
        except (ConflictError, ApplyError) as exc:
            error = str(exc)
        else:
            report = run_doctor(
                memory_dir,
                obj.now(),
                instruction_texts=instructions,
                cache=CatalogDB.for_memory_dir(obj.locations.state_dir, memory_dir, fmt=obj.locations.flavor.behaviour.memory_format) if exists else None,
                fmt=obj.locations.flavor.behaviour.memory_format,
                warning_style=obj.locations.flavor.behaviour.instructions.index_warning,
                **checks,
                usage=usage,
            )
            report = add_project_findings(report, obj.locations)
    if as_json:
        emit_json(
            {
                "plan": _plan_json(plan) if plan is not None else None,
                "applied": entry_id is not None,
                "journal_entry": entry_id,
                "skipped": skipped,
                "error": error,
                "report": report.to_json(),
            }
        )
    else:
        if error:
            warn(error)
        if entry_id is not None and plan is not None:
            for note in plan.notes:
                say(f"fixed: {visible(note)}")
            counts = report.counts()
            where = f" --memory-dir {shlex.quote(str(memory_dir))}" if obj.memory_dir is not None else ""
            say(f"applied as {entry_id} (undo: `memtui{visible(where)} undo`)")
            say(f"remaining: {_counts(counts)}")
        elif plan is not None and not yes:
            say("\nnothing applied: add --yes to apply these changes (undo with `memtui undo`)")
    raise SystemExit(1 if report.has_errors or error else 0)
