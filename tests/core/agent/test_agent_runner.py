"""The agent loop against a scripted Messages API (``httpx2.MockTransport``: anthropic 2.x sends
through httpx2, so respx would not see it). Nothing here touches the network."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import anthropic
import httpx2
import pytest
from support.fake_api import MODEL, Api, client, reply, scripted, text, use

from memtui.core.agent import AgentEvent, AgentRun, ToolPolicy, run_agent

SYSTEM = "You save memories."
OPENING = [{"role": "user", "content": "Extract memories from: I'm a data scientist."}]
MEMORY = "---\nname: user role\ndescription: The user is a data scientist\ntype: user\n---\nData scientist looking at logging.\n"


@pytest.fixture
def work(tmp_path: Path) -> Path:
    mem = tmp_path / "project" / "memory"
    mem.mkdir(parents=True)
    (mem / "MEMORY.md").write_text("- [Old](old.md) — something\n", encoding="utf-8")
    (tmp_path / "project" / "x").write_text("keep me\n", encoding="utf-8")
    return tmp_path / "project"


def policy_for(work: Path) -> ToolPolicy:
    return ToolPolicy(write_root=work / "memory", cwd=work)


def go(api: Api, work: Path, max_turns: int = 5, **kw: Any) -> AgentRun:
    return run_agent(client(api), model=MODEL, system=SYSTEM, messages=OPENING, policy=policy_for(work), max_turns=max_turns, **kw)


def tool_results(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The tool_result blocks of the last (user) message of a request body."""
    last = body["messages"][-1]
    assert last["role"] == "user"
    results: list[dict[str, Any]] = last["content"]
    assert all(block["type"] == "tool_result" for block in results)
    return results


def test_only_the_valid_write_succeeds_and_refusals_go_back_as_tool_errors(work: Path) -> None:
    api = scripted(
        reply(text("Let me look at the index."), use("toolu_r", "Read", file_path="memory/MEMORY.md")),
        reply(
            use("toolu_1", "Write", file_path="../../outside.md", content="pwned\n"),
            use("toolu_2", "Bash", command="rm -rf x"),
            use("toolu_3", "Bash", command="cat x > y"),
            use("toolu_4", "Write", file_path=str(work / "memory" / "user_role.md"), content=MEMORY),
        ),
        reply(text("Saved one memory."), stop="end_turn"),
    )
    run = go(api, work)

    assert (run.error, run.stop_reason, run.turns, run.final_text) == (None, "end_turn", 3, "Saved one memory.")
    assert run.ok
    # Turn 1's read came back as a plain result.
    assert tool_results(api.bodies[1]) == [
        {"type": "tool_result", "tool_use_id": "toolu_r", "content": "     1\t- [Old](old.md) — something", "is_error": False}
    ]
    # Turn 2: three refusals and one write, in order, each matched to its tool_use id.
    results = tool_results(api.bodies[2])
    assert [(r["tool_use_id"], r["is_error"]) for r in results] == [
        ("toolu_1", True), ("toolu_2", True), ("toolu_3", True), ("toolu_4", False),
    ]
    assert "may only change files inside" in results[0]["content"]
    assert "'rm' is not allowed" in results[1]["content"]
    assert "redirection ('>') is not allowed" in results[2]["content"]
    target = (work / "memory" / "user_role.md").resolve()
    assert results[3]["content"] == f"Created {target} ({len(MEMORY.encode())} bytes)."
    # The tree: only the memory is new.
    assert target.read_text(encoding="utf-8") == MEMORY
    assert not (work.parent.parent / "outside.md").exists()
    assert not (work / "outside.md").exists()
    assert (work / "x").read_text(encoding="utf-8") == "keep me\n"
    assert not (work / "y").exists()
    assert run.writes == [target]
    assert [(c.name, c.is_error, c.code) for c in run.tool_calls] == [
        ("Read", False, None),
        ("Write", True, "outside-dir"),
        ("Bash", True, "bash-not-allowed"),
        ("Bash", True, "bash-redirection"),
        ("Write", False, None),
    ]
    assert (run.input_tokens, run.output_tokens) == (300, 60)


