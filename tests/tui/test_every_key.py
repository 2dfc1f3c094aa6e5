"""Every key a pane or a screen offers (its footer, its ``?`` panel) and every key that moves in
a list does nothing worse than say no — on an empty memory dir, on one memory, and on a dir
whose rows include ones the agent skips or cannot read (rows that offer fewer actions).

A key that opens a dialog or a screen is answered with esc (twice at most: a dialog over a
screen) before the next key, as a user backs out. The test fails on any exception the app
raises (``run_test`` re-raises it) and when the app stops running.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from support.memories import NOW, write_memory_dir
from support.pilot import settle
from textual.binding import Binding
from textual.pilot import Pilot

from memtui.core.places.flavor import AGENT, CLAUDE, Flavor
from memtui.tui.app import MemtuiApp
from memtui.tui.pane import PaneTabs, own_bindings

# The keys of a list, pressed in every pane and screen after its own.
MOVES = ["down", "up", "pagedown", "pageup", "end", "home", "enter", "tab", "shift+tab"]
# App keys that end or rebuild the app: pressed by the tests that are about them.
SKIPPED_ACTIONS = {"quit", "switch_flavor"}


def write_state(state: str, memory_dir: Path) -> None:
    """The memory dir of ``state``: "empty", "one" memory, or "mixed" (the test memories plus
    a file that is not UTF-8, an empty file, a folder named like a memory and a note that is no
    memory)."""
    memory_dir.mkdir(parents=True)
    if state == "one":
        (memory_dir / "user_role.md").write_text("---\nname: Role\ndescription: Backend engineer\ntype: user\n---\nGo daily.\n")
        (memory_dir / "MEMORY.md").write_text("- [Role](user_role.md) — backend engineer\n")
    elif state == "mixed":
        write_memory_dir(memory_dir)
        (memory_dir / "latin1.md").write_bytes(b"---\nname: caf\xe9\ndescription: d\ntype: user\n---\ncaf\xe9\n")
        (memory_dir / "empty.md").write_bytes(b"")
        (memory_dir / "folder.md").mkdir()
        (memory_dir / "notes.txt").write_text("not a memory\n")


def first_key(binding: Binding) -> str:
    """The first of a binding's keys (``"escape,q"`` → ``"escape"``)."""
    return binding.key.split(",")[0].strip()


async def back_out(pilot: Pilot[None], base: object) -> None:
    """Close what the last key opened: esc until the base screen shows (three at most)."""
    for _ in range(3):
        if pilot.app.screen is base:
            return
        await pilot.press("escape")
        await pilot.pause()
    # a dialog that asks before it closes (unsaved edits): say no to keeping them
    for key in ("n", "escape"):
        if pilot.app.screen is base:
            return
        await pilot.press(key)
        await pilot.pause()


def keys_of(node_chain: list[object]) -> list[str]:
    """The first key of every memtui binding of the nodes in ``node_chain`` (the focused widget
    and its ancestors), once each, without the skipped actions."""
    keys: list[str] = []
    for node in node_chain:
        for binding in own_bindings(type(node)):  # type: ignore[arg-type]
            action = binding.action.split("(")[0].removeprefix("app.")
            key = first_key(binding)
            if action not in SKIPPED_ACTIONS and key not in keys:
                keys.append(key)
    return keys


async def press_every_key(pilot: Pilot[None], pane: str) -> None:
    """Show ``pane``, then press every key it and its focused widget offer, then the moves."""
    app = pilot.app
    base = app.screen
    app.query_one(PaneTabs).show(pane)
    await settle(pilot)
    focused = app.focused
    chain = [focused, *focused.ancestors] if focused is not None else []
    for key in [*keys_of(chain), *keys_of([app]), *MOVES]:
        await pilot.press(key)
        await pilot.pause()
        screen = app.screen
        if screen is not base:  # a screen of its own (doctor, inbox, trash…): its keys too
            await pilot.pause()
            inner = app.focused
            inner_chain = [inner, *inner.ancestors] if inner is not None else [screen]
            for inner_key in [*keys_of(inner_chain), *MOVES]:
                if inner_key == "escape" or app.screen is not screen:
                    continue
                await pilot.press(inner_key)
                await pilot.pause()
                if app.screen is not screen:  # a dialog over the screen
                    await pilot.press("escape")
                    await pilot.pause()
        await back_out(pilot, base)
        assert app.is_running, f"the app stopped after {key!r} in the {pane} pane"
        if app.query_one(PaneTabs).active != pane:  # a key that switched panes: back
            app.query_one(PaneTabs).show(pane)
            await pilot.pause()
    await settle(pilot)
    assert app.is_running


# (state, flavor, terminal size): each state once, the flavors and the sizes spread over them
CASES = [("empty", AGENT, (80, 24)), ("one", CLAUDE, (120, 36)), ("mixed", CLAUDE, (80, 24)), ("mixed", AGENT, (120, 36))]


@pytest.mark.parametrize(("state", "flavor", "size"), CASES, ids=[f"{s}-{f.name}-{w}x{h}" for s, f, (w, h) in CASES])
@pytest.mark.parametrize("pane", ["cascade", "memories", "recall", "dream"])
async def test_every_key_of_every_pane_is_safe(pane: str, state: str, flavor: Flavor, size: tuple[int, int], isolated_env: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMTUI_NOW", NOW.isoformat())
    monkeypatch.setenv("EDITOR", "true")  # E opens the external editor: one that changes nothing
    monkeypatch.setenv("VISUAL", "true")
    project = isolated_env / "project"
    project.mkdir()
    (project / flavor.instruction_file).write_text("# Project\n\nUse pytest.\n")
    sub = project / "sub"
    sub.mkdir()
    (sub / flavor.instruction_file).write_text("# Sub\n")
    memory_dir = isolated_env / "memory"
    write_state(state, memory_dir)
    app = MemtuiApp.for_project(flavor, project, memory_dir=memory_dir, watch=False)
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        await press_every_key(pilot, pane)
