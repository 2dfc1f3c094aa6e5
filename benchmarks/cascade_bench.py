"""Cascade discovery on a deep tree: 40 nested directories, 1,000 rule files.

Reproducible: the tree is generated in a temp dir from fixed content (no randomness). Each
of the 40 directories on the path to the cwd holds an ``AGENT.md`` and 25 rules in
``.agent/rules/`` (every other rule conditional on ``paths:``, a fifth in a subdirectory,
every tenth importing a doc); each ``AGENT.md`` imports a doc too. The ancestors' imports are
external to the cwd, so the run approves external imports (``approved_external=True``). Timed, median of ``--runs`` runs in the same process:

- ``compute_cascade`` (startup: walk, read, frontmatter, Markdown tokens, imports, render);
- one lazy read of a file at the bottom (only cwd-level conditional rules apply);
- baseline: ``os.walk`` over the same tree plus reading and decoding every file — the I/O
  floor any discovery has to pay.

Run: ``python benchmarks/cascade_bench.py [--runs 9]``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from memtui.core.cascade import compute_cascade, new_session, simulate_read  # noqa: E402
from memtui.core.places.flavor import AGENT  # noqa: E402
from memtui.core.places.locations import resolve_locations  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from generate import DEPTH, build_tree  # noqa: E402  (the tree of the shared workspace)


def baseline(root: Path) -> int:
    """``os.walk`` + read and decode every file: the I/O floor."""
    total = 0
    for dirpath, _dirs, names in os.walk(root):
        for name in names:
            with open(os.path.join(dirpath, name), "rb") as handle:
                total += len(handle.read().decode("utf-8"))
    return total


def median_ms(fn: Callable[[], object], runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=9)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="memtui-bench-") as tmp:
        root = Path(os.path.realpath(tmp))
        cwd = build_tree(root)
        env = {
            "HOME": str(root / "home"),
            "MEMTUI_MANAGED_DIR": str(root / "managed"),
            "MEMTUI_STATE_DIR": str(root / "state"),
        }
        locations = resolve_locations(AGENT, cwd, environ=env)
        rule_files = sum(1 for _ in root.rglob(".agent/rules/**/*.md"))
        cascade = compute_cascade(locations, cwd, approved_external=True, environ=env)  # warm-up (imports, caches)
        loaded = len(cascade.loaded_files)
        baseline(root)
        t_cascade = median_ms(lambda: compute_cascade(locations, cwd, approved_external=True, environ=env), args.runs)
        t_read = median_ms(lambda: simulate_read(cascade, new_session(cascade), cwd / "src" / "mod1" / "x.ts"), args.runs)
        t_base = median_ms(lambda: baseline(root), args.runs)
        print(f"tree: {DEPTH} directories deep, {rule_files} rule files, cwd at the bottom")
        print(f"startup cascade: {loaded} files loaded, {len(cascade.files)} entries, {cascade.total_chars:,} characters rendered")
        print(f"python {sys.version.split()[0]} on {sys.platform}; median of {args.runs} runs")
        print(f"compute_cascade (startup)   {t_cascade:8.1f} ms")
        print(f"simulate_read (one read)    {t_read:8.1f} ms")
        print(f"baseline os.walk + read all {t_base:8.1f} ms")
        print(f"ratio cascade / baseline    {t_cascade / t_base:8.1f} x")


if __name__ == "__main__":
    main()
