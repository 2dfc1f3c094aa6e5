"""What every command shares: the resolved context, JSON output, one-line errors."""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from functools import wraps
from pathlib import Path
from typing import Any, NoReturn, ParamSpec, TypeVar

import click

from memtui.core.base.jsontext import dumps_exact
from memtui.core.base.clock import ClockError, system_now
from memtui.core.base.terminal import has_unsafe, visible, visible_block
from memtui.core.places.autoflavor import FlavorChoice, OtherFlavorHint, choose_flavor, other_flavor_hint
from memtui.core.places.flavor import Flavor, UnknownFlavorError
from memtui.core.places.locations import Locations, memory_dir_problem, resolve_locations
from memtui.core.places.profiles import UnknownReleaseError
from memtui.core.sessions.version import choose_release
from memtui.core.writes.transaction import recover_at_start

P = ParamSpec("P")
R = TypeVar("R")
AppOpener = Callable[[FlavorChoice, Path | None, Path | None], None]


@dataclass
class CliContext:
    """The common options of every command: ``--project``, ``--memory-dir``, ``--flavor``
    (``flavor_name``: as given, ``None`` or ``"auto"`` to detect it; ``choice``/``flavor``:
    the outcome, decided once all options are known), ``--settings``, ``--release``
    (``release_name``: a release profile's version, ``None`` or ``"auto"`` to detect it)."""

    flavor_name: str | None
    project: Path | None
    memory_dir: Path | None
    settings: str | None = None
    release_name: str | None = None
    # How to open the app (``flavor, project, memory_dir``), given by the ``memtui`` entry point:
    # the commands never import the TUI.
    open_app: AppOpener | None = field(default=None, repr=False)
    _choice: FlavorChoice | None = field(default=None, repr=False)
    _locations: Locations | None = field(default=None, repr=False)
    _recovered: set[Path] = field(default_factory=set, repr=False)

    @property
    def choice(self) -> FlavorChoice:
        """The flavor and why (``--flavor``, ``$MEMTUI_FLAVOR``, else detected for the project),
        at its release profile (``--release``, ``$MEMTUI_RELEASE``, else the version installed);
        an unknown name is one line on stderr and exit 2."""
        if self._choice is None:
            try:
                self._choice = choose_release(choose_flavor(self.flavor_name, self.project), self.project, given=self.release_name)
            except (UnknownFlavorError, UnknownReleaseError) as exc:
                fail(str(exc))
        return self._choice

    @property
    def flavor(self) -> Flavor:
        """The flavor every path is computed for (``choice``)."""
        return self.choice.flavor

    def forget(self) -> None:
        """An option changed: decide the flavor and the locations again when next asked."""
        self._choice = None
        self._locations = None

    @property
    def locations(self) -> Locations:
        """Resolved once per invocation. The first time a memory dir is resolved, a change a
        crash left unsettled there is settled (rolled back), and said on stderr."""
        if self._locations is None:
            self._locations = resolve_locations(self.flavor, self.project, memory_dir=self.memory_dir, flag_settings=self.settings)
            if self._locations.memory_dir not in self._recovered:
                self._recovered.add(self._locations.memory_dir)
                for message in recover_at_start(self._locations.state_dir, self._locations.memory_dir):
                    warn(message)
        return self._locations

    def run_app(self, choice: FlavorChoice, project: Path | None, memory_dir: Path | None = None) -> None:
        """Open the app on ``project`` with the flavor ``choice`` and block until it exits."""
        if self.open_app is None:
            fail("the app cannot be opened from here")
        self.open_app(choice, project, memory_dir)

    def other_flavor_hint(self) -> str:
        """`` — but …: try `--flavor NAME` `` when the memory dir is missing or empty and the
        other flavor has files for this project (``other_flavor_hint``), else ``""``."""
        hint = other_flavor_hint(self.locations)
        return "" if hint is None else f" — {other_flavor_sentence(hint, self.choice)}"

    def checked_memory_dir(self) -> Path:
        """The memory dir, after checking it is one; else one line on stderr and exit 1 (the
        check every command that reads the memory dir shares)."""
        loc = self.locations
        problem = memory_dir_problem(loc)
        if problem is None:
            self.warn_if_other_flavor()
            return loc.memory_dir
        if problem.code == "not-a-directory":
            fail(f"{problem.memory_dir} is not a directory; see `memtui where`", 1)
        fail(f"no memory dir at {problem.memory_dir} ({loc.flavor.name} flavor, {self.choice.reason}; "
             f"dir from {loc.memory_dir_source}){self.other_flavor_hint()}; see `memtui where`", 1)

    def readable_memory_dir(self) -> tuple[Path, bool]:
        """The memory dir to read and whether it exists. One the agent has not created yet
        (missing, and resolved rather than given with ``--memory-dir``: the normal state before
        the agent's first save) reads as empty: one line on stderr says so (with the other
        flavor's hint when that applies). Anything else is ``checked_memory_dir``'s check."""
        loc = self.locations
        problem = memory_dir_problem(loc)
        if problem is None or problem.code != "missing" or loc.memory_dir_source == "option":
            return self.checked_memory_dir(), True
        warn(f"no memory dir yet at {problem.memory_dir} ({loc.flavor.name} flavor, {self.choice.reason}; "
             f"dir from {loc.memory_dir_source}): the agent creates it when it first saves a memory; "
             f"read as empty{self.other_flavor_hint()}")
        return problem.memory_dir, False

    def warn_if_other_flavor(self) -> None:
        """An empty memory dir while the other flavor has files here: one line on stderr
        saying so and how to switch (nothing otherwise)."""
        hint = self.other_flavor_hint()
        if hint:
            warn(f"{self.locations.memory_dir} has no memories ({self.flavor.name} flavor, {self.choice.reason}){hint}")

    def now(self) -> datetime:
        """The clock (``MEMTUI_NOW`` freezes it)."""
        try:
            return system_now()
        except ClockError as exc:
            fail(f"MEMTUI_NOW: {exc}")


