"""Benchmark: the search behind Claude Code 2.1.332's organization dream gate
(``memtui.core.dream.organization.search_marks``) is linear in the transcripts' size.

    python benchmarks/org_search_bench.py [--mb 25 50 100 200] [--runs 3]

For each total size, generates in a temp dir (seeded) transcripts written like Claude Code's
(one JSON line per entry, a ~64 KB request blob every 20 lines), 1 MB each, plus subagent files,
with one mark line per 50 transcripts and one line per 10 that holds the needle but is no mark;
then three shapes that stress a line scanner, each of the same total size: one file that is a
single line with no newline; one file of nothing but short needle lines that are no mark (every
line parsed); one file of empty lines. Times, in one process:

- **cold**: ``search_marks`` with memtui's per-file cache emptied (every byte read);
- **warm**: again, nothing changed (each file ``lstat``'ed, none read);

against the floor measured in the same run: reading every byte of the same files in 1 MiB
chunks and counting the needles and the newlines in each chunk. The growth exponent is the slope of log(time)
over log(size) between the smallest and the largest size (1.0 = linear).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from memtui.core.dream import organization as org_mod  # noqa: E402
from memtui.core.places.release import load_release  # noqa: E402

GATE = load_release("claude-2.1.332").dream.organization_gate
assert GATE is not None
ORG = "6f1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d"


def transcripts(root: Path, mb: int, seed: int = 7) -> None:
    rng = random.Random(seed)
    blob = "x" * 65_536
    for s in range(mb):
        sid = str(uuid.UUID(int=rng.getrandbits(128)))
        lines, size, n = [], 0, 0
        while size < 1_000_000:
            n += 1
            entry = ({"type": "api-request-blob", "sessionId": sid, "message": {"content": blob}} if n % 20 == 0 else
                     {"type": "user" if n % 2 else "assistant", "sessionId": sid, "message": {"content": " ".join(rng.choice("abcdefgh") * 5 for _ in range(40))}})
            line = json.dumps(entry) + "\n"
            lines.append(line)
            size += len(line)
        if s % 50 == 0:
            lines.insert(len(lines) // 2, json.dumps({"type": "hybrid-organization", "organizationUuid": ORG, "sessionId": sid}, separators=(",", ":")) + "\n")
        if s % 10 == 0:
            lines.append('{"type":"hybrid-organization","organizationUuid":"not-a-uuid"}\n')
        target = root / f"{sid}.jsonl" if s % 4 else root / sid / "subagents" / f"agent-{s}.jsonl"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text("".join(lines))


def one_line(root: Path, mb: int) -> None:
    with (root / "oneline.jsonl").open("wb") as fh:
        for _ in range(mb):
            fh.write(b"y" * 1_000_000)


def needles(root: Path, mb: int) -> None:
    line = b'{"type":"hybrid-organization","organizationUuid":"no"}\n'
    with (root / "needles.jsonl").open("wb") as fh:
        for _ in range(mb):
            fh.write(line * (1_000_000 // len(line)))


def newlines(root: Path, mb: int) -> None:
    with (root / "newlines.jsonl").open("wb") as fh:
        for _ in range(mb):
            fh.write(b"\n" * 1_000_000)


def floor(root: Path) -> float:
    needle = GATE.needle.encode()  # type: ignore[union-attr]
    t = time.perf_counter()
    for dirpath, _dirs, names in os.walk(root):
        for name in names:
            with open(os.path.join(dirpath, name), "rb") as fh:
                while chunk := fh.read(1 << 20):
                    _ = chunk.count(needle), chunk.count(b"\n")
    return time.perf_counter() - t


def search(root: Path, *, cold: bool) -> float:
    if cold:
        org_mod._CACHE.clear()
    t = time.perf_counter()
    s = org_mod.search_marks(root, GATE, limit_s=600)  # type: ignore[arg-type]
    took = time.perf_counter() - t
    assert s.failure is None, s.failure
    return took


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mb", type=int, nargs="+", default=[25, 50, 100, 200])
    ap.add_argument("--runs", type=int, default=3)
    a = ap.parse_args()
    shapes = {"transcripts": transcripts, "one line, no newline": one_line, "needle lines, no mark": needles, "empty lines": newlines}
    print("| shape | size | cold (median) | floor | ratio | warm |")
    print("|---|---|---:|---:|---:|---:|")
    growth: dict[str, list[tuple[int, float]]] = {}
    for shape, make in shapes.items():
        for mb in a.mb:
            with tempfile.TemporaryDirectory() as tmp:
                root = Path(tmp)
                make(root, mb)
                cold, base, warm = [], [], []
                for _ in range(a.runs):
                    base.append(floor(root))
                    cold.append(search(root, cold=True))
                    warm.append(search(root, cold=False))
                c, b, w = statistics.median(cold), statistics.median(base), statistics.median(warm)
                growth.setdefault(shape, []).append((mb, c))
                print(f"| {shape} | {mb} MB | {c * 1000:,.0f} ms | {b * 1000:,.0f} ms | {c / b:.2f}× | {w * 1000:,.1f} ms |")
    for shape, points in growth.items():
        (m0, t0), (m1, t1) = points[0], points[-1]
        print(f"{shape}: growth exponent {math.log(t1 / t0) / math.log(m1 / m0):.2f} ({m0} → {m1} MB)")
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
