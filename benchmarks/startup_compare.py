"""Startup of ``memtui ls`` and of the Memories pane on this tree beside another git ref (default
``main``), in one run: does the semantic selector (an embedding model) cost the commands that do
not recall anything?

The other ref is exported with ``git archive`` into a temp dir; both trees run with the same
interpreter and installed libraries, each from its own sources (``PYTHONPATH``) and with its own
state dir, over one synthetic workspace (``benchmarks/generate.py``, seeded). Every sample is a
fresh interpreter, the two trees alternating (so machine load hits both alike), after one untimed
warm-up of each:

- ``ls``: wall time of ``memtui ls --json`` (scan cache warm) end to end;
- ``pane``: wall time from interpreter start until the Memories pane's table has its first rows
  (``MemtuiApp.for_project(AGENT, ..., watch=False)`` under ``run_test``, 120 × 36);
- ``app``: the same first rows, timed from the app's creation (imports done), as
  ``benchmarks/run.py`` times them.

Each sample also lists which of the embedding model's modules (``wordllama``, ``tokenizers``,
``safetensors``) the process imported: none may be, on either command.

Run: ``python benchmarks/startup_compare.py [--ref main] [--n 5000 | --workspace DIR] [--runs 9]
[--kinds ls pane]`` (``--workspace``: one ``generate.py`` made already, e.g. of 100,000 memories;
each tree keeps its own state dir beside it, so the catalog database stays warm between runs).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
import generate  # noqa: E402

MODEL_MODULES = ("wordllama", "tokenizers", "safetensors")
REPORT = f"import sys; sys.stderr.write('MODULES ' + repr([m for m in {MODEL_MODULES!r} if m in sys.modules]) + '\\n')"

LS = f"import atexit, sys\natexit.register(lambda: exec({REPORT!r}))\nsys.argv[0] = 'memtui'\nfrom memtui.cli import main\nmain()"

PANE = """
import asyncio, os, sys, time
from pathlib import Path
start = float(os.environ["BENCH_START"])
from memtui.core.places.flavor import AGENT
from memtui.tui.app import MemtuiApp
from textual.widgets import DataTable

async def run():
    created = time.time()
    app = MemtuiApp.for_project(AGENT, Path(sys.argv[1]), memory_dir=Path(sys.argv[2]), watch=False)
    async with app.run_test(size=(120, 36)) as pilot:
        table = app.query_one("#memories-table", DataTable)
        while table.row_count == 0:
            await asyncio.sleep(0.002)
        now = time.time()
        elapsed = now - start, now - created
        await app.workers.wait_for_complete()
    return elapsed

elapsed, app_elapsed = asyncio.run(run())
print(f"ELAPSED {elapsed * 1000:.1f}")
print(f"APP {app_elapsed * 1000:.1f}")
""" + REPORT


def sample(kind: str, tree: Path, ws: generate.Workspace, state: Path) -> tuple[float, list[str]]:
    env = {**os.environ, **ws.env(), "MEMTUI_STATE_DIR": str(state), "PYTHONPATH": str(tree)}
    env["BENCH_START"] = repr(time.time())
    start = time.perf_counter()
    if kind == "ls":
        cmd = [sys.executable, "-c", LS, "ls", "--json", "--memory-dir", str(ws.memory_dir)]
    else:  # "pane" and "app": one process gives both
        cmd = [sys.executable, "-c", PANE, str(ws.project), str(ws.memory_dir)]
    proc = subprocess.run(cmd, env=env, cwd=ws.project, capture_output=True, text=True, check=True)
    wall = (time.perf_counter() - start) * 1000
    modules = next(line for line in proc.stderr.splitlines() if line.startswith("MODULES "))
    if kind in ("pane", "app"):
        tag = "ELAPSED " if kind == "pane" else "APP "
        wall = float(next(line for line in proc.stdout.splitlines() if line.startswith(tag)).split()[1])
    return wall, eval(modules.removeprefix("MODULES "))  # noqa: S307 - our own repr of a list of names


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ref", default="main")
    ap.add_argument("--n", type=int, default=5000)
    ap.add_argument("--runs", type=int, default=9)
    ap.add_argument("--workspace", type=Path, help="a workspace generate.py made (instead of a new one of --n memories)")
    ap.add_argument("--kinds", nargs="+", choices=("ls", "pane", "app"), default=["ls", "pane"])
    args = ap.parse_args()
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.strip()
    ref = subprocess.run(["git", "rev-parse", "--short", args.ref], cwd=ROOT, capture_output=True, text=True, check=True).stdout.strip()
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp) / "base"
        base.mkdir()
        archive = subprocess.run(["git", "archive", args.ref], cwd=ROOT, capture_output=True, check=True).stdout
        subprocess.run(["tar", "-x", "-C", str(base)], input=archive, check=True)
        ws = generate.load_workspace(args.workspace) if args.workspace else generate.generate(Path(tmp) / "ws", args.n)
        states = args.workspace if args.workspace else Path(tmp)
        trees = {"this tree": (ROOT, states / f"state-head-{head}"), f"{args.ref}": (base, states / f"state-base-{ref}")}
        results: dict[tuple[str, str], list[float]] = {}
        imported: dict[tuple[str, str], set[str]] = {}
        for kind in args.kinds:
            for name, (tree, state) in trees.items():
                sample(kind, tree, ws, state)  # warm-up: scan cache, page cache
            for _ in range(args.runs):
                for name, (tree, state) in trees.items():
                    value, modules = sample(kind, tree, ws, state)
                    results.setdefault((kind, name), []).append(value)
                    imported.setdefault((kind, name), set()).update(modules)
    load = os.getloadavg()
    print(f"this tree {head} vs {args.ref} {ref}; {ws.n:,} memories; {args.runs} runs each, alternating; "
          f"{os.cpu_count()} cores, Python {platform.python_version()}; load average at the end {load[0]:.1f}, {load[1]:.1f}, {load[2]:.1f}\n")
    print(f"| command | this tree (median) | {args.ref} (median) | ratio | model modules imported |")
    print("|---|---:|---:|---:|---|")
    labels = {
        "ls": "`memtui ls --json` (warm), fresh process",
        "pane": "Memories pane: first rows, from interpreter start",
        "app": "Memories pane: first rows, from the app's creation",
    }
    for kind in args.kinds:
        a, b = statistics.median(results[(kind, "this tree")]), statistics.median(results[(kind, args.ref)])
        mods = sorted(imported[(kind, "this tree")] | imported[(kind, args.ref)])
        print(f"| {labels[kind]} | {a:.0f} ms | {b:.0f} ms | {a / b:.2f}× | {', '.join(mods) or 'none'} |")
    print("\n" + json.dumps({f"{k}/{n}": v for (k, n), v in results.items()}))


if __name__ == "__main__":
    main()
