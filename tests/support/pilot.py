"""Driving the app in tests: waiting on predicates (never a fixed sleep), typing as a fast
typist does, reading what a widget shows, and a temp dir for snapshots that show absolute
paths."""

from __future__ import annotations

import asyncio
import fcntl
import os
import shutil
import tempfile
import time
import unicodedata
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from rich.console import Console
from textual import events
from textual.app import App
from textual.lazy import Lazy
from textual.keys import REPLACED_KEYS, _character_to_key, _get_unicode_name_from_key
from textual.command import CommandList
from textual.pilot import Pilot
from textual.widgets import Input, Static
from textual.worker import WorkerCancelled

# How long a test waits for something the app does before it fails (generous: the machine
# running the suite may be busy).
TIMEOUT = 30.0
POLL = 0.02


async def settle(pilot: Pilot[Any]) -> None:
    """Wait for the panes mounted after the first refresh (``Lazy``: a pane's workers start
    once it is mounted), then for every worker of the app to finish, then for the app to
    process what they posted. A worker cancelled meanwhile (an exclusive worker superseded by
    a newer one) is no failure: the wait goes on for the others."""
    deadline = time.monotonic() + TIMEOUT
    while pilot.app.query(Lazy) and time.monotonic() < deadline:
        await pilot.pause(POLL)
    while True:
        try:
            await pilot.app.workers.wait_for_complete()
        except WorkerCancelled:
            continue
        break
    await pilot.pause()


async def wait_until(pilot: Pilot[Any], predicate: Callable[[], bool], *, timeout: float = TIMEOUT, what: str = "", quiet: bool = False) -> float:
    """Wait until ``predicate()`` holds; fails after ``timeout`` seconds. Returns the seconds it
    took.

    ``quiet``: wait as a user waits, without ``pilot.pause()`` (a pause posts a callback to
    every widget, which flushes a widget's queued callbacks — and would hide a timer that never
    fires on its own)."""
    start = time.monotonic()
    while True:
        if predicate():
            return time.monotonic() - start
        if time.monotonic() - start > timeout:
            raise AssertionError(f"not within {timeout:g} s: {what or 'the condition'}")
        if quiet:
            await asyncio.sleep(POLL)
        else:
            await pilot.pause(POLL)


async def panes_mounted(pilot: Pilot[Any]) -> None:
    """Wait until the panes mounted after the first refresh (``Lazy``) are in place with their
    widgets. A test that leaves ``run_test`` sooner closes the app in the middle of such a
    mount: Textual then skips mounting the pane's widgets but still sends the pane, and a
    widget in it such as a ``Select``, its Mount event — whose handler finds nothing."""
    await wait_until(pilot, lambda: not pilot.app.query(Lazy), what="the panes mounted after the first refresh")


