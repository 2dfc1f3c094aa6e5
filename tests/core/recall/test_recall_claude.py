"""The claude selector against a fake Messages API (``httpx2.MockTransport``; anthropic 2.x
sends through httpx2, so respx would not see it). Nothing here touches the network."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx2
import pytest

from memtui.core.recall import (
    SYSTEM_PROMPT,
    load_corpus,
    make_client,
    recall,
    resolve_selector,
)
from memtui.core.recall.claude import CREDENTIAL_ENV, MAX_TOKENS

NOW = datetime(2026, 3, 10, 12, 0, tzinfo=UTC)
T = datetime(2026, 3, 2, 9, 0, tzinfo=UTC).timestamp()
MANIFEST = (
    "- [feedback] feedback_real_db.md (2026-03-02T09:02:00.000Z): Integration tests hit a real Postgres, never mocks\n"
    "- [reference] reference_pytest_usage.md (2026-03-02T09:01:00.000Z): How to call pytest in this repo\n"
    "- [project] project_kafka.md (2026-03-02T09:00:00.000Z): Kafka migration plan"
)
Handler = Callable[[httpx2.Request], httpx2.Response]


@pytest.fixture
def memory(tmp_path: Path) -> Path:
    d = tmp_path / "memory"
    d.mkdir()
    files = [
        ("project_kafka.md", "Kafka migration plan", "project", 0),
        ("reference_pytest_usage.md", "How to call pytest in this repo", "reference", 60),
        ("feedback_real_db.md", "Integration tests hit a real Postgres, never mocks", "feedback", 120),
    ]
    for name, desc, kind, dt in files:
        p = d / name
        p.write_text(f"---\ndescription: {desc}\ntype: {kind}\n---\nbody of {name}\n", encoding="utf-8")
        os.utime(p, (T + dt, T + dt))
    return d


def message(text: str | None, stop_reason: str = "end_turn", **extra: Any) -> dict[str, Any]:
    content = [] if text is None else [{"type": "text", "text": text}]
    return {
        "id": "msg_test", "type": "message", "role": "assistant", "model": "claude-sonnet-5-5",
        "content": content, "stop_reason": stop_reason, "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 5}, **extra,
    }


def selected(*names: str) -> dict[str, Any]:
    return message(json.dumps({"selected_memories": list(names)}))


class Api:
    """A fake Messages API: records every request, answers with ``reply``."""

    def __init__(self, reply: Handler) -> None:
        self.reply = reply
        self.requests: list[httpx2.Request] = []

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        self.requests.append(request)
        return self.reply(request)

    @property
    def body(self) -> dict[str, Any]:
        data: dict[str, Any] = json.loads(self.requests[-1].content)
        return data


def run(memory: Path, reply: Handler, query: str = "write an integration test for the consumer",
        tools: tuple[str, ...] = (), model: str = "claude-sonnet-5-5", max_retries: int = 0) -> tuple[Any, Api]:
    api = Api(reply)
    client = make_client(api_key="test", http_client=httpx2.Client(transport=httpx2.MockTransport(api)), max_retries=max_retries)
    result = recall(query, load_corpus(memory), now=NOW, selector="claude", recent_tools=tools, model=model, client=client)
    return result, api


def test_request_body(memory: Path) -> None:
    result, api = run(memory, lambda r: httpx2.Response(200, json=selected("feedback_real_db.md")),
                      tools=("Bash", "Read"), model="claude-test-model")
    assert len(api.requests) == 1
    req = api.requests[0]
    assert req.url.path == "/v1/messages"
    assert req.headers["authorization"] == "Bearer test"  # how anthropic 2.14 sends api_key
    body = api.body
    assert body["model"] == "claude-test-model"
    assert body["max_tokens"] == MAX_TOKENS == 256
    assert body["system"] == SYSTEM_PROMPT
    assert body["messages"] == [{
        "role": "user",
        "content": "Query: write an integration test for the consumer\n\nAvailable memories:\n" + MANIFEST
        + "\n\nRecently used tools: Bash, Read",
    }]
    assert body["output_config"] == {"format": {"type": "json_schema", "schema": {
        "type": "object", "title": "SelectedMemories",
        "description": "File names chosen from the manifest, at most 5; an empty list when none is clearly useful.",
        "properties": {"selected_memories": {"type": "array", "title": "Selected Memories", "items": {"type": "string"}}},
        "additionalProperties": False, "required": ["selected_memories"],
    }}}
    for forbidden in ("tool_choice", "tools", "temperature", "top_p", "top_k"):
        assert forbidden not in body
    assert [m["role"] for m in body["messages"]] == ["user"]  # no assistant prefill
    assert result.online and result.error is None
    assert [p.relpath for p in result.picks] == ["feedback_real_db.md"]
    assert result.picks[0].reason.startswith("chosen by claude-test-model")
    assert result.request is not None and result.request.user == body["messages"][0]["content"]


def test_system_prompt_says_what_spec_asks() -> None:
    text = SYSTEM_PROMPT.lower()
    assert "at most 5" in text
    assert "empty list" in text
    assert "recently used tools" in text and "warnings" in text and "known issues" in text


def test_no_tools_line_without_tools(memory: Path) -> None:
    _, api = run(memory, lambda r: httpx2.Response(200, json=selected()))
    assert api.body["messages"][0]["content"].endswith(MANIFEST)


def test_empty_list_is_a_valid_answer(memory: Path) -> None:
    result, _ = run(memory, lambda r: httpx2.Response(200, json=selected()))
    assert result.picks == () and result.error is None and result.to_json()["error"] is None


def test_unknown_names_are_filtered_with_a_note(memory: Path) -> None:
    result, _ = run(memory, lambda r: httpx2.Response(200, json=selected("ghost.md", "project_kafka.md", "MEMORY.md")))
    assert [p.relpath for p in result.picks] == ["project_kafka.md"]
    assert result.error is None
    assert result.notes == ("dropped 2 name(s) not in the manifest: ghost.md, MEMORY.md",)
    assert result.to_json()["error"] == result.notes[0]


def test_seven_names_are_capped_at_five(tmp_path: Path) -> None:
    d = tmp_path / "memory"
    d.mkdir()
    for i in range(8):
        (d / f"m{i}.md").write_text(f"---\ndescription: note {i}\n---\n")
    names = [f"m{i}.md" for i in range(7)]
    api = Api(lambda r: httpx2.Response(200, json=selected(*names)))
    client = make_client(api_key="test", http_client=httpx2.Client(transport=httpx2.MockTransport(api)), max_retries=0)
    result = recall("pick many notes", load_corpus(d), now=NOW, selector="claude", client=client)
    assert [p.relpath for p in result.picks] == names[:5]
    assert result.notes == ("the model chose 7 memories; kept the first 5",)


@pytest.mark.parametrize("text", ["not json", '{"selected_memories": "a.md"}', '["feedback_real_db.md"]', '{"other": []}'])
def test_invalid_json_gives_no_picks_and_a_reason(memory: Path, text: str) -> None:
    result, _ = run(memory, lambda r: httpx2.Response(200, json=message(text)))
    assert result.picks == ()
    assert result.error is not None and "not the JSON object asked for" in result.error
    assert result.injected_text == ""


def test_refusal_stop_reason(memory: Path) -> None:
    reply = message(None, stop_reason="refusal", stop_details={"type": "refusal", "category": "cyber", "explanation": None})
    result, _ = run(memory, lambda r: httpx2.Response(200, json=reply))
    assert result.picks == ()
    assert result.error == "the model refused to answer: cyber"


def test_refusal_with_schema_shaped_text_is_still_a_refusal(memory: Path) -> None:
    reply = message('{"selected_memories": ["project_kafka.md"]}', stop_reason="refusal")
    result, _ = run(memory, lambda r: httpx2.Response(200, json=reply))
    assert result.picks == () and result.error == "the model refused to answer"


def test_no_text_block(memory: Path) -> None:
    result, _ = run(memory, lambda r: httpx2.Response(200, json=message(None, stop_reason="max_tokens")))
    assert result.picks == () and result.error == "the reply was cut at max_tokens (256)"


def error_body(kind: str, msg: str) -> dict[str, Any]:
    return {"type": "error", "error": {"type": kind, "message": msg}}


@pytest.mark.parametrize(
    ("status", "kind", "expected"),
    [
        (429, "rate_limit_error", "rate limited (HTTP 429): slow down"),
        (529, "overloaded_error", "overloaded (HTTP 529): slow down"),
        (400, "invalid_request_error", "API error (HTTP 400): slow down"),
        (401, "authentication_error", "API error (HTTP 401): slow down"),
        (500, "api_error", "API error (HTTP 500): slow down"),
    ],
)
def test_http_errors(memory: Path, status: int, kind: str, expected: str) -> None:
    result, api = run(memory, lambda r: httpx2.Response(status, json=error_body(kind, "slow down")))
    assert result.picks == () and result.error == expected
    assert len(api.requests) == 1  # max_retries=0 here


def test_default_client_retries_429_once_then_reports(memory: Path) -> None:
    reply = lambda r: httpx2.Response(429, json=error_body("rate_limit_error", "busy"), headers={"retry-after-ms": "1"})
    result, api = run(memory, reply, max_retries=1)
    assert len(api.requests) == 2
    assert result.error == "rate limited (HTTP 429): busy"


def test_retry_that_succeeds(memory: Path) -> None:
    answers = iter([httpx2.Response(529, json=error_body("overloaded_error", "x"), headers={"retry-after-ms": "1"}),
                    httpx2.Response(200, json=selected("project_kafka.md"))])
    result, api = run(memory, lambda r: next(answers), max_retries=1)
    assert len(api.requests) == 2 and [p.relpath for p in result.picks] == ["project_kafka.md"]


def test_connection_error(memory: Path) -> None:
    def refuse(request: httpx2.Request) -> httpx2.Response:
        raise httpx2.ConnectError("connection refused", request=request)

    result, _ = run(memory, refuse)
    assert result.picks == ()
    assert result.error == "connection error: connection refused"


def test_timeout(memory: Path) -> None:
    def slow(request: httpx2.Request) -> httpx2.Response:
        raise httpx2.ReadTimeout("read timed out", request=request)

    result, _ = run(memory, slow)
    assert result.picks == () and result.error == "timed out (no answer within 20 s)"


def test_client_has_timeouts() -> None:
    client = make_client(api_key="test")
    assert client.timeout.read == 20.0 and client.timeout.connect == 5.0
    assert client.max_retries == 1


def test_no_key_claude_gives_a_reason_and_sends_nothing(memory: Path) -> None:
    result = recall("kafka migration plan", load_corpus(memory), now=NOW, selector="claude", environ={})
    assert result.picks == () and not result.online
    assert result.error is not None and result.error.startswith("no API key")
    assert result.offline_reason is not None
    assert result.request is not None  # what would have been sent is still shown
    # near misses come from the lexical index even offline
    assert result.near_misses and result.near_misses[0].relpath == "project_kafka.md"


def test_auto_chooses_by_credentials() -> None:
    sel, why = resolve_selector("auto", environ={})
    assert sel.name == "lexical" and why is not None and "no API key" in why
    for var in CREDENTIAL_ENV:
        sel, why = resolve_selector("auto", environ={var: "x"})
        assert sel.name == "claude" and why is None
    sel, why = resolve_selector("auto", environ={"ANTHROPIC_API_KEY": ""})
    assert sel.name == "lexical"


def test_the_offline_cause_is_a_code_not_a_sentence() -> None:
    from memtui.core.recall import choose_selector

    no_key = choose_selector("claude", environ={})
    assert (no_key.selector.name, no_key.offline_cause, no_key.sends_request) == ("claude", "no-credentials", False)
    with_key = choose_selector("hybrid", environ={"ANTHROPIC_API_KEY": "x"})
    assert (with_key.offline_cause, with_key.sends_request) == (None, True)
    chosen = choose_selector("lexical", environ={"ANTHROPIC_API_KEY": "x"})
    assert (chosen.offline_cause, chosen.sends_request) == ("by-choice", False)
    assert choose_selector("lexical", environ={}).offline_cause == "no-credentials"
    semantic = choose_selector("semantic", environ={"ANTHROPIC_API_KEY": "x"})
    assert (semantic.offline_cause, semantic.sends_request) == ("by-choice", False)
    assert semantic.offline_reason == "semantic selector (embeddings + BM25), offline by choice"


def test_the_written_out_schema_is_the_sdks() -> None:
    """SEED_SCHEMA stands for the SDK's transform_schema of SelectedMemories (so that a request
    is built without importing the SDK): they must stay equal."""
    from anthropic import transform_schema

    from memtui.core.recall.claude import SEED_SCHEMA, SelectedMemories

    assert SEED_SCHEMA == transform_schema(SelectedMemories.model_json_schema())


def test_recall_with_the_claude_selector_and_no_key_never_imports_the_sdk(tmp_path: Path) -> None:
    """No key: the request is built and shown, the selection fails with "no API key" — and the
    SDK (about a second to import) is never loaded (a fresh interpreter, no API key)."""
    import subprocess
    import sys

    memory = tmp_path / "memory"
    memory.mkdir()
    (memory / "a.md").write_text("---\nname: a\ndescription: deploys go out on tuesdays\ntype: project\n---\nx\n")
    code = (
        "import sys\n"
        "from memtui.cli import main\n"
        f"sys.argv = ['memtui', '--memory-dir', {str(memory)!r}, 'recall', '--selector', 'claude', 'deploy on tuesday']\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "print('anthropic loaded' if 'anthropic' in sys.modules else 'anthropic not loaded')\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert "no API key" in out.stdout + out.stderr
    assert out.stdout.strip().splitlines()[-1] == "anthropic not loaded"
