"""``memtui where``: every location memtui resolved, and why."""

from __future__ import annotations

from typing import Any

import click

from memtui.commands.common import CliContext, common_options, emit_json, say, user_errors
from memtui.core.base.terminal import visible
from memtui.core.places.locations import Locations, other_flavor_memory_dir


def locations_to_json(loc: Locations) -> dict[str, Any]:
    """The ``memtui where --json`` shape."""
    return {
        "flavor": loc.flavor.name,
        "project_root": str(loc.project_root),
        "git_root": str(loc.git_root) if loc.git_root else None,
        "canonical_git_root": str(loc.canonical_git_root) if loc.canonical_git_root else None,
        "slug": loc.slug,
        "memory_dir": str(loc.memory_dir),
        "memory_dir_source": loc.memory_dir_source,
        "memory_dir_exists": loc.memory_dir.is_dir(),
        "sessions_dir": str(loc.sessions_dir),
        "state_dir": str(loc.state_dir),
        "auto_memory_enabled": loc.auto_memory_enabled,
        "auto_memory_source": loc.auto_memory_source,
        "diagnostics": [d.to_json() for d in loc.diagnostics],
    }


@click.command()
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@common_options
@click.pass_obj
@user_errors
def where(obj: CliContext, as_json: bool) -> None:
    """Show where the agent's memory, transcripts and memtui's state live."""
    data = locations_to_json(obj.locations)
    if as_json:
        emit_json(data)
        return
    rows = [
        ("flavor", data["flavor"]),
        ("project root", data["project_root"]),
        ("git root", data["git_root"] or "— (not in a git repository)"),
        ("canonical git root", data["canonical_git_root"] or "—"),
        ("slug", data["slug"]),
        (
            "memory dir",
            f"{data['memory_dir']}  (from {data['memory_dir_source']}"
            + ("" if data["memory_dir_exists"] else "; does not exist yet") + ")",
        ),
        ("sessions dir", data["sessions_dir"]),
        ("state dir", data["state_dir"]),
        ("auto memory", f"{'on' if data['auto_memory_enabled'] else 'OFF'}  (from {data['auto_memory_source']})"),
    ]
    width = max(len(k) for k, _ in rows)
    for key, value in rows:
        say(f"{key:<{width}}  {visible(str(value))}")
    found = other_flavor_memory_dir(obj.locations)
    if found:
        say(f"\nnote: the {found[0]} flavor has a memory dir here: {visible(str(found[1]))} (try --flavor {found[0]})")
    for d in data["diagnostics"]:
        where_ = f" {visible(d['path'])}" if d["path"] else ""
        say(f"{d['severity']}: {d['code']}{where_}: {visible(d['message'])}")
