"""The claude extractor against a scripted Messages API (``httpx2.MockTransport``; no network):
it reads in turn 1 and writes in turn 2, over the live memory dir it is shown (its writes land in
a staging copy); writes outside its memory dir, ``rm`` and a redirecting Bash command come back
as tool errors; it never runs more than 5 turns."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx2
import pytest
from support.extract import SESSION, Talk

from memtui.core.extract import ExtractorError, extract
from memtui.core.extract.claude import MAX_TURNS, ClaudeExtractor
from memtui.core.extract.inbox import Inbox
from memtui.core.writes.journal import Journal
from memtui.core.recall import make_client

NOW = datetime(2026, 3, 10, 12, 0, tzinfo=UTC)
EXISTING = "---\nname: Real DB\ndescription: Integration tests hit a real Postgres\ntype: feedback\n---\n\nNo mocks.\n"
NEW = (
    "---\nname: Data scientist\ndescription: The user is a data scientist investigating logging\ntype: user\n---\n\n"
    "The user is a data scientist looking into the logging system.\n"
)


def reply(*content: dict[str, Any], stop: str = "tool_use") -> dict[str, Any]:
    return {"id": "msg", "type": "message", "role": "assistant", "model": "claude-sonnet-5-5", "content": list(content),
            "stop_reason": stop, "stop_sequence": None, "usage": {"input_tokens": 10, "output_tokens": 5}}


def use(ident: str, name: str, **tool_input: Any) -> dict[str, Any]:
    return {"type": "tool_use", "id": ident, "name": name, "input": tool_input}


class Api:
    """Answers request n with ``script(n, body)``; keeps every request body."""

    def __init__(self, script: Callable[[int, dict[str, Any]], dict[str, Any]]) -> None:
        self.script = script
        self.bodies: list[dict[str, Any]] = []

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        body = json.loads(request.content)
        self.bodies.append(body)
        return httpx2.Response(200, json=self.script(len(self.bodies), body))

    def client(self) -> Any:
        return make_client(api_key="test", http_client=httpx2.Client(transport=httpx2.MockTransport(self)), max_retries=0)


def shown_dir(body: dict[str, Any]) -> str:
    """The memory dir memtui's own system prompt names."""
    system = body["system"] if isinstance(body["system"], str) else body["system"][0]["text"]
    m = re.search(r"Write and Edit work only inside (\S+?)\. ", system)
    assert m, system
    return m.group(1)


def results_of(body: dict[str, Any]) -> dict[str, dict[str, Any]]:
    last = body["messages"][-1]
    assert last["role"] == "user"
    return {block["tool_use_id"]: block for block in last["content"]}


@pytest.fixture
def setup(tmp_path: Path) -> tuple[Path, Path, Path]:
    memory = tmp_path / "memory"
    memory.mkdir()
    (memory / "feedback_real_db.md").write_text(EXISTING, encoding="utf-8")
    (memory / "MEMORY.md").write_text("- [Real DB](feedback_real_db.md) — Integration tests hit a real Postgres\n", encoding="utf-8")
    talk = Talk(cwd=str(tmp_path))
    talk.human("I'm a data scientist looking at the logging system. Why are batch logs missing?")
    talk.say("The worker never logs batch_written.")
    transcript = talk.write(tmp_path / f"{SESSION}.jsonl")
    return memory, tmp_path / "state", transcript


def conversation(outside: Path) -> Callable[[int, dict[str, Any]], dict[str, Any]]:
    def script(n: int, body: dict[str, Any]) -> dict[str, Any]:
        shown = shown_dir(body)
        if n == 1:
            return reply(
                use("r1", "Read", file_path=f"{shown}/feedback_real_db.md"),
                use("b1", "Bash", command=f"rm -rf {shown}/feedback_real_db.md"),
                use("b2", "Bash", command=f"cat {shown}/feedback_real_db.md > {outside}"),
                use("w0", "Write", file_path=str(outside), content="pwned"),
            )
        if n == 2:
            return reply(
                use("w1", "Write", file_path=f"{shown}/user_data_scientist.md", content=NEW),
                use("e1", "Edit", file_path=f"{shown}/feedback_real_db.md", old_string="No mocks.",
                    new_string="No mocks.\n\n**Why:** a mocked test hid a broken migration."),
            )
        return reply({"type": "text", "text": "Saved one new memory and updated one."}, stop="end_turn")

    return script


