"""What every command shares: the resolved context, JSON output, one-line errors."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from functools import wraps
from pathlib import Path
from typing import Any, NoReturn, ParamSpec, TypeVar

import click

from memtui.core.base.clock import ClockError, system_now
from memtui.core.places.flavor import Flavor
from memtui.core.places.locations import Locations, resolve_locations

P = ParamSpec("P")
R = TypeVar("R")
AppOpener = Callable[[Flavor, Path | None, Path | None], None]


@dataclass
class CliContext:
    """The common options of every command: ``--project``, ``--memory-dir``, ``--flavor``."""

    flavor: Flavor
    project: Path | None
    memory_dir: Path | None
    settings: str | None = None
    # How to open the app (``flavor, project, memory_dir``), given by the ``memtui`` entry point:
    # the commands never import the TUI.
    open_app: AppOpener | None = field(default=None, repr=False)
    _locations: Locations | None = field(default=None, repr=False)

    @property
    def locations(self) -> Locations:
        """Resolved once per invocation."""
        if self._locations is None:
            self._locations = resolve_locations(self.flavor, self.project, memory_dir=self.memory_dir, flag_settings=self.settings)
        return self._locations

    def run_app(self, flavor: Flavor, project: Path | None, memory_dir: Path | None = None) -> None:
        """Open the app on ``project`` and block until it exits."""
        if self.open_app is None:
            fail("the app cannot be opened from here")
        self.open_app(flavor, project, memory_dir)

    def now(self) -> datetime:
        """The clock (``MEMTUI_NOW`` freezes it)."""
        try:
            return system_now()
        except ClockError as exc:
            fail(f"MEMTUI_NOW: {exc}")


def fail(message: str, code: int = 2) -> NoReturn:
    """Print one clear line to stderr and exit non-zero (never a traceback)."""
    click.echo(f"memtui: {message}", err=True)
    sys.exit(code)


def emit_json(data: Any) -> None:
    """Print ``data`` as indented JSON (UTF-8, non-ASCII kept; anything else as ``str()``).

    orjson writes the same text as ``json.dumps(..., ensure_ascii=False, indent=2)`` ~10x faster
    (12.9 MB for ``ls --json`` of 20,000 memories); what it refuses (an int over 64 bits, a lone
    surrogate) falls back to the standard library."""
    import orjson

    options = orjson.OPT_INDENT_2 | orjson.OPT_NON_STR_KEYS | orjson.OPT_PASSTHROUGH_DATACLASS | orjson.OPT_PASSTHROUGH_DATETIME
    try:
        out = orjson.dumps(data, option=options, default=str)
    except TypeError:  # orjson.JSONEncodeError
        click.echo(json.dumps(data, ensure_ascii=False, indent=2, default=str))
        return
    click.echo(out)


def user_errors(func: Callable[P, R]) -> Callable[P, R]:
    """Turn ``OSError`` and ``ValueError`` escaping a command into one line on stderr."""

    @wraps(func)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return func(*args, **kwargs)
        except OSError as exc:
            where = f" {exc.filename}" if exc.filename else ""
            fail(f"{exc.strerror or exc}:{where}".rstrip(":"))
        except ValueError as exc:
            fail(str(exc))

    return wrapper


def posix_rel(path: Path, base: Path) -> str:
    """``path`` relative to ``base`` with ``/`` separators."""
    return Path(os.path.relpath(path, base)).as_posix()


def _set_common(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
    """Callback of a subcommand's copy of a common option: a value given after the subcommand
    overrides the group's."""
    if value is None:
        return value
    obj = ctx.find_object(CliContext)
    if obj is None:
        return value
    if param.name == "flavor":
        from memtui.core.places.flavor import UnknownFlavorError, get_flavor

        try:
            obj.flavor = get_flavor(value)
        except UnknownFlavorError as exc:
            fail(str(exc))
    elif param.name == "project":
        if not Path(value).is_dir():
            fail(f"--project {value}: not a directory")
        obj.project = Path(value)
    elif param.name == "memory_dir":
        obj.memory_dir = Path(value)
    elif param.name == "settings":
        obj.settings = str(value)
    obj._locations = None
    return value


def common_options(func: Callable[P, R]) -> Callable[P, R]:
    """Accept ``--project``, ``--memory-dir`` and ``--flavor`` after the subcommand too
    (``memtui ls --memory-dir DIR`` and ``memtui --memory-dir DIR ls`` mean the same)."""
    from memtui.core.places.flavor import FLAVORS

    decorators = [
        click.option("--project", type=click.Path(), default=None, expose_value=False,
                     callback=_set_common, is_eager=True, help="The project directory (default: cwd)."),
        click.option("--memory-dir", type=click.Path(), default=None, expose_value=False,
                     callback=_set_common, is_eager=True, help="Use this memory dir instead of resolving it."),
        click.option("--flavor", type=click.Choice(sorted(FLAVORS)), default=None, expose_value=False,
                     callback=_set_common, is_eager=True, help="agent (AGENT.md) or claude (CLAUDE.md)."),
        click.option("--settings", default=None, expose_value=False, callback=_set_common, is_eager=True,
                     help="The agent's --settings: a settings file or inline JSON (the flag layer)."),
    ]
    for deco in decorators:
        func = deco(func)
    return func


def rich_console() -> Any:
    """A rich ``Console`` for readable output: the terminal's width, or wide (no 80-column
    wrapping) when piped."""
    from rich.console import Console

    return Console(highlight=False, width=None if sys.stdout.isatty() else 240)
