"""Every key is in the command palette. The tests walk every binding of every pane (and of the
widgets in it) and of every screen and dialog, run the palette's commands — with the app's
``run_action`` replaced by a recorder — and check that each binding's action was reached on the
node its key acts on."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from textual.actions import parse as parse_action
from textual.dom import DOMNode
from textual.pilot import Pilot
from textual.screen import Screen

from support.pilot import settle

import memtui.tui.doctor
import memtui.tui.inbox
import memtui.tui.stores
import memtui.tui.widgets.import_dialog
import memtui.tui.widgets.session_view
import memtui.tui.widgets.usage_view
from memtui.core.writes.edits import FileChange, Plan
from memtui.tui.app import MemtuiApp
from memtui.tui.dialogs import ConflictDialog, DiscardDialog, EditorScreen, NewMemoryDialog, PlanPreview, TextPrompt, TrashDialog, TypePicker
from memtui.tui.pane import Pane, own_bindings

# every screen and dialog of the app, built as the panes build them
SCREENS: dict[type[Screen[Any]], Callable[[MemtuiApp], Screen[Any]]] = {
    EditorScreen: lambda app: EditorScreen("a.md", "text"),
    DiscardDialog: lambda app: DiscardDialog(),
    PlanPreview: lambda app: PlanPreview(Plan("Create a.md", (FileChange("a.md", None, b"x\n"),))),
    TypePicker: lambda app: TypePicker(None, "a.md"),
    TextPrompt: lambda app: TextPrompt("Rename a.md", "a.md"),
    NewMemoryDialog: lambda app: NewMemoryDialog(),
    ConflictDialog: lambda app: ConflictDialog("a.md"),
    TrashDialog: lambda app: TrashDialog([]),
    memtui.tui.doctor.DoctorScreen: lambda app: memtui.tui.doctor.DoctorScreen(app.locations),
    memtui.tui.inbox.InboxScreen: lambda app: memtui.tui.inbox.InboxScreen(app.locations),
    memtui.tui.stores.StoresScreen: lambda app: memtui.tui.stores.StoresScreen(app.locations),
    memtui.tui.inbox.SourceDialog: lambda app: memtui.tui.inbox.SourceDialog("Where a.md came from", None),
    memtui.tui.widgets.import_dialog.ImportDecisionDialog: lambda app: memtui.tui.widgets.import_dialog.ImportDecisionDialog("approved", "~/project", [], None),
    memtui.tui.widgets.usage_view.UsesDialog: lambda app: memtui.tui.widgets.usage_view.UsesDialog("a.md", []),
    memtui.tui.widgets.session_view.SessionPicker: lambda app: memtui.tui.widgets.session_view.SessionPicker([]),
}


def memtui_screens() -> set[type[Screen[Any]]]:
    """Every screen class of memtui that has keys of its own."""
    found: set[type[Screen[Any]]] = set()
    todo: list[type[Screen[Any]]] = [Screen]
    while todo:
        cls = todo.pop()
        for sub in cls.__subclasses__():
            todo.append(sub)
            if sub.__module__.startswith("memtui.") and own_bindings(sub):
                found.add(sub)
    return found


Reached = list[tuple[str, tuple[object, ...], object]]


def keys_of(node: DOMNode) -> list[tuple[str, tuple[object, ...]]]:
    """The actions (name, arguments) of ``node``'s keys, but those it hides (``check_action``
    is ``False``)."""
    actions = []
    for binding in own_bindings(type(node)):
        _namespace, name, parameters = parse_action(binding.action)
        if node.check_action(name, parameters) is not False:
            actions.append((name, parameters))
    return actions


def watch_actions(nodes: list[DOMNode], reached: Reached) -> None:
    """Replace the action methods of ``nodes``' keys with recorders: a command that calls one
    directly is seen as one that goes through ``run_action``."""
    for node in nodes:
        for name, _parameters in keys_of(node):

            def recorder(*args: object, name: str = name, node: DOMNode = node) -> None:
                reached.append((name, args, node))

            setattr(node, f"action_{name}", recorder)


async def run_palette(app: MemtuiApp, pilot: Pilot[None], screen: Screen[Any], nodes: list[DOMNode]) -> Reached:
    """Run every memtui command the palette offers on ``screen``; the actions they ran (name,
    arguments), with the node each ran on."""
    reached: Reached = []

    async def record(action: str, default_namespace: object = None, namespaces: object = None) -> None:
        _namespace, name, parameters = parse_action(action)
        reached.append((name, parameters, default_namespace))

    app.run_action = record  # type: ignore[method-assign]
    watch_actions(nodes, reached)
    for command in list(app.get_system_commands(screen)):
        if ": " in command.title:  # memtui's ("Memories: delete"), not Textual's (Quit, Theme)
            app.call_later(command.callback)  # as the palette runs a chosen command
            await pilot.pause()
    await settle(pilot)
    return reached


def unreached(nodes: list[DOMNode], reached: Reached) -> list[tuple[str, str, tuple[object, ...]]]:
    """The keys of ``nodes`` no command reached: (class, action, arguments)."""
    return [
        (type(node).__name__, name, parameters)
        for node in nodes
        for name, parameters in keys_of(node)
        if not any(n == name and tuple(p) == tuple(parameters) and at is node for n, p, at in reached)
    ]


async def test_every_key_of_every_pane_is_a_palette_command(make_app: Callable[[], MemtuiApp]) -> None:
    app = make_app()
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        nodes = [node for pane in app.query(Pane) for node in [pane, *pane.query("*")] if keys_of(node)]
        assert sum(len(keys_of(node)) for node in nodes) > 40  # the four panes' keys and their widgets' (home/end, history)
        reached = await run_palette(app, pilot, app.screen, nodes)
        assert unreached(nodes, reached) == []


async def test_every_key_of_every_screen_is_a_palette_command_there(make_app: Callable[[], MemtuiApp]) -> None:
    assert set(SCREENS) == memtui_screens()  # a new screen needs its line above
    app = make_app()
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        for factory in SCREENS.values():
            screen = factory(app)
            reached = await run_palette(app, pilot, screen, [screen])
            assert unreached([screen], reached) == [], type(screen).__name__
