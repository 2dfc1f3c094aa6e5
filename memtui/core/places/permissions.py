"""Settings a CLI release's background memory work reads besides its own keys: a nested key of
the merged settings, and the permission rules that would refuse its memory agents' writes
(Claude Code skips its dream and its extraction, with a warning, when a deny or ask rule on
Edit/Write covers the memory dir).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from memtui.core.places.settings import MERGE_PRIORITY, SettingsLayers


def setting_value(settings: SettingsLayers | None, path: tuple[str, ...]) -> tuple[Any, str | None]:
    """A (possibly nested) key of the merged settings: its value in the first layer (policy,
    local, project, user) that has the key at all (``null`` included: the CLI tests the key
    against ``undefined``), and that layer; ``(None, None)`` when no layer has it."""
    if settings is None:
        return None, None
    for source in MERGE_PRIORITY:
        node: Any = settings.layers.get(source, {})
        for key in path[:-1]:
            node = node.get(key) if isinstance(node, dict) else None
        if isinstance(node, dict) and path[-1] in node:
            return node[path[-1]], source
    return None, None


def rule_covers(rule: str, memory_dir: Path, root: Path, home: Path) -> bool:
    """Whether a deny/ask rule on Edit or Write covers a ``.md`` file of the memory dir:
    ``Edit``, ``Edit(*)``, ``Edit(//abs/**)``, ``Edit(~/x/**)``, ``Edit(/x/**)`` (relative to
    ``root``, the settings file's root), ``Edit(x/**)`` (relative to ``root`` as well):
    gitignore-style patterns, braces expanded, as the CLI's file rules are written. The file
    tested is ``<memory dir>/MEMORY.md``."""
    import bracex
    from pathspec import GitIgnoreSpec

    tool, _, rest = rule.strip().partition("(")
    if tool.strip() not in ("Edit", "Write"):
        return False
    if not rest:
        return True
    pattern = rest.rsplit(")", 1)[0].strip()
    if pattern in ("", "*", "**", "/**", "//**"):
        return True
    if pattern.startswith("//"):
        base, pat = Path("/"), pattern[2:]
    elif pattern.startswith("~/"):
        base, pat = home, pattern[2:]
    elif pattern.startswith("/"):
        base, pat = root, pattern[1:]
    else:
        base, pat = root, pattern[2:] if pattern.startswith("./") else pattern
    try:
        rel = (memory_dir / "MEMORY.md").relative_to(base).as_posix()
    except ValueError:
        return False
    lines = ["/" + p.lstrip("/") if "/" in p.rstrip("/") else p for p in bracex.expand(pat)]
    return GitIgnoreSpec.from_lines(lines).match_file(rel)


def memory_write_rule(settings: SettingsLayers | None, memory_dir: Path, project_root: Path | None) -> tuple[str, str, str, Path | None] | None:
    """The first deny or ask rule (policy, local, project, user) that covers the memory dir:
    ``(rule, "deny"|"ask", layer, settings file)``, or ``None``. A rule's root is the project
    for the project and local settings, the settings file's folder for the user and policy
    ones."""
    if settings is None:
        return None
    home = Path(os.environ.get("HOME") or Path.home())
    for source in MERGE_PRIORITY:
        perms = settings.layers.get(source, {}).get("permissions")
        if not isinstance(perms, dict):
            continue
        path = settings.paths.get(source)
        root = project_root or Path.cwd()
        if source in ("user", "policy") and path is not None:
            root = path.parent
        for behavior in ("deny", "ask"):
            rules = perms.get(behavior)
            for rule in rules if isinstance(rules, list) else ():
                if isinstance(rule, str) and rule_covers(rule, memory_dir, root, home):
                    return rule, behavior, source, path
    return None
