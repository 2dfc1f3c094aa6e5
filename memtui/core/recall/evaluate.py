"""How good each recall selector is on a labelled set: recall@5, precision@5 and MRR.

A **labelled set** is a JSONL file, one prompt a line — ``{"query": "...", "relevant":
["path.md", ...]}`` (paths relative to the memory dir, or absolute), optionally with ``"lang"``
and ``"split"`` (figures are also given per language and per split) — plus a memory dir. An
empty ``relevant`` list says that no memory should be recalled for that prompt.

Each selector is asked for its picks for every prompt over every memory, **as if the agent
recalled for it**: a prompt the agent would skip (a Chinese or Japanese one without spaces) is
scored on what recall would pick, and the number of such prompts is reported apart. Per prompt
with relevant memories R and picks P (at most 5, in order):

- recall@5 = |R ∩ P| / min(|R|, 5);
- precision@5 = |R ∩ P| / |P| (0 when nothing is picked);
- reciprocal rank = 1 / the position in P of the first relevant pick (0 when none).

A prompt without relevant memories counts only for precision: 1 when nothing is picked, else 0
(``quiet`` counts them). A selector's figure is the mean over the prompts.

memtui ships a set written for this (``SHIPPED_SET``: 65 memories and 57 prompts in English,
Chinese and Japanese, a third of each language held out from calibration).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memtui.core.base.jsontext import JSONInputError, loads_checked
from memtui.core.base.safe_read import read_regular
from memtui.core.memory.memories import SEED_FORMAT
from memtui.core.places.behaviour import MemoryFormat
from memtui.core.recall.corpus import RecallCorpus, load_corpus, normalise_paths
from memtui.core.recall.manifest import skip_reason

K = 5  # the agent's cap on recalled memories
# The set shipped with memtui: its prompts and its memory dir.
SHIPPED_SET = Path(__file__).resolve().parents[2] / "evalsets" / "recall" / "prompts.jsonl"
# A labelled set larger than this is refused (a set is a few hundred lines).
MAX_SET_BYTES = 16 * 1024 * 1024


class EvalSetError(ValueError):
    """A labelled set that cannot be used: the file and line, and what is wrong."""


@dataclass(frozen=True, slots=True)
class LabelledPrompt:
    """One line of a set: ``query``, ``relevant`` (relpaths), ``lang`` and ``split`` (``None``
    when not given), ``line`` (1-based)."""

    query: str
    relevant: tuple[str, ...]
    lang: str | None
    split: str | None
    line: int


@dataclass(frozen=True, slots=True)
class EvalSet:
    """A labelled set: ``prompts``, ``source`` (the JSONL) and ``memory_dir``; ``missing``: the
    relevant paths that are not memories of the dir (as ``(line, path)``)."""

    prompts: tuple[LabelledPrompt, ...]
    source: Path
    memory_dir: Path
    missing: tuple[tuple[int, str], ...] = ()


def default_memory_dir(source: Path) -> Path:
    """Where a set's memories are when not given: the ``memories`` dir beside the JSONL."""
    return source.parent / "memories"


