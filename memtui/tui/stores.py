"""The memory stores view: every store in play for the project (the one read now first), who
read and who wrote each, the findings with their fixes, and what the index costs each session
and its sub-agents (``memtui.core.stores``). A store's merge into the one read is previewed as a
plan and applied off the UI thread, undoable with ``memtui undo``."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.message import Message
from textual.widgets import Static, Tree

from memtui.core.base.clock import system_now
from memtui.core.base.terminal import visible
from memtui.core.base.wording import counted
from memtui.core.places.flavor import home_dir
from memtui.core.places.locations import Locations, resolve_locations
from memtui.core.stores.audit import Store, StoreFinding, StoresReport, audit_stores
from memtui.core.stores.cost import SessionCost, index_costs
from memtui.core.stores.merge import MergeError, MergePlan, apply_merge, plan_merge, undo_candidate, undo_candidates
from memtui.core.stores.settings_fix import SettingChange, SettingEditError, apply_setting, plan_setting, setting_plan
from memtui.core.writes.edits import ApplyError, ConflictError, EditError, undo_plan
from memtui.core.writes.journal import Journal, JournalEntry
from memtui.tui.dialogs import PlanPreview
from memtui.tui.pane import Failure, KeysFooter, PaneScreen, WorkFailed
from memtui.tui.safe import plain
from memtui.tui.styles import stylesheets
from memtui.tui.theme import SEVERITY_ICON, severity_style, tone

# The sessions whose index cost the view lists (the newest).
SHOWN_COSTS = 8
Row = Store | StoreFinding | SessionCost | None


class StoresScreen(PaneScreen):
    """Every memory store in play. Dismisses with ``True`` when a merge changed a store."""

    FAILURE_TITLES = {"stores": "The stores could not be read", "stores-merge": "Not merged"}

    CSS_PATH = stylesheets("stores")
    BINDINGS = [
        Binding("f", "fix", "Fix", id="stores.fix", tooltip="Preview and apply the selected finding's fix memtui can make: the merge, or the setting (undo: memtui undo)"),
        Binding("m", "merge", "Merge into the read store", id="stores.merge", tooltip="Preview moving the selected store's memories into the store Claude Code reads (undo: memtui undo)"),
        Binding("u", "undo", "Undo", id="stores.undo", tooltip="Preview and undo the last merge or setting made here (as `memtui undo` does)"),
        Binding("r", "rerun", "Re-read", id="stores.rerun", tooltip="Read the transcripts and the stores again"),
        Binding("escape,q", "close", "Back", id="stores.close", tooltip="Back to the memories"),
    ]

    @dataclass
    class Done(Message):
        """The audit finished: the report and the index cost per session."""

        report: StoresReport
        costs: list[SessionCost]

    @dataclass
    class Merged(Message):
        """A merge or a setting was applied (``entry``: its journal entry)."""

        entry: JournalEntry

    def __init__(self, locations: Locations) -> None:
        super().__init__()
        self.locations = locations
        self.report: StoresReport | None = None
        self.changed = False

    def compose(self) -> ComposeResult:
        yield Static("Reading the transcripts…", id="stores-summary")
        with Horizontal(id="stores-body"):
            tree: Tree[Row] = Tree("stores", id="stores-tree")
            tree.show_root = False
            yield tree
            with VerticalScroll(id="stores-detail"):
                yield Static(id="stores-item")
        yield KeysFooter()

    def on_mount(self) -> None:
        self.action_rerun()

    @work(thread=True, exclusive=True, exit_on_error=False, group="stores")
    def run_audit(self) -> None:
        """Read every transcript of the repository off the UI thread."""
        from memtui.core.audit.cost import counting_model
        from memtui.core.audit.tokens import TokenCounter

        report = audit_stores(self.locations)
        counter = TokenCounter(counting_model(self.locations), state_dir=self.locations.state_dir)
        costs = index_costs(report.sessions, report.subagents, counter)
        self.post_message(self.Done(report, costs))

    def worker_failed(self, failure: Failure) -> None:
        self.query_one("#stores-tree", Tree).loading = False
        if failure.group == "stores":
            self.query_one("#stores-summary", Static).update(plain(f"The stores could not be read: {failure.reason}", style="bold $error"))

    @on(Done)
    def _done(self, message: Done) -> None:
        self.report = message.report
        report = message.report
        tree = self.query_one("#stores-tree", Tree)
        tree.loading = False
        tree.clear()
        muted = tone("$muted")
        found = len(report.findings)
        self.query_one("#stores-summary", Static).update(
            Text.assemble(
                ("Memory stores  ", tone("bold $note")),
                (f"{counted(len(report.stores), 'store')}  ", "bold"),
                (f"from {counted(len(report.sessions), 'session')}  ", muted),
                (counted(found, "finding"), severity_style("warning") if found else tone("$success")),
                ("" if report.auto_memory else "  · auto memory is OFF", severity_style("warning")),
            )
        )
        first = None
        if report.findings:
            node = tree.root.add(Text("findings", style="bold"), data=None, expand=True)
            for f in report.findings:
                cause = f" · {f.cause}" if f.cause else ""
                leaf = node.add_leaf(Text.assemble((f"{SEVERITY_ICON[f.severity]} ", severity_style(f.severity)), f.code, (cause, muted)), data=f)
                first = first or leaf
        node = tree.root.add(Text("stores", style="bold"), data=None, expand=True)
        for s in report.stores:
            label = Text.assemble(("● " if "reads" in s.roles else "○ ", tone("$success") if "reads" in s.roles else muted), visible(self._short(s.path)), (f"  {s.memories}", muted))
            leaf = node.add_leaf(label, data=s)
            first = first or leaf
        costs = message.costs[-SHOWN_COSTS:][::-1]
        if costs:
            node = tree.root.add(Text("index loaded per session", style="bold"), data=None, expand=False)
            for c in costs:
                node.add_leaf(Text.assemble(visible(c.session[:8]), (f"  {(c.time or '')[:16].replace('T', ' ')}", muted), f"  {c.total}"), data=c)
        if first is not None:
            tree.select_node(first)
            tree.move_cursor(first)
            tree.scroll_home(animate=False, immediate=True, force=True)
            self._show(first.data)
        tree.focus()

    def _short(self, path: str) -> str:
        """A store's name in the list: its project dir's name for a store under
        ``<base>/projects/``, else the path with the home folder as ``~``."""
        base = str(self.locations.user_base_dir / "projects") + "/"
        if path.startswith(base) and path.endswith("/memory") and path.count("/") == base.count("/") + 1:
            return path[len(base) : -len("/memory")]
        home = str(home_dir())
        return "~" + path[len(home) :] if path.startswith(home + "/") else path

    @on(Tree.NodeHighlighted, "#stores-tree")
    def _highlight(self, event: Tree.NodeHighlighted[Row]) -> None:
        self._show(event.node.data)

    def _show(self, row: Row) -> None:
        out = Text()
        muted = tone("$muted")
        if isinstance(row, StoreFinding):
            out.append(f"{row.code}\n", style=severity_style(row.severity))
            out.append(visible(row.message) + "\n\n")
            for e in row.evidence:
                out.append(f"evidence  session {visible(e.session)}  {visible(e.date)}  {visible(e.entrypoint or '?')}\n          {visible(e.cwd or '?')}\n          {visible(e.transcript)}\n", style=muted)
            for fix in row.fixes:
                out.append("\nfix  ", style="bold")
                out.append(visible(fix.text) + "\n")
                if fix.command:
                    out.append(f"     {visible(fix.command)}\n", style=tone("$success"))
            if any(fix.merge is not None or fix.setting is not None for fix in row.fixes):
                out.append("\nf previews the fix here.", style=muted)
        elif isinstance(row, Store):
            out.append(visible(row.path) + "\n", style="bold")
            out.append(f"keyed by  {visible(row.keyed)}\n")
            out.append(f"holds     {counted(row.memories, 'memory', 'memories') if row.exists else 'does not exist'}\n")
            for label, refs in (("read by", row.readers), ("written by", row.writers)):
                for i, r in enumerate(refs[-6:]):
                    files = f"  wrote {', '.join(visible(f.rsplit('/', 1)[-1]) for f in r.files[:3])}" if r.files else ""
                    out.append(f"{label if i == 0 else '':<10}{visible(r.session[:8])}  {visible(r.date)}  {visible(r.cwd or '?')}{files}\n")
        elif isinstance(row, SessionCost):
            out.append(f"session {visible(row.session)}\n", style="bold")
            out.append(f"{visible(row.cwd or '?')}\n\n", style=muted)
            for a in row.agents:
                who = "the session" if a.agent is None else f"{visible(a.agent_type or '?')} {visible(a.agent[:8])}"
                out.append(f"{who:<28} {counted(a.loads, 'load')}  {a.tokens} tokens\n")
            out.append(f"\ntotal {row.total} tokens", style="bold")
        self.query_one("#stores-item", Static).update(out)

    def _merge_args(self) -> tuple[Path, Path, bool] | None:
        """The merge the selection asks for: a finding's own merge fix (source, destination, copy — from inside a moved worktree it runs toward the main
        checkout's store); a store other than the one read, into the one read (a folder in the
        repository is copied, never emptied: git tracks it)."""
        node = self.query_one("#stores-tree", Tree).cursor_node
        row = node.data if node is not None else None
        if isinstance(row, StoreFinding):
            merge = next((fix.merge for fix in row.fixes if fix.merge is not None), None)
            return None if merge is None else (Path(merge[0]), Path(merge[1]), merge[2])
        if isinstance(row, Store) and "reads" not in row.roles:
            return Path(row.path), self.locations.memory_dir, "committed" in row.roles
        return None

    def action_merge(self) -> None:
        args = self._merge_args()
        if args is None:
            self.notify("Select a store other than the one read (or a finding that offers a merge).", severity="warning")
            return
        src, dst, copy = args
        try:
            merge = plan_merge(src, dst, home=home_dir(), copy=copy)
        except (MergeError, OSError) as exc:
            self.notify(str(exc), title="Nothing to merge", severity="warning")
            return

        def go(ok: bool | None) -> None:
            if ok:
                self.query_one("#stores-tree", Tree).loading = True
                self.apply(merge)

        self.app.push_screen(PlanPreview(merge.plan), go)

    def action_fix(self) -> None:
        node = self.query_one("#stores-tree", Tree).cursor_node
        row = node.data if node is not None else None
        if not isinstance(row, StoreFinding):
            self.notify("Select a finding (its fix is in the detail).", severity="warning")
            return
        for fix in row.fixes:
            if fix.merge is not None:
                self.action_merge()
                return
            if fix.setting is not None:
                try:
                    change = plan_setting(Path(fix.setting["file"]), fix.setting["key"], fix.value)
                except (SettingEditError, OSError) as exc:
                    self.notify(str(exc), title="Not changed", severity="warning")
                    return

                def go(ok: bool | None, change: SettingChange = change) -> None:
                    if ok:
                        self.query_one("#stores-tree", Tree).loading = True
                        self.apply_change(change)

                self.app.push_screen(PlanPreview(setting_plan(change)), go)
                return
        self.notify("This finding's fix is not one memtui makes: its command is in the detail.", severity="warning")

    def action_undo(self) -> None:
        loc = self.locations
        try:
            found = [c for c in undo_candidates(loc.state_dir, loc.memory_dir, home_dir(), list(loc.settings.paths.values())) if c[0] != loc.memory_dir]
        except OSError as exc:
            self.notify(str(exc), title="Undo", severity="error")
            return
        if not found:
            self.notify("No merge or setting made from here to undo (the Memories pane's u undoes edits).", severity="warning")
            return
        root, journal, entry = found[0]
        try:
            plan = undo_plan(root, journal, entry.id)
        except (ConflictError, EditError, OSError) as exc:
            self.notify(f"{exc}. Nothing was written.", title="Undo stops here", severity="warning", timeout=12)
            return

        def go(ok: bool | None) -> None:
            if ok:
                self.query_one("#stores-tree", Tree).loading = True
                self.undo_change(root, journal, entry)

        self.app.push_screen(PlanPreview(plan), go)

    @work(thread=True, exclusive=True, exit_on_error=False, group="stores-merge")
    def undo_change(self, root: Path, journal: Journal, entry: JournalEntry) -> None:
        """Revert a merge or a setting off the UI thread."""
        try:
            done = undo_candidate(root, journal, entry, self.locations.memory_dir, system_now())
        except (ConflictError, ApplyError, EditError, OSError) as exc:
            raise WorkFailed("Not undone", str(exc)) from exc
        self.post_message(self.Merged(done))

    @work(thread=True, exclusive=True, exit_on_error=False, group="stores-merge")
    def apply_change(self, change: SettingChange) -> None:
        """Write a setting off the UI thread."""
        try:
            entry = apply_setting(change, self.locations.state_dir, system_now())
        except (ConflictError, ApplyError, EditError, OSError) as exc:
            raise WorkFailed("Not changed", str(exc)) from exc
        self.post_message(self.Merged(entry))

    @work(thread=True, exclusive=True, exit_on_error=False, group="stores-merge")
    def apply(self, merge: MergePlan) -> None:
        """Write the merge off the UI thread."""
        try:
            entry = apply_merge(merge, self.locations.state_dir, system_now())
        except (ConflictError, ApplyError, EditError, OSError) as exc:
            raise WorkFailed("Not merged", str(exc)) from exc
        self.post_message(self.Merged(entry))

    @on(Merged)
    def _merged(self, message: Merged) -> None:
        self.changed = True
        undoing = message.entry.undoes is not None
        self.notify(message.entry.title + ("" if undoing else "  ·  u here (or `memtui undo`) reverts it"), title="Undone" if undoing else "Applied")
        loc = self.locations  # a setting may have moved the store or switched auto memory: read it again
        flag = loc.settings.paths.get("flag")
        self.locations = resolve_locations(
            loc.flavor,
            loc.project_root,
            memory_dir=loc.memory_dir if loc.memory_dir_source == "option" else None,
            flag_settings=str(flag) if flag is not None and flag.is_file() else None,
        )
        self.action_rerun()

    def action_rerun(self) -> None:
        self.query_one("#stores-tree", Tree).loading = True
        self.run_audit()

    def action_close(self) -> None:
        self.dismiss(self.changed)


__all__ = ["StoresScreen"]
