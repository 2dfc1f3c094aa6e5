"""The agent loop: Messages API requests with tools, each ``tool_use`` answered through
:func:`memtui.core.agent.tools.execute` under a :class:`ToolPolicy` (docs/behaviour.md §7, §8, §11).

A plain ``client.messages.create`` loop rather than the SDK's beta tool runner: the runner
would own the tools, the turn count and the loop, and memtui needs each of those itself — every
call checked by the policy and logged, refusals sent back as ``is_error`` results, a hard turn
limit, a cancel event between turns, and every API failure turned into a sentence. Each
request is self-contained (the whole conversation is sent every time). No ``tool_choice``,
no sampling parameters, no assistant prefill: current Sonnet models reject them.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from memtui.core.agent.bash import ShellBudget
from memtui.core.agent.policy import ToolCall, ToolPolicy
from memtui.core.agent.tools import execute, tool_definitions

if TYPE_CHECKING:
    import anthropic

__all__ = [
    "CONNECT_TIMEOUT_S",
    "DEFAULT_MAX_TOKENS",
    "REQUEST_TIMEOUT_S",
    "RUN_DEADLINE_S",
    "AgentEvent",
    "AgentRun",
    "describe_api_error",
    "request_text",
    "run_agent",
]

# memtui's choices: room for a few memory files in one reply, and a per-request ceiling that
# applies whatever the client's own timeout (docs/behaviour.md §11 "never a hang"); an agent turn writing
# files takes longer than the recall side query's 20 s.
DEFAULT_MAX_TOKENS = 8_192
REQUEST_TIMEOUT_S = 120.0
CONNECT_TIMEOUT_S = 5.0
# memtui's choice: the wall time of one whole run. A dream of 30 turns whose replies take
# 10–40 s each ends well within it; without it, a run of slow replies and tools could take
# turns × (120 s + tools). Checked before each request and before each tool call; each
# request's timeout is cut to what is left.
RUN_DEADLINE_S = 1_800.0

EventKind = Literal["turn", "text", "tool", "done"]


@dataclass(frozen=True, slots=True)
class AgentEvent:
    """One step of a run, for a live log.

    ``kind``: ``turn`` (request ``turn`` is being sent), ``text`` (the model said ``text``),
    ``tool`` (``tool_call`` was executed), ``done`` (the run ended; ``text`` is the
    ``stop_reason``, or the error when there is one).
    """

    kind: EventKind
    turn: int
    text: str = ""
    tool_call: ToolCall | None = None


@dataclass(slots=True)
class AgentRun:
    """What an agent run did.

    - ``turns``: requests that got a reply (1-based count).
    - ``tool_calls``: every tool call in order, refusals included.
    - ``writes``: distinct real paths written by ``Write``/``Edit``, in first-write order.
    - ``stop_reason``: the last reply's ``stop_reason`` (``end_turn``, ``max_tokens``,
      ``stop_sequence``, ``refusal``, …) or memtui's ``max_turns``, ``cancelled``, ``error``,
      ``bash-budget`` (the run's Bash commands used up their time budget), ``deadline`` (the
      run reached its wall-clock limit); the last two set ``error`` too.
    - ``final_text``: the text blocks of the last reply, joined by blank lines.
    - ``error``: a sentence when the run failed (API error, refusal, a budget or deadline
      stop); ``None`` otherwise. memtui's dream and extractor raise on it and apply nothing.
    - ``messages``: the conversation as sent, plus the last reply (API param dicts).
    - ``input_tokens``/``output_tokens``: summed ``usage`` of every reply.
    """

    turns: int = 0
    tool_calls: list[ToolCall] = field(default_factory=list)
    writes: list[Path] = field(default_factory=list)
    stop_reason: str | None = None
    final_text: str = ""
    error: str | None = None
    messages: list[dict[str, Any]] = field(default_factory=list)
    input_tokens: int = 0
    output_tokens: int = 0

    @property
    def ok(self) -> bool:
        """True when the model finished on its own (no error, not cut by turns or cancel)."""
        return self.error is None and self.stop_reason not in ("max_turns", "cancelled", "error", "bash-budget", "deadline")


def run_agent(
    client: anthropic.Anthropic,
    *,
    model: str,
    system: str,
    messages: Sequence[dict[str, Any]],
    policy: ToolPolicy,
    max_turns: int,
    max_tokens: int = DEFAULT_MAX_TOKENS,
    request_timeout: float = REQUEST_TIMEOUT_S,
    on_event: Callable[[AgentEvent], None] | None = None,
    cancel: threading.Event | None = None,
    shell_budget: ShellBudget | None = None,
    deadline_s: float | None = RUN_DEADLINE_S,
    clock: Callable[[], float] = time.monotonic,
) -> AgentRun:
    """Run the tool-use loop until the model stops, ``max_turns`` requests were made, ``cancel``
    is set, or the API fails.

    ``client``: an ``anthropic.Anthropic`` (timeouts and retries are its own; tests give it an
    ``httpx2.Client`` with a ``MockTransport``). ``messages``: the opening conversation (API
    param dicts; not modified). ``policy``: what the tools may do (:class:`ToolPolicy`); the
    tools offered are ``policy.offered()``. ``max_turns``: at most this many requests (the
    extractor uses 5, docs/behaviour.md §7); the tools asked for in the last allowed reply still run (as the
    reference agent's turn limit does), then the run stops with ``stop_reason="max_turns"``.
    ``request_timeout``: seconds, per request (connect: at most 5 s); it replaces the client's
    own timeout for these requests, so the recall client's 20 s does not cut an agent turn. ``on_event``: called in this thread with each
    :class:`AgentEvent`. ``cancel``: checked before each request and before the tools of a
    reply run; when set, the run stops with ``stop_reason="cancelled"``.

    ``shell_budget``: the wall time all the run's Bash commands share (default: a fresh
    :class:`ShellBudget` of ``policy.bash_budget_s``, 60 s). Once it is used up, later Bash
    calls of the same reply are refused (``bash-budget``), the other tools of that reply still
    run, their results are added to ``messages``, and the run stops with
    ``stop_reason="bash-budget"`` and ``error`` saying so. ``deadline_s``: seconds for the whole
    run, read on ``clock`` (default :data:`RUN_DEADLINE_S`, 30 min; ``None``: no limit); checked
    before each request and before each tool call, and each request's timeout is cut
    to what is left (the client's own retries may each take that long again); at the deadline
    the run stops with ``stop_reason="deadline"`` and ``error`` saying so.

    Never raises for API, network or model behaviour: a failure sets ``error`` and
    ``stop_reason="error"``. (An exception raised by ``on_event`` propagates.)
    """
    import anthropic
    import httpx2

    budget = shell_budget if shell_budget is not None else ShellBudget(policy.bash_budget_s)
    ends_at = None if deadline_s is None else clock() + deadline_s
    run = AgentRun(messages=[dict(m) for m in messages])
    tools = tool_definitions(policy)

    def emit(event: AgentEvent) -> None:
        if on_event is not None:
            on_event(event)

    def finish(stop_reason: str, error: str | None = None) -> AgentRun:
        run.stop_reason = stop_reason
        run.error = error
        emit(AgentEvent("done", run.turns, error or stop_reason))
        return run

    def left() -> float:
        return float("inf") if ends_at is None else ends_at - clock()

    def past_deadline() -> AgentRun:
        return finish("deadline", f"the run was stopped at its time limit ({deadline_s:g} s for the whole run) after {run.turns} request(s)")

    if max_turns < 1:
        return finish("max_turns")
    while True:
        if cancel is not None and cancel.is_set():
            return finish("cancelled")
        if left() <= 0:
            return past_deadline()
        turn = run.turns + 1
        emit(AgentEvent("turn", turn))
        wait = min(request_timeout, left())
        timeout = httpx2.Timeout(wait, connect=min(CONNECT_TIMEOUT_S, wait))
        try:
            reply = client.messages.create(
                model=model,
                max_tokens=max_tokens,
                system=system,
                messages=run.messages,  # type: ignore[arg-type]
                tools=tools,  # type: ignore[arg-type]
                timeout=timeout,
            )
        except anthropic.AnthropicError as exc:
            if wait < request_timeout and isinstance(exc, anthropic.APITimeoutError):
                return past_deadline()
            return finish("error", describe_api_error(exc, request_timeout))
        run.turns = turn
        usage = getattr(reply, "usage", None)
        run.input_tokens += getattr(usage, "input_tokens", 0) or 0
        run.output_tokens += getattr(usage, "output_tokens", 0) or 0
        content = [block.to_dict() for block in reply.content]
        run.messages.append({"role": "assistant", "content": content})
        texts = [block.text for block in reply.content if block.type == "text"]
        run.final_text = "\n\n".join(texts)
        for text in texts:
            emit(AgentEvent("text", turn, text))
        uses = [block for block in reply.content if block.type == "tool_use"]
        stop = reply.stop_reason or "end_turn"
        if stop == "refusal":
            return finish("refusal", "the model refused to continue")
        if stop != "tool_use" or not uses:
            return finish(stop)
        if cancel is not None and cancel.is_set():
            return finish("cancelled")
        results: list[dict[str, Any]] = []
        for use in uses:
            if left() <= 0:
                return past_deadline()
            outcome = execute(policy, use.name, use.input, log=run.tool_calls, tool_use_id=use.id, turn=turn, budget=budget)
            if outcome.wrote is not None and outcome.wrote not in run.writes:
                run.writes.append(outcome.wrote)
            results.append(
                {"type": "tool_result", "tool_use_id": use.id, "content": outcome.content, "is_error": outcome.is_error}
            )
            emit(AgentEvent("tool", turn, outcome.content, run.tool_calls[-1]))
        run.messages.append({"role": "user", "content": results})
        if budget.exhausted:
            return finish("bash-budget", f"the run was stopped: {budget.describe()}")
        if turn >= max_turns:
            return finish("max_turns")


def describe_api_error(exc: BaseException, timeout: float = REQUEST_TIMEOUT_S) -> str:
    """A one-line reason for an ``anthropic`` error: ``timed out (…)``, ``connection error: …``,
    ``overloaded (HTTP 529): …``, ``rate limited (HTTP 429): …``, ``API error (HTTP 500): …``,
    ``client error: …``. ``timeout``: the seconds to name in a timeout message."""
    import anthropic

    if isinstance(exc, anthropic.APITimeoutError):
        return f"timed out (no answer within {timeout:g} s)"
    if isinstance(exc, anthropic.APIConnectionError):
        cause = exc.__cause__ or exc.__context__
        return f"connection error: {cause or exc}"
    if isinstance(exc, anthropic.APIStatusError):
        message = None
        body = exc.body
        if isinstance(body, dict):
            err = body.get("error")
            if isinstance(err, dict) and isinstance(err.get("message"), str):
                message = err["message"]
        kind = {401: "not authorised", 429: "rate limited", 529: "overloaded"}.get(exc.status_code, "API error")
        return f"{kind} (HTTP {exc.status_code}){': ' + message if message else ''}"
    if isinstance(exc, anthropic.AnthropicError):
        return f"client error: {exc}"
    return f"{type(exc).__name__}: {exc}"


def request_text(head: str, memory_dir: str, staging_dir: str | None, system: str, messages: Sequence[dict[str, Any]]) -> str:
    """A request to the model as text for a person: ``head`` (the model line), the memory dir the
    model was given and, for a request sent, where memtui staged its writes (``staging_dir``),
    then the system prompt and each message's blocks under a ``── messages[i] role · block j ──``
    rule."""
    lines = [head, f"memory dir: {memory_dir}"]
    if staging_dir is not None:
        lines.append(f"writes staged in: {staging_dir} (memtui's scratch copy, removed after the run: the model's tools mapped the memory dir there)")
    lines += ["", "── system ──", system]
    for i, message in enumerate(messages):
        content = message["content"]
        blocks = content if isinstance(content, list) else [{"type": "text", "text": content}]
        for j, block in enumerate(blocks):
            lines += ["", f"── messages[{i}] {message['role']} · block {j} ──", str(block.get("text", block))]
    return "\n".join(lines)
