"""Regenerate the README screenshots from the real app on the demo workspace.

    python screenshots/make.py            # all
    python screenshots/make.py memories   # one

The clock is frozen (``MEMTUI_NOW``) and the workspace is written to a fixed temp path so the
SVGs only change when the app does.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import sys
import tempfile
from collections.abc import Awaitable, Callable
from datetime import datetime
from pathlib import Path

from textual.lazy import Lazy
from textual.pilot import Pilot

HERE = Path(__file__).resolve().parent
NOW = "2026-11-30T10:00:00Z"
SIZE = (120, 36)


async def settle(pilot: Pilot[None]) -> None:
    """Let the app's workers finish and what they posted be drawn (twice: a result may start
    another worker — a preview, a source conversation)."""
    while pilot.app.query(Lazy):  # the panes mounted after the first refresh
        await pilot.pause(0.02)
    for _ in range(2):
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()


async def memories(pilot: Pilot[None]) -> None:
    """The Memories pane with a memory that has a diagnostic selected."""
    await pilot.press("down", "down", "down")


async def recall(pilot: Pilot[None]) -> None:
    """The Recall pane offline (no API key in the demo): a question about the Kafka migration,
    with a stale and a fresh pick, near misses and the injected text."""
    await pilot.press("3")
    await settle(pilot)
    query = "how far along is the kafka migration?"
    for key in query:
        await pilot.press("space" if key == " " else "question_mark" if key == "?" else key)
    recall_pane = pilot.app.query_one("RecallPane")
    while recall_pane.result is None or recall_pane.result.query != query:  # type: ignore[attr-defined]
        await pilot.pause()  # the debounced run (250 ms after the last key)
    await settle(pilot)


async def cascade(pilot: Pilot[None]) -> None:
    """The Cascade pane after simulating a read of an API handler: what the read added (two
    nested AGENT.md files and a conditional rule), and the trailing-punctuation import it hit."""
    await pilot.press("1")
    await settle(pilot)
    await pilot.press("slash", *"services/api/handlers.py", "enter")
    await settle(pilot)
    await pilot.press("escape")


async def dream(pilot: Pilot[None]) -> None:
    """The Dream pane after a dry run of the offline consolidator on the demo: the gates (all
    open: five sessions since a dream that never ran), the four phases done, the plan (a
    relative date made absolute, a dangling index link dropped, missing entries added) with the
    diff of the index change, and the streaming log."""
    await pilot.press("4")
    await settle(pilot)
    await pilot.press("d")
    await settle(pilot)


async def doctor(pilot: Pilot[None]) -> None:
    """The doctor's findings on the demo (D in the Memories pane): grouped by file, worst
    first, a relative date with its safe fix selected."""
    await pilot.press("2")
    await pilot.pause()
    await pilot.press("D")
    await settle(pilot)
    await pilot.press("down", "down")  # a type in the wrong case, with its safe fix
    await settle(pilot)


async def inbox(pilot: Pilot[None]) -> None:
    """The inbox after `memtui extract` ran offline on a demo conversation where the user said
    "remember that we never deploy on Fridays": the heuristic proposal and its source."""
    from memtui.core.base.clock import parse_iso
    from memtui.core.extract import extract
    from memtui.core.sessions.transcripts import list_sessions

    app = pilot.app
    loc = app.locations  # type: ignore[attr-defined]
    for session in list_sessions(loc.sessions_dir):
        extract(session.path, loc.memory_dir, loc.state_dir, parse_iso(NOW), extractor="offline")
    await pilot.press("2")
    await pilot.pause()
    await pilot.press("I")
    await settle(pilot)


async def usage(pilot: Pilot[None]) -> None:
    """The Memories pane on real Claude Code 2.1.328 sessions (the usage capture): the used
    column, sorted by use, the most used memory's uses in the preview."""
    await pilot.press("2")
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()
    await pilot.press("U")
    await pilot.app.workers.wait_for_complete()
    await pilot.pause(0.3)
    await pilot.press("home")
    await pilot.pause(0.3)


async def session(pilot: Pilot[None]) -> None:
    """The Cascade pane comparing the session started in ``svc/`` with memtui's prediction: the
    same files, and MEMORY.md (recall was on in that session) explained."""
    await pilot.press("1")
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()
    await pilot.press("S")
    await pilot.pause(0.3)
    screen = pilot.app.screen
    svc = next(i for i, t in enumerate(screen.sessions) if t.project_dir.name.endswith("-svc"))  # type: ignore[attr-defined]
    screen.query_one("#session-options").highlighted = svc  # type: ignore[attr-defined]
    await pilot.press("enter")
    await pilot.app.workers.wait_for_complete()
    await pilot.pause(0.3)


async def agreement(pilot: Pilot[None]) -> None:
    """The Recall pane's agreement with the agent's own recall (ctrl+l: the prompt behind it)."""
    await pilot.press("3")
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()
    await pilot.press("ctrl+l")
    await pilot.app.workers.wait_for_complete()
    await pilot.pause(0.3)


SHOTS: dict[str, Callable[[Pilot[None]], Awaitable[None]]] = {"doctor": doctor, "inbox": inbox, "cascade": cascade, "memories": memories, "recall": recall, "dream": dream}
# Shots of the agent's own record: on the real transcripts of tests/captures/…/usage (claude flavor).
USAGE_SHOTS: dict[str, Callable[[Pilot[None]], Awaitable[None]]] = {"usage": usage, "session": session, "agreement": agreement}
USAGE_NOW = "2026-12-02T09:00:00Z"


