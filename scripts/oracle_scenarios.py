#!/usr/bin/env python3
"""memtui's own oracle scenarios: workspaces in the format of ``../shared/oracle/build_scenarios.py``.

Usage: oracle_scenarios.py [--root /tmp/oracle-own/scen]   (wipes and rebuilds <root>)

Each scenario is ``<root>/<name>/`` with its own ``home/`` (HOME) and ``proj/`` (a git repo, the
cwd) and a ``scenario.json`` (name, cwd, home, runs) that ``run_oracle.py`` reads. Most of them
hold a root ``CLAUDE.md`` that imports one case file per line from ``proj/c/``, so each case
reaches the model as its own ``Contents of …`` section and a case's imports (``proj/c/t/…``)
load or not on their own. ``scripts/oracle_own.sh`` builds and runs them.

To add scenarios, write a builder ``def name(root: Path) -> dict`` and append it to BUILDERS.
"""
from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
from pathlib import Path


def slug(p: str) -> str:
    return re.sub(r"[^A-Za-z0-9]", "-", p)


def w(path: Path, text: str | bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")


def workspace(root: Path, name: str) -> tuple[Path, Path]:
    """``<root>/<name>/home`` (with a ``~/.claude.json`` past onboarding) and ``proj`` (git)."""
    s = root / name
    home, proj = s / "home", s / "proj"
    proj.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "-q", "-b", "main", str(proj)], check=True)
    w(home / ".claude.json", json.dumps({"hasCompletedOnboarding": True, "numStartups": 1,
                                         "firstStartTime": "2026-01-01T00:00:00.000Z"}, indent=2))
    return home, proj


def cases(root: Path, name: str, items: dict[str, str | bytes], targets: tuple[str, ...] = ()) -> dict:
    """A scenario whose ``CLAUDE.md`` imports ``c/<case>.md`` for every case; ``targets`` are
    files under ``c/t/`` the cases may import (each holds its own name)."""
    _, proj = workspace(root, name)
    for case, text in items.items():
        w(proj / "c" / f"{case}.md", text)
    for target in targets:
        w(proj / "c" / "t" / target, f"# target {target}\n")
    w(proj / "CLAUDE.md", f"# {name}\n" + "".join(f"@c/{case}.md\n" for case in items))
    return {"cwd": str(proj), "runs": [{"name": "base", "prompt": "hello there"}]}


T = tuple(f"t{i}.md" for i in range(1, 21))


def o_html_kinds(root: Path) -> dict:
    """The seven CommonMark HTML block kinds as Claude Code's lexer reads them: where each one
    starts and ends, which interrupt a paragraph, and so which ``<!-- -->`` lines are cut."""
    return cases(root, "o_html_kinds", {
        "k1_script": "a\n\n<script>\nvar x = 1; <!-- in script -->\n</script>\n<!-- cut -->\n\nb\n",
        "k1_close_alone": "a\n\n</script>\n<!-- cut: a closing script tag is paragraph text -->\n\nb\n",
        "k1_prefix_name": "a\n\n<prefix>\n<!-- cut: <prefix> is no block -->\n\nb\n",
        "k1_pre_interrupts": "para\n<pre>\n<!-- kept inside pre -->\n</pre>\n\nb\n",
        "k1_unclosed": "a\n\n<style>\nx\n\n<!-- kept: style runs to the end -->\n\nb\n",
        "k2_multi": "a\n\n<!--\nmulti\nline\n-->\nb\n",
        "k2_tail": "a\n\n<!-- c --> tail\n\nb\n",
        "k2_space_line_after": "a\n\n<!-- c -->\n   \n\nb\n",
        "k2_indented": "a\n\n   <!-- c -->\n\nb\n",
        "k2_indented_no_interrupt": "para\n   <!-- kept: indented, continues the paragraph -->\nb\n",
        "k2_interrupt": "para\n<!-- cut -->\nb\n",
        "k3_no_interrupt": "para\n<?php x ?>\n<!-- cut -->\nb\n",
        "k3_unclosed": "a\n\n<?php\n<!-- kept: the PI runs to the end -->\n\nb\n",
        "k4_no_interrupt": "para\n<!DOCTYPE html>\n<!-- cut -->\nb\n",
        "k5_cdata": "a\n\n<![CDATA[\n<!-- kept in CDATA -->\n]]>\n<!-- cut -->\n\nb\n",
        "k6_div_then_comment": "<div>\nx\n</div>\n<!-- kept in the div block -->\n\nb\n",
        "k6_div_blank_comment": "<div>\nx\n</div>\n\n<!-- cut -->\n\nb\n",
        "k6_div_tab": "a\n\n<div\tclass=\"x\">\n<!-- cut: a tab after div starts no block -->\n\nb\n",
        "k6_indented_no_interrupt": "para\n  <div>\n<!-- cut -->\nb\n",
        "k6_close_tag": "a\n\n</details>\n<!-- kept -->\n\nb\n",
        "k6_upper": "a\n\n<DIV>\n<!-- kept -->\n\nb\n",
        "k7_custom": "a\n\n<custom-tag attr=\"1\">\n<!-- kept -->\n\nb\n",
        "k7_no_interrupt": "para\n<custom-tag>\n<!-- cut -->\nb\n",
        "comment_then_div": "<!-- c -->\n<div>\nx\n</div>\n\nafter\n",
    })


