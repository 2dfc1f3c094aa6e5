"""``memtui ls`` and ``memtui index``: the memories and the index, as the agent sees them."""

from __future__ import annotations

from typing import Any

import click
from rich.markup import escape

from memtui.commands.common import (
    CliContext,
    common_options,
    emit_json,
    fail,
    output_width,
    print_table,
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


_HEADERS = ("type", "age", "path", "name", "description", "!")
_MIN_NAME = 10  # cells: a name wraps at its spaces below its full width, down to this
_MIN_DESCRIPTION = 12  # cells: "a few words…" still says what the memory is about
_BOX_CELLS = 2 * len(_HEADERS) + len(_HEADERS) + 1  # padding 1 each side of a cell, 7 rules


def _ls_widths(rows: list[tuple[str, ...]], width: int) -> tuple[int | None, int | None, int]:
    """How ``ls``'s table (rows of markup cells, in ``_HEADERS`` order) fits ``width`` cells:
    ``(name, description, table)`` cells. type, age, path and ``!`` keep their widest cell (a
    file name is never cut); the description is shortened first (one line, ending in "…"), then
    the name wraps at its spaces, each down to its minimum. ``(None, None, width)`` when the table
    fits as it is; ``table`` exceeds ``width`` only when even the minimums do not fit."""
    from rich.cells import cell_len
    from rich.text import Text

    widest = [max([len(h), *(cell_len(Text.from_markup(row[i]).plain) for row in rows)]) for i, h in enumerate(_HEADERS)]
    fixed = sum(w for i, w in enumerate(widest) if i not in (3, 4)) + _BOX_CELLS
    name, description = widest[3], widest[4]
    if fixed + name + description <= width:
        return None, None, width
    rest = width - fixed
    name = min(name, max(_MIN_NAME, rest - _MIN_DESCRIPTION))
    description = min(description, max(_MIN_DESCRIPTION, rest - name))
    return name, description, max(width, fixed + name + description)


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

    rows = []
    for e in entries:
        mem = e.memory
        if mem.type:
            kind = f"[{_TYPE_STYLE[mem.type]}]{mem.type}[/]"
        else:
            kind = f"[red]{_cell(mem.declared_type) + '?' if mem.declared_type else 'untyped'}[/]"
        problems = [d for d in e.diagnostics if d.severity != "info"]
        rows.append((
            kind,
            e.age_label,
            _cell(mem.relpath),
            _cell(mem.name) if mem.name else "[dim]—[/]",
            _cell(mem.description) if mem.description else "[dim]—[/]",
            f"[yellow]{len(problems)}[/]" if problems else "",
        ))
    console = rich_console()
    name_width: int | None = None
    description_width: int | None = None
    if console.is_terminal:
        name_width, description_width, width = _ls_widths(rows, output_width())
        console.size = (width, console.height)  # both: rich lays a TERM=dumb terminal out at 80 cells otherwise
    table = Table(title=_cell(str(catalog.memory_dir)), title_justify="left", expand=False)
    table.add_column("type", no_wrap=True)
    table.add_column("age", no_wrap=True, justify="right")
    table.add_column("path", no_wrap=True)  # a file name is never cut
    table.add_column("name", overflow="fold", width=name_width)
    table.add_column("description", no_wrap=True, overflow="ellipsis", width=description_width)
    table.add_column("!", justify="right", no_wrap=True)
    for row in rows:
        table.add_row(*row)
    print_table(console, table)  # elsewhere than on a terminal: plain lines, no cell cut or wrapped
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
        console.print(f"lines {data['lines']}/{MAX_INDEX_LINES}   characters {data['units']:,}/{MAX_INDEX_UNITS:,}")
        if data["warning"]:
            console.print(f"[red]{_cell(data['warning'])}[/]")
        if data["skipped"]:
            console.print(f"[yellow]{_cell(data['skipped']['note'])}[/]")
        console.print("[dim](memtui index --json has the loaded text)[/]")
    for e in data["dropped_entries"][:INDEX_LISTED]:
        console.print(f"[red]dropped[/]  line {e['line']}: " + _cell(f"[{e['title']}]({e['target']})"))
    _more(console, len(data["dropped_entries"]), "dropped entries")
    for target in data["dangling"][:INDEX_LISTED]:
        console.print(f"[yellow]dangling[/] {_cell(target)}: no such file")
    _more(console, len(data["dangling"]), "dangling links")
    for path in data["unindexed"][:INDEX_LISTED]:
        console.print(f"[cyan]unindexed[/] {_cell(path)}")
    _more(console, len(data["unindexed"]), "unindexed memories")


# How many of each list ``memtui index`` prints (``--json`` has them all): a hostile one-line
# index of 300,000 links would otherwise print as many lines.
INDEX_LISTED = 100


def _more(console: Any, total: int, what: str) -> None:
    if total > INDEX_LISTED:
        console.print(f"[dim]… and {total - INDEX_LISTED:,} more {what} (`memtui index --json` lists them all)[/]")