def test_reads_then_writes_refusals_are_tool_errors(setup: tuple[Path, Path, Path], tmp_path: Path) -> None:
    memory, state, transcript = setup
    outside = tmp_path / "outside.txt"
    api = Api(conversation(outside))

    result = extract(transcript, memory, state, NOW, extractor="claude", client=api.client())

    assert len(api.bodies) == 3
    first = api.bodies[0]
    assert first["model"] == "claude-sonnet-5-5"
    assert {t["name"] for t in first["tools"]} == {"Read", "Grep", "Glob", "Bash", "Write", "Edit"}
    system = first["system"] if isinstance(first["system"], str) else first["system"][0]["text"]
    for needle in ("- user:", "- feedback:", "- project:", "- reference:", "**Why:**", "**How to apply:**",
                   "Do NOT save", "code patterns", "git history", "debugging recipes", "instruction files", "ephemeral task state"):
        assert needle in system
    opening = first["messages"][0]["content"]
    assert "User: I'm a data scientist looking at the logging system." in opening
    assert re.search(r"- \[feedback\] feedback_real_db\.md \(\S+\): Integration tests hit a real Postgres", opening)
    assert shown_dir(first) == str(memory)  # the live dir, as the model is told; the copy is memtui's
    assert str(state) not in json.dumps(api.bodies)

    turn1 = results_of(api.bodies[1])
    assert turn1["r1"].get("is_error") is False and "No mocks." in json.dumps(turn1["r1"]["content"])
    for refused, why in (("b1", "'rm' is not allowed"), ("b2", "redirection"), ("w0", "may only change files inside")):
        assert turn1[refused]["is_error"] is True and why in json.dumps(turn1[refused]["content"]), refused
    assert not outside.exists()
    turn2 = results_of(api.bodies[2])
    assert turn2["w1"]["is_error"] is False and turn2["e1"]["is_error"] is False

    assert result.extractor == "claude" and not result.heuristic and result.skipped is None
    by_kind = {p.kind: p for p in result.proposals}
    create, update = by_kind["create"], by_kind["update"]
    assert (create.path, create.type, create.name, create.description) == (
        "user_data_scientist.md", "user", "Data scientist", "The user is a data scientist investigating logging")
    assert create.source.session_id == SESSION and create.source.message_uuid == "u2"
    assert update.path == "feedback_real_db.md" and update.text is not None and "**Why:** a mocked test" in update.text
    # Nothing touched the real memory dir; the staging copy is gone.
    assert (memory / "feedback_real_db.md").read_text(encoding="utf-8") == EXISTING
    assert sorted(p.name for p in memory.iterdir()) == ["MEMORY.md", "feedback_real_db.md"]
    assert not [p for p in state.rglob("*") if "staging" in p.parts and p.name != "staging"]
    assert any("3 tool call(s) refused" in n for n in result.notes)

    # Accepting both goes through the write path.
    inbox = Inbox(state, memory)
    journal = Journal(state, memory)
    inbox.accept(update.id, journal, NOW)
    inbox.accept(create.id, journal, NOW)
    updated = (memory / "feedback_real_db.md").read_text(encoding="utf-8")
    assert f"originSessionId: {SESSION}\n---" in updated and "**Why:** a mocked test" in updated
    assert f"originSessionId: {SESSION}" in (memory / "user_data_scientist.md").read_text(encoding="utf-8")
    assert "(user_data_scientist.md)" in (memory / "MEMORY.md").read_text(encoding="utf-8")


def test_apply_writes_directly(setup: tuple[Path, Path, Path], tmp_path: Path) -> None:
    memory, state, transcript = setup
    api = Api(conversation(tmp_path / "outside.txt"))
    result = extract(transcript, memory, state, NOW, extractor="claude", client=api.client(), apply=True)
    assert sorted(result.written) == ["feedback_real_db.md", "user_data_scientist.md"]
    assert Inbox(state, memory).pending() == []


