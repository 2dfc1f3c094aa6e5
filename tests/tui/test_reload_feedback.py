"""Every reload key answers: what was reloaded, and what changed since the last look
("nothing changed" when nothing did) — Memories ``r``, Cascade ``r``, Recall ``ctrl+r``,
Dream ``r``, the doctor's ``r``."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from textual.message import Message
from textual.notifications import Notify
from textual.pilot import Pilot

from support.pilot import settle, wait_until

from memtui.tui.app import MemtuiApp
from memtui.tui.cascade import CascadePane
from memtui.tui.recall import RecallPane

NEW = "---\nname: Deploys\ndescription: Deploys go out on Tuesdays\ntype: project\n---\n\nTuesdays only.\n"


def reloaded(seen: list[Message]) -> list[str]:
    return [m.notification.message for m in seen if isinstance(m, Notify) and m.notification.title == "Reloaded"]


async def next_reload(pilot: Pilot[None], seen: list[Message], *keys: str) -> str:
    """Press ``keys``; the text of the "Reloaded" notice they bring."""
    before = len(reloaded(seen))
    await pilot.press(*keys)
    await wait_until(pilot, lambda: len(reloaded(seen)) > before, what="a Reloaded notice")
    return reloaded(seen)[-1]


async def test_each_reload_key_says_what_it_reloaded_and_what_changed(make_app: Callable[..., MemtuiApp]) -> None:
    app = make_app()
    memory_dir = app.locations.memory_dir
    seen: list[Message] = []
    async with app.run_test(size=(120, 36), message_hook=seen.append) as pilot:
        await settle(pilot)
        # Memories: five memories (support.memories), then one written behind memtui's back
        assert (await next_reload(pilot, seen, "r")).endswith("5 memories in " + str(memory_dir).replace(str(Path.home()), "~") + " · nothing changed")
        (memory_dir / "project_deploys.md").write_text(NEW)
        (memory_dir / "user_role.md").write_text((memory_dir / "user_role.md").read_text() + "Also Rust.\n")
        (memory_dir / "reference_grafana.md").unlink()
        said = await next_reload(pilot, seen, "r")
        assert said.endswith("5 memories in " + str(memory_dir).replace(str(Path.home()), "~")
                              + " · 1 new (project_deploys.md), 1 changed (user_role.md), 1 gone (reference_grafana.md)")

        # Cascade: the project gains an instruction file
        await pilot.press("1")
        await wait_until(pilot, lambda: app.query_one(CascadePane).cascade is not None)
        assert (await next_reload(pilot, seen, "r")).endswith("· nothing changed")
        (app.locations.project_root / "AGENT.md").write_text("Use tabs.\n")
        said = await next_reload(pilot, seen, "r")
        assert said.startswith("cascade of project/ · 1 now loaded (AGENT.md), ")

        # Recall: the memory dir again, and the sessions
        await pilot.press("3")
        await wait_until(pilot, lambda: app.query_one(RecallPane).corpus is not None)
        await settle(pilot)
        assert (await next_reload(pilot, seen, "ctrl+r")) == "5 memories, 0 sessions · nothing changed"
        (memory_dir / "project_deploys.md").unlink()
        assert (await next_reload(pilot, seen, "ctrl+r")) == "4 memories, 0 sessions · 1 gone (project_deploys.md)"

        # Dream: the gates' verdict, and whether it moved
        await pilot.press("escape", "4")
        await settle(pilot)
        said = await next_reload(pilot, seen, "r")
        assert said.startswith("gates and lock checked: ") and said.endswith(" · unchanged")


async def test_the_doctors_rerun_says_how_the_findings_moved(make_app: Callable[..., MemtuiApp]) -> None:
    app = make_app()
    memory_dir = app.locations.memory_dir
    seen: list[Message] = []
    async with app.run_test(size=(120, 36), message_hook=seen.append) as pilot:
        await settle(pilot)
        await pilot.press("D")
        await settle(pilot)
        first = await next_reload(pilot, seen, "r")
        assert first.startswith("doctor re-run: ") and first.endswith(" · nothing changed")
        # a memory without a description: one more warning (description-missing)
        (memory_dir / "user_editor.md").write_text("---\nname: Editor\ntype: user\n---\n\nUses vim.\n")
        second = await next_reload(pilot, seen, "r")
        counts = dict(reversed(part.split(" ")) for part in first.removeprefix("doctor re-run: ").split(" · ")[0].split(", "))
        assert second.endswith(" · was " + ", ".join(f"{counts[s]} {s}" for s in ("error", "warning", "info")))
        assert f"{int(counts['warning']) + 1} warning" in second
