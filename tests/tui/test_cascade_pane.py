"""The Cascade pane, driven with Pilot over a small project built in ``tmp_path``.

The project is a subdirectory ``w/sub`` of a workspace whose own ``AGENT.md`` imports a file
next to it: from ``w/sub`` that import is external, so it waits for approval. ``sub`` has an
import, a conditional rule and a rule whose BOM makes it unconditional, and a sub-folder ``web``
with its own ``AGENT.md`` (nested: it loads when the agent reads a file under ``web/``). HOME is
``tmp_path``, so every path the pane shows is relative to the project or starts with ``~``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from textual.message import Message
from textual.pilot import Pilot
from textual.widgets import ContentSwitcher, OptionList, Static, Tree

from support.pilot import rendered, settle, snapshot_root, type_text, wait_until

from memtui.core.cascade import PREAMBLE
from memtui.core.places.flavor import AGENT
from memtui.tui.app import MemtuiApp
from memtui.tui.cascade import CascadePane, FileNode, ImportDecisionDialog, StepNode

NOW = "2026-11-30T12:00:00+00:00"

FILES: dict[str, str] = {
    ".agent/AGENT.md": "Prefer short answers.\n",
    "w/AGENT.md": "# Workspace\n\nShared conventions: @./conventions.md\n",
    "w/conventions.md": "Makefiles use tabs.\n",
    "w/sub/AGENT.md": "# Sub\n\nSee @docs/guide.md before pushing.\n",
    "w/sub/docs/guide.md": "Run `make test` first.\n",
    "w/sub/.agent/rules/api.md": '---\npaths:\n  - "src/api/**"\n---\nHandlers return JSON errors.\n',
    "w/sub/.agent/rules/bom.md": "\ufeff---\npaths: tests/**\n---\nUse pytest fixtures.\n",
    "w/sub/src/api/users.py": "",
    "w/sub/src/api/orders.py": "",
    "w/sub/web/AGENT.md": "Use pnpm in web.\n",
    "memory/MEMORY.md": "- [Role](user_role.md) — backend engineer\n",
}


def cascade_factory(root: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[[], MemtuiApp]:
    """A factory for the app on ``root/w/sub`` (HOME = ``root``, clock frozen), built the way
    the CLI builds it, without the file watcher."""
    monkeypatch.setenv("MEMTUI_NOW", NOW)
    monkeypatch.setenv("HOME", str(root))
    for rel, text in FILES.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")

    def factory() -> MemtuiApp:
        return MemtuiApp.for_project(AGENT, root / "w" / "sub", memory_dir=root / "memory", watch=False)

    return factory


@pytest.fixture
def cascade_app(isolated_env: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[[], MemtuiApp]:
    """The app on ``tmp_path/w/sub`` (see ``cascade_factory``)."""
    return cascade_factory(tmp_path, monkeypatch)


@pytest.fixture
def fixed_cascade_app(isolated_env: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[], MemtuiApp]]:
    """The app on a root of the same length on every run, for the snapshot: the auto-memory
    text names the memory dir, so its path's length is in the character and token counts the
    pane shows (every path it shows is under HOME, written ``~/…``)."""
    with snapshot_root() as root:
        yield cascade_factory(root, monkeypatch)


def detail(app: MemtuiApp) -> str:
    return rendered(app.query_one("#cascade-detail-text", Static).content)


def tree_lines(app: MemtuiApp) -> list[str]:
    """Every visible tree line: indentation (two spaces a level) and the label's text."""
    tree = app.query_one("#cascade-tree", Tree)
    out: list[str] = []

    def walk(node: Any, depth: int) -> None:
        for child in node.children:
            out.append("  " * depth + str(child.label))
            walk(child, depth + 1)

    walk(tree.root, 0)
    return out


def cursor_file(app: MemtuiApp) -> str | None:
    node = app.query_one("#cascade-tree", Tree).cursor_node
    return node.data.entry.path if node is not None and isinstance(node.data, FileNode) else None


async def open_pane(app: MemtuiApp, pilot: Pilot[None]) -> CascadePane:
    await settle(pilot)
    await pilot.press("1")
    await pilot.pause()
    return app.query_one(CascadePane)


async def read(pilot: Pilot[None], target: str) -> None:
    """Type ``target`` in the reads box (escape first: after a read the box keeps the focus,
    where ``/`` is a character)."""
    await pilot.press("escape", "slash")
    await type_text(pilot, target)
    await pilot.press("enter")
    await settle(pilot)


