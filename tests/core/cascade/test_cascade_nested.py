"""The nested instruction files below the cwd, listed before any read (docs/behaviour.md §3.5):
each waits for a read under its folder; the search is bounded and skips what a project walk
skips."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from support.cascade import write

from memtui.core.cascade import compute_cascade, list_nested, new_session, simulate_read
from memtui.core.cascade import nested as nested_module
from memtui.core.places.flavor import AGENT, CLAUDE, Flavor
from memtui.core.places.locations import resolve_locations


def listed(p: Path, flavor: Flavor = AGENT) -> list[tuple[str, str, str]]:
    """(path relative to ``p``, status, loads_when) of every nested file, in listing order."""
    c = compute_cascade(resolve_locations(flavor, p), p, nested=True)
    assert c.nested is not None
    return [(Path(f.path).relative_to(p).as_posix(), f.status, f.loads_when) for f in c.nested.files]


def test_nested_files_are_listed_with_the_read_that_loads_them(tmp_path: Path) -> None:
    p = tmp_path / "p"
    write(p, "AGENT.md", "top")
    write(p, "sub/AGENT.md", "sub rules\n@notes.md\n")
    write(p, "sub/notes.md", "notes")
    write(p, "sub/AGENT.local.md", "mine")
    write(p, "sub/.agent/AGENT.md", "dot")
    write(p, "sub/.agent/rules/always.md", "always")
    write(p, "sub/.agent/rules/py.md", '---\npaths: "*.py"\n---\npy')
    write(p, "sub/deeper/AGENT.md", "deeper")
    write(p, "other/readme.txt", "no instructions here")
    when = "loads when the agent reads a file under sub/"
    assert listed(p) == [
        ("sub/AGENT.md", "nested", when),
        ("sub/notes.md", "nested", when),  # its import comes with it
        ("sub/.agent/AGENT.md", "nested", when),
        ("sub/AGENT.local.md", "nested", when),
        ("sub/.agent/rules/always.md", "nested", when),
        ("sub/.agent/rules/py.md", "nested", f"{when} matching `*.py`"),
        ("sub/deeper/AGENT.md", "nested", "loads when the agent reads a file under sub/deeper/"),
    ]


def test_the_startup_cascade_is_unchanged_and_the_listing_is_asked_for(tmp_path: Path) -> None:
    p = tmp_path / "p"
    write(p, "AGENT.md", "top")
    write(p, "sub/AGENT.md", "sub")
    plain = compute_cascade(resolve_locations(AGENT, p), p)
    searched = compute_cascade(resolve_locations(AGENT, p), p, nested=True)
    assert plain.nested is None and "nested" not in plain.to_json()
    assert [f.path for f in searched.files] == [f.path for f in plain.files] == [str(p / "AGENT.md")]
    assert searched.rendered == plain.rendered
    assert searched.nested is not None
    nested = searched.to_json()["nested"]
    assert [(f["path"], f["loaded"], f["loads_when"]) for f in nested["files"]] == [
        (str(p / "sub/AGENT.md"), False, "loads when the agent reads a file under sub/")
    ]
    assert nested["complete"] is True and nested["folders"] == 2  # p and p/sub


def test_the_claude_flavor_names_claude(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")  # no `claude` to ask for its version
    p = tmp_path / "p"
    write(p, "sub/CLAUDE.md", "Use pnpm.")
    write(p, "sub/CLAUDE.local.md", "mine")
    write(p, "sub/.claude/rules/style.md", "style")
    when = "loads when Claude reads a file under sub/"
    assert listed(p, CLAUDE) == [
        ("sub/CLAUDE.md", "nested", when),
        ("sub/CLAUDE.local.md", "nested", when),
        ("sub/.claude/rules/style.md", "nested", when),
    ]


def test_the_listing_is_what_a_read_under_the_folder_loads(tmp_path: Path) -> None:
    p = tmp_path / "p"
    write(p, "sub/AGENT.md", "sub\n@notes.md\n")
    write(p, "sub/notes.md", "notes")
    write(p, "sub/AGENT.local.md", "mine")
    write(p, "sub/.agent/rules/always.md", "always")
    write(p, "sub/.agent/rules/py.md", '---\npaths: "*.py"\n---\npy')
    write(p, "sub/x.py", "")
    c = compute_cascade(resolve_locations(AGENT, p), p, nested=True)
    assert c.nested is not None
    step = simulate_read(c, new_session(c), "sub/x.py")
    # x.py matches the conditional rule: everything listed for sub/ loads, and only that
    assert sorted(f.path for f in step.added) == sorted(f.path for f in c.nested.files)
    # the listing keeps what the read brings: sizes and the text it would add
    by_path = {f.path: f for f in c.nested.files}
    for added in step.added:
        assert (by_path[added.path].chars, by_path[added.path].content) == (added.chars, added.content)
    assert by_path[str(p / "sub/notes.md")].content == "notes"


def test_files_that_would_not_load_keep_their_reason(tmp_path: Path) -> None:
    p = tmp_path / "p"
    write(p, "sub/AGENT.md", "   \n")  # whitespace only
    write(p, "lib/AGENT.md", "@../../outside.md\n")
    write(tmp_path, "outside.md", "outside")
    c = compute_cascade(resolve_locations(AGENT, p), p, nested=True)
    assert c.nested is not None
    # a nested file never follows an import outside the cwd; an empty one is dropped
    assert [(f.path, f.status) for f in c.nested.files] == [
        (str(p / "lib/AGENT.md"), "nested"),
        (str(tmp_path / "outside.md"), "external-lazy"),
        (str(p / "sub/AGENT.md"), "empty"),
    ]
    assert [f.loads_when for f in c.nested.files][1:] == ["", ""]


def test_an_import_of_a_nested_conditional_rule_loads_with_the_folder_not_at_startup(tmp_path: Path) -> None:
    p = tmp_path / "p"
    write(p, "sub/.agent/rules/py.md", '---\npaths: "*.py"\n---\npy\n@../../docs/shared.md\n')
    write(p, "sub/docs/shared.md", "shared")
    c = compute_cascade(resolve_locations(AGENT, p), p, nested=True)
    assert c.nested is not None
    [rule, shared] = c.nested.files
    assert (rule.path, shared.path, shared.parent) == (str(p / "sub/.agent/rules/py.md"), str(p / "sub/docs/shared.md"), rule.path)
    # the agent's quirk: the import of a waiting conditional rule loads with its folder's files
    assert shared.status == "nested" and shared.loads_when == "loads when the agent reads a file under sub/"
    assert "at startup" not in shared.reason and "with the folder's other files on that read" in shared.reason


def test_the_search_skips_dependencies_ignored_folders_and_links(tmp_path: Path) -> None:
    p = tmp_path / "p"
    (p / ".git").mkdir(parents=True)
    write(p, ".gitignore", "build/\nAGENT.local.md\n")
    write(p, "src/AGENT.md", "src")
    write(p, "src/AGENT.local.md", "mine: ignored by git, loaded by the agent all the same")
    write(p, "build/AGENT.md", "generated")
    write(p, "node_modules/pkg/AGENT.md", "a dependency's")
    write(p, ".venv/lib/AGENT.md", "a virtual environment's")
    write(tmp_path, "elsewhere/AGENT.md", "through a link")
    os.symlink(tmp_path / "elsewhere", p / "linked")
    assert [rel for rel, _, _ in listed(p)] == ["src/AGENT.md", "src/AGENT.local.md"]


def test_a_gitignore_above_the_cwd_counts(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    write(repo, ".gitignore", "dist/\n")
    p = repo / "app"
    write(p, "dist/AGENT.md", "generated")
    write(p, "web/AGENT.md", "web")
    assert [rel for rel, _, _ in listed(p)] == ["web/AGENT.md"]


def test_the_search_is_bounded_and_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    p = tmp_path / "p"
    write(p, "a/AGENT.md", "a")
    write(p, "a/b/AGENT.md", "b")
    write(p, "a/b/c/AGENT.md", "c")
    monkeypatch.setattr(nested_module, "MAX_NESTED_DEPTH", 2)
    c = compute_cascade(resolve_locations(AGENT, p), p)
    listing = list_nested(c)
    # p is level 0: a and a/b are searched, a/b/c is not
    assert [Path(f.path).relative_to(p).as_posix() for f in listing.files] == ["a/AGENT.md", "a/b/AGENT.md"]
    assert not listing.complete and listing.stopped == "folders more than 2 levels below the project are not searched"
    monkeypatch.setattr(nested_module, "MAX_NESTED_DEPTH", 12)
    monkeypatch.setattr(nested_module, "MAX_NESTED_FOLDERS", 2)
    listing = list_nested(c)
    # breadth first: p, then a; a/b is the third folder
    assert [Path(f.path).relative_to(p).as_posix() for f in listing.files] == ["a/AGENT.md"]
    assert not listing.complete and listing.stopped == "the search stopped after 2 folders"
    assert listing.folders == 2
