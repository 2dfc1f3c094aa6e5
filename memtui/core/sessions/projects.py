"""Which transcripts belong to a project's memory: its sessions, wherever they ran, and their
sub-agents.

The agent files a session under ``<base>/projects/<slug of its cwd>/`` but keeps one memory dir
per repository (the slug of the canonical git root): a session started in ``repo/svc`` or in a
worktree of the repository writes to another project dir and uses the same memory. So the
project dirs that count are the project's own sessions dir and every other project dir whose
sessions ran in a cwd inside the repository's root (or one whose canonical git root is the
same: a worktree elsewhere). A project dir's cwd is read from the ``cwd`` field near the start
of one of its transcripts.

In a project dir: ``<session-id>.jsonl`` is a session; Claude Code 2.1.328 writes a sub-agent's
transcript under ``<session-id>/subagents/[<subdir>/]agent-<id>.jsonl`` (earlier releases:
``agent-<id>.jsonl`` next to the sessions). A sub-agent's uses count for its parent session.
"""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path

from memtui.core.places.gitroot import resolve_git_roots
from memtui.core.places.locations import Locations

from .transcripts import SUBAGENT_PREFIX

_CWD = re.compile(rb'(?<!\\)"cwd":\s*"((?:[^"\\]|\\.){1,4096})"')
_SESSION_ID = re.compile(rb'(?<!\\)"sessionId":\s*"((?:[^"\\]|\\.){1,4096})"')
# How much of a transcript's start is searched for its cwd (the first lines are small).
HEAD_BYTES = 64 * 1024
SUBAGENTS_DIR = "subagents"


@dataclass(frozen=True, slots=True)
class TranscriptFile:
    """One transcript: ``session_id`` (a sub-agent's: its parent session's), ``agent_id`` (a
    sub-agent's id, else ``None``), ``project_dir``, and its ``stat``: ``size`` (bytes),
    ``mtime_ns``, ``inode``."""

    path: Path
    session_id: str
    agent_id: str | None
    project_dir: Path
    size: int
    mtime_ns: int
    inode: int

    @property
    def subagent(self) -> bool:
        """A sub-agent's transcript."""
        return self.agent_id is not None

    @property
    def mtime(self) -> float:
        """The mtime in epoch seconds."""
        return self.mtime_ns / 1e9


def _file(path: Path, session_id: str, agent_id: str | None, project_dir: Path) -> TranscriptFile | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    if not stat.S_ISREG(st.st_mode):
        return None
    return TranscriptFile(path, session_id, agent_id, project_dir, st.st_size, st.st_mtime_ns, st.st_ino)


def list_transcripts(project_dir: Path) -> list[TranscriptFile]:
    """Every transcript of ``project_dir``: sessions, their sub-agents and legacy
    ``agent-*.jsonl`` files, sorted by path. A missing or unreadable dir gives ``[]``."""
    try:
        items = sorted(os.scandir(project_dir), key=lambda e: e.name)
    except OSError:
        return []
    out: list[TranscriptFile] = []
    for item in items:
        name = item.name
        if name.endswith(".jsonl"):
            if name.startswith(SUBAGENT_PREFIX):
                found = _file(Path(item.path), "", name[len(SUBAGENT_PREFIX) : -6], project_dir)
            else:
                found = _file(Path(item.path), name[:-6], None, project_dir)
            if found is not None:
                out.append(found)
            continue
        try:
            is_dir = item.is_dir(follow_symlinks=False)
        except OSError:
            continue
        if not is_dir:
            continue
        sub = Path(item.path) / SUBAGENTS_DIR
        if sub.is_symlink() or not sub.is_dir():
            continue  # a link is not followed: it could lead anywhere (/, a network disk)
        for dirpath, dirnames, filenames in os.walk(sub):
            dirnames.sort()
            for fname in sorted(filenames):
                if fname.startswith(SUBAGENT_PREFIX) and fname.endswith(".jsonl"):
                    found = _file(Path(dirpath) / fname, name, fname[len(SUBAGENT_PREFIX) : -6], project_dir)
                    if found is not None:
                        out.append(found)
    return out


def transcript_cwd(path: Path) -> str | None:
    """The first ``cwd`` in the first ``HEAD_BYTES`` of ``path`` (``None`` when none)."""
    return _head_string(path, _CWD)


def transcript_session_id(tf: TranscriptFile) -> str:
    """The session ``tf`` belongs to: its ``session_id``, else (a legacy ``agent-*.jsonl``,
    named by the sub-agent) the first ``sessionId`` in its first ``HEAD_BYTES``, else its
    file name's stem."""
    return tf.session_id or _head_string(tf.path, _SESSION_ID) or tf.path.stem


def _head_string(path: Path, pattern: re.Pattern[bytes]) -> str | None:
    """The first string value ``pattern`` finds in the first ``HEAD_BYTES`` of ``path``."""
    import orjson

    try:
        with open(path, "rb") as fh:
            head = fh.read(HEAD_BYTES)
    except OSError:
        return None
    m = pattern.search(head)
    if m is None:
        return None
    try:
        value = orjson.loads(b'"' + m.group(1) + b'"')
    except orjson.JSONDecodeError:
        return None
    return value if isinstance(value, str) else None


def _inside(path: str, root: str) -> bool:
    path, root = os.path.normpath(path), os.path.normpath(root)
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


@dataclass(frozen=True, slots=True)
class ProjectDir:
    """A project dir whose sessions use this memory: ``path``, ``cwd`` (of its sessions, when
    one says) and ``reason`` (a sentence)."""

    path: Path
    cwd: str | None
    reason: str


def project_dirs(locations: Locations) -> list[ProjectDir]:
    """The project dirs whose sessions use ``locations``' memory dir: the project's own
    sessions dir first (when it exists), then the others in name order (see the module
    docstring)."""
    own = locations.sessions_dir
    root = locations.canonical_git_root or locations.git_root or locations.project_root
    out: list[ProjectDir] = []
    if own.is_dir():
        out.append(ProjectDir(own, None, "this project's sessions"))
    base = locations.user_base_dir / "projects"
    try:
        names = sorted(e.name for e in os.scandir(base) if e.is_dir(follow_symlinks=False))
    except OSError:
        return out
    canonical = locations.canonical_git_root
    for name in names:
        path = base / name
        if path == own:
            continue
        cwd = next((c for t in list_transcripts(path)[:3] if (c := transcript_cwd(t.path)) is not None), None)
        if cwd is None:
            continue
        if _inside(cwd, str(root)):
            out.append(ProjectDir(path, cwd, f"sessions in {cwd}, inside {root}"))
        elif canonical is not None and os.path.isdir(cwd) and resolve_git_roots(Path(cwd)).canonical == canonical:
            out.append(ProjectDir(path, cwd, f"sessions in {cwd}, a worktree of {canonical}"))
    return out


def project_transcripts(locations: Locations) -> list[TranscriptFile]:
    """Every transcript of ``project_dirs(locations)``; a legacy sub-agent file (no session
    in its name) gets the ``sessionId`` its first lines name, else its own file stem."""
    out: list[TranscriptFile] = []
    for pdir in project_dirs(locations):
        out.extend(list_transcripts(pdir.path))
    return out
