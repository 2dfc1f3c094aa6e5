"""The Recall pane, driven with Pilot over the conftest memory dir (frozen clock, no network:
the claude selector gets a client on an ``httpx2.MockTransport``).

Expected picks are worked out from the memories' words (conftest ``MEMORIES``):
``reference_grafana.md`` is the only memory with "grafana", "latency" and "board" (45 days
old: stale), ``user_role.md`` the only one with "backend", "engineer" and "go" (saved today).
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
from textual.message import Message
from textual.pilot import Pilot
from textual.widgets import Input, Select, Static, TextArea

from support.memories import NOW, write_memory_dir
from support.pilot import plain, private_path, settle, snapshot_root, type_text, wait_until

from memtui.core.places.flavor import AGENT
from memtui.core.recall import make_client
from memtui.tui.app import MemtuiApp
from memtui.tui.recall import RecallPane

STALE = (
    "This memory is 45 days old. Memories are point-in-time observations, not live state"
    " — claims about code behavior or file:line citations may be outdated."
    " Verify against current code before asserting as fact."
)


def pane(app: MemtuiApp) -> RecallPane:
    return app.query_one(RecallPane)


async def open_recall(app: MemtuiApp, pilot: Pilot[None]) -> RecallPane:
    await pilot.press("3")
    await wait_until(pilot, lambda: pane(app).corpus is not None)
    return pane(app)


async def result_for(app: MemtuiApp, pilot: Pilot[None], query: str, selector: str | None = None) -> Any:
    p = pane(app)
    await wait_until(pilot, lambda: p.result is not None and p.result.query == query and (selector is None or p.result.selector == selector))
    await pilot.pause()
    return p.result


class Api:
    """A fake Messages API (see tests/core/recall/test_recall_claude.py): records requests, answers
    with ``reply``."""

    def __init__(self, reply: Callable[[httpx2.Request], httpx2.Response]) -> None:
        self.reply = reply
        self.requests: list[httpx2.Request] = []

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        self.requests.append(request)
        return self.reply(request)

    def client(self) -> Any:
        return make_client(api_key="test", http_client=httpx2.Client(transport=httpx2.MockTransport(self)), max_retries=0)


def selected(*names: str) -> httpx2.Response:
    return httpx2.Response(200, json={
        "id": "msg_test", "type": "message", "role": "assistant", "model": "claude-sonnet-5-5",
        "content": [{"type": "text", "text": json.dumps({"selected_memories": list(names)})}],
        "stop_reason": "end_turn", "stop_sequence": None, "usage": {"input_tokens": 10, "output_tokens": 5},
    })


# ----- lexical, offline ------------------------------------------------------------------------


async def test_typing_shows_lexical_picks_offline(make_app: Callable[[], MemtuiApp]) -> None:
    app = make_app()
    seen: list[Message] = []
    async with app.run_test(size=(120, 36), message_hook=seen.append) as pilot:
        p = await open_recall(app, pilot)
        assert app.focused is app.query_one("#recall-query")
        status = plain(app, "#recall-status")
        # offline, auto is the lexical selector
        assert "OFFLINE" in status and "lexical (BM25) as you type" in status and "no API key" in status
        assert "5 memories" in status
        await type_text(pilot, "latency board for the backend engineer")
        result = await result_for(app, pilot, "latency board for the backend engineer")
        # "latency", "board" → the Grafana memory; "backend", "engineer" → the role memory
        assert [pk.relpath for pk in result.picks] == ["reference_grafana.md", "user_role.md"]
        picks = plain(app, "#recall-picks")
        assert "1 " in picks and "reference_grafana.md" in picks and "45 days ago" in picks
        assert "Grafana board for ingest latency" in picks
        # The scores are bm25s's own build over these memories' tokens (checked against it).
        assert "BM25 2.08; matched: latency, board" in picks
        assert "user_role.md" in picks and "today" in picks and "BM25 1.69; matched: backend, engineer" in picks
        assert picks.index("reference_grafana.md") < picks.index("user_role.md")
        # debounced: one run for the whole typed query, over a corpus scanned once
        # (the hook sees a message once per node it bubbles through: count distinct ones)
        runs = {m.ticket for m in seen if isinstance(m, RecallPane.RecallDone)}
        assert 1 <= len(runs) <= 5  # 38 keystrokes; a slow machine may let a pause pass 250 ms
        assert len({id(m) for m in seen if isinstance(m, RecallPane.CorpusLoaded)}) == 1
        assert p.result is not None and p.result.request is None  # lexical sends nothing


async def test_near_misses_and_reference_comparison(make_app: Callable[[], MemtuiApp]) -> None:
    app = make_app()
    async with app.run_test(size=(120, 36)) as pilot:
        p = await open_recall(app, pilot)
        p.set_selector("lexical")
        app.query_one("#recall-query", Input).value = "grafana latency board and the answers"
        await result_for(app, pilot, "grafana latency board and the answers")
        # "answers" is only in the terse-replies description: a near miss, far below the pick
        near = plain(app, "#recall-near")
        assert "0.91" in near and "feedback_terse.md" in near and "No recap paragraphs" in near
        compare = plain(app, "#recall-compare")
        assert "the 5 newest of 5 memories" in compare
        assert "no request — lexical ranks all 5" in compare
        assert "none — the reference could have made every pick" in compare
        # the manifest the reference would send, newest first, in its exact line format
        assert app.query_one("#recall-manifest").display
        manifest = str(app.query_one("#recall-manifest-text", Static).content)
        assert manifest.splitlines()[0] == "- [user] user_role.md (2026-11-30T07:12:00.000Z): Backend engineer who writes Go daily"
        assert manifest.splitlines()[-1].startswith("- feedback_nested.md (")
        assert p.result is not None and p.result.manifest.count == 5


async def test_single_word_query_is_skipped(make_app: Callable[[], MemtuiApp]) -> None:
    app = make_app()
    async with app.run_test(size=(120, 36)) as pilot:
        p = await open_recall(app, pilot)
        await type_text(pilot, "grafana")
        result = await result_for(app, pilot, "grafana")
        assert result.skipped and not result.picks
        notice = plain(app, "#recall-notice")
        assert "Skipped — single-word query: the agent only recalls for prompts of two words or more" in notice
        # what recall would pick, marked as not sent
        picks = plain(app, "#recall-picks")
        assert "Would pick" in picks and "not sent — the agent skips this prompt" in picks
        assert [pk.relpath for pk in result.would_pick] == ["reference_grafana.md"] and "reference_grafana.md  not sent" in picks
        assert not app.query_one("#recall-manifest").display
        assert app.query_one("#recall-injected", TextArea).text == ""
        # a second word brings recall back
        await type_text(pilot, " board")
        result = await result_for(app, pilot, "grafana board")
        assert [pk.relpath for pk in result.picks] == ["reference_grafana.md"]
        assert p.result is result


async def test_injected_text_has_the_exact_headers(make_app: Callable[[], MemtuiApp]) -> None:
    app = make_app()
    async with app.run_test(size=(120, 36)) as pilot:
        p = await open_recall(app, pilot)
        p.set_selector("lexical")
        mem = app.locations.memory_dir
        query = "grafana board latency for a go backend"
        app.query_one("#recall-query", Input).value = query
        result = await result_for(app, pilot, query)
        assert [pk.relpath for pk in result.picks] == ["reference_grafana.md", "user_role.md"]
        text = app.query_one("#recall-injected", TextArea).text
        lines = text.splitlines()
        # stale (45 days): the caveat, a blank line, then "Memory: <path>:"
        assert STALE in lines
        assert f"Memory: {mem}/reference_grafana.md:" in lines
        # fresh (saved 0.2 days ago): the reference's "saved today" header
        assert f"Memory (saved today): {mem}/user_role.md:" in lines
        assert text == (
            "<system-reminder>\n"
            f"{STALE}\n\nMemory: {mem}/reference_grafana.md:\n\n"
            "---\nname: Latency board\ndescription: Grafana board for ingest latency\ntype: reference\n---\n\n"
            "Board `ingest-latency`, panel p95.\n\n"
            "</system-reminder>\n\n"
            "<system-reminder>\n"
            f"Memory (saved today): {mem}/user_role.md:\n\n"
            "---\nname: Role\ndescription: Backend engineer who writes Go daily\ntype: user\n---\n\n"
            "New to the React side.\n\n"
            "</system-reminder>"
        )
        area = app.query_one("#recall-injected", TextArea)
        assert area.read_only
        assert area.border_title == f"injected text · 2 memories · {len(text.encode()):,} bytes"


# ----- selectors and the online/offline badge ----------------------------------------------------


async def test_claude_without_a_key_says_no_key_in_the_badge_as_in_the_result(make_app: Callable[[], MemtuiApp]) -> None:
    app = make_app()
    async with app.run_test(size=(120, 36)) as pilot:
        p = await open_recall(app, pilot)
        app.query_one("#recall-query", Input).value = "grafana latency board"
        await result_for(app, pilot, "grafana latency board", "lexical")
        await pilot.press("ctrl+o")  # auto → claude: no key, so it costs nothing and runs now
        assert p.selector == "claude"
        result = await result_for(app, pilot, "grafana latency board", "claude")
        assert result.error and result.error.startswith("no API key") and not result.picks
        status = plain(app, "#recall-status")
        # the badge says what the result says: no key, nothing recalled — never "BM25 as you type"
        assert "NO KEY" in status and "claude recalls nothing without an API key" in status and "no API key: set ANTHROPIC_API_KEY" in status
        assert "OFFLINE" not in status and "BM25" not in status
        assert "claude failed — no API key: set ANTHROPIC_API_KEY" in plain(app, "#recall-notice")
        # what would have been sent is still shown
        assert str(app.query_one("#recall-request").title) == "Request that would be sent · claude-sonnet-5-5"
        request = str(app.query_one("#recall-request-text", Static).content)
        assert "Query: grafana latency board\n\nAvailable memories:\n- [user] user_role.md" in request
        assert app.query_one("#recall-injected", TextArea).text == ""
        await pilot.press("ctrl+o")  # claude → semantic: offline, as you type
        await result_for(app, pilot, "grafana latency board", "semantic")
        status = plain(app, "#recall-status")
        assert "OFFLINE" in status and "semantic (embeddings + BM25) as you type" in status


async def test_claude_runs_on_enter_through_the_mock_transport(make_app: Callable[[], MemtuiApp]) -> None:
    app = make_app()
    api = Api(lambda request: selected("reference_grafana.md", "no_such_file.md"))
    async with app.run_test(size=(120, 36)) as pilot:
        p = await open_recall(app, pilot)
        p.use_client(api.client())
        p.set_selector("claude")
        await pilot.pause()
        status = plain(app, "#recall-status")
        assert "ONLINE" in status and "claude · claude-sonnet-5-5" in status and "Enter sends one request" in status
        query = "grafana latency board"
        await type_text(pilot, query)
        await wait_until(pilot, lambda: "Enter asks claude-sonnet-5-5 (one request)" in plain(app, "#recall-notice"))
        await settle(pilot)
        assert api.requests == []  # typing never costs a request
        await pilot.press("enter")
        result = await result_for(app, pilot, query, "claude")
        assert len(api.requests) == 1
        body = json.loads(api.requests[0].content)
        assert body["model"] == "claude-sonnet-5-5"
        assert body["messages"][0]["content"].startswith("Query: grafana latency board\n\nAvailable memories:\n")
        assert [pk.relpath for pk in result.picks] == ["reference_grafana.md"]
        picks = plain(app, "#recall-picks")
        assert "chosen by claude-sonnet-5-5 from the manifest; shares: grafana, latency, board" in picks
        assert "dropped 1 name(s) not in the manifest: no_such_file.md" in plain(app, "#recall-notice")
        assert str(app.query_one("#recall-request").title) == "Request sent · claude-sonnet-5-5"
        assert f"Memory: {app.locations.memory_dir}/reference_grafana.md:" in app.query_one("#recall-injected", TextArea).text
        # Enter also remembers the query: ↑ brings it back after editing
        app.query_one("#recall-query", Input).value = "something else entirely"
        await pilot.press("up")
        assert app.query_one("#recall-query", Input).value == query


async def test_hybrid_reports_what_was_sent(make_app: Callable[[], MemtuiApp]) -> None:
    app = make_app()
    api = Api(lambda request: selected("user_role.md"))
    async with app.run_test(size=(120, 36)) as pilot:
        p = await open_recall(app, pilot)
        p.use_client(api.client())
        p.set_selector("hybrid")
        app.query_one("#recall-query", Input).value = "who is the backend engineer"
        await pilot.press("enter")
        result = await result_for(app, pilot, "who is the backend engineer", "hybrid")
        assert [pk.relpath for pk in result.picks] == ["user_role.md"]
        compare = plain(app, "#recall-compare")
        assert "sent the 5 best by meaning and words of 5 · the same memories as the reference" in compare
        assert app.query_one("#recall-results").border_title == "results · hybrid"


async def test_api_errors_show_as_a_reason_not_a_crash(make_app: Callable[[], MemtuiApp]) -> None:
    app = make_app()
    api = Api(lambda request: httpx2.Response(529, json={"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}))
    async with app.run_test(size=(120, 36)) as pilot:
        p = await open_recall(app, pilot)
        p.use_client(api.client())
        p.set_selector("claude")
        app.query_one("#recall-query", Input).value = "grafana latency board"
        await pilot.press("enter")
        result = await result_for(app, pilot, "grafana latency board", "claude")
        assert result.error == "overloaded (HTTP 529): Overloaded" and not result.picks
        status = plain(app, "#recall-status")
        assert "ERROR" in status and "overloaded (HTTP 529): Overloaded" in status
        assert "claude failed — overloaded (HTTP 529): Overloaded" in plain(app, "#recall-notice")
        assert "No memory recalled" in plain(app, "#recall-picks")


async def test_escape_cancels_a_running_request(make_app: Callable[[], MemtuiApp]) -> None:
    app = make_app()
    release = threading.Event()

    def slow(request: httpx2.Request) -> httpx2.Response:
        release.wait(10)
        return selected("reference_grafana.md")

    api = Api(slow)
    async with app.run_test(size=(120, 36)) as pilot:
        p = await open_recall(app, pilot)
        p.use_client(api.client())
        p.set_selector("claude")
        app.query_one("#recall-query", Input).value = "grafana latency board"
        await pilot.press("enter")
        await wait_until(pilot, lambda: len(api.requests) == 1)
        assert "asking…" in plain(app, "#recall-status")
        await pilot.press("escape")
        assert "Cancelled" in plain(app, "#recall-notice")
        release.set()
        await settle(pilot)
        assert p.result is None  # the late answer is ignored
        assert "Enter sends one request" in plain(app, "#recall-status")


# ----- transcripts, narrow layout --------------------------------------------------------------


def _session(path: Path, grafana: Path) -> None:
    entries = [
        {"type": "user", "message": {"role": "user", "content": "check the latency board"}, "sessionId": "s1", "cwd": "/p"},
        {"type": "assistant", "message": {"role": "assistant", "content": [
            {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "ls"}},
            {"type": "tool_use", "id": "t2", "name": "Edit", "input": {}},
        ]}},
        {"type": "user", "message": {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "t1", "content": "ok"},
            {"type": "tool_result", "tool_use_id": "t2", "content": "no", "is_error": True},
        ]}},
        {"type": "attachment", "attachment": {"type": "relevant_memories", "memories": [
            {"path": str(grafana), "content": "x" * 100},
        ]}},
    ]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(e) + "\n" for e in entries), encoding="utf-8")


async def test_transcript_fills_tools_and_drops_surfaced_memories(make_app: Callable[[], MemtuiApp]) -> None:
    app = make_app()
    session = app.locations.sessions_dir / "abcd1234-0000-4000-8000-000000000000.jsonl"
    _session(session, app.locations.memory_dir / "reference_grafana.md")
    stamp = NOW.timestamp() - 3 * 86_400
    os.utime(session, (stamp, stamp))
    async with app.run_test(size=(120, 36)) as pilot:
        p = await open_recall(app, pilot)
        select = app.query_one("#recall-transcript", Select)
        assert [str(label) for label, _ in select._options[1:]] == ["3 days ago · abcd1234"]
        select.value = str(session)
        # Bash succeeded, Edit errored: only Bash is a recently used tool
        await wait_until(pilot, lambda: app.query_one("#recall-tools", Input).value == "Bash")
        assert "session abcd1234: 1 tool, 1 surfaced (100 of 61,440 characters)" in plain(app, "#recall-status")
        app.query_one("#recall-query", Input).value = "grafana latency board for the backend engineer"
        result = await result_for(app, pilot, "grafana latency board for the backend engineer")
        assert result.recent_tools == ("Bash",)
        assert result.dropped_surfaced == ("reference_grafana.md",)
        assert [pk.relpath for pk in result.picks] == ["user_role.md"]
        assert "1 memory already surfaced in this session is left out" in plain(app, "#recall-notice")
        assert p.transcript is not None


async def test_narrow_terminal_shows_results_and_injected_text_by_turns(make_app: Callable[[], MemtuiApp]) -> None:
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        p = await open_recall(app, pilot)
        app.query_one("#recall-query", Input).value = "grafana latency board"
        await result_for(app, pilot, "grafana latency board")
        assert p.narrow
        results, injected = app.query_one("#recall-results"), app.query_one("#recall-injected")
        assert results.display and not injected.display
        assert "^n injected text" in str(results.border_title)
        await pilot.press("ctrl+n")
        await pilot.pause()
        assert injected.display and not results.display and app.focused is injected
        await pilot.press("ctrl+n")
        await pilot.pause()
        assert results.display and app.focused is app.query_one("#recall-query")


# ----- snapshot --------------------------------------------------------------------------------

@pytest.fixture
def fixed_memory_dir(isolated_env: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The memory dir at a path that reads the same on every run: the injected text names
    each memory by its absolute path."""
    monkeypatch.setenv("MEMTUI_NOW", NOW.isoformat())
    with snapshot_root() as root, private_path(root) as private:
        write_memory_dir(root / "memory")
        yield private / "memory"


