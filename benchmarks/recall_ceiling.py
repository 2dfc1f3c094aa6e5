"""How far the offline rankings could go: recall@k of each raw ranking, with no pick rule.

For every labelled prompt with a relevant memory, the share of its relevant memories among the
first k of three rankings over the whole memory dir — BM25 (``LexicalIndex.scores``, memories
with a positive score), WordLlama cosine similarity (``DenseIndex.similarities``) and their
fusion (``memtui.core.recall.semantic.fused_ranking``, the semantic selector's order) — averaged
over prompts. A selector that picks at most five from one of these orders can reach at most the
k = 5 figure, whatever its thresholds; picking five every time costs precision@5 (about 0.25 on
sets with 1.3 relevant memories per prompt).

Run: ``python benchmarks/recall_ceiling.py [--set FILE]...`` (default: every set in the tree).
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import numpy as np

from memtui.core.recall.corpus import load_corpus
from memtui.core.recall.evaluate import load_set
from memtui.core.recall.semantic import fused_ranking

ROOT = Path(__file__).resolve().parent
SETS = [
    ROOT.parent / "memtui" / "evalsets" / "recall" / "prompts.jsonl",
    ROOT / "heldback_recall" / "prompts.jsonl",
    ROOT / "heldback_recall_2" / "prompts.jsonl",
    ROOT / "heldback_recall_3" / "prompts.jsonl",
]
KS = (1, 3, 5, 10)


def ceiling(source: Path, state: Path) -> dict[str, dict[int, float]]:
    """``{ranking: {k: mean recall@k}}`` over the prompts of ``source`` with a relevant memory."""
    labelled = load_set(source)
    corpus = load_corpus(labelled.memory_dir, state_dir=state)
    dense, lexical = corpus.dense_index(), corpus.lexical_index()
    relpaths = [d.relpath for d in corpus.docs]
    got: dict[str, dict[int, list[float]]] = {m: {k: [] for k in KS} for m in ("bm25", "dense", "fused")}
    for prompt in labelled.prompts:
        relevant = set(prompt.relevant)
        if not relevant:
            continue
        sims, bm25 = dense.similarities(prompt.query), lexical.scores(prompt.query)
        orders = {
            "bm25": [i for i in np.argsort(-bm25, kind="stable").tolist() if bm25[i] > 0],
            "dense": np.argsort(-sims, kind="stable").tolist(),
            "fused": [f.index for f in fused_ranking(prompt.query, corpus)],
        }
        for name, order in orders.items():
            for k in KS:
                got[name][k].append(len(relevant & {relpaths[i] for i in order[:k]}) / len(relevant))
    return {name: {k: float(np.mean(v)) for k, v in by_k.items()} for name, by_k in got.items()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--set", type=Path, action="append", help="a labelled set (JSONL beside a memories/ dir); repeatable")
    args = ap.parse_args()
    print("| set | ranking | " + " | ".join(f"recall@{k}" for k in KS) + " |")
    print("|---|---|" + "---:|" * len(KS))
    with tempfile.TemporaryDirectory() as state:
        for source in args.set or SETS:
            for name, by_k in ceiling(source, Path(state)).items():
                label = source.parent.name if source.parent.name != "recall" else "shipped"
                print(f"| {label} | {name} | " + " | ".join(f"{by_k[k]:.2f}" for k in KS) + " |")


if __name__ == "__main__":
    main()
