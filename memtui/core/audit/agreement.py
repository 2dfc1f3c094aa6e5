"""How often memtui's recall selectors pick what the agent's own recall picked, on the user's own
prompts: recall@5 against Claude's picks, from the transcripts.

A Claude Code 2.1.328 session with recall on records each recall as a ``relevant_memories``
attachment after the prompt it answered. For each one, ``evaluate`` takes the prompt (the last
human turn before it), the memories Claude picked (those still in the memory dir; picks of
files gone since cannot be matched and are counted apart), and the memories the session had
already surfaced or read before it (the agent leaves those out, so they are left out of memtui's
candidates too), then asks each of memtui's selectors for its five picks over the memory dir as
it is now. recall@5 of a prompt = picks in common / Claude's picks; a selector's figure is the
mean over the prompts (``mean``) and the total of picks in common over the total of Claude's
picks (``pooled``). The ``lexical`` selector runs offline; ``hybrid`` (BM25 prefilter, then the
agent's own request) needs an API key and is reported as skipped without one.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memtui.core.places.locations import Locations
from memtui.core.sessions.projects import TranscriptFile, project_transcripts, transcript_session_id
from memtui.core.sessions.transcripts import (
    Transcript,
    is_human_turn,
    read_relevant_memories,
    read_transcript,
    tool_calls,
)
from memtui.core.sessions.uses import MemoryPaths

if TYPE_CHECKING:
    import anthropic

    from memtui.core.recall import RecallCorpus

K = 5  # the agent's cap on recalled memories: recall@5
SELECTORS = ("lexical", "hybrid")


@dataclass(frozen=True, slots=True)
class RecalledPrompt:
    """One recall the agent made: ``session_id``, ``transcript``, ``line`` (of the attachment),
    ``prompt``, ``claude`` (its picks, relpaths), ``before`` (memories surfaced or read earlier
    in the session)."""

    session_id: str
    transcript: Path
    line: int
    prompt: str
    claude: tuple[str, ...]
    before: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class PromptResult:
    """One prompt scored: ``recalled`` (the agent's recall), ``gone`` (its picks no longer in
    the memory dir), ``picks`` and ``hits`` per selector (``None`` when the selector did not
    run), ``recall`` per selector (``None`` without a pick of Claude's left to match)."""

    recalled: RecalledPrompt
    gone: tuple[str, ...]
    picks: Mapping[str, tuple[str, ...] | None]
    hits: Mapping[str, int]

    @property
    def matchable(self) -> int:
        """Claude's picks that still exist."""
        return len(self.recalled.claude) - len(self.gone)

    def recall_of(self, selector: str) -> float | None:
        """recall@5 of ``selector`` on this prompt."""
        if self.picks.get(selector) is None or not self.matchable:
            return None
        return self.hits[selector] / self.matchable

    def to_json(self) -> dict[str, Any]:
        """``{session, line, prompt, claude, gone, picks: {selector: [...]|null}, recall_at_5: {…}}``."""
        r = self.recalled
        return {
            "session": r.session_id, "transcript": str(r.transcript), "line": r.line, "prompt": r.prompt,
            "claude": list(r.claude), "gone": list(self.gone),
            "picks": {k: None if v is None else list(v) for k, v in self.picks.items()},
            "recall_at_5": {k: self.recall_of(k) for k in self.picks},
        }


@dataclass(frozen=True, slots=True)
class Agreement:
    """The evaluation: ``prompts`` scored, ``sessions`` read, ``sessions_with_recall``,
    ``skipped`` (selector → why it did not run)."""

    prompts: tuple[PromptResult, ...]
    sessions: int
    sessions_with_recall: int
    selectors: tuple[str, ...]
    skipped: Mapping[str, str] = field(default_factory=dict)

    def mean(self, selector: str) -> float | None:
        """The mean recall@5 over the prompts with a pick left to match."""
        values = [v for p in self.prompts if (v := p.recall_of(selector)) is not None]
        return sum(values) / len(values) if values else None

    def pooled(self, selector: str) -> float | None:
        """Picks in common over Claude's picks, all prompts together."""
        scored = [p for p in self.prompts if p.picks.get(selector) is not None and p.matchable]
        total = sum(p.matchable for p in scored)
        return sum(p.hits[selector] for p in scored) / total if total else None

    def to_json(self) -> dict[str, Any]:
        """``{k, sessions, sessions_with_recall, prompts: N, recall_at_5: {selector: {mean,
        pooled}|null}, skipped: {selector: reason}, details: [...]}``."""
        return {
            "k": K,
            "sessions": self.sessions,
            "sessions_with_recall": self.sessions_with_recall,
            "prompts": len(self.prompts),
            "recall_at_5": {s: None if s in self.skipped else {"mean": self.mean(s), "pooled": self.pooled(s)} for s in self.selectors},
            "skipped": dict(self.skipped),
            "details": [p.to_json() for p in self.prompts],
        }


def recalled_prompts(transcript: Transcript, path: Path, paths: MemoryPaths) -> list[RecalledPrompt]:
    """The recalls of one transcript (see the module docstring), in order."""
    out: list[RecalledPrompt] = []
    session = transcript.session_id or path.stem
    prompt: str | None = None
    surfaced: dict[str, None] = {}
    reads = {c.entry: c for c in tool_calls(transcript.entries) if c.name == "Read"}
    for entry in transcript.entries:
        if is_human_turn(entry) and not entry.text.lstrip().startswith("<"):
            prompt = entry.text
        call = reads.get(entry.index)
        if call is not None and (rel := paths.relpath(call.input.get("file_path"), entry.cwd)) is not None:
            surfaced.setdefault(rel, None)
        att = entry.attachment
        if att is None or att.kind != "relevant_memories":
            continue
        picks = [rel for m in read_relevant_memories(att) if (rel := paths.relpath(m.path, entry.cwd)) is not None]
        if prompt is not None and picks:
            out.append(RecalledPrompt(session, path, att.line, prompt, tuple(dict.fromkeys(picks)), tuple(surfaced)))
        for rel in picks:
            surfaced.setdefault(rel, None)
    return out


def collect(locations: Locations, transcripts: Sequence[TranscriptFile] | None = None) -> tuple[list[RecalledPrompt], int, int]:
    """Every recall of the project's sessions: ``(recalls, sessions read, sessions with a
    recall)``. Unreadable transcripts are left out."""
    files = project_transcripts(locations) if transcripts is None else list(transcripts)
    paths = MemoryPaths(locations.memory_dir)
    found: list[RecalledPrompt] = []
    sessions: set[str] = set()
    with_recall: set[str] = set()
    for tf in files:
        session = transcript_session_id(tf)
        sessions.add(session)
        try:
            with open(tf.path, "rb") as fh:
                if b'"relevant_memories"' not in fh.read():
                    continue
            transcript = read_transcript(tf.path)
        except OSError:
            continue
        got = recalled_prompts(transcript, tf.path, paths)
        if got:
            with_recall.add(session)
        found.extend(got)
    return found, len(sessions), len(with_recall)


def evaluate(
    locations: Locations,
    now: datetime,
    *,
    corpus: RecallCorpus | None = None,
    recalls: Sequence[RecalledPrompt] | None = None,
    client: anthropic.Anthropic | None = None,
    environ: Mapping[str, str] | None = None,
    model: str | None = None,
    cancelled: Callable[[], bool] | None = None,
) -> Agreement:
    """Score memtui's selectors against the agent's recalls (see the module docstring).
    ``corpus``: the memory dir's (loaded when not given); ``recalls``: from ``collect`` when not
    given; ``client`` / ``environ`` / ``model``: for the hybrid selector (skipped without a
    credential). Never raises for a model or network failure (that prompt's hybrid picks are
    empty and its error is kept out of the figures: ``None``)."""
    from memtui.core.recall import choose_model, load_corpus, recall
    from memtui.core.recall.claude import has_credentials

    release = locations.flavor.behaviour
    if corpus is None:
        from memtui.core.memory.catalogdb import CatalogDB

        cache = CatalogDB.for_memory_dir(locations.state_dir, locations.memory_dir, fmt=release.memory_format)
        corpus = load_corpus(locations.memory_dir, release.memory_format, cache=cache)
    sessions = with_recall = 0
    if recalls is None:
        found, sessions, with_recall = collect(locations)
    else:
        found = list(recalls)
        sessions = len({r.session_id for r in found})
        with_recall = sessions
    skipped: dict[str, str] = {}
    if client is None and not has_credentials(environ):
        skipped["hybrid"] = "needs an API key (ANTHROPIC_API_KEY): it asks Claude over a BM25-prefiltered manifest"
    settings_model, _ = locations.settings.get("model")
    chosen_model = choose_model(model, settings_model, release.recall_request)
    results: list[PromptResult] = []
    for rp in found:
        if cancelled is not None and cancelled():
            break
        gone = tuple(p for p in rp.claude if corpus.position(p) is None)
        picks: dict[str, tuple[str, ...] | None] = {}
        hits: dict[str, int] = {}
        for name in SELECTORS:
            if name in skipped:
                picks[name], hits[name] = None, 0
                continue
            result = recall(rp.prompt, corpus, now=now, selector=name, surfaced=rp.before, surfaced_units=0,  # type: ignore[arg-type]
                            model=chosen_model, client=client, environ=environ, behaviour=release, preview=True)
            if result.error:
                picks[name], hits[name] = None, 0
                continue
            chosen = tuple(p.relpath for p in result.picks[:K])
            picks[name] = chosen
            hits[name] = len(set(chosen) & (set(rp.claude) - set(gone)))
        results.append(PromptResult(rp, gone, picks, hits))
    return Agreement(tuple(results), sessions, with_recall, SELECTORS, skipped)
