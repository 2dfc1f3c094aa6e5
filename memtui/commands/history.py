"""``memtui undo``, ``memtui trash`` and ``memtui restore RELPATH``: thin wrappers over the
journal of ``memtui.core.writes.edits`` (docs/behaviour.md §10: deletes go to a trash with a restore command;
every change can be undone)."""

from __future__ import annotations

from pathlib import Path

import click

from memtui.commands.common import (
    CliContext,
    common_options,
    emit_json,
    fail,
    say,
    user_errors,
)
from memtui.core.base.terminal import visible
from memtui.core.writes.edits import (
    ApplyError,
    ConflictError,
    EditError,
    apply_plan,
    restore_plan,
    trash,
    undo,
)
from memtui.core.places.flavor import home_dir
from memtui.core.stores.merge import undo_candidate, undo_candidates
from memtui.core.writes.journal import Journal, JournalEntry


def _memory_dir(obj: CliContext) -> Path:
    return obj.checked_memory_dir()


def _candidates(obj: CliContext, memory_dir: Path) -> list[tuple[Path, Journal, JournalEntry]]:
    """``undo_candidates`` for this project: the memory dir's changes, its store merges and its
    settings changed by ``memtui stores setting``."""
    return undo_candidates(obj.locations.state_dir, memory_dir, home_dir(), list(obj.locations.settings.paths.values()))


@click.command("undo")
@click.option("--list", "listing", is_flag=True, help="List the changes that can be undone, newest first, with their ids.")
@click.option("--entry", "entry_id", default=None, metavar="ID", help="Undo this change (from --list) instead of the last one.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@common_options
@click.pass_obj
@user_errors
def undo_cmd(obj: CliContext, listing: bool, entry_id: str | None, as_json: bool) -> None:
    """Revert the last change memtui made to the memory dir (repeat to walk back)."""
    if listing:
        # a read: a memory dir the agent has not created yet has none of its own changes, but a
        # setting changed from here can still be listed
        memory_dir, _exists = obj.readable_memory_dir()
        undoable = [e for _, _, e in _candidates(obj, memory_dir)]
        if as_json:
            emit_json([{"id": e.id, "title": e.title, "time": e.time, "action": e.action} for e in undoable])
        else:
            for e in undoable:
                say(f"{visible(e.id)}  {visible(e.time[:19].replace('T', ' '))}  {visible(e.title)}")
            if not undoable:
                say("nothing to undo")
        return
    # a merge or a setting can be undone when the memory dir is gone (a setting moved it)
    found = [c for c in _candidates(obj, obj.locations.memory_dir) if entry_id is None or c[2].id == entry_id]
    memory_dir = obj.locations.memory_dir if found and found[0][0] != obj.locations.memory_dir else _memory_dir(obj)
    journal = Journal(obj.locations.state_dir, memory_dir)
    try:
        if found:
            entry = undo_candidate(*found[0], memory_dir, obj.now())
        else:
            entry = undo(memory_dir, journal, obj.now(), entry_id)
    except (EditError, ConflictError, ApplyError) as exc:
        fail(str(exc), 1)
    if as_json:
        emit_json({"id": entry.id, "title": entry.title, "undoes": entry.undoes, "files": [{"path": c.relpath, "kind": c.kind} for c in entry.changes]})
        return
    say(visible(entry.title))
    for change in entry.changes:
        say(f"  {change.kind:<6} {visible(change.relpath)}")


@click.command("trash")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@common_options
@click.pass_obj
@user_errors
def trash_cmd(obj: CliContext, as_json: bool) -> None:
    """List deleted memories that can be restored, newest first."""
    memory_dir, exists = obj.readable_memory_dir()  # not created yet: an empty trash
    items = trash(Journal(obj.locations.state_dir, memory_dir)) if exists else []
    if as_json:
        emit_json([{"path": i.relpath, "deleted_at": i.deleted_at, "size": i.size, "entry": i.entry_id} for i in items])
        return
    if not items:
        say("the trash is empty")
        return
    for item in items:
        say(f"{visible(item.deleted_at)}  {item.size:>7,} B  {visible(item.relpath)}")
    say("\nrestore one with `memtui restore RELPATH`")


@click.command("restore")
@click.argument("relpath")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@common_options
@click.pass_obj
@user_errors
def restore_cmd(obj: CliContext, relpath: str, as_json: bool) -> None:
    """Bring a deleted memory back from the trash, with its index lines (undoable)."""
    memory_dir = _memory_dir(obj)
    journal = Journal(obj.locations.state_dir, memory_dir)
    wanted = relpath.replace("\\", "/").removeprefix("./")
    item = next((i for i in trash(journal) if i.relpath == wanted), None)
    if item is None:
        fail(f"{wanted} is not in the trash (see `memtui trash`)", 1)
    try:
        plan = restore_plan(memory_dir, journal, item)
        entry = apply_plan(memory_dir, plan, journal, obj.now())
    except (EditError, ConflictError, ApplyError) as exc:
        fail(str(exc), 1)
    if as_json:
        emit_json({"id": entry.id, "title": entry.title, "files": [{"path": c.relpath, "kind": c.kind} for c in entry.changes], "index_overflow": [e.target for e in plan.index_overflow]})
        return
    say(visible(entry.title))
    for change in entry.changes:
        say(f"  {change.kind:<6} {visible(change.relpath)}")
    for e in plan.index_overflow:
        say(f"warning: [{visible(e.title)}]({visible(e.target)}) is now past the index cap")
