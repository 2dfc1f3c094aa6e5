"""A small memory dir, written by hand, with a frozen clock, for the app tests."""

from __future__ import annotations

import fcntl
import os
import shutil
import unicodedata
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from textual import events
from textual.keys import REPLACED_KEYS, _character_to_key, _get_unicode_name_from_key
from textual.pilot import Pilot
from textual.widgets import Input

from memtui.core.places.flavor import AGENT
from memtui.tui.app import MemtuiApp

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
DAY = 86_400

# relpath -> (text, age in days)
MEMORIES: dict[str, tuple[str, float]] = {
    "user_role.md": (
        "---\nname: Role\ndescription: Backend engineer who writes Go daily\ntype: user\n---\n\nNew to the React side.\n",
        0.2,
    ),
    "feedback_terse.md": (
        "---\nname: Terse replies\ndescription: No recap paragraphs at the end of answers\ntype: feedback\n---\n\n"
        "Skip the closing summary.\n\n**Why:** recaps were never read.\n\n**How to apply:** stop after the answer.\n",
        1.5,
    ),
    "project_freeze.md": (
        "---\nname: Release freeze\ndescription: Only fixes merge after the freeze date\ntype: project\n---\n\n"
        "Freeze from 2026-12-04.\n\n**Why:** the mobile branch is cut.\n\n**How to apply:** park feature branches.\n",
        12,
    ),
    "reference_grafana.md": (
        "---\nname: Latency board\ndescription: Grafana board for ingest latency\ntype: reference\n---\n\n"
        "Board `ingest-latency`, panel p95.\n",
        45,
    ),
    "feedback_nested.md": (
        "---\nname: Squash merges\ndescription: One commit per pull request\nmetadata:\n  type: feedback\n---\n\n"
        "Squash every PR.\n\n**Why:** bisect stays clean.\n\n**How to apply:** use the squash button.\n",
        200,
    ),
}
INDEX = (
    "- [Role](user_role.md) — Go backend engineer\n"
    "- [Terse replies](feedback_terse.md) — no recaps\n"
    "- [Gone](project_gone.md) — deleted long ago\n"
)


def write_memory_dir(memory_dir: Path) -> None:
    """Write ``MEMORIES`` and ``INDEX`` with mtimes relative to ``NOW``."""
    memory_dir.mkdir(parents=True, exist_ok=True)
    for rel, (text, age) in MEMORIES.items():
        path = memory_dir / rel
        path.write_text(text, encoding="utf-8")
        stamp = NOW.timestamp() - age * DAY
        os.utime(path, (stamp, stamp))
    (memory_dir / "MEMORY.md").write_text(INDEX, encoding="utf-8")


@contextmanager
def fixed_dir(path: Path) -> Iterator[Path]:
    """``path``, created empty and removed after, held by one test at a time. For snapshots
    whose text depends on an absolute path (a file path, or a character count that includes
    one): ``tmp_path`` differs in length between runs (``pytest-99`` -> ``pytest-100``), users
    and xdist workers (``popen-gw0/``). The lock keeps concurrent runs of the suite from
    sharing the dir."""
    with open(f"{path}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        shutil.rmtree(path, ignore_errors=True)
        path.mkdir(parents=True)
        try:
            yield path
        finally:
            shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def make_app(isolated_env: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[..., MemtuiApp]:
    """A factory for the app on a memory dir under the fake HOME, with the clock frozen at NOW
    — built the way the CLI builds it."""
    monkeypatch.setenv("MEMTUI_NOW", NOW.isoformat())
    project = isolated_env / "project"
    project.mkdir()
    memory_dir = isolated_env / "memory"
    write_memory_dir(memory_dir)

    def factory(*, watch: bool = False) -> MemtuiApp:
        return MemtuiApp.for_project(AGENT, project, memory_dir=memory_dir, watch=watch)

    return factory


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
    for _ in range(500):
        if box.value == expected:
            return
        await pilot.pause(0.01)
    raise AssertionError(f"typed into #{box.id}: {box.value!r}, expected {expected!r}")


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
