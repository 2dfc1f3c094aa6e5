"""The Claude selector: one side request, as the reference makes it (docs/behaviour.md §6, §11).

Request: ``model`` (default ``claude-sonnet-5-5``; settings ``model`` or ``--model`` override
it), ``max_tokens`` 256, the system prompt below, one user message
``Query: <query>\\n\\nAvailable memories:\\n<manifest>`` followed by
``\\n\\nRecently used tools: a, b`` when there are any, and structured output
(``client.messages.parse`` with ``output_format=SelectedMemories``, i.e. a JSON schema
``{"selected_memories": [string]}``). No ``tool_choice``, no sampling parameters, no
assistant prefill: current Sonnet models reject them.

The reply's names are filtered to the manifest's, then capped at 5 (the reference does the
same, in that order). Every failure — no credentials, connection error, timeout, 4xx/5xx,
refusal, a reply that is not the JSON asked for — gives no picks and a one-line ``error``;
nothing is raised.
"""

from __future__ import annotations

import copy
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from memtui.core.places.behaviour import RecallRequest
from memtui.core.places.releases.seed import SEED
from memtui.core.recall.manifest import Manifest

if TYPE_CHECKING:
    import anthropic
    import httpx2

    from memtui.core.recall.schema import SelectedMemories

# The seed design's request (``Behaviour.recall_request`` of the seed).
SEED_REQUEST: RecallRequest = SEED.recall_request
# docs/behaviour.md §6: the configured Sonnet model; settings `model` and `--model` override it.
DEFAULT_MODEL = SEED_REQUEST.default_model
# The reference's side query asks for at most 256 output tokens (seed chapter §17.6).
MAX_TOKENS = SEED_REQUEST.max_tokens
# The reference's cap on recalled files.
MAX_PICKS = 5
# memtui's choices (docs/behaviour.md §11 "never a hang"): total and connect timeouts in seconds, and one
# retry of a 408/409/429/5xx (the SDK's backoff) before giving up.
TIMEOUT_S = 20.0
CONNECT_TIMEOUT_S = 5.0
MAX_RETRIES = 1
# The SDK's standard credential variables (anthropic 2.x, `Anthropic.__init__`).
CREDENTIAL_ENV = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_PROFILE")

SYSTEM_PROMPT = SEED_REQUEST.system

# The JSON schema Claude Code sends as ``output_config.format.schema``, verbatim.
SELECTOR_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"selected_memories": {"type": "array", "items": {"type": "string"}}},
    "required": ["selected_memories"],
    "additionalProperties": False,
}
# The seed request's output schema: the SDK's ``transform_schema`` of ``SelectedMemories``
# (anthropic 2.x), written out so that building a request (shown with no API key too) does not
# import the SDK (~1 s); a test checks it against the SDK's.
SEED_SCHEMA: dict[str, Any] = {
    "type": "object",
    "description": "File names chosen from the manifest, at most 5; an empty list when none is clearly useful.",
    "title": "SelectedMemories",
    "properties": {"selected_memories": {"type": "array", "title": "Selected Memories", "items": {"type": "string"}}},
    "additionalProperties": False,
    "required": ["selected_memories"],
}
_EPHEMERAL = {"type": "ephemeral"}


@dataclass(frozen=True, slots=True)
class ClaudeRequest:
    """What is (or would be) sent: ``model``, ``max_tokens``, ``system``, the ``user``
    message text (the messages' texts joined by a blank line), the JSON ``schema`` of the
    structured output; ``style`` (``query-first`` | ``conversation``), ``messages`` (the exact
    message list of a conversation-style request), ``thinking`` (sent when not ``None``) and
    ``fallbacks`` (what the release does when the API refuses)."""

    model: str
    max_tokens: int
    system: str
    user: str
    schema: dict[str, Any] = field(default_factory=dict)
    style: str = "query-first"
    messages: tuple[dict[str, Any], ...] = ()
    thinking: dict[str, Any] | None = None
    fallbacks: str = ""


