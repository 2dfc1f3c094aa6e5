"""A CLI release's rules for its memory agents, as Claude Code 2.1.328 states them in its
refusals: Write/Edit only on ``.md`` paths inside the memory dir, ``rm`` with no option but
``-f`` of ``.md`` files there (outside ``.git`` and ``agents``), and its own refusal texts."""

from __future__ import annotations

from pathlib import Path

from memtui.core.agent import ToolPolicy, execute

SHELL = "Only read-only shell commands and rm (no flags except -f) of .md files under {d}/ (not protected subdirectories like .git or agents) are permitted in this context (ls, find, grep, cat, stat, wc, head, tail, and similar)"
TOOL = "only Read, Grep, Glob, read-only Bash, and Edit/Write within {d}/ are allowed"


def policy(root: Path) -> ToolPolicy:
    return ToolPolicy(write_root=root, cwd=root, write_suffixes=(".md",), remove_md=True, protected_dirs=(".git", "agents"),
                      denials={"shell": SHELL.format(d=root), "tool": TOOL.format(d=root)})


def test_rm_removes_md_files_inside_and_nothing_else(tmp_path: Path) -> None:
    root = tmp_path / "mem"
    (root / "agents").mkdir(parents=True)
    for name in ("a.md", "b.md", "c.txt", "agents/x.md"):
        (root / name).write_text("x")
    (tmp_path / "outside.md").write_text("x")
    p = policy(root)
    ok = execute(p, "Bash", {"command": f"rm {root}/a.md"})
    assert not ok.is_error and ok.removed == ((root / "a.md").resolve(),) and not (root / "a.md").exists()
    assert not execute(p, "Bash", {"command": f"rm -f {root}/gone.md"}).is_error  # -f: a missing file is fine
    assert execute(p, "Bash", {"command": f"rm {root}/gone.md"}).code == "not-found"
    for command in (f"rm -r {root}/b.md", f"rm {root}/c.txt", f"rm {tmp_path}/outside.md", f"rm {root}/agents/x.md", f"rm {root}/b.md; ls"):
        out = execute(p, "Bash", {"command": command})
        assert out.is_error and out.content == SHELL.format(d=root), command
    assert (root / "b.md").exists() and (root / "c.txt").exists() and (tmp_path / "outside.md").exists() and (root / "agents/x.md").exists()


def test_write_and_edit_only_md_inside_with_the_release_text(tmp_path: Path) -> None:
    root = tmp_path / "mem"
    root.mkdir()
    p = policy(root)
    assert not execute(p, "Write", {"file_path": str(root / "n.md"), "content": "x"}).is_error
    for args in ({"file_path": str(root / "n.txt"), "content": "x"}, {"file_path": str(tmp_path / "o.md"), "content": "x"}, {"file_path": str(root / "a:b.md"), "content": "x"}):
        out = execute(p, "Write", args)
        assert out.is_error and out.content == TOOL.format(d=root), args
    out = execute(p, "Bash", {"command": f"echo escaped > {tmp_path}/x.txt"})
    assert out.is_error and out.content == SHELL.format(d=root)
    assert execute(p, "Bash", {"command": f"ls {root}"}).content.strip() == "n.md"  # read-only: runs
    assert execute(p, "WebFetch", {"url": "x"}).content == TOOL.format(d=root)


def test_without_the_release_rules_rm_stays_refused(tmp_path: Path) -> None:
    root = tmp_path / "mem"
    root.mkdir()
    (root / "a.md").write_text("x")
    out = execute(ToolPolicy(write_root=root, cwd=root), "Bash", {"command": f"rm {root}/a.md"})
    assert out.is_error and out.code == "bash-not-allowed" and (root / "a.md").exists()
