"""The CLI over the core — `where`, `ls [--type T]`, `index`, each with `--json`;
common options `--project`, `--memory-dir`, `--flavor` accepted before and after the
subcommand; errors are one line on stderr with a non-zero exit, never a traceback."""

from __future__ import annotations

import json
import os
import shutil
from datetime import UTC, datetime
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from memtui.cli import main

NOW = "2026-03-10T12:00:00Z"
NOW_TS = datetime(2026, 3, 10, 12, tzinfo=UTC).timestamp()
DAY = 86_400
WARNING_221 = (
    "> WARNING: MEMORY.md is 221 lines (limit: 200). Only part of it was loaded. "
    "Keep index entries to one line under ~200 chars; move detail into topic files."
)
WHERE_KEYS = {"flavor", "project_root", "git_root", "canonical_git_root", "slug", "memory_dir", "memory_dir_source",
              "sessions_dir", "state_dir", "auto_memory_enabled", "diagnostics"}
LS_KEYS = {"path", "name", "description", "type", "declared_type", "team", "mtime", "age_days", "age_label",
           "stale_caveat", "in_index", "diagnostics"}
INDEX_KEYS = {"path", "exists", "lines", "units", "truncated_by", "warning", "loaded_text", "dropped_entries",
              "dangling", "unindexed"}


def ascii_slug(path: Path) -> str:
    text = str(path)
    assert text.isascii() and len(text) <= 200
    return "".join(c if c.isalnum() else "-" for c in text)


