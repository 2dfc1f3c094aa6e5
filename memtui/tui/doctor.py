"""The doctor's findings view: every check of the lint catalog over the memory dir, findings
grouped by file, one key to preview and apply a safe fix. Every fix is a core ``Plan``
(conflict-checked, journaled, undoable), written off the UI thread."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.message import Message
from textual.worker import get_current_worker
from textual.widgets import ProgressBar, Static, Tree
from textual.widgets.tree import TreeNode

from memtui.tui.safe import plain
from memtui.core.base.wording import counted
from memtui.core.base.terminal import visible
from memtui.core.base.clock import system_now
from memtui.core.doctor import (
    CERTAIN_FIXES,
    FIXES,
    DoctorCancelled,
    DoctorProgress,
    DoctorReport,
    Finding,
    FixError,
    combined_fix_plan,
    fix_plan,
    instruction_texts,
    run_doctor,
)
from memtui.core.doctor.model import file_groups, folder_moves, note_kinds
from memtui.core.doctor.project_checks import add_project_findings
from memtui.core.doctor.usage_checks import project_usage
from memtui.core.memory.catalogdb import CatalogDB
from memtui.core.places.locations import Locations, MemoryDirProblem, memory_dir_problem
from memtui.core.writes.edits import ApplyError, ConflictError, EditError, Plan, apply_plan
from memtui.core.writes.journal import Journal, JournalEntry
from memtui.core.writes.links import confirmed_links
from memtui.core.verify import verify_root
from memtui.core.verify.judge import auto_judge
from memtui.tui.dialogs import PlanPreview
from memtui.tui.pane import Failure, KeysFooter, PaneScreen, WorkFailed
from memtui.tui.styles import stylesheets
from memtui.tui.theme import SEVERITY_ICON, severity_style, tone


def _finding_key(finding: Finding) -> tuple[str, str | None, int | None, str]:
    """What names a finding across two runs: its code, file, line and message."""
    return (finding.code, finding.path, finding.line, finding.message)


def _finding_rows(tree: Tree[Finding | None]) -> list[TreeNode[Finding | None]]:
    """The rows of ``tree`` that are findings (under their file or group), top to bottom."""
    return [leaf for group in tree.root.children for leaf in group.children if leaf.data is not None]


def _icon(finding: Finding) -> tuple[str, str]:
    """The severity icon of ``finding`` and its style."""
    return f"{SEVERITY_ICON[finding.severity]} ", severity_style(finding.severity)


class DoctorScreen(PaneScreen):
    """Findings of the whole memory dir. Dismisses with ``True`` when something was fixed."""

    FAILURE_TITLES = {"doctor": "The doctor failed", "doctor-fix": "Not applied"}

    CSS_PATH = stylesheets("doctor")
    BINDINGS = [
        Binding("f", "fix", "Fix", id="doctor.fix", tooltip="Preview and apply the safe fix of the selected finding"),
        Binding("A", "fix_all", "Fix all certain", id="doctor.fix-all", tooltip="Preview and apply every certain fix at once (one undo): the type and frontmatter traps, heading entries"),
        Binding("i", "toggle_info", "Notes on/off", id="doctor.info", tooltip="List the notes (advice) under their files, or count them by kind"),
        Binding("r", "rerun_asked", "Re-run", id="doctor.rerun", tooltip="Run the doctor again and say what changed"),
        Binding("escape,q", "close", "Back", id="doctor.close", tooltip="Back to the memories (a run in progress stops)"),
    ]

    # what each stage of a run is called on screen
    STAGES = {"reading": "reading", "comparing": "comparing the memories", "checking": "checking their claims about the code"}

    @dataclass
    class Progressed(Message):
        """The run reached ``done`` of ``total`` memories of ``stage`` (``run_doctor``'s
        stages). Frequent: a newer one replaces one still queued."""

        stage: str
        done: int
        total: int

        def can_replace(self, message: Message) -> bool:
            return isinstance(message, DoctorScreen.Progressed)

    @dataclass
    class Done(Message):
        """The doctor finished: its report."""

        report: DoctorReport

    @dataclass
    class NoMemoryDir(Message):
        """There is no memory dir to audit (missing, or not a directory)."""

        problem: MemoryDirProblem

    @dataclass
    class Fixed(Message):
        """A fix was applied (``entry``: its journal entry)."""

        entry: JournalEntry

    def __init__(self, locations: Locations) -> None:
        super().__init__()
        self.locations = locations
        self.report: DoctorReport | None = None
        self.show_info = False
        self.changed = False
        self._rerun_asked = False  # the re-run key was pressed: say how the next report differs
        self._rerun_from: dict[str, int] | None = None
        self._run_shown = False  # a run is in progress: its progress is shown
        # the finding selected before a re-run, and its place among the findings (``_keep_at``)
        self._selected_key: tuple[tuple[str, str | None, int | None, str], int] | None = None

    def compose(self) -> ComposeResult:
        yield Static("Running the doctor…", id="doctor-summary")
        yield ProgressBar(id="doctor-progress", show_eta=False)
        with Horizontal(id="doctor-body"):
            tree: Tree[Finding | None] = Tree("findings", id="doctor-tree")
            tree.show_root = False
            yield tree
            with VerticalScroll(id="doctor-detail"):
                yield Static(id="doctor-finding")
        yield KeysFooter()

    def on_mount(self) -> None:
        self.action_rerun()

    @work(thread=True, exclusive=True, exit_on_error=False, group="doctor")
    def run_checks(self) -> None:
        """The doctor reads every file: off the UI thread, posting its progress and its
        report; a cancelled worker (esc, a re-run, the app quitting) stops at the next memory."""
        worker = get_current_worker()

        def progress(stage: str, done: int, total: int) -> None:
            if worker.is_cancelled:
                raise DoctorCancelled
            if done in (0, total) or done % max(1, total // 200) == 0:  # at most ~200 steps drawn
                self.post_message(self.Progressed(stage, done, total))

        problem = memory_dir_problem(self.locations)
        if problem is not None:
            self.post_message(self.NoMemoryDir(problem))
            return
        texts = instruction_texts(self.locations)
        release = self.locations.flavor.behaviour
        cache = CatalogDB.for_memory_dir(self.locations.state_dir, self.locations.memory_dir, fmt=release.memory_format)
        now = system_now()
        try:
            report = self._run(texts, cache, now, progress)
        except DoctorCancelled:
            return
        self.post_message(self.Done(add_project_findings(report, self.locations)))

    def _run(self, texts: Sequence[str], cache: CatalogDB, now: datetime, progress: DoctorProgress) -> DoctorReport:
        """``run_doctor`` over this screen's memory dir, with the release's format."""
        release = self.locations.flavor.behaviour
        return run_doctor(
            self.locations.memory_dir,
            now,
            instruction_texts=texts,
            cache=cache,
            fmt=release.memory_format,
            warning_style=release.instructions.index_warning,
            project_root=verify_root(self.locations),
            judge=auto_judge(),
            usage=project_usage(self.locations, now),
            progress=progress,
        )

    @on(Progressed)
    def _progressed(self, message: Progressed) -> None:
        if not self._run_shown:
            return  # a late message of a run already over
        stage = self.STAGES.get(message.stage, message.stage)
        counts = f" {message.done:,} of {counted(message.total, 'memory', 'memories')}" if message.stage == "reading" and message.total else ""
        self.query_one("#doctor-summary", Static).update(
            Text.assemble(("Running the doctor: ", "bold"), f"{stage}{counts}…", ("  esc stops it", tone("$muted"))))
        bar = self.query_one("#doctor-progress", ProgressBar)
        if message.stage == "reading" and message.total:
            bar.update(total=message.total, progress=message.done)
        else:
            bar.update(total=None)

    def _stopped_running(self) -> None:
        """The run ended: the tree takes its place again, the progress bar goes."""
        self._run_shown = False
        self.query_one("#doctor-tree", Tree).loading = False
        self.query_one("#doctor-progress", ProgressBar).display = False

    def worker_failed(self, failure: Failure) -> None:
        """The doctor could not run: the summary says so; a fix was not applied: run again."""
        self._stopped_running()
        if failure.group == "doctor":
            self.query_one("#doctor-summary", Static).update(plain(f"The doctor failed: {failure.reason}", style="bold $error"))
        else:
            self.action_rerun()

    @on(NoMemoryDir)
    def _no_memory_dir(self, message: NoMemoryDir) -> None:
        self._stopped_running()
        problem = message.problem
        self.query_one("#doctor-summary", Static).update(Text.assemble(("Nothing to check.  ", "bold"), (f"{visible(str(problem.memory_dir))} {problem.what}", tone("$soft"))))

    @on(Done)
    def _done(self, message: Done) -> None:
        if self._rerun_asked:
            self._rerun_asked = False
            now = message.report.counts()
            said = ", ".join(f"{now[s]} {s}" for s in ("error", "warning", "info"))
            if self._rerun_from is None:
                changes = "first run"
            elif now == self._rerun_from:
                changes = "nothing changed"
            else:
                changes = "was " + ", ".join(f"{self._rerun_from[s]} {s}" for s in ("error", "warning", "info"))
            self.report_reload(f"doctor re-run: {said}", changes)
        self.report = message.report
        self._stopped_running()
        self._show_report()

    def _show_report(self) -> None:
        report = self.report
        if report is None:
            return
        counts = report.counts()
        certain = len(report.certain())
        offered = len(report.fixable())
        muted = tone("$muted")
        fixes = f"· {certain} certain fix{'es' if certain != 1 else ''} (A), {offered} offered (f)" if offered else "· no fix offered"
        summary = Text.assemble(
            ("Doctor  ", tone("bold $note")),
            (f"{counted(report.memories, 'memory', 'memories')}  ", "bold"),
            (f"{counted(counts['error'], 'error')}  ", severity_style("error") if counts["error"] else muted),
            (f"{counted(counts['warning'], 'warning')}  ", severity_style("warning") if counts["warning"] else muted),
            (f"{counted(counts['info'], 'note')}{'' if self.show_info else ' (i lists)'}  ", severity_style("info")),
            (fixes, tone("$success") if certain else muted),
        )
        self.query_one("#doctor-summary", Static).update(summary)
        tree = self.query_one("#doctor-tree", Tree)
        tree.clear()
        first: TreeNode[Finding | None] | None = None
        shown = [f for f in report.findings if self.show_info or f.severity != "info" or f.path is None]
        moves = folder_moves(f for f in shown if f.severity == "warning")
        if moves:  # what dozens of stale paths say one by one, said once
            node = tree.root.add(Text.assemble((f"{SEVERITY_ICON['warning']} ", severity_style("warning")), ("the code moved", "bold"), (f"  {len(moves)}", muted)), data=None, expand=True)
            for move in moves:
                said = Finding("stale-path", "warning", None, None, f"the code moved from `{move.old}/` to `{move.new or '.'}/`: {counted(move.count, 'path')} in {counted(move.files, 'memory', 'memories')} still name the old folder (each is listed under its memory)")
                leaf = node.add_leaf(Text.assemble(_icon(said), f"{move.old}/ → {move.new or '.'}/", (f" ×{move.count}", muted)), data=said)
                first = first or leaf
        for group in file_groups(shown):
            total = sum(n for _, n in group.lines)
            label = Text.assemble((f"{SEVERITY_ICON[group.worst]} ", severity_style(group.worst)), (visible(group.path) if group.path else "(memory dir)", "bold"), (f"  {total}", muted))
            node = tree.root.add(label, data=None, expand=True)
            for f, times in group.lines:
                where = f":{f.line}" if f.line else ""
                leaf = node.add_leaf(
                    Text.assemble(_icon(f), f.code, (where, muted), (f" ×{times}" if times > 1 else "", muted), ("  ⚒" if f.fix else "", tone("$success"))),
                    data=f,
                )
                first = first or leaf
        kinds = [] if self.show_info else note_kinds(report.findings)
        if kinds:
            node = tree.root.add(Text.assemble((f"{SEVERITY_ICON['info']} ", severity_style("info")), ("notes: advice, not defects", "bold"), (f"  {sum(k.count for k in kinds)}", muted)), data=None, expand=True)
            for kind in kinds:
                summary_finding = Finding(kind.code, "info", None, None, f"{counted(kind.count, 'note')} in {counted(kind.files, 'file')}: {kind.meaning}. i lists each under its file.")
                leaf = node.add_leaf(Text.assemble(_icon(summary_finding), kind.code, (f" ×{kind.count}", muted)), data=summary_finding)
                first = first or leaf
        keep = self._keep_at(tree)
        if keep is not None:
            first = keep
        if first is not None:
            tree.select_node(first)
            tree.move_cursor(first)
            # The first finding's group row stays in sight. move_cursor scrolls at once (forced),
            # against the size the tree had before the report (0×0 while it was loading), which
            # puts the group row off the top. Scrolling home must be forced too: a tree with no
            # scrollbar ignores an unforced scroll and would keep that stale offset.
            tree.scroll_home(animate=False, immediate=True, force=True)
            self._show(first.data)
        else:
            self._show(None)
        tree.focus()

    @on(Tree.NodeHighlighted, "#doctor-tree")
    def _highlight(self, event: Tree.NodeHighlighted[Finding | None]) -> None:
        node = event.node
        if node.data is None and node.children:  # a file: its findings in one view
            lines = [Text.assemble(_icon(f), (f.code, "bold"), f"  {visible(f.message)}\n") for f in (c.data for c in node.children) if f is not None]
            self.query_one("#doctor-finding", Static).update(Text.assemble(*lines, ("\n↓ to a finding: f fixes it when it has ⚒", tone("$muted"))))
            return
        self._show(node.data)

    def _show(self, f: Finding | None) -> None:
        detail = self.query_one("#doctor-finding", Static)
        if f is None:
            detail.update(Text("Nothing to report." if self.report and not self.report.findings else "Select a finding.", style=tone("$soft")))
            return
        muted = tone("$muted")
        parts: list[Text | str | tuple[str, str]] = [
            (f"{SEVERITY_ICON[f.severity]} {f.severity}  ", severity_style(f.severity)),
            (f.code, "bold"),
            (f"\n{visible(f.path) if f.path else '(memory dir)'}{f':{f.line}' if f.line else ''}\n\n", muted),
            plain(f.message),
        ]
        if f.fix:
            kind = "Certain fix (also in A): " if f.fix in CERTAIN_FIXES else "Offered fix (yours to choose): "
            parts.extend([("\n\n" + kind, tone("bold $success")), Text(FIXES.get(f.fix, f.fix)), ("\nf previews it; nothing changes until you apply.", muted)])
        else:
            parts.append(("\n\nNo automatic fix: edit the memory (e in the list).", muted))
        detail.update(Text.assemble(*parts))

    def _keep_at(self, tree: Tree[Finding | None]) -> TreeNode[Finding | None] | None:
        """After a re-run (a fix applied, ``r``, ``i``): the row to put the cursor on — the
        finding that was selected when it is still there, else the one that took its place
        among the findings (the next, or the last when it was the last); ``None`` on the first
        report."""
        selected = self._selected_key
        if selected is None:
            return None
        leaves = _finding_rows(tree)
        for leaf in leaves:
            if _finding_key(leaf.data) == selected[0]:
                return leaf
        if not leaves:
            return None
        return leaves[min(selected[1], len(leaves) - 1)]

    def _remember_selection(self) -> None:
        """Keep which finding is selected (and its place among them) for ``_keep_at``."""
        tree = self.query_one("#doctor-tree", Tree)
        node = tree.cursor_node
        if node is None or node.data is None:
            return
        leaves = _finding_rows(tree)
        self._selected_key = (_finding_key(node.data), leaves.index(node) if node in leaves else 0)

    def _selected(self) -> Finding | None:
        node = self.query_one("#doctor-tree", Tree).cursor_node
        return node.data if node is not None else None

    def _apply(self, build: Plan | None) -> None:
        if build is None:
            return

        def go(ok: bool | None) -> None:
            if ok:
                self.query_one("#doctor-tree", Tree).loading = True
                self.apply_fix(build)

        self.app.push_screen(PlanPreview(build), go)

    @work(thread=True, exclusive=True, exit_on_error=False, group="doctor-fix")
    def apply_fix(self, plan: Plan) -> None:
        """Write ``plan`` off the UI thread (the write path waits for the memory dir's lock)."""
        try:
            entry = apply_plan(self.locations.memory_dir, plan, Journal(self.locations.state_dir, self.locations.memory_dir), system_now())
        except (ConflictError, ApplyError, EditError, OSError) as exc:
            raise WorkFailed("Not applied", str(exc)) from exc
        self.post_message(self.Fixed(entry))

    @on(Fixed)
    def _fixed(self, message: Fixed) -> None:
        self.changed = True
        self.notify(f"{message.entry.title}  ·  esc, then u in the Memories list undoes it", title="Fixed")
        self.action_rerun()

    def _confirmed_links(self) -> dict[str, str]:
        """The memory links the user confirmed memtui may write through (none when the state
        dir cannot hold memtui's state)."""
        try:
            return confirmed_links(Journal(self.locations.state_dir, self.locations.memory_dir).base)
        except OSError:
            return {}

    def action_fix(self) -> None:
        f = self._selected()
        node = self.query_one("#doctor-tree", Tree).cursor_node
        if f is None and node is not None:  # a file's row: its one fixable finding, if it has one
            fixable = [c.data for c in node.children if c.data is not None and c.data.fix]
            if len(fixable) > 1:
                self.notify(f"This file has {len(fixable)} findings with a fix: select one (↓) and press f.", severity="warning")
                return
            f = fixable[0] if fixable else None
        if f is None or not f.fix:
            self.notify("The selected finding has no safe fix.", severity="warning")
            return
        try:
            self._apply(fix_plan(self.locations.memory_dir, f, confirmed_links=self._confirmed_links()))
        except (FixError, EditError, OSError) as exc:
            self.notify(f"{exc} — re-running the doctor.", severity="warning")
            self.action_rerun()

    def action_fix_all(self) -> None:
        if self.report is None:
            return
        certain = self.report.certain()
        if not certain:
            offered = len(self.report.fixable())
            self.notify(f"No certain fix. {offered} offered: select one and press f." if offered else "No finding has a fix.", severity="warning")
            return
        try:
            self._apply(combined_fix_plan(self.locations.memory_dir, certain, title=f"Doctor: {len(certain)} certain fixes", confirmed_links=self._confirmed_links()))
        except (FixError, EditError, OSError) as exc:
            self.notify(f"{exc} — re-running the doctor.", severity="warning")
            self.action_rerun()

    def action_toggle_info(self) -> None:
        self._remember_selection()
        self.show_info = not self.show_info
        self._show_report()

    def action_rerun_asked(self) -> None:
        """Run again (the re-run key), then say how the findings changed."""
        self._rerun_from = self.report.counts() if self.report is not None else None
        self._rerun_asked = True
        self.action_rerun()

    def action_rerun(self) -> None:
        if self.report is not None:
            self._remember_selection()
        self._run_shown = True
        self.query_one("#doctor-tree", Tree).loading = True
        bar = self.query_one("#doctor-progress", ProgressBar)
        bar.update(total=None, progress=0)
        bar.display = True
        self.run_checks()

    def action_close(self) -> None:
        """Back to the memories; a run in progress is cancelled (it stops at its next memory)."""
        for worker in self.app.workers:
            if worker.node is self and worker.group == "doctor":
                worker.cancel()
        self.dismiss(self.changed)


__all__ = ["DoctorScreen"]
