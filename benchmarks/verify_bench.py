"""Verify (memories' claims against the code) and the conflict rule, at scale.

Reproducible: a git repository of ``--files`` source files (default 50,000: 500 packages of 100
modules, ~40 lines each, identifiers from a seeded vocabulary) and ``--memories`` memories
(default 20,000), each naming 2–4 things in it — a path (10% moved or deleted), a ``path:line``
(10% past the end), a symbol (15% renamed), a ``just`` recipe now and then — generated from a
fixed seed in a temp dir. Timed in the same process, alternating, median of ``--runs``:

- ``verify_memories`` (list the files, extract every claim, check paths and lines, read the
  listed files once into a set of identifiers for the symbols, close matches of the missing
  ones from that set);
- baseline: ``git ls-files`` + one ``git grep -F -w -l`` for one identifier over the whole
  repository — the floor any check of "does this still exist" pays;
- ``find_conflicts`` over the memories (the offline conflict rule), beside reading them
  (``scan_memories``);
- ``verify_memories`` on the demo workspace.

Run: ``python benchmarks/verify_bench.py [--files 50000] [--memories 20000] [--runs 3]``.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from memtui.core.memory.memories import scan_memories
from memtui.core.verify import verify_memories
from memtui.core.verify.conflicts import find_conflicts
from memtui.demo import materialize

GIT = ["git", "-c", "user.name=bench", "-c", "user.email=bench@example.com", "-c", "init.defaultBranch=main", "-c", "commit.gpgsign=false"]
VERBS = "load save parse build render fetch merge split flush apply check send read write sync index scan resolve encode decode".split()


def words(rng: random.Random, n: int) -> list[str]:
    letters = "abcdefghijklmnopqrstuvwxyz"
    return sorted({"".join(rng.choice(letters) for _ in range(rng.randint(4, 9))) for _ in range(n * 2)})[:n]


def build_repo(root: Path, files: int, rng: random.Random) -> tuple[list[str], list[str], dict[str, int]]:
    """Write the repository; return its paths, its function names and each path's line count."""
    nouns = words(rng, 3000)
    paths: list[str] = []
    symbols: list[str] = []
    lines_of: dict[str, int] = {}
    per_pkg = 100
    for i in range(files):
        pkg = f"src/{nouns[(i // per_pkg) % len(nouns)]}_{i // per_pkg}"
        rel = f"{pkg}/{nouns[i % len(nouns)]}_{i % per_pkg}.py"
        funcs = [f"{rng.choice(VERBS)}_{rng.choice(nouns)}_{i}" for _ in range(4)]
        cls = f"{rng.choice(nouns).capitalize()}{rng.choice(nouns).capitalize()}{i}"
        body = [f'"""Module {i}."""', "", "import os", ""]
        for f in funcs:
            body += [f"def {f}(value):", f"    return os.path.join(str(value), {f!r})", ""]
        body += [f"class {cls}:", "    def run(self):", f"        return {funcs[0]}(self)", ""]
        body += [f"# {' '.join(rng.choice(nouns) for _ in range(8))}" for _ in range(18)]
        text = "\n".join(body) + "\n"
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        paths.append(rel)
        symbols.extend(funcs)
        symbols.append(f"{cls}.run")
        lines_of[rel] = text.count("\n")
    (root / "justfile").write_text("test:\n    pytest\n\nlint:\n    ruff check .\n")
    subprocess.run([*GIT, "init", "-q", str(root)], check=True)
    subprocess.run([*GIT, "-C", str(root), "add", "-A"], check=True)
    subprocess.run([*GIT, "-C", str(root), "commit", "-q", "-m", "bench"], check=True)
    return paths, symbols, lines_of


