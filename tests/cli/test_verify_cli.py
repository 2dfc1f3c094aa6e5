"""``memtui verify`` and the doctor's conflict / claims output on the demo workspace (the
demo's claims and its Kafka cutover pair, expected values by hand from the template)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
from click.testing import CliRunner

from memtui.cli import main
from memtui.demo import DemoWorkspace, materialize

NOW = datetime(2026, 11, 30, 12, tzinfo=UTC)


@pytest.fixture
def ws(tmp_path: Path) -> DemoWorkspace:
    return materialize(tmp_path / "demo", NOW)


def run(ws: DemoWorkspace, *args: str) -> tuple[int, str]:
    env = {"MEMTUI_NOW": NOW.isoformat().replace("+00:00", "Z"), "HOME": str(ws.home)}
    result = CliRunner().invoke(main, ["--project", str(ws.project), *args], env=env)
    return result.exit_code, result.output


def test_verify_json_on_the_demo(ws: DemoWorkspace) -> None:
    code, out = run(ws, "verify", "--json")
    assert code == 0, out
    data = json.loads(out)
    assert data["root"] == str(ws.project) and data["source"] == "git"
    assert data["counts"] == {"memories": 30, "with_claims": 12, "claims": 18, "verified": 16, "stale": 2, "unchecked": 0}
    by_path = {m["relpath"]: m for m in data["memories"]}
    assert by_path["feedback_vendored_code.md"]["summary"] == "verified 3/3"
    [stale] = [c for c in by_path["team/feedback_alert_changes.md"]["claims"] if c["status"] == "stale"]
    assert (stale["code"], stale["text"], stale["line"], stale["instead"]) == ("stale-path", "ops/alerts/", 7, "deploy/alerts")
    [conflict] = data["conflicts"]
    # cutover: now - 28 days in the 65-day-old memory, now + 14 days in the 4-day-old one
    assert (conflict["older"], conflict["newer"]) == ("project_sqs_to_kafka.md", "project_kafka_migration.md")
    assert [(v["older"], v["newer"]) for v in conflict["values"]] == [("2026-11-02", "2026-12-14")]
    assert data["conflict_note"] is None  # no API key: the offline rule


def test_verify_text_and_nothing_written(ws: DemoWorkspace) -> None:
    before = {p: p.read_bytes() for p in ws.root.rglob("*") if p.is_file()}
    code, out = run(ws, "verify")
    assert code == 0
    assert "`parcelly_v2` occurs nowhere in the project; closest: `parcelly_v2_enabled`" in out
    assert "possible conflict: project_sqs_to_kafka.md ↔ project_kafka_migration.md" in out
    assert "16 of 18 claims verified, 2 stale, 0 unchecked; 1 possible conflict" in out
    assert {p: p.read_bytes() for p in ws.root.rglob("*") if p.is_file()} == before


def test_doctor_shows_the_kafka_conflict_and_the_claims(ws: DemoWorkspace) -> None:
    code, out = run(ws, "doctor", "--json")
    data = json.loads(out)
    conflicts = [f for f in data["findings"] if f["code"] == "possible-conflict"]
    assert [(f["path"], f["data"]["other"], f["fix"]) for f in conflicts] == [("project_sqs_to_kafka.md", "project_kafka_migration.md", None)]
    assert data["verified"]["stale"] == 2
    code, out = run(ws, "doctor")
    assert "possible-conflict" in out and "claims about the code: 16 verified, 2 stale, 0 not checked" in out


def test_judge_claude_without_a_key_says_so(ws: DemoWorkspace) -> None:
    code, out = run(ws, "verify", "--json", "--judge", "claude")
    data = json.loads(out)
    assert len(data["conflicts"]) == 1  # the offline rule's stand
    assert data["conflict_note"].startswith("Claude's judgement is not available")


def test_verify_without_project_code_says_so_once(tmp_path: Path) -> None:
    project = tmp_path / "empty"
    project.mkdir()
    memory_dir = tmp_path / "memory"
    memory_dir.mkdir()
    (memory_dir / "project_a.md").write_text("---\nname: a\ndescription: d\ntype: project\n---\n\n`src/a.ts`, `src/b.ts` and `chargeCustomer()`.\n")
    result = CliRunner().invoke(main, ["--project", str(project), "--memory-dir", str(memory_dir), "verify"], env={"MEMTUI_NOW": NOW.isoformat()})
    assert result.exit_code == 0, result.output
    assert "src/a.ts" not in result.output  # no line per claim
    assert f"project not found at {project}" in result.output
    assert "3 unchecked" in result.output
