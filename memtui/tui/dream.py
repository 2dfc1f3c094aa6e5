"""The Dream pane: the consolidation console.

The gates with what blocks and when it opens, the lock holder; a dry run (``d``), a run through
the gates (``R``) or a forced one (``F``) with the four phases as live progress bars and a
streaming log; the plan as a list of changes with the diff of the highlighted one; apply
(``a``), discard (``x``), undo the last dream (``u``, after a preview of what it restores);
cancel while running (``escape``: the core's cancel event is set and the lock rolled back).

For the claude flavor the gates are those of Claude Code's own auto-dream, in its order, with
the verdict and the traps (``g`` details every gate's numbers and sources and the sessions
counted); ``v`` shows the dream request, ``h`` the history (memtui's dreams beside the agent's own
dreams and extractions, with diffs where memtui kept a copy), ``L`` resets a lock stamped by a
dream that left no record, ``m`` sets the claude consolidator's model.

Nothing is written before apply. A real run holds the lock while its plan is open (the core's
``DreamSession``); applying a dry-run plan takes the lock then (no gates: the user reviewed
the exact diff), and the conflict check refuses it when a file changed since. The core does
every step; workers only post messages and the ``@on`` handlers own the state — reactives
(``running``, ``plan``, ``session``, ``consolidator``) from which the status line and the keys
that can act are drawn.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass, replace
from typing import ClassVar, Literal

from rich.console import Group
from rich.syntax import Syntax
from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.css.query import NoMatches
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.events import Resize
from textual.message import Message
from textual.reactive import reactive
from textual.widgets import RichLog, Static
from memtui.tui.widgets.option_list import OptionList
from textual.widgets.option_list import Option
from textual.worker import get_current_worker

from memtui.tui.safe import block, markup_safe, plain
from memtui.core.base.terminal import visible, visible_block
from memtui.core.base.clock import system_now
from memtui.core.dream import (
    PHASES,
    Consolidator,
    DreamBlocked,
    DreamCancelled,
    DreamContext,
    DreamError,
    DreamEvent,
    DreamPlan,
    DreamSession,
    Finding,
    GateStatus,
    LockError,
    Phase,
    PhaseFinished,
    PhaseStarted,
    Progress,
    ProposedChange,
    check_gates,
    dream_entries,
    plan_dream,
    undo_last_dream,
)
from memtui.core.dream.autodream import AutoDreamStatus, check_autodream, counted_sessions
from memtui.core.dream.history import HistoryItem, dream_history, item_diffs, remember_files
from memtui.core.dream.prompt import DreamRequest, build_dream_request, instructions_block, main_model
from memtui.core.dream.reset import plan_lock_reset, reset_lock
from memtui.core.places.release import release_of
from memtui.core.writes.edits import ApplyError, ConflictError, EditError, undo_plan
from memtui.core.writes.journal import Journal, JournalEntry
from memtui.core.places.locations import Locations
from memtui.core.memory.memories import MemoryDirError
from memtui.core.recall.claude import has_credentials
from memtui.tui.dialogs import PlanPreview, TextPrompt
from memtui.tui.memories import MemoriesPane, shorten_home
from memtui.tui.pane import Failure, Pane, WorkFailed
from memtui.tui.widgets.dream_view import (
    MUTED,
    PhaseRow,
    autodream_details,
    autodream_text,
    history_detail,
    history_prompt,
    change_prompt,
    event_line,
    finding_prompt,
    gate_text,
    last_dream_text,
)
from memtui.tui.theme import assemble, styled

RunKind = Literal["dry", "run", "force"]
# What the pane is doing: a run, applying a plan, undoing the last dream.
Activity = Literal["dry", "run", "force", "apply", "undo"]
RUN_LABELS: dict[str, str] = {"dry": "dry run", "run": "run", "force": "forced run"}
# The streaming log keeps this many lines (a claude run on a big store logs thousands).
LOG_LINES = 2_000


class TailLog(RichLog):
    """A log that keeps its last lines in sight when its height changes (a plan appearing
    shrinks it on a short terminal). ``RichLog`` scrolls to the end only on a write."""

    def on_resize(self, event: Resize) -> None:
        # RichLog's own handler runs too (handlers run for each class of the MRO)
        if self.auto_scroll:
            self.scroll_end(animate=False, immediate=False, x_axis=False)


class DreamPane(Pane):
    """Run, preview, apply and undo the dream of ``locations.memory_dir``."""

    MAIN = "#dream-changes"
    PALETTE_TITLES = {
        "dream.dry-run": ("dry run", "Plan a dream without writing anything"),
        "dream.run": ("run through the gates", "Take the lock and plan, if every gate is open"),
        "dream.force": ("force", "Take the lock and plan, skipping the gates"),
        "dream.apply": ("apply the plan", "Apply the open plan as one transaction"),
        "dream.discard": ("discard the plan", "Drop the open plan; the lock goes back"),
        "dream.undo": ("undo the last dream", "Preview, then restore the files the last dream changed"),
        "dream.cancel": ("cancel", "Stop the running dream"),
        "dream.consolidator": ("consolidator", "Offline, or claude with an API key"),
        "dream.refresh": ("check the gates", "Check the gates and the lock again"),
        "dream.history": ("history", "memtui's dreams and the agent's own dreams and extractions, with diffs"),
        "dream.gate-details": ("gate details", "The agent's gates with their numbers and sources, the sessions counted"),
        "dream.request": ("show the request", "The dream request, as the agent would send it now or as memtui sent it"),
        "dream.reset-lock": ("reset the lock", "After a dream that left no record: the lock back, undoable"),
        "dream.model": ("consolidator model", "The claude consolidator's model"),
    }
    FAILURE_TITLES = {
        "dream-gates": "Cannot check the gates",
        "dream-run": "The dream failed",
        "dream-apply": "The dream was not applied",
        "dream-request": "Cannot build the request",
    }

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("d", "dry_run", "Dry run", id="dream.dry-run", tooltip="Plan a dream without gates, lock or writes: the diff of every change"),
        Binding("R", "run", "Run", id="dream.run", tooltip="Run through the gates: take the lock and plan (nothing written before apply)"),
        Binding("F", "force", "Force", id="dream.force", tooltip="Run now, skipping the gates (the lock is still taken)"),
        Binding("a", "apply", "Apply", id="dream.apply", tooltip="Apply the plan as one transaction (undo with u)"),
        Binding("x", "discard", "Discard", id="dream.discard", tooltip="Drop the plan; a held lock goes back to how it was"),
        Binding("u", "undo", "Undo dream", id="dream.undo", tooltip="Undo the last applied dream, after a preview of what it restores"),
        Binding("escape", "cancel", "Cancel", id="dream.cancel", tooltip="Stop the running dream; the lock is rolled back"),
        Binding("c", "toggle_consolidator", "Consolidator", show=False, id="dream.consolidator", tooltip="Offline or claude (claude needs an API key)"),
        Binding("r", "refresh_asked", "Gates", show=False, id="dream.refresh", tooltip="Check the gates and the lock again, and say what changed"),
        Binding("g", "gate_details", "Gate details", show=False, id="dream.gate-details", tooltip="Every gate with its numbers and sources, the sessions counted, the traps"),
        Binding("v", "show_request", "Request", show=False, id="dream.request", tooltip="The dream request: what the agent would send now, or what memtui's claude consolidator sent"),
        Binding("h", "history", "History", show=False, id="dream.history", tooltip="memtui's dreams and the agent's own dreams and extractions, with diffs"),
        Binding("L", "reset_lock", "Reset lock", show=False, id="dream.reset-lock", tooltip="After a dream that left no record: the lock back to the last recorded dream (undo with u)"),
        Binding("m", "set_model", "Model", show=False, id="dream.model", tooltip="The claude consolidator's model (default: the agent's main-loop model)"),
    ]

    # ----- messages (posted by the workers; the pane's own ones do not bubble, applied and
    # undone do: the memory dir changed) ------------------------------------------------------

    @dataclass
    class GatesChecked(Message, bubble=False):
        """The gates as they are now, and the applied dream ``u`` would undo (or ``None``);
        ``auto``: the gates of the flavor's CLI release (``None`` for the agent flavor);
        ``history``: memtui's and the agent's dreams and extractions, newest first."""

        status: GateStatus
        last_dream: JournalEntry | None
        auto: AutoDreamStatus | None = None
        history: list[HistoryItem] | None = None

    @dataclass
    class RequestReady(Message, bubble=False):
        """The dream request as the agent would send it now."""

        request: DreamRequest

    @dataclass
    class Streamed(Message, bubble=False):
        """One event of a running dream (every kind but progress counts)."""

        event: DreamEvent

    @dataclass
    class PhaseProgress(Message, bubble=False):
        """``done`` of ``total`` steps of ``phase``. Frequent: a newer one for the same phase
        replaces one still queued, so the queue never floods."""

        phase: Phase
        done: int
        total: int

        def can_replace(self, message: Message) -> bool:
            return isinstance(message, DreamPane.PhaseProgress) and message.phase == self.phase

    @dataclass
    class Planned(Message, bubble=False):
        """A run finished with a plan; ``session`` holds the lock (``None`` for a dry run)."""

        kind: RunKind
        plan: DreamPlan
        session: DreamSession | None

    @dataclass
    class Stopped(Message, bubble=False):
        """A run ended without a plan: cancelled, blocked by a gate, or failed."""

        kind: RunKind
        outcome: Literal["cancelled", "blocked", "failed"]
        reason: str
        status: GateStatus | AutoDreamStatus | None = None

    @dataclass
    class Applied(Message):
        """The plan was applied (``entry``: its journal entry; ``None``: nothing to change,
        the consolidation still recorded)."""

        entry: JournalEntry | None

    @dataclass
    class Undone(Message):
        """The last dream was undone (``entry``: the undo's journal entry)."""

        entry: JournalEntry

    # ----- state: the status line and the keys that can act follow it ----------------------

    running: reactive[Activity | None] = reactive(None, init=False)
    plan: reactive[DreamPlan | None] = reactive(None, init=False, always_update=True)
    session: reactive[DreamSession | None] = reactive(None, init=False, always_update=True)
    # "offline" or "claude"; a ``Consolidator`` callable may be set instead (tests).
    consolidator: reactive[str | Consolidator] = reactive("offline", init=False, always_update=True)
    model_override: reactive[str | None] = reactive(None, init=False)  # the claude consolidator's model (None: the default)

    def __init__(self, locations: Locations, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.locations = locations
        self.ctx = DreamContext.from_locations(locations, current_session=None)
        self.status: GateStatus | None = None
        self.last_dream: JournalEntry | None = None
        self.plan_kind: RunKind | None = None  # the run that made ``plan``
        self._cancel = threading.Event()
        self._pending: list[ProposedChange] = []
        self._status_due = False
        self.release = release_of(locations.flavor)
        self.auto: AutoDreamStatus | None = None
        self._refresh_asked = False  # the refresh key was pressed: say the next check's verdict
        self._refresh_from: str | None = None
        self.history: list[HistoryItem] = []
        self.showing_history = False

    def compose(self) -> ComposeResult:
        with Horizontal(id="dream-top"):
            with VerticalScroll(id="dream-gates-box", can_focus=False):  # long reasons scroll; g shows them whole
                yield Static(id="dream-gates")
            with Vertical(id="dream-phases"):
                for phase in PHASES:
                    yield PhaseRow(phase, id=f"phase-{phase}")
        yield Static(id="dream-status")
        with Horizontal(id="dream-body"):
            with Vertical(id="dream-left"):
                yield OptionList(id="dream-changes")
                yield TailLog(max_lines=LOG_LINES, min_width=20, wrap=True, markup=False, highlight=False, id="dream-log")
            with VerticalScroll(id="dream-diff"):
                yield Static(id="dream-diff-text")

    def on_mount(self) -> None:
        self.query_one("#dream-gates-box").border_title = "gates"
        self.query_one("#dream-gates-box").border_subtitle = markup_safe(shorten_home(self.locations.memory_dir))
        self.query_one("#dream-phases", Vertical).border_title = "phases"
        self.query_one("#dream-changes", OptionList).border_title = "plan"
        self.query_one("#dream-log", RichLog).border_title = "log"
        self.query_one("#dream-diff", VerticalScroll).border_title = "diff"
        self.query_one("#dream-gates", Static).update(styled("checking the gates…", style=MUTED))
        self._show_help()
        self._show_status()
        self.action_refresh()
        for name in ("running", "plan", "session", "consolidator", "model_override"):
            self.watch(self, name, self._state_changed, init=False)

    def activated(self) -> None:
        """Shown again: the gates are checked again (time moves, sessions arrive)."""
        if self.running is None:
            self.action_refresh()

    @property
    def compact(self) -> bool:
        """Small terminal: the gates are drawn in short lines."""
        return self.narrow or self.short

    def watch_narrow(self) -> None:
        self._show_gates()

    def watch_short(self) -> None:
        self._show_gates()

    def _state_changed(self) -> None:
        """The state changed: the status line and the keys are drawn again, once, after the
        handler that changed it is done."""
        if not self._status_due:
            self._status_due = True
            self.call_after_refresh(self._show_status)

    def on_unmount(self) -> None:
        """Leaving with a plan open: the lock goes back to how it was."""
        self._status_due = True  # nothing to draw any more
        self._cancel.set()
        if self.session is not None:
            self.session.discard()
            self.session = None

    @property
    def consolidator_name(self) -> str:
        """``offline`` or ``claude`` (a test's callable counts as offline)."""
        return "claude" if self.consolidator == "claude" else "offline"

    # ----- workers: they only post messages -------------------------------------------------

    @work(thread=True, exclusive=True, exit_on_error=False, group="dream-gates")
    def check(self) -> None:
        """Evaluate the gates (the memory dir is not written), find the last applied dream and
        the history; keep memtui's copies of the memory files for the history's diffs."""
        now = system_now()
        status = check_gates(self.ctx, now)
        entries = dream_entries(self.ctx)
        auto = None
        if self.release is not None:
            remember_files(self.ctx, now)
            auto = check_autodream(self.ctx, now, self.release)
        # the seed design's transcripts record no background work: its history is memtui's own
        history = dream_history(self.ctx, None if self.release is not None else [])
        self.post_message(self.GatesChecked(status, entries[-1] if entries else None, auto, history))

    @work(thread=True, exclusive=True, exit_on_error=False, group="dream-request")
    def fetch_request(self) -> None:
        """Build the request the agent would send now (its instructions come from the cascade)."""
        assert self.release is not None
        from memtui.core.agent import DEFAULT_MAX_TOKENS

        request = build_dream_request(self.ctx, self.release, counted_sessions(self.ctx), model=self.model_override,
                                      max_tokens=DEFAULT_MAX_TOKENS, instructions=instructions_block(self.ctx))
        self.post_message(self.RequestReady(request))

    @work(thread=True, exclusive=True, exit_on_error=False, group="dream-apply")
    def reset_lock_worker(self) -> None:
        """Reset the lock through the journal (``u`` undoes it)."""
        try:
            entry = reset_lock(self.ctx, system_now())
        except (EditError, ConflictError, ApplyError, OSError) as exc:
            raise WorkFailed("Lock not reset", str(exc)) from exc
        self.post_message(self.Applied(entry))

    @work(thread=True, exclusive=True, exit_on_error=False, group="dream-run")
    def dream(self, kind: RunKind, consolidator: str | Consolidator, cancel: threading.Event, options: dict[str, object] | None = None) -> None:
        """Plan a dream: dry (no gates, no lock) or through a ``DreamSession`` (gates unless
        forced, the lock held until apply or discard). Events become messages as they come;
        a cancelled worker sets the core's cancel event at the next one."""
        worker = get_current_worker()

        def emit(event: DreamEvent) -> None:
            if worker.is_cancelled:
                cancel.set()
            if isinstance(event, Progress):
                self.post_if_current(self.PhaseProgress(event.phase, event.done, event.total))
            else:
                self.post_if_current(self.Streamed(event))

        now = system_now()
        session: DreamSession | None = None
        try:
            extra = options or {}
            if kind == "dry":
                dp = plan_dream(self.ctx, now, consolidator, emit=emit, cancel=cancel, **extra)  # type: ignore[arg-type]
            else:
                session = DreamSession.start(self.ctx, now, force=kind == "force")
                dp = session.plan(consolidator, now, emit=emit, cancel=cancel, **extra)  # type: ignore[arg-type]
        except DreamBlocked as exc:
            self.post_message(self.Stopped(kind, "blocked", f"{exc} (F skips the gates)", exc.status))
            return
        except DreamCancelled:
            self.post_message(self.Stopped(kind, "cancelled", "cancelled; nothing was written" + ("" if kind == "dry" else ", the lock is as it was")))
            return
        except (DreamError, LockError, MemoryDirError, OSError) as exc:
            self.post_message(self.Stopped(kind, "failed", str(exc)))
            return
        if worker.is_cancelled or cancel.is_set():  # cancelled after the last step
            if session is not None:
                session.discard()
            self.post_message(self.Stopped(kind, "cancelled", "cancelled; nothing was written"))
            return
        self.post_message(self.Planned(kind, dp, session))

    @work(thread=True, exclusive=True, exit_on_error=False, group="dream-apply")
    def apply_worker(self, dp: DreamPlan, session: DreamSession | None) -> None:
        """Apply ``dp`` through ``session`` (a dry run's plan: take the lock now, no gates)."""
        now = system_now()
        try:
            if session is None:
                session = DreamSession.start(self.ctx, now, force=True)
            entry = session.apply(dp, now)
        except (LockError, ConflictError, ApplyError, DreamError, OSError) as exc:
            raise WorkFailed("Dream not applied", f"{exc} — nothing was written") from exc
        self.post_message(self.Applied(entry))

    @work(thread=True, exclusive=True, exit_on_error=False, group="dream-apply")
    def undo_worker(self) -> None:
        """Undo the last applied dream (files, mtimes and the lock as they were)."""
        try:
            entry = undo_last_dream(self.ctx, system_now())
        except (EditError, ConflictError, ApplyError, OSError) as exc:
            raise WorkFailed("Dream not undone", str(exc)) from exc
        self.post_message(self.Undone(entry))

    def worker_failed(self, failure: Failure) -> None:
        """A worker that failed: the pane leaves its running state; a held lock that the core
        rolled back is no longer held; an apply that failed drops its plan."""
        if failure.group == "dream-gates":
            self.query_one("#dream-gates", Static).update(plain(f"the gates could not be checked: {failure.reason}", style="$error"))
            return
        if failure.group == "dream-request":
            self._show_diff("request", plain(failure.reason, style="$error"))
            return
        if self.running in ("apply", "undo") and self.session is not None:
            self.session = None  # the core rolled the lock back
        if self.running == "apply":
            self.plan = self.plan_kind = None
            self._clear_plan()
        self.running = None
        self._log(plain(f"{failure.title}: {failure.reason}", style="bold $error"))
        self.action_refresh()

    # ----- handlers: they own the state --------------------------------------------------------

    @on(GatesChecked)
    def _on_gates(self, message: GatesChecked) -> None:
        self.status = message.status
        self.last_dream = message.last_dream
        self.auto = message.auto
        if self._refresh_asked:
            self._refresh_asked = False
            now = self._verdict() or "?"
            changes = "unchanged" if now == self._refresh_from else f"was: {self._refresh_from or 'not checked'}"
            self.report_reload(f"gates and lock checked: {now}", changes)
        self.history = message.history or []
        self._show_gates()
        self._state_changed()  # u acts only with an applied dream
        if self.showing_history and self.plan is None:
            self._fill_history()

    @on(RequestReady)
    def _on_request(self, message: RequestReady) -> None:
        self._show_diff("request · as the agent would send it now", block(message.request.render()))

    @on(Streamed)
    def _on_event(self, message: Streamed) -> None:
        event = message.event
        line = event_line(event)
        if line is not None:
            self.query_one("#dream-log", RichLog).write(line)
        if isinstance(event, PhaseStarted):
            self._row(event.phase).state = event.title
        elif isinstance(event, PhaseFinished):
            row = self._row(event.phase)
            row.total = row.total or 1.0
            row.done = row.total
            row.state = event.summary
        elif isinstance(event, ProposedChange):
            self._pending.append(event)
            self.query_one("#dream-changes", OptionList).add_option(Option(change_prompt(event.path, event.action, event.reason, pending=True)))

    @on(PhaseProgress)
    def _on_progress(self, message: PhaseProgress) -> None:
        row = self._row(message.phase)
        row.total = max(message.total, 1)
        row.done = min(message.done, message.total)

    @on(Planned)
    def _on_planned(self, message: Planned) -> None:
        self.running = None
        if self._cancel.is_set():  # escape reached us after the plan was posted
            if message.session is not None:
                message.session.discard()
            self._stopped("cancelled; nothing was written")
            return
        self.plan_kind, self.plan, self.session = message.kind, message.plan, message.session
        self._fill_plan()
        self.action_refresh()  # the lock holder is this memtui now (a real run)

    @on(Stopped)
    def _on_stopped(self, message: Stopped) -> None:
        self.running = None
        if message.outcome == "blocked" and message.status is not None:
            if isinstance(message.status, AutoDreamStatus):
                self.auto = message.status
            else:
                self.status = message.status
            self._show_gates()
            self.notify(f"{message.reason}", title="Gate closed", severity="warning", timeout=8)
        elif message.outcome == "failed":
            self.report_failure(Failure(f"The {RUN_LABELS[message.kind]} failed", message.reason, "dream-run"))
        for phase in PHASES:
            row = self._row(phase)
            if row.state != "waiting" and row.done < (row.total or 1):
                row.total = row.total or 1.0
                row.state = message.outcome
        self._stopped(message.reason)
        self.action_refresh()

    @on(Applied)
    def _on_applied(self, message: Applied) -> None:
        self.running = None
        self.plan = self.session = self.plan_kind = None
        self._clear_plan()
        entry = message.entry
        text = f"Applied {len(entry.changes)} change(s); u undoes the whole dream." if entry else "Nothing to change; the consolidation is recorded."
        self._log(plain(f"applied: {text}", style="bold $success"))
        self.notify(text, title="Dream applied", timeout=6)
        self._memories_changed()

    @on(Undone)
    def _on_undone(self, message: Undone) -> None:
        self.running = None
        self._log(plain(f"undone: {message.entry.title}", style="bold $success"))
        self.notify(f"{message.entry.title} — every file as it was.", title="Dream undone", timeout=6)
        self._memories_changed()

    @on(OptionList.OptionHighlighted, "#dream-changes")
    def _on_highlight(self, event: OptionList.OptionHighlighted) -> None:
        if self.showing_history and self.plan is None:
            self._show_history_item(event.option_index)
            return
        self._show_selected(event.option_index)

    # ----- actions ------------------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Keys that cannot act now are shown dimmed (``None``) in the footer."""
        idle = self.running is None
        if action in ("dry_run", "run", "force", "toggle_consolidator"):
            return True if idle and self.session is None else None
        if action == "apply":
            return True if idle and self.plan is not None and (self.session is not None or not self.plan.empty) else None
        if action == "discard":
            return True if idle and self.plan is not None else None
        if action == "undo":
            return True if idle and self.session is None and self.last_dream is not None else None
        if action == "cancel":
            return True if self.running in ("dry", "run", "force") else None
        if action in ("gate_details", "show_request", "set_model"):
            return True if self.release is not None else False  # only for a release that dreams
        if action == "reset_lock":
            failed = self.auto is not None and any(t.code == "failed-dream" for t in self.auto.traps)
            return True if idle and self.session is None and failed else None
        return True

    def action_dry_run(self) -> None:
        self._start("dry")

    def action_run(self) -> None:
        self._start("run")

    def action_force(self) -> None:
        self._start("force")

    def action_apply(self) -> None:
        if self.plan is None or self.running is not None:
            return
        self.running = "apply"
        self.apply_worker(self.plan, self.session)

    def action_discard(self) -> None:
        if self.plan is None or self.running is not None:
            return
        held = self.session is not None
        if self.session is not None:
            self.session.discard()
        self.plan = self.session = self.plan_kind = None
        self._clear_plan()
        self._log(styled("plan discarded" + ("; the lock is back as it was" if held else ""), style=MUTED))
        self.action_refresh()

    def action_undo(self) -> None:
        if self.running is not None or self.session is not None:
            return
        entries = dream_entries(self.ctx)
        if not entries:
            self.notify("No applied dream to undo.", timeout=4)
            return
        try:
            plan = undo_plan(self.ctx.memory_dir, Journal(self.ctx.state_dir, self.ctx.memory_dir), entries[-1].id)
        except (EditError, ConflictError) as exc:
            self.notify(str(exc), title="Cannot undo the dream", severity="error", timeout=10)
            return

        def confirmed(yes: bool | None) -> None:
            if yes:
                self.running = "undo"
                self.undo_worker()

        preview = replace(plan, title=f"Undo “{entries[-1].title}” of {entries[-1].time[:16].replace('T', ' ')}")
        self.app.push_screen(PlanPreview(preview, confirm_label="Undo"), confirmed)

    def action_cancel(self) -> None:
        if self.running not in ("dry", "run", "force"):
            return
        self._cancel.set()
        for worker in self.workers:
            if worker.group == "dream-run":
                worker.cancel()
        self._log(styled("cancelling…", style="$warning"))

    def action_toggle_consolidator(self) -> None:
        if self.consolidator_name == "claude":
            self.consolidator = "offline"
        elif has_credentials():
            self.consolidator = "claude"
        else:
            self.notify("No API key (ANTHROPIC_API_KEY): the dream stays offline.", timeout=5)

    def action_refresh(self) -> None:
        self.check()

    def action_refresh_asked(self) -> None:
        """Check again (the refresh key), then say the verdict and whether it changed."""
        self._refresh_from = self._verdict()
        self._refresh_asked = True
        self.check()

    def _verdict(self) -> str | None:
        """The gates' verdict in one line (``None`` before the first check)."""
        if self.auto is not None:
            return str(self.auto.verdict)
        if self.status is None:
            return None
        return "a dream would run now" if self.status.would_run else f"blocked: {self.status.reasons[0] if self.status.reasons else self.status.blocking}"

    def action_gate_details(self) -> None:
        """Every gate of the agent's own dream with its numbers and sources, the sessions."""
        if self.auto is not None:
            self._show_diff("gates · in the agent's order", autodream_details(self.auto))

    def action_show_request(self) -> None:
        """The request memtui's claude consolidator sent (a plan is open), else the one the
        agent would send now."""
        if self.release is None:
            return
        if self.plan is not None and self.plan.request is not None:
            self._show_diff("request · as memtui's claude consolidator sent it", block(self.plan.request.render()))
            return
        self._show_diff("request", styled("building the request…", style=MUTED))
        self.fetch_request()

    def action_history(self) -> None:
        """Toggle the plan list into the history (memtui's and the agent's)."""
        if self.plan is not None or self.running is not None:
            return
        self.showing_history = not self.showing_history
        if self.showing_history:
            self._fill_history()
        else:
            self._clear_plan()

    def action_reset_lock(self) -> None:
        """Preview, then reset the lock a dream with no record left."""
        if self.running is not None or self.session is not None:
            return
        try:
            plan = plan_lock_reset(self.ctx)
        except EditError as exc:
            self.notify(str(exc), title="Cannot reset the lock", severity="warning", timeout=6)
            return

        def confirmed(yes: bool | None) -> None:
            if yes:
                self.running = "apply"
                self.reset_lock_worker()

        self.app.push_screen(PlanPreview(plan, confirm_label="Reset"), confirmed)

    def action_set_model(self) -> None:
        """Ask for the claude consolidator's model (empty: the default)."""
        if self.release is None:
            return

        def chosen(value: str | None) -> None:
            if value is None:
                return
            self.model_override = value.strip() or None

        default = self.release.main_model_default
        self.app.push_screen(TextPrompt("Model of the claude consolidator", self.model_override or "", hint=f"empty: settings `model`, else {default}"), chosen)

    def _fill_history(self) -> None:
        changes = self.query_one("#dream-changes", OptionList)
        changes.clear_options()
        now = system_now()
        changes.add_options([Option(history_prompt(item, now), id=f"history-{i}") for i, item in enumerate(self.history)])
        changes.border_title = f"history · {len(self.history)}"
        if self.history:
            changes.highlighted = 0
            self._show_history_item(0)
        else:
            self._show_diff("history", styled("No dream or extraction recorded yet: memtui's journal and the agent's transcripts have none.", style=MUTED))

    def _show_history_item(self, index: int | None) -> None:
        if index is None or index >= len(self.history):
            return
        item = self.history[index]
        diffs = item_diffs(self.ctx, item) if item.who == "agent" else []
        self._show_diff(f"{item.who} {item.kind}", history_detail(item, diffs))

    def _start(self, kind: RunKind) -> None:
        if self.running is not None or self.session is not None:
            return
        self.running = kind
        self._cancel = threading.Event()
        self.plan = self.plan_kind = None
        self._pending = []
        self._clear_plan()
        self.query_one("#dream-log", RichLog).clear()
        for phase in PHASES:
            self._row(phase).reset()
        self._log(styled(f"{RUN_LABELS[kind]} with the {self.consolidator_name} consolidator", style="bold"))
        self.showing_history = False
        options = {"model": self.model_override} if self.consolidator_name == "claude" and self.model_override else None
        self.dream(kind, self.consolidator, self._cancel, options)

    # ----- drawing -------------------------------------------------------------------------

    def _row(self, phase: str) -> PhaseRow:
        return self.query_one(f"#phase-{phase}", PhaseRow)

    def _log(self, line: Text) -> None:
        self.query_one("#dream-log", RichLog).write(line)

    def _stopped(self, reason: str) -> None:
        self._log(plain(reason, style="$warning"))

    def _memories_changed(self) -> None:
        """Files changed: the Memories pane re-scans; the gates are checked again."""
        for pane in self.app.query(MemoriesPane):
            pane.action_reload()
        self.action_refresh()

    def _show_gates(self) -> None:
        if self.status is None:
            return
        if self.auto is not None:
            self.query_one("#dream-gates-box").border_title = f"gates · {self.auto.release.cli} {self.auto.release.version}"
            text = autodream_text(self.auto, compact=self.compact)
            if not self.compact:
                text = assemble(text, "\n", last_dream_text(self.last_dream))
            self.query_one("#dream-gates", Static).update(text)
            return
        text = gate_text(self.status, os.getpid(), compact=self.compact)
        if not self.compact:
            text = assemble(text, "\n", last_dream_text(self.last_dream))
        self.query_one("#dream-gates", Static).update(text)

    def _badge(self) -> Text:
        if self.consolidator_name == "claude":
            badge = styled(" claude · online ", style="bold $chip-text on $special")
            if self.release is not None:
                model = self.model_override or main_model(self.ctx, self.release)[0]
                badge.append_text(styled(f" {model} ", style="bold $special"))
            return badge
        return styled(" offline ", style="bold $chip-text on $success")

    def _show_status(self) -> None:
        """The badge and one line: what the pane is doing and which keys act now. (After a
        refresh: the pane may have been removed meanwhile — a flavor switch rebuilds every pane.)"""
        self._status_due = False
        try:
            status = self.query_one("#dream-status", Static)
        except NoMatches:  # the pane is being removed (its children go first)
            return
        if self.running in ("dry", "run", "force"):
            what = f"{RUN_LABELS[self.running]}… esc cancels" + ("" if self.running == "dry" else " (the lock goes back)")
        elif self.running == "apply":
            what = "applying…"
        elif self.running == "undo":
            what = "undoing the last dream…"
        elif self.plan is not None:
            n, notes = len(self.plan.plan.changes), len(self.plan.findings)
            counts = f"{n} change{'s' if n != 1 else ''}, {notes} note{'s' if notes != 1 else ''}"
            if self.session is not None:
                what = f"{RUN_LABELS[self.plan_kind or 'run']}: {counts} — a apply · x discard (the lock goes back) · this memtui holds the lock"
            elif self.plan.empty:
                what = f"dry run: nothing to change ({counts}) — x clears"
            else:
                what = f"dry run: {counts} — a apply (takes the lock) · x discard · nothing is written before apply"
        else:
            what = "d dry run · R run through the gates · F force · u undo the last dream"
        status.update(assemble(self._badge(), " ", what))
        self.set_class(self.plan is not None, "-has-plan")
        self.refresh_bindings()

    def _clear_plan(self) -> None:
        self.query_one("#dream-changes", OptionList).clear_options()
        self._show_help()

    def _fill_plan(self) -> None:
        dp = self.plan
        changes = self.query_one("#dream-changes", OptionList)
        changes.clear_options()
        if dp is None:
            return
        options = [Option(change_prompt(c.relpath, c.kind, reason), id=f"change-{i}") for i, (c, reason) in enumerate(dp.items())]
        options += [Option(finding_prompt(f), id=f"finding-{i}") for i, f in enumerate(dp.findings)]
        changes.add_options(options)
        changes.border_title = f"plan · {len(dp.plan.changes)} change(s)"
        if options:
            changes.highlighted = 0
            self._show_selected(0)
        else:
            self._show_diff("nothing to change", styled("The memory is consolidated: no duplicates, dates or index problems the dream would fix.", style=MUTED))

    def _show_selected(self, index: int | None) -> None:
        dp = self.plan
        if dp is None:
            return  # options of a run in progress: the plan (and its diffs) is not there yet
        items = dp.items()
        if index is None or index >= len(items) + len(dp.findings):
            return
        if index < len(items):
            change, reason = items[index]
            body = Group(plain(reason, style="italic"), Text(""), Syntax(visible_block(change.diff()) or "(no textual change)", "diff", theme="ansi_dark", word_wrap=True))
            self._show_diff(f"{change.kind} {change.relpath}", body)
        else:
            f: Finding = dp.findings[index - len(items)]
            where = f"{f.path}:{f.line}" if f.path and f.line else f.path or "the memory dir"
            self._show_diff(f"note · {where}", assemble((f"{f.code}\n\n", "bold"), visible(f.message), ("\n\nA note changes nothing; it says what the dream left alone and why.", MUTED)))

    def _show_diff(self, title: str, body: Group | Text) -> None:
        self.query_one("#dream-diff", VerticalScroll).border_title = markup_safe(title)
        self.query_one("#dream-diff-text", Static).update(body)

    def _show_help(self) -> None:
        self.query_one("#dream-changes", OptionList).border_title = "plan"
        help_text = assemble(
            ("A dream consolidates the memory dir: ", "bold"),
            "duplicates merged into the older file, relative dates made absolute, the index brought under its cap with no dangling links.\n\n",
            ("d", "bold"), "  dry run: the plan and its diffs, nothing written, no lock\n",
            ("R", "bold"), "  run through the gates: takes the lock, then plans\n",
            ("F", "bold"), "  force: skips the gates (still takes the lock)\n",
            ("a", "bold"), "  apply the plan as one transaction · ", ("x", "bold"), " discard it\n",
            ("u", "bold"), "  undo the last applied dream, byte for byte\n",
            ("esc", "bold"), " cancel a running dream (the lock is rolled back)\n",
            ("c", "bold"), "  consolidator: offline, or claude with an API key",
        )
        if self.release is not None:
            help_text.append_text(assemble(
                "\n\n", (f"{self.release.cli} {self.release.version}'s own dream: ", "bold"), "the gates above are its, in its order.\n",
                ("g", "bold"), "  every gate's numbers and sources, the sessions, the traps\n",
                ("v", "bold"), "  the dream request (as it would send it now)\n",
                ("h", "bold"), "  history: memtui's and the agent's dreams and extractions\n",
                ("L", "bold"), "  reset a lock a dream with no record left · ", ("m", "bold"), " model",
            ))
        self._show_diff("diff", help_text)

