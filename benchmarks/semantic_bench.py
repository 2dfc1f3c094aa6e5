"""The semantic selector at scale, beside BM25 in the same run: 20,000 memories by default.

Reproducible: the memories and queries of ``recall_bench.generate`` (seeded; one in four in
Chinese or Japanese). Each configuration runs in its own subprocess, so import time and peak
RSS (``ru_maxrss``) are its own:

- ``semantic, cold`` — a fresh state dir: the embedding model loaded (``load_model``), every
  memory embedded (``RecallCorpus.dense_index``: the vectors written to the cache), then
  ``recall(..., selector="semantic")`` for ``--queries`` queries (p50 / p95);
- ``semantic, warm`` — the same state dir again: the model loaded, the vectors read back from
  the cache (nothing embedded), the same queries;
- ``lexical`` (the baseline) — the BM25 index built, ``recall(..., selector="lexical")`` for the
  same queries.

Each line also gives the corpus scan (``load_corpus``, the same work for all three).

Run: ``python benchmarks/semantic_bench.py [--memories 20000] [--queries 200]``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

NOW = datetime(2026, 3, 10, 12, 0, tzinfo=UTC)


def child(kind: str, memory_dir: Path, state_dir: Path, queries: list[str]) -> dict[str, float]:
    """One configuration, timed in this process (see the module doc)."""
    from memtui.core.recall import load_corpus, recall

    out: dict[str, float] = {}
    start = time.perf_counter()
    corpus = load_corpus(memory_dir, state_dir=state_dir)
    out["scan_ms"] = (time.perf_counter() - start) * 1000
    if kind == "lexical":
        start = time.perf_counter()
        corpus.lexical_index()
        out["index_ms"] = (time.perf_counter() - start) * 1000
    else:
        from memtui.core.recall.embedding import load_model

        start = time.perf_counter()
        load_model()
        out["model_ms"] = (time.perf_counter() - start) * 1000
        start = time.perf_counter()
        corpus.dense_index()
        out["index_ms"] = (time.perf_counter() - start) * 1000
        corpus.lexical_index()  # fused with BM25: built before the queries, as in the pane
    selector = "lexical" if kind == "lexical" else "semantic"
    times = []
    for q in queries:
        start = time.perf_counter()
        recall(q, corpus, now=NOW, selector=selector)
        times.append((time.perf_counter() - start) * 1000)
    times.sort()
    out["query_p50_ms"] = statistics.median(times)
    out["query_p95_ms"] = times[min(len(times) - 1, int(len(times) * 0.95))]
    out["rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    out["docs"] = len(corpus.docs)
    return out


def run_child(kind: str, memory_dir: Path, state_dir: Path, queries_file: Path) -> dict[str, float]:
    proc = subprocess.run(
        [sys.executable, __file__, "--child", kind, str(memory_dir), str(state_dir), str(queries_file)],
        check=True, capture_output=True, text=True, env={**os.environ, "HF_HUB_OFFLINE": "1"},
    )
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--memories", type=int, default=20_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--child", nargs=4, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        kind, memory_dir, state_dir, queries_file = args.child
        queries = json.loads(Path(queries_file).read_text(encoding="utf-8"))
        print(json.dumps(child(kind, Path(memory_dir), Path(state_dir), queries)))
        return
    from recall_bench import generate

    with tempfile.TemporaryDirectory(prefix="memtui-semantic-bench-") as tmp:
        memory_dir = Path(tmp) / "memory"
        queries = generate(memory_dir, args.memories)[: args.queries]
        queries_file = Path(tmp) / "queries.json"
        queries_file.write_text(json.dumps(queries, ensure_ascii=False), encoding="utf-8")
        rows = [
            ("lexical (BM25, baseline)", run_child("lexical", memory_dir, Path(tmp) / "state-lexical", queries_file)),
            ("semantic, cold cache", run_child("semantic", memory_dir, Path(tmp) / "state", queries_file)),
            ("semantic, warm cache", run_child("semantic", memory_dir, Path(tmp) / "state", queries_file)),
        ]
    base = rows[0][1]
    print(f"{args.memories:,} memories, {args.queries} queries; {platform.python_version()}, {os.cpu_count()} cores, "
          f"load average {', '.join(f'{x:.1f}' for x in os.getloadavg())}")
    print("| configuration | scan | model load | index build | query p50 | query p95 | p50 vs BM25 | peak RSS |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for name, r in rows:
        model = f"{r['model_ms']:,.0f} ms" if "model_ms" in r else "—"
        print(f"| {name} | {r['scan_ms']:,.0f} ms | {model} | {r['index_ms']:,.0f} ms | {r['query_p50_ms']:.1f} ms | "
              f"{r['query_p95_ms']:.1f} ms | {r['query_p50_ms'] / base['query_p50_ms']:.2f}× | {r['rss_mb']:,.0f} MB |")


if __name__ == "__main__":
    main()
