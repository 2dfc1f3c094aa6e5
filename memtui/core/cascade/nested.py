"""The nested instruction files below the cwd: what a read can load later (docs/behaviour.md §3.5).

The startup cascade walks *up* from the cwd. Below it, each folder's ``AGENT.md``,
``.agent/AGENT.md``, ``AGENT.local.md`` and ``.agent/rules/**/*.md`` wait until the agent
reads a file under that folder (``simulate_read`` loads them then). ``list_nested`` finds them
before any read, so the user sees what is there.

The search is memtui's, bounded so a large tree costs little: folders are visited breadth
first (shallow ones first), at most ``MAX_NESTED_DEPTH`` levels below the cwd and
``MAX_NESTED_FOLDERS`` folders in all, within ``NESTED_TIMEOUT_S`` seconds. It does not enter
symlinked folders, the folders in ``SKIPPED_FOLDERS`` (version control, dependency trees,
virtual environments, caches), the flavor's own dot folder (its files are that folder's own
instructions), nor a folder a ``.gitignore`` ignores (the ones between the git root and the
cwd included, read with ``pathspec``'s ``GitIgnoreSpec`` as ``memtui.core.verify.tree``'s walk
reads them). The instruction files themselves are listed even when ignored: ``AGENT.local.md``
is meant to be ignored, and the agent loads it anyway.
"""

from __future__ import annotations

import os
import time
from collections import deque
from pathlib import Path

from pathspec import GitIgnoreSpec

from memtui.core.base.safe_read import read_regular
from memtui.core.places.flavor import Flavor
from memtui.core.places.gitroot import find_git_root

from .imports import is_inside
from .loader import CascadeContext, Loader
from .model import Cascade, CascadeFile, NestedListing

# memtui's bounds on the search (not the agent's: it loads a nested file wherever it is).
MAX_NESTED_FOLDERS = 10_000
MAX_NESTED_DEPTH = 12
NESTED_TIMEOUT_S = 5.0
MAX_IGNORE_BYTES = 1024 * 1024  # a .gitignore larger than this is not read (as in verify.tree)
# Folders never searched: version control, dependency trees, virtual environments, caches.
SKIPPED_FOLDERS = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        "node_modules",
        "bower_components",
        "__pycache__",
        ".venv",
        "venv",
        ".tox",
        ".nox",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
    }
)
# How the agent is named in "loads when … reads a file under sub/", per flavor.
AGENT_NAMES = {"claude": "Claude"}


def agent_name(flavor: Flavor) -> str:
    """The agent as a sentence names it: ``Claude`` for the claude flavor, else ``the agent``."""
    return AGENT_NAMES.get(flavor.name, "the agent")


def list_nested(cascade: Cascade, *, timeout: float = NESTED_TIMEOUT_S) -> NestedListing:
    """The nested instruction files below ``cascade.cwd`` (see the module doc).

    Each folder's files are loaded as a read below it would load them (a lazy load: no
    external imports), so their content, size and findings are those the read would bring;
    then marked as not loaded. ``timeout``: seconds the search may take (memtui's bound).
    Never raises for anything on disk.
    """
    ctx = cascade.context
    assert isinstance(ctx, CascadeContext), "a Cascade made by compute_cascade"
    cwd = ctx.env.cwd
    flavor = ctx.locations.flavor
    listing = NestedListing()
    folders = _search(cwd, flavor, listing, time.monotonic() + timeout)
    agent = agent_name(flavor)
    for directory in sorted(folders, key=lambda d: d.relative_to(cwd).parts):
        listing.files.extend(_folder_files(ctx, directory, agent))
    return listing