@dataclass(frozen=True, slots=True)
class ClaudeReply:
    """The outcome: ``names`` kept (filtered, capped, in the model's order), ``raw_names`` as
    returned, ``error`` (no picks then) and ``notes`` (names dropped or cut)."""

    names: tuple[str, ...]
    raw_names: tuple[str, ...] = ()
    error: str | None = None
    notes: tuple[str, ...] = ()


def user_message(query: str, manifest: Manifest, recent_tools: Sequence[str] = ()) -> str:
    """The reference's user message for ``query`` over ``manifest``."""
    tools = f"\n\nRecently used tools: {', '.join(recent_tools)}" if recent_tools else ""
    return f"Query: {query}\n\nAvailable memories:\n{manifest.text}{tools}"


def conversation_messages(query: str, manifest: Manifest) -> tuple[dict[str, Any], ...]:
    """Claude Code's two user messages: the manifest, then the query (each a text block with
    ``cache_control``)."""
    return (
        {"role": "user", "content": [{"type": "text", "text": f"Available memories:\n{manifest.text}", "cache_control": dict(_EPHEMERAL)}]},
        {"role": "user", "content": [{"type": "text", "text": f"Select memories relevant to:\n{query}", "cache_control": dict(_EPHEMERAL)}]},
    )


def build_request(
    query: str,
    manifest: Manifest,
    recent_tools: Sequence[str] = (),
    model: str = DEFAULT_MODEL,
    shape: RecallRequest = SEED_REQUEST,
) -> ClaudeRequest:
    """The request for ``query`` in the release's ``shape`` (see the module docstring). For the
    seed design ``schema`` is the JSON schema the SDK derives from ``SelectedMemories``."""
    if shape.style == "conversation":
        messages = conversation_messages(query, manifest)
        thinking: dict[str, Any] | None = None
        max_tokens = shape.max_tokens
        if model in shape.no_thinking_models:
            thinking = {"type": "disabled"}
        else:
            max_tokens += shape.thinking_budget
        user = "\n\n".join(b["text"] for m in messages for b in m["content"])
        return ClaudeRequest(model, max_tokens, shape.system, user, dict(SELECTOR_SCHEMA), "conversation", messages, thinking, shape.fallbacks)
    schema = copy.deepcopy(SEED_SCHEMA)
    return ClaudeRequest(model, shape.max_tokens, shape.system, user_message(query, manifest, recent_tools), schema)


def has_credentials(environ: Mapping[str, str] | None = None) -> bool:
    """True when one of the SDK's credential variables (``CREDENTIAL_ENV``) is set and
    non-empty. (The SDK can also find an on-disk profile; memtui does not go online on that
    alone, so ``auto`` stays offline unless a variable says otherwise.)"""
    env = os.environ if environ is None else environ
    return any(env.get(name) for name in CREDENTIAL_ENV)


def make_client(
    *,
    api_key: str | None = None,
    http_client: httpx2.Client | None = None,
    timeout: float = TIMEOUT_S,
    max_retries: int = MAX_RETRIES,
) -> anthropic.Anthropic:
    """An ``anthropic.Anthropic`` client with memtui's timeouts and retries. ``api_key``:
    explicit key (else the SDK's env lookup); ``http_client``: an ``httpx2.Client`` to use
    (tests pass one with a ``MockTransport``). Raises whatever the SDK raises for missing or
    conflicting credentials (``anthropic.AnthropicError``)."""
    import anthropic
    import httpx2

    kwargs: dict[str, Any] = {
        "timeout": httpx2.Timeout(timeout, connect=CONNECT_TIMEOUT_S),
        "max_retries": max_retries,
    }
    if api_key is not None:
        kwargs["api_key"] = api_key
    if http_client is not None:
        kwargs["http_client"] = http_client
    return anthropic.Anthropic(**kwargs)


ClientFactory = Callable[[], "anthropic.Anthropic"]


