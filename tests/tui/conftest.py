"""Fixtures for the app tests: the app on a small memory dir (``support.memories``), with a
frozen clock, built the way the CLI builds it. Helpers to drive it: ``support.pilot``."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from support.memories import NOW, write_memory_dir

from memtui.core.places.flavor import AGENT
from memtui.tui.app import MemtuiApp


@pytest.fixture
def make_app(isolated_env: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[..., MemtuiApp]:
    """A factory for the app on a memory dir under the fake HOME, with the clock frozen at NOW
    — built the way the CLI builds it."""
    monkeypatch.setenv("MEMTUI_NOW", NOW.isoformat())
    project = isolated_env / "project"
    project.mkdir()
    memory_dir = isolated_env / "memory"
    write_memory_dir(memory_dir)

    def factory(*, watch: bool = False) -> MemtuiApp:
        return MemtuiApp.for_project(AGENT, project, memory_dir=memory_dir, watch=watch)

    return factory
