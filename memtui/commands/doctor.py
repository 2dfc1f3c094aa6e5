"""``memtui doctor [--json] [--fix CODE...] [--yes]``: the lint catalog (SPEC §4.3) over the
memory dir, grouped by file; safe fixes previewed as diffs, applied (undoably) with ``--yes``.

Exit status: 1 when an error-severity finding remains (or a fix could not be applied), else 0 —
usable as a pre-commit hook or CI step. 2 for a usage error.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import click

from memtui.commands.common import CliContext, common_options, emit_json, fail, user_errors
from memtui.core.doctor import DOCTOR_CODES, FIX_OF_CODE, FIXES, DoctorReport, Finding, FixError, combined_fix_plan, run_doctor
from memtui.core.edits import ApplyError, ConflictError, Plan, apply_plan
from memtui.core.journal import Journal

_SEVERITY_COLOR = {"error": "red", "warning": "yellow", "info": "cyan"}


def _instruction_texts(obj: CliContext) -> list[str]:
    """The text of every instruction file the agent loads here (not the memory index): what a
    memory should not repeat. Any problem computing the cascade leaves the check out."""
    from memtui.core.cascade import compute_cascade

    cwd = obj.project if obj.project is not None else Path(os.getcwd())
    try:
        cascade = compute_cascade(obj.locations, cwd)
    except (OSError, ValueError):
        return []
    return [f.content for f in cascade.files if f.content and f.layer not in ("automem", "teammem")]


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
    return report.fixable(None if code == "all" else {code})


def _finding_line(f: Finding) -> str:
    where = f"{f.line:>5}" if f.line else "     "
    sev = click.style(f"{f.severity:<7}", fg=_SEVERITY_COLOR[f.severity])
    fix = click.style(f"  [fix: {f.fix}]", dim=True) if f.fix else ""
    return f"  {where}  {sev} {f.code:<24} {f.message}{fix}"


def _print_report(report: DoctorReport) -> None:
    click.echo(f"{report.memory_dir}  ({report.memories} memories)")
    for path, findings in report.by_path().items():
        click.echo("")
        click.echo(click.style(path or "(memory dir)", bold=True))
        for f in findings:
            click.echo(_finding_line(f))
    counts = report.counts()
    fixable = len(report.fixable())
    summary = f"{counts['error']} errors, {counts['warning']} warnings, {counts['info']} notes"
    if not report.findings:
        summary = "no findings"
    click.echo(f"\n{summary}" + (f"; {fixable} fixable: `memtui doctor --fix CODE` previews, add --yes to apply" if fixable else ""))


def _plan_json(code: str, plan: Plan | None, *, applied: bool, entry_id: str | None = None, error: str | None = None) -> dict[str, Any]:
    return {
        "code": code,
        "title": plan.title if plan else None,
        "files": [{"path": c.relpath, "kind": c.kind} for c in plan.changes] if plan else [],
        "diff": plan.diff() if plan else "",
        "notes": list(plan.notes) if plan else [],
        "index_overflow": [{"line": e.line, "title": e.title, "target": e.target} for e in plan.index_overflow] if plan else [],
        "applied": applied,
        "journal_entry": entry_id,
        "error": error,
    }


@click.command("doctor")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.option("--fix", "fix_codes", multiple=True, metavar="CODE", help="Fix the findings of this code or fix id (repeatable, or comma-separated; `all` = every safe fix). Without --yes: show the diffs only.")
@click.option("--yes", is_flag=True, help="Apply the --fix changes (undo with `memtui undo`).")
@common_options
@click.pass_obj
@user_errors
def doctor(obj: CliContext, as_json: bool, fix_codes: tuple[str, ...], yes: bool) -> None:
    """Check the memories and the index against the lint catalog; preview or apply safe fixes.

    Exits 1 when an error-severity finding remains, else 0.
    """
    codes = _parse_codes(fix_codes)
    if yes and not codes:
        fail("--yes applies --fix CODE changes; give at least one --fix")
    memory_dir: Path = obj.locations.memory_dir
    if not memory_dir.is_dir():
        fail(f"no memory dir at {memory_dir} ({obj.locations.memory_dir_source}); see `memtui where`", 1)
    instructions = _instruction_texts(obj)
    report = run_doctor(memory_dir, obj.now(), instruction_texts=instructions)
    if not codes:
        if as_json:
            emit_json(report.to_json())
        else:
            _print_report(report)
        raise SystemExit(1 if report.has_errors else 0)

    results: list[dict[str, Any]] = []
    failed = False
    journal = Journal(obj.locations.state_dir, memory_dir)
    for code in codes:
        if yes:  # fresh findings: an earlier fix may have moved lines
            report = run_doctor(memory_dir, obj.now(), instruction_texts=instructions)
        selected = _selected(report, code)
        if not selected:
            why = "nothing to fix" if code == "all" or code in FIXES or code in FIX_OF_CODE else "no safe fix for this code"
            results.append(_plan_json(code, None, applied=False, error=why))
            if not as_json:
                click.echo(f"{code}: {why}")
            continue
        try:
            plan = combined_fix_plan(memory_dir, selected)
        except FixError as exc:
            failed = True
            results.append(_plan_json(code, None, applied=False, error=str(exc)))
            if not as_json:
                click.echo(f"{code}: {exc}", err=True)
            continue
        if not as_json:
            click.echo(click.style(f"# {plan.title}", bold=True))
            click.echo(plan.diff(), nl=False)
            for entry in plan.index_overflow:
                click.echo(click.style(f"warning: pushes [{entry.title}]({entry.target}) past the index cap", fg="yellow"))
        if not yes:
            results.append(_plan_json(code, plan, applied=False))
            continue
        try:
            entry = apply_plan(memory_dir, plan, journal, obj.now())
        except (ConflictError, ApplyError) as exc:
            failed = True
            results.append(_plan_json(code, plan, applied=False, error=str(exc)))
            if not as_json:
                click.echo(f"{code}: {exc}", err=True)
            continue
        results.append(_plan_json(code, plan, applied=True, entry_id=entry.id))
        if not as_json:
            for note in plan.notes:
                click.echo(f"fixed: {note}")
            click.echo(f"applied as {entry.id} (undo: `memtui undo`)\n")
    if yes:
        report = run_doctor(memory_dir, obj.now(), instruction_texts=instructions)
    if as_json:
        emit_json({"fixes": results, "applied": yes, "report": report.to_json()})
    elif not yes:
        click.echo("\nnothing applied: add --yes to apply these changes (undo with `memtui undo`)")
    else:
        counts = report.counts()
        click.echo(f"remaining: {counts['error']} errors, {counts['warning']} warnings, {counts['info']} notes")
    raise SystemExit(1 if report.has_errors or failed else 0)
