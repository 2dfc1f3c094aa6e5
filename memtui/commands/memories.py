"""``memtui ls`` and ``memtui index``: the memories and the index, as the agent sees them."""

from __future__ import annotations


import click
from rich.markup import escape

from memtui.commands.common import (
    CliContext,
    common_options,
    emit_json,
    fail,
    rich_console,
    user_errors,
)
from memtui.core.base.gcpause import gc_paused
from memtui.core.base.terminal import visible
from memtui.core.memory.catalog import Catalog, entry_to_json, index_to_json, load_catalog
from memtui.core.memory.filters import TYPE_FILTER_ALIASES, MemoryFilter
from memtui.core.memory.index import MAX_INDEX_LINES, MAX_INDEX_UNITS
from memtui.core.memory.memories import MEMORY_TYPES
from memtui.core.memory.catalogdb import CatalogDB

def _cell(text: str) -> str:
    """A field from a file for rich markup: one line, escapes visible, markup escaped."""
    return escape(visible(text))


_TYPE_STYLE = {"user": "magenta", "feedback": "yellow", "project": "green", "reference": "cyan"}


def _catalog(obj: CliContext) -> Catalog:
    loc = obj.locations
    memory_dir, exists = obj.readable_memory_dir()
    release = loc.flavor.behaviour
    fmt = release.memory_format
    cache = CatalogDB.for_memory_dir(loc.state_dir, memory_dir, fmt=fmt) if exists else None
    return load_catalog(memory_dir, obj.now(), cache=cache, fmt=fmt, warning_style=release.instructions.index_warning, missing_ok=True)


@click.command("ls")
@click.option(
    "--type", "type_", type=click.Choice([*MEMORY_TYPES, *TYPE_FILTER_ALIASES, "none"]), help="Only this type ('untyped' or 'none': no type the agent recognises)."
)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@common_options
@click.pass_obj
@user_errors
def ls(obj: CliContext, type_: str | None, as_json: bool) -> None:
    """List the memories, newest first, with type, age and diagnostics."""
    catalog = _catalog(obj)
    entries = MemoryFilter.of(type_).apply(catalog.entries)
    if as_json:
        with gc_paused():  # 100,000 small dicts: no cyclic collection walking them meanwhile
            emit_json([entry_to_json(e) for e in entries])
        return
    from rich.table import Table

    table = Table(title=_cell(str(catalog.memory_dir)), title_justify="left", expand=False)
    table.add_column("type", no_wrap=True)
    table.add_column("age", no_wrap=True, justify="right")
    table.add_column("path", overflow="fold")
    table.add_column("name", overflow="fold")
    table.add_column("description", overflow="fold")
    table.add_column("!", justify="right")
    for e in entries:
        mem = e.memory
        if mem.type:
            kind = f"[{_TYPE_STYLE[mem.type]}]{mem.type}[/]"
        else:
            kind = f"[red]{_cell(mem.declared_type) + '?' if mem.declared_type else 'untyped'}[/]"
        problems = [d for d in e.diagnostics if d.severity != "info"]
        table.add_row(
            kind,
            e.age_label,
            _cell(mem.relpath),
            _cell(mem.name) if mem.name else "[dim]—[/]",
            _cell(mem.description) if mem.description else "[dim]—[/]",
            f"[yellow]{len(problems)}[/]" if problems else "",
        )
    console = rich_console()
    console.print(table)
    for d in catalog.diagnostics:
        console.print(f"[yellow]{d.severity}[/] {_cell(d.path or '')} [bold]{d.code}[/]: {_cell(d.message)}", highlight=False)
    for e in entries:
        for d in e.diagnostics:
            if d.severity != "info":
                line = f":{d.line}" if d.line else ""
                console.print(f"[yellow]{d.severity}[/] {_cell(e.relpath)}{line} [bold]{d.code}[/]: {_cell(d.message)}", highlight=False)


@click.command("index")
@click.option("--team", is_flag=True, help="The team index (team/MEMORY.md) instead of the main one.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@common_options
@click.pass_obj
@user_errors
def index(obj: CliContext, team: bool, as_json: bool) -> None:
    """Audit MEMORY.md: what the agent loads of it, what falls past the cap, broken links."""
    catalog = _catalog(obj)
    report = catalog.team_index if team else catalog.index
    if report is None:
        fail("this memory dir has no team/ directory", 1)
    if report.error is not None:
        fail(f"cannot read {report.path}: {report.error}", 1)
    data = index_to_json(report)
    if as_json:
        emit_json(data)
        return
    console = rich_console()
    if not data["exists"]:
        console.print(f"[yellow]no index[/] at {_cell(data['path'])}")
    else:
        console.print(f"[bold]{_cell(data['path'])}[/]")
        console.print(f"lines {data['lines']}/{MAX_INDEX_LINES}   units {data['units']:,}/{MAX_INDEX_UNITS:,}")
        if data["warning"]:
            console.print(f"[red]{_cell(data['warning'])}[/]")
        console.print("[dim](memtui index --json has the loaded text)[/]")
    for e in data["dropped_entries"]:
        console.print(f"[red]dropped[/]  line {e['line']}: " + _cell(f"[{e['title']}]({e['target']})"))
    for target in data["dangling"]:
        console.print(f"[yellow]dangling[/] {_cell(target)}: no such file")
    for path in data["unindexed"]:
        console.print(f"[cyan]unindexed[/] {_cell(path)}")
