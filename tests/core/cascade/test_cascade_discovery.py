"""Layers, order, preprocessing and excludes of the startup cascade (docs/behaviour.md §3.1, §3.2)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from support.cascade import cascade, codes, entry, loaded, write

from memtui.core.cascade import Cascade


def test_layers_load_managed_user_then_project_root_first(tmp_path: Path, isolated_env: Path) -> None:
    managed = Path(os.environ["MEMTUI_MANAGED_DIR"])
    write(managed, "AGENT.md", "managed")
    write(managed, ".agent/rules/m.md", "managed rule")
    write(isolated_env, ".agent/AGENT.md", "user")
    write(isolated_env, ".agent/rules/u.md", "user rule")
    root = tmp_path / "w"
    write(root, "AGENT.md", "outer")
    write(root, "AGENT.local.md", "outer local")
    write(root, "sub/.agent/AGENT.md", "inner dot")
    write(root, "sub/AGENT.md", "inner")
    write(root, "sub/.agent/rules/b.md", "rule b")
    write(root, "sub/.agent/rules/a/z.md", "rule a/z")
    write(root, "sub/AGENT.local.md", "inner local")
    c = cascade(root / "sub")
    layers = [(f.layer, f.content) for f in c.files if f.loaded]
    assert layers == [
        ("managed", "managed"),
        ("managed", "managed rule"),
        ("user", "user"),
        ("user", "user rule"),
        ("project", "outer"),
        ("local", "outer local"),
        ("project", "inner"),
        ("project", "inner dot"),
        ("project", "rule a/z"),  # memtui sorts rules by path (a/z.md before b.md)
        ("project", "rule b"),
        ("local", "inner local"),
    ]
    assert [f.kind for f in c.files if f.loaded][:2] == ["instructions", "rule"]
    assert all(f.reason for f in c.files)
    assert any("sorted by path" in n for n in c.notes)


def test_preprocessing_strips_frontmatter_and_block_comments_only(tmp_path: Path) -> None:
    text = (
        "---\ntitle: x\n---\n"
        "Keep.\n\n<!-- block comment -->\n\nInline <!-- stays --> here.\n\n"
        "```\n<!-- in code stays -->\n```\n"
    )
    write(tmp_path, "AGENT.md", text)
    c = cascade(tmp_path)
    assert entry(c, tmp_path / "AGENT.md").content == (
        "Keep.\n\nInline <!-- stays --> here.\n\n```\n<!-- in code stays -->\n```"
    )


def test_unclosed_comment_stays_with_diagnostic(tmp_path: Path) -> None:
    write(tmp_path, "AGENT.md", "Top.\n\n<!-- never closed\n\nstill here\n")
    c = cascade(tmp_path)
    f = entry(c, tmp_path / "AGENT.md")
    assert f.content == "Top.\n\n<!-- never closed\n\nstill here"
    assert [(d.code, d.line) for d in f.diagnostics] == [("html-comment-unclosed", 3)]


def test_whitespace_only_file_dropped_and_its_imports_not_followed(tmp_path: Path) -> None:
    write(tmp_path, "AGENT.md", "  \n\t\n")
    write(tmp_path, "AGENT.local.md", "<!-- only a comment -->\n@x.md\n")
    write(tmp_path, "x.md", "x")
    c = cascade(tmp_path)
    assert entry(c, tmp_path / "AGENT.md").status == "empty"
    assert "file-empty" in codes(entry(c, tmp_path / "AGENT.md"))
    # the comment goes, `@x.md` stays as text and is imported
    assert loaded(c, tmp_path) == ["AGENT.local.md", "x.md"]
    assert c.rendered.count("Contents of") == 2


def test_size_advisory_over_40000_characters(tmp_path: Path) -> None:
    write(tmp_path, "AGENT.md", "x" * 40_001)
    write(tmp_path, "AGENT.local.md", "y" * 40_000)
    c = cascade(tmp_path)
    big = entry(c, tmp_path / "AGENT.md")
    assert big.chars == 40_001 and big.tokens_est == 10_001
    assert [d.code for d in big.diagnostics] == ["file-too-large"]
    assert "40,001 characters" in big.diagnostics[0].message
    assert entry(c, tmp_path / "AGENT.local.md").diagnostics == []


def test_excludes_apply_to_user_project_local_not_managed(tmp_path: Path, isolated_env: Path) -> None:
    managed = Path(os.environ["MEMTUI_MANAGED_DIR"])
    write(managed, "AGENT.md", "managed")
    write(isolated_env, ".agent/AGENT.md", "user")
    proj = tmp_path / "p"
    write(proj, "AGENT.md", "project")
    write(proj, "vendor/AGENT.md", "vendored")
    write(proj, ".agent/rules/r.md", "rule")
    patterns = [f"{proj}/vendor/**", "**/.agent/rules/*.md", f"{managed}/AGENT.md", "AGENT.md"]
    write(proj, ".agent/settings.json", json.dumps({"agentMdExcludes": patterns}))
    c = cascade(proj / "vendor", project=proj)
    assert entry(c, managed / "AGENT.md").loaded  # Managed cannot be excluded
    assert entry(c, isolated_env / ".agent/AGENT.md").loaded
    assert entry(c, proj / "AGENT.md").loaded
    assert entry(c, proj / "vendor/AGENT.md").status == "excluded"
    assert entry(c, proj / ".agent/rules/r.md").status == "excluded"
    assert "excludes-pattern-relative" in codes(c)  # bare "AGENT.md" never matches an absolute path


def test_duplicate_when_home_is_cwd(isolated_env: Path) -> None:
    # ~/.agent/AGENT.md is both the User file and the Project `.agent/AGENT.md` of HOME.
    write(isolated_env, ".agent/AGENT.md", "me")
    c = cascade(isolated_env)
    user, again = [f for f in c.files if f.path == str(isolated_env / ".agent/AGENT.md")]
    assert (user.layer, user.loaded) == ("user", True)
    assert (again.layer, again.status) == ("project", "duplicate")
    assert c.rendered.count("Contents of") == 1


def test_rules_symlink_loop_terminates_and_md_is_case_sensitive(tmp_path: Path) -> None:
    rules = tmp_path / ".agent/rules"
    write(rules, "a/one.md", "one")
    write(rules, "UPPER.MD", "never")
    (rules / "a" / "loop").symlink_to(rules)
    c = cascade(tmp_path)
    assert loaded(c, tmp_path) == [".agent/rules/a/one.md"]
    assert "rule-name-case" in codes(c)


def test_worktree_nested_in_main_repo_skips_main_project_files(tmp_path: Path) -> None:
    main = tmp_path / "repo"
    write(main, ".git/HEAD", "ref: refs/heads/main\n")
    wt_git = main / ".git/worktrees/wt"
    wt = main / ".agent/worktrees/wt"
    write(wt_git, "commondir", "../..\n")
    write(wt_git, "gitdir", f"{wt}/.git\n")
    write(wt, ".git", f"gitdir: {wt_git}\n")
    write(main, "AGENT.md", "main project")
    write(main, "AGENT.local.md", "main local")
    write(wt, "AGENT.md", "worktree project")
    c = cascade(wt)
    assert entry(c, main / "AGENT.md").status == "worktree-skipped"
    assert entry(c, main / "AGENT.local.md").loaded  # Local files there still load
    assert entry(c, wt / "AGENT.md").loaded


def test_auto_memory_index_truncated_and_team_wrapped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    mem = tmp_path / "mem"
    monkeypatch.setenv("AGENT_MEMORY_DIR", str(mem))
    lines = "\n".join(f"- [m{i}](m{i}.md) — hook {i}" for i in range(1, 206))
    write(mem, "MEMORY.md", lines)
    write(mem, "team/MEMORY.md", "- [t](t.md) — team\n")
    proj = tmp_path / "p"
    proj.mkdir()
    c = cascade(proj)
    auto = entry(c, mem / "MEMORY.md")
    assert (auto.layer, auto.kind) == ("automem", "index")
    assert auto.content.endswith(
        "- [m200](m200.md) — hook 200\n\n> WARNING: MEMORY.md is 205 lines (limit: 200). Only part of it was loaded. "
        "Keep index entries to one line under ~200 chars; move detail into topic files."
    )
    assert "index-truncated" in codes(auto)
    assert c.rendered.endswith(
        f"Contents of {mem}/team/MEMORY.md (shared team memory, synced across the organization):\n\n"
        '<team-memory-content source="shared">\n- [t](t.md) — team\n</team-memory-content>'
    )
    monkeypatch.setenv("AGENT_DISABLE_AUTO_MEMORY", "1")
    off: Cascade = cascade(proj)
    assert [f for f in off.files if f.layer in ("automem", "teammem")] == []
