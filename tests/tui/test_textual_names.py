"""No memtui widget, screen or app overwrites an attribute its Textual base already uses.

A pane that set ``self._running`` (``MessagePump``'s own flag) stopped its timers' callbacks
from running; an app that set ``self.watch`` hid ``DOMNode.watch``. This test reads every class
in ``memtui/tui`` that derives from a Textual class and compares the names it assigns or
defines with the names of its Textual base (class attributes and a fresh instance's attributes).
A class that replaces some of them on purpose lists them in ``REPLACES_TEXTUAL``; each listed name
must be one of its base's and one it defines (the list cannot go stale).
"""

from __future__ import annotations

import ast
import importlib
import inspect
from contextlib import suppress
from pathlib import Path

from textual.widget import Widget

import memtui.tui

TUI = Path(memtui.tui.__file__).parent
# Names Textual means subclasses to set or override.
MEANT = {
    "ALLOW_MAXIMIZE", "AUTO_FOCUS", "BINDINGS", "BORDER_TITLE", "COMMANDS", "COMPONENT_CLASSES", "CSS", "CSS_PATH",
    "DEFAULT_CSS", "HORIZONTAL_BREAKPOINTS", "SUB_TITLE", "TITLE", "VERTICAL_BREAKPOINTS", "__init__", "can_focus",
    "can_replace", "check_action", "compose", "cursor_position", "get_content_height", "get_content_width",
    "get_system_commands", "loading", "notify", "render", "render_line", "render_lines", "sub_title", "title", "value",
    "active", "get_theme_variable_defaults", "theme",
    "render_strips", "get_optimal_width", "get_height",  # a Visual's own methods
    "DEFAULT_CLASSES",
}
MEANT_PREFIXES = ("action_", "watch_", "validate_", "compute_", "on_", "_on_", "_watch_")


def textual_names(cls: type) -> tuple[type, set[str]]:
    """The first Textual class in ``cls``'s MRO and every name it has (class and instance)."""
    base = next(b for b in cls.__mro__ if b.__module__.startswith("textual"))
    names = set(dir(base)) | set(vars(Widget()))  # MessagePump's instance attributes (``_running``...)
    with suppress(TypeError):  # a base that needs arguments: its class attributes suffice
        names |= set(vars(base()))
    return base, names


def defined_names(node: ast.ClassDef) -> set[tuple[str, int]]:
    """Names a class body defines or assigns, and ``self.X = ...`` anywhere in its methods."""
    found: set[tuple[str, int]] = set()
    for child in node.body:
        if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
            found.add((child.name, child.lineno))
        elif isinstance(child, (ast.Assign, ast.AnnAssign)):
            for target in child.targets if isinstance(child, ast.Assign) else [child.target]:
                if isinstance(target, ast.Name):
                    found.add((target.id, child.lineno))
    for sub in ast.walk(node):
        if isinstance(sub, ast.Attribute) and isinstance(sub.ctx, ast.Store) and isinstance(sub.value, ast.Name) and sub.value.id == "self":
            found.add((sub.attr, sub.lineno))
    return found


def test_no_textual_attribute_is_overwritten() -> None:
    clashes: list[str] = []
    for path in sorted(TUI.rglob("*.py")):
        module = importlib.import_module("memtui." + ".".join(path.relative_to(TUI.parent).with_suffix("").parts))
        classes = {name: obj for name, obj in vars(module).items() if inspect.isclass(obj)}
        for outer in list(classes.values()):
            classes.update({n: o for n, o in vars(outer).items() if inspect.isclass(o)})
        for node in (n for n in ast.walk(ast.parse(path.read_text(encoding="utf-8"))) if isinstance(n, ast.ClassDef)):
            cls = classes.get(node.name)
            if cls is None or cls.__module__ != module.__name__ or not any(b.__module__.startswith("textual") for b in cls.__mro__[1:]):
                continue
            base, names = textual_names(cls)
            defined = defined_names(node)
            replaced = set(vars(cls).get("REPLACES_TEXTUAL", ()))
            for name in sorted(replaced - (names & {n for n, _ in defined})):
                clashes.append(f"{path.name} {node.name}.REPLACES_TEXTUAL lists {name}, which it does not replace")
            for name, line in sorted(defined):
                if name in names and name not in MEANT | replaced and not name.startswith(MEANT_PREFIXES):
                    clashes.append(f"{path.name}:{line} {node.name}.{name} (a {base.__name__} attribute)")
    assert clashes == []
