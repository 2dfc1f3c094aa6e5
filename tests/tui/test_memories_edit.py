"""Editing from the Memories pane: re-type, rename, delete/restore, undo, conflicts, live reload.

Every change goes through the core write path; these tests check what lands on disk and in the
index, with expected bytes written by hand.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest
from textual.message import Message
from textual.notifications import Notify
from textual.pilot import Pilot
from textual.screen import Screen
from textual.widgets import Input, Static, TextArea
from textual.worker import WorkerFailed

from support.pilot import plain, run_from_palette, settle, wait_until

from memtui.tui.app import MemtuiApp
from memtui.tui.dialogs import ConflictDialog, DiscardDialog, EditorScreen, NewMemoryDialog, PlanPreview, TextPrompt, TrashDialog, TypePicker
from memtui.tui.memories import MemoriesPane


def memory_dir(app: MemtuiApp) -> Path:
    return app.locations.memory_dir


async def select(app: MemtuiApp, pilot: Pilot[None], relpath: str) -> None:
    pane = app.query_one(MemoriesPane)
    rows = [e.relpath for e in pane.shown]
    table = app.query_one("#memories-table")
    table.move_cursor(row=rows.index(relpath))  # type: ignore[attr-defined]
    await pilot.pause()
    assert pane.selected_entry() is not None and pane.selected_entry().relpath == relpath  # type: ignore[union-attr]


async def test_retype_lifts_the_nested_type_and_keeps_every_other_byte(make_app: Callable[..., MemtuiApp]) -> None:
    app = make_app()
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        await select(app, pilot, "feedback_nested.md")
        await pilot.press("y")
        await pilot.pause()
        assert isinstance(app.screen, TypePicker)
        await pilot.press("2")  # feedback
        await pilot.pause()
        # the change is shown first, as delete and rename show theirs
        assert isinstance(app.screen, PlanPreview)
        assert "+type: feedback" in app.screen.plan.diff()
        assert (memory_dir(app) / "feedback_nested.md").read_text().count("type: feedback") == 1  # not written yet
        await pilot.press("y")
        await settle(pilot)
        # the metadata block held only `type`, so it goes; `type` is appended at the end of the block
        assert (memory_dir(app) / "feedback_nested.md").read_text() == (
            "---\nname: Squash merges\ndescription: One commit per pull request\ntype: feedback\n---\n\n"
            "Squash every PR.\n\n**Why:** bisect stays clean.\n\n**How to apply:** use the squash button.\n"
        )
        entry = app.query_one(MemoriesPane).selected_entry()
        assert entry is not None and entry.relpath == "feedback_nested.md" and entry.type == "feedback"


async def test_rename_moves_the_file_and_its_index_link(make_app: Callable[..., MemtuiApp]) -> None:
    app = make_app()
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        await select(app, pilot, "user_role.md")
        await pilot.press("m")
        await pilot.pause()
        prompt = app.screen.query_one(Input)
        prompt.value = "user_go_engineer.md"
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, PlanPreview)
        await pilot.press("y")
        await settle(pilot)
        assert not (memory_dir(app) / "user_role.md").exists()
        assert (memory_dir(app) / "user_go_engineer.md").read_text().startswith("---\nname: Role\n")
        assert (memory_dir(app) / "MEMORY.md").read_text().splitlines()[0] == "- [Role](user_go_engineer.md) — Go backend engineer"
        entry = app.query_one(MemoriesPane).selected_entry()
        assert entry is not None and entry.relpath == "user_go_engineer.md"


async def open_rename(app: MemtuiApp, pilot: Pilot[None], relpath: str) -> TextPrompt:
    """The rename dialog (``m``) on ``relpath``, once the list is up."""
    await settle(pilot)
    await select(app, pilot, relpath)
    await pilot.press("m")
    await pilot.pause()
    prompt = app.screen
    assert isinstance(prompt, TextPrompt)
    return prompt


async def test_an_invalid_new_name_keeps_the_rename_dialog_with_the_name_and_the_reason(make_app: Callable[..., MemtuiApp]) -> None:
    app = make_app()
    async with app.run_test(size=(120, 36)) as pilot:
        prompt = await open_rename(app, pilot, "user_role.md")
        assert "enter renames · esc cancels" in plain_text(prompt)
        prompt.query_one(Input).value = "user_go_engineerMD"
        await pilot.press("enter")
        await pilot.pause()
        assert app.screen is prompt and prompt.query_one(Input).value == "user_go_engineerMD"  # nothing lost
        assert "'user_go_engineerMD' must end in .md" in str(prompt.query_one("#prompt-error", Static).render())
        assert (memory_dir(app) / "user_role.md").exists()
        prompt.query_one(Input).value = ""  # emptied: said, not a silent close
        await pilot.press("enter")
        await pilot.pause()
        assert app.screen is prompt and "a file name is required" in str(prompt.query_one("#prompt-error", Static).render())
        prompt.query_one(Input).value = "user_go_engineer.md"  # corrected: on to the preview
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, PlanPreview)


def plain_text(screen: Screen[object]) -> str:
    return " ".join(str(w.render()) for w in screen.query(Static))


async def test_delete_goes_to_the_trash_and_restore_brings_back_file_and_index_line(make_app: Callable[..., MemtuiApp]) -> None:
    app = make_app()
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        original = (memory_dir(app) / "feedback_terse.md").read_bytes()
        index_before = (memory_dir(app) / "MEMORY.md").read_text()
        await select(app, pilot, "feedback_terse.md")
        await pilot.press("d")
        await pilot.pause()
        assert isinstance(app.screen, PlanPreview)
        await pilot.press("y")
        await settle(pilot)
        assert not (memory_dir(app) / "feedback_terse.md").exists()
        assert "feedback_terse.md" not in (memory_dir(app) / "MEMORY.md").read_text()
        # the trash lives in memtui's state dir, never inside the memory dir
        assert not any(p.name.startswith("feedback_terse") for p in memory_dir(app).rglob("*"))
        await pilot.press("z")
        await pilot.pause()
        assert isinstance(app.screen, TrashDialog)
        await pilot.press("enter")
        await settle(pilot)
        assert (memory_dir(app) / "feedback_terse.md").read_bytes() == original
        restored_index = (memory_dir(app) / "MEMORY.md").read_text()
        assert sorted(restored_index.splitlines()) == sorted(index_before.splitlines())


async def test_undo_reverts_the_last_change(make_app: Callable[..., MemtuiApp]) -> None:
    app = make_app()
    seen: list[Message] = []
    async with app.run_test(size=(120, 36), message_hook=seen.append) as pilot:
        await settle(pilot)
        original = (memory_dir(app) / "feedback_nested.md").read_bytes()
        await select(app, pilot, "feedback_nested.md")
        await pilot.press("y", "2", "y")  # re-type, feedback, apply
        await settle(pilot)
        assert (memory_dir(app) / "feedback_nested.md").read_bytes() != original
        await pilot.press("u")
        await pilot.pause()
        assert isinstance(app.screen, PlanPreview)
        await pilot.press("y")
        await settle(pilot)
        assert (memory_dir(app) / "feedback_nested.md").read_bytes() == original
        # after an undo the notice says it was undone, and what u does now: here nothing (no "u to undo" it)
        last = [m.notification for m in seen if isinstance(m, Notify)][-1]
        assert last.title == "Undone"
        assert not last.message.startswith("Undo:") and last.message.endswith("nothing before it to undo")  # the only change


async def test_undo_blocked_by_a_later_outside_change_says_how_to_reach_older_changes(make_app: Callable[..., MemtuiApp]) -> None:
    """u when the last change's file was changed on disk since: pressing u again would meet the
    same change, so the notice names the CLI's way to an older one and writes nothing."""
    app = make_app()
    seen: list[Message] = []
    async with app.run_test(size=(120, 36), message_hook=seen.append) as pilot:
        await settle(pilot)
        await select(app, pilot, "feedback_nested.md")
        await pilot.press("y", "2", "y")  # re-type, feedback, apply
        await settle(pilot)
        path = memory_dir(app) / "feedback_nested.md"
        path.write_text(path.read_text() + "\nChanged outside memtui.\n")
        changed = path.read_bytes()
        await pilot.press("u")
        await pilot.pause()
        assert not isinstance(app.screen, PlanPreview)
        last = [m.notification for m in seen if isinstance(m, Notify)][-1]
        assert last.title == "Undo stops here"
        assert "memtui undo ID" in last.message and "try again" not in last.message
        assert path.read_bytes() == changed


