"""The doctor's text checks on hostile memory text: time against size, with the growth exponent.

Each check is fed a text built to make a careless regex or loop quadratic — one long line of
spaces (the Why/How-to-apply labels), of "明天" and of "tomorrow" (relative dates), of names in
backticks (the claims and whether a sentence takes them back), of digits in sentences (the
conflict check's values) — at N and 4·N characters. Baseline: ``str.split`` of the same text
(the floor of reading it once). A growth exponent k near 1 is linear; 2 would be quadratic.

    python benchmarks/text_checks_bench.py [--n 50000] [--runs 3]
"""

from __future__ import annotations

import argparse
import math
import statistics
import time
from datetime import UTC, datetime

from memtui.core.memory.lint import find_relative_dates, missing_sections
from memtui.core.verify.claims import claims_in_text
from memtui.core.verify.conflicts import values_of

BASE = datetime(2026, 3, 2, 12, tzinfo=UTC)
TEXTS = {
    "labels (Why / How to apply): spaces": (lambda n: "Rule.\n" + " " * n, missing_sections),
    "relative dates: 明天 repeated": (lambda n: "明天" * (n // 2), lambda t: find_relative_dates(t, BASE)),
    "relative dates: 'tomorrow ' repeated": (lambda n: "tomorrow " * (n // 9), lambda t: find_relative_dates(t, BASE)),
    "claims: names in backticks on one line": (lambda n: "Files: " + " ".join(f"`src/f{i}.ts`" for i in range(n // 13)), lambda t: list(claims_in_text(t, 1))),
    "claims: prose paths on one line": (lambda n: "Files: " + " ".join(f"a{i}.ts" for i in range(n // 8)), lambda t: list(claims_in_text(t, 1))),
    # every value, past the MAX_VALUES a memory is read for: the extraction's own growth
    "conflict values: numbered sentences": (lambda n: "Run 3 jobs. " * (n // 12), lambda t: values_of(t, 1, limit=len(t))),
    "conflict values: numbered lines, no sentence break": (lambda n: "wait 3 ms then retry\n" * (n // 21), lambda t: values_of(t, 1, limit=len(t))),
}


def timed(fn, text: str, runs: int) -> float:
    out = []
    for _ in range(runs):
        t = time.perf_counter()
        fn(text)
        out.append(time.perf_counter() - t)
    return statistics.median(out)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=50_000)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    sizes = (args.n, 4 * args.n)
    print(f"| check: hostile text | {sizes[0]:,} chars | {sizes[1]:,} chars | k | floor (split) at {sizes[1]:,} |")
    print("|---|---:|---:|---:|---:|")
    for name, (make, fn) in TEXTS.items():
        times = [timed(fn, make(n), args.runs) for n in sizes]
        floor = timed(str.split, make(sizes[1]), args.runs)
        k = math.log(times[1] / times[0]) / math.log(4) if times[0] > 0 else float("nan")
        print(f"| {name} | {times[0] * 1000:,.1f} ms | {times[1] * 1000:,.1f} ms | {k:.2f} | {floor * 1000:,.2f} ms |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
