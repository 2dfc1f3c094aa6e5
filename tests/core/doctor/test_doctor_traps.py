"""Doctor findings for traps found in real memory dirs, conflicts between memories and the
claims check, each with a minimal input of that shape (expected values by hand)."""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path

from memtui.core.doctor import combined_fix_plan, fix_plan
from memtui.core.memory.memories import read_memory
from memtui.core.writes.edits import apply_plan
from memtui.core.writes.journal import Journal
from memtui.demo import materialize
from support.doctor import MONDAY, NOW, clean_dir, doctor, only, write

PROJECT = "---\nname: {name}\ndescription: d\ntype: project\n{extra}---\n\n{body}\n\n**Why:** w.\n\n**How to apply:** h.\n"


def test_a_second_frontmatter_block(tmp_path: Path) -> None:
    memory_dir = clean_dir(tmp_path)
    text = "---\nname: a\ndescription: d\ntype: user\n---\n\nFirst note.\n\n---\nname: b\ndescription: e\ntype: user\n---\n\nSecond note.\n"
    write(memory_dir, "user_two.md", text)
    [f] = only(doctor(memory_dir), "frontmatter-second-block")
    assert (f.path, f.line, f.severity) == ("user_two.md", 9, "warning")  # the second `---`
    assert "`description`, `name`, `type`" in f.message


def test_a_horizontal_rule_is_not_a_second_block(tmp_path: Path) -> None:
    memory_dir = clean_dir(tmp_path)
    write(memory_dir, "user_rule.md", "---\nname: a\ndescription: d\ntype: user\n---\n\nAbove.\n\n---\n\nBelow: nothing here.\n")
    assert only(doctor(memory_dir), "frontmatter-second-block") == []


def test_index_links_that_leave_the_memory_dir(tmp_path: Path) -> None:
    memory_dir = clean_dir(tmp_path)
    index = (memory_dir / "MEMORY.md").read_text() + "- [Docs](../docs/x.md) — the docs\n- [Rules](../../CLAUDE.md)\n- [Site](https://example.com/x.md)\n"
    write(memory_dir, "MEMORY.md", index)
    found = only(doctor(memory_dir), "index-link-outside")
    assert [(f.line, f.data["target"]) for f in found] == [(4, "../docs/x.md"), (5, "../../CLAUDE.md")]  # not the URL
    assert all(f.path == "MEMORY.md" and f.severity == "warning" for f in found)
    assert only(doctor(memory_dir), "index-dangling") == []  # they were never reported before


def test_relative_dates_read_against_the_date_in_the_file_name(tmp_path: Path) -> None:
    memory_dir = clean_dir(tmp_path)
    # mtime Monday 2026-03-02 (a checkout); the session was on Wednesday 2026-03-25
    write(memory_dir, "project_session_2026-03-25.md", PROJECT.format(name="s", extra="", body="We ship tomorrow."))
    [f] = only(doctor(memory_dir), "relative-date")
    assert f.data["resolved"] == "2026-03-26"
    assert f.data["base"] == "file name"
    assert "(from the date in the file name, 2026-03-25)" in f.message


def test_relative_dates_read_against_the_modified_field(tmp_path: Path) -> None:
    memory_dir = clean_dir(tmp_path)
    write(memory_dir, "project_m.md", PROJECT.format(name="m", extra="modified: 2026-02-10T16:00:00Z\n", body="We ship tomorrow."))
    [f] = only(doctor(memory_dir), "relative-date")
    assert (f.data["resolved"], f.data["base"]) == ("2026-02-11", "modified")
    # the fix writes that date, and the parser's own diagnostic says the same
    assert f.data["replacement"] == "on 2026-02-11"
    mem = read_memory(memory_dir / "project_m.md", memory_dir)
    assert any("meant 2026-02-11 (from the `modified` field, 2026-02-10)" in d.message for d in mem.diagnostics)


