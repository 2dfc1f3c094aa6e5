"""docs/behaviour.md §2 "Git root" and "Canonical git root".

- git root: nearest ancestor (start included) with a `.git` entry, file or directory; an empty
  `.git` dir counts and is flagged "`.git` here is not a repository".
- canonical root: a `.git` file `gitdir: X` is trusted only if X sits directly in
  `<commondir>/worktrees/` and `X/gitdir` resolves back to this worktree's `.git`; a bare repo's
  worktree uses the common dir itself; anything forged/broken falls back to the worktree's own
  root, with a diagnostic; a submodule (no commondir) keeps its own root.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import unicodedata
from pathlib import Path

import pytest

from memtui.core.places.gitroot import canonical_git_root, find_git_root, resolve_git_roots

GIT = shutil.which("git")
needs_git = pytest.mark.skipif(GIT is None, reason="git is not installed")


def git(*args: str, cwd: Path) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "init.defaultBranch=main", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
        env={**os.environ, "GIT_CONFIG_NOSYSTEM": "1"},
    )


def make_repo(path: Path) -> Path:
    path.mkdir(parents=True)
    git("init", "-q", cwd=path)
    (path / "f.txt").write_text("x\n")
    git("add", "f.txt", cwd=path)
    git("commit", "-q", "-m", "init", cwd=path)
    return path


def fake_git_dir(path: Path) -> Path:
    """A `.git`-like directory with a HEAD (enough to count as a repository)."""
    path.mkdir(parents=True)
    (path / "HEAD").write_text("ref: refs/heads/main\n")
    return path


def hand_made_worktree(common_dir: Path, worktree: Path, name: str = "wt", *, commondir: str = "../..") -> Path:
    """What `git worktree add` writes: `<common>/worktrees/<name>/{commondir,gitdir}` and a
    `.git` file in the worktree pointing there. Returns the worktree's git dir."""
    wt_git_dir = common_dir / "worktrees" / name
    wt_git_dir.mkdir(parents=True)
    (wt_git_dir / "commondir").write_text(commondir + "\n")
    (wt_git_dir / "gitdir").write_text(str(worktree / ".git") + "\n")
    (wt_git_dir / "HEAD").write_text("ref: refs/heads/wt\n")
    worktree.mkdir(parents=True, exist_ok=True)
    (worktree / ".git").write_text(f"gitdir: {wt_git_dir}\n")
    return wt_git_dir


# --- git root -------------------------------------------------------------------------------


