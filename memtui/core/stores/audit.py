"""Every memory store in play for a project, who read and who wrote each, and what is wrong (SPEC §14).

A *store* is a memory dir. The ones in play for a project:

- the dir the agent reads now (``Locations.memory_dir``) and, when a settings layer counts only in
  a trusted workspace, the one an untrusted interactive session reads
  (``Locations.memory_dir_untrusted``);
- every dir a session of the repository was told or whose index it loaded, and every dir a
  session wrote memory files into (a ``<base>/projects/<slug>/memory/`` dir, or a dir some
  session was told);
- the stores of the project dirs whose sessions ran in the repository (its root, its
  subdirectories, its worktrees — a worktree whose back-link is broken included — and a
  checkout that was moved away), when they hold memories;
- a ``.claude/memory/`` folder in the repository (not reached through a link).

The sessions of the repository are those filed under a project dir whose cwd (read from its
transcripts) is the repository's root or a folder inside it of the same git repository, a
checkout whose git common dir is the repository's (a linked worktree, intact or not; from inside
a broken worktree, the main checkout), or a folder that no longer exists and whose sessions'
last commit is in the repository's object store (a moved checkout: loose objects and pack
indexes are read directly, no ``git`` needed; at most ``MAX_MOVED_CHECKS`` folders per run).
``git`` itself runs only to say whether it tracks ``.claude/memory``, bounded to
``GIT_TIMEOUT`` seconds and with the repository's fsmonitor hook off.

Findings are certain by construction: each rests on what a transcript records (a session told
one dir, a Write into another) or on the settings as the release reads them, and names both
paths and its evidence (session, date, file).
"""

from __future__ import annotations

import functools
import os
import re
import subprocess
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from memtui.core.base.gcpause import gc_paused
from memtui.core.base.safe_read import open_regular, read_regular
from memtui.core.places.gitroot import find_git_root, resolve_git_roots
from memtui.core.places.locations import Locations, validate_memory_dir_override
from memtui.core.places.slug import slugify
from memtui.core.sessions.background import parse_time
from memtui.core.sessions.projects import list_transcripts, transcript_cwd
from memtui.core.stores.evidence import SessionEvidence, read_evidence

# memtui's bounds: project dirs looked at, transcripts read per project dir, files counted per
# store, and each git call's time (seconds).
MAX_PROJECT_DIRS = 20_000
MAX_TRANSCRIPTS = 5_000
MAX_COUNTED = 10_000
GIT_TIMEOUT = 5.0
# The pack indexes looked at per repository (git gc keeps one or a few), and the project dirs of
# vanished folders checked for a commit of the repository per audit.
MAX_PACKS = 256
MAX_MOVED_CHECKS = 500
# Where people commit a copy of Claude Code's memory folder (as doctor's unread-memory-folder).
COMMITTED_FOLDER = ".claude/memory"
# Settings variables and the names of memory plugins that switch Claude Code's own memory off.
MEMORY_PLUGIN_HINTS = ("mem",)

Relation = Literal["root", "subdir", "worktree", "broken-worktree", "main", "moved"]
StoreRole = Literal["reads", "reads-untrusted", "seen", "sibling", "committed"]


@dataclass(frozen=True, slots=True)
class SessionRef:
    """A session as evidence: ``session`` id, ``agent`` (a sub-agent's id, else ``None``),
    ``time`` (ISO: its first line), ``cwd``, ``entrypoint`` (``cli``/``sdk-cli``…), ``transcript``
    (path), ``files`` (for a writer: the memory files it wrote, as given to the tool)."""

    session: str
    agent: str | None
    time: str | None
    cwd: str | None
    entrypoint: str | None
    transcript: str
    files: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        """The fields as a JSON object."""
        return {
            "session": self.session,
            "agent": self.agent,
            "time": self.time,
            "cwd": self.cwd,
            "entrypoint": self.entrypoint,
            "transcript": self.transcript,
            "files": list(self.files),
        }

    @property
    def date(self) -> str:
        """The day of ``time`` (``YYYY-MM-DD``), or ``"an unknown day"``."""
        return self.time[:10] if self.time else "an unknown day"


@dataclass(slots=True)
class Store:
    """One memory dir in play. ``path`` (absolute, no trailing slash); ``keyed``: how the agent
    arrives at it, in words; ``roles``; ``exists``; ``memories``: its memory files (``.md`` other
    than ``MEMORY.md``, at most ``MAX_COUNTED``); ``readers``/``writers``: the sessions that were
    told or loaded it / wrote memory files into it, oldest first; ``git_tracked``: for a folder in
    the repository, whether git tracks files in it (``None``: unknown or not applicable)."""

    path: str
    keyed: str
    roles: list[StoreRole] = field(default_factory=list)
    exists: bool = False
    memories: int = 0
    readers: list[SessionRef] = field(default_factory=list)
    writers: list[SessionRef] = field(default_factory=list)
    git_tracked: bool | None = None

    def to_json(self) -> dict[str, Any]:
        """The store as a JSON object."""
        return {
            "path": self.path,
            "keyed": self.keyed,
            "roles": list(self.roles),
            "exists": self.exists,
            "memories": self.memories,
            "readers": [r.to_json() for r in self.readers],
            "writers": [w.to_json() for w in self.writers],
            "git_tracked": self.git_tracked,
        }