def test_relative_dates_without_a_better_date_use_the_mtime(tmp_path: Path) -> None:
    memory_dir = clean_dir(tmp_path)
    write(memory_dir, "project_plain.md", PROJECT.format(name="p", extra="", body="We ship tomorrow."), MONDAY)
    [f] = only(doctor(memory_dir), "relative-date")
    assert (f.data["resolved"], f.data["base"]) == ("2026-03-03", "mtime")


def two_cutovers(memory_dir: Path) -> None:
    day = 86_400
    write(memory_dir, "project_plan.md", "---\nname: Kafka plan\ndescription: SQS to Kafka cutover planned for 2026-01-03\ntype: project\n---\n\nCutover on 2026-01-03.\n", NOW.timestamp() - 65 * day)
    write(memory_dir, "project_cutover.md", "---\nname: Kafka cutover\ndescription: SQS to Kafka cutover on 2026-02-14\ntype: project\n---\n\nCutover on 2026-02-14.\n", NOW.timestamp() - 4 * day)


def test_possible_conflict_names_both_files_and_values(tmp_path: Path) -> None:
    memory_dir = clean_dir(tmp_path)
    two_cutovers(memory_dir)
    [f] = only(doctor(memory_dir), "possible-conflict")
    assert (f.path, f.line, f.severity, f.fix) == ("project_plan.md", 3, "info", None)  # advice: the user decides
    assert f.data["other"] == "project_cutover.md"
    assert "may contradict project_cutover.md (61 days newer)" in f.message
    assert "2026-01-03 here, 2026-02-14 in project_cutover.md" in f.message


def test_stale_claims_are_doctor_findings(tmp_path: Path) -> None:
    memory_dir = clean_dir(tmp_path)
    project = tmp_path / "project"
    (project / "src").mkdir(parents=True)
    (project / "src" / "app.py").write_text("def run_app():\n    pass\n")
    write(memory_dir, "reference_code.md", "---\nname: c\ndescription: d\ntype: reference\n---\n\n`run_app()` in `src/app.py`; `src/gone.py` calls `start_app`.\n")
    report = doctor(memory_dir, project_root=project)
    # no git history to tell "moved" from "never here": reported, as advice
    assert sorted((f.code, f.line, f.data["claim"], f.severity) for f in report.findings if f.code.startswith("stale")) == [
        ("stale-path", 7, "src/gone.py", "info"),
        ("stale-symbol", 7, "start_app", "info"),
    ]
    assert report.verification.memories["reference_code.md"].summary() == "2/4 verified · 2 stale"
    assert report.to_json()["verified"] == {"memories": 2, "with_claims": 1, "claims": 4, "verified": 2, "stale": 2, "unchecked": 0}


def test_the_demo_doctor_shows_the_kafka_conflict(tmp_path: Path) -> None:
    now = datetime(2026, 3, 10, 12, tzinfo=UTC)
    ws = materialize(tmp_path / "demo", now)
    report = doctor(ws.memory_dir, project_root=ws.project)
    [f] = only(report, "possible-conflict")
    # 65 and 4 days old; cutover dates now - 28 days and now + 14 days
    assert (f.path, f.data["other"]) == ("project_sqs_to_kafka.md", "project_kafka_migration.md")
    assert "2026-02-10 here, 2026-03-24 in project_kafka_migration.md" in f.message
    # the demo project drifted in two places, deliberately
    stale = sorted((f.code, f.path, f.data["claim"], f.data["instead"]) for f in report.findings if f.code.startswith("stale"))
    assert stale == [
        ("stale-path", "team/feedback_alert_changes.md", "ops/alerts/", "deploy/alerts"),
        ("stale-symbol", "project_vendor_api_cutover.md", "parcelly_v2", "parcelly_v2_enabled"),
    ]
    assert os.path.isdir(ws.project / "deploy" / "alerts")
    # every fix still applies together
    combined_fix_plan(ws.memory_dir, report.fixable())


