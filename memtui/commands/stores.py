"""``memtui stores [--json]``, ``memtui stores merge SRC [--into DST]`` and ``memtui stores setting
FILE KEY``: every memory store in play for the project, who read and who wrote each, what is
wrong, and the fix (``memtui.core.stores``). Exit 0 when nothing is wrong, 1 when a finding is
reported; ``merge`` and ``setting`` preview their change unless ``--yes``."""

from __future__ import annotations

import os
from pathlib import Path

import click

from memtui.commands.common import CliContext, common_options, emit_json, fail, say, user_errors
from memtui.core.base.terminal import visible, visible_block
from memtui.core.places.flavor import home_dir
from memtui.core.stores.audit import StoresReport, audit_stores
from memtui.core.stores.merge import MergeError, apply_merge, plan_merge
from memtui.core.stores.settings_fix import SettingEditError, apply_setting, plan_setting, setting_plan
from memtui.core.writes.edits import ApplyError, ConflictError, EditError


def _roles(roles: list[str]) -> str:
    words = {
        "reads": "read now",
        "reads-untrusted": "read when the workspace is not trusted",
        "seen": "",
        "sibling": "a store of a folder of this repository",
        "committed": "in the repository",
    }
    return ", ".join(w for r in roles if (w := words.get(r, r)))


def print_report(report: StoresReport) -> None:
    """The report in words (one block per store, then the findings)."""
    say(f"reads    {visible(report.reads)}")
    say(f"         {visible(report.reads_why)}" + ("" if report.auto_memory else "  (auto memory is OFF)"))
    for s in report.stores:
        say()
        role = _roles(s.roles)
        say(f"{visible(s.path)}" + (f"  [{role}]" if role else ""))
        say(f"  keyed by  {visible(s.keyed)}")
        state = f"{s.memories} memor{'y' if s.memories == 1 else 'ies'}" if s.exists else "nothing (no folder yet)"
        if s.git_tracked is not None:
            state += ", tracked by git" if s.git_tracked else ", not tracked by git"
        say(f"  holds     {state}")
        for label, refs in (("read by", s.readers), ("written by", s.writers)):
            for i, r in enumerate(refs[-5:]):
                files = f"  wrote {', '.join(visible(Path(f).name) for f in r.files[:3])}" if r.files else ""
                say(f"  {label if i == 0 else '':<9} {visible(r.session[:8])}  {visible((r.time or '')[:16].replace('T', ' '))}  {visible(r.entrypoint or '?')}  {visible(r.cwd or '?')}{files}")
            if len(refs) > 5:
                say(f"  {'':<9} … and {len(refs) - 5} earlier")
    say()
    if not report.sessions:
        say(f"no Claude Code session of this repository under {visible(str(report.projects_dir))}: nothing shows which store sessions read"
            + (" (is CLAUDE_CONFIG_DIR set as when Claude Code runs?)" if "CLAUDE_CONFIG_DIR" not in os.environ else ""))
    if not report.findings:
        say("no findings")
        return
    for f in report.findings:
        say(f"{f.severity}: {f.code}: {visible(f.message)}")
        for fix in f.fixes:
            say(f"  fix: {visible(fix.text)}")
            if fix.command:
                say(f"       {visible(fix.command)}")


@click.group("stores", invoke_without_command=True)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@common_options
@click.pass_context
@user_errors
def stores(ctx: click.Context, as_json: bool) -> None:
    """Every memory store in play for this project: the one Claude Code reads and why, the ones
    past sessions were told, loaded or wrote, who read and who wrote each, and what is wrong
    (written but never read, split, auto memory off, a setting ignored) with the fix. Exit 1
    when there is a finding."""
    if ctx.invoked_subcommand is not None:
        return
    obj: CliContext = ctx.obj
    if obj.flavor.name != "claude":
        say(f"memtui: the {obj.flavor.name} flavor ({obj.choice.reason}) reads its own transcripts; for Claude Code's, add --flavor claude", err=True)
    report = audit_stores(obj.locations)
    if as_json:
        emit_json(report.to_json())
    else:
        print_report(report)
    if report.findings:
        raise SystemExit(1)