async def test_in_app_edit_saves_atomically(make_app: Callable[..., MemtuiApp]) -> None:
    app = make_app()
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        await select(app, pilot, "reference_grafana.md")
        await pilot.press("e")
        await pilot.pause()
        assert isinstance(app.screen, EditorScreen)
        area = app.screen.query_one(TextArea)
        area.text = area.text.replace("panel p95", "panel p99")
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert "panel p99" in (memory_dir(app) / "reference_grafana.md").read_text()
        assert not [p for p in memory_dir(app).iterdir() if p.name.startswith(".memtui-")]
        # the save is confirmed in words
        assert any(n.title == "Saved" and "reference_grafana.md" in n.message for n in app._notifications)


async def test_saving_over_an_external_change_asks_and_keep_mine_keeps_a_backup(make_app: Callable[..., MemtuiApp]) -> None:
    app = make_app()
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        path = memory_dir(app) / "reference_grafana.md"
        await select(app, pilot, "reference_grafana.md")
        await pilot.press("e")
        await pilot.pause()
        # meanwhile the agent rewrites the file
        theirs = path.read_text().replace("panel p95", "panel p50")
        path.write_text(theirs)
        area = app.screen.query_one(TextArea)
        area.text = area.text.replace("panel p95", "panel p99")
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert isinstance(app.screen, ConflictDialog)
        assert "panel p50" in path.read_text()  # nothing overwritten silently
        await pilot.press("d")  # diff first
        await pilot.pause()
        assert isinstance(app.screen, ConflictDialog) and app.screen.diff is not None
        assert "-Board `ingest-latency`, panel p50." in app.screen.diff
        assert "+Board `ingest-latency`, panel p99." in app.screen.diff
        await pilot.press("k")  # keep mine
        await settle(pilot)
        assert "panel p99" in path.read_text()
        # the agent's version is the backup: undo brings it back
        await pilot.press("u")
        await pilot.pause()
        await pilot.press("y")
        await settle(pilot)
        assert path.read_text() == theirs