def run(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


def ok_json(result: Result) -> object:
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def assert_one_line_error(result: Result) -> None:
    assert result.exit_code != 0
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert "Traceback" not in result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert result.stdout == ""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    proj = Path(os.path.realpath(tmp_path)) / "proj"
    (proj / ".git").mkdir(parents=True)
    (proj / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    return proj


def memory(name: str, description: str, type_line: str, body: str = "\nBody.\n") -> str:
    return f"---\nname: {name}\ndescription: {description}\n{type_line}\n---\n{body}"


WHY_HOW = "\nRule.\n\n**Why:** x.\n\n**How to apply:** y.\n"


@pytest.fixture
def memdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("MEMTUI_NOW", NOW)
    d = tmp_path / "mem"
    files = {
        "user_role.md": (memory("Role", "Backend engineer", "type: user"), 60),
        "feedback_squash.md": (memory("Squash", "PRs are squashed", "type: feedback", WHY_HOW), DAY + 60),
        "project_freeze.md": (memory("Freeze", "Freeze from 2026-03-05", "type: project", WHY_HOW), 47 * DAY),
        "feedback_case.md": (memory("Db", "Use the real db", "type: Feedback", WHY_HOW), 3 * DAY),
        "team/reference_tracker.md": (memory("Tracker", "Bugs go to INGEST", "type: reference"), 2 * DAY),
    }
    for rel, (text, ago) in files.items():
        p = d / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
        os.utime(p, (NOW_TS - ago, NOW_TS - ago))
    (d / "MEMORY.md").write_text("- [Role](user_role.md) — who\n- [Gone](gone.md) — missing\n")
    return d


# --- where ----------------------------------------------------------------------------------------


def test_where_json(isolated_env: Path, project: Path) -> None:
    data = ok_json(run("where", "--json", "--project", str(project)))
    assert isinstance(data, dict)
    assert WHERE_KEYS <= set(data)
    slug = ascii_slug(project)
    assert data["flavor"] == "agent"
    assert data["project_root"] == str(project)
    assert data["git_root"] == str(project)
    assert data["canonical_git_root"] == str(project)
    assert data["slug"] == slug
    assert data["memory_dir"] == str(isolated_env / ".agent" / "projects" / slug / "memory")
    assert data["memory_dir_source"] == "default"
    assert data["sessions_dir"] == str(isolated_env / ".agent" / "projects" / slug)
    assert data["state_dir"] == os.environ["MEMTUI_STATE_DIR"]
    assert data["auto_memory_enabled"] is True
    assert data["diagnostics"] == []


def test_where_options_before_and_after_the_subcommand_agree(project: Path) -> None:
    after = run("where", "--json", "--project", str(project), "--flavor", "claude")
    before = run("--project", str(project), "--flavor", "claude", "where", "--json")
    assert ok_json(after) == ok_json(before)
    assert ok_json(after)["flavor"] == "claude"  # type: ignore[index]


def test_where_defaults_to_cwd(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (project / "sub").mkdir()
    monkeypatch.chdir(project / "sub")
    data = ok_json(run("where", "--json"))
    assert data["project_root"] == str(project / "sub")  # type: ignore[index]
    assert data["git_root"] == str(project)  # type: ignore[index]


def test_where_claude_flavor(isolated_env: Path, project: Path) -> None:
    data = ok_json(run("--flavor", "claude", "where", "--json", "--project", str(project)))
    assert data["memory_dir"] == str(isolated_env / ".claude" / "projects" / ascii_slug(project) / "memory")  # type: ignore[index]


def test_where_memory_dir_option(project: Path, tmp_path: Path) -> None:
    data = ok_json(run("where", "--json", "--project", str(project), "--memory-dir", str(tmp_path / "copied")))
    assert data["memory_dir"] == str(tmp_path / "copied")  # type: ignore[index]
    assert data["memory_dir_source"] == "option"  # type: ignore[index]


def test_where_env_override_and_invalid_override_diagnostic(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENT_MEMORY_DIR", "/srv/mem")
    data = ok_json(run("where", "--json", "--project", str(project)))
    assert (data["memory_dir"], data["memory_dir_source"]) == ("/srv/mem", "env")  # type: ignore[index]
    monkeypatch.setenv("AGENT_MEMORY_DIR", "~/mem")
    data = ok_json(run("where", "--json", "--project", str(project)))
    assert data["memory_dir_source"] == "default"  # type: ignore[index]
    (diag,) = data["diagnostics"]  # type: ignore[index]
    assert diag["code"] == "memory-dir-override-invalid"
    assert diag["severity"] in ("error", "warning", "info")
    assert diag["message"]


def test_where_auto_memory_disabled(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENT_DISABLE_AUTO_MEMORY", "1")
    assert ok_json(run("where", "--json", "--project", str(project)))["auto_memory_enabled"] is False  # type: ignore[index]


def test_where_without_json_prints_a_table(project: Path) -> None:
    result = run("where", "--project", str(project))
    assert result.exit_code == 0
    assert "memory dir" in result.stdout
    assert "sessions dir" in result.stdout
    assert not result.stdout.lstrip().startswith("{")


# --- ls -------------------------------------------------------------------------------------------


def test_ls_json(memdir: Path) -> None:
    data = ok_json(run("ls", "--json", "--memory-dir", str(memdir)))
    assert isinstance(data, list)
    assert [m["path"] for m in data] == [
        "user_role.md", "feedback_squash.md", "team/reference_tracker.md", "feedback_case.md", "project_freeze.md",
    ]
    for m in data:
        assert LS_KEYS <= set(m)
        for d in m["diagnostics"]:
            assert {"code", "severity", "message"} <= set(d)
            assert d["severity"] in ("error", "warning", "info")
    by = {m["path"]: m for m in data}
    role = by["user_role.md"]
    assert (role["name"], role["description"], role["type"], role["declared_type"]) == ("Role", "Backend engineer", "user", "user")
    assert (role["team"], role["in_index"], role["age_days"], role["age_label"], role["stale_caveat"]) == (False, True, 0, "today", None)
    assert role["diagnostics"] == []
    mtime = datetime.fromisoformat(role["mtime"].replace("Z", "+00:00"))
    assert mtime == datetime(2026, 3, 10, 11, 59, tzinfo=UTC)
    assert by["feedback_squash.md"]["age_label"] == "yesterday"
    old = by["project_freeze.md"]
    assert (old["age_days"], old["age_label"]) == (47, "47 days ago")
    assert old["stale_caveat"].startswith("This memory is 47 days old.")
    case = by["feedback_case.md"]
    assert (case["type"], case["declared_type"]) == (None, "Feedback")
    assert "type-case" in {d["code"] for d in case["diagnostics"]}
    team = by["team/reference_tracker.md"]
    assert (team["team"], team["type"], team["in_index"]) == (True, "reference", False)


def test_ls_type_filter(memdir: Path) -> None:
    data = ok_json(run("ls", "--json", "--type", "feedback", "--memory-dir", str(memdir)))
    assert [m["path"] for m in data] == ["feedback_squash.md"]  # type: ignore[union-attr]
    data = ok_json(run("ls", "--json", "--type", "project", "--memory-dir", str(memdir)))
    assert [m["path"] for m in data] == ["project_freeze.md"]  # type: ignore[union-attr]


def test_ls_options_before_and_after_the_subcommand_agree(memdir: Path) -> None:
    after = run("ls", "--json", "--memory-dir", str(memdir))
    before = run("--memory-dir", str(memdir), "ls", "--json")
    assert after.exit_code == before.exit_code == 0
    assert after.stdout == before.stdout


def test_ls_resolves_the_memory_dir_from_the_project(isolated_env: Path, project: Path, memdir: Path) -> None:
    target = isolated_env / ".agent" / "projects" / ascii_slug(project) / "memory"
    target.parent.mkdir(parents=True)
    shutil.copytree(memdir, target)
    data = ok_json(run("--project", str(project), "ls", "--json"))
    assert len(data) == 5  # type: ignore[arg-type]


def test_ls_without_json_prints_a_table(memdir: Path) -> None:
    result = run("ls", "--memory-dir", str(memdir))
    assert result.exit_code == 0
    assert "user_role.md" in result.stdout


# --- index ----------------------------------------------------------------------------------------


def test_index_json_221_lines(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMTUI_NOW", NOW)
    d = tmp_path / "mem"
    d.mkdir()
    (d / "MEMORY.md").write_text("".join(f"- [Entry {k}](e{k}.md) — hook\n" for k in range(1, 222)))
    (d / "e1.md").write_text(memory("E1", "d", "type: user"))
    (d / "stray.md").write_text(memory("S", "d", "type: user"))
    data = ok_json(run("index", "--json", "--memory-dir", str(d)))
    assert isinstance(data, dict)
    assert INDEX_KEYS <= set(data)
    assert data["path"] == str(d / "MEMORY.md")
    assert data["exists"] is True
    assert data["lines"] == 221
    assert data["truncated_by"] == ["lines"]
    assert data["warning"] == WARNING_221
    assert data["loaded_text"].endswith("\n\n" + WARNING_221)
    assert data["loaded_text"].count("\n- [Entry") == 199  # 200 entries kept
    assert len(data["dropped_entries"]) == 21
    assert data["dropped_entries"][0] == {"line": 201, "title": "Entry 201", "target": "e201.md"}
    assert data["dangling"] == [f"e{k}.md" for k in range(2, 222)]
    assert data["unindexed"] == ["stray.md"]
    # units: 221 lines "- [Entry k](ek.md) — hook" (the dash is one unit), newlines between
    assert data["units"] == sum(len(f"- [Entry {k}](e{k}.md) — hook") for k in range(1, 222)) + 220


def test_index_json_options_before_subcommand(memdir: Path) -> None:
    after = ok_json(run("index", "--json", "--memory-dir", str(memdir)))
    before = ok_json(run("--memory-dir", str(memdir), "index", "--json"))
    assert after == before
    assert after["dangling"] == ["gone.md"]  # type: ignore[index]
    assert after["unindexed"] == ["feedback_squash.md", "feedback_case.md", "project_freeze.md"]  # type: ignore[index]
    assert after["warning"] is None and after["truncated_by"] == []  # type: ignore[index]


def test_index_json_missing_index(tmp_path: Path) -> None:
    (tmp_path / "mem").mkdir()
    data = ok_json(run("index", "--json", "--memory-dir", str(tmp_path / "mem")))
    assert data["exists"] is False  # type: ignore[index]


# --- errors ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("command", [["ls"], ["ls", "--json"], ["index", "--json"]])
def test_missing_memory_dir_is_one_line_on_stderr(tmp_path: Path, command: list[str]) -> None:
    assert_one_line_error(run(*command, "--memory-dir", str(tmp_path / "absent")))


def test_missing_resolved_memory_dir_is_one_line_on_stderr(project: Path) -> None:
    # not created yet by the agent: an empty list, and one line saying why
    result = run("--project", str(project), "ls", "--json")
    assert result.exit_code == 0 and json.loads(result.stdout) == []
    assert len(result.stderr.strip().splitlines()) == 1 and "no memory dir yet at" in result.stderr


def test_project_that_is_not_a_directory(tmp_path: Path) -> None:
    assert_one_line_error(run("--project", str(tmp_path / "nope"), "where", "--json"))
    assert_one_line_error(run("where", "--json", "--project", str(tmp_path / "nope")))


def test_invalid_memtui_now_is_one_line_on_stderr(memdir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMTUI_NOW", "last tuesday")
    assert_one_line_error(run("ls", "--json", "--memory-dir", str(memdir)))


# --- the shared traps fixture (skips when ../shared is absent) ------------------------------------

SHARED_TRAPS = Path(__file__).resolve().parents[3] / "shared" / "fixtures" / "traps" / "memory"


@pytest.mark.skipif(not SHARED_TRAPS.is_dir(), reason="../shared/fixtures is not present")
def test_ls_json_on_the_traps_fixture(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    d = tmp_path / "memory"
    shutil.copytree(SHARED_TRAPS, d)
    # fixtures/README: mtime Monday 2026-03-02 → "Thursday" = 2026-03-05, "tomorrow" = 2026-03-03
    monday = datetime(2026, 3, 2, 12, tzinfo=UTC).timestamp()
    for p in d.rglob("*.md"):
        os.utime(p, (monday, monday))
    monkeypatch.setenv("MEMTUI_NOW", "2026-03-10T12:00:00Z")
    data = ok_json(run("ls", "--json", "--memory-dir", str(d)))
    assert isinstance(data, list)
    by = {m["path"]: m for m in data}
    assert set(by) == {
        "feedback_nested_type.md", "project_colon_yaml.md", "user_crlf.md", "reference_no_frontmatter.md",
        "feedback_Type_case.md", "project_relative_dates.md", "feedback_missing_why.md",
        "team/reference_tracker.md", "笔记_用户偏好.md",
    }

    def codes(path: str) -> set[str]:
        return {d["code"] for d in by[path]["diagnostics"]}

    nested = by["feedback_nested_type.md"]
    assert (nested["type"], nested["declared_type"]) == (None, "feedback")
    (fix,) = [d for d in nested["diagnostics"] if d["code"] == "type-nested"]
    assert "top-level" in fix["message"] or "lift" in fix["message"]

    colon = by["project_colon_yaml.md"]
    assert colon["type"] == "project"
    assert colon["description"] == "Freeze starts on 2026-03-05: only fixes merge after that"
    (repaired,) = [d for d in colon["diagnostics"] if d["code"] == "frontmatter-repaired"]
    assert "repaired" in repaired["message"]

    crlf = by["user_crlf.md"]
    assert (crlf["type"], crlf["name"]) == ("user", "Role")
    assert codes("user_crlf.md") <= {"not-indexed"}

    nofm = by["reference_no_frontmatter.md"]
    assert (nofm["name"], nofm["description"], nofm["type"]) == (None, None, None)
    assert "no-frontmatter" in codes("reference_no_frontmatter.md")

    case = by["feedback_Type_case.md"]
    assert (case["type"], case["declared_type"]) == (None, "Feedback")
    (cfix,) = [d for d in case["diagnostics"] if d["code"] == "type-case"]
    assert "`feedback`" in cfix["message"]

    dates = [d["message"] for d in by["project_relative_dates.md"]["diagnostics"] if d["code"] == "relative-date"]
    assert len(dates) == 1  # "on Thursday" may be every Thursday: not reported
    assert any("tomorrow" in m and "2026-03-03" in m for m in dates)

    assert {"missing-why", "missing-how-to-apply"} <= codes("feedback_missing_why.md")

    team = by["team/reference_tracker.md"]
    assert (team["team"], team["type"]) == (True, "reference")
    assert not any(m["team"] for p, m in by.items() if p != "team/reference_tracker.md")

    cjk = by["笔记_用户偏好.md"]
    assert cjk["type"] == "user"

    assert {p for p, m in by.items() if m["in_index"]} == {
        "feedback_nested_type.md", "feedback_missing_why.md", "project_colon_yaml.md",
    }


@pytest.mark.parametrize("as_json", [True, False], ids=["json", "text"])
def test_unreadable_index_is_one_line_on_stderr(tmp_path: Path, as_json: bool) -> None:
    d = tmp_path / "mem"
    (d / "MEMORY.md").mkdir(parents=True)  # unreadable as a file, even for root
    args = ["index", "--memory-dir", str(d)] + (["--json"] if as_json else [])
    assert_one_line_error(run(*args))


def test_memory_dir_that_is_a_file_is_one_line_on_stderr(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    assert_one_line_error(run("ls", "--json", "--memory-dir", str(tmp_path / "file")))