@stores.command("merge")
@click.argument("src", type=click.Path(file_okay=False, path_type=Path))
@click.option("--into", "dst", type=click.Path(file_okay=False, path_type=Path), default=None, help="The store to merge into (default: the one Claude Code reads).")
@click.option("--copy", is_flag=True, help="Keep SRC's files (for a folder the repository tracks).")
@click.option("--yes", is_flag=True, help="Apply the change (undo with `memtui undo`); without it, only preview.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@common_options
@click.pass_obj
@user_errors
def merge_cmd(obj: CliContext, src: Path, dst: Path | None, copy: bool, yes: bool, as_json: bool) -> None:
    """Move the memories of store SRC into the store that is read (or --into DST): files of the
    same name and bytes are not copied twice, a different file of the same name comes in as
    NAME-2.md, SRC's MEMORY.md lines come along. One journaled change; `memtui undo` reverts it."""
    loc = obj.locations
    target = dst if dst is not None else loc.memory_dir
    try:
        merge = plan_merge(src, target, home=home_dir(), copy=copy)
    except MergeError as exc:
        fail(str(exc), 1)
    except OSError as exc:
        fail(f"cannot read {exc.filename or src}: {exc.strerror or exc}", 2)
    entry_id = None
    if yes:
        try:
            entry_id = apply_merge(merge, loc.state_dir, obj.now()).id
        except (EditError, ConflictError, ApplyError) as exc:
            fail(str(exc), 1)
        except OSError as exc:  # the journal could not be written (nothing was touched)
            fail(f"not merged: {exc.strerror or exc}", 2)
    if as_json:
        emit_json(
            {
                "src": str(merge.src),
                "dst": str(merge.dst),
                "applied": entry_id,
                "items": [{"path": i.relpath, "target": i.target, "action": i.action, "reason": i.reason} for i in merge.items],
                "index_lines": list(merge.index_lines),
                "changes": [{"path": c.relpath, "kind": c.kind} for c in merge.plan.changes],
            }
        )
        return
    verbs = {"move": "copies to" if copy else "moves to", "same": "is already in DST as", "renamed": "differs from DST's; comes in as", "left": "stays", "removed": "is removed"}
    say(visible(merge.plan.title))
    for item in merge.items:
        tail = f" {visible(item.target)}" if item.target else f" ({visible(item.reason)})"
        say(f"  {visible(item.relpath)} {verbs[item.action]}{tail}")
    for line in merge.index_lines:
        say(f"  MEMORY.md + {visible(line)}")
    if entry_id:
        here = os.path.realpath(loc.memory_dir)
        hint = "memtui undo" if here in (str(merge.src), str(merge.dst)) else f"memtui undo --memory-dir {merge.dst if merge.copy else merge.src}"
        say(f"applied as {entry_id} (undo: `{hint}`)")
    else:
        say("nothing applied: add --yes to apply this change (undo with `memtui undo`)")


@stores.command("setting")
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@click.argument("key")
@click.option("--set", "value", default=None, metavar="VALUE", help="The string to set KEY to (always a string: `autoMemoryDirectory`, an env variable).")
@click.option("--unset", is_flag=True, help="Remove KEY.")
@click.option("--yes", is_flag=True, help="Apply the change (undo with `memtui undo`); without it, only preview.")
@common_options
@click.pass_obj
@user_errors
def setting_cmd(obj: CliContext, file: Path, key: str, value: str | None, unset: bool, yes: bool) -> None:
    """Set KEY (dotted: env.NAME) of the settings FILE to a string, or remove it: the fixes
    `memtui stores` gives as a setting. The file keeps its other keys, their order and its
    indent; previewed as a diff, applied with --yes as one change `memtui undo` reverts."""
    if unset == (value is not None):
        fail("give one of --set VALUE or --unset", 2)
    try:
        change = plan_setting(file.absolute(), key, None if unset else value)  # not normalised: `..` after a link is the OS's
    except SettingEditError as exc:
        fail(str(exc), 1)
    except OSError as exc:
        fail(f"cannot read {file}: {exc.strerror or exc}", 2)
    say(visible(change.title))
    diff = setting_plan(change).diff()
    say(visible_block(diff if diff.endswith("\n") else diff + "\n\\ No newline at end of file\n"), nl=False)
    if not yes:
        say("nothing applied: add --yes to apply this change (undo with `memtui undo`)")
        return
    try:
        entry = apply_setting(change, obj.locations.state_dir, obj.now())
    except (EditError, ConflictError, ApplyError) as exc:
        fail(str(exc), 1)
    except OSError as exc:
        fail(f"not changed: {exc.strerror or exc}", 2)
    layers = {Path(os.path.realpath(p)) for p in obj.locations.settings.paths.values()}
    undo_hint = "memtui undo" if Path(os.path.realpath(change.path)) in layers else f"memtui undo --memory-dir {change.path.parent}"
    say(f"applied as {entry.id} (undo: `{undo_hint}`)")
