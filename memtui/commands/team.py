"""``memtui team import``: bring a sync server's bundle into ``<memory dir>/team/`` safely."""

from __future__ import annotations

from pathlib import Path

import click

from memtui.commands.common import CliContext, common_options, emit_json, fail, say, user_errors
from memtui.core.base.terminal import visible
from memtui.core.team.bundle import ImportReport, TeamImportError, import_bundle, load_bundle

_VERB = {"created": "created", "updated": "updated", "unchanged": "unchanged"}
_DRY_VERB = {"created": "would create", "updated": "would update", "unchanged": "unchanged"}


@click.group("team")
@common_options
def team() -> None:
    """Shared team memory (<memory dir>/team/)."""


@team.command("import")
@click.argument("bundle", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--dry-run", is_flag=True, help="Check every entry and say what would be written; write nothing.")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@common_options
@click.pass_obj
@user_errors
def import_(obj: CliContext, bundle: Path, dry_run: bool, as_json: bool) -> None:
    """Import BUNDLE, a JSON object {key: content} as a sync server returns it.

    Every key is checked for path traversal (URL-encoded, look-alike Unicode, backslashes,
    absolute paths, symlinks out of team/); every content for the 250,000-byte limit and for
    likely secrets. Rejected keys are reported with the reason and do not stop the others; the
    accepted files (and a team/MEMORY.md line for each new memory) are written as one change:
    atomically, nothing partial if a write fails, undone with `memtui undo`. Exit 1 when any
    key was rejected, 2 when nothing could be done (bad bundle, no memory dir, a failed write).
    """
    loc = obj.locations
    try:
        entries = load_bundle(bundle)
        report = import_bundle(entries, loc.memory_dir, state_dir=loc.state_dir, now=obj.now(), dry_run=dry_run)
    except TeamImportError as exc:
        fail(exc.reason)
    if as_json:
        emit_json(report.to_json())
    else:
        _print(report)
    for entry in report.index_overflow:
        say(f"warning: team/MEMORY.md: [{visible(entry.title)}]({visible(entry.target)}) is now past the agent's index cap", err=True)
    if report.rejected:
        raise SystemExit(1)


def _print(report: ImportReport) -> None:
    verbs = _DRY_VERB if report.dry_run else _VERB
    for a in report.accepted:
        say(f"{verbs[a.status]:<12} {_show(a.key)} ({a.bytes:,} byte{'' if a.bytes == 1 else 's'})")
    for r in report.rejected:
        say(f"{'rejected':<12} {_show(r.key)} [{r.code}]: {visible(r.reason)}")
    counts = {s: sum(1 for a in report.accepted if a.status == s) for s in ("created", "updated", "unchanged")}
    head = "dry run, nothing written: " if report.dry_run else ""
    say(
        f"{head}{counts['created']} new, {counts['updated']} updated, {counts['unchanged']} unchanged, "
        f"{len(report.rejected)} rejected -> {visible(str(report.team_dir))}"
    )


def _show(key: str) -> str:
    """A key as typed, or quoted with its control, bidi and format characters escaped."""
    return key if visible(key) == key and key.isprintable() else f"'{visible(key)}'"
