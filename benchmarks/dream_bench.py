"""Benchmark: the offline dream's plan over generated memory stores.

    python benchmarks/dream_bench.py [--memories 2000 20000] [--runs 3]

For each size, generates in a temp dir (seeded, reproducible): N memories of the four types
(descriptions of 3–5 words and bodies of three 9-word sentences from a 5,000-word list, one in
four under a subdirectory), mtimes a minute apart; one in 50 project memories says "tomorrow"
or "明天"; one in 100 memories is a near-duplicate of the one before it (same type and description, a sentence added);
a MEMORY.md with one line per memory (so N lines: far past the 200-line cap), one in 20 lines
with a hook over 150 characters, and 1 % dangling lines. Then times ``plan_dream`` (offline:
Orient reads and parses every file, Gather, Consolidate with dates and duplicates, Prune with
the hubs), median of ``--runs`` in one process, against a **baseline** in the same run: reading
and decoding every file (the I/O floor). Also prints the process's peak RSS (``ru_maxrss``) after
each size: sizes run in the order given, so the figure after the largest is the whole run's.
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from memtui.core.dream import DreamContext, plan_dream

NOW = datetime(2026, 3, 10, 12, 0, tzinfo=UTC)
TYPES = ("user", "feedback", "project", "reference")


def vocabulary(rng: random.Random) -> list[str]:
    letters = "abcdefghijklmnopqrstuvwxyz"
    words: set[str] = set()
    while len(words) < 5000:
        words.add("".join(rng.choice(letters) for _ in range(rng.randint(4, 9))))
    return sorted(words)


def generate(root: Path, n: int, seed: int = 11) -> None:
    rng = random.Random(seed)
    words = vocabulary(rng)
    base = NOW.timestamp() - 400 * 86_400
    lines: list[str] = []
    previous = ("", "", "")
    for i in range(n):
        t = TYPES[i % 4]
        dup = i % 100 == 99
        if dup:
            t = previous[1]
        sub = f"area{i % 7}/" if i % 4 == 3 else ""
        rel = f"{sub}{t}_{i:05d}.md"
        if dup:
            body = previous[0] + " It was confirmed again later.\n"
        else:
            sents = [" ".join(rng.sample(words, 9)).capitalize() + "." for _ in range(3)]
            body = f"{sents[0]} {sents[1]}\n\n{sents[2]}"
            if t == "project" and i % 50 == 2:
                body += " The review happens tomorrow." if i % 100 == 2 else " 明天发布。"
            body += "\n"
        desc = previous[2] if dup else " ".join(rng.sample(words, rng.randint(3, 5)))
        previous = (body.rstrip("\n"), t, desc)
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"---\nname: Memory {i}\ndescription: {desc}\ntype: {t}\n---\n\n{body}", encoding="utf-8")
        os.utime(path, (base + 60 * i, base + 60 * i))
        hook = desc if i % 20 else desc + " — " + " ".join(rng.sample(words, 25))
        lines.append(f"- [Memory {i}]({rel}) — {hook}")
        if i % 100 == 50:
            lines.append(f"- [Gone {i}](gone_{i}.md) — deleted long ago")
    (root / "MEMORY.md").write_text("\n".join(lines) + "\n", encoding="utf-8")


def baseline(root: Path) -> None:
    for dirpath, _, files in os.walk(root):
        for name in files:
            (Path(dirpath) / name).read_bytes().decode("utf-8", errors="replace")


def bench(n: int, runs: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "memory"
        root.mkdir()
        generate(root, n)
        ctx = DreamContext(root, Path(tmp) / "sessions", Path(tmp) / "state")
        plans, floors = [], []
        dp = None
        for _ in range(runs):
            t0 = time.perf_counter()
            baseline(root)
            floors.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            dp = plan_dream(ctx, NOW)
            plans.append(time.perf_counter() - t0)
        assert dp is not None
        kinds: dict[str, int] = {}
        for c in dp.plan.changes:
            kinds[c.kind] = kinds.get(c.kind, 0) + 1
        print(f"  {n:,} memories: plan {statistics.median(plans):.2f} s (runs {', '.join(f'{p:.2f}' for p in plans)}), "
              f"baseline {statistics.median(floors):.3f} s; {len(dp.plan.changes)} changes {kinds}, "
              f"{len(dp.findings)} findings, {len(dp.events)} events; peak RSS so far {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:,.0f} MB")
        return {"plan": statistics.median(plans), "baseline": statistics.median(floors)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--memories", type=int, nargs="+", default=[2000, 20000])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    print(f"Python {sys.version.split()[0]}, {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}")
    for n in args.memories:
        bench(n, args.runs)


if __name__ == "__main__":
    main()