async def test_live_reload_picks_up_a_memory_written_outside(make_app: Callable[..., MemtuiApp]) -> None:
    app = make_app(watch=True)
    async with app.run_test(size=(120, 36)) as pilot:
        pane = app.query_one(MemoriesPane)
        await wait_until(pilot, lambda: len(pane.shown) == 5, what="the first scan")
        await wait_until(pilot, lambda: any(w.is_running for w in app.workers if w.group == "memories-watch"), what="the watcher runs")
        # the watcher may start listening a moment after its worker runs: the agent writes
        # again (a new version each time) until the pane shows the file
        path = memory_dir(app) / "project_new.md"
        for attempt in range(10):
            path.write_text(f"---\nname: New\ndescription: Written by the agent ({attempt})\ntype: project\n---\nx\n")
            try:
                await wait_until(pilot, lambda: "project_new.md" in [e.relpath for e in pane.shown], timeout=2.0, what="the new memory listed")
                break
            except AssertionError:
                continue
        assert "project_new.md" in [e.relpath for e in pane.shown]


async def test_a_state_dir_inside_the_memory_dir_is_a_message_not_a_crash(make_app: Callable[..., MemtuiApp]) -> None:
    app = make_app()
    app.locations = replace(app.locations, state_dir=app.locations.memory_dir / ".memtui")
    async with app.run_test(size=(120, 36)) as pilot:
        try:
            await settle(pilot)
        except WorkerFailed:  # the Dream pane's gate check refuses this state dir too (and says so)
            await pilot.pause()
        before = sorted(p.name for p in memory_dir(app).iterdir())
        for key in ("z", "I", "o", "y", "2"):  # trash, inbox, source, re-type (then pick a type)
            await pilot.press(key)
            await pilot.pause()
        assert app.is_running
        assert sorted(p.name for p in memory_dir(app).iterdir()) == before  # nothing written there


async def test_escape_leaves_the_editor_and_asks_only_when_the_text_changed(make_app: Callable[..., MemtuiApp]) -> None:
    app = make_app()
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        path = memory_dir(app) / "reference_grafana.md"
        original = path.read_bytes()
        await select(app, pilot, "reference_grafana.md")
        await pilot.press("e")
        await pilot.pause()
        assert isinstance(app.screen, EditorScreen)
        await pilot.press("escape")  # nothing changed: straight back
        await pilot.pause()
        assert not isinstance(app.screen, EditorScreen) and app.focused is app.query_one("#memories-table")
        await pilot.press("e")
        await pilot.pause()
        await pilot.press("x")  # typed into the text
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, DiscardDialog)
        await pilot.press("escape")  # keep editing: the edit is still there
        await pilot.pause()
        assert isinstance(app.screen, EditorScreen) and app.screen.query_one(TextArea).text == "x" + original.decode()
        await pilot.press("escape", "y")  # discard
        await settle(pilot)
        assert not isinstance(app.screen, (EditorScreen, DiscardDialog))
        assert path.read_bytes() == original


