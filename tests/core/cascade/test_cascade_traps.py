"""Traps found in real users' instruction files, each with a minimal input of that shape."""

from __future__ import annotations

from pathlib import Path

import pytest

from memtui.core.places.flavor import AGENT, CLAUDE, Flavor
from support.cascade import cascade, codes, entry, loaded, write


@pytest.mark.parametrize("flavor", [AGENT, CLAUDE], ids=["agent", "claude"])
@pytest.mark.parametrize("key", ["globs", "glob", "scope", "applies_to"])
def test_rule_keys_the_agent_ignores_load_everywhere(tmp_path: Path, key: str, flavor: Flavor) -> None:
    rule = write(tmp_path, f"{flavor.dot_dir}/rules/api.md", f"---\n{key}: src/api/**/*.ts\n---\nUse zod for validation.\n")
    c = cascade(tmp_path, flavor=flavor)
    e = entry(c, rule)
    # unconditional: loaded at startup (Claude Code 2.1.328 too: `globs:` is not `paths:`)
    assert e.loaded and not e.conditional
    [d] = [d for d in e.diagnostics if d.code == "rule-ignored-key"]
    assert (d.severity, d.line) == ("warning", 2)
    assert f"`{key}:` is not read by the agent" in d.message
    assert '- "src/api/**/*.ts"' in d.message  # the paths: to write instead


def test_paths_beside_globs_is_not_the_trap(tmp_path: Path) -> None:
    rule = write(tmp_path, ".agent/rules/api.md", "---\npaths: src/api/**\nglobs: src/api/**\n---\nRule.\n")
    e = entry(cascade(tmp_path), rule)
    assert e.conditional and "rule-ignored-key" not in codes(e)


def test_a_brace_glob_cut_by_a_yaml_flow_list(tmp_path: Path) -> None:
    # In a flow list the commas of `{js,ts,vue}` are YAML's: the line does not parse, the
    # quoting retry reads `"[src/**/*.{js,ts,vue}]"` as one string, braces expand around the
    # brackets (docs/behaviour.md §3.4): three patterns that are character classes, matching nothing meant
    rule = write(tmp_path, ".agent/rules/web.md", "---\npaths: [src/**/*.{js,ts,vue}]\n---\nWeb rule.\n")
    write(tmp_path, "src/app/main.ts", "x")
    c = cascade(tmp_path, reads=["src/app/main.ts"])
    e = entry(c, rule)
    assert e.patterns == ("[src/**/*.js]", "[src/**/*.ts]", "[src/**/*.vue]")
    [d] = [d for d in e.diagnostics if d.code == "paths-brace-split"]
    assert (d.severity, d.line) == ("warning", 2)
    assert "`src/**/*.{js,ts,vue}`" in d.message and '`- "src/**/*.{js,ts,vue}"`' in d.message
    assert str(rule) not in c.reads[0].to_json()["added"]  # main.ts does not load it


def test_brace_pieces_from_a_parsed_list_are_named() -> None:
    # a YAML reader that splits the flow list gives the pieces themselves
    from memtui.core.cascade.rules import brace_split

    assert brace_split(["src/**/*.{js", "ts", "vue}", "docs/**"]) == [("src/**/*.{js,ts,vue}", ["src/**/*.{js", "ts", "vue}"])]
    assert brace_split(["src/**/*.{js,ts}"]) == []


def test_a_quoted_brace_glob_is_fine(tmp_path: Path) -> None:
    rule = write(tmp_path, ".agent/rules/web.md", '---\npaths: ["src/**/*.{js,ts,vue}"]\n---\nWeb rule.\n')
    assert "paths-brace-split" not in codes(entry(cascade(tmp_path), rule))


@pytest.mark.parametrize(
    ("line", "raw", "what"),
    [
        ("Icons come from @ant-design/icons, not from svg files.", "ant-design/icons,", "an npm package scope"),
        ("Write to support@lemedspa.com or @lemedspa.com on social.", "lemedspa.com", "an e-mail domain or a web address"),
        ("Use the **@refactor** command for this.", "refactor", "a word or a handle"),
    ],
    ids=["npm-scope", "domain", "word"],
)
def test_at_tokens_probably_not_meant_as_imports(tmp_path: Path, line: str, raw: str, what: str) -> None:
    write(tmp_path, "AGENT.md", f"# Notes\n\n{line}\n")
    c = cascade(tmp_path)
    # the agent does try the import (and fails): the finding stays, as info, and says why
    assert [(d.code, d.severity, d.line) for d in c.diagnostics] == [("import-probably-not-meant", "info", 3)]
    assert f"`@{raw}` looks like {what}, probably not meant as an import" in c.diagnostics[0].message
    assert [f.status for f in c.files if f.kind == "import"] == ["missing"]


def test_a_real_missing_import_keeps_its_warning(tmp_path: Path) -> None:
    write(tmp_path, "AGENT.md", "See @docs/guide.md for details.\n")
    assert [(d.code, d.severity) for d in cascade(tmp_path).diagnostics] == [("import-missing", "warning")]


def test_an_unreadable_import_is_reported_once(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    write(tmp_path, "AGENT.md", "Read @docs first.\n")  # a directory
    c = cascade(tmp_path)
    assert loaded(c, tmp_path) == ["AGENT.md"]
    assert [(d.code, d.line) for d in c.diagnostics] == [("import-unreadable", 1)]  # not also file-unreadable
    assert "a directory" in c.diagnostics[0].message
