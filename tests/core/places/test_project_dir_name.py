"""``CLAUDE_CODE_PROJECT_DIR_NAME``: the project dir's name instead of the slug, only while
``CLAUDE_CONFIG_DIR`` is set and only for a name the CLI accepts (``/^[A-Za-z0-9_-]{1,64}$/``,
not a name Windows reserves — read from the 2.1.328 and 2.1.332 bundles; the capture
``stores/project_dir_name`` shows the CLI's transcripts and memory dir under that name)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from memtui.core.places.flavor import AGENT, CLAUDE, CLAUDE_2_1_328
from memtui.core.places.locations import resolve_locations


@pytest.mark.parametrize("flavor", [CLAUDE, CLAUDE_2_1_328])
def test_the_name_replaces_the_slug_with_a_config_dir(tmp_path: Path, flavor: object) -> None:
    proj = tmp_path / "proj"
    proj.mkdir()
    cfg = tmp_path / "cfg"
    loc = resolve_locations(flavor, proj, environ={"HOME": str(tmp_path / "home"), "CLAUDE_CONFIG_DIR": str(cfg), "CLAUDE_CODE_PROJECT_DIR_NAME": "my-named_1"})  # type: ignore[arg-type]
    assert loc.memory_dir == cfg / "projects" / "my-named_1" / "memory"
    assert loc.sessions_dir == cfg / "projects" / "my-named_1"


@pytest.mark.parametrize("name", ["../x", "a/b", "con", "LPT1", "x" * 65, "", "naïve"])
def test_a_name_the_cli_refuses_is_ignored(tmp_path: Path, name: str) -> None:
    proj = tmp_path / "proj"
    proj.mkdir()
    cfg = tmp_path / "cfg"
    loc = resolve_locations(CLAUDE, proj, environ={"HOME": str(tmp_path / "home"), "CLAUDE_CONFIG_DIR": str(cfg), "CLAUDE_CODE_PROJECT_DIR_NAME": name})
    assert loc.memory_dir == cfg / "projects" / re.sub(r"[^A-Za-z0-9]", "-", str(proj)) / "memory"


def test_without_a_config_dir_the_name_is_ignored(tmp_path: Path) -> None:
    proj = tmp_path / "proj"
    proj.mkdir()
    home = tmp_path / "home"
    loc = resolve_locations(CLAUDE, proj, environ={"HOME": str(home), "CLAUDE_CODE_PROJECT_DIR_NAME": "named"})
    assert loc.memory_dir.parent.name != "named"
    assert AGENT.project_dir_name_env is None
