"""``memtui demo``: the app on an embedded sample workspace, in a temp dir."""

from __future__ import annotations

import os
import shlex
import shutil
import tempfile
from pathlib import Path

import click

from memtui.commands.common import CliContext, app_cannot_open, fail, say, warn
from memtui.core.places.autoflavor import FlavorChoice
from memtui.core.places.flavor import AGENT


def demo_environment(home: Path) -> dict[str, str]:
    """The process environment for the demo: ``HOME`` → the demo home, and every variable
    that would steer the agent elsewhere removed."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AGENT_", "MEMTUI_MANAGED_DIR"))}
    env["HOME"] = str(home)
    env["MEMTUI_MANAGED_DIR"] = str(home.parent / "managed")  # an empty policy layer
    return env


def reopen_command(home: Path, project: Path) -> str:
    """The shell command that opens memtui on a demo workspace as ``memtui demo`` does: the
    demo's environment (``demo_environment``) and flavor."""
    env = demo_environment(home)
    return f"HOME={home} MEMTUI_MANAGED_DIR={env['MEMTUI_MANAGED_DIR']} memtui --flavor agent --project {project}"


@click.command()
@click.option("--keep", is_flag=True, help="Keep the workspace after the app exits (its path is printed).")
@click.option("--no-app", is_flag=True, help="Only write the workspace and print how to point memtui at it.")
@click.pass_obj
def demo(obj: CliContext, keep: bool, no_app: bool) -> None:
    """Open memtui on a sample workspace (copied to a temp dir, ages relative to now)."""
    from memtui.demo import materialize

    now = obj.now()
    dest = Path(tempfile.mkdtemp(prefix="memtui-demo-"))
    try:
        ws = materialize(dest, now)
    except OSError as exc:
        shutil.rmtree(dest, ignore_errors=True)
        fail(f"cannot write the demo workspace: {exc}")
    why = None if no_app else app_cannot_open()
    if why is not None:
        warn(f"{why}; the demo workspace is written and left on disk instead (as with --no-app).")
    if no_app or why is not None:
        say(f"demo workspace: {dest} (it stays on disk: rm -r {shlex.quote(str(dest))} when done)")
        say("try:")
        say(f"  {reopen_command(ws.home, ws.project)} ls")
        say(f"  {reopen_command(ws.home, ws.project)}")
        return
    os.environ.clear()
    os.environ.update(demo_environment(ws.home))
    os.chdir(ws.project)
    try:
        obj.run_app(FlavorChoice.given(AGENT), ws.project)
    finally:
        if keep:
            say(f"demo workspace kept at {dest}; reopen it with:")
            say(f"  {reopen_command(ws.home, ws.project)}")
        else:
            os.chdir(dest.parent)
            shutil.rmtree(dest, ignore_errors=True)
