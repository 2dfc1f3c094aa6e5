"""The embedded demo workspace (``memtui demo``): layout, ages, traps, transcripts.

Expected values are worked out by hand from the template (``memtui/demo/workspace``) and the
fixed clock below; frontmatter is read with plain ``yaml.safe_load`` on purpose, so these tests
do not depend on memtui's own parser.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from datetime import UTC, datetime, timedelta
from importlib.resources import files
from pathlib import Path
from typing import Any

import pytest
import yaml

from memtui.core.places.slug import slugify
from memtui.demo import DemoWorkspace, load_ages, materialize

NOW = datetime(2026, 11, 30, 12, 0, 0, tzinfo=UTC)  # a Monday
DAY = 86_400

S1_TODAY = "c338b045-8e0b-4c37-8a8a-fad24252fcb7"
S2_FRIDAY_CUE = "0fbf947b-f5e6-4b91-aa3c-54ebdc14f29a"
S3_WRITES_MEMORY = "45b86495-095d-42b2-9dd5-25ef4e2e682c"
S4_MIGRATIONS = "d8da5de1-9df3-4617-a3be-1d70e3aefbbb"
S5_LAG = "17a38ad7-4e63-4229-9bb5-3b1ce9427f5c"
SUBAGENT = "agent-7f3e9c21.jsonl"


@pytest.fixture
def ws(tmp_path: Path) -> DemoWorkspace:
    return materialize(tmp_path / "demo", NOW)


def frontmatter(path: Path) -> dict[str, Any] | None:
    """Plain YAML of the block between the first two ``---`` lines; None without a block.

    Raises ``yaml.YAMLError`` when the block is not valid YAML.
    """
    text = path.read_bytes().decode("utf-8").replace("\r\n", "\n")
    if not text.startswith("---\n"):
        return None
    block = text[4:].split("\n---\n", 1)[0]
    data = yaml.safe_load(block)
    assert isinstance(data, dict)
    return data


def memory_files(ws: DemoWorkspace) -> list[Path]:
    return sorted(p for p in ws.memory_dir.rglob("*.md") if p.name != "MEMORY.md")


def transcript_lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def age_of(path: Path) -> float:
    return (NOW.timestamp() - path.stat().st_mtime) / DAY


# --- layout ---------------------------------------------------------------------------------


def test_paths(ws: DemoWorkspace, tmp_path: Path) -> None:
    root = tmp_path / "demo"
    slug = slugify(str((root / "project").resolve()))
    assert ws.root == root
    assert ws.home == root / "home"
    assert ws.project == root / "project"
    assert ws.sessions_dir == root / "home" / ".agent" / "projects" / slug
    assert ws.memory_dir == ws.sessions_dir / "memory"
    assert slug.endswith("-demo-project") and "/" not in slug


def test_project_is_a_git_root(ws: DemoWorkspace) -> None:
    git = ws.project / ".git"
    assert (git / "HEAD").read_text() == "ref: refs/heads/main\n"
    assert (git / "refs").is_dir() and (git / "objects").is_dir()
    assert not (ws.project / "dot-git").exists()
    assert (ws.project / ".gitignore").is_file() and not (ws.project / "dot-gitignore").exists()


def test_instruction_files_at_every_level(ws: DemoWorkspace) -> None:
    p, h = ws.project, ws.home / ".agent"
    for rel in (
        "AGENT.md",
        "AGENT.local.md",
        ".agent/AGENT.md",
        ".agent/settings.json",
        "services/AGENT.md",
        "services/api/AGENT.md",
        "services/api/handlers.py",
        ".agent/rules/python-style.md",
        ".agent/rules/db/migrations.md",
        "docs/conventions.md",
    ):
        assert (p / rel).is_file(), rel
    assert (h / "AGENT.md").is_file()
    assert sorted(r.name for r in (h / "rules").glob("*.md")) == ["go.md", "writing.md"]
    json.loads((p / ".agent/settings.json").read_text())  # valid JSON
    agent_md = (p / "AGENT.md").read_text()
    assert "\n@docs/conventions.md\n" in agent_md
    assert "`@templates/service`" in agent_md  # a code span: not an import
    assert "ingest-team@acme.example" in agent_md  # an e-mail: not an import


def test_rules_frontmatter_shapes(ws: DemoWorkspace) -> None:
    rules = ws.project / ".agent" / "rules"
    assert frontmatter(rules / "python-style.md") is None  # unconditional
    assert frontmatter(rules / "testing.md") == {"paths": ["tests/**/*.py", "**/conftest.py"]}
    assert frontmatter(rules / "dashboard.md") == {"paths": "dashboard/src/**/*.{ts,tsx}"}
    comma_string = "services/api/**/*.py, services/worker/**/*.py"
    assert frontmatter(rules / "services.md") == {"paths": comma_string}
    assert frontmatter(rules / "db" / "migrations.md") == {"paths": ["migrations/*.sql"]}
    assert "\n\t- " in (rules / "secrets.md").read_text()  # tab-indented list
    with pytest.raises(yaml.YAMLError):
        frontmatter(rules / "secrets.md")
    assert frontmatter(ws.home / ".agent" / "rules" / "go.md") == {"paths": ["**/*.go"]}


# --- memories -------------------------------------------------------------------------------


def test_memory_count_and_types(ws: DemoWorkspace) -> None:
    mems = memory_files(ws)
    assert 25 <= len(mems) <= 35
    assert len(mems) == 30
    types: Counter[str] = Counter()
    for path in mems:
        try:
            fm = frontmatter(path)
        except yaml.YAMLError:
            continue  # the unquoted ": " trap
        if fm is not None and "type" in fm:
            types[fm["type"]] += 1
    # 5 user; 9 feedback minus metadata.type and "Feedback"; 9 project minus the broken YAML;
    # 7 reference minus the one without frontmatter.
    assert types == {"user": 5, "feedback": 7, "project": 8, "reference": 6, "Feedback": 1}


def test_memory_traps(ws: DemoWorkspace) -> None:
    m = ws.memory_dir
    nested = frontmatter(m / "feedback_terse_replies.md")
    assert nested is not None and "type" not in nested
    assert nested["metadata"] == {"type": "feedback"}
    assert frontmatter(m / "feedback_commit_messages.md")["type"] == "Feedback"  # type: ignore[index]
    with pytest.raises(yaml.YAMLError):
        frontmatter(m / "project_backfill_window.md")
    assert frontmatter(m / "reference_runbooks.md") is None
    rel = (m / "project_vendor_api_cutover.md").read_text()
    assert "next Thursday" in rel and "yesterday" in rel
    no_why = (m / "feedback_run_ruff_first.md").read_text()
    assert "**Why:**" not in no_why and "**How to apply:**" not in no_why
    assert (m / "project_ingest_v3_plan.md").stat().st_size > 4096
    cjk = m / "用户_沟通偏好.md"
    assert frontmatter(cjk) == {
        "name": "沟通偏好",
        "description": "设计讨论用中文解释；代码、注释和提交信息一律用英文",
        "type": "user",
    }
    assert sorted(p.name for p in (m / "team").iterdir()) == [
        "MEMORY.md",
        "feedback_alert_changes.md",
        "reference_oncall.md",
    ]


def test_crlf_file_really_has_crlf(ws: DemoWorkspace) -> None:
    data = (ws.memory_dir / "user_timezone.md").read_bytes()
    assert data.startswith(b"---\r\nname: Working hours and on-call\r\n")
    assert data.count(b"\n") == data.count(b"\r\n") > 5
    assert frontmatter(ws.memory_dir / "user_timezone.md")["type"] == "user"  # type: ignore[index]
    assert b"\r" not in (ws.memory_dir / "user_role.md").read_bytes()


def test_every_well_formed_memory_has_a_one_line_description(ws: DemoWorkspace) -> None:
    for path in memory_files(ws):
        if path.name in ("project_backfill_window.md", "reference_runbooks.md"):
            continue
        fm = frontmatter(path)
        assert fm is not None, path.name
        assert isinstance(fm["name"], str) and isinstance(fm["description"], str), path.name
        assert "\n" not in fm["description"], path.name


def test_dates_in_memories_are_relative_to_now(ws: DemoWorkspace) -> None:
    kafka = (ws.memory_dir / "project_kafka_migration.md").read_text()
    assert "cutover on 2026-12-14" in kafka  # NOW + 14 days
    backfill = (ws.memory_dir / "project_backfill_window.md").read_text()
    assert "backfill starts 2026-12-01: no schema" in backfill  # NOW + 1 day, colon trap kept
    assert "runs from 2026-12-01 to\n2026-12-05." in backfill
    for path in ws.memory_dir.rglob("*.md"):
        assert "{{" not in path.read_text(encoding="utf-8"), path.name


def test_index(ws: DemoWorkspace) -> None:
    index = (ws.memory_dir / "MEMORY.md").read_text()
    assert not index.startswith("---")
    entries = [line for line in index.splitlines() if line.startswith("- [")]
    assert all(len(line) < 150 for line in entries)
    targets = {t for line in entries for t in re.findall(r"\]\(([^)]+)\)", line)}
    assert {t for t in targets if not (ws.memory_dir / t).exists()} == {"project_loadtest_q3.md"}
    top_level = {p.name for p in ws.memory_dir.glob("*.md") if p.name != "MEMORY.md"}
    assert top_level - targets == {
        "user_tooling.md",
        "feedback_run_ruff_first.md",
        "reference_consumer_lag_debugging.md",
    }


# --- ages -----------------------------------------------------------------------------------


def test_mtimes_follow_ages(ws: DemoWorkspace) -> None:
    m = ws.memory_dir
    assert (m / "feedback_run_ruff_first.md").stat().st_mtime == NOW.timestamp()  # age 0
    assert (m / "user_tooling.md").stat().st_mtime == (NOW - timedelta(days=2)).timestamp()
    assert (m / "user_role.md").stat().st_mtime == (NOW - timedelta(days=120)).timestamp()
    oldest = (NOW - timedelta(days=200)).timestamp()
    assert (m / "project_retention_policy.md").stat().st_mtime == oldest
    friday = datetime(2026, 11, 20, 12, tzinfo=UTC)  # age 10: "yesterday" = 11-19
    assert (m / "project_vendor_api_cutover.md").stat().st_mtime == friday.timestamp()
    s3 = ws.sessions_dir / f"{S3_WRITES_MEMORY}.jsonl"
    assert s3.stat().st_mtime == datetime(2026, 11, 29, 9, 36, tzinfo=UTC).timestamp()  # 1.1 days
    assert (ws.project / ".git" / "HEAD").stat().st_mtime == NOW.timestamp()  # not listed
    ages = sorted(age_of(p) for p in memory_files(ws))
    assert ages[0] == 0 and ages[-1] == 200
    assert sum(1 for a in ages if a < 2) == 2  # today and yesterday
    assert sum(1 for a in ages if a >= 100) == 6


def test_ages_json_lists_only_real_template_files() -> None:
    template = files("memtui.demo") / "workspace"
    ages = load_ages()
    for rel in ages:
        assert template.joinpath(*rel.split("/")).is_file(), rel
    memory_keys = {k for k in ages if k.startswith("memory/")}
    assert len(memory_keys) == 32  # 30 memories + MEMORY.md + team/MEMORY.md
    assert sum(1 for k in ages if k.startswith("sessions/")) == 6


def test_naive_now_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError):
        materialize(tmp_path / "demo", datetime(2026, 11, 30, 12))


# --- transcripts ----------------------------------------------------------------------------


def test_transcripts_are_valid_and_filled_in(ws: DemoWorkspace) -> None:
    names = sorted(p.name for p in ws.sessions_dir.glob("*.jsonl"))
    sessions = (S1_TODAY, S2_FRIDAY_CUE, S3_WRITES_MEMORY, S4_MIGRATIONS, S5_LAG)
    assert names == sorted([f"{s}.jsonl" for s in sessions] + [SUBAGENT])
    cwd = str(ws.project.resolve())
    for name in names:
        path = ws.sessions_dir / name
        raw = path.read_text(encoding="utf-8")
        assert "{{" not in raw, name
        lines = transcript_lines(path)
        assert lines, name
        prev = None
        for obj in lines:
            assert obj["type"] in ("user", "assistant")
            assert obj["message"]["role"] == obj["type"]
            assert obj["cwd"] == cwd
            assert obj["parentUuid"] == prev
            prev = obj["uuid"]
        # the last line is written when the file was last modified
        last = datetime.fromisoformat(lines[-1]["timestamp"].replace("Z", "+00:00"))
        assert last.timestamp() == pytest.approx(path.stat().st_mtime, abs=0.001), name
        if not name.startswith("agent-"):
            assert {obj["sessionId"] for obj in lines} == {name.removesuffix(".jsonl")}


def test_transcript_timestamps_hand_checked(ws: DemoWorkspace) -> None:
    lines = transcript_lines(ws.sessions_dir / f"{S3_WRITES_MEMORY}.jsonl")
    assert lines[0]["timestamp"] == "2026-11-29T09:02:00.000Z"  # 34 minutes before the end
    assert lines[-1]["timestamp"] == "2026-11-29T09:36:00.000Z"


def test_subagent_transcript(ws: DemoWorkspace) -> None:
    lines = transcript_lines(ws.sessions_dir / SUBAGENT)
    assert all(obj["isSidechain"] is True and obj["sessionId"] == S1_TODAY for obj in lines)


def _blocks(lines: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for obj in lines:
        content = obj["message"]["content"]
        if isinstance(content, list):
            out.extend(b for b in content if b["type"] == kind)
    return out


def test_assistant_writes_a_memory_in_one_session(ws: DemoWorkspace) -> None:
    lines = transcript_lines(ws.sessions_dir / f"{S3_WRITES_MEMORY}.jsonl")
    writes = [b for b in _blocks(lines, "tool_use") if b["name"] == "Write"]
    memory_file = ws.memory_dir.resolve() / "feedback_logging_fields.md"
    assert [w["input"]["file_path"] for w in writes] == [str(memory_file)]
    assert writes[0]["input"]["content"] == memory_file.read_text(encoding="utf-8")
    edits = [b["input"]["file_path"] for b in _blocks(lines, "tool_use") if b["name"] == "Edit"]
    assert str(ws.memory_dir.resolve() / "MEMORY.md") in edits


def test_tool_use_variety_and_one_error(ws: DemoWorkspace) -> None:
    names: set[str] = set()
    errors = 0
    for path in ws.sessions_dir.glob("*.jsonl"):
        lines = transcript_lines(path)
        uses = {b["id"]: b for b in _blocks(lines, "tool_use")}
        names |= {b["name"] for b in uses.values()}
        for result in _blocks(lines, "tool_result"):
            assert result["tool_use_id"] in uses
            errors += result["is_error"] is True
    assert {"Read", "Grep", "Bash", "Edit", "Write", "Task"} <= names
    assert errors == 1


def test_friday_cue_without_a_memory_write(ws: DemoWorkspace) -> None:
    lines = transcript_lines(ws.sessions_dir / f"{S2_FRIDAY_CUE}.jsonl")
    first = lines[0]["message"]["content"]
    assert isinstance(first, str) and "remember that we never deploy on Fridays" in first
    assert not [b for b in _blocks(lines, "tool_use") if b["name"] in ("Write", "Edit")]


# --- errors and determinism ------------------------------------------------------------------


def test_materialize_twice_raises(tmp_path: Path) -> None:
    dest = tmp_path / "demo"
    materialize(dest, NOW)
    with pytest.raises(FileExistsError):
        materialize(dest, NOW)


def test_existing_project_dir_raises(tmp_path: Path) -> None:
    (tmp_path / "demo" / "project").mkdir(parents=True)
    with pytest.raises(FileExistsError):
        materialize(tmp_path / "demo", NOW)


def test_deterministic(tmp_path: Path) -> None:
    a = materialize(tmp_path / "a", NOW)
    b = materialize(tmp_path / "b", NOW)
    for path in a.memory_dir.rglob("*"):
        if path.is_file():
            twin = b.memory_dir / path.relative_to(a.memory_dir)
            assert twin.read_bytes() == path.read_bytes()
            assert twin.stat().st_mtime_ns == path.stat().st_mtime_ns


def test_no_app_and_keep_print_a_command_that_reopens_the_demo_as_it_opened(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The printed command carries every variable the demo sets (HOME and the empty policy
    dir MEMTUI_MANAGED_DIR), so the policy layer of the real machine stays out."""
    import os
    import shutil

    from click.testing import CliRunner

    import memtui.cli

    out = CliRunner().invoke(memtui.cli.main, ["demo", "--no-app"])
    assert out.exit_code == 0, out.output
    first = out.output.splitlines()[0]
    dest = Path(first.removeprefix("demo workspace: ").split(" (it stays on disk")[0])
    assert first.endswith(f"(it stays on disk: rm -r {dest} when done)")
    commands = [line.strip() for line in out.output.splitlines()[2:]]
    shutil.rmtree(dest, ignore_errors=True)
    assert commands and all(
        c.startswith(f"HOME={dest / 'home'} MEMTUI_MANAGED_DIR={dest / 'managed'} memtui --flavor agent --project ") for c in commands
    )
    # the app run replaced by a stand-in; the demo's own environment and cwd changes kept local
    opened: list[object] = []
    monkeypatch.setattr(memtui.cli, "open_app", lambda *args: opened.append(args))
    monkeypatch.setattr("memtui.commands.demo.app_cannot_open", lambda: None)  # as on a terminal
    monkeypatch.setattr(os, "environ", os.environ.copy())
    monkeypatch.chdir(tmp_path)
    kept = CliRunner().invoke(memtui.cli.main, ["demo", "--keep"])
    assert kept.exit_code == 0 and len(opened) == 1, kept.output
    lines = kept.output.splitlines()
    dest = Path(lines[0].removeprefix("demo workspace kept at ").removesuffix("; reopen it with:"))
    shutil.rmtree(dest, ignore_errors=True)
    assert lines[0] == f"demo workspace kept at {dest}; reopen it with:"
    assert lines[1].strip().startswith(f"HOME={dest / 'home'} MEMTUI_MANAGED_DIR={dest / 'managed'} memtui --flavor agent --project ")
