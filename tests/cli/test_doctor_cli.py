"""`memtui doctor [--json] [--fix CODE...] [--yes]` — exit 1 while an error-severity
finding remains, else 0; `--fix` without `--yes` prints diffs and writes nothing; `--yes` applies
through the journal, so `memtui undo` reverts it."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner, Result
from support.doctor import clean_dir, write

from memtui.cli import main

NOW = "2026-03-10T12:00:00Z"


def run(memory_dir: Path, *args: str) -> Result:
    return CliRunner().invoke(main, ["--memory-dir", str(memory_dir), *args], env={"MEMTUI_NOW": NOW})


def snapshot(memory_dir: Path) -> dict[str, bytes]:
    return {p.relative_to(memory_dir).as_posix(): p.read_bytes() for p in sorted(memory_dir.rglob("*")) if p.is_file()}


def test_clean_dir_exits_0(tmp_path: Path) -> None:
    memory_dir = clean_dir(tmp_path)
    result = run(memory_dir, "doctor")
    assert result.exit_code == 0, result.output
    assert "no findings" in result.output
    data = json.loads(run(memory_dir, "doctor", "--json").stdout)
    assert data["findings"] == [] and data["counts"] == {"error": 0, "warning": 0, "info": 0}


def test_warnings_exit_0_errors_exit_1(tmp_path: Path) -> None:
    memory_dir = clean_dir(tmp_path)
    write(memory_dir, "user_x.md", "---\nname: X\ndescription: d\ntype: User\n---\n\nx\n")
    write(memory_dir, "MEMORY.md", "- [S](feedback_squash.md) — s\n- [X](user_x.md) — x\n")
    assert run(memory_dir, "doctor").exit_code == 0
    write(memory_dir, "user_y.md", "\ufeff---\nname: Y\ndescription: d\ntype: user\n---\n\ny\n")
    result = run(memory_dir, "doctor")
    assert result.exit_code == 1
    # grouped by file: the file name on its own line, its findings indented below
    lines = result.output.splitlines()
    at = lines.index("user_y.md")
    group = lines[at + 1 : lines.index("", at)]
    assert len(group) == 1 and all(line.startswith("  ") for line in group)  # its notes are counted at the end
    [bom] = [line for line in group if "frontmatter-after-bom" in line]
    assert bom.split()[:2] == ["1", "error"] and bom.endswith("[⚒ --fix remove-bom]")
    data = json.loads(run(memory_dir, "doctor", "--json").stdout)
    assert {"code", "severity", "path", "line", "message", "fix"} <= set(data["findings"][0])
    assert data["counts"]["error"] == 1


def test_fix_without_yes_writes_nothing(tmp_path: Path) -> None:
    memory_dir = clean_dir(tmp_path)
    write(memory_dir, "user_y.md", "\ufeff---\nname: Y\ndescription: d\ntype: user\n---\n\ny\n")
    before = snapshot(memory_dir)
    result = run(memory_dir, "doctor", "--fix", "frontmatter-after-bom", "--fix", "not-indexed")
    assert snapshot(memory_dir) == before
    assert result.exit_code == 1  # the error is still there
    # the BOM the fix removes is shown as an escape, not as an invisible character
    assert "-\\ufeff---" in result.output and "+---" in result.output
    # one plan: the new index entry already reads the frontmatter the BOM fix uncovers
    assert "+- [Y](user_y.md) — d" in result.output
    assert "nothing applied" in result.output


def test_fix_yes_applies_then_undo_reverts(tmp_path: Path) -> None:
    memory_dir = clean_dir(tmp_path)
    write(memory_dir, "user_y.md", "\ufeff---\nname: Y\ndescription: d\ntype: user\n---\n\ny\n")
    before = snapshot(memory_dir)
    result = run(memory_dir, "doctor", "--fix", "remove-bom,not-indexed", "--yes")
    assert result.exit_code == 0, result.output
    assert (memory_dir / "user_y.md").read_bytes() == b"---\nname: Y\ndescription: d\ntype: user\n---\n\ny\n"
    assert (memory_dir / "MEMORY.md").read_text() == "# Memory index\n\n- [Squash merges](feedback_squash.md) — one commit per PR\n- [Y](user_y.md) — d\n"
    assert f"memtui --memory-dir {memory_dir} undo" in result.output  # the same dir the fix went to
    # one plan for every selected fix: one undo reverts it
    assert run(memory_dir, "undo").exit_code == 0
    assert snapshot(memory_dir) == before


def test_fix_json_and_unknown_code(tmp_path: Path) -> None:
    memory_dir = clean_dir(tmp_path)
    write(memory_dir, "user_x.md", "---\nname: X\ndescription: d\ntype: User\n---\n\nx\n")
    data = json.loads(run(memory_dir, "doctor", "--json", "--fix", "type-case", "--fix", "missing-why").stdout)
    assert data["applied"] is False and "+type: user" in data["plan"]["diff"]
    assert data["skipped"] == [{"code": "missing-why", "reason": "no safe fix for this code"}]
    bad = run(memory_dir, "doctor", "--fix", "no-such-code")
    assert bad.exit_code == 2 and "no-such-code" in bad.output
    assert run(memory_dir, "doctor", "--yes").exit_code == 2


def test_missing_memory_dir(tmp_path: Path) -> None:
    result = run(tmp_path / "nope", "doctor")
    assert result.exit_code == 1 and "no memory dir" in result.output


def test_the_report_reads_worst_first_with_notes_counted(tmp_path: Path) -> None:
    memory_dir = clean_dir(tmp_path)
    write(memory_dir, "user_y.md", "\ufeff---\nname: Y\ndescription: d\ntype: user\n---\n\ny\n")  # an error
    for n in range(3):  # three memories without a labelled reason: notes, not warnings
        write(memory_dir, f"feedback_{n}.md", f"---\nname: F{n}\ndescription: d\ntype: feedback\n---\n\nRule {n}.\n")
    lines = run(memory_dir, "doctor").output.splitlines()
    # the summary right under the dir line, before any file
    assert lines[1].startswith("1 error, ") and "notes" in lines[1]
    assert "user_y.md" in lines and "feedback_0.md" not in lines  # notes are not listed file by file
    [count] = [line for line in lines if "missing-why" in line]
    assert count.split()[0] == "3" and "3 files" in count
    assert len(lines) == len(set(line for line in lines if line.strip())) + lines.count("")  # no line twice
    verbose = run(memory_dir, "doctor", "--verbose").output.splitlines()
    assert "feedback_0.md" in verbose and any("missing-why" in line and "info" in line for line in verbose)


def test_fix_all_applies_only_the_certain_fixes(tmp_path: Path) -> None:
    memory_dir = clean_dir(tmp_path)
    write(memory_dir, "feedback_case.md", "---\nname: C\ndescription: d\ntype: Feedback\n---\n\nRule.\n\n**Why:** w\n\n**How to apply:** h\n")
    write(memory_dir, "MEMORY.md", "- [Squash merges](feedback_squash.md) — one commit per PR\n- [Gone](project_gone.md) — a dead link\n")
    preview = json.loads(run(memory_dir, "doctor", "--fix", "all", "--json").stdout)
    assert [f["path"] for f in preview["plan"]["files"]] == ["feedback_case.md"]  # not the index's dead link
    offered = json.loads(run(memory_dir, "doctor", "--fix", "index-dangling", "--json").stdout)
    assert [f["path"] for f in offered["plan"]["files"]] == ["MEMORY.md"]


def test_a_committed_memory_folder_the_agent_never_reads(tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / ".claude" / "memory").mkdir(parents=True)
    (project / ".claude" / "memory" / "project_a.md").write_text("---\nname: a\ndescription: d\ntype: project\n---\n\na\n")
    (project / "CLAUDE.md").write_text("# rules\n")
    home = tmp_path / "home"
    home.mkdir()
    result = CliRunner().invoke(main, ["--flavor", "claude", "--project", str(project), "doctor", "--json"], env={"MEMTUI_NOW": NOW, "HOME": str(home)})
    data = json.loads(result.stdout)
    [f] = [f for f in data["findings"] if f["code"] == "unread-memory-folder"]
    assert (f["severity"], f["path"], f["data"]["files"]) == ("warning", None, 1)
    assert f["data"]["folder"] == str(project / ".claude" / "memory")
    # a folder of notes (a README only) is no memory folder
    notes = tmp_path / "notes-project"
    (notes / ".claude" / "memory").mkdir(parents=True)
    (notes / ".claude" / "memory" / "README.md").write_text("# Export target (empty)\n")
    result = CliRunner().invoke(main, ["--flavor", "claude", "--project", str(notes), "doctor", "--json"], env={"MEMTUI_NOW": NOW, "HOME": str(home)})
    assert not [f for f in json.loads(result.stdout)["findings"] if f["code"] == "unread-memory-folder"]
    # pointed at with --memory-dir, the same folder is the memory dir: nothing to say
    result = CliRunner().invoke(main, ["--flavor", "claude", "--project", str(project), "--memory-dir", str(project / ".claude" / "memory"), "doctor", "--json"], env={"MEMTUI_NOW": NOW, "HOME": str(home)})
    assert not [f for f in json.loads(result.stdout)["findings"] if f["code"] == "unread-memory-folder"]