def load_set(source: Path, memory_dir: Path | None = None) -> EvalSet:
    """Read the labelled set ``source`` (JSONL, see the module docstring) over ``memory_dir``
    (default: ``default_memory_dir``). Raises ``EvalSetError`` for an unreadable file, a line
    that is not such an object, or a set without a prompt; a relevant path outside the memory
    dir is an error, one that names no file is listed in ``EvalSet.missing``."""
    memory_dir = memory_dir if memory_dir is not None else default_memory_dir(source)
    try:
        raw = read_regular(source, MAX_SET_BYTES)[0]
    except OSError as exc:
        raise EvalSetError(f"{source}: cannot read the set: {exc.strerror or exc}") from exc
    prompts: list[LabelledPrompt] = []
    missing: list[tuple[int, str]] = []
    for number, line in enumerate(raw.decode("utf-8", errors="replace").splitlines(), 1):
        if not line.strip():
            continue
        try:
            item = loads_checked(line)
        except JSONInputError as exc:  # NaN and nesting past MAX_JSON_DEPTH included
            raise EvalSetError(f"{source}:{number}: not JSON ({exc})") from exc
        if not isinstance(item, dict) or not isinstance(item.get("query"), str):
            raise EvalSetError(f"{source}:{number}: expected an object with a \"query\" string")
        relevant = item.get("relevant", [])
        if not isinstance(relevant, list) or not all(isinstance(r, str) for r in relevant):
            raise EvalSetError(f"{source}:{number}: \"relevant\" must be a list of paths")
        rels = []
        for r in relevant:
            norm = normalise_paths(memory_dir, [r])
            if not norm:
                raise EvalSetError(f"{source}:{number}: {r!r} is not inside the memory dir {memory_dir}")
            rel = norm.pop()
            if not (memory_dir / rel).is_file():
                missing.append((number, rel))
            rels.append(rel)
        lang, split = item.get("lang"), item.get("split")
        prompts.append(LabelledPrompt(item["query"], tuple(dict.fromkeys(rels)), lang if isinstance(lang, str) else None,
                                      split if isinstance(split, str) else None, number))
    if not prompts:
        raise EvalSetError(f"{source}: no prompt in the set")
    return EvalSet(tuple(prompts), source, memory_dir, tuple(missing))


@dataclass(frozen=True, slots=True)
class Scores:
    """Mean figures over some prompts: ``recall_at_5``, ``mrr`` (over the ``labelled`` prompts
    that have relevant memories; ``None`` when there are none), ``precision_at_5`` (over all
    ``prompts``), ``quiet`` / ``unrelated`` (prompts without relevant memories that got no pick
    / all of them), ``mean_picks``."""

    prompts: int
    labelled: int
    recall_at_5: float | None
    precision_at_5: float | None
    mrr: float | None
    unrelated: int
    quiet: int
    mean_picks: float

    def to_json(self) -> dict[str, Any]:
        """The figures as a JSON object (rounded to 4 places)."""
        def r(v: float | None) -> float | None:
            return None if v is None else round(v, 4)

        return {"prompts": self.prompts, "labelled": self.labelled, "recall_at_5": r(self.recall_at_5),
                "precision_at_5": r(self.precision_at_5), "mrr": r(self.mrr), "unrelated": self.unrelated,
                "quiet": self.quiet, "mean_picks": round(self.mean_picks, 3)}


def score(items: Sequence[tuple[Sequence[str], Sequence[str]]]) -> Scores:
    """The mean figures of ``(relevant, picks)`` pairs (see the module docstring)."""
    recalls: list[float] = []
    precisions: list[float] = []
    rranks: list[float] = []
    unrelated = quiet = 0
    for relevant, picks in items:
        picks = list(picks)[:K]
        rel = set(relevant)
        if not rel:
            unrelated += 1
            quiet += not picks
            precisions.append(0.0 if picks else 1.0)
            continue
        hits = sum(1 for p in picks if p in rel)
        recalls.append(hits / min(len(rel), K))
        precisions.append(hits / len(picks) if picks else 0.0)
        rranks.append(next((1 / (i + 1) for i, p in enumerate(picks) if p in rel), 0.0))

    def mean(values: list[float]) -> float | None:
        return sum(values) / len(values) if values else None

    return Scores(len(items), len(recalls), mean(recalls), mean(precisions), mean(rranks), unrelated, quiet,
                  sum(min(len(p), K) for _, p in items) / len(items) if items else 0.0)


