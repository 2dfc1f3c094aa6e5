"""``memtui recall`` marks a pick a newer memory contradicts, as the Recall pane does: on the
demo, the older Kafka cutover memory (2026-11-02) against the newer one (2026-12-14)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from memtui.cli import main
from memtui.demo import DemoWorkspace, materialize

NOW = datetime(2026, 11, 30, 12, tzinfo=UTC)
OLDER, NEWER = "project_sqs_to_kafka.md", "project_kafka_migration.md"


@pytest.fixture
def demo(isolated_env: Path) -> DemoWorkspace:
    return materialize(isolated_env / "demo", NOW)


def run(ws: DemoWorkspace, *args: str) -> Result:
    env = {"HOME": str(ws.home), "MEMTUI_NOW": NOW.isoformat(), "COLUMNS": "250"}
    result = CliRunner(env=env).invoke(main, ["--flavor", "agent", "--project", str(ws.project), "recall", *args])
    assert result.exit_code == 0, result.output
    return result


def test_the_text_marks_the_older_cutover_memory(demo: DemoWorkspace) -> None:
    out = run(demo, "when is the kafka cutover", "--selector", "lexical").stdout
    assert f"{OLDER}" in out and f"{NEWER}" in out
    marked = [line for line in out.splitlines() if "a newer memory disagrees" in line]
    assert len(marked) == 1
    assert marked[0].strip().startswith(f"⚠ a newer memory disagrees: {NEWER} — ")
    assert "2026-11-02 here, 2026-12-14 in project_kafka_migration.md" in marked[0]
    # under the older memory's pick, not the newer one's
    lines = out.splitlines()
    pick_of_mark = [line for line in lines[: lines.index(marked[0])] if line[:1].isdigit()][-1]
    assert OLDER in pick_of_mark


def test_json_gives_each_pick_its_newer_conflicts(demo: DemoWorkspace) -> None:
    data = json.loads(run(demo, "when is the kafka cutover", "--selector", "lexical", "--json").stdout)
    by_path = {p["path"]: p["newer_conflicts"] for p in data["picks"]}
    (conflict,) = by_path[OLDER]
    assert (conflict["older"], conflict["newer"]) == (OLDER, NEWER)
    assert by_path[NEWER] == []


def test_a_skipped_prompt_marks_what_recall_would_pick(demo: DemoWorkspace) -> None:
    data = json.loads(run(demo, "kafka", "--selector", "lexical", "--json").stdout)
    assert data["skipped"] and data["picks"] == []
    (conflict,) = {p["path"]: p["newer_conflicts"] for p in data["would_pick"]}[OLDER]
    assert conflict["newer"] == NEWER
    out = run(demo, "kafka", "--selector", "lexical").stdout
    assert len([line for line in out.splitlines() if f"a newer memory disagrees: {NEWER}" in line]) == 1
