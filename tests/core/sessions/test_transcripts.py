"""Transcripts (docs/behaviour.md §7): tolerant JSONL reading, sessions, human turns, recent tools, writes."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from memtui.core.sessions.transcripts import (
    TOOL_RESULT_TEXT_CAP,
    last_human_turn,
    list_sessions,
    parse_lines,
    read_transcript,
    recently_used_tools,
    surfaced_memories,
    tool_calls,
    writes_inside,
)


def user(content: Any, **extra: Any) -> dict[str, Any]:
    return {"type": "user", "message": {"role": "user", "content": content}, "sessionId": "s1", "cwd": "/p", **extra}


def assistant(*blocks: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"type": "assistant", "message": {"role": "assistant", "content": list(blocks)}, "cwd": "/p", **extra}


def use(ident: str, name: str, **inp: Any) -> dict[str, Any]:
    return {"type": "tool_use", "id": ident, "name": name, "input": inp}


def result(ident: str, *, error: bool | None = None, content: Any = "ok") -> dict[str, Any]:
    block: dict[str, Any] = {"type": "tool_result", "tool_use_id": ident, "content": content}
    if error is not None:
        block["is_error"] = error
    return block


def write(path: Path, objs: list[dict[str, Any]], tail: str = "") -> Path:
    path.write_text("".join(json.dumps(o) + "\n" for o in objs) + tail, encoding="utf-8")
    return path


def test_robust_reading_skips_bad_lines_and_counts_them(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    body = (
        json.dumps(user("hello there")) + "\n"
        "not json at all\n"
        "\n"
        "[1, 2]\n"
        + json.dumps({"type": "file-history-snapshot", "snapshot": {}}) + "\n"
        + json.dumps(assistant({"type": "thinking", "thinking": "…"}, {"type": "text", "text": "hi"})) + "\n"
        + '{"type": "user", "message": {"role": "user", "content": "cut sh'
    )
    path.write_text(body, encoding="utf-8")
    t = read_transcript(path)
    assert [e.type for e in t.entries] == ["user", "file-history-snapshot", "assistant"]
    assert t.skipped_lines == (2, 4, 7)
    assert t.truncated_tail is True
    assert [b.type for b in t.entries[2].content] == ["thinking", "text"]
    assert t.entries[2].text == "hi"
    assert t.session_id == "s1"
    assert t.cwds == ("/p",)


def test_complete_last_line_is_not_a_truncated_tail() -> None:
    t = parse_lines([json.dumps(user("a b")) + "\n", "garbage\n"])
    assert t.skipped_lines == (2,)
    assert t.truncated_tail is False


def test_huge_tool_result_is_capped(tmp_path: Path) -> None:
    big = "x" * (TOOL_RESULT_TEXT_CAP * 50)
    t = read_transcript(
        write(tmp_path / "s.jsonl", [assistant(use("t1", "Read", file_path="/a")), user([result("t1", content=[{"type": "text", "text": big}])])])
    )
    block = t.entries[1].content[0]
    assert block.type == "tool_result" and block.truncated
    assert len(block.text) == TOOL_RESULT_TEXT_CAP


def test_list_sessions_excludes_subagents_newest_first(tmp_path: Path) -> None:
    for name, mtime in [("a.jsonl", 100), ("b.jsonl", 300), ("agent-1.jsonl", 500), ("notes.txt", 600)]:
        (tmp_path / name).write_text("{}\n")
        os.utime(tmp_path / name, (mtime, mtime))
    (tmp_path / "dir.jsonl").mkdir()
    assert [s.session_id for s in list_sessions(tmp_path)] == ["b", "a"]
    assert list_sessions(tmp_path / "missing") == []


def test_last_human_turn_skips_tool_results_and_meta() -> None:
    t = parse_lines(
        [
            json.dumps(user("first question")),
            json.dumps(user([{"type": "text", "text": "second question"}])),
            json.dumps(assistant(use("t1", "Bash", command="ls"))),
            json.dumps(user([result("t1")])),
            json.dumps(user("<system-reminder>x</system-reminder>", isMeta=True)),
            json.dumps(user("sub-agent prompt", isSidechain=True)),
        ]
    )
    last = last_human_turn(t)
    assert last is not None and last.text == "second question"


def test_recently_used_tools_since_last_human_turn_minus_errors() -> None:
    t = parse_lines(
        [
            json.dumps(user("old question")),
            json.dumps(assistant(use("o1", "WebFetch", url="u"))),
            json.dumps(user([result("o1")])),
            json.dumps(user("fix the migration please")),
            json.dumps(assistant(use("t1", "Grep", pattern="x"), use("t2", "Bash", command="pytest"))),
            json.dumps(user([result("t1", error=False), result("t2", error=True)])),
            json.dumps(assistant(use("t3", "Read", file_path="/a"), use("t4", "Bash", command="ls"))),
            json.dumps(user([result("t3"), result("t4")])),
            json.dumps(assistant(use("t5", "Edit", file_path="/a"))),  # no result yet
            json.dumps(assistant(use("t6", "Grep", pattern="y"))),
            json.dumps(user([result("t6")])),
        ]
    )
    # WebFetch is before the last human turn; Bash errored once; Edit got no result.
    assert recently_used_tools(t) == ("Grep", "Read")


def test_recently_used_tools_without_human_turn_counts_everything() -> None:
    t = parse_lines([json.dumps(assistant(use("t1", "Glob", pattern="*"))), json.dumps(user([result("t1")]))])
    assert recently_used_tools(t) == ("Glob",)


def test_tool_calls_pair_results() -> None:
    t = parse_lines(
        [json.dumps(assistant(use("a", "Read", file_path="/x"))), json.dumps(user([result("a", error=True)])), json.dumps(assistant(use("b", "Write", file_path="/y")))]
    )
    calls = tool_calls(t.entries)
    assert [(c.name, c.errored, c.result_entry) for c in calls] == [("Read", True, 1), ("Write", False, None)]


def test_writes_inside_a_dir_in_a_range(tmp_path: Path) -> None:
    mem = tmp_path / "memory"
    t = parse_lines(
        [
            json.dumps(assistant(use("a", "Write", file_path=str(mem / "x.md")))),
            json.dumps(assistant(use("b", "Edit", file_path=str(tmp_path / "memory-evil" / "y.md")))),
            json.dumps(assistant(use("c", "Read", file_path=str(mem / "z.md")))),
            json.dumps(assistant(use("d", "Edit", file_path="memory/rel.md"), cwd=str(tmp_path))),
            json.dumps(assistant(use("e", "Write", file_path=str(mem / "sub" / ".." / "w.md")))),
        ]
    )
    assert [c.id for c in writes_inside(t, mem)] == ["a", "d", "e"]
    assert [c.id for c in writes_inside(t, mem, start=1, end=4)] == ["d"]


def test_surfaced_memories_from_attachments() -> None:
    att = {"type": "attachment", "attachment": {"type": "relevant_memories", "memories": [
        {"path": "/m/a.md", "content": "abc"}, {"path": "/m/b.md", "content": "笔记😀"}]}}
    t = parse_lines([json.dumps(att), json.dumps(att)])
    paths, units = surfaced_memories(t)
    assert paths == ("/m/a.md", "/m/b.md")
    assert units == 2 * (3 + 4)  # the emoji counts 2 UTF-16 units