@dataclass(frozen=True, slots=True)
class Evaluation:
    """Every selector on a set: ``picks[selector][i]`` for ``set.prompts[i]``; ``skipped``
    (selector → why it did not run); ``agent_skips``: the prompts the agent would not recall for
    (their indexes)."""

    set: EvalSet
    memories: int
    selectors: tuple[str, ...]
    picks: Mapping[str, tuple[tuple[str, ...], ...]]
    skipped: Mapping[str, str] = field(default_factory=dict)
    agent_skips: tuple[int, ...] = ()

    def scores(self, selector: str, keep: Callable[[LabelledPrompt], bool] = lambda p: True) -> Scores:
        """The figures of ``selector`` over the prompts ``keep`` accepts."""
        picks = self.picks[selector]
        return score([(p.relevant, picks[i]) for i, p in enumerate(self.set.prompts) if keep(p)])

    def groups(self) -> dict[str, dict[str, Callable[[LabelledPrompt], bool]]]:
        """The groups figures are given for: ``by_language`` and ``by_split`` (those the set
        labels)."""
        langs = sorted({p.lang for p in self.set.prompts if p.lang})
        splits = sorted({p.split for p in self.set.prompts if p.split})
        return {
            "by_language": {lang: (lambda p, lang=lang: p.lang == lang) for lang in langs},
            "by_split": {split: (lambda p, split=split: p.split == split) for split in splits},
        }

    def to_json(self) -> dict[str, Any]:
        """``{set, memory_dir, prompts, memories, k, agent_skips, missing, selectors: {name:
        {all: scores, by_language: {lang: scores}, by_split: {split: scores}}}, skipped: {name:
        reason}, details: [{query, lang, split, relevant, skipped_by_agent, picks: {name:
        [paths]}}]}`` (scores: see ``Scores.to_json``)."""
        groups = self.groups()
        selectors: dict[str, Any] = {}
        for name in self.selectors:
            if name in self.skipped:
                continue
            entry: dict[str, Any] = {"all": self.scores(name).to_json()}
            for group, keeps in groups.items():
                entry[group] = {label: self.scores(name, keep).to_json() for label, keep in keeps.items()}
            selectors[name] = entry
        skips = set(self.agent_skips)
        return {
            "set": str(self.set.source),
            "memory_dir": str(self.set.memory_dir),
            "prompts": len(self.set.prompts),
            "memories": self.memories,
            "k": K,
            "agent_skips": len(self.agent_skips),
            "missing": [{"line": line, "path": path} for line, path in self.set.missing],
            "selectors": selectors,
            "skipped": dict(self.skipped),
            "details": [
                {
                    "query": p.query, "lang": p.lang, "split": p.split, "relevant": list(p.relevant),
                    "skipped_by_agent": i in skips,
                    "picks": {name: list(self.picks[name][i]) for name in self.selectors if name not in self.skipped},
                }
                for i, p in enumerate(self.set.prompts)
            ],
        }


Chooser = Callable[[str, str, RecallCorpus], Sequence[str]]


def evaluate(
    labelled: EvalSet,
    selectors: Iterable[str],
    choose: Chooser,
    *,
    fmt: MemoryFormat | None = None,
    skipped: Mapping[str, str] | None = None,
    corpus: RecallCorpus | None = None,
    state_dir: Path | None = None,
) -> Evaluation:
    """Run ``choose(selector, query, corpus) → picks (relpaths, in order)`` for every selector
    (those in ``skipped`` are not run) and prompt over the set's memory dir (read in the agent
    memory format ``fmt``; ``state_dir``: where embeddings are cached)."""
    if corpus is None:
        corpus = load_corpus(labelled.memory_dir, fmt or SEED_FORMAT, state_dir=state_dir)
    names = tuple(selectors)
    skipped = dict(skipped or {})
    picks: dict[str, tuple[tuple[str, ...], ...]] = {}
    for name in names:
        if name in skipped:
            continue
        picks[name] = tuple(tuple(choose(name, p.query, corpus)) for p in labelled.prompts)
    agent_skips = tuple(i for i, p in enumerate(labelled.prompts) if skip_reason(p.query) is not None)
    return Evaluation(labelled, len(corpus.docs), names, picks, skipped, agent_skips)
