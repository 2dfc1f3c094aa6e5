"""Key to screen: how long the keys a newcomer found slow take, from the key to the screen.

``python benchmarks/keys_bench.py [--runs 5]``

Each run builds a fresh app (the first press is what a user feels) on the small memory dir the
app tests use (``tests/support/memories.py``, five memories, a temp HOME), at 120×36, and times
a key from ``pilot.press`` to the first and to the last screen update after it (updates read
where the app hands them to the terminal driver, ``App._display``; the last within 1.5 s).
Keys: ``?`` (the key panel), ``3`` (switching to Recall, first time), ``1`` then ``enter`` on
the first finding (the Cascade pane's jump to its line), ``4``, ``d`` then ``x`` (discarding
the plan of a dry run in the Dream pane).

Also the command line: ``memtui recall --selector claude`` with no API key against the same
command with ``--selector lexical`` (fresh interpreters, alternating).

Baseline, measured in the same process alternating with each run: a minimal Textual app
whose key swaps the text of a ``Static`` (the floor of key → screen on this machine now).
Prints a Markdown table of medians with the load average.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))


async def timed(app: Any, prepare: list[str], key: str, size: tuple[int, int] = (120, 36)) -> tuple[float, float]:
    """(first, last) screen update after ``key``, in ms, once ``prepare`` keys settled."""
    from textual.lazy import Lazy

    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        while app.query(Lazy):  # the panes mounted after the first refresh
            await pilot.pause(0.02)
        await app.workers.wait_for_complete()
        await pilot.pause()
        for k in prepare:
            await pilot.press(k)
            await pilot.pause()
            await app.workers.wait_for_complete()
            await pilot.pause()
        stamps: list[float] = []
        display = app._display

        def record(screen: Any, renderable: Any) -> None:
            if renderable is not None:
                stamps.append(time.perf_counter())
            display(screen, renderable)

        app._display = record
        await asyncio.sleep(0.2)  # let any pending refresh go out before the key
        stamps.clear()
        t0 = time.perf_counter()
        await pilot.press(key)
        deadline = t0 + 1.5
        while time.perf_counter() < deadline:
            await asyncio.sleep(0.02)
            if stamps and time.perf_counter() - stamps[-1] > 0.3 and not [w for w in app.workers if w.is_running]:
                break
        drawn = [(t - t0) * 1000 for t in stamps if t > t0]
        return (drawn[0], drawn[-1]) if drawn else (float("nan"), float("nan"))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    from textual.app import App, ComposeResult
    from textual.binding import Binding
    from textual.widgets import Static

    from support.memories import NOW, write_memory_dir

    home = Path(tempfile.mkdtemp(prefix="memtui-keys-"))
    os.environ.update(HOME=str(home), MEMTUI_NOW=NOW.isoformat(), MEMTUI_STATE_DIR=str(home / "state"),
                      MEMTUI_MANAGED_DIR=str(home / "managed"))
    for key in [k for k in os.environ if k.startswith("ANTHROPIC_")]:
        del os.environ[key]
    (home / "project").mkdir()
    (home / "project" / "AGENT.md").write_text("See @missing.md for more.\n")  # one finding for enter
    write_memory_dir(home / "memory")

    from memtui.core.places.flavor import AGENT
    from memtui.tui.app import MemtuiApp

    class Floor(App[None]):
        BINDINGS = [Binding("k", "swap", "Swap")]

        def compose(self) -> ComposeResult:
            yield Static("one", id="s")

        def action_swap(self) -> None:
            self.query_one(Static).update("two")

    def memtui() -> MemtuiApp:
        return MemtuiApp.for_project(AGENT, home / "project", memory_dir=home / "memory", watch=False)

    cases = [
        ("`?` key panel (Memories)", [], "question_mark"),
        ("`3` switch to Recall (first time)", [], "3"),
        ("`enter` on a Cascade finding", ["1", "tab"], "enter"),
        ("`x` discarding a dry run's plan (Dream)", ["4", "d"], "x"),
    ]
    rows = []
    for name, prepare, key in cases:
        first, last, base = [], [], []
        for _ in range(args.runs):
            f, l = asyncio.run(timed(memtui(), prepare, key))
            first.append(f)
            last.append(l)
            base.append(asyncio.run(timed(Floor(), [], "k"))[0])
        rows.append((name, statistics.median(first), statistics.median(last), statistics.median(base)))
    # the command line: `recall --selector claude` with no API key vs `--selector lexical`
    # (baseline: the same command, no Claude), each a fresh interpreter, alternating
    import subprocess

    code = ("import sys; from memtui.cli import main; sys.argv = ['memtui', '--memory-dir', %r, 'recall', "
            "'--selector', %r, 'deploy on tuesday']; main()")
    cli: dict[str, list[float]] = {"claude": [], "lexical": []}
    for _ in range(args.runs):
        for selector in cli:
            t0 = time.perf_counter()
            subprocess.run([sys.executable, "-c", code % (str(home / "memory"), selector)], capture_output=True, check=False)
            cli[selector].append((time.perf_counter() - t0) * 1000)
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"runs: {args.runs} per key; load average {load}; {os.cpu_count()} cores\n")
    print("| key | first update | last update | baseline (a Static swapped) | ratio (first) |")
    print("|---|---:|---:|---:|---:|")
    for name, f, l, b in rows:
        print(f"| {name} | {f:.0f} ms | {l:.0f} ms | {b:.0f} ms | {f / b:.1f}× |")
    c, x = statistics.median(cli["claude"]), statistics.median(cli["lexical"])
    print(f"\n`memtui recall --selector claude` with no API key: {c:.0f} ms; baseline `--selector lexical`: {x:.0f} ms ({c / x:.2f}×)")


if __name__ == "__main__":
    main()
