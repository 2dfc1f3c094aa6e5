"""``memtui cascade`` and ``memtui imports approve|decline`` through click's runner."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from support.cascade import write
from click.testing import CliRunner

from memtui.cli import main

FIXTURE = Path(__file__).resolve().parents[2] / ".." / "shared" / "fixtures" / "traps" / "project"


def test_cascade_json_on_the_trap_fixture(tmp_path: Path) -> None:
    if not FIXTURE.is_dir():
        pytest.skip("shared fixture tree not present")
    proj = tmp_path / "project"
    shutil.copytree(FIXTURE, proj)
    result = CliRunner().invoke(main, ["cascade", "--json", "--cwd", str(proj), "--read", "src/requests/create_user.py"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    rules = proj / ".agent/rules"
    by_path = {f["path"]: f for f in data["files"]}
    # the read adds the two api rules (list form and comma-string form), nothing else
    assert data["reads"] == [
        {
            "target": str(proj / "src/requests/create_user.py"),
            "tool": "Read",
            "added": [str(rules / "api-string.md"), str(rules / "api.md")],
            "added_files": data["reads"][0]["added_files"],
            "skipped": [],
            "diagnostics": [],
        }
    ]
    assert [f["patterns"] for f in data["reads"][0]["added_files"]] == [["src/controllers", "src/requests"]] * 2
    # tab / BOM / empty-paths rules load at startup, unconditionally, each with a diagnostic
    for name, code in (("tabbed.md", "frontmatter-parse-error"), ("bom.md", "frontmatter-after-bom"), ("empty-paths.md", "paths-empty")):
        f = by_path[str(rules / name)]
        assert (f["loaded"], f["conditional"]) == (True, False)
        assert {"code": code, "path": str(rules / name)}.items() <= next(d for d in data["diagnostics"] if d["code"] == code).items()
    for name in ("api.md", "api-string.md", "frontend.md", "sub/db.md"):
        assert (by_path[str(rules / name)]["loaded"], by_path[str(rules / name)]["conditional"]) == (False, True)
    # no import from code, code spans or the e-mail: only the two punctuated attempts, which fail with hints
    imports = [f for f in data["files"] if f["kind"] == "import"]
    assert [(f["path"], f["status"]) for f in imports] == [
        (str(proj / "docs/style.md:"), "missing"),
        (str(proj / "docs/testing.md,"), "missing"),
    ]
    hints = [d for d in data["diagnostics"] if d["code"] == "import-trailing-punctuation"]
    assert [(d["line"], "did you mean `docs/style.md`?" in d["message"]) for d in hints][0] == (3, True)
    assert [(d["line"], "did you mean `docs/testing.md`?" in d["message"]) for d in hints][1] == (4, True)
    assert [Path(f["path"]).name for f in data["files"] if f["loaded"]] == [
        "AGENT.md", "bom.md", "empty-paths.md", "tabbed.md", "AGENT.local.md",
    ]
    assert data["rendered"].startswith("Codebase and user instructions are shown below.")
    # a second read of a lib file adds nothing; a web read adds frontend.md
    more = CliRunner().invoke(main, ["cascade", "--json", "--cwd", str(proj), "--read", "lib/util.py", "--read", "web/app/page.tsx"])
    assert [r["added"] for r in json.loads(more.output)["reads"]] == [[], [str(rules / "frontend.md")]]


def test_imports_approve_then_cascade_loads_the_external_import(tmp_path: Path) -> None:
    w = tmp_path / "w"
    write(w, "AGENT.md", "@./shared.md\n")
    write(w, "shared.md", "shared")
    (w / "sub").mkdir()
    runner = CliRunner()
    before = json.loads(runner.invoke(main, ["cascade", "--json", "--cwd", str(w / "sub")]).output)
    assert [p["path"] for p in before["pending_external_imports"]] == [str(w / "shared.md")]
    approved = runner.invoke(main, ["imports", "approve", "--cwd", str(w / "sub")])
    assert approved.exit_code == 0 and "approved" in approved.output
    stored = json.loads((Path(os.environ["MEMTUI_STATE_DIR"]) / "approvals.json").read_text())
    assert stored["projects"][str(w / "sub")]["external_imports"] == "approved"
    after = json.loads(runner.invoke(main, ["cascade", "--json", "--cwd", str(w / "sub")]).output)
    assert after["pending_external_imports"] == []
    assert str(w / "shared.md") in [f["path"] for f in after["files"] if f["loaded"]]
    runner.invoke(main, ["imports", "decline", "--cwd", str(w / "sub")])
    declined = json.loads(runner.invoke(main, ["cascade", "--json", "--cwd", str(w / "sub")]).output)
    assert [f["status"] for f in declined["files"] if f["path"] == str(w / "shared.md")] == ["declined"]


def test_rendered_flag_prints_exact_text_and_errors_are_one_line(tmp_path: Path) -> None:
    write(tmp_path, "AGENT.md", "Hello.\n")
    out = CliRunner().invoke(main, ["cascade", "--rendered", "--cwd", str(tmp_path)])
    assert out.output.endswith(f"Contents of {tmp_path}/AGENT.md (project instructions, checked into the codebase):\n\nHello.")
    missing = CliRunner().invoke(main, ["cascade", "--cwd", str(tmp_path / "nope")])
    assert missing.exit_code != 0
    assert missing.output.strip().splitlines() == [f"memtui: --cwd {tmp_path / 'nope'}: not a directory"]
    assert "Traceback" not in missing.output


def test_unwritable_state_dir_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocker = tmp_path / "state-is-a-file"
    blocker.write_text("x")
    monkeypatch.setenv("MEMTUI_STATE_DIR", str(blocker))
    result = CliRunner().invoke(main, ["imports", "approve", "--cwd", str(tmp_path)])
    assert result.exit_code != 0
    assert len(result.output.strip().splitlines()) == 1 and result.output.startswith("memtui: ")


def test_the_totals_line_shows_its_parts_adding_up(tmp_path: Path) -> None:
    write(tmp_path, "AGENT.md", "Hello.\n")
    # the reference's preamble, a blank line, the file's header, its trimmed text (6 characters)
    preamble = (
        "Codebase and user instructions are shown below. Be sure to adhere to these instructions. "
        "IMPORTANT: These instructions OVERRIDE any default behavior and you MUST follow them exactly as written."
    )
    header = f"Contents of {tmp_path}/AGENT.md (project instructions, checked into the codebase):\n\n"
    framing = len(preamble) + 2 + len(header)
    out = CliRunner().invoke(main, ["cascade", "--cwd", str(tmp_path)])
    assert f"1 file loaded: 6 characters of files + {framing:,} of headers and preamble = {framing + 6:,} characters" in out.output
    data = json.loads(CliRunner().invoke(main, ["cascade", "--json", "--cwd", str(tmp_path)]).output)
    assert (data["files_chars"], data["framing_chars"], data["total_chars"]) == (6, framing, framing + 6)
