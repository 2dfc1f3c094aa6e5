"""Isolation for every test: no test reads the real home, /etc, or the real state dir."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

_ENV_PREFIXES = ("AGENT_", "CLAUDE_", "MEMTUI_", "ANTHROPIC_")


@pytest.fixture(autouse=True)
def isolated_env(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Point HOME, XDG dirs, the managed dir and memtui's state dir at a fresh temp tree and
    clear every variable that steers the agent or memtui. Returns the fake HOME."""
    root = tmp_path_factory.mktemp("isolated")
    for key in list(os.environ):
        if key.startswith(_ENV_PREFIXES):
            monkeypatch.delenv(key, raising=False)
    home = root / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_STATE_HOME", str(root / "xdg-state"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(root / "xdg-config"))
    monkeypatch.setenv("MEMTUI_MANAGED_DIR", str(root / "managed"))
    monkeypatch.setenv("MEMTUI_STATE_DIR", str(root / "state"))
    return home