async def test_the_palette_cancels_the_editor(make_app: Callable[..., MemtuiApp]) -> None:
    app = make_app()
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        await select(app, pilot, "reference_grafana.md")
        await pilot.press("e")
        await pilot.pause()
        await pilot.press("x")
        await run_from_palette(pilot, "Editor: cancel")
        assert isinstance(app.screen, DiscardDialog)
        await pilot.press("y")
        await settle(pilot)
        assert not isinstance(app.screen, EditorScreen)
        assert (memory_dir(app) / "reference_grafana.md").read_text().startswith("---\nname: Latency board")


async def test_saving_an_edit_that_breaks_the_frontmatter_shows_the_loss_and_asks(make_app: Callable[..., MemtuiApp]) -> None:
    app = make_app()
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        path = memory_dir(app) / "reference_grafana.md"
        original = path.read_text()
        await select(app, pilot, "reference_grafana.md")
        await pilot.press("e")
        await pilot.pause()
        await pilot.press("o", "o", "p", "s")  # typed above the opening ---
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert isinstance(app.screen, PlanPreview)
        losses = plain(app.screen, "#plan-losses")
        assert "name “Latency board”: the agent sees no name" in losses
        assert "type reference: the memory becomes untyped" in losses
        assert path.read_text() == original  # nothing written yet
        await pilot.press("escape")  # cancel: back to the editor, the text kept
        await pilot.pause()
        assert isinstance(app.screen, EditorScreen) and app.screen.query_one(TextArea).text == "oops" + original
        await pilot.press("ctrl+s")
        await pilot.pause()
        await pilot.press("y")  # save anyway
        await settle(pilot)
        assert path.read_text() == "oops" + original


async def test_reload_in_the_conflict_dialog_asks_before_dropping_the_edit(make_app: Callable[..., MemtuiApp]) -> None:
    app = make_app()
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        path = memory_dir(app) / "reference_grafana.md"
        await select(app, pilot, "reference_grafana.md")
        await pilot.press("e")
        await pilot.pause()
        theirs = path.read_text().replace("panel p95", "panel p50")
        path.write_text(theirs)  # meanwhile the agent rewrites the file
        area = app.screen.query_one(TextArea)
        area.text = area.text.replace("panel p95", "panel p99")
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert isinstance(app.screen, ConflictDialog)
        await pilot.press("r")
        await pilot.pause()
        assert isinstance(app.screen, DiscardDialog)  # asked, nothing dropped yet
        await pilot.press("escape")  # back: the choice again, the edit still there
        await pilot.pause()
        assert isinstance(app.screen, ConflictDialog)
        await pilot.press("escape")  # back to editing
        await pilot.pause()
        assert isinstance(app.screen, EditorScreen) and "panel p99" in app.screen.query_one(TextArea).text
        await pilot.press("ctrl+s")
        await pilot.pause()
        await pilot.press("r", "y")  # drop and reload
        await settle(pilot)
        assert not isinstance(app.screen, (ConflictDialog, DiscardDialog, EditorScreen))
        assert path.read_text() == theirs
        entry = app.query_one(MemoriesPane).selected_entry()
        assert entry is not None and "panel p50" in entry.memory.text


async def new_memory_editor(app: MemtuiApp, pilot: Pilot[None]) -> EditorScreen:
    """``n``, then a feedback memory named "Deploy day": the editor on its draft."""
    await pilot.press("n")
    await pilot.pause()
    dialog = app.screen
    assert isinstance(dialog, NewMemoryDialog)
    dialog.query_one("#new-name", Input).value = "Deploy day"
    dialog.query_one("#new-description", Input).value = "Deploys go out on Mondays"
    dialog.query_one("#new-description", Input).focus()
    await pilot.press("enter")
    await pilot.pause()
    assert isinstance(app.screen, EditorScreen)
    return app.screen


async def test_new_opens_the_template_in_the_editor_and_writes_nothing_until_the_body_is_written(make_app: Callable[..., MemtuiApp]) -> None:
    app = make_app()
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        index = memory_dir(app) / "MEMORY.md"
        index_before = index.read_text()
        editor = await new_memory_editor(app, pilot)
        area = editor.query_one(TextArea)
        assert area.text == (
            "---\nname: Deploy day\ndescription: Deploys go out on Mondays\ntype: feedback\n---\n\n"
            "The rule, in one or two sentences.\n\n**Why:** what happened that made it a rule.\n\n"
            "**How to apply:** when and how to follow it.\n"
        )
        assert not (memory_dir(app) / "feedback_deploy_day.md").exists() and index.read_text() == index_before
        await pilot.press("ctrl+s")  # the body is still the template: refused, the editor stays
        await pilot.pause()
        assert isinstance(app.screen, EditorScreen)
        assert any("still the template" in n.message for n in app._notifications)
        assert not (memory_dir(app) / "feedback_deploy_day.md").exists() and index.read_text() == index_before
        body = "Deploy on Mondays only.\n\n**Why:** Friday deploys broke twice.\n\n**How to apply:** wait for Monday.\n"
        area = app.screen.query_one(TextArea)
        area.text = area.text.split("---\n\n")[0] + "---\n\n" + body
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert not isinstance(app.screen, EditorScreen)
        assert (memory_dir(app) / "feedback_deploy_day.md").read_text() == (
            "---\nname: Deploy day\ndescription: Deploys go out on Mondays\ntype: feedback\n---\n\n" + body
        )
        assert "- [Deploy day](feedback_deploy_day.md) — Deploys go out on Mondays" in index.read_text()
        assert any(n.title == "Created" for n in app._notifications)


