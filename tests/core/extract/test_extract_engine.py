"""One extraction pass (docs/behaviour.md §7): the cursor moves after success and after a mutual-exclusion
skip, never after a failure; the agent's own memory writes make the pass skip its range."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest
from support.extract import SESSION, Talk

from memtui.core.extract import (
    CursorStore,
    Draft,
    ExtractionRequest,
    ExtractorError,
    extract,
)
from memtui.core.extract.cursor import SessionLock
from memtui.core.extract.inbox import Inbox

NOW = datetime(2026, 3, 10, 12, 0, tzinfo=UTC)


@pytest.fixture
def dirs(tmp_path: Path) -> tuple[Path, Path]:
    memory = tmp_path / "memory"
    memory.mkdir()
    return memory, tmp_path / "state"


def cursor(state: Path, memory: Path) -> str | None:
    c = CursorStore(state, memory).get(SESSION)
    return None if c is None else c.message_uuid


def test_offline_pass_proposes_and_moves_the_cursor(tmp_path: Path, dirs: tuple[Path, Path]) -> None:
    memory, state = dirs
    talk = Talk()
    source = talk.human("Draft the notes. And remember that we never deploy on Fridays.")
    talk.tool("Bash", {"command": "git log --oneline"}, "abc fix")
    talk.say("Here are the notes.")
    path = talk.write(tmp_path / f"{SESSION}.jsonl")

    result = extract(path, memory, state, NOW, extractor="offline")

    assert result.skipped is None and result.extractor == "offline" and result.heuristic
    assert (result.start, result.end) == (0, 4)  # human, tool_use, tool_result, text
    assert result.cursor == "u4" == cursor(state, memory)
    (p,) = result.proposals
    assert (p.type, p.path, p.name, p.description) == (
        "feedback", "feedback_we_never_deploy_on_fridays.md", "We never deploy on Fridays", "We never deploy on Fridays.")
    assert (p.source.session_id, p.source.message_uuid) == (SESSION, source)
    assert p.heuristic and p.extractor == "offline"
    assert "**Why:**" in p.body and "**How to apply:**" in p.body
    assert result.written == () and list(memory.iterdir()) == []  # inbox, not the memory dir
    assert [q.id for q in Inbox(state, memory).pending()] == [p.id] == list(result.added)
    data = result.to_json()
    assert {"skipped", "cursor", "proposals", "written"} <= set(data)
    assert {"path", "type", "name", "description", "body", "source"} <= set(data["proposals"][0])
    assert {"session_id", "message_uuid"} <= set(data["proposals"][0]["source"])
    json.dumps(data)


def test_second_pass_reads_only_what_follows_the_cursor(tmp_path: Path, dirs: tuple[Path, Path]) -> None:
    memory, state = dirs
    talk = Talk()
    talk.human("remember that we never deploy on Fridays")
    path = talk.write(tmp_path / "s.jsonl")
    first = extract(path, memory, state, NOW, extractor="offline")
    assert first.cursor == "u1"

    again = extract(path, memory, state, NOW, extractor="offline")
    assert again.skipped == "nothing new since the cursor" and again.cursor == "u1" and again.proposals == ()

    talk.human("From now on, use uv instead of pip.")
    talk.write(path)
    third = extract(path, memory, state, NOW, extractor="offline")
    assert (third.start, third.end) == (1, 2)
    assert [p.description for p in third.proposals] == ["Use uv instead of pip."]
    assert len(Inbox(state, memory).pending()) == 2


def test_agent_wrote_memory_in_range_skips_and_advances(tmp_path: Path, dirs: tuple[Path, Path]) -> None:
    memory, state = dirs
    talk = Talk()
    talk.human("remember that we never deploy on Fridays")
    talk.tool("Write", {"file_path": str(memory / "feedback_fridays.md"), "content": "x"})
    talk.say("Saved.")
    path = talk.write(tmp_path / "s.jsonl")

    result = extract(path, memory, state, NOW, extractor="offline")

    assert result.skipped is not None and "agent wrote memory itself" in result.skipped
    assert result.agent_writes == (str(memory / "feedback_fridays.md"),)
    assert result.proposals == () and Inbox(state, memory).pending() == []
    assert result.cursor == "u4" == cursor(state, memory)


def test_a_write_outside_the_memory_dir_does_not_count(tmp_path: Path, dirs: tuple[Path, Path]) -> None:
    memory, state = dirs
    talk = Talk()
    talk.human("remember that we never deploy on Fridays")
    talk.tool("Edit", {"file_path": str(memory) + "-evil/x.md", "old_string": "a", "new_string": "b"})
    path = talk.write(tmp_path / "s.jsonl")
    result = extract(path, memory, state, NOW, extractor="offline")
    assert result.skipped is None and len(result.proposals) == 1


class Failing:
    name = "claude"
    heuristic = False

    def run(self, request: ExtractionRequest) -> tuple[list[Draft], list[str]]:
        raise ExtractorError("API error (HTTP 500)")


def test_failure_leaves_the_cursor(tmp_path: Path, dirs: tuple[Path, Path]) -> None:
    memory, state = dirs
    talk = Talk()
    talk.human("remember that we never deploy on Fridays")
    path = talk.write(tmp_path / "s.jsonl")
    extract(path, memory, state, NOW, extractor="offline")
    talk.human("From now on, use uv.")
    talk.write(path)

    with pytest.raises(ExtractorError, match="HTTP 500"):
        extract(path, memory, state, NOW, extractor=Failing())
    assert cursor(state, memory) == "u1"  # not moved past u2

    retry = extract(path, memory, state, NOW, extractor="offline")
    assert retry.cursor == "u2" and [p.description for p in retry.proposals] == ["Use uv."]


def test_auto_without_key_is_offline(tmp_path: Path, dirs: tuple[Path, Path]) -> None:
    memory, state = dirs
    talk = Talk()
    talk.human("remember that we never deploy on Fridays")
    result = extract(talk.write(tmp_path / "s.jsonl"), memory, state, NOW, extractor="auto", environ={})
    assert result.extractor == "offline"


def test_apply_writes_through_the_write_path(tmp_path: Path, dirs: tuple[Path, Path]) -> None:
    memory, state = dirs
    talk = Talk()
    talk.human("记住：提交信息一律用英文。")
    result = extract(talk.write(tmp_path / "s.jsonl"), memory, state, NOW, extractor="offline", apply=True)
    rel = result.proposals[0].path
    assert result.written == (rel,)
    text = (memory / rel).read_text(encoding="utf-8")
    assert text.startswith(
        "---\nname: 提交信息一律用英文\ndescription: 提交信息一律用英文。\ntype: feedback\n"
        f"originSessionId: {SESSION}\n---\n\n提交信息一律用英文。\n")
    assert (memory / "MEMORY.md").read_text(encoding="utf-8") == f"- [提交信息一律用英文]({rel}) — 提交信息一律用英文。\n"
    assert Inbox(state, memory).pending() == []
    assert [p.status for p in Inbox(state, memory).all()] == ["accepted"]


def test_same_finding_is_not_proposed_twice(tmp_path: Path, dirs: tuple[Path, Path]) -> None:
    memory, state = dirs
    talk = Talk()
    talk.human("remember that we never deploy on Fridays")
    path = talk.write(tmp_path / "s.jsonl")
    extract(path, memory, state, NOW, extractor="offline")
    again = extract(path, memory, state, NOW, extractor="offline", ignore_cursor=True)
    assert again.added == () and len(Inbox(state, memory).all()) == 1
    assert any("already proposed" in n for n in again.notes)


def test_existing_memory_with_same_description_is_not_proposed(tmp_path: Path, dirs: tuple[Path, Path]) -> None:
    memory, state = dirs
    (memory / "feedback_fridays.md").write_text("---\ndescription: We never deploy on Fridays.\ntype: feedback\n---\nx\n")
    talk = Talk()
    talk.human("remember that we never deploy on Fridays")
    result = extract(talk.write(tmp_path / "s.jsonl"), memory, state, NOW, extractor="offline")
    assert result.proposals == () and "already remembered: We never deploy on Fridays." in result.notes


def test_every_block_kind_a_truncated_tail_and_unknown_lines(tmp_path: Path, dirs: tuple[Path, Path]) -> None:
    memory, state = dirs
    talk = Talk()
    talk.raw({"type": "summary", "summary": "earlier", "leafUuid": "x"})
    talk.raw({"type": "file-history-snapshot", "messageId": "m", "snapshot": {}})
    talk.human("Don't ever commit secrets.")
    talk._add("assistant", [{"type": "thinking", "thinking": "hmm"}, {"type": "text", "text": "ok"},
                            {"type": "tool_use", "id": "t1", "name": "Read", "input": {"file_path": "/x"}}])
    talk._add("user", [{"type": "tool_result", "tool_use_id": "t1", "content": [{"type": "text", "text": "x" * 20000}]},
                       {"type": "image", "source": {}}])
    talk.raw({"type": "attachment", "uuid": "att", "attachment": {"type": "relevant_memories", "memories": []}})
    path = talk.write(tmp_path / "s.jsonl", tail='{"type": "user", "message": {"role": "us')
    result = extract(path, memory, state, NOW, extractor="offline")
    assert [p.description for p in result.proposals] == ["Don't ever commit secrets."]
    assert result.cursor == "att"


def test_sidechain_turns_are_not_the_conversation(tmp_path: Path, dirs: tuple[Path, Path]) -> None:
    memory, state = dirs
    talk = Talk()
    talk._add("user", "remember that the sub-agent said this", isSidechain=True)
    talk.human("thanks")
    result = extract(talk.write(tmp_path / "s.jsonl"), memory, state, NOW, extractor="offline")
    assert result.proposals == () and result.cursor == "u2"


def test_a_held_lock_skips_without_moving(tmp_path: Path, dirs: tuple[Path, Path]) -> None:
    memory, state = dirs
    talk = Talk()
    talk.human("remember that we never deploy on Fridays")
    path = talk.write(tmp_path / "s.jsonl")
    lock = CursorStore(state, memory).lock(SESSION)
    assert lock.acquire()
    try:
        result = extract(path, memory, state, NOW, extractor="offline")
    finally:
        lock.release()
    assert result.skipped == "another extraction of this session is running" and cursor(state, memory) is None


def test_stale_lock_of_a_dead_process_is_taken_over(tmp_path: Path) -> None:
    path = tmp_path / "l.lock"
    path.write_text("999999999")
    lock = SessionLock(path)
    assert lock.acquire() and path.read_text() == str(os.getpid())
    other = SessionLock(path)
    assert not other.acquire()
    lock.release()
    assert not path.exists()


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="zombies are told apart through /proc")
def test_lock_of_a_finished_unreaped_process_is_taken_over(tmp_path: Path) -> None:
    """An extractor that exited but whose parent has not reaped it (a zombie) answers
    ``kill(pid, 0)`` yet holds nothing: its lock is taken over at once."""
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    try:
        stat = Path(f"/proc/{child.pid}/stat")
        deadline = time.monotonic() + 10
        while stat.read_text().rsplit(")", 1)[1].split()[0] != "Z":
            assert time.monotonic() < deadline, "the child never finished"
            time.sleep(0.01)
        path = tmp_path / "l.lock"
        path.write_text(str(child.pid))
        lock = SessionLock(path)
        assert lock.acquire() and path.read_text() == str(os.getpid())
        lock.release()
    finally:
        child.wait()


def test_cursor_message_gone_reads_everything_again(tmp_path: Path, dirs: tuple[Path, Path]) -> None:
    memory, state = dirs
    talk = Talk()
    talk.human("hello there")
    path = talk.write(tmp_path / "s.jsonl")
    extract(path, memory, state, NOW, extractor="offline")
    fresh = Talk()
    fresh.lines = [dict(line, uuid="v" + line["uuid"]) for line in talk.lines]
    fresh.human("remember that tests use a real database")
    fresh.write(path)
    result = extract(path, memory, state, NOW, extractor="offline")
    assert result.start == 0 and any("not in the transcript any more" in n for n in result.notes)
    assert len(result.proposals) == 1


def test_unreadable_transcript_raises_oserror(tmp_path: Path, dirs: tuple[Path, Path]) -> None:
    memory, state = dirs
    with pytest.raises(OSError):
        extract(tmp_path / "missing.jsonl", memory, state, NOW, extractor="offline")


def test_a_subagent_transcript_keeps_its_own_cursor(tmp_path: Path, dirs: tuple[Path, Path]) -> None:
    memory, state = dirs
    main_talk = Talk()  # the subagent's transcript carries its parent's sessionId
    main_talk.human("remember that we never deploy on Fridays")
    main = main_talk.write(tmp_path / f"{SESSION}.jsonl")
    sub_talk = Talk()
    sub_talk.human("Search the repo for TODOs.")
    sub_talk.human("And the FIXMEs.")  # its cursor ends on a uuid the main transcript lacks
    sub = sub_talk.write(tmp_path / "agent-7f3e9c21.jsonl")
    extract(main, memory, state, NOW, extractor="offline")
    extract(sub, memory, state, NOW, extractor="offline")
    again = extract(main, memory, state, NOW, extractor="offline")
    assert again.skipped == "nothing new since the cursor"  # not re-read from the start