def wait_for(predicate: Callable[[], bool], *, timeout: float = TIMEOUT, what: str = "") -> None:
    """``wait_until`` for code outside the app (a background process writing a file)."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {timeout:g} s: {what or 'the condition'}")
        time.sleep(POLL)


def plain(app: App[Any], selector: str, *, width: int = 200) -> str:
    """What the Static ``selector`` shows, as a terminal would print it (rich renderables
    included), without colours."""
    return rendered(app.query_one(selector, Static).content, width=width)


def rendered(renderable: Any, *, width: int = 200) -> str:
    """A rich renderable as plain terminal text."""
    console = Console(width=width, color_system=None)
    with console.capture() as capture:
        console.print(renderable)
    return capture.get()


def key_event(key: str) -> events.Key:
    """The event ``pilot.press(key)`` sends for ``key``: a character ("g", " ", ":") or a key
    name ("backspace")."""
    if len(key) == 1 and not key.isalnum():
        key = _character_to_key(key)
    try:
        char: str | None = unicodedata.lookup(_get_unicode_name_from_key(REPLACED_KEYS.get(key, key)))
    except KeyError:
        char = key if len(key) == 1 else None
    return events.Key(key, char)


async def _send_keys(pilot: Pilot[Any], box: Input, keys: list[str], expected: str) -> None:
    """Post ``keys`` to the app in one go, then wait until ``box`` holds ``expected``."""
    for key in keys:
        event = key_event(key)
        event.set_sender(pilot.app)
        pilot.app.post_message(event)
    await wait_until(pilot, lambda: box.value == expected, what=f"#{box.id} holds {expected!r} (it holds {box.value!r})")


async def type_text(pilot: Pilot[Any], text: str, *, erase: int = 0) -> None:
    """In the focused text box (cursor at the end): press backspace ``erase`` times, then type
    ``text`` — as a fast typist does. Each key is the key event ``pilot.press`` would send and
    the app handles it the same way, but the keys go out together and the wait is for the box
    to hold the result, then for the app to settle. (``pilot.press`` waits for the app to go
    idle twice after every key: >= 40 ms a key plus a repaint, seconds for a sentence.)

    The backspaces go out before the characters and are waited for: a character is handled by
    the box itself, a backspace by a binding once the key has bubbled back up to the app — in
    one batch, a backspace would land after the characters typed behind it."""
    box = pilot.app.focused
    assert isinstance(box, Input), f"type_text needs a focused text box, not {box!r}"
    if erase:
        await _send_keys(pilot, box, ["backspace"] * erase, box.value[: len(box.value) - erase])
    if text:
        await _send_keys(pilot, box, list(text), box.value + text)
    await pilot.pause()


async def palette_highlights(pilot: Pilot[Any], title: str) -> None:
    """Wait until the open command palette's highlighted command contains ``title`` (the
    palette searches in a worker)."""

    def highlighted() -> bool:
        commands = pilot.app.screen.query_one(CommandList)
        return commands.highlighted is not None and title in str(commands.get_option_at_index(commands.highlighted).prompt)

    await wait_until(pilot, highlighted, what=f"the palette highlights {title!r}")


async def run_from_palette(pilot: Pilot[Any], title: str) -> None:
    """Open the command palette (ctrl+p), type ``title`` and run the command it highlights —
    as a user does."""
    await pilot.press("ctrl+p")
    await pilot.pause()
    await type_text(pilot, title.lower())
    await palette_highlights(pilot, title)
    await pilot.press("enter")
    await pilot.pause()


@contextmanager
def snapshot_root() -> Iterator[Path]:
    """A new directory for one snapshot test, removed after: ``/tmp/memtui-snap-XXXXXXXX``, the
    same length on every run (``mkdtemp``'s eight characters), so a snapshot that shows a
    character count including an absolute path under it (the auto-memory dir a cascade names)
    draws the same. Not ``tmp_path``: its length differs between runs (``pytest-99`` →
    ``pytest-100``), users and xdist workers."""
    root = Path(tempfile.mkdtemp(prefix="memtui-snap-", dir="/tmp"))
    try:
        yield root
    finally:
        shutil.rmtree(root, ignore_errors=True)


@contextmanager
def private_path(root: Path) -> Iterator[Path]:
    """``/proc/self/cwd``, standing for ``root`` in this process only (the working directory is
    ``root`` meanwhile): an absolute path that reads the same on every run, for a snapshot that
    shows one (the recall pane's injected text names each memory by its absolute path), without
    a directory shared between runs. Linux only."""
    before = os.getcwd()
    os.chdir(root)
    try:
        yield Path("/proc/self/cwd")
    finally:
        os.chdir(before)


@contextmanager
def fixed_snapshot_dir(name: str) -> Iterator[Path]:
    """``/tmp/memtui-snapshot-<name>``, created empty and removed after, held by one test at a
    time (a lock file beside it). Only for a snapshot that shows a real path no other trick
    keeps stable — the claude flavor's memory dir is named after the project's realpath — where
    ``snapshot_root`` and ``private_path`` cannot help: concurrent runs of the suite wait for
    each other here."""
    path = Path(f"/tmp/memtui-snapshot-{name}")
    with open(f"{path}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        shutil.rmtree(path, ignore_errors=True)
        path.mkdir(parents=True)
        try:
            yield path
        finally:
            shutil.rmtree(path, ignore_errors=True)


async def open_claude_dream(app: Any, pilot: Pilot[Any]) -> Any:
    """Show the Dream pane (key 4) of a claude-flavor app and wait until it holds the release's
    own gate status; returns the pane."""
    from memtui.tui.dream import DreamPane

    await pilot.press("4")
    await wait_until(pilot, lambda: app.query_one(DreamPane).auto is not None)
    await pilot.pause()
    return app.query_one(DreamPane)
