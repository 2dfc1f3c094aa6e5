"""The claims check's reads of a git history: cost against the size of the history.

A synthetic repository of N commits (``git fast-import``: each commit adds a source file with
two functions and deletes the file added 10 commits before), then, timed: every path the
history had (``history_paths``) and its index (``_PathIndex``, 500 claims looked up), the
recorded renames, and which of 200 names a removed line defined (``removed_words``). Baseline:
``git log --all --name-only`` alone, the floor of the first read. Prints a table with the growth
exponent between sizes (time ∝ N^k).

    python benchmarks/history_bench.py [--sizes 2000 8000] [--runs 3]
"""

from __future__ import annotations

import argparse
import math
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from memtui.core.verify.check import _PathIndex
from memtui.core.verify.history import history_paths, history_renames, removed_words

GIT = ["git", "-c", "user.name=b", "-c", "user.email=b@example.com", "-c", "init.defaultBranch=main"]


def make_repo(root: Path, commits: int) -> None:
    subprocess.run([*GIT, "init", "-q", str(root)], check=True)
    lines: list[str] = []
    for i in range(commits):
        body = f"export function handler{i}(x: number) {{\n  return x + {i};\n}}\nexport function helper{i}() {{}}\n".encode()
        lines += ["commit refs/heads/main", f"committer b <b@example.com> {1_700_000_000 + i} +0000", "data 2", "c"]
        lines += [f"M 100644 inline src/mod{i % 50}/file{i}.ts", f"data {len(body)}", body.decode()]
        if i >= 10:
            lines.append(f"D src/mod{(i - 10) % 50}/file{i - 10}.ts")
    subprocess.run([*GIT, "-C", str(root), "fast-import", "--quiet"], input="\n".join(lines).encode() + b"\n", check=True)


def timed(fn, runs: int) -> float:
    out = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t)
    return statistics.median(out)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", type=int, nargs="+", default=[2000, 8000])
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    rows: dict[str, list[tuple[int, float]]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for n in args.sizes:
            root = Path(tmp) / f"r{n}"
            make_repo(root, n)
            claims = [f"src/mod{i % 50}/file{i}.ts" for i in range(0, n, max(1, n // 250))] + [f"file{i}.ts" for i in range(250)]
            words = [f"handler{i}" for i in range(0, n, max(1, n // 100))] + [f"missing{i}" for i in range(100)]

            def paths() -> None:
                index = _PathIndex(history_paths(root, timeout=120).found)
                assert sum(c in index for c in claims) == len(claims)

            measures = {
                "git log --all --name-only (floor)": lambda: subprocess.run(["git", "-C", str(root), "log", "--all", "--format=", "--name-only"], capture_output=True, check=True),
                "history_paths + _PathIndex + 500 lookups": paths,
                "history_renames": lambda: history_renames(root, timeout=120),
                "removed_words (200 names)": lambda: removed_words(root, words, timeout=120),
            }
            for name, fn in measures.items():
                rows.setdefault(name, []).append((n, timed(fn, args.runs)))
    print("| measurement | " + " | ".join(f"{n:,} commits" for n in args.sizes) + " | k |")
    print("|---|" + "---:|" * (len(args.sizes) + 1))
    for name, points in rows.items():
        (n0, t0), (n1, t1) = points[0], points[-1]
        k = math.log(t1 / t0) / math.log(n1 / n0) if t0 > 0 and n1 != n0 else float("nan")
        print(f"| {name} | " + " | ".join(f"{t * 1000:,.0f} ms" for _, t in points) + f" | {k:.2f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
