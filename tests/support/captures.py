"""Requests captured from the real Claude Code CLI (``tests/captures/``), and the workspaces
they were captured in, rebuilt under ``tmp_path``.

``scripts/capture_claude_code.py`` makes the captures: it runs the CLI against a local mock of
the Messages API and stores, per workspace, its files (with mtimes) and what the CLI sent.
Paths are stored with ``{root}`` (the workspace's folder) and ``{root_slug}`` (its slug); a
test rebuilds the files under its own root and compares memtui's output with the CLI's text,
the placeholders filled in the same way.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from memtui.core.places.slug import slugify

CAPTURES = Path(__file__).resolve().parents[1] / "captures" / "claude-2.1.328" / "context"


@dataclass
class Workspace:
    """A rebuilt workspace: ``root`` (its folder), ``home`` (its HOME), ``cwd`` (where the CLI
    ran), ``data`` (the capture with placeholders filled) and ``captured_at`` (epoch s)."""

    root: Path
    home: Path
    cwd: Path
    data: dict[str, Any]

    @property
    def captured_at(self) -> float:
        return float(self.data["captured_at"])

    def run(self, name: str) -> dict[str, Any]:
        """The capture of run ``name``."""
        return next(r for r in self.data["runs"] if r["name"] == name)

    def set_flags(self, flags: dict[str, Any] | None) -> None:
        """Write the agent's cached feature flags into its config, as the capture run had them."""
        path = self.home / ".claude.json"
        config = json.loads(path.read_text(encoding="utf-8"))
        if flags:
            config["cachedGrowthBookFeatures"] = dict(flags)
        else:
            config.pop("cachedGrowthBookFeatures", None)
        path.write_text(json.dumps(config), encoding="utf-8")


def fill(value: Any, root: Path) -> Any:
    """``value`` with ``{root}`` / ``{root_slug}`` filled in for ``root``."""
    if isinstance(value, str):
        return value.replace("{root_slug}", slugify(str(root))).replace("{root}", str(root))
    if isinstance(value, list):
        return [fill(v, root) for v in value]
    if isinstance(value, dict):
        return {fill(k, root): fill(v, root) for k, v in value.items()}
    return value


def load(name: str) -> dict[str, Any]:
    """The raw capture ``name`` (skipped when the captures are not there)."""
    path = CAPTURES / f"{name}.json"
    if not path.exists():
        pytest.skip(f"no capture {path}")
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def rebuild(name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Workspace:
    """Rebuild the workspace of capture ``name`` under ``tmp_path`` (files, mtimes, an empty
    git repository in ``proj``) and point HOME at its home."""
    root = Path(os.path.realpath(tmp_path)) / name
    data = fill(load(name), root)
    for rel, item in data["files"].items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(item["text"].encode("utf-8"))
        os.utime(path, (item["mtime"], item["mtime"]))
    git = root / "proj" / ".git"
    git.mkdir(parents=True, exist_ok=True)
    (git / "HEAD").write_text("ref: refs/heads/main\n")
    home = root / "home"
    monkeypatch.setenv("HOME", str(home))
    return Workspace(root, home, Path(data["cwd"]), data)