async def test_tree_lists_layers_and_files_in_load_order_with_markers(cascade_app: Callable[[], MemtuiApp]) -> None:
    app = cascade_app()
    async with app.run_test(size=(120, 36)) as pilot:
        pane = await open_pane(app, pilot)
        assert app.query_one("#panes").active == "cascade"  # type: ignore[attr-defined]
        assert app.focused is app.query_one("#cascade-tree")
        lines = tree_lines(app)
        # layers in order (empty ones named), files under them, imports under their importer
        assert [line.split("  ")[0] for line in lines if not line.startswith(" ")] == [
            "Managed",
            "User",
            "Project",
            "Local",
            "Auto memory",
            "Team memory",
            "Nested",
            "Reads",
        ]
        files = [line.strip() for line in lines if line.startswith("  ")]
        assert files == [
            "● ~/.agent/AGENT.md  21 ch · ~6 tok",
            # HOME is an ancestor of the project: its .agent/AGENT.md is the user file again
            "≡ ~/.agent/AGENT.md  duplicate",
            "● ~/w/AGENT.md  50 ch · ~13 tok  ▲1",
            "! ~/w/conventions.md  pending",
            "● AGENT.md  41 ch · ~11 tok",
            "● docs/guide.md  22 ch · ~6 tok",
            "◇ .agent/rules/api.md  conditional",
            "● .agent/rules/bom.md  44 ch · ~11 tok  ▲1",
            "● MEMORY.md  41 ch · ~11 tok",
            # listed before any read, marked with the read that loads it
            "○ web/AGENT.md  loads when the agent reads a file under web/",
        ]
        assert "Nested  1 file · loads on a read" in lines
        # nesting: the pending import sits under the AGENT.md that imports it
        assert "    ! ~/w/conventions.md  pending" in lines
        assert "    ● docs/guide.md  22 ch · ~6 tok" in lines
        assert pane.cascade is not None and len(pane.cascade.loaded_files) == 6
        summary = rendered(app.query_one("#cascade-summary", Static).content)
        # 120 columns do not hold every label in full: the sizes keep short labels, the words
        # around them go short first
        assert summary.startswith("6 of 9 files · ")
        assert "! 1 pending a/x" in summary and "▲ 2" in summary
        # the total shows its parts: the rows above sum to 21+50+41+22+44+41 = 219 characters;
        # the rest of what the model receives is the preamble and the files' headers
        total = len(pane.cascade.rendered)  # ASCII: characters = UTF-16 units
        # (at 120 columns with a pending import and findings: the short labels and words)
        assert f"files 219 + hdr {total - 219:,} = {total:,} ch" in summary
        legend = rendered(app.query_one("#cascade-legend", Static).content)
        for word in ("● loaded", "◇ conditional", "! pending", "≡ duplicate", "⊘ skipped"):
            assert word in legend


async def test_selecting_a_file_shows_content_reason_and_findings(cascade_app: Callable[[], MemtuiApp]) -> None:
    app = cascade_app()
    async with app.run_test(size=(120, 36)) as pilot:
        await open_pane(app, pilot)
        assert cursor_file(app, ).endswith(".agent/AGENT.md")  # type: ignore[union-attr]
        await pilot.press(*["down"] * 6)  # → docs/guide.md
        await pilot.pause()
        assert cursor_file(app, ).endswith("docs/guide.md")  # type: ignore[union-attr]
        text = detail(app)
        assert "Run `make test` first." in text  # the content, as the model receives it
        assert "imported by" in text and "(line 3)" in text  # the reason
        assert "what the model receives" in text
        await pilot.press("down", "down")  # → the BOM rule
        await pilot.pause()
        text = detail(app)
        assert "Use pytest fixtures." in text  # frontmatter not recognised: sent as text
        assert "unconditional rule (frontmatter-after-bom)" in text
        assert "frontmatter-after-bom" in text and "line 1" in text
        await pilot.press("up")  # → the conditional rule: its patterns and what it would add
        await pilot.pause()
        text = detail(app)
        assert "conditional rule: loads when the agent reads a file matching `src/api`" in text
        assert "what it would add" in text and "Handlers return JSON errors." in text


