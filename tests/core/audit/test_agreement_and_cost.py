"""Recall agreement (recall@5 of memtui's selectors against the agent's own picks) and the cost
of memory at a session's start, on the captured Claude Code 2.1.328 transcripts.

By hand, from the captured "deploy" session: the prompt "how do I deploy the ingest service to
staging READ:… READ:… READ:…"; the agent had read deploy.md (line 22) before its recall attachment
(line 27), which names user_role.md, reference_dash.md, feedback_tests.md, project_kafka.md; it
read old_notes.md after it (line 30).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import anthropic
import httpx2
import pytest

from memtui.core.audit.agreement import collect, evaluate
from memtui.core.audit.cost import counting_model, recorded_start, startup_cost
from memtui.core.audit.tokens import TokenCounter
from memtui.core.cascade import compute_cascade
from memtui.core.places.flavor import get_flavor
from memtui.core.places.locations import resolve_locations
from memtui.core.sessions.usage import memory_usage
from support.usage import rebuild_usage

CLAUDE_PICKS = ("user_role.md", "reference_dash.md", "feedback_tests.md", "project_kafka.md")


def _api(handler: Any) -> anthropic.Anthropic:
    return anthropic.Anthropic(api_key="test", max_retries=0, http_client=httpx2.Client(transport=httpx2.MockTransport(handler)))


def test_the_agents_recall_is_found_with_its_prompt(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ws = rebuild_usage(tmp_path, monkeypatch)
    loc = resolve_locations(get_flavor("claude"), ws.proj)
    recalls, sessions, with_recall = collect(loc)
    assert (sessions, with_recall) == (4, 1)
    (rp,) = recalls
    assert rp.prompt.startswith("how do I deploy the ingest service to staging READ:")
    assert rp.claude == CLAUDE_PICKS
    assert rp.before == ("deploy.md",)  # read before the recall: out of the candidates


def test_recall_at_5_offline_and_hybrid(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ws = rebuild_usage(tmp_path, monkeypatch)
    loc = resolve_locations(get_flavor("claude"), ws.proj)
    now = datetime.fromtimestamp(ws.captured_at, UTC)
    offline = evaluate(loc, now)
    assert "hybrid" in offline.skipped and offline.to_json()["recall_at_5"]["hybrid"] is None
    (prompt,) = offline.prompts
    lexical = prompt.picks["lexical"]
    assert lexical is not None and "deploy.md" not in lexical  # read already: not a candidate
    expected = len(set(lexical) & set(CLAUDE_PICKS)) / 4
    assert offline.mean("lexical") == offline.pooled("lexical") == expected
    # hybrid with a key: the request (Claude Code's own) over the prefiltered manifest; this
    # model answers with three of the agent's four picks and one of its own
    bodies: list[dict[str, Any]] = []

    def handler(request: httpx2.Request) -> httpx2.Response:
        bodies.append(json.loads(request.content))
        names = ["user_role.md", "reference_dash.md", "feedback_tests.md", "user_tz.md"]
        return httpx2.Response(200, json={"id": "m", "type": "message", "role": "assistant", "model": "claude-sonnet-5-5",
                                          "content": [{"type": "text", "text": json.dumps({"selected_memories": names})}],
                                          "stop_reason": "end_turn", "stop_sequence": None, "usage": {"input_tokens": 1, "output_tokens": 1}})

    online = evaluate(loc, now, client=_api(handler))
    assert online.skipped == {} and online.mean("hybrid") == 0.75
    manifest = bodies[0]["messages"][0]["content"][0]["text"]
    assert "deploy.md" not in manifest and "user_tz.md" in manifest


def test_picks_of_files_gone_since_are_set_apart(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ws = rebuild_usage(tmp_path, monkeypatch)
    (ws.memory_dir / "project_kafka.md").unlink()
    loc = resolve_locations(get_flavor("claude"), ws.proj)
    agreement = evaluate(loc, datetime.fromtimestamp(ws.captured_at, UTC))
    (prompt,) = agreement.prompts
    assert prompt.gone == ("project_kafka.md",) and prompt.matchable == 3


def test_startup_cost_estimated_without_a_key_and_counted_with_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ws = rebuild_usage(tmp_path, monkeypatch)
    loc = resolve_locations(get_flavor("claude"), ws.proj)
    cascade = compute_cascade(loc, ws.proj)
    sessions = memory_usage(loc, ws.captured_at).sessions
    assert counting_model(loc) == "claude-opus-5-5"
    offline = startup_cost(cascade, sessions, TokenCounter("claude-opus-5-5", state_dir=tmp_path / "tok"))
    index_text = next(f.content for f in cascade.loaded_files if f.layer == "automem")
    assert offline.index is not None and offline.index.tokens == (len(index_text) + 3) // 4 and not offline.total.exact
    assert str(offline.total).startswith("~")
    # the four sessions' first requests, as their transcripts recorded them (by hand: 12882,
    # 12873, 12983, 12899 input tokens, no cache)
    assert recorded_start(sessions).mean == round((12882 + 12873 + 12983 + 12899) / 4)
    assert offline.recorded.latest == 12899
    # with a key: count_tokens once per distinct text, cached in the state dir
    seen: list[dict[str, Any]] = []

    def handler(request: httpx2.Request) -> httpx2.Response:
        body = json.loads(request.content)
        seen.append(body)
        assert request.url.path == "/v1/messages/count_tokens"
        return httpx2.Response(200, json={"input_tokens": 1000 + len(body["messages"][0]["content"])})

    counter = TokenCounter("claude-opus-5-5", state_dir=tmp_path / "tok", client=_api(handler))
    online = startup_cost(cascade, sessions, counter)
    assert online.total.exact and online.block.tokens == 1000 + len(cascade.rendered)
    calls = len(seen)
    assert calls == len(cascade.loaded_files) + 1
    again = startup_cost(cascade, sessions, TokenCounter("claude-opus-5-5", state_dir=tmp_path / "tok", client=_api(handler)))
    assert len(seen) == calls and again.total == online.total  # from the cache


def test_a_failing_count_falls_back_to_the_estimate_once(tmp_path: Path) -> None:
    calls: list[int] = []

    def handler(request: httpx2.Request) -> httpx2.Response:
        calls.append(1)
        return httpx2.Response(500, json={"type": "error", "error": {"type": "api_error", "message": "down"}})

    counter = TokenCounter("claude-opus-5-5", client=_api(handler))
    assert not counter.count("abcdefgh").exact and not counter.count("ijkl").exact
    assert len(calls) == 1 and counter.reason and "count_tokens failed" in counter.reason


def test_a_legacy_sub_agent_transcript_counts_for_its_parent_session(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The demo holds five session transcripts and ``agent-7f3e9c21.jsonl``, an older release's
    sub-agent file named by the sub-agent, whose lines carry the session id ``c338b045-…`` of
    one of the five: five sessions, as the usage report counts them."""
    from memtui.demo import materialize

    now = datetime(2026, 11, 30, 12, tzinfo=UTC)
    ws = materialize(tmp_path / "demo", now)
    monkeypatch.setenv("HOME", str(ws.home))
    loc = resolve_locations(get_flavor("agent"), ws.project)
    names = sorted(p.name for p in loc.sessions_dir.glob("*.jsonl"))
    assert len(names) == 6 and "agent-7f3e9c21.jsonl" in names
    _recalls, sessions, _with_recall = collect(loc)
    assert sessions == 5
    assert len(memory_usage(loc, now.timestamp()).sessions) == 5