def test_requests_are_self_contained_with_no_forcing_sampling_or_prefill(work: Path) -> None:
    api = scripted(
        reply(use("toolu_1", "Bash", command="ls")),
        reply(text("done"), stop="end_turn"),
    )
    go(api, work)
    first, second = api.bodies
    for body in (first, second):
        assert body["model"] == MODEL and body["system"] == SYSTEM and body["max_tokens"] == 8192
        assert [t["name"] for t in body["tools"]] == ["Read", "Grep", "Glob", "Bash", "Write", "Edit"]
        for key in ("tool_choice", "temperature", "top_p", "top_k", "thinking"):
            assert key not in body
        assert body["messages"][-1]["role"] == "user"  # never an assistant prefill
    assert first["messages"] == OPENING
    # The second request repeats the whole conversation: opening, the reply, the result.
    assert second["messages"] == [
        *OPENING,
        {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "ls"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "memory\nx", "is_error": False}]},
    ]
    assert OPENING == [{"role": "user", "content": "Extract memories from: I'm a data scientist."}]  # not mutated


def test_a_model_that_never_stops_is_cut_at_max_turns(work: Path) -> None:
    api = Api(lambda n, _b: httpx2.Response(200, json=reply(use(f"toolu_{n}", "Bash", command="pwd"))))
    run = go(api, work, max_turns=5)
    assert len(api.bodies) == 5
    assert (run.turns, run.stop_reason, run.error, run.ok) == (5, "max_turns", None, False)
    # The tools of the fifth reply still ran (the reference's turn limit does the same).
    assert [c.id for c in run.tool_calls] == ["toolu_1", "toolu_2", "toolu_3", "toolu_4", "toolu_5"]


def test_a_write_in_the_last_allowed_turn_counts(work: Path) -> None:
    api = scripted(
        reply(use("toolu_1", "Read", file_path="memory/MEMORY.md")),
        reply(use("toolu_2", "Write", file_path="user_role.md", content=MEMORY)),
    )
    run = go(api, work, max_turns=2)
    assert (len(api.bodies), run.stop_reason) == (2, "max_turns")
    assert run.writes == [(work / "memory" / "user_role.md").resolve()]


def test_cancel_before_the_first_turn_sends_nothing(work: Path) -> None:
    api = scripted()
    cancel = threading.Event()
    cancel.set()
    run = go(api, work, cancel=cancel)
    assert (api.bodies, run.turns, run.stop_reason) == ([], 0, "cancelled")


def test_cancel_stops_between_turns(work: Path) -> None:
    cancel = threading.Event()
    api = Api(lambda n, _b: httpx2.Response(200, json=reply(use(f"toolu_{n}", "Bash", command="pwd"))))

    def on_event(event: AgentEvent) -> None:
        if event.kind == "tool":  # the user presses Cancel while turn 1's tool runs
            cancel.set()

    run = go(api, work, cancel=cancel, on_event=on_event)
    assert (len(api.bodies), run.turns, run.stop_reason, run.ok) == (1, 1, "cancelled", False)
    assert [c.id for c in run.tool_calls] == ["toolu_1"]


def test_cancel_during_a_request_skips_that_replys_tools(work: Path) -> None:
    cancel = threading.Event()

    def script(n: int, _b: dict[str, Any]) -> httpx2.Response:
        cancel.set()
        return httpx2.Response(200, json=reply(use("toolu_1", "Write", file_path="late.md", content="x")))

    run = go(Api(script), work, cancel=cancel)
    assert (run.turns, run.stop_reason, run.tool_calls, run.writes) == (1, "cancelled", [], [])
    assert not (work / "memory" / "late.md").exists()