async def test_reads_add_the_matching_rule_once(cascade_app: Callable[[], MemtuiApp]) -> None:
    app = cascade_app()
    computed: list[CascadePane.Computed] = []

    def hook(message: Message) -> None:
        # the hook sees a message at every widget it bubbles through: keep each once
        if isinstance(message, CascadePane.Computed) and all(m is not message for m in computed):
            computed.append(message)

    async with app.run_test(size=(120, 36), message_hook=hook) as pilot:
        pane = await open_pane(app, pilot)
        await read(pilot, "src/api/users.py")
        assert [[Path(f.path).name for f in s.added] for s in pane.steps] == [["api.md"]]
        assert "conditional rule: `src/api` matches src/api/users.py" in pane.steps[0].added[0].reason
        await read(pilot, "src/api/orders.py")
        assert [[Path(f.path).name for f in s.added] for s in pane.steps] == [["api.md"], []]
        assert pane.targets == ["src/api/users.py", "src/api/orders.py"]
        # every computation posted its steps (one when the pane is shown — none while it was
        # hidden — then one per read); the last has both reads
        assert [len(m.steps) for m in computed] == [0, 1, 2]
        lines = tree_lines(app)
        assert "  read 1 src/api/users.py  +1 file" in lines
        assert "    + .agent/rules/api.md  28 ch · ~7 tok" in lines
        assert "  read 2 src/api/orders.py  adds nothing" in lines
        # the cursor is on the newest read, whose detail says it added nothing new
        node = app.query_one("#cascade-tree", Tree).cursor_node
        assert node is not None and node.data == StepNode(1)
        text = detail(app)
        assert "nothing new" in text
        assert "already in this session's context" in text
        # the conditional rule in the startup part says which read loaded it
        await pilot.press("escape")
        tree = app.query_one("#cascade-tree", Tree)
        rule = next(n for n in _walk(tree.root) if isinstance(n.data, FileNode) and n.data.read is None and n.data.entry.path.endswith("api.md"))
        tree.move_cursor(rule)
        await pilot.pause()
        assert "loaded later by read 1 (src/api/users.py)" in detail(app)
        # c resets to the startup context
        await pilot.press("c")
        await settle(pilot)
        assert pane.steps == [] and pane.targets == []
        assert any("none yet" in line for line in tree_lines(app))


def _walk(node: Any) -> Any:
    for child in node.children:
        yield child
        yield from _walk(child)


async def test_approving_the_pending_import_loads_it(cascade_app: Callable[[], MemtuiApp], isolated_env: Path) -> None:
    app = cascade_app()
    async with app.run_test(size=(120, 36)) as pilot:
        pane = await open_pane(app, pilot)
        assert pane.cascade is not None and [Path(p.path).name for p in pane.cascade.pending_external_imports] == ["conventions.md"]
        await pilot.press("a")
        await pilot.pause()
        dialog = app.screen
        assert isinstance(dialog, ImportDecisionDialog)
        said = " ".join(rendered(s.content) for s in dialog.query(Static))
        assert "~/w/conventions.md" in said  # what will load
        assert "imported by ~/w/AGENT.md, line 3" in said
        await pilot.press("y")
        await settle(pilot)
        assert not isinstance(app.screen, ImportDecisionDialog)
        assert pane.cascade.pending_external_imports == []
        conventions = next(f for f in pane.cascade.files if f.path.endswith("conventions.md"))
        assert conventions.loaded and conventions.status == "loaded"
        assert "● ~/w/conventions.md  19 ch · ~5 tok" in [line.strip() for line in tree_lines(app)]
        assert "Makefiles use tabs." in pane.cascade.rendered
        # recorded in memtui's state dir, keyed on the project
        approvals = json.loads((isolated_env.parent / "state" / "approvals.json").read_text(encoding="utf-8"))
        assert [v["external_imports"] for v in approvals["projects"].values()] == ["approved"]
        # declining asks again and takes it out
        await pilot.press("x")
        await pilot.pause()
        assert isinstance(app.screen, ImportDecisionDialog)
        await pilot.press("y")
        await settle(pilot)
        conventions = next(f for f in pane.cascade.files if f.path.endswith("conventions.md"))
        assert conventions.status == "declined" and not conventions.loaded


async def test_cancelling_the_confirmation_changes_nothing(cascade_app: Callable[[], MemtuiApp], isolated_env: Path) -> None:
    app = cascade_app()
    async with app.run_test(size=(120, 36)) as pilot:
        pane = await open_pane(app, pilot)
        await pilot.press("a")
        await pilot.pause()
        await pilot.press("escape")
        await settle(pilot)
        assert pane.cascade is not None and len(pane.cascade.pending_external_imports) == 1
        assert not (isolated_env.parent / "state" / "approvals.json").exists()


