"""Hostile and pathological input never hangs, crashes a scan or loses a file (the rule: one
diagnostic per problem, the file still listed). Found by attacking memtui with bad input."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from memtui.cli import main
from memtui.core.places.flavor import AGENT
from memtui.core.memory.frontmatter import parse_frontmatter
from memtui.core.places.gitroot import resolve_git_roots
from memtui.core.memory.headers import scan_headers
from memtui.core.places.locations import resolve_locations
from memtui.core.memory.memories import scan_memories
from memtui.core.memory.yaml12 import load


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("a: yes", {"a": "yes"}),  # YAML 1.2: a string, not True
        ("a: off", {"a": "off"}),
        ("a: 2026-01-01", {"a": "2026-01-01"}),  # not a date object
        ("a: 1:30", {"a": "1:30"}),  # not sexagesimal 90
        ("a: true", {"a": True}),
        ("a: ~", {"a": None}),
        ("a:", {"a": None}),
        ("a: 0x1f", {"a": 31}),
        ("a: 010", {"a": 10}),
        ("a: [x, 2]", {"a": ["x", 2]}),
    ],
)
def test_yaml_is_read_as_yaml_1_2_core(text: str, expected: dict[str, object]) -> None:
    assert load(text) == expected


def test_a_duplicate_key_makes_the_frontmatter_invalid_as_in_javascript_parsers() -> None:
    fm = parse_frontmatter("---\ntype: user\ntype: feedback\n---\nbody\n")
    assert fm.data == {}
    assert fm.error is not None and "duplicate key" in fm.error


@pytest.mark.parametrize(
    "frontmatter",
    [
        "name: !!int abc",
        "modified: !!timestamp 2026-02-30",
        "n: " + "9" * 5000,
        "x: " + "[" * 20000,
        "type: &a [x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]",
    ],
)
def test_values_pyyaml_cannot_build_never_abort_a_scan(tmp_path: Path, frontmatter: str) -> None:
    (tmp_path / "bad.md").write_text(f"---\n{frontmatter}\n---\nbody\n")
    (tmp_path / "good.md").write_text("---\nname: G\ndescription: g\ntype: user\n---\nbody\n")
    scan = scan_memories(tmp_path)
    assert sorted(m.relpath for m in scan.memories) == ["bad.md", "good.md"]


def test_a_fifo_and_a_link_to_dev_zero_are_listed_not_read(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe.md")
    (tmp_path / "zero.md").symlink_to("/dev/zero")
    (tmp_path / "ok.md").write_text("---\ndescription: ok\ntype: user\n---\nx\n")
    scan = scan_memories(tmp_path)  # returns (would hang or exhaust memory before the fix)
    by = {m.relpath: m for m in scan.memories}
    assert set(by) == {"pipe.md", "zero.md", "ok.md"}
    assert [d.code for d in by["pipe.md"].diagnostics] == ["unreadable"]
    assert [d.code for d in by["zero.md"].diagnostics] == ["unreadable"]
    # recall drops what it cannot read
    assert [h.relpath for h in scan_headers(tmp_path)] == ["ok.md"]


def test_settings_a_repository_controls_cannot_hang_or_crash(tmp_path: Path) -> None:
    project = tmp_path / "p"
    (project / ".agent").mkdir(parents=True)
    (project / ".agent" / "settings.json").symlink_to("/dev/zero")
    os.mkfifo(project / ".agent" / "settings.local.json")
    loc = resolve_locations(AGENT, project)
    codes = sorted(d.code for d in loc.diagnostics)
    assert codes == ["settings-unreadable", "settings-unreadable"]


@pytest.mark.parametrize("raw", ['{"autoMemoryDirectory": "/tmp/x", "n": NaN}', "[" * 100_000 + "]" * 100_000, '{"n": ' + "9" * 5000 + "}"])
def test_settings_javascript_would_reject_are_ignored_with_a_diagnostic(tmp_path: Path, isolated_env: Path, raw: str) -> None:
    base = isolated_env / ".agent"
    base.mkdir()
    (base / "settings.json").write_text(raw)
    loc = resolve_locations(AGENT, tmp_path)
    assert [d.code for d in loc.diagnostics] == ["settings-invalid-json"]
    assert loc.memory_dir_source == "default"


def test_git_metadata_that_is_a_fifo_or_holds_nul_falls_back_with_a_diagnostic(tmp_path: Path) -> None:
    fifo_repo = tmp_path / "a"
    fifo_repo.mkdir()
    os.mkfifo(fifo_repo / ".git")
    roots = resolve_git_roots(fifo_repo)
    assert roots.git_root == fifo_repo and roots.canonical == fifo_repo
    assert [d.code for d in roots.diagnostics] == ["git-file-unreadable"]
    empty = tmp_path / "b"
    empty.mkdir()
    (empty / ".git").write_text("gitdir:\n")
    assert [d.code for d in resolve_git_roots(empty).diagnostics] == ["git-file-invalid"]


def test_an_index_link_too_long_for_the_filesystem_is_just_dangling(tmp_path: Path) -> None:
    target = "x" * 300 + ".md"
    (tmp_path / "MEMORY.md").write_text(f"- [x]({target}) — h\n")
    result = CliRunner().invoke(main, ["index", "--json", "--memory-dir", str(tmp_path)])
    assert result.exit_code == 0
    assert json.loads(result.output)["dangling"] == [target]


def test_rich_markup_in_memory_fields_is_printed_as_text(tmp_path: Path) -> None:
    (tmp_path / "m.md").write_text("---\nname: '[/]'\ndescription: '[bold]x[/bold] [link=https://e.example]y[/link]'\ntype: user\n---\nb\n")
    result = CliRunner(env={"COLUMNS": "200"}).invoke(main, ["ls", "--memory-dir", str(tmp_path)])  # the whole description
    assert result.exit_code == 0, result.output
    assert "[bold]x[/bold] [link=https://e.example]y[/link]" in result.output.replace("\n", "")


def test_state_dir_inside_the_memory_dir_is_an_error_diagnostic(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    mem = tmp_path / "mem"
    monkeypatch.setenv("AGENT_MEMORY_DIR", str(mem))
    monkeypatch.setenv("MEMTUI_STATE_DIR", str(mem / ".memtui"))
    loc = resolve_locations(AGENT, tmp_path)
    assert "state-dir-in-memory-dir" in [d.code for d in loc.diagnostics]


@pytest.mark.parametrize("value", ["garbage", "0001-01-01T00:00:00+01:00"])
def test_a_bad_memtui_now_is_one_line_not_a_traceback(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    (tmp_path / "m.md").write_text("---\ntype: user\n---\nb\n")
    monkeypatch.setenv("MEMTUI_NOW", value)
    result = CliRunner().invoke(main, ["ls", "--memory-dir", str(tmp_path)])
    assert result.exit_code == 2
    assert "MEMTUI_NOW" in result.output and "Traceback" not in result.output
