"""Recall at scale: the lexical selector and the hybrid prefilter over 20,000 memories.

Reproducible: the memories are generated in a temp dir from fixed word lists (seeded
``random.Random(17)``): descriptions of 6–12 words drawn from a 400-word English vocabulary,
one in four in Chinese or Japanese (drawn from 60 CJK words), a type, and a short body;
mtimes one minute apart. Timed in the same process:

- scan: ``load_corpus`` (first 30 lines of every file, newest first) — **baseline**:
  ``memtui.core.memory.headers.scan_headers`` over the same files (the reference-style header scan);
  the two alternate and each keeps its best of two runs;
- lexical index build (tokenise + ``bm25s`` index): the first build (it pays the ``bm25s``
  import), then the median of ``--runs`` builds alternating with ``scan_headers`` (the same
  baseline);
- one lexical query, end to end (``recall(..., selector="lexical")``: rank, picks, near
  misses, injected text of the picks), p50/p95 over ``--queries`` queries — **baseline**: a
  linear scan of all descriptions for any query word (the simplest offline search);
- the hybrid prefilter (``HybridSelector.window``: BM25 over all, best 200, newest first),
  p50/p95 — **baseline**: the reference's manifest (``build_manifest`` of the 200 newest).

Also prints recall@5 / precision@5 of the lexical selector on the hand-labelled evaluation set
of ``tests/core/recall/test_recall_eval.py``, and the process's peak RSS (``ru_maxrss``).

Run: ``python benchmarks/recall_bench.py [--memories 20000] [--queries 200] [--runs 5]``.
"""

from __future__ import annotations

import argparse
import os
import platform
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
from typing import TypeVar

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "core" / "recall"))

from memtui.core.memory.headers import scan_headers
from memtui.core.recall import build_manifest, load_corpus, recall
from memtui.core.recall.engine import HybridSelector
from memtui.core.recall.lexical import LexicalIndex

T = TypeVar("T")
NOW = datetime(2026, 3, 10, 12, 0, tzinfo=UTC)
TYPES = ["user", "feedback", "project", "reference"]
CJK_WORDS = ("迁移 计划 数据库 测试 发布 监控 延迟 告警 值班 合作 伙伴 限流 保留 删除 格式 提交 审批 工单 面板 消费 "
             "生产 队列 分区 索引 缓存 日志 错误 重试 超时 配置 テスト データ リリース 監視 遅延 障害 対応 手順 設定 変換 "
             "画面 承認 本番 環境 接続 検証 移行 計画 担当 確認 通知 集計 保存 削除 更新 取得 送信 受信 分析")
CJK = CJK_WORDS.split()


def vocabulary(rng: random.Random) -> list[str]:
    syll = ["ka", "lo", "mi", "ne", "ru", "sa", "to", "vi", "ze", "po", "qu", "del", "tor", "ban", "fin"]
    words = {"".join(rng.choice(syll) for _ in range(rng.randint(2, 3))) for _ in range(2000)}
    return sorted(words)[:400]


def generate(root: Path, n: int) -> list[str]:
    """Write ``n`` memories below ``root``; return ``n`` query strings drawn the same way."""
    rng = random.Random(17)
    vocab = vocabulary(rng)
    root.mkdir(parents=True)
    t0 = NOW.timestamp() - n * 60
    for i in range(n):
        cjk = i % 4 == 0
        words = rng.choices(CJK if cjk else vocab, k=rng.randint(6, 12))
        desc = ("".join(words) if cjk else " ".join(words))
        sub = root / ("team" if i % 10 == 0 else "") / (f"d{i % 20}" if i % 3 == 0 else "")
        sub.mkdir(parents=True, exist_ok=True)
        p = sub / f"m{i:05d}.md"
        p.write_text(f"---\nname: memory {i}\ndescription: {desc}\ntype: {TYPES[i % 4]}\n---\n"
                     f"{' '.join(rng.choices(vocab, k=30))}\n**Why:** {' '.join(rng.choices(vocab, k=10))}\n", encoding="utf-8")
        os.utime(p, (t0 + i * 60, t0 + i * 60))
    queries = []
    for i in range(n):
        if i % 4 == 0:
            queries.append(" ".join(rng.choices(CJK, k=3)))
        else:
            queries.append(" ".join(rng.choices(vocab, k=rng.randint(3, 6))))
    return queries