def other_flavor_sentence(hint: OtherFlavorHint, choice: FlavorChoice) -> str:
    """What the other flavor has for this project and the flag that switches to it."""
    has = f"its memory dir {hint.memory_dir} has memories" if hint.memory_dir is not None else f"{', '.join(hint.files[:3])} found"
    return f"the {hint.name} flavor has files here ({has}): try `--flavor {hint.name}`"


def fail(message: str, code: int = 2) -> NoReturn:
    """Print one clear line to stderr and exit non-zero (never a traceback)."""
    warn(message)
    sys.exit(code)


def warn(message: str) -> None:
    """Print ``memtui: <message>`` on stderr, control characters shown as escapes."""
    click.echo(f"memtui: {visible(message)}", err=True)


def say(text: object = "", *, err: bool = False, nl: bool = True, keep_crlf: bool = False, **style: Any) -> None:
    """Print human-readable ``text`` (stdout, or stderr with ``err``): every character a
    terminal would act on — ESC, C1 controls, bidi overrides, a CR — shown as an escape
    (``visible_block``: lines and tabs kept), then styled with ``click.style(**style)``.
    Every line the commands print goes through here, ``rich_console`` or ``emit_json``;
    single-line fields taken from files (a name, a path) are passed through ``visible`` by the
    caller first, so that a newline in them cannot forge a line. ``keep_crlf``: CRLF line ends
    stay (text printed to be byte-exact where it is safe, e.g. what the model receives)."""
    shown = visible_block(str(text), keep_crlf=keep_crlf)
    click.echo(click.style(shown, **style) if style else shown, err=err, nl=nl)


def say_parts(*parts: str | tuple[str, dict[str, Any]], err: bool = False) -> None:
    """Print one line made of parts, each a string or ``(string, click.style options)``: every
    part shown as ``say`` shows text, then styled."""
    out = []
    for part in parts:
        text, style = (part, {}) if isinstance(part, str) else part
        shown = visible_block(text)
        out.append(click.style(shown, **style) if style else shown)
    click.echo("".join(out), err=err)


def emit_json(data: Any) -> None:
    """Print ``data`` as indented JSON (UTF-8, non-ASCII kept; anything else as ``str()``).

    The text is exact and always valid UTF-8: a file name byte that is not UTF-8 (a lone
    surrogate U+DC80–U+DCFF in Python) is written as its JSON escape (backslash, ``udcXX``) —
    ``os.fsencode(json.loads(...))`` gives the bytes back (``memtui.core.base.jsontext``).

    orjson writes the same text as ``json.dumps(..., ensure_ascii=False, indent=2)`` ~10x faster
    (12.9 MB for ``ls --json`` of 20,000 memories); what it refuses (an int over 64 bits, a lone
    surrogate) falls back to the standard library."""
    import orjson

    options = orjson.OPT_INDENT_2 | orjson.OPT_NON_STR_KEYS | orjson.OPT_PASSTHROUGH_DATACLASS | orjson.OPT_PASSTHROUGH_DATETIME
    try:
        out = orjson.dumps(data, option=options, default=str)
    except TypeError:  # orjson.JSONEncodeError
        out = dumps_exact(data, indent=2, default=str).encode("utf-8")
    click.echo(escape_terminal_controls(out))


