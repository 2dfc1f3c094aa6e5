"""Git roots, and the canonical root that all worktrees of one repository share (docs/behaviour.md §2).

Memory is about a *project*, not a directory: every worktree of a repository resolves to the
main repository's root, so they share one auto-memory dir. The validation follows the
reference (``resolveCanonicalRoot``): a ``.git`` file's ``gitdir:`` is trusted only when it sits
directly in ``<commondir>/worktrees/`` and its ``gitdir`` back-link resolves to this worktree's
``.git``. Anything forged or broken falls back to the worktree's own root, with a diagnostic.
"""

from __future__ import annotations

import os
import unicodedata
from dataclasses import dataclass
from pathlib import Path

from memtui.core.base.diagnostics import Diagnostic
from memtui.core.base.safe_read import read_regular


@dataclass(frozen=True, slots=True)
class GitRoots:
    """``git_root``: nearest ancestor holding ``.git`` (or ``None``); ``canonical``: the root
    shared by all worktrees (equal to ``git_root`` outside worktrees); ``diagnostics``."""

    git_root: Path | None
    canonical: Path | None
    diagnostics: tuple[Diagnostic, ...] = ()


def find_git_root(start: Path) -> Path | None:
    """The nearest ancestor of ``start`` (``start`` included) holding a ``.git`` entry — file or
    directory, an empty directory included (the reference only checks existence)."""
    current = Path(os.path.abspath(start))
    while True:
        if os.path.lexists(current / ".git"):
            return current
        if current.parent == current:
            return None
        current = current.parent


# git metadata files are one line; this bounds a hostile one (a FIFO, a link to /dev/zero).
_MAX_GIT_FILE = 64 * 1024


def _read(path: Path) -> str:
    """A small git metadata file's text. Raises ``OSError`` (FIFOs, devices, oversize included)."""
    data, _ = read_regular(path, _MAX_GIT_FILE)
    text = data.decode("utf-8", errors="replace").strip()
    if "\0" in text:
        raise OSError(22, "contains a NUL byte", str(path))
    return text


def canonical_git_root(git_root: Path) -> tuple[Path, list[Diagnostic]]:
    """The canonical root for ``git_root`` and the diagnostics explaining any fallback.

    Never raises: unreadable or forged worktree metadata yields ``git_root`` itself.
    """
    dot_git = git_root / ".git"
    diags: list[Diagnostic] = []
    if dot_git.is_dir():
        if not (dot_git / "HEAD").exists():
            diags.append(
                Diagnostic(
                    "git-not-a-repository",
                    "warning",
                    "`.git` here is not a repository (no HEAD); it still counts as the git root",
                    str(dot_git),
                )
            )
        return git_root, diags
    try:
        content = _read(dot_git)
    except OSError as exc:
        diags.append(Diagnostic("git-file-unreadable", "warning", f"cannot read .git file: {exc.strerror}", str(dot_git)))
        return git_root, diags
    target = content[len("gitdir:") :].strip() if content.startswith("gitdir:") else ""
    if not target or target == ".":
        diags.append(Diagnostic("git-file-invalid", "warning", "`.git` file has no usable `gitdir:` line", str(dot_git)))
        return git_root, diags
    worktree_git_dir = Path(os.path.normpath(git_root / target))
    commondir_file = worktree_git_dir / "commondir"
    try:
        is_dir = worktree_git_dir.is_dir()
    except (OSError, ValueError):
        is_dir = False
    if not is_dir:
        diags.append(
            Diagnostic(
                "worktree-broken",
                "warning",
                f"`gitdir:` points at {worktree_git_dir}, which is not a directory; using this directory as the root",
                str(dot_git),
            )
        )
        return git_root, diags
    if not os.path.lexists(commondir_file):
        # A submodule's git dir has no commondir: it keeps its own root (no finding).
        return git_root, diags
    try:
        common_dir = Path(os.path.normpath(worktree_git_dir / _read(commondir_file)))
    except OSError as exc:
        diags.append(Diagnostic("worktree-broken", "warning", f"cannot read {commondir_file}: {exc.strerror}", str(dot_git)))
        return git_root, diags
    if Path(os.path.normpath(worktree_git_dir.parent)) != common_dir / "worktrees":
        diags.append(
            Diagnostic(
                "worktree-forged",
                "warning",
                f"{worktree_git_dir} is not directly inside {common_dir / 'worktrees'}; not sharing the main repository's memory",
                str(dot_git),
            )
        )
        return git_root, diags
    try:
        backlink = Path(os.path.realpath(_read(worktree_git_dir / "gitdir")))
    except (OSError, ValueError) as exc:
        diags.append(Diagnostic("worktree-broken", "warning", f"cannot read the worktree back-link: {getattr(exc, 'strerror', None) or exc}", str(dot_git)))
        return git_root, diags
    if backlink != Path(os.path.realpath(git_root)) / ".git" and not os.path.lexists(backlink.parent):
        # the folder the back-link names is gone: the worktree was moved (git's own
        # `git worktree repair` case), not forged
        main = common_dir.parent if common_dir.name == ".git" else common_dir
        diags.append(
            Diagnostic(
                "worktree-moved",
                "warning",
                f"this worktree was moved from {backlink.parent} without `git worktree repair`: it keeps a memory dir of its own, "
                f"apart from the main repository's; `git -C {main} worktree repair {git_root}` links it again",
                str(dot_git),
            )
        )
        return git_root, diags
    if backlink != Path(os.path.realpath(git_root)) / ".git":
        diags.append(
            Diagnostic(
                "worktree-forged",
                "warning",
                f"the worktree back-link points at {backlink}, not at this worktree; not sharing the main repository's memory",
                str(dot_git),
            )
        )
        return git_root, diags
    if common_dir.name != ".git":  # a bare repository's worktree: the common dir itself
        return Path(unicodedata.normalize("NFC", str(common_dir))), diags
    return Path(unicodedata.normalize("NFC", str(common_dir.parent))), diags


def resolve_git_roots(start: Path) -> GitRoots:
    """Both roots for a project directory ``start``."""
    root = find_git_root(start)
    if root is None:
        return GitRoots(None, None, ())
    canonical, diags = canonical_git_root(root)
    return GitRoots(root, canonical, tuple(diags))
