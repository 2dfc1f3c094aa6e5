"""Benchmark: the ``claude-code`` Markdown dialect's HTML blocks and the ``@`` import extraction
are linear in the file's size, on the shapes that once made them quadratic or crash.

    python benchmarks/cascade_html_bench.py [--steps 4] [--runs 3] [--shapes NAME ...]

Each shape is a CLAUDE.md body built at doubling sizes. The figure is what the cascade does with
one file: ``preprocess(body, want_imports=True, markdown="claude-code")`` (Claude Code's HTML
blocks, the comment cut) then ``extract_import_refs`` over its tokens (``list_text_raw``, as for
Claude Code). The baseline, measured in the same process alternating with it, is a plain
markdown-it CommonMark parse of the same text (``MarkdownIt("commonmark").parse``): linear, and
the floor of any parse. Each row gives the median time, the baseline, their ratio, and the growth
per doubling (time at this size / time at the previous one: 2.0 is linear, 4.0 quadratic). A
run that raises prints the exception's name instead of a time.

Shapes:

- ``pi-line``: ``<?a?>`` repeated on one line, then a comment and a line (each ``<?…?>`` ends
  mid-line and the rest of the line starts the next block);
- ``decl-line``: the same with ``<!X>``;
- ``script-open``: ``<script>``, a comment, then plain lines (the closing tag searched on every
  line to the end);
- ``script-pairs``: ``<script>`` / ``</script>`` / a comment, repeated;
- ``at-words``: one paragraph of `` @x`` repeated (each an import attempt);
- ``at-escaped``: one paragraph of `` @a\\ b`` repeated.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from markdown_it import MarkdownIt  # noqa: E402

from memtui.core.cascade.imports import extract_import_refs  # noqa: E402
from memtui.core.cascade.preprocess import preprocess  # noqa: E402

SHAPES: dict[str, tuple[Callable[[int], str], int, str]] = {
    "pi-line": (lambda n: "<?a?>" * n + "\n<!-- c -->\nhello\n", 25_000, "`<?a?>` × n on one line"),
    "decl-line": (lambda n: "<!X>" * n + "\n<!-- c -->\nhello\n", 25_000, "`<!X>` × n on one line"),
    "script-open": (lambda n: "<script>\n<!-- c -->\n" + "line\n" * n, 10_000, "`<script>`, a comment, n lines"),
    "script-pairs": (lambda n: "<script>\n</script>\n<!-- c -->\n" * n, 5_000, "n × (`<script>`, `</script>`, a comment)"),
    "at-words": (lambda n: " @x" * n + "\n", 25_000, "one paragraph of n × ` @x`"),
    "at-escaped": (lambda n: " @a\\ b" * n + "\n", 25_000, "one paragraph of n × ` @a\\ b`"),
}
_PLAIN = MarkdownIt("commonmark")


def _cascade(body: str) -> int:
    parsed = preprocess(body, "CLAUDE.md", want_imports=True, markdown="claude-code")
    refs = extract_import_refs(parsed.tokens or [], parsed.body_line, list_text_raw=True)
    return len(parsed.content) + len(refs)


def _baseline(body: str) -> int:
    return len(_PLAIN.parse(body))


def _time(fn: Callable[[str], int], body: str) -> float | str:
    start = time.perf_counter()
    try:
        fn(body)
    except Exception as exc:  # a run that raises is reported, not timed
        return type(exc).__name__
    return time.perf_counter() - start


def _fmt(t: float | str) -> str:
    if isinstance(t, str):
        return t
    return f"{t * 1000:,.0f} ms" if t >= 0.01 else f"{t * 1000:.1f} ms"


def _growth(t: float | str, prev: float | str | None) -> str:
    if prev is None or isinstance(t, str) or isinstance(prev, str) or prev <= 0:
        return "—"
    return f"{t / prev:.2f}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--steps", type=int, default=4, help="sizes per shape, each double the last")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--shapes", nargs="*", default=list(SHAPES))
    args = ap.parse_args()
    print("| shape | n | chars | cascade (median) | per doubling | baseline: markdown-it parse | per doubling | ratio |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for name in args.shapes:
        build, first, label = SHAPES[name]
        prev_f: float | str | None = None
        prev_b: float | str | None = None
        for step in range(args.steps):
            n = first * 2**step
            body = build(n)
            figs: list[float | str] = []
            bases: list[float | str] = []
            for _ in range(args.runs):
                figs.append(_time(_cascade, body))
                bases.append(_time(_baseline, body))
            fails = [f for f in figs if isinstance(f, str)]
            fig: float | str = fails[0] if fails else statistics.median([f for f in figs if not isinstance(f, str)])
            base: float | str = statistics.median([b for b in bases if not isinstance(b, str)])
            ratio = "—" if isinstance(fig, str) or isinstance(base, str) else f"{fig / base:.2f}×"
            print(
                f"| {label if step == 0 else 'same'} | {n:,} | {len(body):,} | {_fmt(fig)} | {_growth(fig, prev_f)} "
                f"| {_fmt(base)} | {_growth(base, prev_b)} | {ratio} |",
                flush=True,
            )
            prev_f, prev_b = fig, base


if __name__ == "__main__":
    main()
