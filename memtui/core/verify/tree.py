"""The project's files as claims are checked against them: what exists, honouring ignores.

In a git repository the list is git's own: ``git ls-files --cached --others --exclude-standard``
(tracked files and untracked files no ignore rule hides), minus ``git ls-files --deleted``. A
repository git cannot read (no ``git`` on PATH, an unsafe owner, an empty ``.git``) and a plain
directory are walked instead, skipping what the ``.gitignore`` files say (``pathspec``'s
``GitIgnoreSpec``, one per directory that has one) and ``.git`` itself.

Both stop at ``MAX_FILES`` files, the walk also after ``WALK_TIMEOUT_S`` (memtui's bounds; a
listing cut short is ``complete=False``).
"""

from __future__ import annotations

import os
import posixpath
import re
import subprocess
import time
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from pathspec import GitIgnoreSpec

from memtui.core.base.safe_read import read_regular

# memtui's bounds: files listed, seconds a git command or the walk may take, bytes read to
# count lines.
MAX_FILES = 2_000_000
GIT_TIMEOUT_S = 30.0
WALK_TIMEOUT_S = 20.0
MAX_READ_BYTES = 16 * 1024 * 1024
_HEADING = re.compile(r"^ {0,3}#{1,6}[ \t]+(.+?)[ \t#]*$", re.MULTILINE)
_HTML_ANCHOR = re.compile(r"<a\s+(?:name|id)=[\"']([^\"']+)[\"']", re.IGNORECASE)
_EXPLICIT_ID = re.compile(r"\{#([\w-]+)\}")


def git_env() -> dict[str, str]:
    """The environment memtui runs git in: no pager, no prompts, no optional locks (a
    read-only look must not take ``index.lock`` from a running git), C locale."""
    return {
        **os.environ,
        "GIT_OPTIONAL_LOCKS": "0",
        "GIT_TERMINAL_PROMPT": "0",
        "GIT_PAGER": "cat",
        "LC_ALL": "C",
    }


