"""Recall in the claude flavor against what Claude Code 2.1.328 sent (``tests/captures/``).

The captured workspace is rebuilt, the clock frozen at the capture's time, and a fake
Messages API answers the selector the way the capture's mock did (the first five files of the
manifest). memtui's request — system prompt, the two cached user messages, ``max_tokens``,
the JSON schema — and its injected text must equal the CLI's byte for byte. Then the gate:
without the cached flag the agent does not recall, and memtui says so instead of asking.
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import anthropic
import httpx2
import pytest
from support.captures import rebuild

from memtui.core.places.agentconfig import recall_state
from memtui.core.places.claude_json import read_global_config
from memtui.core.places.flavor import CLAUDE
from memtui.core.places.locations import resolve_locations
from memtui.core.recall import load_corpus, recall

RELEASE = CLAUDE.behaviour


def _reply(names: list[str]) -> dict[str, Any]:
    return {
        "id": "msg_test", "type": "message", "role": "assistant", "model": "claude-sonnet-5-5",
        "content": [{"type": "text", "text": json.dumps({"selected_memories": names})}],
        "stop_reason": "end_turn", "stop_sequence": None, "usage": {"input_tokens": 10, "output_tokens": 5},
    }


def _recall(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, flags: bool):  # type: ignore[no-untyped-def]
    ws = rebuild("layers", tmp_path, monkeypatch)
    run = ws.run("recall")
    ws.set_flags(run["flags"] if flags else None)
    captured = run["recall_request"]
    manifest = captured["messages"][0]["content"][0]["text"]
    names = re.findall(r"^- (?:\[[a-z]+\] )?(\S+\.md)", manifest, re.M)[:5]
    bodies: list[dict[str, Any]] = []

    def handler(request: httpx2.Request) -> httpx2.Response:
        bodies.append(json.loads(request.content))
        return httpx2.Response(200, json=_reply(names))

    client = anthropic.Anthropic(api_key="test", max_retries=0, http_client=httpx2.Client(transport=httpx2.MockTransport(handler)))
    loc = resolve_locations(CLAUDE, ws.cwd)
    gate = recall_state(RELEASE.recall_gate, read_global_config())
    result = recall(
        run["recall_query"],
        load_corpus(loc.memory_dir, RELEASE.memory_format),
        now=datetime.fromtimestamp(ws.captured_at, UTC),
        selector="claude",
        client=client,
        model=RELEASE.recall_request.default_model,
        behaviour=RELEASE,
        gate=gate,
    )
    return run, captured, bodies, result


def test_the_selector_request_is_the_clis(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _run, captured, bodies, result = _recall(tmp_path, monkeypatch, flags=True)
    (body,) = bodies
    assert body["system"] == "".join(b["text"] for b in captured["system"])
    assert body["messages"] == captured["messages"]  # manifest (metadata.type read), then the query
    assert (body["model"], body["max_tokens"]) == (captured["model"], captured["max_tokens"]) == ("claude-sonnet-5-5", 512 + 2048)
    assert body["output_config"] == captured["output_config"]
    assert "thinking" not in body and captured["thinking"] is None
    assert result.error is None and result.online


def test_the_injected_text_is_the_clis(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    run, _captured, _bodies, result = _recall(tmp_path, monkeypatch, flags=True)
    assert result.injected_text == run["injection"]
    assert result.injected_text.startswith("Retrieved for possible relevance — ")


def test_without_the_flag_the_agent_does_not_recall(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _run, _captured, bodies, result = _recall(tmp_path, monkeypatch, flags=False)
    assert bodies == []  # nothing asked: the CLI sends no selector request either
    assert result.gate is not None and not result.gate.on
    # no flag cache in this home: what is known is that this machine has none saved, not the account's flag
    assert result.skipped == ("the agent does not recall memories for you: this feature is off on this machine: Claude Code has not "
                              "saved your account's feature settings here, and without them it treats the feature as off")
    assert result.skipped_by_gate and "tengu_moth_copse" in result.gate.details  # the flag's name: in the details only
    assert result.would_only
