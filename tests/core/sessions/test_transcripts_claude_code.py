"""The transcript reader on two real Claude Code 2.1.328 transcripts (``tests/captures/``):
every line kept, nothing skipped, the version read, the attachment kinds memtui reads typed,
the rest counted quietly."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.captures import CAPTURES, load

from memtui.core.places.flavor import CLAUDE
from memtui.core.sessions.transcripts import (
    InstructionFile,
    attachments,
    last_human_turn,
    read_attachment,
    read_transcript,
    recently_used_tools,
    surfaced_memories,
    unknown_line_types,
)


def _path(name: str) -> Path:
    path = CAPTURES / "transcripts" / f"{name}.jsonl"
    if not path.exists():
        pytest.skip(f"no transcript {path}")
    return path


def _lines(path: Path) -> list[dict]:  # type: ignore[type-arg]
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


@pytest.mark.parametrize("name", ["base", "recall"])
def test_every_line_is_read_and_none_is_a_problem(name: str) -> None:
    path = _path(name)
    raw = _lines(path)
    t = read_transcript(path)
    assert len(t.entries) == len(raw)
    assert t.skipped_lines == () and not t.truncated_tail
    assert t.version == "2.1.328"
    assert sum(t.line_types.values()) == len(raw)
    assert {"user", "assistant", "attachment", "api-request", "queue-operation", "last-prompt", "cost-state"} <= set(t.line_types)
    assert unknown_line_types(t, CLAUDE.behaviour.transcript_types) == {}


def test_the_startup_instructions_are_read_from_their_attachment() -> None:
    t = read_transcript(_path("base"))
    (att,) = attachments(t, "instructions")
    files = read_attachment(att)
    assert files and all(isinstance(f, InstructionFile) for f in files)
    names = [Path(f.path).name for f in files]
    assert names[0] == "CLAUDE.md" and "MEMORY.md" in names  # recall off: the index is in context
    assert {f.type for f in files} >= {"User", "Project", "Local", "AutoMem"}


def test_a_recall_session_gives_its_prompt_tools_nested_load_and_surfaced_memories() -> None:
    run = next(r for r in load("layers")["runs"] if r["name"] == "recall")
    t = read_transcript(_path("recall"))
    human = last_human_turn(t)
    assert human is not None and human.text == run["prompt"]
    assert recently_used_tools(t) == ("Read",)
    (nested,) = [read_attachment(a) for a in attachments(t, "nested_memory")]
    assert nested is not None and nested.path.endswith("/home/.claude/rules/python.md") and nested.is_rule
    assert nested.content == "# Python files\nUse type hints.\n"
    (recalled,) = [read_attachment(a) for a in attachments(t, "relevant_memories")]
    assert [Path(m.path).name for m in recalled] == ["user_role.md", "deploy.md", "review.md"]
    paths, units = surfaced_memories(t)
    assert [Path(p).name for p in paths] == ["user_role.md", "deploy.md", "review.md"]
    assert units == sum(len(m.content) for m in recalled)
    (instructions,) = attachments(t, "instructions")
    assert "MEMORY.md" not in [Path(f.path).name for f in read_attachment(instructions)]  # recall on
