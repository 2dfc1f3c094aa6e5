"""The workspace of ``tests/captures/claude-2.1.328/usage/usage.json`` (``scripts/capture_usage.py``):
real Claude Code 2.1.328 transcripts in which the agent recalled, read and wrote memories —
from two cwds of one repository, with a sub-agent — rebuilt under ``tmp_path``."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from memtui.core.places.slug import slugify

from .captures import fill

CAPTURE = Path(__file__).resolve().parents[1] / "captures" / "claude-2.1.328" / "usage" / "usage.json"


@dataclass
class UsageWorkspace:
    """``root`` (the workspace), ``home`` (its HOME), ``proj`` (the repository), ``memory_dir``,
    ``projects`` (``~/.claude/projects``), ``data`` (the capture, placeholders filled)."""

    root: Path
    home: Path
    proj: Path
    memory_dir: Path
    projects: Path
    data: dict[str, Any]

    def transcript(self, run: str) -> Path:
        """The main transcript of run ``run`` (by its prompt's first words)."""
        prompt = next(r["prompt"] for r in self.data["runs"] if r["name"] == run)
        for rel, item in self.data["transcripts"].items():
            if "/subagents/" not in rel and prompt.split()[0] in item["text"].split("\n", 3)[2]:
                return self.projects / rel
        raise KeyError(run)

    @property
    def captured_at(self) -> float:
        return float(self.data["captured_at"])


def rebuild_usage(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> UsageWorkspace:
    """Rebuild the captured workspace (files and transcripts with their mtimes, an empty git
    repository in ``proj``), point HOME at its home and memtui's state dir into ``tmp_path``."""
    if not CAPTURE.exists():
        pytest.skip(f"no capture {CAPTURE}")
    root = Path(os.path.realpath(tmp_path)) / "usage"
    data = fill(json.loads(CAPTURE.read_text(encoding="utf-8")), root)
    home = root / "home"
    projects = home / ".claude" / "projects"
    for rel, item in data["files"].items():
        _put(root / rel, item)
    for rel, item in data["transcripts"].items():
        _put(projects / rel, item)
    git = root / "proj" / ".git"
    git.mkdir(parents=True, exist_ok=True)
    (git / "HEAD").write_text("ref: refs/heads/main\n")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("MEMTUI_STATE_DIR", str(tmp_path / "state"))
    proj = root / "proj"
    return UsageWorkspace(root, home, proj, projects / slugify(str(proj)) / "memory", projects, data)


def _put(path: Path, item: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(item["text"].encode("utf-8"))
    os.utime(path, (item["mtime"], item["mtime"]))