def _describe(exc: BaseException) -> str:
    import anthropic
    import pydantic

    if isinstance(exc, anthropic.APITimeoutError):
        return f"timed out (no answer within {TIMEOUT_S:g} s)"
    if isinstance(exc, anthropic.APIConnectionError):
        cause = exc.__cause__ or exc.__context__
        return f"connection error: {cause or exc}"
    if isinstance(exc, anthropic.APIStatusError):
        body = exc.body
        message = None
        if isinstance(body, dict):
            err = body.get("error")
            if isinstance(err, dict) and isinstance(err.get("message"), str):
                message = err["message"]
        kind = {429: "rate limited", 529: "overloaded"}.get(exc.status_code, "API error")
        return f"{kind} (HTTP {exc.status_code}){': ' + message if message else ''}"
    if isinstance(exc, pydantic.ValidationError):
        return "the reply was not the JSON object asked for ({\"selected_memories\": [...]})"
    if isinstance(exc, anthropic.AnthropicError):
        return f"client error: {exc}"
    return f"{type(exc).__name__}: {exc}"


def ask_claude(
    client: anthropic.Anthropic, request: ClaudeRequest, valid_names: Sequence[str]
) -> ClaudeReply:
    """Send ``request`` with ``client`` and interpret the reply against ``valid_names`` (the
    manifest's relpaths). Never raises for API, network or reply problems."""
    import anthropic
    import pydantic

    from memtui.core.recall.schema import SelectedMemories

    parsed: SelectedMemories | None
    try:
        if request.style == "conversation":
            params: dict[str, Any] = {
                "model": request.model,
                "max_tokens": request.max_tokens,
                "system": request.system,
                "messages": list(request.messages),
                "output_config": {"format": {"type": "json_schema", "schema": request.schema}},
            }
            if request.thinking is not None:
                params["thinking"] = request.thinking
            message: Any = client.messages.create(**params)
            texts = [b.text for b in message.content if getattr(b, "type", None) == "text"]
            parsed = SelectedMemories.model_validate_json(texts[0]) if texts and message.stop_reason != "max_tokens" else None
        else:
            message = client.messages.parse(
                model=request.model,
                max_tokens=request.max_tokens,
                system=request.system,
                messages=[{"role": "user", "content": request.user}],
                output_format=SelectedMemories,
            )
            parsed = message.parsed_output
    except (anthropic.AnthropicError, pydantic.ValidationError) as exc:
        return ClaudeReply((), error=_describe(exc))
    if message.stop_reason == "refusal":
        details = getattr(message, "stop_details", None)
        why = getattr(details, "explanation", None) or getattr(details, "category", None)
        return ClaudeReply((), error=f"the model refused to answer{': ' + str(why) if why else ''}")
    if parsed is None:
        if message.stop_reason == "max_tokens":
            return ClaudeReply((), error=f"the reply was cut at max_tokens ({request.max_tokens})")
        return ClaudeReply((), error="the reply held no structured output")
    raw = tuple(parsed.selected_memories)
    valid = set(valid_names)
    known: list[str] = []
    unknown: list[str] = []
    for name in raw:
        (known if name in valid else unknown).append(name)
    known = list(dict.fromkeys(known))
    notes: list[str] = []
    if unknown:
        notes.append(f"dropped {len(unknown)} name(s) not in the manifest: {', '.join(unknown)}")
    if len(known) > MAX_PICKS:
        notes.append(f"the model chose {len(known)} memories; kept the first {MAX_PICKS}")
        known = known[:MAX_PICKS]
    return ClaudeReply(tuple(known), raw, None, tuple(notes))


def __getattr__(name: str) -> Any:
    # ``SelectedMemories`` (a pydantic model) lives in ``memtui.core.recall.schema``, imported on
    # first use: pydantic costs ~70 ms that a pane showing no recall has no use for.
    if name == "SelectedMemories":
        from memtui.core.recall.schema import SelectedMemories

        return SelectedMemories
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
