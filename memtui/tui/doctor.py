"""The doctor's findings view (SPEC §4.3): findings grouped by file, one key to preview and
apply a safe fix. Every fix is a core ``Plan`` (conflict-checked, journaled, undoable)."""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Footer, Static, Tree
from textual.widgets.tree import TreeNode
from textual.worker import Worker, WorkerState

from memtui.tui.safe import plain
from memtui.core.base.terminal import visible
from memtui.core.base.clock import system_now
from memtui.core.doctor import (
    FIXES,
    DoctorReport,
    Finding,
    FixError,
    combined_fix_plan,
    fix_plan,
    instruction_texts,
    run_doctor,
)
from memtui.core.writes.edits import ApplyError, ConflictError, EditError, Plan, apply_plan
from memtui.core.writes.journal import Journal
from memtui.core.places.locations import Locations
from memtui.core.memory.catalogdb import CatalogDB
from memtui.tui.dialogs import PlanPreview
from memtui.tui.styles import stylesheets

_ICON = {"error": ("✖", "bold #e06c75"), "warning": ("▲", "bold #e5c07b"), "info": ("●", "#56b6c2")}


class DoctorScreen(Screen[bool]):
    """Findings of the whole memory dir. Dismisses with ``True`` when something was fixed."""

    CSS_PATH = stylesheets("doctor")
    BINDINGS = [
        Binding("f", "fix", "Fix", id="doctor.fix", tooltip="Preview and apply the safe fix of the selected finding"),
        Binding("A", "fix_all", "Fix all", id="doctor.fix-all", tooltip="Preview and apply every safe fix at once (one undo)"),
        Binding("i", "toggle_info", "Info on/off", id="doctor.info", tooltip="Show or hide info-level findings"),
        Binding("r", "rerun", "Re-run", id="doctor.rerun", tooltip="Run the doctor again"),
        Binding("escape,q", "close", "Back", id="doctor.close", tooltip="Back to the memories"),
    ]

    @dataclass
    class Done(Message):
        """The doctor finished: its report."""

        report: DoctorReport

    def __init__(self, locations: Locations) -> None:
        super().__init__()
        self.locations = locations
        self.report: DoctorReport | None = None
        self.show_info = False
        self.changed = False

    def compose(self) -> ComposeResult:
        yield Static("Running the doctor…", id="doctor-summary")
        with Horizontal(id="doctor-body"):
            tree: Tree[Finding | None] = Tree("findings", id="doctor-tree")
            tree.show_root = False
            yield tree
            with VerticalScroll(id="doctor-detail"):
                yield Static(id="doctor-finding")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#doctor-tree", Tree).loading = True
        self.run_checks()

    @work(thread=True, exclusive=True, exit_on_error=False, group="doctor")
    def run_checks(self) -> None:
        """The doctor reads every file: off the UI thread, posting only its report."""
        texts = instruction_texts(self.locations)
        release = self.locations.flavor.behaviour
        cache = CatalogDB.for_memory_dir(self.locations.state_dir, self.locations.memory_dir, fmt=release.memory_format)
        report = run_doctor(
            self.locations.memory_dir,
            system_now(),
            instruction_texts=texts,
            cache=cache,
            fmt=release.memory_format,
            warning_style=release.instructions.index_warning,
        )
        self.post_message(self.Done(report))

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.state == WorkerState.ERROR:
            self.query_one("#doctor-tree", Tree).loading = False
            self.query_one("#doctor-summary", Static).update(plain(f"The doctor failed: {event.worker.error}", style="bold #e06c75"))

    @on(Done)
    def _done(self, message: Done) -> None:
        self.report = message.report
        self.query_one("#doctor-tree", Tree).loading = False
        self._show_report()

    def _show_report(self) -> None:
        report = self.report
        if report is None:
            return
        counts = {"error": 0, "warning": 0, "info": 0}
        for f in report.findings:
            counts[f.severity] += 1
        fixable = len(report.fixable())
        summary = Text.assemble(
            ("Doctor  ", "bold #61afef"),
            (f"{report.memories} memories  ", "bold"),
            (f"{counts['error']} errors  ", _ICON["error"][1] if counts["error"] else "#5c6370"),
            (f"{counts['warning']} warnings  ", _ICON["warning"][1] if counts["warning"] else "#5c6370"),
            (f"{counts['info']} info{'' if self.show_info else ' (hidden, i shows)'}  ", "#56b6c2"),
            (f"· {fixable} with a safe fix (f one, A all)", "#98c379" if fixable else "#5c6370"),
        )
        self.query_one("#doctor-summary", Static).update(summary)
        tree = self.query_one("#doctor-tree", Tree)
        tree.clear()
        first: TreeNode[Finding | None] | None = None
        for path, findings in report.by_path().items():
            shown = [f for f in findings if self.show_info or f.severity != "info"]
            if not shown:
                continue
            worst = min(shown, key=lambda f: ("error", "warning", "info").index(f.severity)).severity
            label = Text.assemble((f"{_ICON[worst][0]} ", _ICON[worst][1]), (visible(path) if path else "(memory dir)", "bold"), (f"  {len(shown)}", "#5c6370"))
            node = tree.root.add(label, data=None, expand=True)
            for f in shown:
                where = f":{f.line}" if f.line else ""
                leaf = node.add_leaf(
                    Text.assemble((f"{_ICON[f.severity][0]} ", _ICON[f.severity][1]), f.code, (where, "#5c6370"), ("  ⚒" if f.fix else "", "#98c379")),
                    data=f,
                )
                first = first or leaf
        if first is not None:
            tree.select_node(first)
            tree.move_cursor(first)
            self._show(first.data)
        else:
            self._show(None)
        tree.focus()

    @on(Tree.NodeHighlighted, "#doctor-tree")
    def _highlight(self, event: Tree.NodeHighlighted[Finding | None]) -> None:
        node = event.node
        if node.data is None and node.children:  # a file: its findings in one view
            lines = [Text.assemble((f"{_ICON[f.severity][0]} ", _ICON[f.severity][1]), (f.code, "bold"), f"  {visible(f.message)}\n") for f in (c.data for c in node.children) if f is not None]
            self.query_one("#doctor-finding", Static).update(Text.assemble(*lines, ("\n↓ to a finding: f fixes it when it has ⚒", "#5c6370")))
            return
        self._show(node.data)

    def _show(self, f: Finding | None) -> None:
        detail = self.query_one("#doctor-finding", Static)
        if f is None:
            detail.update(Text("Nothing to report." if self.report and not self.report.findings else "Select a finding.", style="#abb2bf"))
            return
        icon, style = _ICON[f.severity]
        parts: list[Text | str | tuple[str, str]] = [
            (f"{icon} {f.severity}  ", style),
            (f.code, "bold"),
            (f"\n{visible(f.path) if f.path else '(memory dir)'}{f':{f.line}' if f.line else ''}\n\n", "#5c6370"),
            plain(f.message),
        ]
        if f.fix:
            parts.extend([("\n\nSafe fix: ", "bold #98c379"), Text(FIXES.get(f.fix, f.fix)), ("\nf previews it; nothing changes until you apply.", "#5c6370")])
        else:
            parts.append(("\n\nNo automatic fix: edit the memory (e in the list).", "#5c6370"))
        detail.update(Text.assemble(*parts))

    def _selected(self) -> Finding | None:
        node = self.query_one("#doctor-tree", Tree).cursor_node
        return node.data if node is not None else None

    def _apply(self, build: Plan | None) -> None:
        if build is None:
            return

        def go(ok: bool | None) -> None:
            if not ok:
                return
            try:
                entry = apply_plan(self.locations.memory_dir, build, Journal(self.locations.state_dir, self.locations.memory_dir), system_now())
            except (ConflictError, ApplyError, EditError, OSError) as exc:
                self.notify(str(exc), title="Not applied", severity="error", timeout=10)
            else:
                self.changed = True
                self.notify(f"{entry.title}  ·  u in the list undoes it", title="Fixed")
            self.action_rerun()

        self.app.push_screen(PlanPreview(build), go)

    def action_fix(self) -> None:
        f = self._selected()
        if f is None or not f.fix:
            self.notify("The selected finding has no safe fix.", severity="warning")
            return
        try:
            self._apply(fix_plan(self.locations.memory_dir, f))
        except (FixError, EditError, OSError) as exc:
            self.notify(f"{exc} — re-running the doctor.", severity="warning")
            self.action_rerun()

    def action_fix_all(self) -> None:
        if self.report is None:
            return
        fixable = self.report.fixable()
        if not fixable:
            self.notify("No finding has a safe fix.", severity="warning")
            return
        try:
            self._apply(combined_fix_plan(self.locations.memory_dir, fixable, title=f"Doctor: {len(fixable)} safe fixes"))
        except (FixError, EditError, OSError) as exc:
            self.notify(f"{exc} — re-running the doctor.", severity="warning")
            self.action_rerun()

    def action_toggle_info(self) -> None:
        self.show_info = not self.show_info
        self._show_report()

    def action_rerun(self) -> None:
        self.query_one("#doctor-tree", Tree).loading = True
        self.run_checks()

    def action_close(self) -> None:
        self.dismiss(self.changed)


__all__ = ["DoctorScreen"]
