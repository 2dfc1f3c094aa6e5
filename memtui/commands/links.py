"""``memtui links``: the memories that are symlinks, and which of them memtui may write."""

from __future__ import annotations

import click

from memtui.commands.common import CliContext, common_options, emit_json, fail, say, user_errors
from memtui.core.base.terminal import visible
from memtui.core.writes.journal import Journal
from memtui.core.writes.links import LinkedMemory, confirm_link, forget_link, linked_memories


def _state(obj: CliContext) -> Journal:
    try:
        return Journal(obj.locations.state_dir, obj.locations.memory_dir)
    except OSError as exc:
        fail(str(exc))


def _line(m: LinkedMemory) -> str:
    if not m.exists:
        where = "leads nowhere: memtui does not write it"
    elif m.inside:
        where = "inside the memory dir: edits go to the target"
    elif m.confirmed:
        where = "outside the memory dir, confirmed: edits go to the target"
    else:
        where = f"outside the memory dir: shown, never written (`memtui links confirm {m.relpath}` allows it)"
    return f"{visible(m.relpath)} -> {visible(m.target)}  ({where})"


@click.group("links", invoke_without_command=True)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@common_options
@click.pass_context
def links(ctx: click.Context, as_json: bool, **_: object) -> None:
    """List the memories that are symlinks and whether memtui writes through them.

    A link whose target is inside the memory dir is edited at its target (the link stays a
    link). A link leading outside (a dotfiles repository) is shown but never written until you
    confirm it with `memtui links confirm RELPATH`; re-pointing the link withdraws that.
    """
    if ctx.invoked_subcommand is not None:
        return
    obj: CliContext = ctx.obj
    found = linked_memories(obj.locations.memory_dir, _state(obj).base)
    if as_json:
        emit_json({"memory_dir": str(obj.locations.memory_dir), "links": [m.to_json() for m in found]})
        return
    if not found:
        say("no memory is a symlink")
    for m in found:
        say(_line(m))


@links.command("confirm")
@click.argument("relpath")
@common_options
@click.pass_obj
@user_errors
def confirm(obj: CliContext, relpath: str) -> None:
    """Let memtui write the memory RELPATH (a symlink) at its current target, even outside the
    memory dir."""
    try:
        m = confirm_link(obj.locations.memory_dir, _state(obj).base, relpath)
    except ValueError as exc:
        fail(str(exc))
    say(f"confirmed: {_line(m)}")


@links.command("forget")
@click.argument("relpath")
@common_options
@click.pass_obj
@user_errors
def forget(obj: CliContext, relpath: str) -> None:
    """Withdraw the confirmation of RELPATH: memtui no longer writes through that link."""
    if not forget_link(_state(obj).base, relpath):
        fail(f"{relpath} has no confirmation")
    say(f"{visible(relpath)}: no longer written through its link")
