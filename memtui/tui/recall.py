"""The Recall pane: a playground for what the agent would recall for a prompt, and why.

Type a prompt: the offline selectors (semantic, lexical) answer as you type (debounced); the claude and hybrid
selectors cost a request, so they run on Enter (Esc cancels). Recent tools come from the
tools box or a session transcript (which also brings the memories that session already
surfaced, and its budget). The results: the picks with type and age badges and the reason
for each, the near misses, what the reference would have sent against what was used, the
exact manifest and request, and the exact injected text.

The corpus is scanned (and its lexical index built) in a worker each time the pane is shown
or reloaded, and reused for every keystroke. The inputs besides the query are built by the
core (``memtui.core.recall.inputs``), as ``memtui recall`` builds them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Group
from rich.text import Text
from textual import on, work
from textual.app import ComposeResult, SystemCommand
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.message import Message
from textual.timer import Timer
from textual.widgets import (
    Collapsible,
    Input,
    Select,
    Static,
    TextArea,
)
from textual.worker import get_current_worker

from memtui.core.base.wording import DOES_NOT_RECALL, RECALLS, counted
from memtui.core.base.terminal import visible, visible_block
from memtui.core.base.clock import system_now
from memtui.core.memory.age import age_days, age_label
from memtui.core.places.agentconfig import RecallState, recall_state
from memtui.core.places.claude_json import read_global_config
from memtui.core.places.locations import Locations
from memtui.core.recall import (
    SELECTOR_NAMES,
    RecallCorpus,
    RecallResult,
    SelectorChoice,
    SelectorName,
    choose_model,
    choose_selector,
    load_corpus,
    recall,
    selector_status,
)
from memtui.core.recall.corpus import corpus_changes
from memtui.core.recall.engine import NO_KEY
from memtui.core.recall.inputs import RecallInputs, SessionContext, recall_inputs, session_context, split_names
from memtui.core.memory.catalogdb import CatalogDB
from memtui.core.recall.manifest import SESSION_BUDGET
from memtui.core.verify.conflicts import Conflict, newer_conflicts_in
from memtui.core.sessions.transcripts import SessionFile, list_sessions
from memtui.tui.pane import Failure, Latest, Pane
from memtui.tui.widgets.agreement_view import agreement_text
from memtui.tui.widgets.history_input import HistoryInput
from memtui.tui.widgets.recall_view import (
    MUTED,
    SOFT,
    compare_view,
    details_view,
    manifest_text,
    manifest_title,
    near_misses_view,
    picks_view,
    request_text,
    request_title,
)
from memtui.tui.theme import assemble, styled, tone

if TYPE_CHECKING:
    import anthropic

    from memtui.core.audit.agreement import Agreement

# the badge's chip colour for each state of the selector (``selector_status``)
BADGE_TONE = {"online": "$success", "offline": "$warning", "no-key": "$error", "error": "$error"}

# memtui's choice: the pause after the last keystroke before lexical recall runs.
DEBOUNCE_S = 0.25
SELECTOR_OPTIONS: list[tuple[str, str]] = [(name, name) for name in SELECTOR_NAMES]
SELECTOR_HELP = {
    "auto": "claude with an API key, else lexical",
    "semantic": "meaning (embeddings) and words (BM25) over every memory, offline, as you type",
    "lexical": "BM25 over every memory, offline, as you type",
    "claude": "the reference's request over the 200 newest (Enter)",
    "hybrid": "prefilter of all memories to 200 by meaning and words, then Claude (Enter)",
}
INTRO = (
    "The agent recalls at most 5 memories for each prompt: it sends a manifest of its 200 newest"
    " memories to a small model and injects the ones picked. The semantic and lexical selectors"
    " (offline) answer as you type; claude and hybrid send one request when you press Enter."
)


def intro() -> Text:
    """What the results show before the first prompt."""
    return assemble(("Type a prompt of two words or more.\n\n", "bold"), (INTRO, SOFT))


@dataclass(frozen=True, slots=True)
class RecallRun:
    """Everything one recall needs (read on the UI thread, used in the worker); ``ticket``
    tells the latest run from superseded ones."""

    ticket: int
    query: str
    selector: SelectorName
    inputs: RecallInputs
    model: str
    send: bool


class RecallPane(Pane):
    """Type a prompt, see what the agent would recall and inject."""

    MAIN = "#recall-query"
    LEAVE_TO = "#recall-results"
    PALETTE_TITLES = {
        "recall.query": ("open", "Switch to the Recall pane and type a prompt"),
        "recall.selector": ("cycle selector", "auto → claude → semantic → lexical → hybrid"),
        "recall.transcript": ("from transcript", "Recent tools and surfaced memories from a session"),
        "recall.sent": ("manifest and request", "Show or hide the exact manifest and request"),
        "recall.injected": ("injected text", "Focus the exact injected text"),
        "recall.reload": ("reload", "Re-scan the memory dir and the sessions"),
        "recall.agreement": ("agreement with the agent", "How often memtui picks what the agent's own recall picked, prompt by prompt"),
        "recall.cancel": ("cancel request / leave or clear the text box", "Cancel a running Claude request; else out of the text box, the text kept; again: clear it"),
        "history.previous": ("previous query", "The previous query of this session, in the query box"),
        "history.next": ("next query", "The next query of this session, in the query box"),
    }
    FAILURE_TITLES = {
        "recall-load": "Cannot scan the memory dir",
        "recall-run": "Recall failed",
        "recall-transcript": "Cannot read the transcript",
        "recall-agreement": "Cannot score the agreement with the agent",
    }

    BINDINGS = [
        Binding("slash", "focus_query", "Query", show=False, id="recall.query", tooltip="Focus the query box"),
        Binding("ctrl+o", "cycle_selector", "Selector", id="recall.selector", tooltip="Cycle the selector: auto → claude → semantic → lexical → hybrid"),
        Binding("ctrl+t", "pick_transcript", "Transcript", id="recall.transcript", tooltip="Take recent tools and surfaced memories from a session"),
        Binding("ctrl+g", "toggle_sent", "Manifest+request", id="recall.sent", tooltip="Show or hide the exact manifest and request"),
        Binding("ctrl+n", "toggle_injected", "Injected text", id="recall.injected", tooltip="Focus (or, when narrow, show) the injected text; again to go back"),
        Binding("ctrl+r", "reload_asked", "Reload", id="recall.reload", tooltip="Re-scan the memory dir and the sessions, and say what changed"),
        Binding("ctrl+l", "toggle_agreement", "Agreement", show=False, id="recall.agreement", tooltip="How often memtui picks what the agent's own recall picked (its transcripts): the prompts, and hybrid with a key"),
        Binding("escape", "cancel", "Cancel", show=False, id="recall.cancel", tooltip="Cancel a running Claude request; else leave the text box for the results (the text stays); again to clear it"),
    ]

    # ----- messages (posted by workers; handled below on the UI thread) ----------------------

    @dataclass
    class CorpusLoaded(Message):
        """The memory dir was scanned and indexed; ``sessions``: its transcripts, newest first."""

        corpus: RecallCorpus
        sessions: list[SessionFile]
        exists: bool

    @dataclass
    class TranscriptRead(Message):
        """A session transcript was read."""

        context: SessionContext

    @dataclass
    class TranscriptFailed(Message):
        """A session transcript could not be read."""

        path: Path
        reason: str

    @dataclass
    class AgreementReady(Message):
        """The selectors were scored against the agent's own recalls."""

        agreement: Agreement
        online: bool

    @dataclass
    class RecallDone(Message):
        """One recall finished (``ticket`` tells stale results from the latest)."""

        ticket: int
        result: RecallResult
        send: bool

    def __init__(
        self,
        locations: Locations,
        *,
        client: anthropic.Anthropic | None = None,
        environ: Mapping[str, str] | None = None,
        id: str | None = None,
    ) -> None:
        super().__init__(id=id)
        self.locations = locations
        self._reload_asked = False  # the reload key was pressed: say what the next scan changed
        self._reload_from: tuple[RecallCorpus, int] | None = None
        # ``client``/``environ``: for the claude selectors (tests inject a mock-transport client).
        self.client = client
        self.environ = environ
        self.corpus: RecallCorpus | None = None
        self.sessions: list[SessionFile] = []
        self.transcript: SessionContext | None = None
        self.result: RecallResult | None = None
        self.newer: dict[str, list[Conflict]] = {}  # memories a newer one contradicts (the picks' mark)
        self._descriptions: dict[str, str | None] = {}
        self._runs = Latest()  # recall runs: only the latest one's result shows
        self._debounce: Timer | None = None
        self._keystrokes = Latest()  # debounced runs: only the latest keystroke's fires
        self._recall_in_flight = False  # a claude/hybrid request is out (not `_running`: MessagePump owns that)
        self._show_injected = False
        self.agreement: Agreement | None = None
        self._agreement_details = False
        self._agreement_online = False

    def compose(self) -> ComposeResult:
        with Horizontal(id="recall-query-bar", classes="recall-bar"):
            yield HistoryInput(placeholder="Type a prompt — recall runs as you type  (↑ history · Enter sends)", select_on_focus=False, id="recall-query")
            yield Select(SELECTOR_OPTIONS, value="auto", allow_blank=False, id="recall-selector", compact=True)
        with Horizontal(id="recall-context-bar", classes="recall-bar"):
            yield Input(placeholder="Recently used tools, comma-separated: Bash, Edit", id="recall-tools")
            yield Select([], prompt="from transcript…", id="recall-transcript", compact=True)
        yield Static(id="recall-status")
        with Horizontal(id="recall-body"):
            with VerticalScroll(id="recall-results"):
                yield Static(id="recall-agreement")
                yield Static(id="recall-notice")
                yield Static(id="recall-picks")
                yield Static(id="recall-near")
                yield Static(id="recall-compare")
                with Collapsible(title="Manifest", id="recall-manifest"):
                    yield Static(id="recall-manifest-text", markup=False)
                with Collapsible(title="Request", id="recall-request"):
                    yield Static(id="recall-request-text", markup=False)
            yield TextArea(
                "", read_only=True, soft_wrap=True, show_cursor=False, id="recall-injected",
                placeholder="The exact text the agent would inject appears here.",
            )

    def on_mount(self) -> None:
        self.query_one("#recall-injected").border_title = "injected text"
        self._show_intro()
        self._update_badge()
        if self.is_visible_tab:  # a pane shown at once (or not in tabs) loads now
            self.action_reload()

    def activated(self) -> None:
        """Shown again: re-scan (memories may have changed in another pane); on a narrow
        terminal the results come back in front of the injected text."""
        self.action_reload()
        if self.query_one("#recall-query", Input).value:
            # a query is there: its results take the focus, so the pane's keys act at once
            # (a digit would otherwise be typed into the query); / goes back to the box
            self.query_one(self.LEAVE_TO).focus()
        else:
            self.action_focus_query()

    def watch_narrow(self) -> None:
        self._title_results()

    # ----- properties read by the app and the tests ------------------------------------------

    def use_client(self, client: anthropic.Anthropic | None, environ: Mapping[str, str] | None = None) -> None:
        """Use ``client`` (and ``environ`` for the credential check) for claude/hybrid; tests
        pass a client built on an ``httpx2.MockTransport``."""
        self.client = client
        self.environ = environ
        self._update_badge()

    @property
    def selector(self) -> str:
        """The selector chosen in the Select (``auto``, ``claude``, ``semantic``, ``lexical``, ``hybrid``)."""
        value = self.query_one("#recall-selector", Select).value
        return value if isinstance(value, str) else "auto"

    @property
    def model(self) -> str:
        """The model for claude/hybrid: settings ``model`` or the default."""
        settings_model, _ = self.locations.settings.get("model")
        return choose_model(None, settings_model, self.locations.flavor.behaviour.recall_request, self.environ)

    @property
    def gate(self) -> RecallState | None:
        """Whether this user's agent recalls at all (``None``: the release always does)."""
        gate = self.locations.flavor.behaviour.recall_gate
        if gate.always:
            return None
        config = self.locations.agent_config if self.locations.agent_config is not None else read_global_config(self.environ)
        return recall_state(gate, config, self.environ)

    def selector_choice(self, selector: str | None = None) -> SelectorChoice:
        """``selector`` (default: the one chosen) resolved: which selector runs, and why offline."""
        return choose_selector(
            self._selector_name(selector), model=self.model, client=self.client, environ=self.environ,
            shape=self.locations.flavor.behaviour.recall_request,
        )

    def costs_a_request(self, selector: str | None = None) -> bool:
        """Whether running ``selector`` now would send a request (claude/hybrid with a
        credential or an injected client); such runs wait for Enter."""
        return self.selector_choice(selector).sends_request

    def _selector_name(self, selector: str | None) -> SelectorName:
        name = selector or self.selector
        return next((n for n in SELECTOR_NAMES if n == name), "auto")

    # ----- loading ---------------------------------------------------------------------------

    def action_reload_asked(self) -> None:
        """Re-scan (the reload key), then say what changed since the corpus shown now."""
        self._reload_from = (self.corpus, len(self.sessions)) if self.corpus is not None else None
        self._reload_asked = True
        self.action_reload()

    def action_reload(self) -> None:
        """Re-scan the memory dir and list the sessions, in a worker."""
        if self.corpus is None:
            self._status(styled("scanning the memory dir…", style=MUTED))
        self.load()

    @dataclass
    class ConflictsFound(Message):
        """Memories a newer memory contradicts: relpath → those conflicts."""

        newer: dict[str, list[Conflict]]

    @work(thread=True, exclusive=True, exit_on_error=False, group="recall-conflicts")
    def check_conflicts(self) -> None:
        """The conflicts between memories (full text: a scan through the scan cache), for the
        picks' mark; the picks show without it until it is done."""
        memory_dir = self.locations.memory_dir
        if not memory_dir.is_dir():
            return
        fmt = self.locations.flavor.behaviour.memory_format
        cache = CatalogDB.for_memory_dir(self.locations.state_dir, memory_dir, fmt=fmt)
        self.post_if_current(self.ConflictsFound(newer_conflicts_in(memory_dir, fmt, cache)))

    @on(ConflictsFound)
    def _on_conflicts(self, message: ConflictsFound) -> None:
        self.newer = message.newer
        if self.result is None:
            return
        shown = self.result.would_pick if self.result.skipped else self.result.picks
        if any(p.relpath in self.newer for p in shown):
            self.query_one("#recall-picks", Static).update(picks_view(self.result, self.newer))

    @work(thread=True, exclusive=True, exit_on_error=False, group="recall-load")
    def load(self) -> None:
        """Scan and index off the UI thread (20,000 memories take seconds); only posts."""
        memory_dir = self.locations.memory_dir
        corpus = load_corpus(memory_dir, self.locations.flavor.behaviour.memory_format, state_dir=self.locations.state_dir)
        corpus.lexical_index()  # built here, once, so keystrokes only query it
        from memtui.core.recall.embedding import ModelUnavailableError  # the Recall pane's own: not at app start

        try:
            corpus.dense_index()  # the embeddings too (from the cache but for changed memories)
        except ModelUnavailableError:
            pass  # the semantic selector says so and picks lexically
        sessions = list_sessions(self.locations.sessions_dir)
        self.post_if_current(self.CorpusLoaded(corpus, sessions, memory_dir.is_dir()))

    def worker_failed(self, failure: Failure) -> None:
        """A failed run leaves the asking state; a failed scan says so where the memory count
        shows."""
        if failure.group == "recall-run":
            self._recall_in_flight = False
        elif failure.group == "recall-agreement" and self.agreement is not None:
            self._show_agreement()  # the figures of the last scoring, no longer "scoring…"
        self._update_badge()

    @on(CorpusLoaded)
    def _on_loaded(self, message: CorpusLoaded) -> None:
        if self._reload_asked:
            self._reload_asked = False
            after, sessions = message.corpus, len(message.sessions)
            if self._reload_from is None:
                changes = "first scan"
            else:
                before, sessions_before = self._reload_from
                changes = corpus_changes(before, after).describe()
                if sessions != sessions_before:
                    changes = f"{changes}; sessions {sessions_before} → {sessions}"
            self.report_reload(f"{counted(len(after.docs), 'memory', 'memories')}, {counted(sessions, 'session')}", changes)
        self.corpus = message.corpus
        self._descriptions = {d.relpath: d.header.description for d in message.corpus.docs}
        self._set_sessions(message.sessions)
        if not message.exists:
            self._notice(assemble(("No memory dir yet. ", "bold $warning"), (f"{self.locations.memory_dir} does not exist.", SOFT)))
        self._update_badge()
        self._schedule(delay=0)
        self.check_conflicts()
        if self.agreement is None and not any(w.group == "recall-agreement" for w in self.workers):
            self.score_agreement(message.corpus, online=False)  # once per run of the app: it reads the transcripts

    @work(thread=True, exclusive=True, exit_on_error=False, group="recall-agreement")
    def score_agreement(self, corpus: RecallCorpus, online: bool) -> None:
        """Score the selectors against the agent's own recalls in the transcripts, off the UI
        thread: the offline selector always, hybrid when ``online`` (a request per prompt)."""
        from memtui.core.audit.agreement import evaluate

        worker = get_current_worker()
        environ = self.environ if online else {}
        agreement = evaluate(self.locations, system_now(), corpus=corpus, client=self.client if online else None,
                             environ=environ, cancelled=lambda: worker.is_cancelled)
        self.post_if_current(self.AgreementReady(agreement, online))

    @on(AgreementReady)
    def _on_agreement(self, message: AgreementReady) -> None:
        self.agreement = message.agreement
        self._agreement_online = message.online
        self._show_agreement()

    def _show_agreement(self, running: bool = False) -> None:
        box = self.query_one("#recall-agreement", Static)
        off_note = self.locations.flavor.behaviour.recall_gate.off_by_default_note()
        box.update(agreement_text(self.agreement, details=self._agreement_details, running=running, off_note=off_note))

    def action_toggle_agreement(self) -> None:
        """Show (or hide) the prompts behind the agreement figures; with a key, score hybrid too."""
        self._agreement_details = not self._agreement_details
        running = False
        if self._agreement_details and not self._agreement_online and self.corpus is not None and self.agreement is not None \
                and self.agreement.prompts and self.costs_a_request("hybrid"):
            self.score_agreement(self.corpus, online=True)
            running = True
        self._show_agreement(running)

    def _set_sessions(self, sessions: list[SessionFile]) -> None:
        if [s.path for s in sessions] == [s.path for s in self.sessions]:
            return
        self.sessions = sessions
        now = system_now()
        select = self.query_one("#recall-transcript", Select)
        current = select.value
        options = [(f"{age_label(age_days(s.mtime, now))} · {s.session_id[:8]}", str(s.path)) for s in sessions]
        with select.prevent(Select.Changed):
            select.set_options(options)
            if isinstance(current, str) and any(v == current for _, v in options):
                select.value = current
        select.disabled = not options
        if not options:
            select.prompt = "no transcripts"

    # ----- inputs ----------------------------------------------------------------------------

    @on(Input.Changed, "#recall-query")
    @on(Input.Changed, "#recall-tools")
    def _on_typed(self) -> None:
        self._schedule()

    @on(Input.Submitted, "#recall-query")
    def _on_submit(self, event: Input.Submitted) -> None:
        self.query_one(HistoryInput).remember(event.value)
        self._schedule(delay=0, send=True)

    @on(Input.Submitted, "#recall-tools")
    def _on_tools_submit(self) -> None:
        self._schedule(delay=0, send=True)

    @on(Select.Changed, "#recall-selector")
    def _on_selector(self) -> None:
        self._update_badge()
        self._schedule(delay=0)

    @on(Select.Changed, "#recall-transcript")
    def _on_transcript(self, event: Select.Changed) -> None:
        if isinstance(event.value, str):
            self.read_session(Path(event.value))
            return
        self.transcript = None
        self.query_one("#recall-tools", Input).value = ""
        self._update_badge()
        self._schedule(delay=0)

    @work(thread=True, exclusive=True, exit_on_error=False, group="recall-transcript")
    def read_session(self, path: Path) -> None:
        """Read one transcript: recent tools, surfaced memories and their size."""
        try:
            context = session_context(path)
        except OSError as exc:
            self.post_message(self.TranscriptFailed(path, exc.strerror or str(exc)))
            return
        self.post_if_current(self.TranscriptRead(context))

    @on(TranscriptRead)
    def _on_transcript_read(self, message: TranscriptRead) -> None:
        self.transcript = message.context
        # Setting the box schedules a run through Input.Changed; run now if it did not change.
        tools = self.query_one("#recall-tools", Input)
        value = ", ".join(message.context.tools)
        self._update_badge()
        if tools.value != value:
            tools.value = value
        else:
            self._schedule(delay=0)

    @on(TranscriptFailed)
    def _on_transcript_failed(self, message: TranscriptFailed) -> None:
        self.transcript = None
        self.notify(f"{message.path.name}: {message.reason}", title="Cannot read the transcript", severity="warning")
        self._update_badge()

    # ----- running recall --------------------------------------------------------------------

    def _schedule(self, *, delay: float = DEBOUNCE_S, send: bool = False) -> None:
        """Run recall for the current inputs after ``delay`` (restarted by each keystroke).
        ``send``: allowed to send a request (Enter)."""
        if self._debounce is not None:
            self._debounce.stop()
            self._debounce = None
        # A stopped timer may already have queued its callback: only the latest keystroke runs.
        keystroke = self._keystrokes.take()
        if delay <= 0:
            self._run(send)
        else:

            def fire() -> None:
                if self._keystrokes.is_current(keystroke):
                    self._run(send)

            self._debounce = self.set_timer(delay, fire)

    def _run(self, send: bool) -> None:
        self._debounce = None
        query = self.query_one("#recall-query", Input).value
        if not query.strip():
            self._cancel_running()
            self._show_intro()
            return
        if self.corpus is None:
            return  # runs when the corpus arrives
        if self.costs_a_request() and not send:
            self._cancel_running()
            self._notice(assemble(
                ("Enter ", "bold"), (f"asks {self.model} (one request). ", SOFT),
                (f"Results below are for: {self.result.query}" if self.result else "", MUTED),
            ))
            return
        inputs = recall_inputs(
            self.corpus,
            tools=split_names(self.query_one("#recall-tools", Input).value),  # the session's tools fill the box
            session=self.transcript,
        )
        run = RecallRun(self._runs.take(), query, self._selector_name(None), inputs, self.model, send)
        if self.costs_a_request():
            self._recall_in_flight = True
            self._notice(assemble(("Asking ", SOFT), (run.model, "bold"), ("…  Esc cancels", SOFT)))
            self._update_badge()
        self.run_recall(run, self.corpus)

    @work(thread=True, exclusive=True, exit_on_error=False, group="recall-run")
    def run_recall(self, run: RecallRun, corpus: RecallCorpus) -> None:
        """One recall over the cached corpus; never touches widgets."""
        result = recall(
            run.query,
            corpus,
            now=system_now(),
            selector=run.selector,
            recent_tools=run.inputs.recent_tools,
            surfaced=run.inputs.surfaced,
            surfaced_units=run.inputs.surfaced_units,
            model=run.model,
            client=self.client,
            environ=self.environ,
            behaviour=self.locations.flavor.behaviour,
            gate=self.gate,
            preview=True,  # the pane always shows what recall would pick, labelled when it is off
        )
        self.post_if_current(self.RecallDone(run.ticket, result, run.send))

    @on(RecallDone)
    def _on_recall(self, message: RecallDone) -> None:
        if not self._runs.is_current(message.ticket):
            return  # a newer run is on its way
        self._recall_in_flight = False
        self.result = message.result
        self.show_result(message.result)

    def _cancel_running(self) -> None:
        for worker in self.workers:
            if worker.group == "recall-run" and worker.is_running:
                worker.cancel()
        if self._recall_in_flight:
            self._recall_in_flight = False
            self._runs.supersede()  # whatever comes back now is stale
            self._update_badge()

    def action_cancel(self) -> None:
        """Cancel a running Claude request (its answer, if it still comes, is ignored); else
        leave a text box for the results, its text kept (so digits switch panes again); again:
        clear that box; from elsewhere: back to the query box."""
        if self._recall_in_flight:
            self._cancel_running()
            self._notice(styled("Cancelled: the request's answer will be ignored.", style="$warning"))
            return
        leaving = isinstance(self.app.focused, Input)
        if leaving and self._show_injected:
            self._toggle_narrow_view(False)
        if not self.escape_text_box():
            self.action_focus_query()

    # ----- showing ---------------------------------------------------------------------------

    def _status(self, text: Text) -> None:
        self.query_one("#recall-status", Static).update(text)

    def _notice(self, text: Text | Group | None) -> None:
        notice = self.query_one("#recall-notice", Static)
        notice.update(text or "")
        notice.display = text is not None

    def _update_badge(self) -> None:
        """The selector's badge (the core's ``selector_status``: the same words the result
        uses), the memory count and the transcript."""
        status_of = selector_status(self.selector_choice(), self.model, self.result, asking=self._recall_in_flight)
        facts: list[str] = [] if status_of.state != "online" or status_of.reason is None else [status_of.reason]
        if self.corpus is not None:
            facts.append(counted(len(self.corpus.docs), 'memory', 'memories'))
        if self.transcript is not None:
            t = self.transcript
            facts.append(
                f"session {t.session_id[:8]}: {len(t.tools)} tool{'s' if len(t.tools) != 1 else ''},"
                f" {len(t.surfaced)} surfaced ({t.units:,} of {SESSION_BUDGET:,} characters)"
            )
        trouble = status_of.state in ("error", "no-key")
        if status_of.state != "online" and status_of.reason is not None:
            facts.append(status_of.reason)
        status = Text()
        status.append(f" {status_of.chip} ", tone(f"bold $chip-text on {BADGE_TONE[status_of.state]}"))
        status.append(f" {status_of.title}", tone("bold"))
        for fact in facts:
            status.append("  ·  ", tone(MUTED))
            status.append(visible(fact), tone("$error" if trouble and fact == status_of.reason else SOFT))
        self._status(status)

    def _show_intro(self) -> None:
        self.result = None
        self._notice(intro())
        for widget_id in ("#recall-picks", "#recall-near", "#recall-compare"):
            self.query_one(widget_id, Static).update("")
        for widget_id in ("#recall-manifest", "#recall-request"):
            self.query_one(widget_id).display = False
        self._title_results()
        self._set_injected("")
        self._update_badge()

    def show_result(self, result: RecallResult) -> None:
        """Render ``result`` in every section."""
        self._title_results()
        self._update_badge()
        notice: list[Text] = []
        if result.gate is not None:
            if result.gate.on:
                notice.append(assemble((f"{result.release} {RECALLS}", "bold $success"), (f": {result.gate.reason}; MEMORY.md is not in its context.", SOFT)))
            else:
                notice.append(assemble((f"{result.release} {DOES_NOT_RECALL}", "bold $warning"), (f": {result.gate.reason}.", SOFT)))
                notice.append(styled("It loads MEMORY.md instead. Below: what recall would pick if it were on.", style=SOFT))
            if result.gate.details:
                notice.append(details_view(result.gate.details))
        if result.skipped:
            notice.append(assemble(("Skipped — ", "bold $warning"), (visible(result.skipped), "$warning")))
            notice.append(styled("The agent would not recall anything for this prompt; below, what recall would pick (not sent).", style=SOFT))
        if result.error:
            notice.append(assemble((f"{result.selector} failed — ", "bold $error"), (visible(result.error), "$error")))
            notice.append(styled("No memories recalled; the near misses below are lexical.", style=SOFT))
        for note in result.notes:
            notice.append(assemble(("note: ", "bold $warning"), (visible(note), SOFT)))
        if result.dropped_surfaced:
            dropped = len(result.dropped_surfaced)
            notice.append(styled(f"{counted(dropped, 'memory', 'memories')} already surfaced in this session {'is' if dropped == 1 else 'are'} left out.", style=MUTED))
        self._notice(Group(*notice) if notice else None)
        picks = self.query_one("#recall-picks", Static)
        near = self.query_one("#recall-near", Static)
        compare = self.query_one("#recall-compare", Static)
        manifest = self.query_one("#recall-manifest", Collapsible)
        request = self.query_one("#recall-request", Collapsible)
        picks.update(picks_view(result, self.newer))
        if result.skipped:
            for widget in (near, compare):
                widget.update("")
            manifest.display = request.display = False
        else:
            near.update(near_misses_view(result, self._descriptions.get))
            compare.update(compare_view(result))
            manifest.display = request.display = True
            manifest.title = manifest_title(result)
            self.query_one("#recall-manifest-text", Static).update(manifest_text(result))
            request.title = request_title(result)
            self.query_one("#recall-request-text", Static).update(request_text(result))
        self._set_injected(result.injected_text, len(result.injected))
        if result.would_only and result.injected_text:
            area = self.query_one("#recall-injected", TextArea)
            area.border_title = f"{area.border_title} · if recall were on"

    def _title_results(self) -> None:
        title = "results" if self.result is None else f"results · {self.result.selector}"
        if self.narrow:
            title += " · ^n injected text"
        self.query_one("#recall-results").border_title = title

    def _set_injected(self, text: str, count: int = 0) -> None:
        area = self.query_one("#recall-injected", TextArea)
        area.load_text(visible_block(text, keep_crlf=True))
        size = len(text.encode("utf-8"))
        area.border_title = f"injected text · {count} memor{'y' if count == 1 else 'ies'} · {size:,} bytes" if text else "injected text · none"

    # ----- actions ---------------------------------------------------------------------------

    def extra_commands(self) -> Iterable[SystemCommand]:
        """A selector by name (``ctrl+o`` cycles through them)."""
        for name in SELECTOR_NAMES:
            yield SystemCommand(f"Recall: selector {name}", SELECTOR_HELP[name], self.there(partial(self.set_selector, name)))

    def set_selector(self, name: str) -> None:
        """Choose the selector ``name`` (one of ``SELECTOR_NAMES``)."""
        self.query_one("#recall-selector", Select).value = self._selector_name(name)

    def action_focus_query(self) -> None:
        """Focus the query box."""
        if self._show_injected:
            self._toggle_narrow_view(False)
        self.query_one("#recall-query", Input).focus()

    def action_cycle_selector(self) -> None:
        """auto → claude → semantic → lexical → hybrid → auto (the core's order)."""
        select = self.query_one("#recall-selector", Select)
        names = list(SELECTOR_NAMES)
        select.value = names[(names.index(self._selector_name(None)) + 1) % len(names)]

    def action_pick_transcript(self) -> None:
        """Open the transcript list."""
        select = self.query_one("#recall-transcript", Select)
        if select.disabled:
            self.notify(f"No session transcripts in {self.locations.sessions_dir}.", severity="warning")
            return
        select.focus()
        select.action_show_overlay()

    def action_toggle_sent(self) -> None:
        """Expand or collapse the manifest and the request together."""
        manifest = self.query_one("#recall-manifest", Collapsible)
        request = self.query_one("#recall-request", Collapsible)
        expand = manifest.collapsed
        request.collapsed = not expand
        manifest.collapsed = not expand  # last: each expanding Collapsible scrolls itself into view
        if expand:
            results = self.query_one("#recall-results", VerticalScroll)
            self.call_after_refresh(lambda: self.call_after_refresh(results.scroll_to_widget, manifest, top=True, animate=False))

    def action_toggle_injected(self) -> None:
        """Focus the injected text (narrow: show it instead of the results); again to go back."""
        area = self.query_one("#recall-injected", TextArea)
        if area.has_focus:
            self.action_focus_query()
            return
        if self.narrow:
            self._toggle_narrow_view(True)
        area.focus()

    def _toggle_narrow_view(self, injected: bool) -> None:
        self._show_injected = injected
        self.set_class(injected, "-show-injected")