@pytest.mark.parametrize("size", [(120, 36), (80, 24)], ids=["wide", "narrow"])
def test_recall_pane_snapshot(snap_compare: Any, isolated_env: Path, fixed_memory_dir: Path, size: tuple[int, int]) -> None:
    project = isolated_env / "project"
    project.mkdir()
    app = MemtuiApp.for_project(AGENT, project, memory_dir=fixed_memory_dir, watch=False)

    async def run_before(pilot: Pilot[None]) -> None:
        await open_recall(app, pilot)
        app.query_one("#recall-query", Input).cursor_blink = False  # a steady cursor
        # a stale pick (45 days, with its caveat) and a fresh one (saved today)
        await type_text(pilot, "grafana board latency for a go backend")
        await result_for(app, pilot, "grafana board latency for a go backend")
        await settle(pilot)

    assert snap_compare(app, terminal_size=size, run_before=run_before)


# ----- as a user types (regression: the debounced run never fired) ----------------------------


async def test_typed_query_updates_picks_after_the_debounce_without_enter(make_app: Callable[[], MemtuiApp]) -> None:
    """A user switches to the pane, types two words and waits: the picks appear on their own.
    (The pane once overwrote Textual's own ``MessagePump._running``: the debounce timer's
    callback then sat in the pane's queue until some other message arrived.)"""
    app = make_app()
    async with app.run_test(size=(120, 36)) as pilot:
        p = await open_recall(app, pilot)
        # the first scan's run (empty query: the intro) has been handled
        await wait_until(pilot, lambda: "Type a prompt" in plain(app, "#recall-notice"))
        assert plain(app, "#recall-picks").strip() == ""
        await type_text(pilot, "grafana board")
        await wait_until(pilot, quiet=True, timeout=3.0, predicate=lambda: p.result is not None and p.result.query == "grafana board")
        assert [pk.relpath for pk in p.result.picks] == ["reference_grafana.md"]
        await wait_until(pilot, quiet=True, timeout=3.0, predicate=lambda: "reference_grafana.md" in plain(app, "#recall-picks"))
        # a second query replaces the picks, again without Enter
        await type_text(pilot, "backend engineer", erase=len("grafana board"))
        await wait_until(pilot, quiet=True, timeout=3.0, predicate=lambda: p.result is not None and p.result.query == "backend engineer")
        picks = plain(app, "#recall-picks")
        assert "user_role.md" in picks and "reference_grafana.md" not in picks