async def shoot(name: str, drive: Callable[[Pilot[None]], Awaitable[None]], project: Path, flavor: str = "agent") -> None:
    from memtui.core.places.autoflavor import choose_flavor
    from memtui.core.sessions.version import choose_release
    from memtui.tui.app import MemtuiApp

    # As `memtui --flavor NAME` opens it: the release profile from the workspace's transcripts
    # (the version command is not asked: the shots must not depend on this machine's `claude`).
    choice = choose_release(choose_flavor(flavor, project), project, ask_command=False)
    app = MemtuiApp.for_project(choice, project, memory_dir=None, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await drive(pilot)
        await settle(pilot)
        app.save_screenshot(filename=f"{name}.svg", path=str(HERE))
    print(f"wrote {HERE / (name + '.svg')}")


def usage_workspace(dest: Path) -> Path:
    """The usage capture's workspace rebuilt under ``dest`` (files and transcripts with their
    mtimes); returns the project."""
    import json

    from memtui.core.places.slug import slugify

    capture = HERE.parent / "tests" / "captures" / "claude-2.1.328" / "usage" / "usage.json"
    text = capture.read_text(encoding="utf-8").replace("{root_slug}", slugify(str(dest))).replace("{root}", str(dest))
    data = json.loads(text)
    projects = dest / "home" / ".claude" / "projects"
    for base, items in ((dest, data["files"]), (projects, data["transcripts"])):
        for rel, item in items.items():
            path = base / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(item["text"].encode("utf-8"))
            os.utime(path, (item["mtime"], item["mtime"]))
    (dest / "proj" / ".git").mkdir(parents=True, exist_ok=True)
    (dest / "proj" / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    return dest / "proj"


async def stores(pilot: Pilot[None]) -> None:
    """The memory stores view (W in the Memories pane) on the worktree scenario captured from
    Claude Code 2.1.332: a worktree moved without `git worktree repair` reads its own store."""
    await pilot.press("2")
    await settle(pilot)
    await pilot.press("W")
    await settle(pilot)


# Shots of the memory stores, on the transcripts of tests/captures/claude-2.1.332/stores (claude flavor).
STORES_SHOTS: dict[str, Callable[[Pilot[None]], Awaitable[None]]] = {"stores": stores}


def main(names: list[str]) -> None:
    wanted = names or [*SHOTS, *USAGE_SHOTS, *STORES_SHOTS]
    stores_names = [n for n in wanted if n in STORES_SHOTS]
    if stores_names:
        sys.path.insert(0, str(HERE.parent / "tests"))
        from support.stores import materialize as stores_materialize

        dest = Path(tempfile.gettempdir()) / "memtui-stores"
        shutil.rmtree(dest, ignore_errors=True)
        layout = stores_materialize("worktree", dest)
        saved = dict(os.environ)
        os.environ.clear()
        os.environ.update({"PATH": saved.get("PATH", ""), "HOME": layout["home"], "MEMTUI_STATE_DIR": str(dest / "state"),
                           "MEMTUI_NOW": USAGE_NOW, "TERM": saved.get("TERM", "xterm-256color")})
        os.chdir(layout["project"])
        for name in stores_names:
            asyncio.run(shoot(name, STORES_SHOTS[name], Path(layout["project"]), flavor="claude"))
        os.environ.clear()
        os.environ.update(saved)
        shutil.rmtree(dest, ignore_errors=True)
    demo = [n for n in wanted if n in SHOTS]
    if demo:
        demo_shots(demo)
    usage_names = [n for n in wanted if n in USAGE_SHOTS]
    if usage_names:
        dest = Path(tempfile.gettempdir()) / "memtui-usage"
        shutil.rmtree(dest, ignore_errors=True)
        dest.mkdir()
        project = usage_workspace(dest)
        saved = dict(os.environ)
        os.environ.clear()
        os.environ.update({"PATH": saved.get("PATH", ""), "HOME": str(dest / "home"), "MEMTUI_STATE_DIR": str(dest / "state"),
                           "MEMTUI_NOW": USAGE_NOW, "TERM": saved.get("TERM", "xterm-256color")})
        os.chdir(project)
        for name in usage_names:
            asyncio.run(shoot(name, USAGE_SHOTS[name], project, flavor="claude"))
        shutil.rmtree(dest, ignore_errors=True)


def demo_shots(names: list[str]) -> None:
    from memtui.commands.demo import demo_environment
    from memtui.core.base.clock import parse_iso
    from memtui.demo import materialize

    dest = Path(tempfile.gettempdir()) / "memtui-demo"
    shutil.rmtree(dest, ignore_errors=True)
    dest.mkdir()
    now: datetime = parse_iso(NOW)
    ws = materialize(dest, now)
    os.environ.clear()
    os.environ.update(demo_environment(ws.home))
    os.environ["MEMTUI_NOW"] = NOW
    os.chdir(ws.project)
    for name in names:
        asyncio.run(shoot(name, SHOTS[name], ws.project))
    shutil.rmtree(dest, ignore_errors=True)


if __name__ == "__main__":
    main(sys.argv[1:])
