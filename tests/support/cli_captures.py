"""The captures of Claude Code 2.1.328's own dream and extraction
(``tests/captures/claude-2.1.328/background/``, made by its ``regenerate.py`` from the real CLI)
and a builder that lays one run's state out again under a test's temp dir.

A run's state (``before`` the CLI ran, or ``after``) is what the CLI's gates read: the flag
cache of ``~/.claude.json``, ``~/.claude/settings.json``, the consolidation lock (content, mtime)
and the session transcripts of the project dir (names, mtimes). Ages are kept relative to the
snapshot's time ``at`` (the CLI's own clock, shared by its transcripts' timestamps), so the
rebuilt files carry the captured mtimes exactly and a test freezes its clock at ``at + offset``.
Transcript *contents* do not matter to the CLI's session gate; a session is written empty unless
the capture kept the CLI's own transcript of it (then its real lines are written, with the
capture's HOME and project paths replaced by the test's, as the oracle re-keys its transcripts).
"""

from __future__ import annotations

import gzip
import json
import os
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cache
from pathlib import Path
from typing import Any

CAPTURES = Path(__file__).resolve().parents[1] / "captures" / "claude-2.1.328" / "background"


@cache
def runs() -> dict[str, dict[str, Any]]:
    """Every captured run by name."""
    data = json.loads((CAPTURES / "runs.json").read_text(encoding="utf-8"))
    return {r["run"]: r for r in data["runs"]}


def prompt(name: str) -> str:
    """A captured prompt or notice file of ``prompts/``."""
    return (CAPTURES / "prompts" / name).read_text(encoding="utf-8")


def kept_transcripts() -> dict[str, bytes]:
    """The CLI's own transcripts the capture kept: file name → bytes."""
    out = {}
    for gz in sorted((CAPTURES / "transcripts").glob("*.jsonl.gz")):
        _run, name = gz.name[: -len(".gz")].split(".", 1)
        out[name] = gzip.decompress(gz.read_bytes())
    return out


def slug(path: str) -> str:
    """The CLI's project-dir slug of a short path (no hashing needed below 200 characters)."""
    return re.sub(r"[^A-Za-z0-9]", "-", path)


@dataclass(frozen=True)
class Scene:
    """A run's state rebuilt: ``home``, ``project`` (the cwd), ``project_dir`` (its transcripts),
    ``memory_dir``, ``at`` (epoch s of the snapshot), and the run's record."""

    home: Path
    project: Path
    project_dir: Path
    memory_dir: Path
    at: float
    run: dict[str, Any]

    def now(self, offset: float) -> datetime:
        """The frozen clock ``offset`` seconds after the snapshot."""
        return datetime.fromtimestamp(self.at + offset, UTC)


def _stamp(path: Path, when: float) -> None:
    os.utime(path, (when, when))


def build(tmp_path: Path, run: str, state: str = "before", *, lock_content: str | None = None) -> Scene:
    """Lay out run ``run``'s ``state`` (``before`` or ``after``) under ``tmp_path``: HOME with
    ``.claude.json`` (the flag cache) and ``.claude/settings.json``, a git project, its project
    dir with every session transcript and the memory dir with the lock and the memories.
    ``lock_content`` replaces the lock's content (a live PID stand-in)."""
    record = runs()[run]
    snap = record[state]
    at = snap["at"]
    home = tmp_path / "home"
    project = tmp_path / "proj"
    (project / ".git").mkdir(parents=True)
    (project / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (project / "CLAUDE.md").write_text("# Project\n\nDeploy with `make deploy` (staging first).\nRun tests with `pytest -x`.\n")
    project_dir = home / ".claude" / "projects" / slug(str(project))
    memory_dir = project_dir / "memory"
    memory_dir.mkdir(parents=True)
    config: dict[str, Any] = {}
    if snap["flags"] is not None:
        config["cachedGrowthBookFeatures"] = snap["flags"]
    (home / ".claude.json").write_text(json.dumps(config))
    if snap["user_settings"] is not None:
        (home / ".claude" / "settings.json").write_text(json.dumps(snap["user_settings"]))
    kept = kept_transcripts()
    moves = [(record["paths"]["home"], str(home)), (record["paths"]["cwd"], str(project)), (slug(record["paths"]["cwd"]), slug(str(project)))]
    for s in snap["sessions"]:
        path = project_dir / s["name"]
        data = kept.get(s["name"], b"")
        for old, new in moves:  # the CLI's own lines name its HOME and cwd: moved here with them
            data = data.replace(old.encode(), new.encode())
        path.write_bytes(data)
        _stamp(path, at - s["age_s"])
    for m in snap["memories"]:
        path = memory_dir / m["name"]
        path.write_text("# Memory index\n" if m["name"] == "MEMORY.md" else f"---\nname: {m['name'][:-3]}\ndescription: {m['name'][:-3]}\ntype: project\n---\n\nx\n")
        _stamp(path, at - m["age_s"])
    lock = snap["lock"]
    if lock["exists"]:
        path = memory_dir / ".consolidate-lock"
        path.write_text(lock["content"] if lock_content is None else lock_content)
        _stamp(path, at - lock["age_s"])
    return Scene(home, project, project_dir, memory_dir, at, record)


def captured_paths(record: dict[str, Any]) -> tuple[str, str]:
    """The memory dir (with its final ``/``) and the transcripts dir the CLI wrote in its
    prompt for ``record``'s scenario."""
    return record["paths"]["memory_dir"].rstrip("/") + "/", record["paths"]["project_dir"].rstrip("/")