async def test_escape_on_an_untouched_new_memory_drops_it_without_asking(make_app: Callable[..., MemtuiApp]) -> None:
    app = make_app()
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        before = sorted(p.name for p in memory_dir(app).iterdir())
        await new_memory_editor(app, pilot)
        await pilot.press("escape")
        await settle(pilot)
        assert not isinstance(app.screen, (EditorScreen, DiscardDialog))
        assert sorted(p.name for p in memory_dir(app).iterdir()) == before


LATIN1 = b"---\nname: x\ndescription: y\ntype: user\n---\ncaf\xe9\n"


async def test_a_memory_that_is_not_utf8_is_refused_before_the_editor_opens(make_app: Callable[..., MemtuiApp]) -> None:
    app = make_app()
    (memory_dir(app) / "user_cafe.md").write_bytes(LATIN1)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        await select(app, pilot, "user_cafe.md")
        for key in ("e", "E"):  # the app's editor and $EDITOR alike
            await pilot.press(key)
            await wait_until(pilot, lambda: any(n.title == "Not editable here" for n in app._notifications), what="the refusal")
            assert not isinstance(app.screen, EditorScreen)
            assert [n.message for n in app._notifications if n.title == "Not editable here"][-1] == (
                "user_cafe.md: it is not valid UTF-8 text (byte 0xE9 at line 6); memtui will not edit it, to keep its bytes. "
                "Convert it to UTF-8 first, e.g. iconv -f latin1 -t utf-8."
            )
            app.clear_notifications()
        assert (memory_dir(app) / "user_cafe.md").read_bytes() == LATIN1


async def test_a_new_memory_not_written_at_the_index_cap_preview_goes_back_to_the_editor_with_its_text(make_app: Callable[..., MemtuiApp]) -> None:
    app = make_app()
    index = memory_dir(app) / "MEMORY.md"
    index.write_text("".join(f"- [Note {i}](note_{i}.md) — n\n" for i in range(200)))  # at the agent's 200-line cap
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        editor = await new_memory_editor(app, pilot)
        area = editor.query_one(TextArea)
        text = area.text.split("---\n\n")[0] + "---\n\nDeploy on Mondays only.\n"
        area.text = text
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: isinstance(app.screen, PlanPreview), what="the index-cap warning")
        assert app.screen.plan.index_overflow
        await pilot.press("n")  # not written
        await wait_until(pilot, lambda: isinstance(app.screen, EditorScreen), what="the editor again")
        assert app.screen.query_one(TextArea).text == text
        assert not (memory_dir(app) / "feedback_deploy_day.md").exists()


@pytest.mark.parametrize("size", [(120, 36), (80, 24)])
async def test_a_long_rename_error_is_shown_whole(make_app: Callable[..., MemtuiApp], size: tuple[int, int]) -> None:
    app = make_app()
    async with app.run_test(size=size) as pilot:
        prompt = await open_rename(app, pilot, "user_role.md")
        name = "user_role_a_much_longer_name_about_the_backend_engineer_who_writes_go_daily.mdx"
        prompt.query_one(Input).value = name
        await pilot.press("enter")
        await pilot.pause()
        error = prompt.query_one("#prompt-error", Static)
        said = f"'{name}' must end in .md (the agent reads only .md files)"
        assert str(error.render()) == said
        # every line of it is on screen: as many rows as it takes at the error's width
        assert error.size.height >= -(-len(said) // error.size.width) > 1


async def test_q_closes_the_trash(make_app: Callable[..., MemtuiApp]) -> None:
    app = make_app()
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        await pilot.press("z")
        await wait_until(pilot, lambda: isinstance(app.screen, TrashDialog), what="the trash")
        await pilot.press("q")
        await wait_until(pilot, lambda: not isinstance(app.screen, TrashDialog), what="the trash closed")
        assert app.is_running
