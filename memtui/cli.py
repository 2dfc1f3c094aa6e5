"""The ``memtui`` command: no subcommand opens the TUI (or, where it cannot show, prints the
plain view: ``plain_view``); each subcommand drives the core.

Common options (before or after the subcommand): ``--project DIR`` (default: cwd),
``--memory-dir DIR`` (skip resolution; for folders copied out of a repo),
``--flavor auto|agent|claude``, ``--release VERSION|auto``, ``--settings FILE|JSON``.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from typing import Any

import click

from memtui.commands.common import CliContext, app_cannot_open, fail, quiet_broken_pipe, say, warn
from memtui.core.places.autoflavor import FLAVOR_CHOICES, FlavorChoice

# Each subcommand's module is imported only when that subcommand runs (or for `--help`): the
# recall and dream modules pull in numpy, bm25s and the anthropic SDK, which cost ~300 ms of
# startup that `memtui ls` has no use for. (click's documented "lazily loading subcommands"
# pattern.) name -> "module:attribute".
LAZY_COMMANDS: dict[str, str] = {
    "where": "memtui.commands.where:where",
    "ls": "memtui.commands.memories:ls",
    "index": "memtui.commands.memories:index",
    "demo": "memtui.commands.demo:demo",
    "cascade": "memtui.commands.cascade:cascade",
    "imports": "memtui.commands.cascade:imports",
    "recall": "memtui.commands.recall:recall_cmd",
    "team": "memtui.commands.team:team",
    "links": "memtui.commands.links:links",
    "doctor": "memtui.commands.doctor:doctor",
    "verify": "memtui.commands.verify:verify_cmd",
    "undo": "memtui.commands.history:undo_cmd",
    "trash": "memtui.commands.history:trash_cmd",
    "restore": "memtui.commands.history:restore_cmd",
    "extract": "memtui.commands.extract:extract_cmd",
    "inbox": "memtui.commands.extract:inbox",
    "hook": "memtui.commands.extract:hook",
    "dream": "memtui.commands.dream:dream",
    "usage": "memtui.commands.usage:usage_cmd",
    "stores": "memtui.commands.stores:stores",
}


class MemtuiGroup(click.Group):
    """A click group whose usage errors are one line on stderr (exit 2), like every other error,
    and whose subcommands (``LAZY_COMMANDS``) are imported on first use."""

    def list_commands(self, ctx: click.Context) -> list[str]:  # noqa: D102 - click API
        return sorted({*super().list_commands(ctx), *LAZY_COMMANDS})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:  # noqa: D102 - click API
        command = super().get_command(ctx, cmd_name)
        if command is not None or cmd_name not in LAZY_COMMANDS:
            return command
        module_name, attr = LAZY_COMMANDS[cmd_name].split(":")
        command = getattr(importlib.import_module(module_name), attr)
        if not isinstance(command, click.Command):  # a wrong table entry is a bug, not user input
            raise TypeError(f"{LAZY_COMMANDS[cmd_name]} is not a click command")
        self.add_command(command, cmd_name)
        return command

    def main(self, *args: Any, **kwargs: Any) -> Any:  # noqa: D102 - click's entry point
        kwargs["standalone_mode"] = False
        try:
            return super().main(*args, **kwargs)
        except BrokenPipeError:  # stdout closed outside a command (help text, a usage error)
            quiet_broken_pipe()
        except click.exceptions.Exit as exc:
            sys.exit(exc.exit_code)
        except click.exceptions.NoArgsIsHelpError as exc:  # `memtui dream` alone: its help, as --help
            click.echo(exc.ctx.get_help() if exc.ctx is not None else exc.format_message())
            sys.exit(0)
        except click.UsageError as exc:
            hint = f" (see `{exc.ctx.command_path} --help`)" if exc.ctx is not None else ""
            fail(f"{exc.format_message().rstrip('.')}{hint}", 2)
        except click.ClickException as exc:
            fail(exc.format_message(), exc.exit_code)
        except click.Abort:
            fail("aborted", 1)


@click.group(
    cls=MemtuiGroup, invoke_without_command=True, context_settings={"help_option_names": ["-h", "--help"]}
)
@click.option(
    "--project",
    type=click.Path(path_type=Path),
    default=None,
    help="The project directory (default: the current directory).",
)
@click.option(
    "--memory-dir",
    type=click.Path(path_type=Path),
    default=None,
    help="Use this memory dir instead of resolving it (e.g. a folder copied out of a repo).",
)
@click.option(
    "--flavor",
    type=click.Choice(FLAVOR_CHOICES),
    default=None,
    help="File naming: agent (AGENT.md, ~/.agent), claude (CLAUDE.md, ~/.claude), or auto (the default: "
    "claude when the project has Claude Code's files and no agent ones). Env: MEMTUI_FLAVOR.",
)
@click.option(
    "--settings",
    default=None,
    help="What the agent was started with as --settings: a settings file or inline JSON.",
)
@click.option(
    "--release",
    default=None,
    metavar="VERSION",
    help="The agent's release to model: a profile's version (claude: 2.1.328, 2.1.332) or auto (the default: "
    "the version `claude --version` prints, else the newest transcript's, else the newest). Env: MEMTUI_RELEASE.",
)
@click.version_option(package_name="memtui")
@click.pass_context
def main(
    ctx: click.Context, project: Path | None, memory_dir: Path | None, flavor: str | None, settings: str | None, release: str | None
) -> None:
    """See and tend the memory of a coding agent. With no command, open the app."""
    if project is not None and not project.is_dir():
        fail(f"--project {project}: not a directory")
    ctx.obj = CliContext(
        flavor_name=flavor, project=project, memory_dir=memory_dir, settings=settings, release_name=release, open_app=open_app
    )
    if ctx.invoked_subcommand is None:
        why = app_cannot_open()
        if why is None:
            ctx.obj.run_app(ctx.obj.choice, project, memory_dir)
        else:
            plain_view(ctx, why)


def plain_view(ctx: click.Context, why: str) -> None:
    """What ``memtui`` prints instead of opening the app (``why``: ``app_cannot_open``): one line
    on stderr saying why, then the output of ``memtui where`` and of ``memtui ls``."""
    warn(f"{why}; here is the plain view (`memtui where`, then `memtui ls`). Run `memtui --help` for the commands.")
    for i, name in enumerate(("where", "ls")):
        command = main.get_command(ctx, name)
        if command is None:  # pragma: no cover - both are in LAZY_COMMANDS
            continue
        if i:
            say()
        with command.make_context(name, [], parent=ctx) as sub:
            command.invoke(sub)


def open_app(choice: FlavorChoice, project: Path | None, memory_dir: Path | None) -> None:
    """Run the Textual app on ``project`` (blocks until the app exits). The one place where the
    command line hands over to the TUI."""
    from memtui.tui.app import MemtuiApp

    app = MemtuiApp.for_project(choice, project, memory_dir=memory_dir)
    try:
        app.run()
    except KeyboardInterrupt:  # SIGINT from outside (the app reads ctrl+c as a key): no traceback
        sys.exit(130)
    if app.return_code:  # an error ended the app (Textual printed it): the shell is told
        sys.exit(app.return_code)


