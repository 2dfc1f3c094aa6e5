"""Conflicts: memories on one subject that disagree, by the offline rule and by Claude's
judgement (the Messages API faked at the transport). Expected pairs and values by hand."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import httpx2
import pytest

from memtui.core.memory.memories import read_memory
from memtui.core.verify.conflicts import find_conflicts, newer_conflicts, subject_pairs
from memtui.core.verify.judge import judge_conflicts
from support import fake_api

DAY = 86_400.0
T0 = 1_770_000_000.0


def write(memory_dir: Path, name: str, text: str, age_days: float) -> Path:
    memory_dir.mkdir(parents=True, exist_ok=True)
    path = memory_dir / name
    path.write_text(text)
    os.utime(path, (T0 - age_days * DAY, T0 - age_days * DAY))
    return path


def mem(name: str, title: str, description: str, body: str) -> str:
    return f"---\nname: {title}\ndescription: {description}\ntype: project\n---\n\n{body}"


def load(memory_dir: Path) -> list[Any]:
    return [read_memory(p, memory_dir) for p in sorted(memory_dir.glob("*.md"))]


def kafka_pair(memory_dir: Path) -> None:
    # the demo's shape: an old plan and a newer cutover note with another date
    write(memory_dir, "project_sqs_to_kafka.md", mem("a", "Kafka migration plan", "Moving partner events from SQS to Kafka, cutover planned for 2026-01-03",
          "The cutover is planned for 2026-01-03.\n\n**Why:** SQS retention (14 days) is too short.\n"), 65)
    write(memory_dir, "project_kafka_migration.md", mem("b", "SQS to Kafka cutover", "Partner events move from SQS to Kafka; cutover on 2026-02-14",
          "Cutover is on 2026-02-14; SQS stays readable for 30 days after.\n\n**Why:** SQS cannot replay anything older than 14 days.\n"), 4)


def test_the_two_cutover_dates_conflict(tmp_path: Path) -> None:
    kafka_pair(tmp_path)
    [c] = find_conflicts(load(tmp_path))
    assert (c.older, c.newer) == ("project_sqs_to_kafka.md", "project_kafka_migration.md")  # older by mtime
    assert [(v.kind, v.older, v.newer, v.older_line, v.newer_line) for v in c.values] == [("date", "2026-01-03", "2026-02-14", 3, 3)]
    assert "cutover" in c.values[0].about
    # 14 days in the old one is also in the new one; 30 days is new detail, not a contradiction
    assert not any(v.kind.startswith("number") for v in c.values)
    assert newer_conflicts([c]) == {"project_sqs_to_kafka.md": [c]}


def test_different_subjects_do_not_pair(tmp_path: Path) -> None:
    kafka_pair(tmp_path)
    # a cutover of another system, another date: shares only "cutover"
    write(tmp_path, "project_vendor_cutover.md", mem("c", "Parcelly v1 shutdown", "Parcelly switches off v1 on 2026-03-01", "Their cutover is on 2026-03-01.\n"), 10)
    assert [(c.older, c.newer) for c in find_conflicts(load(tmp_path))] == [("project_sqs_to_kafka.md", "project_kafka_migration.md")]


def test_a_superseded_memory_is_left_alone(tmp_path: Path) -> None:
    kafka_pair(tmp_path)
    old = tmp_path / "project_sqs_to_kafka.md"
    old.write_text(old.read_text().replace("type: project\n", "type: project\nsuperseded_by: project_kafka_migration.md\n"))
    assert find_conflicts(load(tmp_path)) == []


def test_versions_names_and_yes_no(tmp_path: Path) -> None:
    write(tmp_path, "project_api_client_old.md", mem("a", "Parcelly API client", "Which Parcelly API client version the worker uses",
          "The worker uses the Parcelly API client v1. Retries of the client are enabled. The client's owner is Tomasz.\n"), 30)
    write(tmp_path, "project_api_client_new.md", mem("b", "Parcelly API client", "The Parcelly API client version in the worker",
          "The worker uses the Parcelly API client v2. Retries of the client are disabled. The client's owner is Ana.\n"), 2)
    # each sentence names the subject (the client); "14 days" vs "30 days" in a sentence that
    # does not would not count
    [c] = find_conflicts(load(tmp_path))
    assert sorted((v.kind, v.older, v.newer) for v in c.values) == [
        ("name:owner", "Tomasz", "Ana"),
        ("version", "v1", "v2"),
        ("yes-no:enabled/disabled", "enabled", "disabled"),
    ]


def test_claude_judges_the_pairs(tmp_path: Path) -> None:
    kafka_pair(tmp_path)
    memories = load(tmp_path)
    offline = find_conflicts(memories)
    verdicts = {"verdicts": [{"pair": 1, "contradiction": True, "subject": "Kafka cutover date", "older_value": "2026-01-03",
                              "newer_value": "2026-02-14", "explanation": "The cutover moved to February."}]}
    api = fake_api.scripted(fake_api.reply(fake_api.text(json.dumps(verdicts)), stop="end_turn"))
    conflicts, note = judge_conflicts(fake_api.client(api), memories, offline)
    assert note is None
    [c] = conflicts
    assert (c.older, c.newer, c.source, c.explanation) == ("project_sqs_to_kafka.md", "project_kafka_migration.md", "claude", "The cutover moved to February.")
    assert (c.values[0].older, c.values[0].newer) == ("2026-01-03", "2026-02-14")
    body = api.bodies[0]
    assert "## Pair 1" in body["messages"][0]["content"] and "project_kafka_migration.md" in body["messages"][0]["content"]
    assert body["output_config"]["format"]["type"] == "json_schema"  # structured output, no tool_choice
    assert "tool_choice" not in body


def test_claude_can_clear_an_offline_conflict(tmp_path: Path) -> None:
    kafka_pair(tmp_path)
    memories = load(tmp_path)
    verdicts = {"verdicts": [{"pair": 1, "contradiction": False, "subject": "", "older_value": "", "newer_value": "", "explanation": "Same plan."}]}
    api = fake_api.scripted(fake_api.reply(fake_api.text(json.dumps(verdicts)), stop="end_turn"))
    conflicts, note = judge_conflicts(fake_api.client(api), memories, find_conflicts(memories))
    assert (conflicts, note) == ([], None)


def test_an_api_failure_keeps_the_offline_conflicts(tmp_path: Path) -> None:
    kafka_pair(tmp_path)
    memories = load(tmp_path)
    offline = find_conflicts(memories)
    api = fake_api.Api(lambda n, body: httpx2.Response(529, json={"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}))
    conflicts, note = judge_conflicts(fake_api.client(api), memories, offline)
    assert conflicts == offline
    assert note is not None and "overloaded (HTTP 529)" in note


def test_subject_pairs_without_values(tmp_path: Path) -> None:
    # no dates or numbers: no offline conflict, but a pair for Claude to judge
    write(tmp_path, "feedback_merge_style_a.md", mem("a", "Merge style", "Squash merges for feature branches", "Always squash merge feature branches.\n"), 9)
    write(tmp_path, "feedback_merge_style_b.md", mem("b", "Merge style", "Rebase merges for feature branches", "Always rebase feature branches, never squash.\n"), 1)
    memories = load(tmp_path)
    assert find_conflicts(memories) == []
    assert subject_pairs(memories) == [("feedback_merge_style_a.md", "feedback_merge_style_b.md")]


def test_the_recall_mark_from_a_warm_database_reads_no_memory_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A recall pick's "a newer memory disagrees" mark, with the catalog database kept since
    the last run: the values come from the database, no memory file is opened, and the marks
    are the ones made from the texts."""
    from memtui.core.memory import catalogdb
    from memtui.core.memory.catalogdb import CatalogDB
    from memtui.core.memory.memories import SEED_FORMAT
    from memtui.core.verify.conflicts import newer_conflicts_in
    from support.opens import memory_files_opened

    monkeypatch.setattr(catalogdb, "RACY_SECONDS", -10)  # files written just now are kept too
    memory_dir = tmp_path / "memory"
    kafka_pair(memory_dir)
    write(memory_dir, "user_role.md", mem("r", "Role", "Backend engineer", "Works on the ingest service.\n"), 30)
    expected = newer_conflicts_in(memory_dir, SEED_FORMAT)
    assert list(expected) == ["project_sqs_to_kafka.md"]
    state = tmp_path / "state"
    assert newer_conflicts_in(memory_dir, SEED_FORMAT, CatalogDB.for_memory_dir(state, memory_dir)) == expected  # fills it
    with memory_files_opened(monkeypatch, memory_dir) as opened:
        assert newer_conflicts_in(memory_dir, SEED_FORMAT, CatalogDB.for_memory_dir(state, memory_dir)) == expected
    assert opened == []