# DEL (U+007F), the C1 controls (U+0080–U+009F: U+009B is a one-byte CSI) and the bidi
# embeddings, overrides and isolates (U+202A–U+202E, U+2066–U+2069), as UTF-8. JSON may hold them
# raw (it escapes only C0); a terminal the output is piped to acts on them. They only occur
# inside JSON strings (its syntax is printable ASCII).
_TERMINAL_CONTROLS = re.compile(rb"\x7f|\xc2[\x80-\x9f]|\xe2\x80[\xaa-\xae]|\xe2\x81[\xa6-\xa9]")


def escape_terminal_controls(text: bytes) -> bytes:
    """``text`` (UTF-8 JSON) with DEL, every C1 control and bidi control written as its JSON
    escape (``\\u009b``): the same JSON value, safe to print to a terminal."""
    if b"\xc2" not in text and b"\xe2" not in text and b"\x7f" not in text:
        return text
    return _TERMINAL_CONTROLS.sub(lambda m: b"\\u%04x" % ord(m.group(0).decode("utf-8")), text)


BROKEN_PIPE_EXIT = 1
"""The exit status when the reader of stdout went away (``memtui ls | head -1``): click's own
(``click.Command.main`` exits 1 on ``EPIPE``, silently), as the Python docs' recipe does."""


def quiet_broken_pipe() -> NoReturn:
    """The reader of stdout is gone: exit ``BROKEN_PIPE_EXIT`` without a word (as ``head`` expects
    of a producer). stdout is pointed at ``os.devnull`` first, so that the flush at exit cannot
    fail again (the recipe of the Python docs, "Note on SIGPIPE")."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # no real stdout (a test runner's buffer): nothing to flush
        pass
    sys.exit(BROKEN_PIPE_EXIT)


def user_errors(func: Callable[P, R]) -> Callable[P, R]:
    """Turn ``OSError`` and ``ValueError`` escaping a command into one line on stderr; a closed
    stdout (``BrokenPipeError``) is a quiet exit (``quiet_broken_pipe``)."""

    @wraps(func)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return func(*args, **kwargs)
        except BrokenPipeError:
            quiet_broken_pipe()
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
        obj.flavor_name = str(value)
    elif param.name == "release":
        obj.release_name = str(value)
    elif param.name == "project":
        if not Path(value).is_dir():
            fail(f"--project {value}: not a directory")
        obj.project = Path(value)
    elif param.name == "memory_dir":
        obj.memory_dir = Path(value)
    elif param.name == "settings":
        obj.settings = str(value)
    obj.forget()
    return value


def common_options(func: Callable[P, R]) -> Callable[P, R]:
    """Accept ``--project``, ``--memory-dir``, ``--flavor``, ``--release`` and ``--settings`` after the
    subcommand too (``memtui ls --memory-dir DIR`` and ``memtui --memory-dir DIR ls`` mean the
    same). Every command and group takes them but ``demo``, which runs on its own workspace."""
    from memtui.core.places.autoflavor import FLAVOR_CHOICES

    decorators = [
        click.option("--project", type=click.Path(), default=None, expose_value=False,
                     callback=_set_common, is_eager=True, help="The project directory (default: cwd)."),
        click.option("--memory-dir", type=click.Path(), default=None, expose_value=False,
                     callback=_set_common, is_eager=True, help="Use this memory dir instead of resolving it."),
        click.option("--flavor", type=click.Choice(FLAVOR_CHOICES), default=None, expose_value=False,
                     callback=_set_common, is_eager=True, help="auto (default), agent (AGENT.md) or claude (CLAUDE.md)."),
        click.option("--release", default=None, expose_value=False, callback=_set_common, is_eager=True,
                     metavar="VERSION", help="The agent's release to model (e.g. 2.1.328), or auto (default)."),
        click.option("--settings", default=None, expose_value=False, callback=_set_common, is_eager=True,
                     help="The agent's --settings: a settings file or inline JSON (the flag layer)."),
    ]
    for deco in decorators:
        func = deco(func)
    return func


DEFAULT_WIDTH = 80
"""The width of a table drawn for a terminal (``TTY_COMPATIBLE=1``, ``FORCE_COLOR``) while
stdout and stderr are none and ``COLUMNS`` is unset (the VT100's, the width
``shutil.get_terminal_size`` falls back to)."""


def output_width() -> int:
    """The width output is fitted to, in terminal cells: ``COLUMNS`` when set, else the width
    of the terminal stdout is, else of the one stderr is (``memtui ls | head`` in a terminal),
    else ``DEFAULT_WIDTH``."""
    import shutil

    columns = shutil.get_terminal_size(fallback=(0, 0)).columns  # COLUMNS, then stdout's terminal
    if columns > 0:
        return columns
    try:
        return os.get_terminal_size(sys.stderr.fileno()).columns or DEFAULT_WIDTH
    except (AttributeError, OSError, ValueError):  # not a terminal, or a test runner's buffer
        return DEFAULT_WIDTH


def output_is_terminal() -> bool:
    """Whether stdout is a terminal, as rich decides it (and so colours): ``TTY_COMPATIBLE=1``
    or a non-empty ``FORCE_COLOR`` say yes, ``TTY_COMPATIBLE=0`` says no, else stdout's
    ``isatty()``."""
    from rich.console import Console

    return bool(Console().is_terminal)


def rich_console(width: int | None = None) -> Any:
    """A rich ``Console`` for readable output: on a terminal (``output_is_terminal``), ``width``
    cells when given, else the terminal's width; elsewhere (a pipe, a file) no line is wrapped
    (``soft_wrap``: each line at its natural width). Text printed through it is shown with
    ``visible_block`` — before markup is parsed, and again on every text segment it writes (a
    ``Text`` built elsewhere)."""
    from rich.console import Console
    from rich.segment import Segment

    class SafeConsole(Console):
        """Rich's console with control, bidi and format characters shown as escapes."""

        def render_str(self, text: str, **kwargs: Any) -> Any:  # noqa: D102 - rich API
            return super().render_str(visible_block(text), **kwargs)

        def _render_buffer(self, buffer: Any) -> str:
            safe = (
                Segment(visible_block(seg.text), seg.style, seg.control) if not seg.control and has_unsafe(seg.text.replace("\n", "")) else seg
                for seg in buffer
            )
            return str(super()._render_buffer(safe))

    if output_is_terminal():
        return SafeConsole(highlight=False, width=width)
    return SafeConsole(highlight=False, width=width or PLAIN_WIDTH, soft_wrap=True)