def timed(fn: Callable[[], T]) -> tuple[float, T]:
    start = time.perf_counter()
    out = fn()
    return (time.perf_counter() - start) * 1000, out


def substring_scan(descs: list[tuple[str, str]], words: list[str]) -> list[str]:
    """The baseline search: the relpaths whose description contains any of ``words``."""
    return [r for r, d in descs if any(w in d for w in words)]


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    k = max(0, min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1))))
    return ordered[k]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--memories", type=int, default=20_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--runs", type=int, default=5, help="timed index builds (median)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        mem = Path(tmp) / "memory"
        queries = generate(mem, args.memories)[: args.queries]
        # Alternate the two scans and keep the best of two each, so neither pays for a cold cache.
        base_1, headers = timed(lambda: scan_headers(mem))
        scan_1, corpus = timed(lambda: load_corpus(mem))
        base_2, _ = timed(lambda: scan_headers(mem))
        scan_2, corpus = timed(lambda: load_corpus(mem))
        scan_ms, base_scan_ms = min(scan_1, scan_2), min(base_1, base_2)
        assert len(corpus.docs) == len(headers) == args.memories
        first_build_ms, index = timed(lambda: LexicalIndex.build(corpus.docs))
        builds, base_builds = [], []
        for _ in range(args.runs):
            builds.append(timed(lambda: LexicalIndex.build(corpus.docs))[0])
            base_builds.append(timed(lambda: scan_headers(mem))[0])
        build_ms, base_build_ms = statistics.median(builds), statistics.median(base_builds)
        corpus._index = index

        lex, base_lex, pre, base_pre = [], [], [], []
        descs = [(d.relpath, (d.header.description or "").lower()) for d in corpus.docs]
        hybrid = HybridSelector()
        for q in queries:
            ms, _ = timed(partial(recall, q, corpus, now=NOW, selector="lexical"))
            lex.append(ms)
            ms, _ = timed(partial(substring_scan, descs, q.lower().split()))
            base_lex.append(ms)
            ms, _ = timed(partial(hybrid.window, q, corpus.docs, corpus))
            pre.append(ms)
            ms, _ = timed(lambda: build_manifest([d.header for d in corpus.docs]))
            base_pre.append(ms)

        import test_recall_eval as ev  # type: ignore[import-not-found]

        scores = ev.evaluate(ev.write_workspace(Path(tmp) / "eval"))

    print(f"machine: Python {platform.python_version()}, {platform.system()}, {os.cpu_count()} cores, "
          f"load average {', '.join(f'{x:.1f}' for x in os.getloadavg())}")
    print(f"memories: {args.memories:,}   queries: {len(queries)}")
    print(f"scan (load_corpus):         {scan_ms:8.1f} ms   baseline scan_headers {base_scan_ms:8.1f} ms   ratio {scan_ms / base_scan_ms:.2f}x")
    print(f"lexical index build:        {build_ms:8.1f} ms   median of {args.runs}; baseline scan_headers {base_build_ms:.1f} ms; "
          f"ratio {build_ms / base_build_ms:.2f}x; first build (with the bm25s import) {first_build_ms:.1f} ms")
    print(f"lexical query p50 / p95:    {pct(lex, 50):8.2f} / {pct(lex, 95):.2f} ms   baseline substring scan {pct(base_lex, 50):.2f} / {pct(base_lex, 95):.2f} ms   ratio p50 {pct(lex, 50) / pct(base_lex, 50):.2f}x")
    print(f"hybrid prefilter p50 / p95: {pct(pre, 50):8.2f} / {pct(pre, 95):.2f} ms   baseline 200-newest manifest {pct(base_pre, 50):.2f} / {pct(base_pre, 95):.2f} ms   ratio p50 {pct(pre, 50) / pct(base_pre, 50):.2f}x")
    print(f"peak RSS:                   {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:8.0f} MB")
    print(f"eval set ({len(ev.QUERIES)} queries, {len(ev.MEMORIES)} memories): lexical recall@5 {scores.recall_at_5:.3f}, precision@5 {scores.precision_at_5:.3f}")


if __name__ == "__main__":
    main()