def _search(cwd: Path, flavor: Flavor, listing: NestedListing, deadline: float) -> list[Path]:
    """The folders below ``cwd`` holding an instruction file, a dot folder or a local file."""
    found: list[Path] = []
    specs = _ancestor_specs(cwd)
    queue: deque[tuple[Path, int, list[tuple[Path, GitIgnoreSpec]]]] = deque([(cwd, 0, specs)])
    names = (flavor.instruction_file, flavor.local_file, flavor.dot_dir)
    while queue:
        directory, depth, specs = queue.popleft()
        if listing.folders >= MAX_NESTED_FOLDERS:
            listing.complete = False
            listing.stopped = f"the search stopped after {MAX_NESTED_FOLDERS:,} folders"
            break
        if time.monotonic() > deadline:
            listing.complete = False
            listing.stopped = f"the search stopped after {listing.folders:,} folders (it took too long)"
            break
        listing.folders += 1
        try:
            with os.scandir(directory) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError:
            continue
        present = {e.name for e in entries}
        if directory != cwd and any(n in present for n in names):
            found.append(directory)
        if ".gitignore" in present:
            spec = _read_ignore(directory / ".gitignore")
            if spec is not None:
                specs = [*specs, (directory, spec)]
        if depth >= MAX_NESTED_DEPTH:
            if any(_is_dir(e) for e in entries):
                listing.complete = False
                listing.stopped = f"folders more than {MAX_NESTED_DEPTH} levels below the project are not searched"
            continue
        for entry in entries:
            if not _is_dir(entry) or entry.name in SKIPPED_FOLDERS or entry.name == flavor.dot_dir:
                continue
            child = directory / entry.name
            if _ignored(child, specs):
                continue
            queue.append((child, depth + 1, specs))
    return found


def _is_dir(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir(follow_symlinks=False)
    except OSError:
        return False


def _read_ignore(path: Path) -> GitIgnoreSpec | None:
    try:
        data, _ = read_regular(path, MAX_IGNORE_BYTES)
    except OSError:
        return None
    return GitIgnoreSpec.from_lines(data.decode("utf-8", errors="replace").splitlines())


def _ancestor_specs(cwd: Path) -> list[tuple[Path, GitIgnoreSpec]]:
    """The ``.gitignore`` files from the git root down to the cwd's parent (each applies below
    its own folder); none outside a repository."""
    root = find_git_root(cwd)
    if root is None or root == cwd:
        return []
    out: list[tuple[Path, GitIgnoreSpec]] = []
    current = cwd.parent
    chain: list[Path] = []
    while is_inside(current, root):
        chain.append(current)
        if current == root or current == current.parent:
            break
        current = current.parent
    for directory in reversed(chain):
        spec = _read_ignore(directory / ".gitignore") if os.path.lexists(directory / ".gitignore") else None
        if spec is not None:
            out.append((directory, spec))
    return out


def _ignored(folder: Path, specs: list[tuple[Path, GitIgnoreSpec]]) -> bool:
    """Whether a ``.gitignore`` of ``specs`` ignores ``folder`` (patterns relative to their own
    folder, as git reads them)."""
    for base, spec in specs:
        rel = folder.relative_to(base).as_posix()
        if spec.match_file(rel + "/"):
            return True
    return False


def _folder_files(ctx: CascadeContext, directory: Path, agent: str) -> list[CascadeFile]:
    """``directory``'s instruction files and rules as a read below it loads them, marked as
    waiting for that read."""
    flavor = ctx.locations.flavor
    rel = directory.relative_to(ctx.env.cwd).as_posix() + "/"
    when = f"loads when {agent} reads a file under {rel}"
    loader = Loader(ctx.env, set(), lazy=True)
    dot = directory / flavor.dot_dir
    entries: list[CascadeFile] = []
    for file_path, layer, what in (
        (directory / flavor.instruction_file, "project", "nested project instructions"),
        (dot / flavor.instruction_file, "project", "nested project instructions"),
        (directory / flavor.local_file, "local", "nested private local instructions"),
    ):
        for e in loader.process_file(file_path, layer, "instructions", False):  # type: ignore[arg-type]
            if e.depth == 0 and e.loaded:
                e.reason = f"{what} of {rel}"
            entries.append(e)
    entries += loader.process_rules(dot / "rules", "project", False, conditional_rule=False)
    for e in entries:
        if e.loaded:
            e.loaded = False
            e.status = "nested"
            e.loads_when = when
            e.reason = f"{when}: {e.reason}" if e.reason else when
        elif e.status == "conditional":
            patterns = ", ".join(f"`{p}`" for p in e.patterns)
            e.status = "nested"
            e.loads_when = f"{when} matching {patterns}"
            e.reason = f"conditional rule: {e.loads_when} (patterns relative to {rel})"
    return entries
