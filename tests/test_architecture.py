"""The house rules, checked on the source: which part of memtui may import which.

- ``memtui.core`` is a library with no UI: importing any of its modules (in a fresh interpreter)
  pulls in neither ``textual`` nor ``rich``, and it never imports the CLI or the TUI.
- The core is made of rooms (``memtui/core/<room>/``); a room imports only the rooms listed for
  it in ``ROOM_DEPS`` (one way: places → memory → writes → the subsystems).
- No two modules import each other, directly or through others, lazily or not.
- The TUI (``memtui.tui``) and the CLI commands (``memtui.commands``) never import each other;
  what they share lives in the core. Only the entry point ``memtui.cli`` knows both.
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PACKAGE = REPO / "memtui"
CORE = PACKAGE / "core"

# room -> the rooms it may import (besides itself).
ROOM_DEPS: dict[str, frozenset[str]] = {
    "base": frozenset(),
    "places": frozenset({"base"}),
    "memory": frozenset({"base", "places"}),
    "writes": frozenset({"base", "places", "memory"}),
    "sessions": frozenset({"base", "places", "memory"}),
    "cascade": frozenset({"base", "places", "memory"}),
    "recall": frozenset({"base", "places", "memory", "sessions"}),
    # verify: memories checked against the code and each other; Claude's judgement of
    # conflicts uses recall's Anthropic client helpers (make_client, has_credentials)
    "verify": frozenset({"base", "places", "memory", "sessions", "recall"}),
    "agent": frozenset({"base", "places", "memory", "writes"}),
    "team": frozenset({"base", "places", "memory", "writes"}),
    # stores: every memory dir in play, from the transcripts; merges through the write path;
    # the index cost per sub-agent counted with audit's token counter
    "stores": frozenset({"base", "places", "memory", "writes", "sessions", "audit"}),
    "doctor": frozenset({"base", "places", "memory", "writes", "sessions", "cascade", "recall", "verify", "stores"}),
    "extract": frozenset({"base", "places", "memory", "writes", "sessions", "agent", "recall"}),
    "dream": frozenset({"base", "places", "memory", "writes", "sessions", "agent", "recall", "doctor", "cascade", "verify"}),
    "audit": frozenset({"base", "places", "memory", "sessions", "cascade", "recall"}),
}

Graph = Mapping[str, frozenset[str]]


def module_name(path: Path) -> str:
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def all_modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _resolve(importer: str, is_package: bool, node: ast.ImportFrom) -> str:
    if node.level == 0:
        return node.module or ""
    base = importer.split(".") if is_package else importer.split(".")[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def import_graph() -> dict[str, frozenset[str]]:
    """module -> the memtui modules it imports anywhere in its source (top level, inside
    functions, under ``TYPE_CHECKING``): ``from pkg import name`` counts as importing
    ``pkg.name`` when that is a module, else ``pkg``."""
    modules = all_modules()
    graph: dict[str, frozenset[str]] = {}
    for name, path in modules.items():
        targets: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets.update(a.name for a in node.names if a.name.split(".")[0] == "memtui")
            elif isinstance(node, ast.ImportFrom):
                target = _resolve(name, path.name == "__init__.py", node)
                if target.split(".")[0] != "memtui":
                    continue
                for alias in node.names:
                    sub = f"{target}.{alias.name}"
                    targets.add(sub if sub in modules else target)
        targets.discard(name)
        graph[name] = frozenset(t for t in targets if t in modules)
    return graph


def room_of(module: str) -> str | None:
    parts = module.split(".")
    return parts[2] if len(parts) > 2 and parts[:2] == ["memtui", "core"] else None


def cycles(graph: Graph) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0

    def visit(start: str) -> None:
        nonlocal counter
        work: list[tuple[str, Iterable[str]]] = [(start, iter(sorted(graph.get(start, ()))))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))

    for module in sorted(graph):
        if module not in index:
            visit(module)
    return found


def violations(graph: Graph) -> list[str]:
    """Every broken house rule in ``graph``, one sentence each (empty: the house is in order)."""
    out: list[str] = []
    for module, targets in sorted(graph.items()):
        room = room_of(module)
        for target in sorted(targets):
            if module.startswith("memtui.core") and not target.startswith("memtui.core"):
                out.append(f"{module} (core) imports {target}")
                continue
            if module.startswith("memtui.tui") and target.startswith(("memtui.commands", "memtui.cli")):
                out.append(f"{module} (TUI) imports {target} (CLI)")
            if module.startswith("memtui.commands") and target.startswith(("memtui.tui", "memtui.cli")):
                out.append(f"{module} (CLI) imports {target}")
            target_room = room_of(target)
            if room is None or target_room is None or target_room == room:
                continue
            if room not in ROOM_DEPS:
                out.append(f"{module}: room {room!r} is not in ROOM_DEPS")
            elif target_room not in ROOM_DEPS[room]:
                out.append(f"{module} imports {target}: room {room!r} may not use room {target_room!r}")
    for component in cycles(graph):
        out.append("import cycle: " + " ↔ ".join(component))
    return out


def test_every_core_module_sits_in_a_known_room() -> None:
    loose = [m for m in all_modules() if m.startswith("memtui.core.") and room_of(m) not in ROOM_DEPS]
    assert loose == []


def test_the_house_rules_hold() -> None:
    assert violations(import_graph()) == []


def test_the_rules_catch_a_forbidden_import() -> None:
    graph = dict(import_graph())
    backwards = {**graph, "memtui.core.memory.catalog": graph["memtui.core.memory.catalog"] | {"memtui.core.writes.edits"}}
    assert violations(backwards) == [
        "memtui.core.memory.catalog imports memtui.core.writes.edits: room 'memory' may not use room 'writes'"
    ]
    ui_in_core = {**graph, "memtui.core.base.units": graph["memtui.core.base.units"] | {"memtui.tui.badges"}}
    assert "memtui.core.base.units (core) imports memtui.tui.badges" in violations(ui_in_core)
    tui_to_cli = {**graph, "memtui.tui.app": graph["memtui.tui.app"] | {"memtui.commands.common"}}
    assert violations(tui_to_cli) == ["memtui.tui.app (TUI) imports memtui.commands.common (CLI)"]
    # A cycle inside one room, closed by an import back (corpus → lexical → docs → corpus; the
    # vectors module, which corpus imports and which imports docs, joins it, and so does
    # keptlexical, which corpus imports and which imports docs and lexical).
    cycle = {**graph, "memtui.core.recall.docs": graph["memtui.core.recall.docs"] | {"memtui.core.recall.corpus"}}
    assert violations(cycle) == [
        "import cycle: memtui.core.recall.corpus ↔ memtui.core.recall.docs ↔ memtui.core.recall.keptlexical ↔ memtui.core.recall.lexical ↔ memtui.core.recall.vectors"
    ]
    pair = {**graph, "memtui.core.dream.claude": graph["memtui.core.dream.claude"] | {"memtui.core.dream.run"}}
    assert violations(pair) == ["import cycle: memtui.core.dream.claude ↔ memtui.core.dream.run"]


def test_the_graph_sees_lazy_and_relative_imports() -> None:
    graph = import_graph()
    # ``make_consolidator`` imports the claude consolidator inside a function.
    assert "memtui.core.dream.claude" in graph["memtui.core.dream.run"]
    # ``from .discovery import compute_cascade`` in the cascade room's __init__.
    assert "memtui.core.cascade.discovery" in graph["memtui.core.cascade"]


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


def test_importing_the_whole_core_loads_no_ui_library() -> None:
    core = [m for m in all_modules() if m.startswith("memtui.core")]
    assert "memtui.core.memory.catalog" in core
    assert ui_modules_after(CHECK, *core) == []


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
