"""The ``memtui`` command: no subcommand opens the TUI; each subcommand drives the core.

Common options (before the subcommand): ``--project DIR`` (default: cwd), ``--memory-dir DIR``
(skip resolution; for folders copied out of a repo), ``--flavor agent|claude``.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from memtui.commands.common import CliContext, fail
from memtui.core.flavor import FLAVORS, UnknownFlavorError, get_flavor


class MemtuiGroup(click.Group):
    """A click group whose usage errors are one line on stderr (exit 2), like every other error."""

    def main(self, *args: Any, **kwargs: Any) -> Any:  # noqa: D102 - click's entry point
        kwargs["standalone_mode"] = False
        try:
            return super().main(*args, **kwargs)
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
    type=click.Choice(sorted(FLAVORS)),
    default=None,
    help="File naming: agent (AGENT.md, ~/.agent) or claude (CLAUDE.md, ~/.claude). Env: MEMTUI_FLAVOR.",
)
@click.version_option(package_name="memtui")
@click.pass_context
def main(ctx: click.Context, project: Path | None, memory_dir: Path | None, flavor: str | None) -> None:
    """See and tend the memory of a coding agent. With no command, open the app."""
    try:
        chosen = get_flavor(flavor)
    except UnknownFlavorError as exc:
        fail(str(exc))
    if project is not None and not project.is_dir():
        fail(f"--project {project}: not a directory")
    ctx.obj = CliContext(flavor=chosen, project=project, memory_dir=memory_dir)
    if ctx.invoked_subcommand is None:
        from memtui.commands.app import open_app

        open_app(ctx.obj)


from memtui.commands.memories import index, ls  # noqa: E402
from memtui.commands.where import where  # noqa: E402

main.add_command(where)
main.add_command(ls)
main.add_command(index)

from memtui.commands.demo import demo  # noqa: E402

main.add_command(demo)

from memtui.commands.cascade import cascade, imports  # noqa: E402

main.add_command(cascade)
main.add_command(imports)

from memtui.commands.recall import recall_cmd as recall  # noqa: E402

main.add_command(recall)

from memtui.commands.team import team  # noqa: E402

main.add_command(team)

from memtui.commands.doctor import doctor  # noqa: E402
from memtui.commands.history import restore_cmd, trash_cmd, undo_cmd  # noqa: E402

main.add_command(doctor)
main.add_command(undo_cmd)
main.add_command(trash_cmd)
main.add_command(restore_cmd)

from memtui.commands.extract import extract_cmd, hook, inbox  # noqa: E402

main.add_command(extract_cmd)
main.add_command(inbox)
main.add_command(hook)

from memtui.commands.dream import dream  # noqa: E402

main.add_command(dream)