@pytest.mark.parametrize(
    ("status", "expected"),
    [
        (500, "API error (HTTP 500): Internal server error"),
        (529, "overloaded (HTTP 529): Overloaded"),
        (429, "rate limited (HTTP 429): Internal server error"),
    ],
)
def test_an_api_error_ends_the_run_with_a_reason(work: Path, status: int, expected: str) -> None:
    message = "Overloaded" if status == 529 else "Internal server error"
    kind = "overloaded_error" if status == 529 else "api_error"
    api = Api(lambda _n, _b: httpx2.Response(status, json={"type": "error", "error": {"type": kind, "message": message}}))
    run = go(api, work)
    assert (run.error, run.stop_reason, run.turns, run.ok) == (expected, "error", 0, False)


def test_an_error_after_a_write_keeps_the_write_on_record(work: Path) -> None:
    def script(n: int, _b: dict[str, Any]) -> httpx2.Response:
        if n == 1:
            return httpx2.Response(200, json=reply(use("toolu_1", "Write", file_path="a.md", content="a")))
        return httpx2.Response(500, json={"type": "error", "error": {"type": "api_error", "message": "boom"}})

    run = go(Api(script), work)
    assert (run.turns, run.error) == (1, "API error (HTTP 500): boom")
    assert run.writes == [(work / "memory" / "a.md").resolve()]


def test_network_failures_end_the_run_with_a_reason(work: Path) -> None:
    def refuse(_r: httpx2.Request) -> httpx2.Response:
        raise httpx2.ConnectError("connection refused")

    def hang(_r: httpx2.Request) -> httpx2.Response:
        raise httpx2.ReadTimeout("read timed out")

    c = anthropic.Anthropic(api_key="test", max_retries=0, http_client=httpx2.Client(transport=httpx2.MockTransport(refuse)))
    run = run_agent(c, model=MODEL, system=SYSTEM, messages=OPENING, policy=policy_for(work), max_turns=5)
    assert (run.error, run.stop_reason) == ("connection error: connection refused", "error")
    c = anthropic.Anthropic(api_key="test", max_retries=0, http_client=httpx2.Client(transport=httpx2.MockTransport(hang)))
    run = run_agent(c, model=MODEL, system=SYSTEM, messages=OPENING, policy=policy_for(work), max_turns=5, request_timeout=7)
    assert (run.error, run.stop_reason) == ("timed out (no answer within 7 s)", "error")


def test_a_refusal_and_max_tokens_end_the_run(work: Path) -> None:
    run = go(scripted(reply(text("I can't help with that."), stop="refusal")), work)
    assert (run.stop_reason, run.error) == ("refusal", "the model refused to continue")
    run = go(scripted(reply(text("Half a thou"), stop="max_tokens")), work)
    assert (run.stop_reason, run.error, run.final_text, run.ok) == ("max_tokens", None, "Half a thou", True)


def test_events_stream_each_step(work: Path) -> None:
    api = scripted(
        reply(text("Reading."), use("toolu_1", "Bash", command="rm x")),
        reply(text("Done."), stop="end_turn"),
    )
    events: list[AgentEvent] = []
    go(api, work, on_event=events.append)
    assert [(e.kind, e.turn, e.text) for e in events if e.kind != "tool"] == [
        ("turn", 1, ""), ("text", 1, "Reading."), ("turn", 2, ""), ("text", 2, "Done."), ("done", 2, "end_turn"),
    ]
    (tool,) = [e for e in events if e.kind == "tool"]
    assert tool.tool_call is not None
    assert (tool.turn, tool.tool_call.summary, tool.tool_call.code) == (1, "Bash rm x", "bash-not-allowed")


def test_unknown_tools_asked_for_by_the_model_are_tool_errors(work: Path) -> None:
    api = scripted(
        reply(use("toolu_1", "WebFetch", url="https://example.com")),
        reply(text("ok"), stop="end_turn"),
    )
    run = go(api, work)
    (result,) = tool_results(api.bodies[1])
    assert result["is_error"] is True
    assert result["content"] == "Refused: there is no tool 'WebFetch'. The tools are: Read, Grep, Glob, Bash, Write, Edit."
    assert run.ok
