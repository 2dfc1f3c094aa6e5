"""Issue 2 §7: `memtui.core` is a library with no UI — importing any of its modules (in a fresh
interpreter) must not pull in `textual` or `rich`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
CORE = REPO / "memtui" / "core"


def core_modules() -> list[str]:
    names = []
    for path in sorted(CORE.rglob("*.py")):
        rel = path.relative_to(REPO).with_suffix("")
        parts = list(rel.parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        names.append(".".join(parts))
    return names


CHECK = """
import importlib, json, sys
for name in sys.argv[1:]:
    importlib.import_module(name)
print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in ('textual', 'rich'))))
"""


def ui_modules_after(code: str, *args: str) -> list[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, cwd=REPO, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_core_modules_are_discovered() -> None:
    mods = core_modules()
    assert "memtui.core" in mods
    for expected in (
        "places.slug",
        "places.gitroot",
        "places.locations",
        "memory.memories",
        "memory.index",
        "memory.age",
        "memory.catalog",
        "memory.headers",
        "memory.lint",
    ):
        assert f"memtui.core.{expected}" in mods


@pytest.mark.parametrize("module", core_modules())
def test_importing_core_module_loads_no_ui_library(module: str) -> None:
    assert ui_modules_after(CHECK, module) == []


EXERCISE = """
import json, os, sys
from datetime import datetime, timezone
from pathlib import Path
from memtui.core.memory.catalog import load_catalog, entry_to_json, index_to_json
from memtui.core.places.flavor import AGENT
from memtui.core.places.locations import resolve_locations
d = Path(sys.argv[1])
(d / "p.md").write_text("---\\nname: p\\ndescription: d\\ntype: project\\n---\\nShip it tomorrow.\\n")
(d / "MEMORY.md").write_text("- [p](p.md)\\n- [gone](gone.md)\\n")
cat = load_catalog(d, datetime(2026, 3, 10, tzinfo=timezone.utc))
[entry_to_json(e) for e in cat.entries]
index_to_json(cat.index)
resolve_locations(AGENT, d)
print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in ('textual', 'rich'))))
"""


def test_using_the_core_loads_no_ui_library(tmp_path: Path) -> None:
    # Lazily imported helpers (dateparser for relative dates) must not bring a UI library either.
    assert ui_modules_after(EXERCISE, str(tmp_path)) == []
