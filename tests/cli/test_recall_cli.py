"""`memtui recall`: the JSON shape, transcript input, skips and one-line errors."""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from memtui.cli import main

NOW = "2026-03-10T12:00:00Z"
T = datetime(2026, 3, 10, 12, 0, tzinfo=UTC).timestamp()


@pytest.fixture
def memory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("MEMTUI_NOW", NOW)
    d = tmp_path / "memory"
    d.mkdir()
    for name, desc, kind, age_days in [
        ("feedback_real_db.md", "Integration tests hit a real Postgres, never mocks", "feedback", 0),
        ("project_kafka.md", "Kafka migration plan and cutover dates", "project", 3),
        ("user_editor.md", "Uses neovim and fish", "user", 1),
    ]:
        p = d / name
        p.write_text(f"---\ndescription: {desc}\ntype: {kind}\n---\nbody\n", encoding="utf-8")
        t = T - age_days * 86400 - 60
        os.utime(p, (t, t))
    return d


def invoke(*args: str) -> Any:
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def test_json_shape_offline(memory: Path) -> None:
    res = invoke("--memory-dir", str(memory), "recall", "kafka migration cutover", "--json")
    assert res.exit_code == 0, res.output
    data = json.loads(res.output)
    assert list(data) == ["selector", "online", "skipped", "manifest", "picks", "would_pick", "would_pick_selector",
                          "near_misses", "reference_window_misses", "injected", "error"]
    # Offline, auto is the lexical selector; nothing was skipped, so nothing is only "would pick".
    assert data["selector"] == "lexical" and data["online"] is False and data["skipped"] is None
    assert data["would_pick"] == [] and data["would_pick_selector"] is None
    assert data["manifest"] == {"count": 3, "total": 3, "lines": [
        "- [feedback] feedback_real_db.md (2026-03-10T11:59:00.000Z): Integration tests hit a real Postgres, never mocks",
        "- [user] user_editor.md (2026-03-09T11:59:00.000Z): Uses neovim and fish",
        "- [project] project_kafka.md (2026-03-07T11:59:00.000Z): Kafka migration plan and cutover dates",
    ]}
    assert [p["path"] for p in data["picks"]] == ["project_kafka.md"]
    pick = data["picks"][0]
    assert pick["age_label"] == "3 days ago" and pick["stale_caveat"].startswith("This memory is 3 days old.")
    assert pick["reason"].startswith("BM25 ")
    assert data["reference_window_misses"] == [] and data["error"] is None
    assert data["injected"].startswith("<system-reminder>\nThis memory is 3 days old.")


def test_single_word_is_skipped(memory: Path) -> None:
    data = json.loads(invoke("--memory-dir", str(memory), "recall", "kafka", "--json").output)
    assert data["skipped"].startswith("single-word query")
    assert data["picks"] == [] and data["injected"] == ""


def test_claude_without_key_is_an_error_in_the_result_not_a_crash(memory: Path) -> None:
    res = invoke("--memory-dir", str(memory), "recall", "kafka migration", "--selector", "claude", "--json")
    assert res.exit_code == 0
    data = json.loads(res.output)
    assert data["selector"] == "claude" and data["picks"] == [] and data["error"].startswith("no API key")


def test_transcript_gives_tools_and_surfaced(memory: Path, tmp_path: Path) -> None:
    big = "x" * (61 * 1024)
    lines = [
        {"type": "user", "message": {"role": "user", "content": "migrate kafka please"}},
        {"type": "attachment", "attachment": {"type": "relevant_memories", "memories": [
            {"path": str(memory / "project_kafka.md"), "content": big}]}},
    ]
    tr = tmp_path / "s.jsonl"
    tr.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    data = json.loads(invoke("--memory-dir", str(memory), "recall", "kafka migration", "--transcript", str(tr), "--json").output)
    # 61 × 1,024 characters surfaced against the 60 × 1,024 budget
    assert data["skipped"] is not None and data["skipped"].startswith("session budget spent: 62,464 of 61,440 characters")
    assert data["manifest"]["total"] == 2  # the surfaced memory is dropped


