"""The memtui app: the four panes (Cascade, Memories, Recall, Dream) as tabs over the core."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from functools import partial
from typing import Any
from pathlib import Path

from textual import events, work
from textual.app import App, ComposeResult, SystemCommand
from textual.binding import Binding
from textual.lazy import Lazy
from textual.screen import Screen
from textual.widgets import Header, TabPane
from textual.worker import Worker, WorkerState

from memtui.core.base.terminal import visible, visible_block
from memtui.core.places.autoflavor import FlavorChoice
from memtui.core.places.flavor import Flavor
from memtui.core.places.locations import Locations, resolve_locations
from memtui.core.writes.transaction import recover_at_start
from memtui.core.sessions.version import check_version, choose_release
from memtui.tui.cascade import CascadePane
from memtui.tui.dream import DreamPane
from memtui.tui.heap import KeyPause, freeze_long_lived, thaw
from memtui.tui.memories import MemoriesPane, shorten_home
from memtui.tui.pane import HORIZONTAL_BREAKPOINTS, VERTICAL_BREAKPOINTS, KeysFooter, Pane, PaneTabs, binding_commands
from memtui.tui.recall import RecallPane
from memtui.tui.safe import install_render_guard
from memtui.tui.threads import WRITE_GROUPS, DetachedExecutor
from memtui.tui.widgets.keys_panel import PaneKeys, key_panel
from memtui.tui.styles import stylesheets
from memtui.tui.theme import THEME, VARIABLES

# (tab id, title) of each pane, in key order 1-4.
PANES = (("cascade", "Cascade"), ("memories", "Memories"), ("recall", "Recall"), ("dream", "Dream"))


def palette_section(screen: Screen[object]) -> str:
    """The name a screen's palette commands start with: its ``PALETTE``, else its class name
    without "Screen" / "Dialog"."""
    name = getattr(screen, "PALETTE", "") or type(screen).__name__.removesuffix("Screen").removesuffix("Dialog")
    return str(name)


async def _ended(worker: Worker[object]) -> None:
    """Wait for ``worker`` to end, however it ends (its failure is the pane's to report)."""
    try:
        await worker.wait()
    except Exception:  # noqa: BLE001 - WorkerFailed / WorkerCancelled: ended all the same
        pass


class MemtuiApp(App[None]):
    """See and tend the memory of a coding agent."""

    TITLE = "memtui"
    # Narrow terminals stack the panes' side-by-side parts; short ones drop decorative margins.
    HORIZONTAL_BREAKPOINTS = HORIZONTAL_BREAKPOINTS
    VERTICAL_BREAKPOINTS = VERTICAL_BREAKPOINTS
    CSS_PATH = stylesheets("app", "cascade", "memories", "recall", "dream", "dialogs")  # type: ignore[assignment]
    BINDINGS = [
        Binding("q", "quit", "Quit", id="app.quit", tooltip="Quit memtui"),
        Binding("question_mark", "toggle_help", "Keys", id="app.help", tooltip="Show the keys of the focused pane", key_display="?"),
        Binding("f1", "toggle_help", "Keys", show=False, id="app.help-f1", tooltip="Show the keys of the focused pane"),
        # esc closes the key panel first, whatever has the focus (the check lets esc through to
        # the focused widget when no panel is open)
        Binding("escape", "close_help", "Close keys", show=False, priority=True, id="app.close-help", tooltip="Close the key panel"),
        Binding("1", "show_pane('cascade')", "Cascade", show=False, id="app.pane-cascade", tooltip="Switch to the Cascade pane"),
        Binding("2", "show_pane('memories')", "Memories", show=False, id="app.pane-memories", tooltip="Switch to the Memories pane"),
        Binding("3", "show_pane('recall')", "Recall", show=False, id="app.pane-recall", tooltip="Switch to the Recall pane"),
        Binding("4", "show_pane('dream')", "Dream", show=False, id="app.pane-dream", tooltip="Switch to the Dream pane"),
        Binding("ctrl+f", "switch_flavor", "Flavor", show=False, id="app.switch-flavor",
                tooltip="Switch between the agent and claude flavors (AGENT.md / CLAUDE.md files)"),
    ]

    def __init__(self, locations: Locations, *, watch: bool = True, choice: FlavorChoice | None = None) -> None:
        install_render_guard()
        super().__init__()
        self.locations = locations
        # how the flavor was chosen, for the header (``--flavor auto`` says why)
        self.choice = choice if choice is not None and choice.flavor is locations.flavor else FlavorChoice.given(locations.flavor)
        # A release profile named with --release holds across ctrl+f.
        self._release_given = None if self.choice.release is None or self.choice.release.source != "flag" else self.choice.release.version
        self.live_reload = watch  # not `watch`: that is DOMNode.watch, which Textual calls on the app
        self.register_theme(THEME)
        self.theme = THEME.name
        # a change a crash cut short is settled before any pane reads or edits the memory dir
        self.recovered = recover_at_start(locations.state_dir, locations.memory_dir)
        self._key_pause = KeyPause()

    @classmethod
    def for_project(cls, flavor: Flavor | FlavorChoice, project: Path | None, *, memory_dir: Path | None = None, watch: bool = True) -> MemtuiApp:
        """The app for ``project`` (``None``: the current directory) as ``memtui`` opens it; tests
        and screenshots build it the same way. ``flavor``: a flavor, or the outcome of
        ``choose_flavor`` (the header then says why). ``memory_dir`` skips resolution.

        ``watch=False`` turns off live reload (snapshot tests and screenshots).
        """
        choice = flavor if isinstance(flavor, FlavorChoice) else FlavorChoice.given(flavor)
        return cls(resolve_locations(choice.flavor, project, memory_dir=memory_dir), watch=watch, choice=choice)

    # How long the app waits, on quit, for a write in flight (one journaled transaction) to end.
    WRITE_WAIT_S = 10.0
    # How long it waits, on quit, for the panes still being mounted at startup.
    MOUNT_WAIT_S = 5.0

    def get_theme_variable_defaults(self) -> dict[str, str]:
        """memtui's own colour variables (``$muted``, ``$info``…), for every theme."""
        return {**super().get_theme_variable_defaults(), **VARIABLES}

    def compose(self) -> ComposeResult:
        # The panes not shown at start are mounted after the first refresh (``Lazy``): the
        # Memories pane's first rows do not wait for three panes' widgets to be built.
        yield Header()
        with PaneTabs(initial="memories", id="panes"):
            with TabPane("Cascade", id="cascade"):
                yield Lazy(CascadePane(self.locations, id="cascade-pane"))
            with TabPane("Memories", id="memories"):
                yield MemoriesPane(self.locations, watch=self.live_reload, id="memories-pane")
            with TabPane("Recall", id="recall"):
                yield Lazy(RecallPane(self.locations, id="recall-pane"))
            with TabPane("Dream", id="dream"):
                yield Lazy(DreamPane(self.locations, id="dream-pane"))
        yield KeysFooter()

    def on_load(self) -> None:
        # Thread workers run on daemon threads that nothing joins: quitting never waits on a
        # reader still busy (memtui.tui.threads).
        asyncio.get_running_loop().set_default_executor(DetachedExecutor())

    def on_mount(self) -> None:
        self._show_flavor()
        for message in self.recovered:
            self.notify(visible(message), title="Interrupted change", severity="warning", timeout=20, markup=False)

    def on_ready(self) -> None:
        """The first screen is drawn: what startup built is kept for the app's life, out of the
        garbage collector's full passes, which otherwise came during the first keys pressed."""
        freeze_long_lived(collect=False)

    def on_unmount(self) -> None:
        self._key_pause.resume()
        thaw()  # whatever outlives the app (a test run, a benchmark) is collectable again

    async def on_event(self, event: events.Event) -> None:
        """A key: the garbage collector waits until the screen shows what the key did (at the
        latest a second later, should no update come)."""
        if isinstance(event, events.Key) and self._key_pause.pause():
            self.call_after_refresh(self._key_pause.resume)
            self.set_timer(1.0, self._key_pause.resume)
        await super().on_event(event)

    def _show_flavor(self) -> None:
        """The header: the project, the flavor and why (when detected or from the environment),
        the release modelled; a claude flavor checks the installed version."""
        loc = self.locations
        given = FlavorChoice.given(loc.flavor)
        why = "" if (self.choice.source, self.choice.reason) == (given.source, given.reason) else f" ({self.choice.reason})"  # a flag needs no echo
        self.sub_title = visible(f"{shorten_home(loc.project_root)} · {loc.flavor.name} flavor{why}")
        if loc.flavor.behaviour.version is not None:
            self.sub_title += visible(f" · models {loc.flavor.behaviour.title}")
            self.check_version()

    async def action_switch_flavor(self) -> None:
        """Open the same project with the other flavor: every pane built again over its
        locations (a ``--memory-dir`` given stays). Only from the panes: a screen above them
        (the doctor, the inbox, a dialog) is closed first; the key panel closes; panes still
        being mounted at startup are let finish."""
        if len(self.screen_stack) > 1:
            self.notify("Close this screen first (esc), then press ctrl+f.", title="Flavor not switched", severity="warning")
            return
        panel = key_panel(self.screen)
        if panel is not None:
            await panel.remove()
        await self._panes_mounted()
        loc = self.locations
        # The release profile from the transcripts (the version command is not run on the UI thread).
        switched = FlavorChoice(self.choice.other(), "flag", "switched with ctrl+f", {})
        self.choice = choose_release(switched, loc.project_root, given=self._release_given, ask_command=False)
        memory_dir = loc.memory_dir if loc.memory_dir_source == "option" else None
        self.locations = resolve_locations(self.choice.flavor, loc.project_root, memory_dir=memory_dir)
        recovered = recover_at_start(self.locations.state_dir, self.locations.memory_dir)
        await self.recompose()
        freeze_long_lived(collect=False)  # the new panes, as at startup
        self._show_flavor()
        self.notify(f"{self.locations.flavor.name} flavor: memory dir {self.locations.memory_dir}", title="Flavor switched")
        for message in recovered:
            self.notify(visible(message), title="Interrupted change", severity="warning", timeout=20, markup=False)

    def notify(self, message: str, *, title: str = "", severity: Any = "information", timeout: float | None = None, markup: bool = True) -> None:
        """Every notification shows its text as text: messages carry file names and errors
        from files, so control characters are shown as escapes and nothing is read as markup
        (``markup`` is ignored)."""
        super().notify(visible_block(message), title=visible(title), severity=severity, timeout=timeout, markup=False)

    @work(thread=True, exclusive=True, exit_on_error=False, group="version")
    def check_version(self) -> None:
        """Read the user's version of the agent (transcripts, else its command) off the UI
        thread; a difference from the modelled release becomes a notice."""
        release = self.choice.release
        found = release.detected if release is not None else None
        result = check_version(self.locations, detected=found)
        if result.notice is not None:
            self.call_from_thread(self._version_differs, result.installed or "?", result.notice)

    def _version_differs(self, installed: str, notice: str) -> None:
        self.sub_title += f" · you run {installed}"
        self.notify(notice, title="Claude Code version", severity="warning", timeout=12)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """The app's own workers (the version check) report a failure too; the panes report
        theirs (``Worker.StateChanged`` reaches only the node that started the worker)."""
        if event.state == WorkerState.ERROR and event.worker.error is not None:
            error = event.worker.error
            self.notify(f"{type(error).__name__}: {error}", title="Cannot check the agent's version", severity="warning", timeout=10)

    async def action_quit(self) -> None:
        """Quit: every worker is cancelled (readers stop at their next step or are left to
        end with the process); a write in flight is waited for, up to ``WRITE_WAIT_S`` seconds,
        so it ends whole rather than for the journal to settle at the next start."""
        writing = [w for w in self.workers if w.group in WRITE_GROUPS and not w.is_finished]
        for worker in self.workers:
            if worker not in writing:
                worker.cancel()
        if writing:
            self.notify("Finishing the change in progress, then quitting…", title="Quitting")
            await asyncio.wait([asyncio.ensure_future(_ended(w)) for w in writing], timeout=self.WRITE_WAIT_S)
        # A pane still being mounted (``Lazy``, just after startup) is let finish first: an exit
        # in the middle of a mount runs the pane's mount handlers over widgets never mounted.
        await self._panes_mounted()
        self.exit()

    async def _panes_mounted(self) -> None:
        """Wait (up to ``MOUNT_WAIT_S`` seconds) for the panes mounted after the first refresh
        (``Lazy``) to be in place."""
        deadline = asyncio.get_running_loop().time() + self.MOUNT_WAIT_S
        while self.screen_stack[0].query(Lazy) and asyncio.get_running_loop().time() < deadline:
            await asyncio.sleep(0.02)

    def action_help_quit(self) -> None:
        """ctrl+c: how to quit, in plain text (Textual's own hint is markup, which
        ``notify`` shows as text)."""
        self.notify("Press q to quit (ctrl+q from a text box).", title="Do you want to quit?")

    def action_show_pane(self, pane: str) -> None:
        """Switch to the pane with id ``pane``; the pane shown focuses its main widget."""
        self.query_one(PaneTabs).show(pane)

    def action_close_help(self) -> None:
        """esc with the key panel open: close it."""
        panel = key_panel(self.screen)
        if panel is not None:
            panel.remove()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """esc closes the key panel only while one is open; otherwise it goes on to the
        focused widget."""
        if action == "close_help":
            return key_panel(self.screen) is not None
        return True

    def action_toggle_help(self) -> None:
        """Show or hide the key panel: the focused pane's (or screen's) keys, then the app's."""
        panel = key_panel(self.screen)
        if panel is not None:
            panel.remove()
        else:
            self.screen.mount(PaneKeys())

    def get_system_commands(self, screen: Screen[object]) -> Iterable[SystemCommand]:
        """The palette reaches every action a key reaches: on the panes, the panes' commands;
        on a screen or dialog above them, that screen's keys."""
        yield from super().get_system_commands(screen)
        if not screen.query(PaneTabs):
            yield from binding_commands(screen, palette_section(screen))
            return
        # A way out of any text box (where 1-4 are text): each pane by name.
        for key, (pane_id, name) in enumerate(PANES, start=1):
            yield SystemCommand(f"Go to pane: {name}", f"Switch to the {name} pane ( {key} )", partial(self.action_show_pane, pane_id))
        other = self.choice.other().name
        yield SystemCommand(f"Switch flavor: {other}", f"Open this project with the {other} flavor ( ctrl+f )", partial(self.run_action, "switch_flavor"))
        for pane in self.query(Pane):
            yield from pane.system_commands()
