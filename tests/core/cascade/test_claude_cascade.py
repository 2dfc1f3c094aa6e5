"""The cascade of the claude flavor: Claude Code 2.1.328's loading rules (each checked against
the real CLI with the oracle harness; the expected values here are worked out by hand from
them)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from support.cascade import write

from memtui.core.cascade import compute_cascade
from memtui.core.places.flavor import CLAUDE
from memtui.core.places.locations import resolve_locations


@pytest.fixture
def proj(tmp_path: Path) -> Path:
    p = tmp_path / "proj"
    (p / ".git").mkdir(parents=True)
    (p / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    return p


def run(cwd: Path, reads=()):  # type: ignore[no-untyped-def]
    return compute_cascade(resolve_locations(CLAUDE, cwd), cwd, reads=list(reads))


def loaded(c, base: Path) -> list[str]:  # type: ignore[no-untyped-def]
    return [os.path.relpath(f.path, base) for f in c.files if f.loaded]


def user_settings(options: dict) -> None:  # type: ignore[type-arg]
    home = Path(os.environ["HOME"])
    write(home, ".claude/settings.json", json.dumps({"pluginConfigs": {"agents-md@builtin": {"options": options}}}))


def test_rules_load_in_directory_order_with_subfolders_in_place(proj: Path) -> None:
    rules = proj / ".claude/rules"
    for name in ("zeta.md", "alpha.md", "sub/inner.md", "beta.md"):
        write(rules, name, f"# {name}\n")
    expected: list[str] = []

    def walk(d: Path) -> None:  # the order the directory lists its entries (os.scandir)
        for entry in os.scandir(d):
            if entry.is_dir():
                walk(Path(entry.path))
            else:
                expected.append(os.path.relpath(entry.path, proj))

    walk(rules)
    assert loaded(run(proj), proj) == expected


def test_a_bom_before_the_fence_keeps_a_rule_conditional(proj: Path) -> None:
    write(proj, ".claude/rules/bom.md", "\ufeff---\npaths: \"src/**\"\n---\n# only for src\n")
    write(proj, "src/a.txt", "a\n")
    c = run(proj, ["src/a.txt"])
    assert loaded(c, proj) == []
    assert c.reads[0].messages == [f"<system-reminder>\nContents of {proj}/.claude/rules/bom.md:\n\n# only for src\n\n</system-reminder>"]


def test_managed_files_have_their_own_label(proj: Path) -> None:
    managed = Path(os.environ["MEMTUI_MANAGED_DIR"])
    write(managed, "CLAUDE.md", "# policy\n")
    assert "(organization-managed policy instructions):" in run(proj).rendered


def test_the_team_index_is_not_loaded(proj: Path) -> None:
    c0 = run(proj)
    memory = resolve_locations(CLAUDE, proj).memory_dir
    write(memory, "MEMORY.md", "- [a](a.md) — a\n")
    write(memory, "team/MEMORY.md", "- [t](t.md) — t\n")
    c = run(proj)
    assert [f.layer for f in c.files if f.loaded] == ["automem"] and not c0.files


def test_agents_md_loads_where_the_project_has_no_claude_md(proj: Path) -> None:
    write(proj, "AGENTS.md", "# root agents\n")
    write(proj, "a/AGENTS.md", "# a agents\n")
    write(proj, "a/x.txt", "x\n")
    c = run(proj, ["a/x.txt"])
    assert loaded(c, proj) == ["AGENTS.md"]
    assert c.reads[0].messages == [f"tool.call hook additional context: Contents of {proj}/a/AGENTS.md:\n\n# a agents\n"]
    write(proj, "CLAUDE.md", "# now a CLAUDE.md project\n")
    c = run(proj, ["a/x.txt"])
    assert loaded(c, proj) == ["CLAUDE.md"] and c.reads[0].added == []


def test_agents_md_beside_claude_md_in_both_mode_unless_the_text_is_the_same(proj: Path) -> None:
    user_settings({"instructionFiles": "claude-md-and-agents-md"})
    write(proj, "CLAUDE.md", "# same\n")
    write(proj, "AGENTS.md", "# same\n")
    write(proj, ".claude/AGENTS.md", "# other\n")
    write(proj, "CLAUDE.local.md", "# local\n")
    assert loaded(run(proj), proj) == ["CLAUDE.md", "CLAUDE.local.md", ".claude/AGENTS.md"]


def test_managed_only_drops_the_users_and_the_projects_files(proj: Path) -> None:
    user_settings({"instructionFiles": "managed-only"})
    write(Path(os.environ["HOME"]), ".claude/CLAUDE.md", "# user\n")
    write(proj, "CLAUDE.md", "# project\n")
    c = run(proj)
    assert loaded(c, proj) == []
    assert {f.status for f in c.files} == {"dropped"}


def test_the_legacy_option_is_read_only_while_the_mode_is_left_at_its_default(proj: Path) -> None:
    write(proj, "CLAUDE.md", "# project\n")
    write(proj, "AGENTS.md", "# agents\n")
    user_settings({"projectInstructions": "both"})
    assert loaded(run(proj), proj) == ["CLAUDE.md", "AGENTS.md"]
    user_settings({"projectInstructions": "both", "instructionFiles": "claude-md"})
    assert loaded(run(proj), proj) == ["CLAUDE.md"]


def test_agents_md_mode_is_not_read_from_project_settings(proj: Path) -> None:
    write(proj, "CLAUDE.md", "# project\n")
    write(proj, "AGENTS.md", "# agents\n")
    write(proj, ".claude/settings.json", json.dumps({"pluginConfigs": {"agents-md@builtin": {"options": {"instructionFiles": "claude-md-and-agents-md"}}}}))
    assert loaded(run(proj), proj) == ["CLAUDE.md"]


def test_the_index_warning_names_the_cut_in_the_context(proj: Path) -> None:
    memory = resolve_locations(CLAUDE, proj).memory_dir
    write(memory, "MEMORY.md", "\n".join(f"- [m{i}](m{i}.md)" for i in range(1, 203)))
    (index,) = [f for f in run(proj).files if f.layer == "automem"]
    assert index.content.endswith(
        '> WARNING: MEMORY.md is 202 lines (limit: 200). Only part of it was loaded: 2 of 202 lines were cut off, '
        'starting at line 201 ("- [m201](m201.md)"). Keep index entries to one line under ~200 chars; move detail into topic files.'
    )
