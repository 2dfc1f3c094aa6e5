"""recall@5, precision@5 and MRR of the offline selectors on a **held-back** labelled set.

The sets: ``benchmarks/heldback_recall`` (the default; 32 memories and 32 prompts about a data
platform), ``heldback_recall_2`` (48 memories, 49 prompts: a mobile game studio's backend) and
``heldback_recall_3`` (49 memories, 47 prompts: a hospital's scheduling platform), each written
by someone who had seen neither memtui's recall code nor a selector's output, in English,
Chinese and Japanese, with prompts that have no relevant memory, prompts across languages and
paraphrases. None is shipped in the wheel. Once a set has been looked at to change a selector it
is a development set; ``benchmarks/README.md`` ("Recall across languages") says which figures
were measured while each was still held back.

Figures per selector, over every prompt and per language:

- ``semantic`` and ``lexical`` as ``memtui recall eval`` scores them — every prompt recalled
  for, including the Chinese and Japanese ones the agent skips (what recall *would* pick);
- ``lexical, agent skips`` — BM25 as the agent experiences it: a prompt it skips (no
  whitespace) gets no pick.

Run: ``python benchmarks/recall_heldback.py [--set FILE] [--json]``.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

from memtui.core.recall.engine import LexicalSelector, SemanticSelector, selector_picks
from memtui.core.recall.evaluate import evaluate, load_set
from memtui.core.recall.manifest import skip_reason

SET = Path(__file__).resolve().parent / "heldback_recall" / "prompts.jsonl"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--set", type=Path, default=SET, help="the labelled set (JSONL beside a memories/ dir; default: %(default)s)")
    args = ap.parse_args()
    labelled = load_set(args.set)
    built = {"semantic": SemanticSelector(), "lexical": LexicalSelector()}

    def choose(name: str, query: str, corpus) -> list[str]:  # noqa: ANN001 - RecallCorpus
        if name == "lexical, agent skips":
            return [] if skip_reason(query) is not None else selector_picks(built["lexical"], query, corpus)
        return selector_picks(built[name], query, corpus)

    names = ["semantic", "lexical", "lexical, agent skips"]
    with tempfile.TemporaryDirectory() as state:  # a fresh embedding cache: nothing from elsewhere
        ev = evaluate(labelled, names, choose, state_dir=Path(state))
    langs = ev.groups()["by_language"]
    rows = {name: {"all": ev.scores(name).to_json(), **{k: ev.scores(name, keep).to_json() for k, keep in langs.items()}} for name in names}
    if args.json:
        json.dump({"set": str(args.set), "prompts": len(labelled.prompts), "memories": ev.memories,
                   "agent_skips": len(ev.agent_skips), "selectors": rows, "details": ev.to_json()["details"]},
                  sys.stdout, ensure_ascii=False, indent=1)
        print()
        return
    print(f"{len(labelled.prompts)} prompts over {ev.memories} memories; {len(ev.agent_skips)} prompts the agent skips (no whitespace)\n")
    print("| selector | group | prompts | recall@5 | precision@5 | MRR | unrelated with no pick |")
    print("|---|---|---:|---:|---:|---:|---:|")
    fmt = lambda v: "—" if v is None else f"{v:.2f}"  # noqa: E731
    for name in names:
        for group, s in rows[name].items():
            quiet = f"{s['quiet']}/{s['unrelated']}" if s["unrelated"] else "—"
            print(f"| {name} | {group} | {s['prompts']} | {fmt(s['recall_at_5'])} | {fmt(s['precision_at_5'])} | {fmt(s['mrr'])} | {quiet} |")


if __name__ == "__main__":
    main()