def _git_lines(root: Path, *args: str, timeout: float = GIT_TIMEOUT_S) -> list[str] | None:
    """The NUL-separated output of ``git -C root args`` or ``None`` when git fails."""
    try:
        proc = subprocess.run(
            ["git", "-C", str(root), *args],
            capture_output=True,
            timeout=timeout,
            env=git_env(),
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if proc.returncode != 0:
        return None
    return [p for p in proc.stdout.decode("utf-8", errors="surrogateescape").split("\0") if p]


def github_slug(heading: str) -> str:
    """The anchor GitHub gives a Markdown heading: lower case, punctuation dropped (``-`` and
    ``_`` kept), spaces to ``-``."""
    text = re.sub(r"`|\*\*|__|\[([^\]]*)\]\([^)]*\)", r"\1", heading.strip()).lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


@dataclass
class ProjectTree:
    """The files of ``root`` (POSIX relpaths) and how they were listed.

    ``source``: ``"git"`` or ``"walk"``; ``complete``: not cut at ``MAX_FILES``; ``excluded``:
    relpath prefixes left out (the memory dir when it lies inside the project).
    """

    root: Path
    files: frozenset[str]
    source: str
    complete: bool = True
    excluded: tuple[str, ...] = ()
    _lines: dict[str, int | None] = field(default_factory=dict)
    _anchors: dict[str, frozenset[str]] = field(default_factory=dict)

    @cached_property
    def dirs(self) -> frozenset[str]:
        """Every directory holding a listed file (POSIX relpaths, no ``""``)."""
        out: set[str] = set()
        for f in self.files:
            d = posixpath.dirname(f)
            while d and d not in out:
                out.add(d)
                d = posixpath.dirname(d)
        return frozenset(out)

    @cached_property
    def by_name(self) -> dict[str, list[str]]:
        """Base name → the files and directories of that name (sorted)."""
        out: dict[str, list[str]] = defaultdict(list)
        for p in (*self.files, *self.dirs):
            out[p.rsplit("/", 1)[-1]].append(p)
        for v in out.values():
            v.sort()
        return dict(out)

    @cached_property
    def children(self) -> dict[str, list[str]]:
        """Directory (``""`` for the root) → the files and directories directly in it."""
        out: dict[str, list[str]] = defaultdict(list)
        for p in (*self.files, *self.dirs):
            out[posixpath.dirname(p)].append(p)
        return dict(out)

    @cached_property
    def by_prefix(self) -> dict[str, list[str]]:
        """The first three characters of a base name, lower-cased → the base names."""
        out: dict[str, list[str]] = defaultdict(list)
        for name in self.by_name:
            out[name[:3].lower()].append(name)
        return dict(out)

    @cached_property
    def top_dirs(self) -> frozenset[str]:
        """The directories at the root."""
        return frozenset(d for d in self.dirs if "/" not in d)

    def find(self, path: str, *, directory: bool | None = None) -> list[str]:
        """The listed paths ``path`` names: itself, or any path ending in ``/path`` (a memory
        often writes a path from a sub-project). ``directory``: ``True`` only directories,
        ``False`` only files, ``None`` both."""
        name = path.rsplit("/", 1)[-1]
        out = []
        for p in self.by_name.get(name, ()):
            if p != path and not p.endswith("/" + path):
                continue
            is_dir = p in self.dirs
            if directory is None or directory == is_dir:
                out.append(p)
        return out

    def is_dir(self, relpath: str) -> bool:
        """Whether ``relpath`` is a listed directory."""
        return relpath in self.dirs

    def exists_on_disk(self, relpath: str) -> bool:
        """Whether ``relpath`` exists below the root (ignored and untracked files included)."""
        return os.path.lexists(self.root / relpath)

    def remember_lines(self, relpath: str, data: bytes) -> None:
        """Note the line count of ``relpath``, whose bytes a caller has just read."""
        self._lines[relpath] = data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)

    def line_count(self, relpath: str) -> int | None:
        """Lines of the file (a last line without a newline counts), ``None`` when unreadable."""
        if relpath not in self._lines:
            try:
                data, _ = read_regular(self.root / relpath, MAX_READ_BYTES)
            except OSError:
                self._lines[relpath] = None
            else:
                self._lines[relpath] = data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)
        return self._lines[relpath]

    def anchors(self, relpath: str) -> frozenset[str]:
        """The anchors of a Markdown file: its headings' GitHub slugs (a repeated heading gets
        ``-1``, ``-2``…), ``<a name=…>`` and ``{#id}``."""
        if relpath not in self._anchors:
            try:
                data, _ = read_regular(self.root / relpath, MAX_READ_BYTES)
            except OSError:
                self._anchors[relpath] = frozenset()
                return self._anchors[relpath]
            text = data.decode("utf-8", errors="replace")
            slugs: set[str] = set()
            counts: dict[str, int] = {}
            for m in _HEADING.finditer(text):
                slug = github_slug(_EXPLICIT_ID.sub("", m.group(1)))
                n = counts.get(slug, 0)
                counts[slug] = n + 1
                slugs.add(slug if n == 0 else f"{slug}-{n}")
            slugs.update(m.group(1) for m in _HTML_ANCHOR.finditer(text))
            slugs.update(m.group(1) for m in _EXPLICIT_ID.finditer(text))
            self._anchors[relpath] = frozenset(slugs)
        return self._anchors[relpath]

    def ignored(self, relpaths: Sequence[str]) -> set[str]:
        """Which of ``relpaths`` an ignore rule hides (git's ``check-ignore``; the walk's
        ``.gitignore`` specs without git)."""
        if not relpaths:
            return set()
        if self.source == "git":
            try:
                proc = subprocess.run(
                    ["git", "-C", str(self.root), "check-ignore", "-z", "--stdin"],
                    input="\0".join(relpaths).encode("utf-8", errors="surrogateescape") + b"\0",
                    capture_output=True,
                    timeout=GIT_TIMEOUT_S,
                    env=git_env(),
                )
            except (OSError, subprocess.SubprocessError):
                return set()
            return {p for p in proc.stdout.decode("utf-8", errors="surrogateescape").split("\0") if p}
        out = set()
        for rel in relpaths:
            if _walk_ignored(self.root, rel):
                out.add(rel)
        return out