def test_git_root_is_the_nearest_ancestor_with_dot_git(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    fake_git_dir(repo / ".git")
    deep = repo / "a" / "b"
    deep.mkdir(parents=True)
    assert find_git_root(deep) == repo
    assert find_git_root(repo) == repo


def test_git_root_nested_repo_wins_over_outer(tmp_path: Path) -> None:
    fake_git_dir(tmp_path / "outer" / ".git")
    fake_git_dir(tmp_path / "outer" / "inner" / ".git")
    (tmp_path / "outer" / "inner" / "src").mkdir()
    assert find_git_root(tmp_path / "outer" / "inner" / "src") == tmp_path / "outer" / "inner"


def test_dot_git_file_counts_as_git_root(tmp_path: Path) -> None:
    (tmp_path / "wt").mkdir()
    (tmp_path / "wt" / ".git").write_text("gitdir: /nowhere\n")
    assert find_git_root(tmp_path / "wt") == tmp_path / "wt"


def test_no_git_anywhere_gives_none(tmp_path: Path) -> None:
    if any((p / ".git").exists() for p in [tmp_path, *tmp_path.parents]):
        pytest.skip("an ancestor of tmp_path is inside a git repository")
    (tmp_path / "plain").mkdir()
    roots = resolve_git_roots(tmp_path / "plain")
    assert roots.git_root is None
    assert roots.canonical is None
    assert roots.diagnostics == ()


def test_empty_dot_git_dir_counts_and_is_flagged(tmp_path: Path) -> None:
    (tmp_path / "p" / ".git").mkdir(parents=True)
    roots = resolve_git_roots(tmp_path / "p")
    assert roots.git_root == tmp_path / "p"
    assert roots.canonical == tmp_path / "p"
    assert len(roots.diagnostics) == 1
    assert "`.git` here is not a repository" in roots.diagnostics[0].message


def test_dot_git_dir_with_head_is_not_flagged(tmp_path: Path) -> None:
    fake_git_dir(tmp_path / "p" / ".git")
    roots = resolve_git_roots(tmp_path / "p")
    assert roots.canonical == tmp_path / "p"
    assert roots.diagnostics == ()


# --- real git -------------------------------------------------------------------------------


@needs_git
def test_real_repo_canonical_root_is_itself(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "main")
    (repo / "sub").mkdir()
    roots = resolve_git_roots(repo / "sub")
    assert roots.git_root == repo
    assert roots.canonical == repo
    assert roots.diagnostics == ()


@needs_git
def test_real_worktree_shares_the_main_repository_root(tmp_path: Path) -> None:
    base = Path(os.path.realpath(tmp_path))
    repo = make_repo(base / "main")
    git("worktree", "add", "-q", str(base / "wt"), cwd=repo)
    (base / "wt" / "pkg").mkdir()
    roots = resolve_git_roots(base / "wt" / "pkg")
    assert roots.git_root == base / "wt"
    assert roots.canonical == repo
    assert roots.diagnostics == ()


@needs_git
def test_real_worktree_of_a_bare_repo_uses_the_common_dir(tmp_path: Path) -> None:
    base = Path(os.path.realpath(tmp_path))
    src = make_repo(base / "src")
    git("clone", "-q", "--bare", str(src), str(base / "repo.git"), cwd=base)
    git("worktree", "add", "-q", str(base / "bwt"), cwd=base / "repo.git")
    roots = resolve_git_roots(base / "bwt")
    assert roots.git_root == base / "bwt"
    assert roots.canonical == base / "repo.git"
    assert roots.diagnostics == ()


# --- hand-made worktree metadata --------------------------------------------------------------


def test_hand_made_valid_worktree_is_accepted(tmp_path: Path) -> None:
    main_git = fake_git_dir(tmp_path / "main" / ".git")
    hand_made_worktree(main_git, tmp_path / "wt")
    canonical, diags = canonical_git_root(tmp_path / "wt")
    assert canonical == tmp_path / "main"
    assert diags == []


def test_relative_gitdir_is_resolved_against_the_worktree(tmp_path: Path) -> None:
    main_git = fake_git_dir(tmp_path / "main" / ".git")
    hand_made_worktree(main_git, tmp_path / "wt")
    (tmp_path / "wt" / ".git").write_text("gitdir: ../main/.git/worktrees/wt\n")
    canonical, diags = canonical_git_root(tmp_path / "wt")
    assert canonical == tmp_path / "main"
    assert diags == []


def test_gitdir_outside_commondir_worktrees_is_forged(tmp_path: Path) -> None:
    main_git = fake_git_dir(tmp_path / "main" / ".git")
    # The worktree git dir lives in an attacker-chosen place whose commondir names the victim
    # repository and whose back-link is correct: still rejected (not in <common>/worktrees/).
    evil = tmp_path / "evil" / "wt1"
    evil.mkdir(parents=True)
    (evil / "commondir").write_text(str(main_git) + "\n")
    (evil / "gitdir").write_text(str(tmp_path / "wt" / ".git") + "\n")
    (tmp_path / "wt").mkdir()
    (tmp_path / "wt" / ".git").write_text(f"gitdir: {evil}\n")
    roots = resolve_git_roots(tmp_path / "wt")
    assert roots.git_root == tmp_path / "wt"
    assert roots.canonical == tmp_path / "wt"
    assert [d.code for d in roots.diagnostics] == ["worktree-forged"]


def test_gitdir_nested_deeper_than_worktrees_is_forged(tmp_path: Path) -> None:
    main_git = fake_git_dir(tmp_path / "main" / ".git")
    wt_git_dir = main_git / "worktrees" / "a" / "b"
    wt_git_dir.mkdir(parents=True)
    (wt_git_dir / "commondir").write_text(str(main_git))
    (wt_git_dir / "gitdir").write_text(str(tmp_path / "wt" / ".git"))
    (tmp_path / "wt").mkdir()
    (tmp_path / "wt" / ".git").write_text(f"gitdir: {wt_git_dir}")
    canonical, diags = canonical_git_root(tmp_path / "wt")
    assert canonical == tmp_path / "wt"
    assert [d.code for d in diags] == ["worktree-forged"]


def test_back_link_pointing_elsewhere_is_forged(tmp_path: Path) -> None:
    main_git = fake_git_dir(tmp_path / "main" / ".git")
    wt_git_dir = hand_made_worktree(main_git, tmp_path / "wt")
    (tmp_path / "other").mkdir()
    (wt_git_dir / "gitdir").write_text(str(tmp_path / "other" / ".git") + "\n")
    canonical, diags = canonical_git_root(tmp_path / "wt")
    assert canonical == tmp_path / "wt"
    assert [d.code for d in diags] == ["worktree-forged"]


def test_missing_back_link_file_falls_back_with_diagnostic(tmp_path: Path) -> None:
    main_git = fake_git_dir(tmp_path / "main" / ".git")
    wt_git_dir = hand_made_worktree(main_git, tmp_path / "wt")
    (wt_git_dir / "gitdir").unlink()
    canonical, diags = canonical_git_root(tmp_path / "wt")
    assert canonical == tmp_path / "wt"
    assert len(diags) == 1


def test_missing_gitdir_falls_back_with_diagnostic(tmp_path: Path) -> None:
    (tmp_path / "wt").mkdir()
    (tmp_path / "wt" / ".git").write_text(f"gitdir: {tmp_path / 'main' / '.git' / 'worktrees' / 'gone'}\n")
    roots = resolve_git_roots(tmp_path / "wt")
    assert roots.git_root == tmp_path / "wt"
    assert roots.canonical == tmp_path / "wt"
    assert [d.code for d in roots.diagnostics] == ["worktree-broken"]


def test_dot_git_file_without_gitdir_line_falls_back_with_diagnostic(tmp_path: Path) -> None:
    (tmp_path / "wt").mkdir()
    (tmp_path / "wt" / ".git").write_text("this is not git metadata\n")
    canonical, diags = canonical_git_root(tmp_path / "wt")
    assert canonical == tmp_path / "wt"
    assert len(diags) == 1


def test_hand_made_bare_repo_worktree_uses_the_common_dir(tmp_path: Path) -> None:
    bare = fake_git_dir(tmp_path / "proj.git")
    hand_made_worktree(bare, tmp_path / "wt")
    canonical, diags = canonical_git_root(tmp_path / "wt")
    assert canonical == tmp_path / "proj.git"
    assert diags == []


def test_submodule_without_commondir_keeps_its_own_root(tmp_path: Path) -> None:
    super_git = fake_git_dir(tmp_path / "super" / ".git")
    fake_git_dir(super_git / "modules" / "lib")  # a submodule's git dir: no commondir
    sub = tmp_path / "super" / "lib"
    sub.mkdir()
    (sub / ".git").write_text("gitdir: ../.git/modules/lib\n")
    roots = resolve_git_roots(sub)
    assert roots.git_root == sub
    assert roots.canonical == sub
    assert roots.diagnostics == ()


def test_canonical_root_is_nfc_normalised(tmp_path: Path) -> None:
    # The reference returns dirname(commonDir).normalize('NFC'): a main repo whose directory name
    # is stored decomposed (e + U+0301) is reported composed (U+00E9).
    nfd = "cafe\u0301"
    main_git = fake_git_dir(tmp_path / nfd / ".git")
    hand_made_worktree(main_git, tmp_path / "wt")
    canonical, _ = canonical_git_root(tmp_path / "wt")
    assert str(canonical) == unicodedata.normalize("NFC", str(tmp_path / nfd))
    assert str(canonical).endswith("caf\u00e9")


def test_worktree_reached_through_a_symlink_still_validates(tmp_path: Path) -> None:
    # The back-link is compared after realpath on both sides (git writes a realpath).
    base = Path(os.path.realpath(tmp_path))
    main_git = fake_git_dir(base / "main" / ".git")
    hand_made_worktree(main_git, base / "wt")
    (base / "link").symlink_to(base / "wt", target_is_directory=True)
    canonical, diags = canonical_git_root(base / "link")
    assert canonical == base / "main"
    assert diags == []


def test_a_worktree_moved_away_from_its_back_link_is_moved_not_forged(tmp_path: Path) -> None:
    # `git worktree add` then `mv wt wt-moved`: the admin dir's gitdir still names wt/.git, and
    # wt is gone — git's own `worktree repair` case.
    main_git = fake_git_dir(tmp_path / "main" / ".git")
    wt_git_dir = hand_made_worktree(main_git, tmp_path / "wt")
    (tmp_path / "wt").rename(tmp_path / "wt-moved")
    canonical, diags = canonical_git_root(tmp_path / "wt-moved")
    assert canonical == tmp_path / "wt-moved"
    assert [d.code for d in diags] == ["worktree-moved"]
    assert f"git -C {tmp_path / 'main'} worktree repair {tmp_path / 'wt-moved'}" in diags[0].message
    assert (wt_git_dir / "gitdir").read_text().strip() == str(tmp_path / "wt" / ".git")
