"""Recall end to end (docs/behaviour.md §6): skip rules → selector → picks with reasons → injected text.

``recall(query, corpus, now=…)`` runs one recall the way the reference agent would for a
prompt, with the selector asked for, and returns a ``RecallResult`` that explains itself:
the manifest the reference would send (the 200 newest memories), what was actually sent,
each pick with a reason and its age, near misses, picks the reference could never have made
(outside its 200-newest window), the exact injected text, and an error or offline reason.

Selectors (one interface, ``Selector.select``):

- ``semantic`` — static embeddings and BM25 fused, with a calibrated threshold, over every
  memory (``memtui.core.recall.semantic``); offline.
- ``lexical`` — BM25 over every memory (``memtui.core.recall.lexical``); offline.
- ``claude`` — the reference's request over the 200 newest (``memtui.core.recall.claude``).
- ``hybrid`` — prefilter of *all* memories to the best 200 by the semantic selector's fused
  ranking, then the same request.
- ``auto`` — ``claude`` when an API credential is configured, else ``lexical``: on a held-back
  labelled set BM25 recalls more than ``semantic`` (0.81 against 0.72 recall@5,
  ``benchmarks/recall_heldback.py``), so the embeddings are a choice, not the default.

When the agent would not recall (a prompt without whitespace, the session budget spent, recall
off for this user), the result says why and still shows what recall *would* pick
(``RecallResult.would_pick``), computed offline: nothing is sent for a skipped prompt.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from itertools import compress
from typing import TYPE_CHECKING, Any, Literal, Protocol

from memtui.core.memory.age import age_days, age_label, stale_caveat
from memtui.core.places.agentconfig import RecallState
from memtui.core.places.behaviour import Behaviour, InjectionFormat, RecallRequest
from memtui.core.places.releases.seed import SEED
from memtui.core.recall.claude import (
    DEFAULT_MODEL,
    SEED_REQUEST,
    ClaudeRequest,
    ask_claude,
    build_request,
    has_credentials,
    make_client,
)
from memtui.core.recall.corpus import RecallCorpus, RecallDoc, normalise_paths
from memtui.core.recall.inject import (
    SEED_INJECTION,
    InjectedMemory,
    inject,
    injected_text,
    read_for_injection,
)
from memtui.core.recall.ranking import (
    MAX_PICKS,
    MIN_SHARE,
    NEAR_MISSES,
    RELPATH,
    Ranked,
    split_picks,
)
from memtui.core.recall.manifest import (
    MANIFEST_CAP,
    Manifest,
    build_manifest,
    skip_reason,
)
from memtui.core.base.units import utf16_len
from memtui.core.base.wording import DOES_NOT_RECALL


class JsonShaped(Protocol):
    """A finding with a JSON shape (a ``Conflict``: the recall room does not import verify)."""

    def to_json(self) -> dict[str, Any]: ...


if TYPE_CHECKING:
    import anthropic
    import numpy as np

SelectorName = Literal["auto", "claude", "semantic", "lexical", "hybrid"]
SELECTOR_NAMES: tuple[SelectorName, ...] = ("auto", "claude", "semantic", "lexical", "hybrid")
# The offline selector ``auto`` falls back to, and the one that computes ``would_pick``
# (the better of the two offline selectors on the held-back set of ``benchmarks/heldback_recall``).
OFFLINE_DEFAULT: SelectorName = "lexical"
# The selectors that never send a request.
OFFLINE_SELECTORS: tuple[SelectorName, ...] = ("semantic", "lexical")
NO_KEY = "no API key: set ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN / ANTHROPIC_PROFILE) to ask Claude"


# What a near miss's score is: BM25 (lexical, and the Claude selectors' near misses, which come
# from the lexical ranking) or the semantic selector's evidence (``memtui.core.recall.semantic``).
NearScore = Literal["bm25", "evidence"]


@dataclass(frozen=True, slots=True)
class NearMiss:
    """A memory that nearly made it: ``relpath`` and its ``score`` (rounded to 3 decimals; BM25
    for lexical and the Claude selectors; for semantic its evidence: a pick needs 1.0 and 70% of
    the best pick's)."""

    relpath: str
    score: float


def near_misses(scored: Iterable[tuple[str, float]], limit: int = NEAR_MISSES) -> tuple[NearMiss, ...]:
    """The near misses of ``scored`` (``(relpath, score)`` pairs of memories not picked): the
    ``limit`` highest scores, highest first, ties by relpath — compared as shown, rounded to 3
    decimals."""
    ranked = sorted((NearMiss(rel, round(score, 3)) for rel, score in scored), key=lambda n: (-n.score, n.relpath))
    return tuple(ranked[:limit])


def near_miss_scale(score: NearScore, selector: str) -> str:
    """What a near miss's score means, in one plain line for a person. ``score``: the kind the
    near misses carry (``RecallResult.near_score``); ``selector``: the selector that ran (the
    Claude selectors choose without the score, which then only orders the near misses)."""
    if score == "evidence":
        from memtui.core.recall.semantic import CANDIDATES, RELATIVE  # numpy: only once a result is shown

        return f"match in meaning and words, higher is closer (a pick needs 1.00, {RELATIVE:.0%} of the best's and a top-{CANDIDATES} rank)"
    if selector in ("claude", "hybrid"):
        return "BM25 word-match score, higher is closer (the model chose its picks without it)"
    return "BM25 word-match score, higher is closer (no fixed scale: compare within one prompt)"


@dataclass(frozen=True, slots=True)
class Selection:
    """What a selector returns: ``picks`` as ``(doc, reason)`` in rank order (at most 5),
    ``near_misses``, ``online`` (a request went out), ``error`` (then no picks), ``notes``
    (names dropped or cut), ``request`` and ``sent`` (the request and manifest sent to
    Claude, or that would have been sent had there been a key; ``None`` for lexical),
    ``near_score`` (what the near misses' scores are: ``near_miss_scale``)."""

    picks: tuple[tuple[RecallDoc, str], ...] = ()
    near_misses: tuple[NearMiss, ...] = ()
    online: bool = False
    error: str | None = None
    notes: tuple[str, ...] = ()
    request: ClaudeRequest | None = None
    sent: Manifest | None = None
    near_score: NearScore = "bm25"


class Selector(Protocol):
    """One way of choosing memories. ``candidates``: the memories recall may pick from, newest
    first (already-surfaced ones removed); ``corpus``: the whole scan (its lexical index
    serves every selector's near misses)."""

    name: str

    def select(self, query: str, candidates: Sequence[RecallDoc], corpus: RecallCorpus, recent_tools: Sequence[str]) -> Selection:
        """Choose at most 5 of ``candidates`` for ``query``. Never raises for model/network
        problems: they come back as ``Selection.error``."""
        ...


class Candidates(list[RecallDoc]):
    """What recall may pick from: ``docs`` (a corpus's, newest first) without those at the
    positions ``dropped`` (the memories already surfaced), in the same order. A plain list to
    any selector; the lexical ranking and the hybrid window use ``dropped`` instead of
    looking every candidate up by relpath."""

    def __init__(self, docs: Sequence[RecallDoc], dropped: Iterable[int] = ()) -> None:
        super().__init__(docs)
        self.dropped = tuple(sorted(set(dropped)))
        for i in reversed(self.dropped):
            del self[i]


def _excluded(candidates: Sequence[RecallDoc], corpus: RecallCorpus) -> tuple[int, ...] | None:
    """The positions in ``corpus.docs`` that ``candidates`` leaves out, when known without a
    lookup per doc (all of the corpus, or ``Candidates`` built from it); else ``None``."""
    if len(candidates) == len(corpus.docs):
        return ()
    if isinstance(candidates, Candidates) and len(candidates) + len(candidates.dropped) == len(corpus.docs):
        return candidates.dropped
    return None


def _lexical_ranking(query: str, candidates: Sequence[RecallDoc], corpus: RecallCorpus, limit: int | None) -> list[Ranked]:
    import numpy as np  # the ranking's own: importing the engine (every pane at start) does not pay for it

    excluded = _excluded(candidates, corpus)
    allowed: np.ndarray | frozenset[str] | None
    if excluded is None:
        allowed = frozenset(map(RELPATH, candidates))
    elif excluded:
        allowed = np.ones(len(corpus.docs), dtype=bool)
        allowed[list(excluded)] = False
    else:
        allowed = None
    return corpus.lexical_index().rank(query, allowed, limit)


def _near(ranked: Iterable[Ranked], corpus: RecallCorpus, exclude: set[str]) -> tuple[NearMiss, ...]:
    """The near misses of a BM25 ranking, ``exclude`` (the picks' relpaths) left out."""
    docs = corpus.lexical_index().docs
    return near_misses((rel, r.score) for r in ranked if (rel := docs[r.index].relpath) not in exclude)


class LexicalSelector:
    """BM25 over every candidate (no 200 window); offline."""

    name = "lexical"

    def select(self, query: str, candidates: Sequence[RecallDoc], corpus: RecallCorpus, recent_tools: Sequence[str]) -> Selection:
        """Picks: scores within ``PICK_RATIO`` of the best (at most 5) that match at least
        ``MIN_SHARE`` of the query's term weight; reason = score and matched terms; near misses
        = the best-scoring of the others (the picks cut by ``MIN_SHARE`` among them), highest
        first (``near_misses``)."""
        index = corpus.lexical_index()
        ranked = _lexical_ranking(query, candidates, corpus, MAX_PICKS + NEAR_MISSES)
        picks, _rest = split_picks(ranked)
        if picks:
            share = index.term_share(query)
            picks = [r for r in picks if share[r.index] >= MIN_SHARE]
        out = []
        for r in picks:
            terms = index.matched_terms(query, r.index)
            out.append((index.docs[r.index], f"BM25 {r.score:.2f}; matched: {', '.join(terms)}"))
        chosen = {r.index for r in picks}
        near = near_misses((index.docs[r.index].relpath, r.score) for r in ranked if r.index not in chosen)
        return Selection(tuple(out), near)


class SemanticSelector:
    """Meaning and words fused (``memtui.core.recall.semantic``) over every candidate (no 200
    window); offline. Without the embedding model it falls back to the lexical selector and says
    so in ``Selection.notes``."""

    name = "semantic"

    def select(self, query: str, candidates: Sequence[RecallDoc], corpus: RecallCorpus, recent_tools: Sequence[str]) -> Selection:
        """Picks: the fused ranking's best candidates with enough evidence (at most 5); reason =
        similarity and matched terms; near misses = the candidates not picked with the most
        evidence, highest first."""
        from memtui.core.recall.embedding import ModelUnavailableError
        from memtui.core.recall.semantic import MEANING_MIN_LATIN, fused_ranking, latin_share, reason, split_semantic

        allowed = _allowed(candidates, corpus)
        try:
            ranked = fused_ranking(query, corpus, allowed, MAX_PICKS + NEAR_MISSES + MAX_PICKS)
        except ModelUnavailableError as exc:
            fallback = LexicalSelector().select(query, candidates, corpus, recent_tools)
            note = f"embedding model unavailable ({exc}): lexical picks"
            return Selection(fallback.picks, fallback.near_misses, notes=(note, *fallback.notes))
        picks, rest = split_semantic(ranked)
        index = corpus.lexical_index()
        meaning = latin_share(query) >= MEANING_MIN_LATIN
        out = tuple((corpus.docs[f.index], reason(f, index.matched_terms(query, f.index), meaning)) for f in picks)
        near = near_misses((corpus.docs[f.index].relpath, f.evidence) for f in rest)
        return Selection(out, near, near_score="evidence")


def _allowed(candidates: Sequence[RecallDoc], corpus: RecallCorpus) -> np.ndarray | None:
    from memtui.core.recall.semantic import allowed_mask

    return allowed_mask(candidates, corpus, _excluded(candidates, corpus))


@dataclass
class ClaudeSelector:
    """The reference's selector: ``model`` over the 200 newest candidates.

    ``client``: a ready client (tests inject one built on an ``httpx2.MockTransport``); else one
    is made with ``make_client`` when ``environ`` holds a credential, and without one the
    selection fails with a "no API key" error.
    """

    model: str = DEFAULT_MODEL
    client: anthropic.Anthropic | None = None
    environ: Mapping[str, str] | None = None
    name: str = "claude"
    shape: RecallRequest = SEED_REQUEST

    def _client(self) -> tuple[anthropic.Anthropic | None, str | None]:
        if self.client is not None:
            return self.client, None
        if not has_credentials(self.environ):
            return None, NO_KEY
        import anthropic

        try:
            return make_client(), None
        except anthropic.AnthropicError as exc:
            return None, f"client error: {exc}"

    def window(self, query: str, candidates: Sequence[RecallDoc], corpus: RecallCorpus) -> Sequence[RecallDoc]:
        """The memories shown to the model: the 200 newest (the reference's cap)."""
        return candidates[:MANIFEST_CAP]

    def reason(self, doc: RecallDoc, query: str, corpus: RecallCorpus) -> str:
        """Why a pick was made (the model gives names only, so memtui says who chose it and
        which query terms the memory shares, when any)."""
        index = corpus.lexical_index()
        pos = index.position(doc.relpath)
        terms = index.matched_terms(query, pos) if pos is not None else []
        shared = f"; shares: {', '.join(terms)}" if terms else ""
        return f"chosen by {self.model} from the manifest{shared}"

    def select(self, query: str, candidates: Sequence[RecallDoc], corpus: RecallCorpus, recent_tools: Sequence[str]) -> Selection:
        """One request; see ``memtui.core.recall.claude``."""
        window = list(self.window(query, candidates, corpus))
        sent = build_manifest([d.header for d in window], cap=len(window))
        sent = Manifest(sent.headers, sent.lines, len(candidates))
        request = build_request(query, sent, recent_tools, self.model, self.shape)
        ranked = _lexical_ranking(query, candidates, corpus, MAX_PICKS + NEAR_MISSES)
        client, problem = self._client()
        if client is None:
            return Selection((), _near(ranked, corpus, set()), False, problem, (), request, sent)
        by_rel = {d.relpath: d for d in window}
        reply = ask_claude(client, request, list(by_rel))
        picks = tuple((by_rel[n], self.reason(by_rel[n], query, corpus)) for n in reply.names)
        near = _near(ranked, corpus, set(reply.names))
        return Selection(picks, near, True, reply.error, reply.notes, request, sent)


@dataclass
class HybridSelector(ClaudeSelector):
    """memtui's selector past the 200 wall: lexical prefilter of every candidate to the best
    200 (padded with the newest unmatched ones when fewer match), shown newest first, then
    the Claude request over those."""

    name: str = "hybrid"

    def window(self, query: str, candidates: Sequence[RecallDoc], corpus: RecallCorpus) -> Sequence[RecallDoc]:
        """The best ``MANIFEST_CAP`` by the semantic selector's fused ranking (by BM25 when the
        embedding model is unavailable), newest first."""
        if len(candidates) <= MANIFEST_CAP:
            return candidates
        from memtui.core.recall.embedding import ModelUnavailableError
        from memtui.core.recall.semantic import fused_ranking

        ranked: Sequence[Ranked]
        try:
            ranked = [Ranked(f.index, f.score) for f in fused_ranking(query, corpus, _allowed(candidates, corpus), MANIFEST_CAP)]
        except ModelUnavailableError:
            ranked = _lexical_ranking(query, candidates, corpus, MANIFEST_CAP)
        excluded = _excluded(candidates, corpus)
        if excluded is not None:  # the corpus, in its order, without ``excluded``: by position
            positions = {r.index for r in ranked}
            left_out = set(excluded)
            pad = 0  # pad with the newest unmatched
            while len(positions) < MANIFEST_CAP:
                if pad not in left_out:
                    positions.add(pad)
                pad += 1
            return [corpus.docs[i] for i in sorted(positions)]
        chosen = {corpus.docs[r.index].relpath for r in ranked}
        for d in candidates:
            if len(chosen) >= MANIFEST_CAP:
                break
            chosen.add(d.relpath)
        return list(compress(candidates, map(chosen.__contains__, map(RELPATH, candidates))))

    def reason(self, doc: RecallDoc, query: str, corpus: RecallCorpus) -> str:
        """As for ``claude``, saying the manifest was prefiltered."""
        return super().reason(doc, query, corpus).replace("from the manifest", "from the prefiltered manifest")


def choose_model(
    option: str | None, settings_model: object = None, shape: RecallRequest = SEED_REQUEST, environ: Mapping[str, str] | None = None
) -> str:
    """The model: ``--model`` if given, else the release's model variable when set (Claude
    Code: ``ANTHROPIC_DEFAULT_SONNET_MODEL``), else the settings ``model`` (a non-empty string)
    when the release reads it for recall (the seed does, docs/behaviour.md §6), else the release's default."""
    if option:
        return option
    env = os.environ if environ is None else environ
    if shape.model_env and (env.get(shape.model_env) or "").strip():
        return env[shape.model_env].strip()
    if shape.uses_settings_model and isinstance(settings_model, str) and settings_model.strip():
        return settings_model.strip()
    return shape.default_model


OfflineCause = Literal["no-credentials", "by-choice"]


@dataclass(frozen=True, slots=True)
class SelectorChoice:
    """A selector name resolved. ``offline_cause``: ``None`` when the selector may send its
    request; ``"no-credentials"`` when no API credential (nor an injected client) is there;
    ``"by-choice"`` when an offline selector (semantic, lexical) was chosen although one is."""

    selector: Selector
    offline_cause: OfflineCause | None

    @property
    def offline_reason(self) -> str | None:
        """The cause as the sentence ``RecallResult.offline_reason`` carries."""
        if self.offline_cause == "by-choice":
            kind = "embeddings + BM25" if self.selector.name == "semantic" else "BM25"
            return f"{self.selector.name} selector ({kind}), offline by choice"
        if self.offline_cause == "no-credentials":
            return f"offline: {NO_KEY}"
        return None

    @property
    def sends_request(self) -> bool:
        """Whether running it sends a request (claude or hybrid, online)."""
        return self.selector.name not in OFFLINE_SELECTORS and self.offline_cause is None


def choose_selector(
    name: SelectorName,
    *,
    model: str = DEFAULT_MODEL,
    client: anthropic.Anthropic | None = None,
    environ: Mapping[str, str] | None = None,
    shape: RecallRequest = SEED_REQUEST,
) -> SelectorChoice:
    """The selector for ``name`` and why it runs offline, if it does. ``auto`` → ``claude``
    with a credential (or an injected ``client``), else ``OFFLINE_DEFAULT``; ``shape``: the release's
    recall request (the claude and hybrid selectors send it). Raises ``ValueError`` for an
    unknown name."""
    online_possible = client is not None or has_credentials(environ)
    if name == "auto":
        name = "claude" if online_possible else OFFLINE_DEFAULT
    cause: OfflineCause | None = None if online_possible else "no-credentials"
    if name == "semantic":
        return SelectorChoice(SemanticSelector(), "by-choice" if online_possible else cause)
    if name == "lexical":
        return SelectorChoice(LexicalSelector(), "by-choice" if online_possible else cause)
    if name == "claude":
        return SelectorChoice(ClaudeSelector(model, client, environ, shape=shape), cause)
    if name == "hybrid":
        return SelectorChoice(HybridSelector(model, client, environ, shape=shape), cause)
    raise ValueError(f"unknown selector {name!r}; choose one of {', '.join(SELECTOR_NAMES)}")


def resolve_selector(
    name: SelectorName,
    *,
    model: str = DEFAULT_MODEL,
    client: anthropic.Anthropic | None = None,
    environ: Mapping[str, str] | None = None,
    shape: RecallRequest = SEED_REQUEST,
) -> tuple[Selector, str | None]:
    """The selector for ``name`` and, when recall runs offline, why (``None`` when online is
    possible): ``choose_selector`` as a pair. Raises ``ValueError`` for an unknown name."""
    choice = choose_selector(name, model=model, client=client, environ=environ, shape=shape)
    return choice.selector, choice.offline_reason


@dataclass(frozen=True, slots=True)
class Pick:
    """A recalled memory: ``relpath``, ``reason``, age (``age_days``, ``age_label``,
    ``stale_caveat``), and ``in_reference_window`` (among the 200 newest the reference sees)."""

    doc: RecallDoc
    reason: str
    age_days: int
    age_label: str
    stale_caveat: str | None
    in_reference_window: bool

    @property
    def relpath(self) -> str:
        """POSIX path relative to the memory dir."""
        return self.doc.relpath


@dataclass(frozen=True, slots=True)
class RecallResult:
    """One recall, explained (see the module docstring). ``manifest`` is what the reference
    would send (the 200 newest candidates; ``total`` = all candidates); ``sent`` what this
    selector sent (``None`` offline); ``injected`` one entry per pick. When ``skipped``:
    ``would_pick``, what recall would pick had the agent not skipped it (not sent, not
    injected), by the offline selector ``would_pick_selector``. ``near_score``: what the near
    misses' scores are (``near_misses_scale`` says it in words)."""

    query: str
    selector: str
    online: bool
    offline_reason: str | None
    skipped: str | None
    manifest: Manifest
    sent: Manifest | None
    request: ClaudeRequest | None
    picks: tuple[Pick, ...]
    near_misses: tuple[NearMiss, ...]
    injected: tuple[InjectedMemory, ...]
    error: str | None
    notes: tuple[str, ...] = ()
    recent_tools: tuple[str, ...] = ()
    surfaced_units: int = 0
    dropped_surfaced: tuple[str, ...] = field(default=())
    gate: RecallState | None = None
    preview: bool = False
    injection: InjectionFormat = SEED_INJECTION
    release: str = ""
    would_pick: tuple[Pick, ...] = ()
    would_pick_selector: str | None = None
    near_score: NearScore = "bm25"

    @property
    def skipped_by_gate(self) -> bool:
        """Skipped because this user's agent does not recall at all (``gate`` off, no
        ``preview``), not because of the prompt or the session budget."""
        return (self.skipped is not None and self.gate is not None and not self.gate.on and not self.preview
                and skip_reason(self.query, self.surfaced_units) is None)

    @property
    def near_misses_scale(self) -> str:
        """What the near misses' scores mean, in one plain line (``near_miss_scale``)."""
        return near_miss_scale(self.near_score, self.would_pick_selector if self.skipped and self.would_pick_selector else self.selector)

    @property
    def reference_window_misses(self) -> tuple[str, ...]:
        """Picks outside the reference's 200-newest window (the reference could not see them)."""
        return tuple(p.relpath for p in self.picks if not p.in_reference_window)

    @property
    def injected_text(self) -> str:
        """The exact text injected into the conversation (``""`` when nothing is)."""
        return injected_text(self.injected, self.injection)

    @property
    def would_only(self) -> bool:
        """The agent does not recall for this user: the picks are what recall *would* pick."""
        return self.gate is not None and not self.gate.on

    def to_json(self, newer: Mapping[str, Sequence[JsonShaped]] | None = None) -> dict[str, Any]:
        """The ``memtui recall --json`` shape: ``{selector, online, skipped, manifest: {count,
        total, lines}, picks: [{path, reason, age_label, stale_caveat, newer_conflicts}],
        would_pick: [same shape as picks], would_pick_selector, near_misses: [{path, score}],
        reference_window_misses: [path], injected, error}``. ``error`` also carries the notes
        (names dropped or cut) when there is no error. ``would_pick`` is empty unless the prompt
        was skipped. ``newer``: relpath → the conflicts in which a newer memory disagrees with it
        (``memtui.core.verify.conflicts.newer_conflicts_in``); each pick's ``newer_conflicts`` is
        the JSON of its own (``[]`` when none)."""
        error = self.error or ("; ".join(self.notes) if self.notes else None)
        marks = newer or {}

        def shape(picks: Sequence[Pick]) -> list[dict[str, Any]]:
            return [
                {"path": p.relpath, "reason": p.reason, "age_label": p.age_label, "stale_caveat": p.stale_caveat,
                 "newer_conflicts": [c.to_json() for c in marks.get(p.relpath, ())]}
                for p in picks
            ]

        out: dict[str, Any] = {
            "selector": self.selector,
            "online": self.online,
            "skipped": self.skipped,
            "manifest": {"count": self.manifest.count, "total": self.manifest.total, "lines": list(self.manifest.lines)},
            "picks": shape(self.picks),
            "would_pick": shape(self.would_pick),
            "would_pick_selector": self.would_pick_selector,
            "near_misses": [{"path": n.relpath, "score": n.score} for n in self.near_misses],
            "reference_window_misses": list(self.reference_window_misses),
            "injected": self.injected_text,
            "error": error,
        }
        if self.gate is not None:
            out["release"] = self.release
            out["gate"] = {"on": self.gate.on, "source": self.gate.source, "reason": self.gate.reason}
            out["would_only"] = self.would_only
        if self.request is not None and self.request.style == "conversation":
            req = self.request
            out["request"] = {
                "model": req.model,
                "max_tokens": req.max_tokens,
                "system": req.system,
                "messages": list(req.messages),
                "output_format": {"type": "json_schema", "schema": req.schema},
                "thinking": req.thinking,
                "fallbacks": req.fallbacks,
            }
        return out


def surfaced_size(corpus: RecallCorpus, surfaced: Iterable[str]) -> int:
    """What ``surfaced`` memories would weigh against the session budget today: the UTF-16
    length of their injected content (files that do not exist count 0)."""
    total = 0
    for rel in normalise_paths(corpus.memory_dir, surfaced):
        i = corpus.position(rel)
        if i is not None:
            try:
                total += utf16_len(read_for_injection(corpus.docs[i].header.path)[0])
            except OSError:
                continue
    return total


def recall(
    query: str,
    corpus: RecallCorpus,
    *,
    now: datetime,
    selector: Selector | SelectorName = "auto",
    recent_tools: Sequence[str] = (),
    surfaced: Iterable[str] = (),
    surfaced_units: int | None = None,
    model: str = DEFAULT_MODEL,
    client: anthropic.Anthropic | None = None,
    environ: Mapping[str, str] | None = None,
    behaviour: Behaviour = SEED,
    gate: RecallState | None = None,
    preview: bool = False,
) -> RecallResult:
    """Run recall for ``query`` over ``corpus`` at time ``now`` (aware datetime).

    ``selector``: a name (``auto``/``claude``/``lexical``/``hybrid``) or a ``Selector``.
    ``recent_tools``: names for the request's ``Recently used tools:`` line.
    ``surfaced``: memories already surfaced this session (absolute or memory-dir-relative
    paths) — dropped from the candidates, as the reference drops them before asking.
    ``surfaced_units``: content already surfaced (UTF-16 code units) for the 60 KiB budget; by
    default the size of the ``surfaced`` files' injected content.
    ``model``/``client``/``environ``: for the Claude selectors (see ``resolve_selector``).
    ``behaviour``: the agent release whose request and injection text are modelled (the seed by
    default); ``gate``: whether this user's agent recalls at all (``RecallState``) — when it
    does not, recall is skipped with the gate's reason unless ``preview`` (then the result
    shows what recall *would* pick, ``RecallResult.would_only``).

    Raises ``ValueError`` only for an unknown selector name; model and network failures are
    in ``RecallResult.error``.
    """
    surfaced = list(surfaced)
    if isinstance(selector, str):
        chosen, offline = resolve_selector(selector, model=model, client=client, environ=environ, shape=behaviour.recall_request)
    else:
        chosen, offline = selector, None
    drop = normalise_paths(corpus.memory_dir, surfaced)
    candidates = Candidates(corpus.docs, (i for rel in drop if (i := corpus.position(rel)) is not None))
    reference = build_manifest([d.header for d in candidates[:MANIFEST_CAP]])
    reference = Manifest(reference.headers, reference.lines, len(candidates))
    units = surfaced_size(corpus, surfaced) if surfaced_units is None else surfaced_units
    tools = tuple(recent_tools)
    base: dict[str, Any] = {
        "query": query,
        "selector": chosen.name,
        "offline_reason": offline,
        "manifest": reference,
        "recent_tools": tools,
        "surfaced_units": units,
        "dropped_surfaced": tuple(sorted(corpus.docs[i].relpath for i in candidates.dropped)),
        "gate": gate,
        "preview": preview,
        "injection": behaviour.injection,
        "release": behaviour.title,
    }
    skipped = skip_reason(query, units)
    if skipped is None and gate is not None and not gate.on and not preview:
        skipped = f"the agent {DOES_NOT_RECALL}: {gate.reason}"
    window = {h.relpath for h in reference.headers}
    if skipped is not None:
        offline = chosen if chosen.name in OFFLINE_SELECTORS else choose_selector(OFFLINE_DEFAULT).selector
        would = offline.select(query, candidates, corpus, tools)
        return RecallResult(online=False, skipped=skipped, sent=None, request=None, picks=(), near_misses=would.near_misses,
                            injected=(), error=None, notes=would.notes, would_pick=_picks(would, now, window),
                            would_pick_selector=offline.name, near_score=would.near_score, **base)
    selection = chosen.select(query, candidates, corpus, tools)
    picks = _picks(selection, now, window)
    injected = inject([p.doc.header for p in picks], now, behaviour.injection)
    return RecallResult(
        online=selection.online,
        skipped=None,
        sent=selection.sent,
        request=selection.request,
        picks=picks,
        near_misses=selection.near_misses,
        near_score=selection.near_score,
        injected=tuple(injected),
        error=selection.error,
        notes=selection.notes,
        **base,
    )


def _picks(selection: Selection, now: datetime, window: set[str]) -> tuple[Pick, ...]:
    out = []
    for doc, reason in selection.picks[:MAX_PICKS]:
        days = age_days(doc.header.mtime, now)
        out.append(Pick(doc, reason, days, age_label(days), stale_caveat(days), doc.relpath in window))
    return tuple(out)


def selector_picks(selector: Selector, query: str, corpus: RecallCorpus) -> list[str]:
    """The relpaths ``selector`` picks for ``query`` over every memory of ``corpus``, as if
    the agent recalled for it (no skip rule, nothing surfaced, no recent tools): what
    ``memtui recall eval`` scores."""
    selection = selector.select(query, corpus.docs, corpus, ())
    return [doc.relpath for doc, _ in selection.picks[:MAX_PICKS]]