@dataclass(frozen=True, slots=True)
class Fix:
    """How to fix a finding: ``text`` (in words); ``command`` (a shell command that does it,
    ``None`` when only a person can, such as accepting the trust dialog); ``setting``:
    ``{file, key, change}`` when a setting is the fix, and ``value`` the string ``memtui stores
    setting`` sets (``None``: it removes the key); ``merge``: ``(source, destination, copy)``
    when ``memtui stores merge`` is the fix. The app runs a fix from these fields, the CLI
    prints ``command``."""

    text: str
    command: str | None = None
    setting: dict[str, str] | None = None
    value: str | None = None
    merge: tuple[str, str, bool] | None = None

    def to_json(self) -> dict[str, Any]:
        """The fix as a JSON object (``text``, ``command``, ``setting``)."""
        return {"text": self.text, "command": self.command, "setting": self.setting}


@dataclass(frozen=True, slots=True)
class StoreFinding:
    """One finding: ``code`` (``STORE_CODES``), ``severity``, ``message`` (plain words, naming
    both paths), ``store`` (the store it is about), ``reads`` (the store the agent reads),
    ``cause`` (``subdir``/``worktree-link``/``trust``/``moved``/``setting``/``switch``/… or
    ``None``), ``evidence`` (sessions), ``fixes``."""

    code: str
    severity: Literal["error", "warning", "info"]
    message: str
    store: str | None
    reads: str
    cause: str | None = None
    evidence: tuple[SessionRef, ...] = ()
    fixes: tuple[Fix, ...] = ()

    def to_json(self) -> dict[str, Any]:
        """The finding as a JSON object."""
        return {
            "code": self.code,
            "severity": self.severity,
            "message": self.message,
            "store": self.store,
            "reads": self.reads,
            "cause": self.cause,
            "evidence": [e.to_json() for e in self.evidence],
            "fixes": [f.to_json() for f in self.fixes],
        }


STORE_CODES: dict[str, tuple[str, str]] = {
    "store-written-not-read": ("warning", "sessions wrote memories into a store that no session reads"),
    "store-split": ("warning", "sessions of one repository read different memory stores"),
    "store-never-read": ("info", "a folder of memories in the repository that no session loads"),
    "auto-memory-off": ("warning", "auto memory is switched off: sessions get neither the memory instructions nor the index"),
    "memory-setting-ignored": ("warning", "an autoMemoryDirectory value Claude Code skips without a word"),
}


@dataclass(frozen=True, slots=True)
class ProjectDirInfo:
    """A project dir whose sessions ran in the repository: ``path``, ``cwd``, ``relation``."""

    path: Path
    cwd: str
    relation: Relation


@dataclass(frozen=True, slots=True)
class StoresReport:
    """``reads``: the dir the agent reads now and ``reads_why`` (words); ``stores`` (the one read
    first); ``findings``; ``sessions`` (the main sessions' evidence, oldest first);
    ``subagents`` (the sub-agents' evidence); ``project_dirs``; ``auto_memory``: on or off;
    ``projects_dir``: where the transcripts were looked for (``<base>/projects``)."""

    reads: str
    reads_why: str
    stores: tuple[Store, ...]
    findings: tuple[StoreFinding, ...]
    sessions: tuple[SessionEvidence, ...]
    subagents: tuple[SessionEvidence, ...]
    project_dirs: tuple[ProjectDirInfo, ...]
    auto_memory: bool
    projects_dir: Path = Path()

    @property
    def others(self) -> tuple[Store, ...]:
        """The stores other than the one read now."""
        return tuple(s for s in self.stores if "reads" not in s.roles)

    def to_json(self) -> dict[str, Any]:
        """The report as a JSON object."""
        return {
            "reads": self.reads,
            "reads_why": self.reads_why,
            "auto_memory": self.auto_memory,
            "projects_dir": str(self.projects_dir),
            "sessions": len(self.sessions),
            "stores": [s.to_json() for s in self.stores],
            "findings": [f.to_json() for f in self.findings],
            "project_dirs": [{"path": str(p.path), "cwd": p.cwd, "relation": p.relation} for p in self.project_dirs],
        }


# ----- the repository ----------------------------------------------------------------------


def _norm(path: str | os.PathLike[str]) -> str:
    """``path`` as one store or folder is named everywhere: links resolved (a HOME reached
    through a link names the same store two ways), no trailing slash."""
    text = str(path).replace("\0", "")  # a NUL cannot name a file; a value holding one names none
    try:
        return os.path.realpath(text).rstrip("/") or "/"
    except (OSError, ValueError):
        return os.path.normpath(text).rstrip("/") or "/"


def _inside(path: str, root: str) -> bool:
    path, root = _norm(path), _norm(root)
    return path == root or path.startswith(root.rstrip("/") + "/")