def o_html_containers(root: Path) -> dict:
    """HTML blocks and comments inside lists, blockquotes and indented code, and inline HTML."""
    return cases(root, "o_html_containers", {
        "list_comment": "- item\n  <!-- kept: inside the item -->\n\nb\n",
        "list_then_comment": "- item\n<!-- cut: ends the item -->\nb\n",
        "list_div_lazy": "- <div>\n@t/t1.md\n\nb\n",
        "list_comment_lazy": "- <!-- c\n@t/t2.md -->\n\nb\n",
        "quote_comment": "> <!-- kept -->\n> q\n\nb\n",
        "quote_div_lazy": "> <div>\n@t/t3.md\n\nb\n",
        "indented_code": "a\n\n    <!-- kept: code -->\n\nb\n",
        "fenced_code": "a\n\n```\n<!-- kept: code -->\n```\n\nb\n",
        "inline": "text <span>@t/t4.md</span> and <!-- inline --> <b>x</b> @t/t5.md\n",
    }, T)


def o_html_imports(root: Path) -> dict:
    """``@`` imports in and around HTML blocks: inside a block (never), in the text after a
    block that ends mid-line (``<?…?>``, ``<!DOCTYPE …>``, ``<![CDATA[…]]>``), beside a comment."""
    return cases(root, "o_html_imports", {
        "in_div": "a\n\n<details>\n@t/t1.md\n</details>\n\n<div>\n\n@t/t2.md\n\n</div>\n",
        "in_span_block": "a\n\n<span>\n@t/t3.md\n</span>\n",
        "after_pi": "a\n\n<?php x ?> tail @t/t4.md\n<!-- cut -->\n\nb\n",
        "after_doctype": "a\n\n<!DOCTYPE html> tail @t/t5.md\n\nb\n",
        "after_cdata": "a\n\n<![CDATA[ x ]]> tail @t/t6.md\n\nb\n",
        "beside_comment": "<!-- c --> @t/t7.md\n\n<!-- @t/t8.md -->\n",
        "in_script": "<script>\n@t/t9.md\n</script>\n",
        "after_close_script": "</script>\n@t/t10.md\n",
        "close_script_then_commented_div": "</script>\n<!-- old:\n<div>\nx\n</div>\n-->\n\nSee @t/release\\ notes.md\n",
    }, T + ("release notes.md",))