def test_turn_limit_holds(setup: tuple[Path, Path, Path]) -> None:
    memory, state, transcript = setup

    def forever(n: int, body: dict[str, Any]) -> dict[str, Any]:
        return reply(use(f"r{n}", "Read", file_path=f"{shown_dir(body)}/feedback_real_db.md"))

    api = Api(forever)
    result = extract(transcript, memory, state, NOW, extractor="claude", client=api.client())
    assert MAX_TURNS == 5 and len(api.bodies) == 5
    assert result.proposals == () and any("turn limit (5)" in n for n in result.notes)
    assert result.cursor == "u2"  # reaching the limit is not a failure


def test_api_error_fails_and_keeps_the_cursor(setup: tuple[Path, Path, Path]) -> None:
    memory, state, transcript = setup

    def broken(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(500, json={"type": "error", "error": {"type": "api_error", "message": "boom"}})

    client = make_client(api_key="test", http_client=httpx2.Client(transport=httpx2.MockTransport(broken)), max_retries=0)
    with pytest.raises(ExtractorError, match="HTTP 500"):
        extract(transcript, memory, state, NOW, extractor="claude", client=client)
    from memtui.core.extract import CursorStore

    assert CursorStore(state, memory).get(SESSION) is None
    # auto falls back to the offline extractor and succeeds.
    result = extract(transcript, memory, state, NOW, extractor="auto", client=client)
    assert result.extractor == "offline" and any("claude extractor failed" in n for n in result.notes)


def test_index_edits_and_untyped_files_are_left_out(setup: tuple[Path, Path, Path]) -> None:
    memory, state, transcript = setup

    def script(n: int, body: dict[str, Any]) -> dict[str, Any]:
        shown = shown_dir(body)
        if n == 1:
            return reply(
                use("w1", "Write", file_path=f"{shown}/notes.md", content="no frontmatter at all\n"),
                use("w2", "Write", file_path=f"{shown}/MEMORY.md", content="- [x](x.md) — x\n"),
            )
        return reply({"type": "text", "text": "done"}, stop="end_turn")

    api = Api(script)
    result = extract(transcript, memory, state, NOW, extractor="claude", client=api.client())
    assert result.proposals == ()
    assert any("notes.md: left out" in n for n in result.notes)
    assert any("MEMORY.md" in n and "ignored" in n for n in result.notes)


def test_cwd_defaults_to_the_live_memory_dir_when_the_session_cwd_is_gone(setup: tuple[Path, Path, Path], tmp_path: Path) -> None:
    """The session's cwd is gone: the model's shell starts in the memory dir as it is shown (the
    live one), and runs in the staging copy of it (``ls`` lists the copied files)."""
    memory, state, transcript = setup

    def script(n: int, body: dict[str, Any]) -> dict[str, Any]:
        if n == 1:
            return reply(use("p", "Bash", command="pwd"), use("l", "Bash", command="ls"), use("r", "Read", file_path="feedback_real_db.md"))
        return reply({"type": "text", "text": "Nothing to save."}, stop="end_turn")

    api = Api(script)
    extractor = ClaudeExtractor(state_dir=state, cwd=tmp_path / "gone", client=api.client())
    assert extractor.max_turns == 5 and extractor.name == "claude"
    extract(transcript, memory, state, NOW, extractor=extractor)
    got = results_of(api.bodies[1])
    assert got["p"]["content"].strip() == str(memory)
    assert got["l"]["content"].split() == ["MEMORY.md", "feedback_real_db.md"]
    assert "No mocks." in json.dumps(got["r"]["content"]) and not got["r"]["is_error"]
    sent = extractor.last_request
    assert sent is not None and sent.memory_dir == f"{memory}/" and sent.prompt_source == "memtui"
    assert sent.staging_dir is not None and sent.staging_dir.startswith(f"{state}/") and sent.staging_dir.endswith("/")