PLAIN_WIDTH = 240
"""The width rich lays out anything but plain lines at when stdout is no terminal (lines are
not wrapped there: ``rich_console``)."""

PLAIN_PAD_CAP = 120
"""Cells: in a table printed as plain lines (``print_table``), a column pads its cells to its
widest cell up to this; a wider cell (a long description) is printed whole and shifts the rest
of its own line only — one hostile 100,000-character description cannot pad every line."""

PLAIN_GAP = "  "
"""Between two columns of a table printed as plain lines."""


def print_table(console: Any, table: Any) -> None:
    """Print the rich ``table`` on ``console``: on a terminal (``console.is_terminal``) as rich
    draws it (fitted to the width: a cell may wrap); elsewhere (``memtui ls | cat``, a file) as
    plain lines — the title, the header, one line per row, columns ``PLAIN_GAP`` apart, each
    left or right aligned as in the table (padded up to ``PLAIN_PAD_CAP`` cells), no box, no
    style — in which no cell is wrapped or shortened."""
    if console.is_terminal:
        console.print(table)
        return
    from rich.cells import cell_len
    from rich.text import Text

    def plain(cell: Any) -> str:
        if isinstance(cell, Text):
            return visible(cell.plain)
        text = console.render_str(cell).plain if isinstance(cell, str) else str(cell)
        return visible(text)

    columns = table.columns
    grid = [[plain(c.header) for c in columns]] if table.show_header else []
    grid += [list(row) for row in zip(*([plain(cell) for cell in c.cells] for c in columns))]
    widths = [min(PLAIN_PAD_CAP, max((cell_len(row[i]) for row in grid), default=0)) for i in range(len(columns))]
    if table.title:
        console.out(plain(table.title), highlight=False)
    for row in grid:
        cells = []
        for cell, width, column in zip(row, widths, columns):
            pad = " " * max(0, width - cell_len(cell))
            cells.append(pad + cell if column.justify == "right" else cell + pad)
        console.out(PLAIN_GAP.join(cells).rstrip(), highlight=False)


def app_cannot_open() -> str | None:
    """Why the full-screen app cannot be shown here (``TERM=dumb``: no cursor movement; stdout
    not a terminal: a pipe or a file), or ``None`` when it can."""
    if os.environ.get("TERM") == "dumb":
        return "TERM=dumb: this terminal cannot show the app"
    try:
        terminal = sys.stdout.isatty()
    except ValueError:  # stdout closed
        terminal = False
    return None if terminal else "the output is not a terminal, so the app cannot open"
