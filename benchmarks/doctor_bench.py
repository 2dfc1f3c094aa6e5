"""Doctor on 2,000 and 20,000 generated memories.

Reproducible: memories are generated from a fixed seed in a temp dir — prose from a Zipf-like
vocabulary of 50,000 words (as real notes share common words and differ in rare ones), the four
types in turn, 1% exact duplicates and 1% near-duplicates (a few words changed) planted, 5% of
the project memories with a relative date, an index listing 90% of them. Timed, median of
``--runs`` runs in the same process:

- ``run_doctor`` (the whole catalog: scan + parse, index, content, secrets, dates, duplicates);
- the duplicate step alone (``duplicate_findings``: exact + near-duplicates, see
  ``memtui/core/doctor/duplicates.py``);
- baseline: ``scan_memories`` (reading and parsing every file) — the floor any doctor pays;
- with ``--naive``: all-pairs ``rapidfuzz.process.cdist`` on the 2,000 set, the O(n²) way.

Also prints the process's peak RSS (``ru_maxrss``) after each size: sizes run in the order
given, so the figure after the largest is the whole run's peak.

Run: ``python benchmarks/doctor_bench.py [--runs 3] [--sizes 2000 20000] [--naive]``.
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
from collections.abc import Callable
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import cast

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from memtui.core.doctor import DoctorReport, Finding, run_doctor
from memtui.core.doctor.duplicates import duplicate_findings
from memtui.core.memory.memories import MemoryScan, scan_memories

TYPES = ("user", "feedback", "project", "reference")
NOW = datetime(2026, 3, 10, 12, tzinfo=UTC)


def _vocab(rng: random.Random, size: int = 50_000) -> tuple[list[str], list[float]]:
    letters = "abcdefghijklmnopqrstuvwxyz"
    words = sorted({"".join(rng.choice(letters) for _ in range(rng.randint(3, 10))) for _ in range(size + size // 20)})[:size]
    weights = [1.0 / (rank + 1) for rank in range(len(words))]
    return words, weights


def build(root: Path, n: int, seed: int = 7) -> Path:
    """Write ``n`` memories and an index below ``root``; return the memory dir."""
    rng = random.Random(seed)
    words, weights = _vocab(rng)
    memory_dir = root / f"memory-{n}"
    memory_dir.mkdir()
    index: list[str] = []
    bodies: list[tuple[str, str]] = []
    base = NOW.timestamp() - 365 * 86_400
    for i in range(n):
        kind = TYPES[i % 4]
        if i > 10 and i % 100 in (0, 50):  # a copy of an earlier memory of the same type
            j = rng.randrange(i // 4) * 4 + i % 4
            desc, body = bodies[j]
            if i % 100 == 50:  # near-duplicate: a few words changed
                toks = body.split(" ")
                for _ in range(3):
                    toks[rng.randrange(len(toks))] = rng.choice(words)
                body = " ".join(toks)
        else:
            desc = " ".join(rng.choices(words, weights, k=rng.randint(6, 12))).capitalize()
            body = ". ".join(" ".join(rng.choices(words, weights, k=rng.randint(8, 16))).capitalize() for _ in range(rng.randint(2, 5))) + "."
            if kind == "project" and i % 20 == 2:
                body += " The rollout starts tomorrow."
        bodies.append((desc, body))
        shape = "\n\n**Why:** it matters.\n\n**How to apply:** follow it.\n" if kind in ("feedback", "project") else "\n"
        rel = f"{kind}_{i:05d}.md"
        path = memory_dir / rel
        path.write_text(f"---\nname: Memory {i}\ndescription: {desc}\ntype: {kind}\n---\n\n{body}{shape}", encoding="utf-8")
        mtime = base + rng.randrange(365 * 86_400)
        os.utime(path, (mtime, mtime))
        if i % 10:
            index.append(f"- [Memory {i}]({rel}) — {desc[:60]}")
    (memory_dir / "MEMORY.md").write_text("\n".join(index) + "\n", encoding="utf-8")
    return memory_dir


def timed(fn: Callable[[], object], runs: int) -> tuple[float, object]:
    times: list[float] = []
    result: object = None
    for _ in range(runs):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--sizes", type=int, nargs="+", default=[2000, 20000])
    parser.add_argument("--naive", action="store_true", help="also time all-pairs cdist on the 2,000 set")
    args = parser.parse_args()
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs, median of {args.runs} runs")
    with tempfile.TemporaryDirectory() as tmp:
        for n in args.sizes:
            memory_dir = build(Path(tmp), n)
            scan_s, scan = timed(partial(scan_memories, memory_dir), args.runs)
            memories = list(cast(MemoryScan, scan).memories)
            dup_s, dups = timed(partial(duplicate_findings, memories), args.runs)
            doc_s, report = timed(partial(run_doctor, memory_dir, NOW), args.runs)
            exact = sum(1 for f in cast(list[Finding], dups) if f.code == "duplicate")
            near = sum(1 for f in cast(list[Finding], dups) if f.code == "near-duplicate")
            total = len(cast(DoctorReport, report).findings)
            rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
            print(f"{n:>6} memories: run_doctor {doc_s:6.2f} s | duplicates step {dup_s:6.2f} s ({exact} duplicate, {near} near-duplicate findings) | scan baseline {scan_s:6.2f} s | {total} findings | peak RSS so far {rss:,.0f} MB")
            if args.naive and n == 2000:
                from rapidfuzz import fuzz, process

                texts = [" ".join(f"{m.description or ''}\n{m.body}".casefold().split())[:2000] for m in memories]
                naive_s, _ = timed(partial(process.cdist, texts, texts, scorer=fuzz.token_sort_ratio, score_cutoff=85, workers=-1), 1)
                print(f"{n:>6} memories: naive all-pairs cdist (token_sort_ratio) {naive_s:6.2f} s")


if __name__ == "__main__":
    main()
