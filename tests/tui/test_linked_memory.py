"""A memory memtui will not write (a link out of the memory dir, not confirmed; a file it read
only the start of) is refused before the editor opens, so no typing is lost."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from support.pilot import wait_until
from tests.tui.test_memories_edit import select

from memtui.tui.app import MemtuiApp
from memtui.tui.dialogs import EditorScreen


async def test_edit_of_a_memory_linked_outside_says_why_before_the_editor_opens(make_app: Callable[..., MemtuiApp], isolated_env: Path) -> None:
    outside = isolated_env / "dotfiles"
    outside.mkdir()
    (outside / "user_dot.md").write_text("---\nname: dot\ndescription: kept in dotfiles\ntype: user\n---\n\nbody\n")
    app = make_app()
    (app.locations.memory_dir / "user_dot.md").symlink_to(outside / "user_dot.md")
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.press("r")  # reload: the link is listed
        from memtui.tui.memories import MemoriesPane

        await wait_until(pilot, lambda: "user_dot.md" in [e.relpath for e in app.query_one(MemoriesPane).shown])
        await select(app, pilot, "user_dot.md")
        await pilot.press("e")
        await pilot.pause()
        assert not isinstance(app.screen, EditorScreen)
        assert any(n.title == "Not editable here" and "memtui links confirm user_dot.md" in n.message for n in app._notifications)