def o_import_escapes(root: Path) -> dict:
    """Backslashes in import paths: ``\\ `` stays (a space in the path), an escape of
    punctuation (``\\(``, ``\\#``, ``\\\\``) ends the path, an entity stays as written."""
    return cases(root, "o_import_escapes", {
        "space": "See @t/release\\ notes.md and @t/mid\\ dle\\ name.md\n",
        "paren_hash": "@t/t1\\(x.md and @t/t2\\#x.md\n",
        "backslash": "@t/t3\\\\x.md then @t/t4.md\\\n",
        "code_span": "`@t/release\\ notes.md` is code; @t/t5.md is not\n",
        "entity": "@t/t6&amp;x.md\n",
        "end_escape": "@t/t7.md\\!\n",
    }, T + ("release notes.md", "mid dle name.md", "t1(x.md", "t3\\x.md", "t6&amp;x.md", "t6&x.md"))


def o_import_list_text(root: Path) -> dict:
    """A paragraph in a list item is scanned as written: ``@`` paths in its code spans and
    inline comments are imported; outside lists they are not."""
    return cases(root, "o_import_list_text", {
        "list_code_span": "- see `cat @t/t1.md now`\n- and `@t/t2.md`\n",
        "list_inline_comment": "- note <!-- @t/t3.md --> end\n",
        "para_code_span": "see `cat @t/t4.md now`\n",
        "ordered": "1. see `cat @t/t5.md now`\n",
        "nested": "- a\n  - see `cat @t/t6.md now`\n",
        "quote": "> see `cat @t/t7.md now`\n",
    }, T)


def o_html_frontmatter(root: Path) -> dict:
    """Frontmatter is cut before comments: a comment right after it is cut, a comment inside
    it goes with it, and a ``---`` inside a leading comment starts no frontmatter."""
    return cases(root, "o_html_frontmatter", {
        "fm_then_comment": "---\ntitle: x\n---\n<!-- cut -->\nbody\n",
        "comment_in_fm": "---\nnote: a <!-- b -->\n---\nbody <!-- inline stays -->\n",
        "comment_around_dashes": "<!--\n---\nx: 1\n---\n-->\nbody\n",
        "fm_then_div": "---\ntitle: x\n---\n<div>\nx\n</div>\n<!-- kept -->\n\nbody\n",
    })


def o_linkref_comment(root: Path) -> dict:
    """Link reference definitions in a file that holds an HTML comment: 2.1.332 keeps them,
    2.1.328 dropped them (with the empty lines after them)."""
    return cases(root, "o_linkref_comment", {
        "with_comment": "# T\n\n[x]: https://example.com\n\n<!-- c -->\n\nafter [x]\n",
        "inline_comment": "# T\n\n[x]: https://example.com\n[y]: https://example.org \"t\"\n\nSee [x] and [y] <!-- i -->\n",
        "no_comment": "# T\n\n[x]: https://example.com\n\nafter [x]\n",
    })


def o_html_crlf(root: Path) -> dict:
    """CRLF line endings: a file with a cut comment reaches the model with LF endings. (A file
    whose CRLF endings reach the model is checked by the unit tests only: compare.py reads
    memtui's text output with newline translation.)"""
    return cases(root, "o_html_crlf", {
        "crlf_cut": b"a\r\n\r\n<!-- c -->\r\n\r\nb\r\nc\r\n",
    })


def o_index_html(root: Path) -> dict:
    """MEMORY.md read through the same lexer: a comment after a lone ``</script>`` is cut, a
    link definition beside a comment stays (2.1.332), a ``<div>`` block and an inline comment stay."""
    home, proj = workspace(root, "o_index_html")
    w(proj / "CLAUDE.md", "# o_index_html\n")
    w(home / ".claude" / "projects" / slug(str(proj)) / "memory" / "MEMORY.md",
      "- [Deploy](project_deploy.md) — make ship <!-- inline stays -->\n"
      "</script>\n<!--\n<div>cut with the comment</div>\n-->\n\n"
      "[x]: https://example.com\n\n<div>\nkept\n</div>\n\n- [Tests](feedback_tests.md) — real DB\n")
    return {"cwd": str(proj), "runs": [{"name": "base", "prompt": "hello there"}]}


