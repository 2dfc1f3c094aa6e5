"""A scripted Messages API for tests of the agent loop (extraction, dream): the model's replies
are faked at the transport (httpx2.MockTransport — anthropic 2.x does not go through httpx), and
every request body is kept for assertions."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import anthropic
import httpx2

MODEL = "claude-sonnet-5-5"


def reply(*blocks: dict[str, Any], stop: str = "tool_use") -> dict[str, Any]:
    """One assistant message with ``blocks`` and ``stop`` as its stop reason."""
    return {
        "id": "msg_test", "type": "message", "role": "assistant", "model": MODEL,
        "content": list(blocks), "stop_reason": stop, "stop_sequence": None,
        "usage": {"input_tokens": 100, "output_tokens": 20},
    }


def text(t: str) -> dict[str, Any]:
    """A text block."""
    return {"type": "text", "text": t}


def use(id_: str, name: str, **tool_input: Any) -> dict[str, Any]:
    """A tool_use block."""
    return {"type": "tool_use", "id": id_, "name": name, "input": tool_input}


class Api:
    """A fake Messages API: answers request n with ``script(n, body)`` and keeps every body."""

    def __init__(self, script: Callable[[int, dict[str, Any]], httpx2.Response]) -> None:
        self.script = script
        self.bodies: list[dict[str, Any]] = []

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        body: dict[str, Any] = json.loads(request.content)
        self.bodies.append(body)
        return self.script(len(self.bodies), body)


def scripted(*replies: dict[str, Any]) -> Api:
    """An ``Api`` answering the n-th request with ``replies[n - 1]``."""
    return Api(lambda n, _body: httpx2.Response(200, json=replies[n - 1]))


def client(api: Api) -> anthropic.Anthropic:
    """An SDK client whose requests go to ``api`` (no retries, a test key)."""
    return anthropic.Anthropic(api_key="test", max_retries=0, http_client=httpx2.Client(transport=httpx2.MockTransport(api)))
