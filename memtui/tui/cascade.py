"""The Cascade pane: what the agent loads, in order and why.

A tree of layers → files → imports in load order, then the nested files of the project's
sub-folders (muted: each loads only when the agent reads a file under its folder); the detail
of the highlighted node (the content as the agent receives it, why it loaded or not, its
findings); every finding in a list that jumps to its file and line; a reads box that
simulates the agent reading target paths, one step at a time; the exact rendered context with
its totals; approve/decline for the project's external imports. The core does all of it, in
workers; the pane only shows it.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.message import Message
from textual.widgets import (
    ContentSwitcher,
    Input,
    Static,
    Tree,
)
from textual.widgets.option_list import Option

from memtui.tui.widgets.option_list import OptionList
from textual.widgets.tree import TreeNode
from textual.worker import get_current_worker

from memtui.core.base.wording import counted
from memtui.core.base.diagnostics import Diagnostic
from memtui.core.base.source_lines import SourceLines, source_lines
from memtui.core.base.terminal import visible
from memtui.tui.safe import block, markup_safe, plain
from memtui.core.cascade import (
    AffectedImport,
    ApprovalsError,
    Cascade,
    NestedListing,
    ReadStep,
    agent_name,
    compute_cascade,
    decision_effect,
    new_session,
    project_key,
    record_decision,
    simulate_read,
)
from memtui.core.base.clock import system_now
from memtui.core.cascade.approvals import Decision, agent_approval_note
from memtui.core.places.locations import Locations
from memtui.tui.pane import Failure, Latest, Pane, WorkFailed
from memtui.tui.theme import SEVERITIES, SEVERITY_ICON, SEVERITY_STYLE, assemble, styled
from memtui.tui.widgets.cascade_view import (
    MUTED,
    FileContext,
    FileNode,
    LayerNode,
    NestedNode,
    NodeData,
    StepNode,
    display_path,
    file_detail,
    parts_text,
    file_label,
    home_path,
    layer_detail,
    layer_label,
    layer_runs,
    legend,
    nested_detail,
    nested_label,
    nested_section_label,
    node_key,
    step_detail,
    step_label,
    tree_name,
)
from memtui.tui.widgets.import_dialog import ImportDecisionDialog
from memtui.tui.widgets.session_view import SessionPicker, session_text

if TYPE_CHECKING:
    from memtui.core.audit.cost import StartupCost
    from memtui.core.audit.loaded import SessionLoad
    from memtui.core.sessions.projects import TranscriptFile

__all__ = ["CascadePane", "FileNode", "ImportDecisionDialog", "LayerNode", "StepNode"]

# ----- the pane -----------------------------------------------------------------------------


class CascadePane(Pane):
    """What the agent loads for ``locations.project_root``, and why."""

    MAIN = "#cascade-tree"
    PALETTE_TITLES = {
        "cascade.read": ("simulate a read", "Type a path the agent reads and see what it adds"),
        "cascade.reset": ("reset reads", "Forget the simulated reads"),
        "cascade.rendered": ("rendered context", "Toggle the exact text the model receives, with totals"),
        "cascade.approve": ("approve external imports", "Let this project's imports outside the cwd load"),
        "cascade.decline": ("decline external imports", "Keep this project's imports outside the cwd out"),
        "cascade.findings": ("findings", "Go to the list of findings"),
        "cascade.tree": ("tree", "Go to the tree of layers and files"),
        "cascade.back": ("back / clear the read", "Back to the tree (a path typed stays); again: clear it"),
        "cascade.session": ("last session, loaded vs predicted", "What the agent's last session actually loaded, beside this prediction"),
        "cascade.pick-session": ("compare a session", "Choose a session of this project: what it loaded beside this prediction"),
    }
    FAILURE_TITLES = {
        "cascade-compute": "Cannot compute the cascade",
        "cascade-source": "Cannot show the line",
        "cascade-cost": "Cannot count the cost of memory",
        "cascade-session": "Cannot compare the session",
        "cascade-sessions": "Cannot list the sessions",
    }

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("slash", "focus_reads", "Read", id="cascade.read", tooltip="Type a path (relative to the project) the agent reads"),
        Binding("v", "toggle_rendered", "Rendered", id="cascade.rendered", tooltip="Show the exact text the model receives, with totals"),
        Binding("a", "approve", "Approve", id="cascade.approve", tooltip="Approve the project's external imports (after a confirmation)"),
        Binding("x", "decline", "Decline", id="cascade.decline", tooltip="Decline the project's external imports (after a confirmation)"),
        Binding("c", "reset_reads", "Reset", id="cascade.reset", tooltip="Forget the simulated reads: back to the startup context"),
        Binding("f", "focus_findings", "Findings", show=False, id="cascade.findings", tooltip="Go to the list of findings (enter jumps to the file)"),
        Binding("t", "focus_tree", "Tree", show=False, id="cascade.tree", tooltip="Go to the tree of layers and files"),
        Binding("r", "reload_asked", "Reload", show=False, id="cascade.reload", tooltip="Recompute the cascade from disk and say what changed"),
        Binding("s", "toggle_session", "Session", id="cascade.session", tooltip="What the agent's last session actually loaded, beside this prediction"),
        Binding("S", "pick_session", "Pick session", show=False, id="cascade.pick-session", tooltip="Compare another session of this project"),
        Binding("escape", "back", "Back", show=False, id="cascade.back", tooltip="Back to the tree (a path typed stays); again to clear the path"),
    ]

    @dataclass
    class Computed(Message):
        """A computation finished: the cascade and the steps of the simulated reads
        (``ticket``: the request's, see ``Latest``)."""

        ticket: int
        cascade: Cascade
        steps: list[ReadStep]

    @dataclass
    class SourceRead(Message):
        """The lines around a finding's line, read from its file."""

        key: tuple[object, ...] | None
        source: SourceLines

    @dataclass
    class SessionCompared(Message):
        """A session's loads were compared with the prediction (``ticket``: the comparison's)."""

        ticket: int
        result: SessionLoad

    @dataclass
    class SessionsListed(Message):
        """The project's session transcripts, newest first."""

        transcripts: list[TranscriptFile]

    @dataclass
    class CostComputed(Message):
        """The tokens of memory at a session's start, and what the transcripts recorded."""

        cost: StartupCost

    def __init__(self, locations: Locations, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.locations = locations
        self.cwd = locations.project_root
        self.cascade: Cascade | None = None
        self.steps: list[ReadStep] = []
        self.targets: list[str] = []
        self._requests = Latest()
        self._comparisons = Latest()  # session comparisons: only the latest one's result shows
        self._focus: tuple[tuple[object, ...] | None, int] | None = None  # (node key, line) of a jump
        self._source: SourceLines | None = None  # the lines around the jumped-to line, once read
        self._findings: list[tuple[Diagnostic, int | None]] = []
        self._select_next: tuple[object, ...] | None = None  # a node to put the cursor on after the rebuild
        self._reload_asked = False  # the reload key was pressed: say what the next computation changed
        self._reload_from: Cascade | None = None
        self.cost: StartupCost | None = None
        self.session: SessionLoad | None = None
        self.environ: Mapping[str, str] | None = None  # for the token counter's credential check (tests)
        self._make_widgets()

    def _make_widgets(self) -> None:
        """The pane's widgets, made with the pane and placed by ``compose``. Every handler holds
        them by reference rather than querying: a worker's result, a resize or a timer may come
        when they are not in the DOM (the app closing, or closing while ``Lazy`` mounted the pane,
        which then never gets its children), and a query would find nothing there."""
        self._summary = Static(id="cascade-summary")
        self._cost = Static(id="cascade-cost")
        self._reads = Input(placeholder="Simulate a read: a path relative to the project, then enter  ( / )", id="cascade-reads")
        self._tree: Tree[NodeData] = Tree("cascade", id="cascade-tree")
        self._tree.show_root = False
        self._tree.guide_depth = 3
        self._tree.auto_expand = False
        self._findings_list = OptionList(id="cascade-findings")
        self._right = ContentSwitcher(initial="cascade-detail", id="cascade-right")
        self._detail_box = VerticalScroll(id="cascade-detail")
        self._detail_text = Static(id="cascade-detail-text")
        self._rendered_box = VerticalScroll(id="cascade-rendered")
        self._rendered_text = Static(id="cascade-rendered-text")
        self._session_box = VerticalScroll(id="cascade-session")
        self._session_text = Static(id="cascade-session-text")
        self._legend = Static(legend(), id="cascade-legend")

    def compose(self) -> ComposeResult:
        yield self._summary
        yield self._cost
        yield self._reads
        with Horizontal(id="cascade-body"):
            with Vertical(id="cascade-left"):
                yield self._tree
                yield self._findings_list
            with self._right:
                with self._detail_box:
                    yield self._detail_text
                with self._rendered_box:
                    yield self._rendered_text
                with self._session_box:
                    yield self._session_text
        yield self._legend

    @property
    def _in_dom(self) -> bool:
        """The pane's widgets are in the app's DOM (not before ``compose`` mounted them, nor
        once the app tears them down)."""
        return self._tree.is_attached

    def on_mount(self) -> None:
        self._tree.border_title = "load order"
        self._findings_list.border_title = "findings"
        self._detail_box.border_title = "detail"
        self._summary.update(styled("computing the cascade…", style=MUTED))
        # the app closed while the pane was being mounted: its widgets never were, nothing to compute
        if not self._in_dom:
            return
        # computed when first shown (activated): a hidden pane must not compete with the pane
        # the user is looking at while the app starts
        if not self.is_visible_tab:
            return
        self._request(recompute=True)

    def activated(self) -> None:
        """Shown again: recompute (cheap) — memories, the index or rules may have changed in
        another pane."""
        self._request(recompute=True)

    def watch_narrow(self, narrow: bool) -> None:
        self._legend.update(legend(compact=narrow))
        self._rebuild()

    # ----- computing -------------------------------------------------------------------------

    def _request(self, *, recompute: bool = False, decision: Decision | None = None) -> None:
        """Start a computation: the whole cascade (``recompute``, after a ``decision`` when
        given) or only the reads over the current one."""
        base = None if recompute or self.cascade is None else self.cascade
        self.compute(self._requests.take(), base, list(self.targets), decision)

    @work(thread=True, exclusive=True, exit_on_error=False, group="cascade-compute")
    def compute(self, ticket: int, cascade: Cascade | None, targets: list[str], decision: Decision | None) -> None:
        """Off the UI thread: record ``decision``, compute the cascade unless given, then
        simulate ``targets`` in order from a fresh session. Only posts messages; raises
        ``WorkFailed`` when the decision cannot be recorded or the cwd is not a directory."""
        worker = get_current_worker()
        if decision is not None:
            try:
                record_decision(self.locations.state_dir, project_key(self.cwd), decision)
            except ApprovalsError as exc:
                raise WorkFailed("Decision not recorded", str(exc)) from exc
        if cascade is None:
            try:
                cascade = compute_cascade(self.locations, self.cwd, nested=True)
            except NotADirectoryError as exc:
                raise WorkFailed("Cannot compute the cascade", str(exc)) from exc
        session = new_session(cascade)
        for target in targets:
            if worker.is_cancelled:
                return
            simulate_read(cascade, session, target)
        self.post_if_current(self.Computed(ticket, cascade, session.steps))

    @on(Computed)
    def _on_computed(self, message: Computed) -> None:
        if not self._requests.is_current(message.ticket):
            return  # a newer request is on its way
        self.loading = False
        if self._reload_asked:
            self._reload_asked = False
            before = self._reload_from
            changes = message.cascade.changes_since(before) if before is not None else "first computation"
            self.report_reload(f"cascade of {visible(self.cwd.name)}/", changes)
        first = self.cascade is None or self.cascade is not message.cascade
        self.cascade = message.cascade
        self.steps = message.steps
        self._rebuild()
        if first:
            self.count_cost(message.cascade)

    @work(thread=True, exclusive=True, exit_on_error=False, group="cascade-cost")
    def count_cost(self, cascade: Cascade) -> None:
        """The tokens of memory at a session's start (the API's count with a key, cached; an
        estimate without) beside what the transcripts recorded; off the UI thread. Posts
        ``CostComputed`` unless a newer count started."""
        from memtui.core.audit.cost import counting_model, startup_cost
        from memtui.core.audit.tokens import TokenCounter
        from memtui.core.sessions.usage import UsageIndex

        worker = get_current_worker()
        index = UsageIndex(self.locations)
        index.refresh(cancelled=lambda: worker.is_cancelled)
        sessions = index.report(system_now(), existing=[]).sessions
        counter = TokenCounter(counting_model(self.locations), state_dir=self.locations.state_dir, environ=self.environ)
        self.post_if_current(self.CostComputed(startup_cost(cascade, sessions, counter)))

    @on(CostComputed)
    def _on_cost(self, message: CostComputed) -> None:
        self.cost = message.cost
        self._cost.update(styled(message.cost.summary(), style=MUTED))

    # ----- the session view ------------------------------------------------------------------

    def action_toggle_session(self) -> None:
        """Show what the last session loaded beside the prediction (again: back to the detail)."""
        switcher = self._right
        if switcher.current == "cascade-session":
            switcher.current = "cascade-detail"
            return
        self._compare("latest")

    def action_pick_session(self) -> None:
        """Choose a session of this project to compare."""
        self.list_sessions()

    @work(thread=True, exclusive=True, exit_on_error=False, group="cascade-sessions")
    def list_sessions(self) -> None:
        """List the project's sessions, newest first (a walk of the transcript dirs: off the UI
        thread); posts ``SessionsListed``."""
        from memtui.core.sessions.projects import project_transcripts

        mains = sorted((t for t in project_transcripts(self.locations) if not t.subagent), key=lambda t: -t.mtime_ns)
        self.post_if_current(self.SessionsListed(mains))

    @on(SessionsListed)
    def _on_sessions_listed(self, message: SessionsListed) -> None:
        if not message.transcripts:
            self.notify("No session transcripts for this project yet.", timeout=4)
            return

        def chosen(session: str | None) -> None:
            if session:
                self._compare(session)

        self.app.push_screen(SessionPicker(message.transcripts), chosen)

    def _compare(self, session: str) -> None:
        box = self._session_box
        box.border_title = "session · loaded vs predicted"
        box.border_subtitle = ""
        self._session_text.update(styled("reading the session…", style=MUTED))
        self._right.current = "cascade-session"
        self.compare_session(self._comparisons.take(), session)

    @work(thread=True, exclusive=True, exit_on_error=False, group="cascade-session")
    def compare_session(self, ticket: int, session: str) -> None:
        """Read the session's transcript and compare, off the UI thread; only posts. Raises
        ``WorkFailed`` when there is no such session or its transcript cannot be read."""
        from memtui.core.audit.loaded import SessionNotFoundError, load_session

        try:
            result = load_session(self.locations, session)
        except (SessionNotFoundError, OSError) as exc:
            raise WorkFailed("No session to compare", str(exc)) from exc
        self.post_if_current(self.SessionCompared(ticket, result))

    @on(SessionCompared)
    def _on_session(self, message: SessionCompared) -> None:
        if not self._comparisons.is_current(message.ticket):
            return
        self.session = message.result
        result = message.result
        box = self._session_box
        box.border_title = f"session {visible(result.session_id[:8])} · loaded vs predicted"
        bugs = len(result.bugs)
        box.border_subtitle = f"{len(result.differences)} difference(s)" + (f" · {bugs} fidelity bug(s)" if bugs else "")
        self._session_text.update(session_text(result, self.cwd, self.locations.memory_dir))

    def worker_failed(self, failure: Failure) -> None:
        """The pane leaves its computing state; with nothing computed yet, the summary says why."""
        self.loading = False
        if failure.group == "cascade-compute" and self.cascade is None:
            self._summary.update(plain(failure.reason, style="bold $error"))
        elif failure.group == "cascade-session":
            self._session_text.update(plain(failure.reason, style="bold $error"))

    # ----- drawing ---------------------------------------------------------------------------

    def _loaded_by(self) -> dict[str, str]:
        """Path → the read that loaded it (``read 1 (src/x.py)``)."""
        return {path: f"read {i + 1} ({display_path(self.steps[i].target, self.cwd)})" for path, i in self._read_of().items()}

    def _read_of(self) -> dict[str, int]:
        """Path → the index of the read that loaded it."""
        out: dict[str, int] = {}
        for i, step in enumerate(self.steps):
            for f in step.added:
                out.setdefault(f.path, i)
        return out

    def _rebuild(self) -> None:
        cascade = self.cascade
        if cascade is None or not self._in_dom:
            return
        tree = self._tree
        keep = self._select_next or (node_key(tree.cursor_node.data) if tree.cursor_node else None)
        self._select_next = None
        tree.clear()
        memory_dir = self.locations.memory_dir
        compact = self.narrow
        release = self.locations.flavor.behaviour
        for layer, run in layer_runs(cascade.files):
            # a layer the release never loads says so, not "no files" (its detail says what it is)
            empty = f"not loaded by {release.title}" if layer == "teammem" and not release.instructions.loads_team_index else "no files"
            label = layer_label(layer, run, compact=compact, empty=empty)
            layer_node = tree.root.add(label, data=LayerNode(layer, tuple(run)), expand=True, allow_expand=bool(run))
            stack: dict[int, TreeNode[NodeData]] = {}
            for entry in run:
                parent = layer_node if entry.depth == 0 else stack.get(entry.depth - 1, layer_node)
                label = file_label(entry, tree_name(entry, self.cwd, memory_dir), compact=compact)
                stack[entry.depth] = parent.add(label, data=FileNode(entry), expand=True)
        if cascade.nested is not None:
            self._add_nested(tree, cascade.nested)
        if self.steps:
            reads = tree.root.add(styled("Reads", style="bold"), data=None, expand=True)
            for i, step in enumerate(self.steps):
                step_node = reads.add(step_label(i, step, self.cwd, compact=compact), data=StepNode(i), expand=True, allow_expand=bool(step.added))
                for entry in step.added:
                    label = file_label(entry, tree_name(entry, self.cwd, memory_dir), added=True, compact=compact)
                    step_node.add_leaf(label, data=FileNode(entry, i))
        else:
            tree.root.add_leaf(assemble(("Reads  ", "bold"), ("none yet: type a path above ( / )", "italic " + MUTED)))
        for node in self._walk(tree.root):
            if not node.children:
                node.allow_expand = False
        tree.border_title = f"load order · {len(cascade.loaded_files)} of {len(cascade.considered_files)} loaded"
        _ = tree.last_line  # lay out the new lines so nodes know theirs
        nodes = list(self._walk(tree.root))
        target = next((n for n in nodes if keep is not None and node_key(n.data) == keep), None)
        first = next((n for n in nodes if isinstance(n.data, FileNode)), nodes[0] if nodes else None)
        # the cursor line set directly: move_cursor would also queue a scroll computed before
        # the new lines are laid out, undoing ours
        chosen = target or first
        tree.cursor_line = chosen.line if chosen is not None else -1
        self.call_after_refresh(self._scroll_to_cursor)
        self._fill_findings()
        self._fill_rendered()
        self._show_summary()
        self._show_node(tree.cursor_node)

    def _add_nested(self, tree: Tree[NodeData], listing: NestedListing) -> None:
        """The nested files, muted, each under the section (imports under their importer);
        one a simulated read loaded shows that read."""
        section = tree.root.add(nested_section_label(listing, compact=self.narrow), data=NestedNode(listing), expand=True, allow_expand=bool(listing.files))
        read_of = self._read_of()
        stack: dict[int, TreeNode[NodeData]] = {}
        for entry in listing.files:
            parent = section if entry.depth == 0 else stack.get(entry.depth - 1, section)
            label = nested_label(entry, tree_name(entry, self.cwd, self.locations.memory_dir), loaded_by=read_of.get(entry.path), compact=self.narrow)
            stack[entry.depth] = parent.add(label, data=FileNode(entry, nested=True), expand=True)

    def _scroll_to_cursor(self) -> None:
        """Bring the cursor node into view with its children (a read and what it added)."""
        tree = self._tree
        node = tree.cursor_node
        if node is None or not self._in_dom:
            return
        last = node.children[-1] if node.children and node.is_expanded else node
        height = tree.scrollable_content_region.height
        y = min(node.line, max(int(tree.scroll_y), last.line - height + 1))
        y = max(y, node.line - height + 1)
        tree.scroll_to(y=y, animate=False, immediate=True)

    def _walk(self, node: TreeNode[NodeData]) -> Iterator[TreeNode[NodeData]]:
        for child in node.children:
            yield child
            yield from self._walk(child)

    def _show_summary(self) -> None:
        cascade = self.cascade
        if cascade is None or not self.is_mounted:
            return
        loaded = len(cascade.loaded_files)
        pending = len(cascade.pending_external_imports)
        count = sum(1 for d, _ in self._findings if d.severity != "info")

        def build(sizes: dict[str, bool], compact: bool) -> Text:
            parts: list[Text | tuple[str, str] | str] = [
                (f"{loaded} of {counted(len(cascade.considered_files), 'file')} " if compact else f"{loaded} of {counted(len(cascade.considered_files), 'file')} loaded ", "bold"),
                ("· ", MUTED),
                parts_text(cascade, **sizes),
            ]
            if pending:
                label = f"{pending} pending" if compact else f"{pending} pending import{'s' if pending > 1 else ''}"
                parts += ["   ", (f"! {label} ", "bold $warning"), ("a/x" if compact else "— a approve · x decline", MUTED)]
            if count:
                parts += ["   ", (f"▲ {count}" if compact else f"▲ {count} finding{'s' if count > 1 else ''}", SEVERITY_STYLE["warning"])]
            return assemble(*parts)

        # the longest that fits: labels in full, then short labels with short words around them,
        # then the numbers alone
        tries = [({}, self.narrow), ({"compact": True}, self.narrow), ({"compact": True}, True), ({"bare": True}, True)]
        line = build(*tries[0])
        for sizes, compact in tries[1:]:
            if line.cell_len <= self.app.size.width - 4:
                break
            line = build(sizes, compact)
        summary = self._summary
        summary.update(line)
        summary.tooltip = f"what the model receives: {parts_text(cascade)} (v shows it)"

    def _fill_findings(self) -> None:
        cascade = self.cascade
        assert cascade is not None
        findings: list[tuple[Diagnostic, int | None]] = [(d, None) for d in cascade.diagnostics]
        for i, step in enumerate(self.steps):
            findings += [(d, i) for d in step.diagnostics]
        findings.sort(key=lambda item: SEVERITIES.index(item[0].severity))
        self._findings = findings
        options = self._findings_list
        highlighted = options.highlighted
        options.clear_options()
        for d, read_index in findings:
            where = display_path(d.path, self.cwd) if d.path else "setup"
            if d.line:
                where += f":{d.line}"
            options.add_option(
                Option(
                    assemble(
                        (SEVERITY_ICON[d.severity] + " ", SEVERITY_STYLE[d.severity]),
                        (where + "  ", "bold"),
                        (f"read {read_index + 1}  " if read_index is not None else "", "$note"),
                        (d.code, MUTED),
                    )
                )
            )
        if not findings:
            options.add_option(Option(styled("nothing to report", style="italic " + MUTED), disabled=True))
        else:
            options.highlighted = min(highlighted or 0, len(findings) - 1)
        warn = sum(1 for d, _ in findings if d.severity != "info")
        options.border_title = f"findings · {len(findings)}" + (f" · ▲ {warn}" if warn else "")
        options.border_subtitle = "enter: go to the line" if findings else ""

    def _fill_rendered(self) -> None:
        cascade = self.cascade
        assert cascade is not None
        box = self._rendered_box
        box.border_title = f"rendered context · {parts_text(cascade)}"
        box.border_subtitle = "startup context, byte for byte · v back"
        text = cascade.rendered or "(empty: no instruction file loads, the model gets no context block)"
        body = block(text, style="" if cascade.rendered else "italic " + MUTED)
        steps = [step for step in cascade.reads if step.messages]
        if cascade.memory_prompt or steps:
            # The release's whole picture: the system prompt's `# Memory` section, the first
            # message's instruction block, then what each read adds, each as the model gets it.
            parts: list[Text] = []
            if cascade.memory_prompt:
                parts += [styled("── system prompt: the # Memory section ──", style="bold " + MUTED), block(cascade.memory_prompt), Text("")]
            parts += [styled("── first message: the instruction block ──", style="bold " + MUTED), body]
            for step in steps:
                parts += [Text(""), styled(f"── after reading {visible(step.target)} ──", style="bold " + MUTED), block(step.rendered)]
            body = Text("\n").join(parts)
        self._rendered_text.update(body)

    def _show_node(self, node: TreeNode[NodeData] | None) -> None:
        cascade = self.cascade
        detail = self._detail_text
        box = self._detail_box
        if cascade is None or node is None:
            return
        data = node.data
        focus_line = source = None
        if self._focus is not None and self._focus[0] == node_key(data):
            focus_line = self._focus[1]
            source = self._source if self._source is not None and self._source.line == focus_line else None
        if isinstance(data, FileNode):
            entry = data.entry
            box.border_title = markup_safe(tree_name(entry, self.cwd, self.locations.memory_dir))
            ctx = FileContext(
                self.cwd,
                self.locations.memory_dir,
                loaded_by=self._loaded_by().get(entry.path) if data.read is None and not entry.loaded else None,
                focus_line=focus_line,
                source=source,
                added_by_read=f"read {data.read + 1} ({display_path(self.steps[data.read].target, self.cwd)})" if data.read is not None else None,
            )
            detail.update(file_detail(entry, ctx))
        elif isinstance(data, LayerNode):
            box.border_title = f"{data.layer} layer"
            detail.update(layer_detail(data.layer, data.files, cascade))
        elif isinstance(data, NestedNode):
            box.border_title = "nested files"
            detail.update(nested_detail(data.listing, agent_name(self.locations.flavor)))
        elif isinstance(data, StepNode):
            box.border_title = f"read {data.index + 1}"
            detail.update(step_detail(data.index, self.steps[data.index], self.cwd))
        else:
            box.border_title = "reads"
            detail.update(
                styled(
                    "Type a path in the box above (relative to the project) and press enter: the tree lists "
                    f"what each read adds — nested {self.locations.flavor.instruction_file} files and matching "
                    "conditional rules, each once per session. c resets.",
                    style=MUTED,
                )
            )
        box.scroll_home(animate=False)

    @on(Tree.NodeHighlighted, "#cascade-tree")
    def _on_highlight(self, event: Tree.NodeHighlighted[NodeData]) -> None:
        self._show_node(event.node)

    # ----- findings --------------------------------------------------------------------------

    @on(OptionList.OptionSelected, "#cascade-findings")
    def _on_finding(self, event: OptionList.OptionSelected) -> None:
        if 0 <= event.option_index < len(self._findings):
            self.jump_to(*self._findings[event.option_index])

    def jump_to(self, diagnostic: Diagnostic, step: int | None = None) -> None:
        """Put the tree cursor on the file of ``diagnostic`` (in read ``step``'s section when
        given) and show it with the finding's line."""
        tree = self._tree
        candidates = [n for n in self._walk(tree.root) if isinstance(n.data, FileNode) and n.data.entry.path == diagnostic.path]
        node = next((n for n in candidates if isinstance(n.data, FileNode) and n.data.read == step), candidates[0] if candidates else None)
        self._right.current = "cascade-detail"
        self.remove_class("-rendered")
        if node is None:
            self._focus = None
            box = self._detail_box
            box.border_title = diagnostic.code
            detail = assemble((visible(diagnostic.message), "bold"), "\n\n", (home_path(diagnostic.path) if diagnostic.path else "about the setup as a whole", MUTED))
            self._detail_text.update(detail)
            return
        self._focus = (node_key(node.data), diagnostic.line or 0) if diagnostic.line else None
        self._source = None
        if diagnostic.line and diagnostic.path:
            self.read_source(node_key(node.data), diagnostic.path, diagnostic.line)
        parent = node.parent
        while parent is not None:
            parent.expand()
            parent = parent.parent
        _ = tree.last_line
        tree.move_cursor(node)
        tree.focus()
        self._show_node(node)

    @work(thread=True, exclusive=True, exit_on_error=False, group="cascade-source")
    def read_source(self, key: tuple[object, ...] | None, path: str, line: int) -> None:
        """Read the lines around ``line`` of ``path`` off the UI thread (the finding's line
        counts the file as written, so it is read from disk)."""
        self.post_if_current(self.SourceRead(key, source_lines(path, line)))

    @on(SourceRead)
    def _on_source(self, message: SourceRead) -> None:
        if self._focus is None or self._focus[0] != message.key or self._focus[1] != message.source.line:
            return  # the user jumped elsewhere meanwhile
        self._source = message.source
        tree = self._tree
        if tree.cursor_node is not None and node_key(tree.cursor_node.data) == message.key:
            self._show_node(tree.cursor_node)

    # ----- actions ---------------------------------------------------------------------------

    def action_focus_reads(self) -> None:
        self._reads.focus()

    def action_focus_tree(self) -> None:
        self._tree.focus()

    def action_back(self) -> None:
        """esc: out of the reads box to the tree, the path kept; again: clear it; elsewhere:
        back to the tree."""
        if not self.escape_text_box():
            self.action_focus_tree()

    def action_focus_findings(self) -> None:
        self._findings_list.focus()

    def action_toggle_rendered(self) -> None:
        switcher = self._right
        switcher.current = "cascade-detail" if switcher.current == "cascade-rendered" else "cascade-rendered"
        self.set_class(switcher.current == "cascade-rendered", "-rendered")

    def action_reload(self) -> None:
        self._request(recompute=True)

    def action_reload_asked(self) -> None:
        """Recompute (the reload key), then say what changed since the cascade shown now."""
        self._reload_from = self.cascade
        self._reload_asked = True
        self.action_reload()

    def action_reset_reads(self) -> None:
        if not self.targets:
            self.notify("No reads to reset.", timeout=3)
            return
        self.targets = []
        self._request()

    @on(Input.Submitted, "#cascade-reads")
    def _on_read(self, event: Input.Submitted) -> None:
        target = event.value.strip()
        if not target:
            return
        event.input.value = ""
        self.targets.append(target)
        self._select_next = ("step", len(self.targets) - 1)
        self._request()

    def _affected(self, item: AffectedImport) -> tuple[str, str]:
        """An import a decision changes, as the confirmation lists it: (file, where it is imported)."""
        at = f", line {item.line}" if item.line else ""
        return display_path(item.path, self.cwd), f"imported by {display_path(item.imported_by, self.cwd) if item.imported_by else '?'}{at}"

    def _decide(self, decision: Decision) -> None:
        cascade = self.cascade
        if cascade is None:
            return
        current = cascade.external_approval
        if current.decision == decision and current.source == "memtui":
            self.notify(f"External imports are already {decision} for this project.", timeout=4)
            return
        items = [self._affected(item) for item in decision_effect(cascade, decision)]
        if not items:
            self.notify("No instruction file here imports anything outside the working directory.", timeout=4)
            return
        note, details = agent_approval_note(self.locations.flavor) or (None, None)

        def confirmed(yes: bool | None) -> None:
            if yes:
                self.loading = True
                self._request(recompute=True, decision=decision)

        self.app.push_screen(ImportDecisionDialog(decision, home_path(current.project_key), items, note, details), confirmed)

    def action_approve(self) -> None:
        self._decide("approved")

    def action_decline(self) -> None:
        self._decide("declined")