def git_common_dir(checkout: Path) -> str | None:
    """The git common dir of the checkout at ``checkout`` (its root holds ``.git``): ``.git``
    itself for a main checkout, the ``commondir`` its ``gitdir:`` names for a linked worktree —
    without checking the worktree's back-link. ``None`` when there is none to read."""
    dot_git = checkout / ".git"
    try:
        if dot_git.is_dir():
            return _norm(os.path.realpath(dot_git))
        raw, _ = read_regular(dot_git, 64 * 1024)
        text = raw.decode("utf-8", "replace").strip()
        if not text.startswith("gitdir:"):
            return None
        admin = Path(os.path.normpath(checkout / text[len("gitdir:") :].strip()))
        common_raw, _ = read_regular(admin / "commondir", 64 * 1024)
        common = common_raw.decode("utf-8", "replace").strip()
        return _norm(os.path.realpath(admin / common))
    except (OSError, ValueError):
        return None


def _git(args: Sequence[str], cwd: Path) -> subprocess.CompletedProcess[bytes] | None:
    """``git args`` in ``cwd``, bounded to ``GIT_TIMEOUT`` s; ``None`` when git is missing or
    the call failed to run."""
    try:
        # the repository's own config must run nothing: no fsmonitor hook, no pager
        safe = ["-c", "core.fsmonitor=false", "-c", "core.untrackedCache=false", "--no-pager"]
        return subprocess.run(["git", *safe, *args], cwd=cwd, capture_output=True, timeout=GIT_TIMEOUT, stdin=subprocess.DEVNULL, check=False,
                              env={**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_TERMINAL_PROMPT": "0"})
    except (OSError, subprocess.SubprocessError):
        return None


@functools.lru_cache(maxsize=4096)
def _has_commit_cached(common_dir: str, short: str, stamp: tuple[int, int]) -> bool:
    return _has_commit(Path(common_dir), short)


def has_commit(common_dir: Path, short: str) -> bool:
    """Whether the object store of the git common dir ``common_dir`` holds an object whose id
    starts with ``short`` (see ``_has_commit``); the answer is kept while ``objects/pack`` and
    the loose objects' folder of ``short`` keep their mtimes."""
    stamp = (0, 0)
    for folder in ("pack", short[:2]):  # a new pack, or a new loose object, changes the answer
        try:
            stamp = (stamp[0] ^ os.stat(Path(common_dir) / "objects" / folder).st_mtime_ns, stamp[1] + 1)
        except OSError:
            pass
    return _has_commit_cached(str(common_dir), short, stamp)


def _has_commit(common_dir: Path, short: str) -> bool:
    """Whether the object store of the git common dir ``common_dir`` holds an object whose id
    starts with ``short`` (7 to 40 hex digits): a loose object, or one in a pack's version-2
    index (git's documented ``pack-*.idx`` layout: 8-byte header, 256-entry fan-out, sorted
    20-byte ids). Alternates are not followed. Reads at most the fan-out and a binary search
    of ids per pack."""
    short = short.lower()
    if not re.fullmatch(r"[0-9a-f]{7,40}", short):
        return False
    objects = common_dir / "objects"
    try:
        with os.scandir(objects / short[:2]) as it:
            if any(e.name.startswith(short[2:]) for e in it):
                return True
    except OSError:
        pass
    want = bytes.fromhex(short if len(short) % 2 == 0 else short + "0")
    try:
        packs = sorted(p for p in os.listdir(objects / "pack") if p.endswith(".idx"))[:MAX_PACKS]
    except OSError:
        return False
    for name in packs:
        try:
            fh, _ = open_regular(objects / "pack" / name)
            with fh:
                head = fh.read(8 + 256 * 4)
                if len(head) < 8 + 256 * 4 or head[:4] != b"\xfftOc" or head[4:8] != b"\x00\x00\x00\x02":
                    continue
                fan = [int.from_bytes(head[8 + 4 * i : 12 + 4 * i], "big") for i in range(256)]
                first = want[0]
                lo = fan[first - 1] if first else 0
                hi = fan[first]
                while lo < hi:
                    mid = (lo + hi) // 2
                    fh.seek(8 + 256 * 4 + 20 * mid)
                    oid = fh.read(20).hex()
                    if oid.startswith(short):
                        return True
                    if oid < short:
                        lo = mid + 1
                    else:
                        hi = mid
        except OSError:
            continue
    return False


def git_tracks(repo: Path, folder: str) -> bool | None:
    """Whether git tracks files under ``folder`` (relative to ``repo``); ``None`` when unknown."""
    done = _git(["ls-files", "-z", "--", folder], repo)
    if done is None or done.returncode != 0:
        return None
    return bool(done.stdout[:4096].strip(b"\0"))


def _relation(cwd: str, root: str, common: str | None, commits: Callable[[], tuple[str, ...]]) -> Relation | None:
    """How a project dir whose sessions ran in ``cwd`` relates to the repository at ``root``."""
    if _norm(cwd) == _norm(root):
        return "root"
    exists = os.path.isdir(cwd)
    if exists and _inside(cwd, root):
        if common is None:
            return None  # outside git, a subfolder is a project of its own
        own = find_git_root(Path(cwd))
        if own is not None and _norm(own) != _norm(root) and git_common_dir(own) != common:
            return None  # a repository nested inside this one
        return "subdir"
    if exists:
        if common is None:
            return None
        own = find_git_root(Path(cwd))
        if own is None or git_common_dir(own) != common:
            return None
        canonical = resolve_git_roots(Path(cwd)).canonical
        if canonical is not None and _norm(canonical) == _norm(root):
            return "worktree"
        main = os.path.dirname(common) if os.path.basename(common) == ".git" else common
        if canonical is not None and _norm(canonical) == _norm(main):
            return "main"  # the main checkout (or a worktree sharing it) of this broken worktree
        return "broken-worktree"
    if common is None:
        return None
    shared = commits()
    if shared and has_commit(Path(common), shared[0]):  # the commit the checkout was at
        return "moved"
    return None


class _Budget:
    """How many vanished folders are still checked for a commit in this audit."""

    def __init__(self, n: int) -> None:
        self.left = n


def repository_project_dirs(loc: Locations) -> list[ProjectDirInfo]:
    """The project dirs under ``<base>/projects`` whose sessions ran in the repository (see the
    module docstring), in name order."""
    root = str(loc.canonical_git_root or loc.git_root or loc.project_root)
    common = git_common_dir(Path(root)) if (loc.canonical_git_root or loc.git_root) else None
    base = loc.user_base_dir / "projects"
    try:
        with os.scandir(base) as it:
            names = sorted(e.name for n, e in zip(range(MAX_PROJECT_DIRS), it) if e.is_dir())
    except OSError:
        return []
    out: list[ProjectDirInfo] = []
    budget = _Budget(MAX_MOVED_CHECKS)
    for name in names:
        path = base / name
        transcripts = [t for t in list_transcripts(path) if not t.subagent][:3]
        cwd = next((c for t in transcripts if (c := transcript_cwd(t.path)) is not None), None)
        if cwd is None:
            continue

        def commits(ts=transcripts) -> tuple[str, ...]:
            if budget.left <= 0:
                return ()  # past the bound: no more vanished folders are looked into
            budget.left -= 1
            found: list[str] = []
            for t in ts:
                found.extend(read_evidence(t.path, t.session_id).commits)
            return tuple(dict.fromkeys(found))

        relation = _relation(cwd, root, common, commits)
        if relation is not None:
            out.append(ProjectDirInfo(path, cwd, relation))
    return out


# ----- stores --------------------------------------------------------------------------------


def count_memories(folder: str) -> tuple[bool, int]:
    """Whether ``folder`` is a directory, and its memory files: ``.md`` files other than
    ``MEMORY.md`` anywhere below it (links not followed), at most ``MAX_COUNTED``."""
    if not os.path.isdir(folder) or os.path.islink(folder):
        return False, 0
    count = 0
    for dirpath, dirnames, filenames in os.walk(folder):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for name in filenames:
            if name.endswith(".md") and not (name == "MEMORY.md" and dirpath == folder) and not os.path.islink(os.path.join(dirpath, name)):
                count += 1
                if count >= MAX_COUNTED:
                    return True, count
    return True, count


def all_in(src: str, dst: str) -> bool:
    """Whether every memory file of store ``src`` is in store ``dst`` under the same name with
    the same bytes (at most ``MAX_COUNTED`` files compared, each up to 4 MB; ``False`` past that)."""
    if not os.path.isdir(dst):
        return False
    seen = 0
    for dirpath, dirnames, filenames in os.walk(src):
        dirnames[:] = [d for d in dirnames if not d.startswith(".")]
        for name in filenames:
            if not name.endswith(".md") or (name == "MEMORY.md" and dirpath == src):
                continue
            seen += 1
            if seen > MAX_COUNTED:
                return False
            a = os.path.join(dirpath, name)
            b = os.path.join(dst, os.path.relpath(a, src))
            try:
                if os.path.islink(a) or os.path.getsize(a) != os.path.getsize(b) or os.path.getsize(a) > 4 * 1024 * 1024:
                    return False
                with open(a, "rb") as fa, open(b, "rb") as fb:
                    if fa.read() != fb.read():
                        return False
            except OSError:
                return False
    return seen > 0


def _ref(e: SessionEvidence, files: Sequence[str] = ()) -> SessionRef:
    return SessionRef(e.session_id, e.agent_id, e.first_time, e.cwd, e.entrypoint, str(e.transcript), tuple(files))


def _why(loc: Locations) -> str:
    source = loc.memory_dir_source
    if source == "default" and loc.slug != slugify(str(loc.canonical_git_root or loc.project_root)):
        return f"the default, in the project dir named by ${loc.flavor.project_dir_name_env} ({loc.slug})"
    if source == "default":
        key = loc.canonical_git_root or loc.project_root
        return f"the default: the slug of {key}" + (" (the repository's main checkout)" if loc.canonical_git_root and loc.git_root != loc.canonical_git_root else "")
    if source == "env":
        return f"${loc.flavor.memory_dir_env}"
    if source == "option":
        return "--memory-dir"
    file = loc.settings.paths.get(source)  # type: ignore[call-overload]
    return f"autoMemoryDirectory in the {source} settings" + (f" ({file})" if file else "")


def _keyed_for(path: str, loc: Locations, dirs: Sequence[ProjectDirInfo]) -> str:
    base = _norm(loc.user_base_dir / "projects")
    for info in dirs:
        if _norm(info.path / "memory") == path:
            words = {
                "root": "the slug of the repository root",
                "subdir": "the slug of a subdirectory",
                "worktree": "the slug of a worktree",
                "broken-worktree": "the slug of a worktree whose back-link is broken",
                "main": "the slug of the main checkout, which this worktree no longer shares",
                "moved": "the slug of a path the checkout was moved from",
            }[info.relation]
            return f"{words} ({info.cwd})"
    if _inside(path, base):
        return "the slug of another folder"
    return "a dir named by a setting or the environment"


_PROJECT_STORE = re.compile(r"/projects/[^/]+/memory$")


def _plausible_dirs(loc: Locations) -> Callable[[str], bool]:
    """Whether a dir a transcript says a session was told is one Claude Code tells: a
    ``…/projects/<name>/memory`` dir (the default, under any config dir), the dir read now or
    when untrusted, or an ``autoMemoryDirectory`` some settings layer names. A sentence that
    names anything else (an output style or a server's instructions can put words into the
    system prompt) is no store — unless the session loaded its index from there."""
    named = {_norm(loc.memory_dir)} | ({_norm(loc.memory_dir_untrusted)} if loc.memory_dir_untrusted is not None else set())
    home = loc.user_base_dir.parent
    for data in loc.settings.layers.values():
        value = data.get("autoMemoryDirectory") if isinstance(data, dict) else None
        path, _ = validate_memory_dir_override(value, expand_tilde=True, home=home) if value is not None else (None, None)
        if path is not None:
            named.add(_norm(path))

    def plausible(d: str) -> bool:
        n = _norm(d)
        return n in named or bool(_PROJECT_STORE.search(n))

    return plausible


def repository_sessions(dirs: Sequence[ProjectDirInfo]) -> tuple[list[SessionEvidence], list[SessionEvidence]]:
    """The evidence of every transcript of ``dirs`` (at most ``MAX_TRANSCRIPTS`` per dir): the
    main sessions' and the sub-agents', each oldest first."""
    sessions: list[SessionEvidence] = []
    subagents: list[SessionEvidence] = []
    with gc_paused():
        for info in dirs:
            for t in list_transcripts(info.path)[:MAX_TRANSCRIPTS]:
                ev = read_evidence(t.path, t.session_id, t.agent_id)
                (subagents if t.subagent else sessions).append(ev)
    sessions.sort(key=lambda e: (e.first_time or "", str(e.transcript)))
    subagents.sort(key=lambda e: (e.first_time or "", str(e.transcript)))
    return sessions, subagents


def audit_stores(loc: Locations, *, repository_dirs: Sequence[ProjectDirInfo] | None = None) -> StoresReport:
    """The stores report for ``loc`` (see the module docstring). Reads only; never raises for
    a bad transcript, settings file or git metadata."""
    reads = _norm(loc.memory_dir)
    dirs = list(repository_project_dirs(loc) if repository_dirs is None else repository_dirs)
    sessions, subagents = repository_sessions(dirs)

    stores: dict[str, Store] = {}

    def store(path: str, role: StoreRole) -> Store:
        path = _norm(path)
        found = stores.get(path)
        if found is None:
            found = stores[path] = Store(path, _keyed_for(path, loc, dirs))
        if role not in found.roles:
            found.roles.append(role)
        return found

    first = store(reads, "reads")
    first.keyed = _why(loc)
    untrusted = _norm(loc.memory_dir_untrusted) if loc.memory_dir_untrusted is not None else None
    if untrusted is not None:
        alt = store(untrusted, "reads-untrusted")
        if loc.memory_dir_untrusted_source == "default":
            alt.keyed = f"the default: the slug of {loc.canonical_git_root or loc.project_root}"
    plausible = _plausible_dirs(loc)
    for ev in sessions:
        loaded = {_norm(i.store) for i in ev.loaded}
        for d in ev.read_dirs:
            if _norm(d) in loaded or plausible(d):
                s = store(d, "seen")
                s.readers.append(_ref(ev))
    projects_base = _norm(loc.user_base_dir / "projects")
    home_of: dict[tuple[str | None, str], str | None] = {}  # (cwd, folder as written) -> its store
    for ev in sessions:
        by_store: dict[str, list[str]] = {}
        for w in ev.writes:
            if w.ok is False:
                continue
            folder, name = os.path.split(w.path)
            key = (ev.cwd, folder)
            if key not in home_of:
                target = _norm(os.path.join(folder if os.path.isabs(folder) else os.path.join(ev.cwd or "/", folder), "x.md"))
                home_of[key] = _store_of(target, stores, projects_base)
            home = home_of[key]
            if home is not None:
                by_store.setdefault(home, []).append(w.path)
        for home, files in by_store.items():
            store(home, "seen").writers.append(_ref(ev, tuple(dict.fromkeys(files))))
    for info in dirs:
        mem = _norm(info.path / "memory")
        if mem not in stores and count_memories(mem)[1]:
            store(mem, "sibling")
    repo_root = loc.canonical_git_root or loc.git_root or loc.project_root
    raw = Path(repo_root) / COMMITTED_FOLDER
    committed = _norm(raw)
    inside = committed.startswith(_norm(repo_root) + "/") and not any(os.path.islink(p) for p in (raw, raw.parent))
    if inside and os.path.isdir(committed) and committed not in stores and count_memories(committed)[1]:
        c = store(committed, "committed")
        c.keyed = "a folder in the repository (Claude Code never loads it by itself)"
        c.git_tracked = git_tracks(Path(repo_root), COMMITTED_FOLDER) if (loc.git_root or loc.canonical_git_root) else None
    for s in stores.values():
        s.exists, s.memories = count_memories(s.path)
    ordered = sorted(stores.values(), key=lambda s: (0 if "reads" in s.roles else 1 if "reads-untrusted" in s.roles else 2, s.path))
    report = StoresReport(reads, _why(loc), tuple(ordered), (), tuple(sessions), tuple(subagents), tuple(dirs), loc.auto_memory_enabled, loc.user_base_dir / "projects")
    return replace(report, findings=tuple(_findings(loc, report)))


def _store_of(target: str, stores: dict[str, Store], projects_base: str) -> str | None:
    """The store a written file lands in: the deepest known store holding it, else a
    ``<base>/projects/<slug>/memory`` dir holding it, else ``None`` (not a memory write)."""
    best = max((p for p in stores if _inside(target, p) and target != p), key=len, default=None)
    if best is not None:
        return best
    if _inside(target, projects_base):
        parts = target[len(projects_base) + 1 :].split("/")
        if len(parts) >= 3 and parts[1] == "memory":
            return _norm(os.path.join(projects_base, parts[0], "memory"))
    return None


# ----- findings ------------------------------------------------------------------------------


def _q(path: str) -> str:
    """``path`` quoted for a POSIX shell when it needs it."""
    import shlex

    return shlex.quote(path)


def _merge_fix(loc: Locations, src: str, dst: str, *, copy: bool = False, after: str = "") -> Fix:
    """The merge of ``src`` into ``dst`` as a fix: a move when the two stores share a folder one
    change can be journaled in (``merge.move_root``), else a copy (SRC's files stay: the words say
    to remove them once the copy is checked)."""
    from memtui.core.places.flavor import home_dir
    from memtui.core.stores.merge import move_root

    if not copy and move_root(Path(src), Path(dst), home_dir(), loc.state_dir) is None:
        command = f"memtui stores merge {_q(src)} --into {_q(dst)} --copy"
        return Fix(f"{after}copy its memories into {dst} (the two stores share no folder one move can be journaled in: remove {src}'s files once the copy is checked)", command, merge=(src, dst, True))
    command = f"memtui stores merge {_q(src)} --into {_q(dst)}" + (" --copy" if copy else "")
    verb = "copy" if copy else "move"
    return Fix(f"{after}{verb} its memories into {dst} (previewed first; `memtui undo` reverts it)", command, merge=(src, dst, copy))


def _setting_fix(text: str, file: str, key: str, value: str | None) -> Fix:
    """A fix that is a setting: ``memtui stores setting`` sets ``key`` of ``file`` to
    ``value`` (``None``: removes it), previewed first."""
    change = "remove it" if value is None else f"set to {value}"
    command = f"memtui stores setting {_q(file)} {_q(key)} " + ("--unset" if value is None else f"--set {_q(value)}")
    return Fix(text, command, {"file": file, "key": key, "change": change}, value=value)


def _sessions_words(refs: Sequence[SessionRef], limit: int = 2) -> str:
    shown = [f"session {r.session[:8]} on {r.date} in {r.cwd or 'an unknown folder'}" for r in refs[:limit]]
    more = len(refs) - len(shown)
    return ", ".join(shown) + (f" and {more} more" if more > 0 else "")


def _memories(n: int) -> str:
    return f"{n} memor{'y' if n == 1 else 'ies'}"


def _findings(loc: Locations, report: StoresReport) -> list[StoreFinding]:
    out: list[StoreFinding] = []
    reads = report.reads
    by_path = {s.path: s for s in report.stores}
    readers_of = {s.path for s in report.stores if s.readers}
    told = {str(ev.transcript) for ev in report.sessions if ev.told}
    info_of_cwd = {_norm(p.cwd): p for p in report.project_dirs}
    read_now = {reads} | ({_norm(loc.memory_dir_untrusted)} if loc.memory_dir_untrusted is not None else set())
    for s in report.stores:
        if s.path == reads or (s.path in read_now and not s.readers):
            continue
        if s.memories and all_in(s.path, reads):
            continue  # every memory of it is in the store read (merged, or copied by hand)
        # a writer that was told its store shows the transcripts record what sessions read
        if s.writers and s.path not in readers_of and s.memories and any(w.transcript in told for w in s.writers):
            writers = s.writers
            cwds = {_norm(w.cwd) for w in writers if w.cwd}
            subdir = any(info_of_cwd.get(c) is not None and info_of_cwd[c].relation == "subdir" for c in cwds)
            cause = "subdir" if subdir else None
            why = (
                f"a session started in a subdirectory may write into the store of its own folder's slug, but reads {reads}"
                if subdir
                else f"no session was told or loaded it; the agent reads {reads}"
            )
            files = [f for w in writers for f in w.files]
            out.append(
                StoreFinding(
                    "store-written-not-read",
                    "warning",
                    f"{s.path}: {_memories(s.memories)} written where no session reads {'it' if s.memories == 1 else 'them'} — {_sessions_words(writers)} wrote {os.path.basename(files[0]) if files else 'a memory'}"
                    + f"; {why}",
                    s.path,
                    reads,
                    cause,
                    tuple(writers),
                    (_merge_fix(loc, s.path, reads),),
                )
            )
            continue
        if s.readers:
            split = _split(loc, report, s, info_of_cwd)
            if s.memories or split.cause in ("trust", "worktree-link"):
                out.append(split)
    for s in report.stores:
        if "committed" in s.roles and s.path not in readers_of and s.path not in read_now and not all_in(s.path, reads):
            tracked = " (tracked by git)" if s.git_tracked else " (not tracked by git)" if s.git_tracked is False else ""
            out.append(
                StoreFinding(
                    "store-never-read",
                    "info",
                    f"{s.path}{tracked}: {_memories(s.memories)} no session loads — Claude Code reads {reads} ({report.reads_why})",
                    s.path,
                    reads,
                    "committed",
                    (),
                    (
                        _merge_fix(loc, s.path, reads, copy=True),
                        _setting_fix(
                            f"or make it the store: autoMemoryDirectory = {s.path} in .claude/settings.local.json (counts in a trusted workspace)",
                            str(Path(loc.git_root or loc.project_root) / ".claude" / "settings.local.json"),
                            "autoMemoryDirectory",
                            s.path,
                        ),
                    ),
                )
            )
    off = _auto_memory_off(loc, report, by_path)
    if off is not None:
        out.append(off)
    out.extend(_ignored_settings(loc, report))
    return out


def _split(loc: Locations, report: StoresReport, s: Store, info_of_cwd: dict[str, ProjectDirInfo]) -> StoreFinding:
    reads = report.reads
    readers = s.readers
    relations = {info_of_cwd[_norm(r.cwd)].relation for r in readers if r.cwd and _norm(r.cwd) in info_of_cwd}
    fixes: list[Fix] = []
    held = f"{_memories(s.memories)}" if s.memories else "no memories yet"
    source = loc.memory_dir_source
    setting_file = str(loc.settings.paths.get(source, "")) if source in ("local", "project") else ""  # type: ignore[call-overload]
    if "broken-worktree" in relations:
        cause = "worktree-link"
        wt = next(r.cwd for r in readers if r.cwd and info_of_cwd.get(_norm(r.cwd)) is not None and info_of_cwd[_norm(r.cwd)].relation == "broken-worktree")
        main = str(loc.canonical_git_root or loc.git_root or loc.project_root)
        why = f"the worktree {wt} was moved without `git worktree repair`: its back-link is broken, so its sessions read their own store"
        fixes.append(Fix(f"repair the worktree's link so its sessions share {reads}", f"git -C {_q(main)} worktree repair {_q(wt)}"))
        if s.memories:
            fixes.append(_merge_fix(loc, s.path, reads))
    elif "main" in relations:
        cause = "worktree-link"
        here = str(loc.git_root or loc.project_root)
        main_cwd = next(r.cwd for r in readers if r.cwd and info_of_cwd.get(_norm(r.cwd)) is not None and info_of_cwd[_norm(r.cwd)].relation == "main")
        main = str(find_git_root(Path(main_cwd)) or main_cwd)
        why = (
            f"this checkout is a worktree moved without `git worktree repair`: its back-link is broken, so it reads a store of its own "
            f"while the main checkout {main} reads {s.path}"
        )
        fixes.append(Fix(f"repair this worktree's link: it then reads {s.path}", f"git -C {_q(main)} worktree repair {_q(here)}"))
        here_store = next((x for x in report.stores if x.path == reads), None)
        if here_store is not None and here_store.memories:
            fixes.append(_merge_fix(loc, reads, s.path, after="after the repair, "))
    elif "moved" in relations:
        cause = "moved"
        old = next(r.cwd for r in readers if r.cwd and info_of_cwd.get(_norm(r.cwd)) is not None and info_of_cwd[_norm(r.cwd)].relation == "moved")
        why = f"the checkout at {old} no longer exists (moved or deleted): the store is keyed by that path"
        if s.memories:
            fixes.append(_merge_fix(loc, s.path, reads))
    elif setting_file and s.path == slug_store(loc, str(loc.canonical_git_root or loc.project_root)):
        changed = _mtime(setting_file)
        late = [r for r in readers if changed is not None and (parse_time(r.time) or 0) >= changed]
        if late:
            cause = "trust"
            readers = late
            why = (
                f"autoMemoryDirectory in {setting_file} counts only in a trusted workspace (and in -p runs without --ignore-persisted-trust): "
                f"these sessions did not honour it"
            )
            fixes.append(Fix(f"trust this folder in Claude Code (accept its trust dialog once): interactive sessions then honour autoMemoryDirectory in {setting_file}"))
        else:
            cause = "setting-changed"
            when = time.strftime("%Y-%m-%d", time.gmtime(changed)) if changed is not None else "later"
            why = f"they ran before autoMemoryDirectory in {setting_file} (last changed {when}) pointed at {reads}"
        if s.memories:
            fixes.append(_merge_fix(loc, s.path, reads))
    else:
        cause = None
        why = f"they were not told {reads}"
        if s.memories:
            fixes.append(_merge_fix(loc, s.path, reads))
    return StoreFinding(
        "store-split",
        "warning",
        f"Sessions of this repository read two stores: {reads} ({report.reads_why}) and {s.path} ({held}), read by {_sessions_words(readers)} — {why}",
        s.path,
        reads,
        cause,
        tuple(readers),
        tuple(fixes),
    )


def _mtime(path: str) -> float | None:
    try:
        return os.stat(path).st_mtime
    except OSError:
        return None


def _plugins(loc: Locations) -> list[tuple[str, str]]:
    """Enabled plugins whose name speaks of memory, with the settings layer enabling each."""
    found: dict[str, str] = {}
    for layer, data in loc.settings.layers.items():
        plugins = data.get("enabledPlugins") if isinstance(data, dict) else None
        if isinstance(plugins, dict):
            for name, on in plugins.items():
                if on is True and isinstance(name, str) and any(h in name.lower() for h in MEMORY_PLUGIN_HINTS):
                    found.setdefault(name, layer)
    return sorted(found.items())


def _auto_memory_off(loc: Locations, report: StoresReport, by_path: dict[str, Store]) -> StoreFinding | None:
    if loc.auto_memory_enabled:
        return None
    source = loc.auto_memory_source
    switch = loc.flavor.disable_auto_memory_env
    if source == "env":
        where, file = f"${switch} in the environment", None
        setting = None
    elif source.startswith(switch):
        layer = loc.auto_memory_layer
        file = str(loc.settings.paths.get(layer, "")) if layer else ""  # type: ignore[call-overload]
        where = f"{switch} in the env block of {file or source}"
        setting = {"file": file, "key": f"env.{switch}", "change": "remove it"}
    else:
        file = str(loc.settings.paths.get(source, ""))  # type: ignore[call-overload]
        where = f"autoMemoryEnabled: false in {file or source}"
        setting = {"file": file, "key": "autoMemoryEnabled", "change": "remove it or set it to true"}
    on = [i for i, ev in enumerate(report.sessions) if ev.told or ev.loaded]
    last_on = report.sessions[on[-1]] if on else None
    nxt = on[-1] + 1 if on else 0
    since = report.sessions[nxt] if nxt < len(report.sessions) else None
    evidence: list[SessionRef] = []
    when = ""
    if since is not None:
        evidence.append(_ref(since))
        when = f"; since session {since.session_id[:8]} on {since.first_time[:10] if since.first_time else 'an unknown day'} no session got the memory instructions or the index"
        if last_on is not None:
            evidence.append(_ref(last_on))
            when += f" (the last that did: {last_on.session_id[:8]} on {last_on.first_time[:10] if last_on.first_time else 'an unknown day'})"
    plugins = _plugins(loc)
    beside = ""
    if plugins:
        names = ", ".join(n for n, _ in plugins)
        beside = f"; {names} {'is' if len(plugins) == 1 else 'are'} enabled beside it" + (
            " (claude-mem's installer sets this switch)" if any(n.startswith("claude-mem") for n, _ in plugins) else ""
        )
    store = by_path.get(report.reads)
    held = store.memories if store is not None else 0
    severity: Literal["warning", "info"] = "warning" if held else "info"
    text = f"Auto memory is off ({where}): {report.reads} ({_memories(held)}) is neither loaded nor written{when}{beside}"
    if setting is not None and setting["file"]:
        fix = _setting_fix(f"to turn Claude Code's memory back on, {setting['change']} ({setting['key']} in {setting['file']})", setting["file"], setting["key"], None)
    else:
        fix = Fix(f"unset ${switch} in the shell that starts Claude Code", f"unset {switch}", setting)
    return StoreFinding("auto-memory-off", severity, text, report.reads, report.reads, "switch", tuple(evidence), (fix,))


def _ignored_settings(loc: Locations, report: StoresReport) -> list[StoreFinding]:
    out: list[StoreFinding] = []
    home = loc.user_base_dir.parent  # only `~/x` is expanded with it; validity does not depend on it
    for layer, _trust in loc.flavor.behaviour.memory_dir_sources:
        value = loc.settings.layers.get(layer, {}).get("autoMemoryDirectory")
        if value is None:
            continue
        path, reason = validate_memory_dir_override(value, expand_tilde=True, home=home)
        if path is not None:
            continue
        file = str(loc.settings.paths.get(layer, layer))
        told = [_ref(ev) for ev in report.sessions if report.reads in ev.read_dirs]
        out.append(
            StoreFinding(
                "memory-setting-ignored",
                "warning",
                f"autoMemoryDirectory in {file} {reason}: Claude Code skips it without a word and reads {report.reads} ({report.reads_why})"
                + (f" — as {_sessions_words(told[-1:])} was told" if told else ""),
                None,
                report.reads,
                "setting",
                tuple(told[-1:]),
                (_setting_fix("give an absolute path (or ~/…), or remove the key", file, "autoMemoryDirectory", None),),
            )
        )
    return out


def slug_store(loc: Locations, folder: str) -> str:
    """The default store of sessions started in ``folder``: ``<base>/projects/<slug>/memory``."""
    return _norm(loc.user_base_dir / "projects" / slugify(folder) / "memory")
