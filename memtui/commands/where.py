"""``memtui where``: every location memtui resolved, and why."""

from __future__ import annotations

from typing import Any

import click

from memtui.commands.common import CliContext, common_options, emit_json, user_errors
from memtui.core.locations import Locations


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
    from rich.console import Console
    from rich.table import Table

    table = Table(show_header=False, box=None, pad_edge=False)
    table.add_column(style="bold cyan", no_wrap=True)
    table.add_column(overflow="fold")
    for key, value in data.items():
        if key == "diagnostics":
            continue
        if key == "memory_dir":
            value = f"{value}  [dim](from {data['memory_dir_source']}{'' if data['memory_dir_exists'] else '; does not exist yet'})[/]"
        if key in ("memory_dir_source", "memory_dir_exists", "auto_memory_source"):
            continue
        if key == "auto_memory_enabled":
            value = f"{'yes' if value else 'no'}  [dim](from {data['auto_memory_source']})[/]"
        table.add_row(key.replace("_", " "), str(value))
    console = Console()
    console.print(table)
    for d in data["diagnostics"]:
        where_ = f" {d['path']}" if d["path"] else ""
        console.print(f"[yellow]{d['severity']}[/] [bold]{d['code']}[/]{where_}: {d['message']}", highlight=False)