def build_memories(memory_dir: Path, n: int, paths: list[str], symbols: list[str], lines_of: dict[str, int], rng: random.Random) -> None:
    memory_dir.mkdir(parents=True)
    nouns = words(rng, 5000)
    for i in range(n):
        path = rng.choice(paths)
        claims = []
        claims.append(f"`{path}`" if rng.random() > 0.1 else f"`{path.replace('.py', '_old.py')}`")
        line = rng.randint(1, lines_of[path]) if rng.random() > 0.1 else lines_of[path] + 20
        claims.append(f"see {path}:{line}")
        sym = rng.choice(symbols)
        claims.append(f"`{sym}()`" if rng.random() > 0.15 else f"`{sym}_legacy()`")
        if rng.random() < 0.2:
            claims.append(f"`just {rng.choice(['test', 'lint', 'deploy'])}`")
        prose = " ".join(rng.choice(nouns) for _ in range(rng.randint(20, 80)))
        subject = " ".join(rng.choice(nouns) for _ in range(4))
        date = f"2026-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"
        text = (
            f"---\nname: {subject}\ndescription: {subject} {rng.choice(nouns)} on {date}\ntype: project\n---\n\n"
            f"{prose}. The {subject} work lands on {date}; {' and '.join(claims)}.\n\n**Why:** {prose[:60]}.\n\n**How to apply:** check it.\n"
        )
        (memory_dir / f"project_{i:05d}.md").write_text(text)


def timed(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def alternate(fn: Callable[[], object], base: Callable[[], object], runs: int) -> tuple[float, float]:
    a: list[float] = []
    b: list[float] = []
    for _ in range(runs):
        b.append(timed(base))
        a.append(timed(fn))
    return statistics.median(a), statistics.median(b)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--files", type=int, default=50_000)
    parser.add_argument("--memories", type=int, default=20_000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    rng = random.Random(18)
    with tempfile.TemporaryDirectory(prefix="memtui-verify-bench-") as tmp:
        root = Path(tmp) / "repo"
        t = time.perf_counter()
        paths, symbols, lines_of = build_repo(root, args.files, rng)
        memory_dir = Path(tmp) / "memory"
        build_memories(memory_dir, args.memories, paths, symbols, lines_of, rng)
        print(f"generated {args.files:,} files and {args.memories:,} memories in {time.perf_counter() - t:.1f} s")
        memories = list(scan_memories(memory_dir).memories)
        probe = symbols[len(symbols) // 2]

        def baseline() -> None:
            subprocess.run(["git", "-C", str(root), "ls-files", "-z"], check=True, capture_output=True)
            subprocess.run(["git", "-C", str(root), "grep", "-F", "-w", "-l", probe], capture_output=True)

        last = {}

        def verify() -> None:
            last["report"] = verify_memories(memories, root, exclude=[memory_dir], timeout=60)

        v, b = alternate(verify, baseline, args.runs)
        report = last["report"]
        counts = report.counts()
        print(f"verify_memories: {v:.2f} s  |  baseline git ls-files + one git grep: {b:.2f} s  |  ratio {v / b:.1f}x")
        print(f"  claims {counts['claims']:,}: {counts['verified']:,} verified, {counts['stale']:,} stale, {counts['unchecked']:,} unchecked; complete={report.complete}")

        def conflicts() -> None:
            last["conflicts"] = find_conflicts(memories)

        def read_all() -> None:
            scan_memories(memory_dir)

        c, r = alternate(conflicts, read_all, args.runs)
        print(f"find_conflicts: {c:.2f} s  |  baseline scan_memories: {r:.2f} s  |  ratio {c / r:.1f}x  ({len(last['conflicts']):,} conflicts)")

        ws = materialize(Path(tmp) / "demo", datetime.now(UTC))
        demo = list(scan_memories(ws.memory_dir).memories)
        d = statistics.median(timed(lambda: verify_memories(demo, ws.project, exclude=[ws.memory_dir])) for _ in range(args.runs))
        print(f"verify on the demo: {d * 1000:.0f} ms")
        print(f"load average: {', '.join(f'{x:.1f}' for x in os.getloadavg())} on {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
