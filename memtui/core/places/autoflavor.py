"""Which flavor a project uses, when nobody said (``--flavor auto``, the default).

A project set up for Claude Code has Claude Code's files (``CLAUDE.md``, ``CLAUDE.local.md``,
``.claude/`` in the project or up to its git root, ``~/.claude/CLAUDE.md``, or
``~/.claude/projects/<slug>/`` with its transcripts and memory); one set up for the seed design
has the ``agent`` flavor's. ``auto`` picks ``claude`` when Claude Code's files are there and the
``agent`` flavor's are absent, else ``agent`` (the seed design is the default when both or
neither are there). The choice carries the reason, for a header or a ``where`` line.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Literal

from memtui.core.places.flavor import AGENT, CLAUDE, FLAVORS, Flavor, UnknownFlavorError, home_dir
from memtui.core.places.gitroot import resolve_git_roots
from memtui.core.places.locations import Locations, resolve_locations
from memtui.core.places.profiles import ReleaseChoice
from memtui.core.places.slug import slugify

# ``--flavor`` accepts a flavor's name or this.
AUTO = "auto"
FLAVOR_CHOICES: tuple[str, ...] = (AUTO, *sorted(FLAVORS))
ChoiceSource = Literal["flag", "env", "auto"]


@dataclass(frozen=True, slots=True)
class FlavorChoice:
    """The flavor memtui uses and why.

    ``source``: ``"flag"`` (``--flavor NAME``), ``"env"`` (``$MEMTUI_FLAVOR``) or ``"auto"``
    (detected); ``found``: for ``auto``, each flavor's name -> the files of that flavor found
    for the project (shown as ``~/…`` below HOME, else absolute); ``reason``: one short line;
    ``release``: the release profile ``flavor`` is at and why, once chosen
    (``memtui.core.sessions.version.choose_release``; ``None`` before: the flavor's newest).
    """

    flavor: Flavor
    source: ChoiceSource
    reason: str
    found: Mapping[str, tuple[str, ...]]
    release: ReleaseChoice | None = None

    def at_release(self, flavor: Flavor, release: ReleaseChoice) -> FlavorChoice:
        """This choice with ``flavor`` (a release profile of the same flavor) and why."""
        return replace(self, flavor=flavor, release=release)

    @classmethod
    def given(cls, flavor: Flavor) -> FlavorChoice:
        """``flavor``, chosen by the caller (as ``--flavor NAME`` would)."""
        return cls(flavor, "flag", f"--flavor {flavor.name}", {})

    def other(self) -> Flavor:
        """The flavor not chosen, at its newest release profile."""
        return AGENT if self.flavor.name == CLAUDE.name else CLAUDE


def _shown(path: Path, home: Path, project: Path) -> str:
    """``path`` as a reader recognises it: ``~/…`` below HOME unless in the project, else
    relative to the project (``../.claude/`` in a parent), a dir with a trailing ``/``."""
    slash = "/" if path.is_dir() else ""
    if path.is_relative_to(home) and not path.is_relative_to(project):
        return f"~/{path.relative_to(home).as_posix()}{slash}"
    return f"{Path(os.path.relpath(path, project)).as_posix()}{slash}"


def flavor_files(flavor: Flavor, project: Path, environ: Mapping[str, str] | None = None) -> tuple[str, ...]:
    """The files of ``flavor`` that exist for the project at ``project`` (an absolute dir), as
    shown to the user: the instruction file, the local file and the dot dir in the project and
    each parent up to its git root; the user instruction file and ``<base>/projects/<slug>/``
    (the project's transcripts and memory) below the flavor's user base dir; the flavor's
    config-dir and memory-dir variables when set. Never raises (unreadable = absent)."""
    env = os.environ if environ is None else environ
    home = home_dir(env)
    roots = resolve_git_roots(project)
    dirs = [project]
    if roots.git_root is not None and project.is_relative_to(roots.git_root):
        current = project
        while current != roots.git_root and current.parent != current:
            current = current.parent
            dirs.append(current)
    candidates = [d / name for d in dirs for name in (flavor.instruction_file, flavor.local_file, flavor.dot_dir)]
    base = flavor.user_base_dir(env)
    if base != home:  # ~/.claude/ itself can be left by an install: only the files below it count
        candidates.append(base / flavor.instruction_file)
        slugs = dict.fromkeys(slugify(str(root)) for root in (project, roots.canonical) if root is not None)
        candidates.extend(base / "projects" / slug for slug in slugs)
    found: list[str] = []
    for path in candidates:
        try:
            if path.exists():
                found.append(_shown(path, home, project))
        except OSError:
            continue
    found.extend(f"${name}" for name in (flavor.config_dir_env, flavor.memory_dir_env) if env.get(name))
    return tuple(found)


def choose_flavor(name: str | None = None, project: Path | None = None, environ: Mapping[str, str] | None = None) -> FlavorChoice:
    """The flavor for ``project`` (default: the current directory): ``name`` (``--flavor``) when
    it names one, else ``$MEMTUI_FLAVOR`` when it names one, else (``None`` or ``"auto"``
    in either) detected: ``claude`` when Claude Code's files are there and the ``agent``
    flavor's are absent (``flavor_files``), else ``agent``.

    Raises ``UnknownFlavorError`` for a name other than ``agent``, ``claude`` or ``auto``.
    """
    env = os.environ if environ is None else environ
    for given, source, label in ((name, "flag", "--flavor "), (env.get("MEMTUI_FLAVOR"), "env", "MEMTUI_FLAVOR=")):
        chosen = (given or "").strip().lower()
        if not chosen or chosen == AUTO:
            continue
        if chosen not in FLAVORS:
            raise UnknownFlavorError(f"unknown flavor {chosen!r}: use 'auto', 'agent' or 'claude'")
        if source == "flag":
            return FlavorChoice.given(FLAVORS[chosen])
        return FlavorChoice(FLAVORS[chosen], "env", f"{label}{chosen}", {})
    root = Path(os.path.realpath(project if project is not None else os.getcwd()))
    found = {flavor.name: flavor_files(flavor, root, env) for flavor in (AGENT, CLAUDE)}
    agent_files, claude_files = found[AGENT.name], found[CLAUDE.name]
    if claude_files and not agent_files:
        return FlavorChoice(CLAUDE, "auto", f"auto: Claude Code's {_listed(claude_files)} found", found)
    if claude_files and agent_files:
        return FlavorChoice(AGENT, "auto", f"auto: both flavors' files found ({_listed(agent_files)}; {_listed(claude_files)})", found)
    if agent_files:
        return FlavorChoice(AGENT, "auto", f"auto: {_listed(agent_files)} found", found)
    return FlavorChoice(AGENT, "auto", "auto: no CLAUDE.md or .claude/ files for this project", found)


def _listed(files: tuple[str, ...], most: int = 2) -> str:
    """``a, b`` or ``a, b +3 more``."""
    shown = ", ".join(files[:most])
    return shown if len(files) <= most else f"{shown} +{len(files) - most} more"


@dataclass(frozen=True, slots=True)
class OtherFlavorHint:
    """The other flavor has files for a project whose memory dir is missing or empty: its
    ``name``, the ``files`` found (as ``flavor_files`` shows them) and its ``memory_dir`` when
    that one holds memory files (else ``None``)."""

    name: str
    files: tuple[str, ...]
    memory_dir: Path | None


def _has_memory_files(memory_dir: Path) -> bool:
    try:
        return memory_dir.is_dir() and next(memory_dir.rglob("*.md"), None) is not None
    except OSError:
        return False


def other_flavor_hint(loc: Locations, environ: Mapping[str, str] | None = None) -> OtherFlavorHint | None:
    """When ``loc``'s memory dir is missing or holds no ``.md`` file and the other flavor has
    files for this project (``flavor_files``), what it has; else ``None``. A memory dir given
    as an option (``--memory-dir``) is never second-guessed. Never raises."""
    if loc.memory_dir_source == "option" or _has_memory_files(loc.memory_dir):
        return None
    other = CLAUDE if loc.flavor.name == AGENT.name else AGENT
    files = flavor_files(other, loc.project_root, environ)
    if not files:
        return None
    other_dir = resolve_locations(other, loc.project_root, environ=environ).memory_dir
    return OtherFlavorHint(other.name, files, other_dir if _has_memory_files(other_dir) else None)