def o_cloud_env_local(root: Path) -> dict:
    """CLAUDE_CODE_FETCH_PERSONAL_CLOUD_CONFIGURATION set on a local run (no --sdk-url): the CLI
    fetches nothing, so the instruction block is the user and project files alone (memtui lists
    two cloud-only placeholders that are not part of it)."""
    home, proj = workspace(root, "o_cloud_env_local")
    w(home / ".claude" / "CLAUDE.md", "# User CLAUDE.md\nBe terse.\n")
    w(home / ".claude" / "rules" / "style.md", "# User rule\nSmall diffs.\n")
    w(proj / "CLAUDE.md", "# o_cloud_env_local\nUse make.\n")
    return {"cwd": str(proj), "runs": [{"name": "cloudenv", "prompt": "hello there",
                                        "env": {"CLAUDE_CODE_FETCH_PERSONAL_CLOUD_CONFIGURATION": "1"}}]}


# A settings file whose env block turns auto memory off.
AUTOMEM_OFF = json.dumps({"env": {"CLAUDE_CODE_DISABLE_AUTO_MEMORY": "1"}})


def automem_workspace(root: Path, name: str) -> tuple[Path, Path]:
    """A workspace with a CLAUDE.md and a memory dir holding one memory and its MEMORY.md line."""
    home, proj = workspace(root, name)
    w(proj / "CLAUDE.md", f"# {name}\n")
    md = home / ".claude" / "projects" / slug(str(proj)) / "memory"
    w(md / "MEMORY.md", "- [Deploy](project_deploy.md) — make ship\n")
    w(md / "project_deploy.md", "---\nname: deploy\ndescription: make ship\ntype: project\n---\nmake ship\n")
    return home, proj


def o_automem_settings_env(root: Path) -> dict:
    """CLAUDE_CODE_DISABLE_AUTO_MEMORY set in a settings file's ``env`` block (as a memory plugin's
    installer writes it into ~/.claude/settings.json): auto memory off like the variable itself;
    runs: user settings; user settings with the shell's variable saying 0; project settings."""
    home, proj = automem_workspace(root, "o_automem_settings_env")
    w(home / ".claude" / "settings.json", AUTOMEM_OFF)
    return {"cwd": str(proj), "runs": [{"name": "base", "prompt": "hello there"},
                                       {"name": "shell_zero", "prompt": "hello there", "env": {"CLAUDE_CODE_DISABLE_AUTO_MEMORY": "0"}}]}


def o_automem_project_env(root: Path) -> dict:
    """The same switch in the project's .claude/settings.json ``env`` block (a -p run is trusted)."""
    _home, proj = automem_workspace(root, "o_automem_project_env")
    w(proj / ".claude" / "settings.json", AUTOMEM_OFF)
    return {"cwd": str(proj), "runs": [{"name": "base", "prompt": "hello there"}]}


BUILDERS = [
    o_html_kinds,
    o_html_containers,
    o_html_imports,
    o_import_escapes,
    o_import_list_text,
    o_html_frontmatter,
    o_linkref_comment,
    o_html_crlf,
    o_index_html,
    o_cloud_env_local,
    o_automem_settings_env,
    o_automem_project_env,
]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", default="/tmp/oracle-own/scen")
    a = ap.parse_args()
    root = Path(a.root).resolve()
    if root.exists():
        shutil.rmtree(root)
    root.mkdir(parents=True)
    for build in BUILDERS:
        spec = build(root)
        name = Path(spec["cwd"]).relative_to(root).parts[0]
        spec["name"] = name
        spec["home"] = str(root / name / "home")
        (root / name / "scenario.json").write_text(json.dumps(spec, indent=2))
        print(name)


if __name__ == "__main__":
    main()
