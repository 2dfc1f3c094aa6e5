"""Isolation for every test: no test reads the real home, /etc, or the real state dir."""

from __future__ import annotations

import gc
import os
from pathlib import Path

import pytest

_ENV_PREFIXES = ("AGENT_", "CLAUDE_", "MEMTUI_", "ANTHROPIC_")


@pytest.fixture(autouse=True)
def isolated_env(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Point HOME, XDG dirs, the managed dir and memtui's state dir at a fresh temp tree, clear
    every variable that steers the agent or memtui, and leave any `claude` program off PATH.
    Returns the fake HOME."""
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
    # An installed `claude` would pick the release profile memtui models: tests see none.
    path = [d for d in os.environ.get("PATH", "").split(os.pathsep) if d and not os.path.exists(os.path.join(d, "claude"))]
    monkeypatch.setenv("PATH", os.pathsep.join(path))
    return home


@pytest.hookimpl(tryfirst=True)
def pytest_unconfigure(config: pytest.Config) -> None:
    """Collect the garbage once, then freeze what survives, before pytest's unraisable-exception
    cleanup runs its five full collections.

    Each full collection walks every live object; with the anthropic SDK's models loaded one costs
    0.1–0.5 s, more on a busy machine. Under pytest-xdist a worker that takes over 5 s to shut down
    is sent SIGINT by execnet, which surfaced as a ``KeyboardInterrupt`` inside hypothesis's GC
    callback ("PytestUnraisableExceptionWarning") at the end of a passing run. Frozen objects are
    not walked again, so the five collections cost almost nothing; garbage that exists now is still
    collected here, with pytest's unraisable hook installed to report it.
    """
    gc.collect()
    gc.freeze()
