"""The Memories pane, driven with Pilot: listing, badges, filter, search, preview."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import DataTable, Input, Markdown, Select

from support.pilot import plain, settle, type_text, wait_until

from memtui.tui.app import MemtuiApp
from memtui.tui.memories import MemoriesPane


def listed(app: MemtuiApp) -> list[str]:
    return [e.relpath for e in app.query_one(MemoriesPane).shown]


async def test_lists_every_memory_newest_first(make_app: Callable[[], MemtuiApp]) -> None:
    app = make_app()
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        # ages 0.2, 1.5, 12, 45, 200 days: newest first
        assert listed(app) == [
            "user_role.md",
            "feedback_terse.md",
            "project_freeze.md",
            "reference_grafana.md",
            "feedback_nested.md",
        ]
        table = app.query_one("#memories-table", DataTable)
        assert table.row_count == 5
        # age badges: floor(age) days → today / yesterday / N days ago
        ages = [str(table.get_row_at(i)[1]) for i in range(5)]
        assert ages == ["today", "yesterday", "12 days ago", "45 days ago", "200 days ago"]
        # type badges: the nested type is not recognised, shown as declared + "?"
        types = [str(table.get_row_at(i)[0]).strip() for i in range(5)]
        assert types == ["user", "feedback", "project", "reference", "feedback?"]


async def test_index_gauge_counts(make_app: Callable[[], MemtuiApp]) -> None:
    app = make_app()
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        gauge = plain(app, "#memories-gauge")
        # 3 index lines; 1 dangling (project_gone.md); 3 memories not linked
        assert "3/200 lines" in gauge
        assert "1 dangling" in gauge
        assert "3 unindexed" in gauge
        assert "0 dropped" in gauge


async def test_index_gauge_says_how_much_of_an_index_over_the_cap_was_audited(
    make_app: Callable[[], MemtuiApp], isolated_env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memtui.core.memory import index as index_mod

    monkeypatch.setattr(index_mod, "MAX_INDEX_FILE_BYTES", 4_096)
    index = isolated_env / "memory" / "MEMORY.md"
    # 1,000 lines of 21 bytes: whole lines of the first 4,096 bytes are 195 (4,095 bytes)
    index.write_text("".join(f"- [E{i:04d}](e{i:05d}.md)\n" for i in range(1_000)))
    app = make_app()
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        gauge = plain(app, "#memories-gauge")
        assert "1000/200 lines" in gauge
        assert "audited 4.0 KB of 20.5 KB" in gauge


async def test_type_filter_by_key_and_select(make_app: Callable[[], MemtuiApp]) -> None:
    app = make_app()
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        await pilot.press("t")  # all → user
        await pilot.pause()
        assert listed(app) == ["user_role.md"]
        await pilot.press("t")  # → feedback: only the recognised one
        await pilot.pause()
        assert listed(app) == ["feedback_terse.md"]
        app.query_one("#memories-type", Select).value = "none"
        await pilot.pause()
        assert listed(app) == ["feedback_nested.md"]
        app.query_one("#memories-type", Select).value = "all"
        await pilot.pause()
        assert len(listed(app)) == 5


async def test_two_quick_type_keys_settle_on_the_second_filter(make_app: Callable[[], MemtuiApp]) -> None:
    """`t t` in one burst (both keys before the first filter's Select.Changed is handled): the
    filter moves two steps and stays there — no echo between the key and the select."""
    app = make_app()
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        pane = app.query_one(MemoriesPane)
        changes: list[object] = []
        def seen(value: object) -> None:
            changes.append(value)

        pane.watch(pane, "type_filter", seen, init=False)
        pane.action_cycle_type()  # all → user
        pane.action_cycle_type()  # → feedback, before the select's message for "user" is seen
        for _ in range(10):
            await pilot.pause()
        assert changes == ["user", "feedback"]
        assert pane.type_filter == "feedback" and app.query_one("#memories-type", Select).value == "feedback"
        assert listed(app) == ["feedback_terse.md"]


async def test_incremental_search_over_name_description_and_body(make_app: Callable[[], MemtuiApp]) -> None:
    app = make_app()
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        await pilot.press("slash")
        assert isinstance(app.focused, Input)
        await type_text(pilot, "grafana")  # in the description
        assert listed(app) == ["reference_grafana.md"]
        await type_text(pilot, "bisect", erase=7)  # only in a body
        assert listed(app) == ["feedback_nested.md"]
        await type_text(pilot, "SQUASH pr", erase=6)  # case-insensitive, all terms
        assert listed(app) == ["feedback_nested.md"]
        await type_text(pilot, "zzz")
        assert listed(app) == []
        await wait_until(pilot, lambda: "No memory matches" in plain(app, "#preview-fields"), what="the preview after a pause in the typing", quiet=True)
        await pilot.press("escape")  # out of the box: the search stays
        await pilot.pause()
        assert listed(app) == []
        await pilot.press("escape")  # again: cleared
        await pilot.pause()
        assert len(listed(app)) == 5


async def test_while_the_search_is_typed_the_preview_waits_for_a_pause(make_app: Callable[[], MemtuiApp], monkeypatch: pytest.MonkeyPatch) -> None:
    """Each key lists the matches at once; the preview (a Markdown body to lay out) follows
    once no key came for ``PREVIEW_AFTER_TYPING`` seconds."""
    from textual.containers import VerticalScroll

    from memtui.tui import memories as memories_mod

    monkeypatch.setattr(memories_mod, "PREVIEW_AFTER_TYPING", 2.0)
    app = make_app()
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        preview = app.query_one("#memories-preview", VerticalScroll)
        assert preview.border_title == "user_role.md"  # the newest, under the cursor
        await pilot.press("slash")
        await type_text(pilot, "grafana")
        assert listed(app) == ["reference_grafana.md"]
        assert preview.border_title == "user_role.md"  # not yet
        waited = await wait_until(pilot, lambda: preview.border_title == "reference_grafana.md", what="the preview of the match", quiet=True)
        assert waited >= 1.0


async def test_search_in_a_worker_lists_the_same_and_the_latest_query_wins(make_app: Callable[[], MemtuiApp], monkeypatch: pytest.MonkeyPatch) -> None:
    from memtui.tui import memories as memories_mod

    monkeypatch.setattr(memories_mod, "SYNC_SEARCH_MAX", 0)  # every search through the worker and the index
    app = make_app()
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        await pilot.press("slash")
        await type_text(pilot, "grafana")
        await settle(pilot)
        assert listed(app) == ["reference_grafana.md"]
        await type_text(pilot, "bisect", erase=7)
        await settle(pilot)
        assert listed(app) == ["feedback_nested.md"]
        # three queries typed faster than they are answered: the table shows the last one's
        await type_text(pilot, "zzz", erase=6)
        await type_text(pilot, "squash pr", erase=3)
        await settle(pilot)
        assert listed(app) == ["feedback_nested.md"]
        assert "1 of 5 memories" in str(app.query_one("#memories-table").border_title)
        await type_text(pilot, "zzz", erase=9)
        await settle(pilot)
        assert listed(app) == []
        await wait_until(pilot, lambda: "No memory matches" in plain(app, "#preview-fields"), what="the preview after a pause in the typing", quiet=True)
        await pilot.press("escape")  # out of the search box, the search kept
        await settle(pilot)
        assert listed(app) == []
        await pilot.press("escape")  # again: the search cleared
        await settle(pilot)
        assert len(listed(app)) == 5


async def test_preview_follows_the_cursor(make_app: Callable[[], MemtuiApp]) -> None:
    app = make_app()
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        fields = plain(app, "#preview-fields")
        assert "Backend engineer who writes Go daily" in fields
        await pilot.press("down", "down", "down", "down")  # the 200-day-old nested-type memory
        await pilot.pause()
        fields = plain(app, "#preview-fields")
        assert "Squash merges" in fields
        assert "not recognised by the agent" in fields
        assert "This memory is 200 days old" in fields
        diagnostics = plain(app, "#preview-diagnostics")
        assert "type-nested" in diagnostics
        assert "not-indexed" in diagnostics
        body = app.query_one("#preview-body", Markdown)
        assert "bisect stays clean" in body.source


async def test_missing_memory_dir_is_an_empty_state_not_a_crash(make_app: Callable[[], MemtuiApp], tmp_path: Path) -> None:
    app = make_app()
    app.locations = replace(app.locations, memory_dir=tmp_path / "nope")
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        assert listed(app) == []
        assert "No memories yet" in plain(app, "#preview-fields")


async def test_a_superseded_scan_never_replaces_a_newer_catalog(make_app: Callable[[], MemtuiApp], monkeypatch: pytest.MonkeyPatch) -> None:
    """Latest wins: a scan that started first but finishes last (a slow disk) is dropped."""
    import threading

    from memtui.core.memory import catalog as catalog_module

    app = make_app()
    release = threading.Event()
    calls: list[int] = []

    def slow_first(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        result = catalog_module.load_catalog(*args, **kwargs)  # the dir as it is now
        if len(calls) == 1:
            release.wait(10)  # finishes only after the second scan has been shown
        return result

    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        monkeypatch.setattr("memtui.tui.memories.load_catalog", slow_first)
        await pilot.press("r")  # the first scan reads five memories, then waits
        await wait_until(pilot, lambda: len(calls) == 1, what="the first scan started")
        (app.locations.memory_dir / "project_new.md").write_text("---\nname: New\ndescription: Newer\ntype: project\n---\nx\n")
        await pilot.press("r")  # the second scan sees six
        await wait_until(pilot, lambda: "project_new.md" in listed(app), what="the newer catalog shown")
        release.set()
        await settle(pilot)
        assert "project_new.md" in listed(app) and len(listed(app)) == 6


README = Path(__file__).resolve().parents[2] / "README.md"
# how the README writes a key Textual names otherwise
README_KEY = {"slash": "/", "escape": "esc", "down": "↓"}


def test_every_key_of_the_pane_is_in_the_readme_keys_table() -> None:
    """The Memories section's keys table names every key of the pane (``o`` was missing)."""
    from memtui.tui.pane import own_bindings

    text = README.read_text(encoding="utf-8")
    section = text[text.index("## The Memories pane"):]
    table = section[section.index("| key |"):]
    table = table[: table.index("\n\n")]
    documented = {key for line in table.splitlines() if line.startswith("| `") for key in line.split("|")[1].replace("`", " ").split()}
    missing = [b.key for b in own_bindings(MemoriesPane) if README_KEY.get(b.key, b.key) not in documented]
    assert missing == []


async def test_the_footer_shows_the_source_key(make_app: Callable[[], MemtuiApp]) -> None:
    from textual.widgets._footer import FooterKey

    app = make_app()
    async with app.run_test(size=(200, 36)) as pilot:
        await settle(pilot)
        assert ("o", "Source") in {(k.key, k.description) for k in app.screen.query(FooterKey)}


@pytest.mark.parametrize(("size", "memory_width", "preview_width"), [((120, 36), 28, 39), ((80, 24), 28, 77)], ids=["wide", "narrow"])
async def test_the_name_and_description_column_takes_the_spare_width(make_app: Callable[[], MemtuiApp], size: tuple[int, int], memory_width: int, preview_width: int) -> None:
    """At 120 columns the list takes two thirds of the 118 cells inside the pane's margins (78
    with its border, the preview 39 plus its 1-cell margin): 76 - 2 (border) = 75 inside, less
    the fixed columns (11 + 12 + 10 + 2 = 35), their padding (2 × 5) and 2 for the scrollbar:
    28 cells for the name and description (it was 20). At 80 columns the preview goes below
    and the list is 77 wide: 28 as well."""
    from memtui.tui.widgets.memory_table import MemoryTable

    app = make_app()
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        table = app.query_one(MemoryTable)
        await wait_until(pilot, lambda: table.row_width == table.memory_width(), what="the rows built for the table's width")
        assert table.row_width == memory_width
        assert app.query_one("#memories-preview").region.width == preview_width
        # Role's row: the name, two spaces, the description cut to the 22 cells left
        cell = table.get_row_at(0)[-1]
        assert str(cell) == "Role  Backend engineer who …"
