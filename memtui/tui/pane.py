"""What every pane and every full-screen view of memtui is built on.

- **Workers report their failures.** ``Worker.StateChanged`` does not bubble: it reaches only
  the node that started the worker, so each pane handles its own (``WorkerReports``). A worker
  that raises becomes a notification and the pane's error line (``ErrorLine``, docked at the
  top of the pane) with the exception; a worker that wants its own words raises
  ``WorkFailed(title, reason)``. The line clears when a worker of the same group starts again.
- **Latest wins.** A result of a superseded request is dropped: requests take a ticket from a
  ``Latest`` and the handler keeps a result only for the current ticket; a worker checks
  ``is_cancelled`` (``post_if_current``) before it posts.
- **One set of breakpoints** (``NARROW_BELOW``, ``SHORT_BELOW``): the app's screen classes
  ``-narrow`` / ``-short`` for the stylesheets, a pane's ``narrow`` / ``short`` for what it
  draws in Python.
- **Every key is in the palette** (``binding_commands``): a pane's and a screen's palette
  commands are made from its bindings, so a key added is a command added.
- **esc and text boxes, the same in every pane** (``Pane.escape_text_box``): esc in a text
  box leaves it for the pane's list with the text kept (the pane's keys work again); a second
  esc clears that box.
- **Panes in tabs** (``Pane``): ``MAIN`` names the widget that has the keys when the pane is
  shown, ``activated`` runs each time its tab becomes the visible one, ``reveal`` brings the
  pane into view from anywhere (palette commands) — ``PaneTabs`` does the switching and owns
  the focus.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from rich.text import Text
from textual import on
from textual.actions import parse as parse_action
from textual.app import ComposeResult, SystemCommand
from textual.binding import Binding
from textual.css.query import NoMatches
from textual.dom import DOMNode
from textual.message import Message
from textual.reactive import reactive
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Footer, Input, Static, TabbedContent, TabPane
from textual.worker import NoActiveWorker, Worker, WorkerState, get_current_worker

from memtui.core.base.terminal import visible, visible_block
from memtui.tui.theme import tone

if TYPE_CHECKING:
    from collections.abc import Iterable

    # The mixins below are plain classes at run time: a DOMNode base would take the place of
    # the real base (Screen, DataTable) in the chain Textual follows for a class's default CSS,
    # CSS type names and component classes. For the type checker they are widgets.
    _Mixin = Widget
else:
    _Mixin = object

# Below this many columns (of the terminal), side-by-side parts stack or take turns, and labels
# get shorter; below this many rows, the spacer lines go. The app's breakpoints come from these.
NARROW_BELOW = 110
SHORT_BELOW = 30
HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (NARROW_BELOW, "-wide")]
VERTICAL_BREAKPOINTS = [(0, "-short"), (SHORT_BELOW, "-tall")]


def own_bindings(node_class: type[DOMNode]) -> list[Binding]:
    """The bindings memtui's classes in ``node_class``'s ancestry declare (not Textual's own:
    scrolling, tab focus), the most derived first, one per action."""
    seen: set[str] = set()
    found: list[Binding] = []
    for cls in node_class.__mro__:
        if not cls.__module__.startswith("memtui.") or "BINDINGS" not in cls.__dict__:
            continue
        for binding in cls.__dict__["BINDINGS"]:
            if isinstance(binding, Binding) and binding.action not in seen:
                seen.add(binding.action)
                found.append(binding)
    return found


def key_names(node: DOMNode, binding: Binding) -> str:
    """The keys of ``binding`` as the footer shows them (``"esc / n"``)."""
    if binding.key_display:
        return binding.key_display
    keys = [key.strip() for key in binding.key.split(",") if key.strip()]
    return " / ".join(node.app.get_key_display(Binding(key, binding.action)) for key in keys)


def binding_commands(
    node: DOMNode,
    section: str,
    *,
    titles: Mapping[str, tuple[str, str]] | None = None,
    run: Callable[[Callable[[], object]], Callable[[], object]] | None = None,
) -> Iterator[SystemCommand]:
    """A palette command for every binding of ``node`` (``own_bindings``): "``section``:
    <what it does>", with its keys in the help text; it runs the binding's action on ``node``
    as the key does.

    ``titles``: binding id → (title, help) where the binding's own description and tooltip are
    too short for the palette. ``run``: wraps each command's callback (a pane reveals itself
    first). A binding ``node.check_action`` hides (``False``) has no command; one it disables
    for now (``None``) says so in its help."""
    titles = titles or {}
    for binding in own_bindings(type(node)):
        title, help_text = titles.get(binding.id or "", (binding.description.lower(), binding.tooltip or binding.description))
        _namespace, name, parameters = parse_action(binding.action)
        state = node.check_action(name, parameters)
        if state is False:
            continue
        if state is None:
            help_text += " — not available now"
        action = binding.action

        def act(action: str = action) -> None:
            node.app.call_later(node.app.run_action, action, node)

        callback: Callable[[], object] = run(act) if run is not None else act
        yield SystemCommand(f"{section}: {title}", f"{help_text} ( {key_names(node, binding)} )", callback)


class Latest:
    """Tells the newest request from the superseded ones: each request takes a ticket, and only
    the last ticket handed out is current (results of older ones are dropped)."""

    __slots__ = ("_last",)

    def __init__(self) -> None:
        self._last = 0

    def take(self) -> int:
        """A ticket for a new request; every earlier ticket is stale from now on."""
        self._last += 1
        return self._last

    def supersede(self) -> None:
        """Make every ticket handed out so far stale (a cancel)."""
        self._last += 1

    def is_current(self, ticket: int) -> bool:
        """Whether ``ticket`` is the last one handed out."""
        return ticket == self._last


class WorkFailed(Exception):
    """Raised in a worker: the work could not be done, for a reason the user can act on. The
    pane shows ``title`` and ``reason`` as they are (any other exception shows with its type)."""

    def __init__(self, title: str, reason: str) -> None:
        super().__init__(reason)
        self.title = title
        self.reason = reason


@dataclass(frozen=True, slots=True)
class Failure:
    """What failed (``title``), why (``reason``), and the worker ``group`` it came from."""

    title: str
    reason: str
    group: str


class ErrorLine(Static):
    """The pane's error state: hidden until a worker fails, then the failure in one or two
    lines at the top of the pane."""

    def show_failure(self, failure: Failure | None) -> None:
        """Show ``failure``, or hide (``None``)."""
        self.set_class(failure is not None, "-shown")
        if failure is None:
            self.update("")
            return
        self.update(Text.assemble(("✖ ", tone("bold $error")), (visible(failure.title), "bold"), f": {visible_block(failure.reason)}"))


@dataclass
class WorkerFailed(Message):
    """A worker of a widget inside a pane or screen failed; the widget forwards it
    (``ForwardsWorkerFailures``) because ``Worker.StateChanged`` reaches only the widget."""

    worker: Worker[object]


class ForwardsWorkerFailures(_Mixin):
    """For a widget that runs workers of its own inside a pane or screen (list it before the
    widget's Textual base): a worker of it that fails is passed up as ``WorkerFailed``, and the
    pane reports it."""

    def _on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.state == WorkerState.ERROR and event.worker.error is not None:
            self.post_message(WorkerFailed(event.worker))


class WorkerReports(_Mixin):
    """For a pane or a screen that starts workers (list it before the Textual base): each
    failed worker is notified and shown in the node's ``ErrorLine`` (mounted on first use).
    ``FAILURE_TITLES`` maps a worker group to the title of its failure; ``worker_failed`` lets
    the node leave its busy state."""

    # worker group -> what failed, in words ("Cannot scan the memory dir")
    FAILURE_TITLES: ClassVar[dict[str, str]] = {}

    failure: reactive[Failure | None] = reactive(None, init=False)

    def _on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        worker = event.worker
        if event.state == WorkerState.RUNNING:
            if self.failure is not None and self.failure.group == worker.group:
                self.failure = None  # tried again: the old failure no longer holds
            return
        if event.state == WorkerState.ERROR:
            self._failed(worker)

    def _on_worker_failed(self, message: WorkerFailed) -> None:
        message.stop()
        self._failed(message.worker)

    def _failed(self, worker: Worker[object]) -> None:
        error = worker.error
        if error is None:
            return
        if isinstance(error, WorkFailed):
            failure = Failure(error.title, error.reason, worker.group)
        else:
            title = self.FAILURE_TITLES.get(worker.group, f"{worker.name or worker.group} failed")
            failure = Failure(title, f"{type(error).__name__}: {error}", worker.group)
        self.report_failure(failure)
        self.worker_failed(failure)

    def report_failure(self, failure: Failure) -> None:
        """Notify ``failure`` and show it in the error line."""
        self.notify(failure.reason, title=failure.title, severity="error", timeout=10)
        self.failure = failure

    def worker_failed(self, failure: Failure) -> None:
        """Called after a worker failed (override: leave a busy state, reset a progress bar)."""

    def watch_failure(self, failure: Failure | None) -> None:
        if not self.is_mounted:
            return
        try:
            line = self.query_one(ErrorLine)
        except NoMatches:
            if failure is None:
                return
            line = ErrorLine()
            self.mount(line)
        line.show_failure(failure)

    def report_reload(self, what: str, changes: str) -> None:
        """A reload key's answer: what was reloaded and what changed (``"nothing changed"``)."""
        self.notify(f"{what} · {changes}", title="Reloaded", timeout=6)

    def post_if_current(self, message: Message) -> bool:
        """From a worker: post ``message`` unless the worker was cancelled (a newer one runs).
        Returns whether it was posted."""
        try:
            if get_current_worker().is_cancelled:
                return False
        except NoActiveWorker:
            pass
        return self.post_message(message)


class KeysFooter(Footer):
    """Textual's footer, whose keys wrap onto two rows when one row cannot hold them (the
    stylesheet gives it a grid then): on a narrow screen always — a pane shows a dozen keys, one
    row of 80 columns holds about eight — and on a wide one whose keys need more than its width
    (the palette key, docked right, would otherwise cover the last ones)."""

    # columns a key takes beyond its key and description: their padding and the gap after it
    KEY_EXTRA = 3
    # columns the palette key takes at the right end
    PALETTE_WIDTH = 12

    _needed = 0  # the columns the keys need in one row

    def compose(self) -> ComposeResult:
        keys = list(super().compose())
        shown = [key for key in keys if not key.has_class("-command-palette")]
        self.styles.grid_size_columns = max(1, -(-len(shown) // 2))  # (the one-row layout is a row)
        self._needed = sum(len(getattr(k, "key_display", "")) + len(getattr(k, "description", "")) + self.KEY_EXTRA for k in shown) + self.PALETTE_WIDTH
        self._fit(self.app.size.width)
        yield from keys

    def on_resize(self) -> None:
        self._fit(self.app.size.width)

    def _fit(self, width: int) -> None:
        """Two rows when the keys need more than ``width`` columns (the screen's class
        ``-footer-two-rows`` says so to what sits above the footer: the key panel)."""
        two = self._needed > width
        self.set_class(two, "-two-rows")
        if self.is_attached:
            self.screen.set_class(two, "-footer-two-rows")


class Pane(WorkerReports, Widget):
    """A pane of the app: one tab of ``PaneTabs``.

    ``MAIN``: the selector of the widget that has the keys when the pane is shown. ``narrow`` /
    ``short``: the terminal is below the breakpoints (kept up to date on resize)."""

    MAIN: ClassVar[str] = ""
    # where esc from a text box puts the focus (default: ``MAIN``)
    LEAVE_TO: ClassVar[str] = ""

    narrow: reactive[bool] = reactive(False, init=False)
    short: reactive[bool] = reactive(False, init=False)

    _left_box: Input | None = None  # the text box esc last left (a second esc clears it)

    def escape_text_box(self) -> bool:
        """What esc does first in every pane: in a text box of the pane, leave it for the
        ``LEAVE_TO`` (else ``MAIN``) widget, the text kept; elsewhere, clear the box esc left
        last, if it still holds text. Returns ``False`` when neither applied (the pane's esc
        does its own job)."""
        focused = self.app.focused
        if isinstance(focused, Input) and self in focused.ancestors:
            self._left_box = focused
            target = self.query_one(self.LEAVE_TO or self.MAIN)
            if target is focused:
                return False
            target.focus()
            return True
        box, self._left_box = self._left_box, None
        if box is not None and box.is_attached and box.value:
            box.clear()
            return True
        return False

    def _on_resize(self) -> None:
        size = self.app.size
        self.narrow = size.width < NARROW_BELOW
        self.short = size.height < SHORT_BELOW

    def main_widget(self) -> Widget | None:
        """The widget ``MAIN`` names (``None``: none, or not mounted yet)."""
        if not self.MAIN:
            return None
        try:
            return self.query_one(self.MAIN)
        except NoMatches:
            return None

    def activated(self) -> None:
        """Called each time the pane's tab becomes the visible one, after its main widget got
        the focus (override: refresh what may have changed in another pane)."""

    def _on_mount(self) -> None:
        # a pane mounted after the first refresh (``Lazy``) whose tab was shown before it was
        # there: the tabs finish showing it (its own ``on_mount`` loads what a shown pane needs)
        tabs = self.tabs
        if tabs is not None:
            tabs.pane_mounted(self)

    @property
    def tabs(self) -> PaneTabs | None:
        """The ``PaneTabs`` holding this pane (``None`` outside one)."""
        return next((a for a in self.ancestors if isinstance(a, PaneTabs)), None)

    @property
    def is_visible_tab(self) -> bool:
        """Whether the pane's tab is the visible one (always, outside tabs)."""
        tabs = self.tabs
        tab = next((a for a in self.ancestors if isinstance(a, TabPane)), None)
        return tabs is None or tab is None or tabs.active == tab.id

    def reveal(self, then: Callable[[], object] | None = None) -> None:
        """Make this pane the visible tab (as its key 1–4 does), then run ``then`` (at once
        when it is visible already)."""
        tabs = self.tabs
        tab = next((a for a in self.ancestors if isinstance(a, TabPane)), None)
        if tabs is None or tab is None or tab.id is None or tabs.active == tab.id:
            if then is not None:
                then()
            return
        tabs.show(tab.id, then=then)

    def there(self, action: Callable[[], object]) -> Callable[[], None]:
        """``action`` as a palette command: reveal the pane first."""

        def run() -> None:
            self.reveal(then=action)

        return run

    # the pane's name in the palette ("Memories: …"; default: the class name without "Pane")
    PALETTE: ClassVar[str] = ""
    # binding id -> (title, help) of its palette command, where the binding's own words are short
    PALETTE_TITLES: ClassVar[dict[str, tuple[str, str]]] = {}

    def system_commands(self) -> Iterable[SystemCommand]:
        """The pane's palette commands: one for every key of the pane and of the widgets in it
        (``binding_commands``; each shows the pane, then acts as the key does), then
        ``extra_commands``."""
        section = self.PALETTE or type(self).__name__.removesuffix("Pane")
        yield from binding_commands(self, section, titles=self.PALETTE_TITLES, run=self.there)
        for widget in self.query("*"):
            if own_bindings(type(widget)):
                yield from binding_commands(widget, section, titles=self.PALETTE_TITLES, run=self.there)
        yield from self.extra_commands()

    def extra_commands(self) -> Iterable[SystemCommand]:
        """Palette commands no key has (override: a filter by name, a selector by name)."""
        return ()


class PaneTabs(TabbedContent):
    """The panes as tabs. When a tab becomes the visible one — by its key, a click, the
    palette or ``Pane.reveal`` — its pane's main widget (``Pane.MAIN``) gets the focus, then
    the pane's ``activated`` runs, then whatever ``show`` was asked to do next."""

    def __init__(self, *titles: str, initial: str = "", id: str | None = None) -> None:
        super().__init__(*titles, initial=initial, id=id)
        self._then: Callable[[], object] | None = None
        # a tab shown before its pane was mounted: its id and what to run once it is
        self._waiting: tuple[str, Callable[[], object] | None] | None = None

    def show(self, pane_id: str, *, then: Callable[[], object] | None = None) -> None:
        """Make the tab ``pane_id`` the visible one, then run ``then`` (at once when it is
        visible already).

        The focus is dropped first: a focused widget that gets hidden hands the focus to a
        visible sibling in its own (hidden) pane, and ``TabbedContent`` follows that focus
        straight back to the old tab."""
        if self.active == pane_id:
            if then is not None:
                then()
            return
        self._then = then
        self.screen.set_focus(None)
        self.active = pane_id

    def pane(self, pane_id: str) -> Pane | None:
        """The ``Pane`` in the tab ``pane_id`` (``None``: no such tab, or no pane in it)."""
        if not pane_id:
            return None
        return next(iter(self.get_pane(pane_id).query(Pane)), None)

    @on(TabbedContent.TabActivated)
    def _activated(self, event: TabbedContent.TabActivated) -> None:
        if event.tabbed_content is not self:
            return  # a TabbedContent inside a pane
        then, self._then = self._then, None
        pane = self.pane(self.active)
        self._waiting = (self.active, then) if pane is None else None
        if pane is None:
            return  # not mounted yet (``Lazy``): ``pane_mounted`` finishes
        main = pane.main_widget()
        if main is not None:
            main.focus()
        pane.activated()
        if then is not None:
            self.call_after_refresh(then)

    def pane_mounted(self, pane: Pane) -> None:
        """``pane`` was just mounted: if its tab was shown while it was not there, its main
        widget gets the focus and what ``show`` was asked to do next runs."""
        if self._waiting is None:
            return
        tab_id, then = self._waiting
        if self.active != tab_id or self.pane(tab_id) is not pane:
            return
        self._waiting = None
        main = pane.main_widget()
        if main is not None:
            main.focus()
        if then is not None:
            self.call_after_refresh(then)


class PaneScreen(WorkerReports, Screen[bool]):
    """A full-screen view opened from a pane (the doctor, the inbox). Dismisses with ``True``
    when it changed the memory dir."""