def test_surfaced_option_drops_files(memory: Path) -> None:
    data = json.loads(invoke("--memory-dir", str(memory), "recall", "kafka migration", "--surfaced", "project_kafka.md", "--json").output)
    assert data["manifest"]["total"] == 2 and data["picks"] == []


def test_readable_output(memory: Path) -> None:
    res = invoke("--memory-dir", str(memory), "recall", "kafka migration cutover", "--tools", "Bash,Read")
    assert res.exit_code == 0
    assert "offline" in res.output and "project_kafka.md" in res.output and "[project]" in res.output
    assert "recently used tools: Bash, Read" in res.output
    assert "<system-reminder>" in res.output


def test_missing_memory_dir_is_one_line_on_stderr(tmp_path: Path) -> None:
    res = CliRunner().invoke(main, ["--memory-dir", str(tmp_path / "nope"), "recall", "a b"])
    assert res.exit_code == 1
    assert res.output.count("\n") == 1 and "no memory dir" in res.output
    assert "Traceback" not in res.output


def test_model_choice_order() -> None:
    from memtui.core.recall import DEFAULT_MODEL, choose_model

    assert DEFAULT_MODEL == "claude-sonnet-5-5"
    assert choose_model(None, None) == DEFAULT_MODEL
    assert choose_model(None, "  ") == DEFAULT_MODEL
    assert choose_model(None, 42) == DEFAULT_MODEL
    assert choose_model(None, "claude-from-settings") == "claude-from-settings"
    assert choose_model("claude-from-option", "claude-from-settings") == "claude-from-option"


def test_transcript_tools_reach_the_output(memory: Path, tmp_path: Path) -> None:
    lines = [
        {"type": "user", "message": {"role": "user", "content": "migrate kafka please"}},
        {"type": "assistant", "message": {"role": "assistant", "content": [
            {"type": "tool_use", "id": "a", "name": "Grep", "input": {}},
            {"type": "tool_use", "id": "b", "name": "Bash", "input": {}}]}},
        {"type": "user", "message": {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "a", "content": "x"},
            {"type": "tool_result", "tool_use_id": "b", "content": "boom", "is_error": True}]}},
    ]
    tr = tmp_path / "s.jsonl"
    tr.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    res = invoke("--memory-dir", str(memory), "recall", "kafka migration", "--transcript", str(tr), "--tools", "Read,Grep")
    assert "recently used tools: Grep, Read" in res.output


def test_a_cjk_prompt_without_spaces_is_skipped_with_what_recall_would_pick(memory: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (memory / "项目_发版流程.md").write_text("---\ndescription: 每周四下午发版，发版前需要测试同学签字确认\ntype: project\n---\nbody\n", encoding="utf-8")
    monkeypatch.setenv("MEMTUI_STATE_DIR", str(tmp_path / "state"))
    res = invoke("--memory-dir", str(memory), "recall", "下次发版是什么时候", "--json")
    assert res.exit_code == 0, res.output
    data = json.loads(res.output)
    assert data["skipped"] == (
        "no whitespace: the agent counts a prompt without spaces as one word, so Chinese and Japanese prompts"
        " without spaces never get recall"
    )
    assert data["picks"] == [] and data["injected"] == ""
    assert [p["path"] for p in data["would_pick"]] == ["项目_发版流程.md"] and data["would_pick_selector"] == "lexical"
    assert set(data["would_pick"][0]) == {"path", "reason", "age_label", "stale_caveat", "newer_conflicts"}  # the shape of a pick


def test_a_broken_labelled_set_is_one_line_naming_the_file_and_line(memory: Path, tmp_path: Path) -> None:
    bad = tmp_path / "set.jsonl"
    bad.write_text('{"query": "kafka cutover", "relevant": ["project_kafka.md"]}\nnot json\n', encoding="utf-8")
    res = invoke("recall", "eval", "--set", str(bad), "--memories", str(memory))
    assert res.exit_code == 2
    assert f"{bad}:2: not JSON" in res.output and "Traceback" not in res.output