def _exclusions(root: Path, exclude: Iterable[Path]) -> tuple[str, ...]:
    out = []
    for path in exclude:
        try:
            rel = Path(os.path.abspath(path)).relative_to(os.path.abspath(root)).as_posix()
        except ValueError:
            continue
        if rel and rel != ".":
            out.append(rel)
    return tuple(out)


def _outside(rel: str, excluded: tuple[str, ...]) -> bool:
    return not any(rel == e or rel.startswith(e + "/") for e in excluded)


def list_tree(root: Path, *, exclude: Iterable[Path] = (), max_files: int = MAX_FILES) -> ProjectTree:
    """The files of ``root`` (see the module doc), without the paths below ``exclude``."""
    excluded = _exclusions(root, exclude)
    if os.path.lexists(root / ".git"):
        listed = _git_lines(root, "ls-files", "-z", "--cached", "--others", "--exclude-standard")
        if listed is not None:
            deleted = set(_git_lines(root, "ls-files", "-z", "--deleted") or ())
            files = [p for p in dict.fromkeys(listed) if p not in deleted and _outside(p, excluded)]
            complete = len(files) <= max_files
            return ProjectTree(root, frozenset(files[:max_files]), "git", complete, excluded)
    files, complete = _walk(root, excluded, max_files, time.monotonic() + WALK_TIMEOUT_S)
    return ProjectTree(root, frozenset(files), "walk", complete, excluded)


def _read_ignore(path: Path) -> GitIgnoreSpec | None:
    try:
        data, _ = read_regular(path, 1024 * 1024)
    except OSError:
        return None
    return GitIgnoreSpec.from_lines(data.decode("utf-8", errors="replace").splitlines())


def _walk(root: Path, excluded: tuple[str, ...], max_files: int, deadline: float) -> tuple[list[str], bool]:
    """Walk ``root`` skipping ``.git`` and what each directory's ``.gitignore`` hides
    (patterns relative to their own directory, as git reads them). Symlinked directories are
    not followed. Stops (incomplete) at ``max_files`` files or at ``deadline``."""
    files: list[str] = []
    specs: list[tuple[str, GitIgnoreSpec]] = []
    top = os.fspath(root)
    for dirpath, dirnames, filenames in os.walk(top):
        if time.monotonic() > deadline:
            return files, False
        rel_dir = os.path.relpath(dirpath, top)
        rel_dir = "" if rel_dir == "." else Path(rel_dir).as_posix()
        specs = [(d, s) for d, s in specs if rel_dir == d or rel_dir.startswith(d + "/") or d == ""]
        if ".gitignore" in filenames:
            spec = _read_ignore(Path(dirpath) / ".gitignore")
            if spec is not None:
                specs.append((rel_dir, spec))

        def hidden(rel: str, is_dir: bool) -> bool:
            for base, spec in specs:
                sub = rel[len(base) + 1 :] if base else rel
                if spec.match_file(sub + "/" if is_dir else sub):
                    return True
            return False

        kept = []
        for d in sorted(dirnames):
            rel = f"{rel_dir}/{d}" if rel_dir else d
            if d == ".git" or not _outside(rel, excluded) or hidden(rel, True):
                continue
            kept.append(d)
        dirnames[:] = kept
        for f in sorted(filenames):
            rel = f"{rel_dir}/{f}" if rel_dir else f
            if _outside(rel, excluded) and not hidden(rel, False):
                files.append(rel)
                if len(files) >= max_files:
                    return files, False
    return files, True


def _walk_ignored(root: Path, rel: str) -> bool:
    """Whether a ``.gitignore`` on the way from ``root`` to ``rel`` hides it."""
    parts = rel.split("/")
    for i in range(len(parts)):
        base = "/".join(parts[:i])
        spec = _read_ignore(root / base / ".gitignore") if os.path.exists(root / base / ".gitignore") else None
        if spec is None:
            continue
        sub = "/".join(parts[i:])
        if spec.match_file(sub) or spec.match_file(sub + "/"):
            return True
    return False
