"""The embedded demo workspace behind ``memtui demo``.

The template under ``memtui/demo/workspace/`` was written for memtui (an invented Python
ingest service, ``acme-ingest``, and its developer). It holds:

- ``home/``: the demo ``$HOME`` with the User layer (``.agent/AGENT.md``, ``.agent/rules/``).
- ``project/``: the project (cwd of the demo, a git root) with ``AGENT.md`` at three levels,
  ``.agent/`` rules (conditional and not, one in a subfolder, one with a tab-indented ``paths:``
  list that fails to parse), ``AGENT.local.md`` and a few source files the rules can target.
  Names that git or the package cannot carry are stored renamed: ``dot-git`` → ``.git`` (git
  will not commit a nested ``.git``) and ``dot-gitignore`` → ``.gitignore`` (it would apply to
  memtui's own repository).
- ``memory/``: 30 memory files of all four types plus ``MEMORY.md`` and ``team/``, some with
  the problems real files have (nested or mis-cased ``type``, unquoted ``: ``, no frontmatter,
  relative dates, missing ``**Why:**``, over 4,096 bytes, a CJK name, CRLF line ends, a dangling
  index link, unindexed files).
- ``sessions/``: JSONL transcripts (docs/behaviour.md §7), including one ``agent-*.jsonl`` subagent file.
- ``ages.json``: template-relative path → age in days (float) used to set mtimes.

Placeholders, replaced only in files below ``memory/`` and ``sessions/``:

- ``{{PROJECT}}`` and ``{{MEMORY_DIR}}``: the materialised absolute paths (JSON-escaped inside
  ``.jsonl`` files).
- ``{{DATE:+N}}`` / ``{{DATE:-N}}``: the calendar date ``now`` ± N days, ``YYYY-MM-DD``, so
  that absolute dates in project memories stay plausible whenever the demo runs.
- ``{{TIME:M}}``: the file's own mtime + M minutes (M ≤ 0, float), as ISO-8601 UTC with
  milliseconds and ``Z``: transcript timestamps line up with transcript mtimes.

``memory/user_timezone.md`` is stored with LF line ends (git would normalise CRLF) and
converted to CRLF when materialised (:data:`CRLF_FILES`).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from importlib.resources import files
from importlib.resources.abc import Traversable
from pathlib import Path

from memtui.core.places.slug import slugify

__all__ = ["CRLF_FILES", "DemoWorkspace", "load_ages", "materialize"]

#: Template-relative files whose line ends become CRLF when materialised.
CRLF_FILES: frozenset[str] = frozenset({"memory/user_timezone.md"})

#: Stored names → real names, applied to path components below ``project/``.
_RENAMES: dict[str, str] = {"dot-git": ".git", "dot-gitignore": ".gitignore"}

#: Directories a git repository needs besides ``HEAD`` (git cannot store empty directories).
_GIT_DIRS: tuple[str, ...] = ("refs/heads", "refs/tags", "objects/info", "objects/pack")

_SKIP_NAMES = frozenset({"__pycache__", ".DS_Store"})
_PLACEHOLDER = re.compile(r"\{\{([^{}]*)\}\}")
_DATE = re.compile(r"DATE:([+-]?\d+)")
_TIME = re.compile(r"TIME:([+-]?\d+(?:\.\d+)?)")
_NS_PER_DAY = 86_400 * 10**9
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


@dataclass(frozen=True)
class DemoWorkspace:
    """Paths of a materialised demo workspace (all absolute when ``dest`` was)."""

    root: Path  # dest
    home: Path  # dest/home: $HOME for the demo
    project: Path  # dest/project: cwd for the demo, a git root
    memory_dir: Path  # dest/home/.agent/projects/<slug>/memory
    sessions_dir: Path  # dest/home/.agent/projects/<slug>: the transcripts live here


def _template() -> Traversable:
    return files("memtui.demo") / "workspace"


def _walk(node: Traversable, prefix: str = "") -> Iterator[tuple[str, Traversable]]:
    """Yield ``(template-relative POSIX path, file)`` for every file below ``node``, sorted."""
    for child in sorted(node.iterdir(), key=lambda c: c.name):
        if child.name in _SKIP_NAMES or child.name.endswith(".pyc"):
            continue
        rel = f"{prefix}{child.name}"
        if child.is_dir():
            yield from _walk(child, rel + "/")
        elif child.is_file():
            yield rel, child


def load_ages() -> dict[str, float]:
    """The template's ``ages.json``: template-relative POSIX path → age in days (≥ 0).

    Raises ``ValueError`` if an age is negative or not a number.
    """
    raw = json.loads((_template() / "ages.json").read_text(encoding="utf-8"))
    ages: dict[str, float] = {}
    for rel, days in raw.items():
        if isinstance(days, bool) or not isinstance(days, int | float) or days < 0:
            raise ValueError(f"ages.json: bad age for {rel!r}: {days!r}")
        ages[rel] = float(days)
    return ages


def _now_ns(now: datetime) -> int:
    delta = now - _EPOCH
    return (delta.days * 86_400 + delta.seconds) * 10**9 + delta.microseconds * 1_000


def _iso_utc(ns: int) -> str:
    moment = _EPOCH + timedelta(microseconds=ns // 1_000)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _substitute(text: str, *, values: dict[str, str], now: datetime, mtime_ns: int, rel: str) -> str:
    """Replace every ``{{...}}`` placeholder in ``text``; an unknown one raises ``ValueError``."""

    def one(match: re.Match[str]) -> str:
        key = match.group(1)
        if key in values:
            return values[key]
        if m := _DATE.fullmatch(key):
            return (now + timedelta(days=int(m.group(1)))).date().isoformat()
        if m := _TIME.fullmatch(key):
            return _iso_utc(mtime_ns + round(float(m.group(1)) * 60 * 10**9))
        raise ValueError(f"demo template {rel}: unknown placeholder {match.group(0)!r}")

    return _PLACEHOLDER.sub(one, text)


def materialize(dest: Path, now: datetime) -> DemoWorkspace:
    """Write the demo workspace into ``dest`` and return its paths.

    ``dest`` is created if missing (parents too). Layout written: ``dest/home`` (the template's
    ``home/``), ``dest/project`` (``project/``, with ``dot-git`` → ``.git`` plus the empty
    ``refs/`` and ``objects/`` subdirectories git needs), the memories in
    ``dest/home/.agent/projects/<slug>/memory/`` and the ``*.jsonl`` transcripts in
    ``dest/home/.agent/projects/<slug>/``, where ``slug = slugify(str(project.resolve()))``.

    Every file's mtime is ``now`` minus its age in days from ``ages.json`` (files not listed
    get ``now``); no randomness, so the same ``now`` gives the same bytes and mtimes.
    ``now`` must be timezone-aware.

    Raises ``ValueError`` if ``now`` is naive, ``FileExistsError`` if ``dest/home`` or
    ``dest/project`` already exists, and ``OSError`` if ``dest`` cannot be created or written.
    """
    if now.tzinfo is None or now.utcoffset() is None:
        raise ValueError("materialize() needs a timezone-aware `now`")
    dest = Path(dest)
    dest.mkdir(parents=True, exist_ok=True)
    home, project = dest / "home", dest / "project"
    for path in (home, project):
        if os.path.lexists(path):
            raise FileExistsError(f"demo workspace already present: {path}")
    home.mkdir()
    project.mkdir()
    slug = slugify(str(project.resolve()))
    sessions_dir = home / ".agent" / "projects" / slug
    memory_dir = sessions_dir / "memory"
    memory_dir.mkdir(parents=True)

    ages = load_ages()
    now_ns = _now_ns(now)
    values = {"PROJECT": str(project.resolve()), "MEMORY_DIR": str(memory_dir.resolve())}
    json_values = {k: json.dumps(v, ensure_ascii=False)[1:-1] for k, v in values.items()}

    written: list[tuple[Path, int]] = []
    for rel, node in _walk(_template()):
        top, _, rest = rel.partition("/")
        if top == "home":
            target = home / rest
        elif top == "project":
            target = project.joinpath(*(_RENAMES.get(part, part) for part in rest.split("/")))
        elif top == "memory":
            target = memory_dir / rest
        elif top == "sessions" and "/" not in rest and rest.endswith(".jsonl"):
            target = sessions_dir / rest
        else:
            continue  # ages.json and anything unexpected
        mtime_ns = now_ns - round(ages.get(rel, 0.0) * _NS_PER_DAY)
        data = node.read_bytes()
        if top in ("memory", "sessions"):
            text = data.decode("utf-8")
            subst = json_values if top == "sessions" else values
            text = _substitute(text, values=subst, now=now, mtime_ns=mtime_ns, rel=rel)
            if rel in CRLF_FILES:
                text = text.replace("\r\n", "\n").replace("\n", "\r\n")
            data = text.encode("utf-8")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        written.append((target, mtime_ns))

    git_dir = project / ".git"
    for sub in _GIT_DIRS:
        (git_dir / sub).mkdir(parents=True, exist_ok=True)

    for target, mtime_ns in written:
        os.utime(target, ns=(mtime_ns, mtime_ns))

    return DemoWorkspace(
        root=dest,
        home=home,
        project=project,
        memory_dir=memory_dir,
        sessions_dir=sessions_dir,
    )
