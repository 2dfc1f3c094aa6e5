"""Claude's judgement of conflicting memories (when an API key is set).

The offline rule (``memtui.core.verify.conflicts``) only sees dates, numbers, versions, names
and yes/no words. With a key, the pairs it considered — its conflicts first, then the other
pairs on the same subject — go to Claude in one request (at most ``MAX_PAIRS``), each with both
memories' text (``MAX_CHARS`` each). Claude answers for each pair whether the two memories
contradict each other and what the differing values are (structured output, the schema of
``Verdicts``). The conflicts reported are those Claude confirms, with its explanation; on any
failure (no credentials, network, a reply that is not the JSON asked for) the offline rule's
conflicts stand and the error is the note.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from memtui.core.memory.memories import Memory
from memtui.core.recall.claude import DEFAULT_MODEL, _describe
from memtui.core.verify.conflicts import Conflict, DifferingValue, subject_pairs

if TYPE_CHECKING:
    import anthropic

# memtui's bounds for one judgement request.
MAX_PAIRS = 25
MAX_CHARS = 3000
MAX_TOKENS = 2048

SYSTEM_PROMPT = (
    "You check a coding agent's memory files for contradictions. Each memory is a small Markdown"
    " note the agent wrote at some point; newer notes may correct older ones.\n"
    "\n"
    "You are given numbered pairs of memories, each with its file name, its last-modified date and"
    " its text. For each pair decide whether the two memories state different things about the"
    " same subject, so that an agent reading both could not follow both: a different date, number,"
    " version, name, or a yes versus a no. Two memories about different subjects, or one that adds"
    " detail the other lacks, do not contradict each other.\n"
    "\n"
    "Answer for every pair: its number, whether it is a contradiction, the subject in a few words,"
    " the value the older memory states and the value the newer one states (empty when it is no"
    " contradiction), and one short sentence of explanation."
)


@dataclass(frozen=True, slots=True)
class JudgeRequest:
    """What is sent: ``model``, ``system``, ``user`` and the ``pairs`` it numbers (older,
    newer relpaths)."""

    model: str
    system: str
    user: str
    pairs: tuple[tuple[str, str], ...]


def _day(mem: Memory) -> str:
    from memtui.core.memory.lint import mtime_datetime

    return mtime_datetime(mem.mtime).date().isoformat()


def build_request(memories: Sequence[Memory], offline: Sequence[Conflict], *, model: str = DEFAULT_MODEL) -> JudgeRequest:
    """The request for the pairs to judge: ``offline``'s conflicts, then the other pairs on
    one subject (``subject_pairs``), at most ``MAX_PAIRS``."""
    by_rel = {m.relpath: m for m in memories}
    pairs: list[tuple[str, str]] = [(c.older, c.newer) for c in offline]
    for older, newer in subject_pairs(memories):
        if (older, newer) not in pairs:
            pairs.append((older, newer))
    pairs = [p for p in pairs if p[0] in by_rel and p[1] in by_rel][:MAX_PAIRS]
    parts: list[str] = []
    for n, (older, newer) in enumerate(pairs, start=1):
        a, b = by_rel[older], by_rel[newer]
        parts.append(
            f"## Pair {n}\n\n### Older: {older} (modified {_day(a)})\n\n{a.text[:MAX_CHARS]}\n\n"
            f"### Newer: {newer} (modified {_day(b)})\n\n{b.text[:MAX_CHARS]}"
        )
    return JudgeRequest(model, SYSTEM_PROMPT, "\n\n".join(parts), tuple(pairs))


def judge_conflicts(
    client: anthropic.Anthropic,
    memories: Sequence[Memory],
    offline: Sequence[Conflict],
    *,
    model: str = DEFAULT_MODEL,
) -> tuple[list[Conflict], str | None]:
    """Claude's conflicts among ``memories`` (see the module doc) and a note: ``None`` when
    Claude answered, else why the offline rule's ``offline`` stand. Never raises for API,
    network or reply problems."""
    import anthropic
    import pydantic

    from memtui.core.verify.verdicts import Verdicts

    request = build_request(memories, offline, model=model)
    if not request.pairs:
        return [], None
    try:
        message = client.messages.parse(
            model=request.model,
            max_tokens=MAX_TOKENS,
            system=request.system,
            messages=[{"role": "user", "content": request.user}],
            output_format=Verdicts,
        )
    except (anthropic.AnthropicError, pydantic.ValidationError) as exc:
        return list(offline), f"Claude's judgement failed ({_describe(exc)}): the offline rule's conflicts are shown"
    parsed = message.parsed_output
    if parsed is None:
        return list(offline), "Claude's reply held no verdicts: the offline rule's conflicts are shown"
    by_rel = {m.relpath: m for m in memories}
    offline_of = {(c.older, c.newer): c for c in offline}
    out: list[Conflict] = []
    for verdict in parsed.verdicts:
        if not verdict.contradiction or not 1 <= verdict.pair <= len(request.pairs):
            continue
        older, newer = request.pairs[verdict.pair - 1]
        known = offline_of.get((older, newer))
        values = (DifferingValue("claude", verdict.older_value, verdict.newer_value, known.values[0].older_line if known and known.values else 1, known.values[0].newer_line if known and known.values else 1, tuple(verdict.subject.split()[:4])),)
        out.append(Conflict(older, newer, known.subject if known else (), values, "claude", verdict.explanation.strip(), by_rel[older].mtime, by_rel[newer].mtime))
    out.sort(key=lambda c: (c.older, c.newer))
    return out, None


def auto_judge(
    environ: Mapping[str, str] | None = None,
    *,
    client: anthropic.Anthropic | None = None,
    model: str = DEFAULT_MODEL,
    mode: str = "auto",
) -> Callable[[Sequence[Memory], Sequence[Conflict]], tuple[list[Conflict], str | None]] | None:
    """A judge for ``run_doctor(judge=...)``: ``mode`` ``offline`` → ``None`` (the offline rule
    alone); ``auto`` → Claude when a ``client`` is given or a credential variable is set, else
    ``None``; ``claude`` → Claude always (a missing key then becomes the note)."""
    from memtui.core.recall.claude import has_credentials, make_client

    if mode == "offline" or (mode == "auto" and client is None and not has_credentials(environ)):
        return None

    def judge(memories: Sequence[Memory], offline: Sequence[Conflict]) -> tuple[list[Conflict], str | None]:
        import anthropic as sdk

        from memtui.core.recall.claude import CREDENTIAL_ENV

        if client is None and not has_credentials(environ):
            return list(offline), f"Claude's judgement is not available (no API key: set one of {', '.join(CREDENTIAL_ENV)}): the offline rule's conflicts are shown"
        try:
            use = client if client is not None else make_client()
        except sdk.AnthropicError as exc:
            return list(offline), f"Claude's judgement is not available ({exc}): the offline rule's conflicts are shown"
        return judge_conflicts(use, memories, offline, model=model)

    return judge