async def test_rendered_view_shows_the_exact_text_and_totals(cascade_app: Callable[[], MemtuiApp]) -> None:
    app = cascade_app()
    async with app.run_test(size=(120, 36)) as pilot:
        pane = await open_pane(app, pilot)
        cascade = pane.cascade
        assert cascade is not None
        await pilot.press("v")
        await pilot.pause()
        assert app.query_one("#cascade-right", ContentSwitcher).current == "cascade-rendered"
        box = app.query_one("#cascade-rendered")
        parts = f"files {cascade.files_chars:,} + headers/preamble {cascade.framing_chars:,} = {cascade.total_chars:,} ch"
        assert box.border_title == f"rendered context · {parts} · ~{cascade.total_tokens_est:,} tok"
        text = app.query_one("#cascade-rendered-text", Static).content
        assert str(text) == cascade.rendered
        assert cascade.rendered.startswith(PREAMBLE)
        summary = rendered(app.query_one("#cascade-summary", Static).content)
        # the line is too long for the labels in full: the short ones, still labelled
        assert f"files {cascade.files_chars:,} + hdr {cascade.framing_chars:,} = {cascade.total_chars:,} ch · ~{cascade.total_tokens_est:,} tok" in summary
        await pilot.press("v")
        await pilot.pause()
        assert app.query_one("#cascade-right", ContentSwitcher).current == "cascade-detail"


async def test_a_finding_jumps_to_its_file_and_line(cascade_app: Callable[[], MemtuiApp]) -> None:
    app = cascade_app()
    async with app.run_test(size=(120, 36)) as pilot:
        await open_pane(app, pilot)
        findings = app.query_one("#cascade-findings", OptionList)
        assert findings.option_count == 3  # warnings first, then the duplicate's info
        await pilot.press("f")
        assert app.focused is findings
        await pilot.press("enter")  # the first: the pending import, in ~/w/AGENT.md line 3
        await pilot.pause()
        assert app.focused is app.query_one("#cascade-tree")
        assert cursor_file(app).endswith("w/AGENT.md")  # type: ignore[union-attr]
        text = detail(app)
        assert "import-external-pending" in text
        assert "▶3 Shared conventions: @./conventions.md" in text  # the source line, marked
        await pilot.press("f", "down", "enter")  # the BOM rule, line 1
        await pilot.pause()
        assert cursor_file(app).endswith("bom.md")  # type: ignore[union-attr]
        assert "▶1 ---" in detail(app)


async def test_palette_reaches_the_pane(cascade_app: Callable[[], MemtuiApp]) -> None:
    app = cascade_app()
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        titles = [c.title for c in app.get_system_commands(app.screen)]
        for title in (
            "Cascade: simulate a read",
            "Cascade: reset reads",
            "Cascade: rendered context",
            "Cascade: approve external imports",
            "Cascade: decline external imports",
            "Cascade: findings",
            "Cascade: reload",
        ):
            assert title in titles
        # from the Memories pane, a palette command brings the Cascade pane up
        command = next(c for c in app.get_system_commands(app.screen) if c.title == "Cascade: rendered context")
        command.callback()
        await pilot.pause()
        assert app.query_one("#panes").active == "cascade"  # type: ignore[attr-defined]
        assert app.query_one("#cascade-right", ContentSwitcher).current == "cascade-rendered"


@pytest.mark.parametrize("size", [(120, 36), (80, 24)], ids=["wide", "narrow"])
def test_cascade_pane_snapshot(snap_compare: Any, fixed_cascade_app: Callable[[], MemtuiApp], size: tuple[int, int]) -> None:
    async def run_before(pilot: Any) -> None:
        await settle(pilot)
        await pilot.press("1")  # the pane computes when first shown, in a worker
        await settle(pilot)

    # the Cascade pane with the BOM rule selected: its finding, reason and content
    assert snap_compare(fixed_cascade_app(), press=["down"] * 8, terminal_size=size, run_before=run_before)


