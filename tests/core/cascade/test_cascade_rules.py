"""Conditional rules: the byte-0 frontmatter traps and ``paths:`` forms (docs/behaviour.md §3.4)."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.cascade import cascade, codes, entry, write

from memtui.core.cascade import new_session, simulate_read

TRAPS = {
    "tab.md": ("---\npaths:\n\t- \"src/**\"\n---\nTabbed.\n", "frontmatter-parse-error"),
    "bom.md": ("\ufeff---\npaths:\n  - \"src/**\"\n---\nBOM.\n", "frontmatter-after-bom"),
    "blank.md": ("\n---\npaths:\n  - \"src/**\"\n---\nBlank.\n", "frontmatter-after-blank-line"),
    "empty.md": ("---\npaths: []\n---\nEmpty.\n", "paths-empty"),
}


@pytest.mark.parametrize("name", sorted(TRAPS))
def test_broken_frontmatter_makes_the_rule_unconditional(tmp_path: Path, name: str) -> None:
    text, code = TRAPS[name]
    write(tmp_path, f".agent/rules/{name}", text)
    c = cascade(tmp_path)
    rule = entry(c, tmp_path / ".agent/rules" / name)
    assert (rule.loaded, rule.conditional, rule.status) == (True, False, "loaded")
    assert [(d.code, d.path, d.line) for d in rule.diagnostics] == [(code, str(rule.path), 1)]
    assert code in rule.reason


def test_bom_rule_content_keeps_the_frontmatter_text_and_the_render_trims_the_bom(tmp_path: Path) -> None:
    write(tmp_path, ".agent/rules/bom.md", TRAPS["bom.md"][0])
    c = cascade(tmp_path)
    assert entry(c, tmp_path / ".agent/rules/bom.md").content == "---\npaths:\n  - \"src/**\"\n---\nBOM."


PATH_FORMS = {
    "list.md": "---\npaths:\n  - \"src/controllers/**\"\n  - \"src/requests/**\"\n---\nlist\n",
    "string.md": "---\npaths: src/controllers/**, src/requests/**\n---\nstring\n",
    "brace.md": "---\npaths: \"src/{controllers,requests}/**\"\n---\nbrace\n",
}


@pytest.mark.parametrize("name", sorted(PATH_FORMS))
def test_paths_forms_match_the_same_targets(tmp_path: Path, name: str) -> None:
    write(tmp_path, f".agent/rules/{name}", PATH_FORMS[name])
    c = cascade(tmp_path, reads=["src/requests/x.php", "lib/x.php", "SRC/Requests/Y.PHP"])
    rule = entry(c, tmp_path / ".agent/rules" / name)
    assert (rule.status, rule.patterns) == ("conditional", ("src/controllers", "src/requests"))
    assert [[Path(p).name for p in step.to_json()["added"]] for step in c.reads] == [[name], [], []]
    # a fresh session: matching is case-insensitive
    again = simulate_read(c, new_session(c), "SRC/Requests/Y.PHP")
    assert [f.path for f in again.added] == [rule.path]


def test_unquoted_brace_glob_is_repaired_and_matches_tsx_anywhere(tmp_path: Path) -> None:
    write(tmp_path, ".agent/rules/ts.md", "---\npaths: **/*.{ts,tsx}\n---\nts\n")
    c = cascade(tmp_path, reads=["lib/x.php", "deep/a/b/view.tsx"])
    rule = entry(c, tmp_path / ".agent/rules/ts.md")
    assert (rule.conditional, rule.patterns) == (True, ("**/*.ts", "**/*.tsx"))
    assert codes(rule) == ["frontmatter-repaired"]
    assert [step.to_json()["added"] for step in c.reads] == [[], [rule.path]]
    assert simulate_read(c, new_session(c), "top.tsx").added[0].path == rule.path


def test_user_rule_matches_relative_to_cwd_and_loads_once(tmp_path: Path, isolated_env: Path) -> None:
    write(isolated_env, ".agent/rules/go.md", "---\npaths: [\"**/*.go\"]\n---\nGo rules.\n")
    p, q = tmp_path / "p", tmp_path / "q"
    write(p, "main.go", "package main\n")
    write(q, "x.go", "package x\n")
    c = cascade(p, reads=[p / "main.go", p / "main.go", q / "x.go"])
    rule = str(isolated_env / ".agent/rules/go.md")
    assert [step.to_json()["added"] for step in c.reads] == [[rule], [], []]
    assert c.reads[1].considered[0].status == "already-loaded"
    assert "read-outside-cwd" in codes(c.reads[2])
    # /q/x.go never matches, even as the only read of a session
    assert simulate_read(c, new_session(c), q / "x.go").added == []


def test_managed_rule_matches_relative_to_cwd(tmp_path: Path) -> None:
    import os

    write(Path(os.environ["MEMTUI_MANAGED_DIR"]), ".agent/rules/sec.md", "---\npaths: secrets/**\n---\nNo secrets.\n")
    c = cascade(tmp_path, reads=["secrets/key.txt"])
    assert [(f.layer, f.kind) for f in c.reads[0].added] == [("managed", "rule")]


def test_conditional_rule_imports_load_eagerly_while_the_body_waits(tmp_path: Path) -> None:
    write(tmp_path, ".agent/rules/api.md", "---\npaths: src/**\n---\nSee @zguide.md\n")
    write(tmp_path, ".agent/rules/zguide.md", "Guide.")  # also a rule itself, listed after api.md and db.md
    write(tmp_path, "docs/more.md", "More.")
    write(tmp_path, ".agent/rules/db.md", "---\npaths: db/**\n---\n@../../docs/more.md\n")
    c = cascade(tmp_path)
    rule = entry(c, tmp_path / ".agent/rules/api.md")
    assert rule.status == "conditional"
    guide = [f for f in c.files if f.path == str(tmp_path / ".agent/rules/zguide.md")]
    assert [(g.kind, g.loaded, g.status) for g in guide] == [("import", True, "loaded"), ("rule", False, "duplicate")]
    assert entry(c, tmp_path / "docs/more.md").loaded
    assert "the agent's quirk" in entry(c, tmp_path / "docs/more.md").reason
    assert "conditional-rule-imports-eager" in codes(rule)
    # the read adds the body only
    step = simulate_read(c, new_session(c), "src/a.py")
    assert [f.path for f in step.added] == [rule.path]