def test_cascade_pane_nested_snapshot(snap_compare: Any, fixed_cascade_app: Callable[[], MemtuiApp]) -> None:
    async def run_before(pilot: Any) -> None:
        await settle(pilot)
        await pilot.press("1")
        await settle(pilot)

    # the nested web/AGENT.md selected: its muted row, when it loads, and what it would add
    assert snap_compare(fixed_cascade_app(), press=["down"] * 14, terminal_size=(120, 36), run_before=run_before)


async def test_a_nested_claude_md_is_listed_before_any_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Claude Code loads sub/CLAUDE.md only when it reads a file under sub/: the pane lists it
    from the start, saying so, with its content as the preview; a read under sub/ loads it."""
    from memtui.core.places.flavor import CLAUDE

    monkeypatch.setenv("MEMTUI_NOW", NOW)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("PATH", "/nonexistent")  # no `claude` to ask for its version
    project = tmp_path / "p"
    (project / "sub").mkdir(parents=True)
    (project / "CLAUDE.md").write_text("Be brief.\n")
    (project / "sub" / "CLAUDE.md").write_text("Use pnpm.\n")
    (project / "sub" / "app.ts").write_text("")
    app = MemtuiApp.for_project(CLAUDE, project, memory_dir=tmp_path / "memory", watch=False)
    async with app.run_test(size=(120, 36)) as pilot:
        pane = await open_pane(app, pilot)
        lines = tree_lines(app)
        assert "Nested  1 file · loads on a read" in lines
        assert "  ○ sub/CLAUDE.md  loads when Claude reads a file under sub/" in lines
        # startup is unchanged: only the project's own CLAUDE.md loads
        assert pane.cascade is not None and [Path(f.path).name for f in pane.cascade.loaded_files] == ["CLAUDE.md"]
        tree = app.query_one("#cascade-tree", Tree)
        row = next(n for n in _walk(tree.root) if isinstance(n.data, FileNode) and n.data.nested)
        tree.move_cursor(row)
        await pilot.pause()
        text = detail(app)
        assert "loads when Claude reads a file under sub/" in text
        assert "what it would add" in text and "Use pnpm." in text
        await read(pilot, "sub/app.ts")
        lines = tree_lines(app)
        # "Use pnpm." is 9 characters, (9 + 3) // 4 = 3 estimated tokens
        assert "  + sub/CLAUDE.md  9 ch · ~3 tok · read 1" in lines
        assert "  read 1 sub/app.ts  +1 file" in lines
        assert "    + sub/CLAUDE.md  9 ch · ~3 tok" in lines


async def test_a_pane_whose_widgets_never_mount_raises_nothing(isolated_env: Path, tmp_path: Path) -> None:
    """The app closing while ``Lazy`` mounts the pane: Textual then skips mounting the pane's
    widgets but still sends the pane its Mount event, and a resize or a computed result may
    still reach it. None of that may fail on a widget that is not there."""
    from textual.app import App
    from textual.widget import Widget

    from memtui.core.places.locations import resolve_locations

    (tmp_path / "p").mkdir()
    locations = resolve_locations(AGENT, tmp_path / "p", memory_dir=tmp_path / "memory")

    class Interrupted(CascadePane):
        async def mount_composed_widgets(self, widgets: list[Widget]) -> None:
            """What Textual does for a pane being removed: its widgets are not mounted."""

    class Host(App[None]):
        def compose(self) -> Any:
            yield Interrupted(locations)

    app = Host()
    async with app.run_test(size=(120, 36)) as pilot:
        pane = app.query_one(CascadePane)
        await pilot.pause()
        pane.narrow = True  # a resize reaching it
        pane.action_reload()  # a computation whose result comes back
        await settle(pilot)
        assert pane.cascade is not None  # the result was kept, nothing drawn
    # run_test re-raises any exception a handler raised


async def test_the_team_memory_layer_says_what_it_is_for_each_flavor(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Claude Code 2.1.332 (as 2.1.328) loads no team memory index: its empty layer says so instead of
    "no files"; the layer's detail says what the layer is, for either flavor."""
    from memtui.core.places.flavor import CLAUDE
    from memtui.tui.widgets.cascade_view import LayerNode

    monkeypatch.setenv("MEMTUI_NOW", NOW)
    monkeypatch.setenv("PATH", "/nonexistent")  # no `claude` to ask for its version
    project = tmp_path / "p"
    project.mkdir()
    (project / "CLAUDE.md").write_text("Be brief.\n")
    memory = tmp_path / "memory"
    (memory / "team").mkdir(parents=True)
    for flavor, label, what in (
        (CLAUDE, "Team memory  not loaded by Claude Code 2.1.332", "Claude Code 2.1.332 loads no team memory at startup"),
        (AGENT, "Team memory  no files", f"memories shared with the team, in {memory / 'team'}/"),
    ):
        app = MemtuiApp.for_project(flavor, project, memory_dir=memory, watch=False)
        async with app.run_test(size=(120, 36)) as pilot:
            await open_pane(app, pilot)
            assert label in tree_lines(app)
            tree = app.query_one("#cascade-tree", Tree)
            node = next(n for n in tree.root.children if isinstance(n.data, LayerNode) and n.data.layer == "teammem")
            tree.move_cursor(node)
            await pilot.pause()
            await wait_until(pilot, lambda: "what" in detail(app))
            assert what in " ".join(detail(app).split())


async def test_approving_for_claude_says_once_that_the_agent_keeps_its_own_answer(tmp_path: Path, isolated_env: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from memtui.core.places.flavor import CLAUDE

    monkeypatch.setenv("MEMTUI_NOW", NOW)
    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / "w" / "sub").mkdir(parents=True)
    (tmp_path / "w" / "conventions.md").write_text("Makefiles use tabs.\n")
    (tmp_path / "w" / "sub" / "CLAUDE.md").write_text("# Sub\n\nShared: @../conventions.md\n")
    (tmp_path / "memory").mkdir()
    app = MemtuiApp.for_project(CLAUDE, tmp_path / "w" / "sub", memory_dir=tmp_path / "memory", watch=False)
    async with app.run_test(size=(120, 36)) as pilot:
        pane = await open_pane(app, pilot)
        assert pane.cascade is not None and len(pane.cascade.pending_external_imports) == 1
        await pilot.press("a")
        await pilot.pause()
        dialog = app.screen
        assert isinstance(dialog, ImportDecisionDialog)
        lines = [rendered(s.content).strip() for s in dialog.query(Static)]
        assert "The agent keeps its own answer for this project in ~/.claude.json; memtui does not change it." in lines
        details = [line for line in lines if "hasClaudeMdExternalIncludesApproved" in line]
        assert len(details) == 1 and details[0].startswith("details:")


async def test_the_cloud_layer_shows_as_placeholders_that_count_for_nothing(tmp_path: Path, isolated_env: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """SPEC §13.1: with CLAUDE_CODE_FETCH_PERSONAL_CLOUD_CONFIGURATION set, Claude Code 2.1.332's
    cloud sessions load a CLAUDE.md and rules right after the user layer; memtui shows two
    cloud-only rows there, which a local run does not load (the counts are the files on disk),
    and the row's detail says which ~/.claude file a cloud file replaces."""
    from memtui.core.places.flavor import CLAUDE

    monkeypatch.setenv("MEMTUI_NOW", NOW)
    monkeypatch.setenv("CLAUDE_CODE_FETCH_PERSONAL_CLOUD_CONFIGURATION", "1")
    (isolated_env / ".claude").mkdir()
    (isolated_env / ".claude" / "CLAUDE.md").write_text("Be terse.\n")
    project = tmp_path / "p"
    project.mkdir()
    (project / "CLAUDE.md").write_text("Be brief.\n")
    app = MemtuiApp.for_project(CLAUDE, project, watch=False)
    async with app.run_test(size=(120, 36)) as pilot:
        await open_pane(app, pilot)
        lines = tree_lines(app)
        user = lines.index(next(line for line in lines if line.startswith("User")))
        assert lines[user + 1 : user + 4] == ["  ● ~/.claude/CLAUDE.md  9 ch · ~3 tok", "  ⊘ cloud: CLAUDE.md  cloud only", "  ⊘ cloud: rules/*.md  cloud only"]
        tree = app.query_one("#cascade-tree", Tree)
        assert str(tree.border_title) == "load order · 2 of 2 loaded"
        node = next(n for n in tree.root.children[1].children if isinstance(n.data, FileNode) and n.data.entry.status == "cloud-only")
        tree.move_cursor(node)
        await pilot.pause()
        await wait_until(pilot, lambda: "why" in detail(app))
        text = " ".join(detail(app).split())
        assert f"a cloud CLAUDE.md replaces {isolated_env / '.claude' / 'CLAUDE.md'}, which is then not loaded" in text
        assert "<personal-cloud-configuration>/.claude/CLAUDE.md" in text
