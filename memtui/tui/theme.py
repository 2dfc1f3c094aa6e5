"""memtui's colours: one Textual theme and the variables it adds, for the stylesheets and for
the text the panes draw.

The stylesheets use the variables as ``$warning``, ``$muted``…; text drawn in Python (rich
``Text``, tables) names them the same way in a style string and resolves it with ``tone``:
``Text("dropped", style=tone("bold $error"))``. No colour is written anywhere else, so
switching the theme (``ctrl+p`` → theme) recolours both.

The colours are those of the One Dark palette: red for errors, yellow for warnings, green
for what is fine, cyan for information, blue for notes and reads, purple for what stands out.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from rich.text import Text

from textual._context import active_app
from textual.color import Color, ColorParseError
from textual.theme import Theme

from memtui.core.base.diagnostics import Severity

# The variables memtui adds to every theme (``App.get_theme_variable_defaults``); a theme may
# override them.
VARIABLES: dict[str, str] = {
    "muted": "#5c6370",  # explanations, units, counts that need no attention
    "soft": "#abb2bf",  # secondary text: descriptions, prose under a heading
    "info": "#56b6c2",  # info-level findings, team memories, unindexed entries
    "note": "#61afef",  # notes, reads, conditional rules, reference memories
    "special": "#c678dd",  # what stands out: user memories, duplicates, picks outside a window
    "caution": "#d19a66",  # stale memories and their caveat
    "chip-text": "#1e1e1e",  # text on a coloured chip (a type or action badge)
    "danger": "#be5046",  # the chip of an unknown type, of a delete
    "on-danger": "#ffffff",  # text on a danger chip
    "line-focus": "#3e4451",  # the background of the line a finding points at
}

THEME = Theme(
    name="memtui",
    primary="#0178D4",
    secondary="#004578",
    accent="#ffa62b",
    warning="#e5c07b",
    error="#e06c75",
    success="#98c379",
    foreground="#e0e0e0",
    dark=True,
)

# Severity of a finding: its icon and style, worst first (every pane and screen shows them alike).
SEVERITIES: tuple[Severity, ...] = ("error", "warning", "info")
SEVERITY_ICON: dict[Severity, str] = {"error": "✖", "warning": "▲", "info": "●"}
SEVERITY_STYLE: dict[Severity, str] = {"error": "bold $error", "warning": "bold $warning", "info": "$info"}

_VARIABLE = re.compile(r"\$([a-z][a-z0-9-]*)")
_DEFAULTS: dict[str, str] = {**THEME.to_color_system().generate(), **VARIABLES}
_resolved: dict[tuple[str, str], str] = {}


def _variables() -> tuple[str, Mapping[str, str]]:
    """The running app's theme name and variables; memtui's theme outside an app."""
    try:
        app = active_app.get()
    except LookupError:
        return THEME.name, _DEFAULTS
    return app.theme, app.theme_variables or _DEFAULTS


def _color(value: str | None, name: str) -> str:
    """A theme value as a colour rich can draw (``#rrggbb``); memtui's default when the value
    is not a plain colour (``auto 87%``)."""
    for candidate in (value, _DEFAULTS.get(name)):
        if candidate is None:
            continue
        try:
            return Color.parse(candidate).hex6
        except ColorParseError:
            continue
    raise KeyError(f"no theme variable ${name}")


def tone(style: str) -> str:
    """``style`` (a rich style string) with each ``$variable`` replaced by the current theme's
    colour: ``tone("bold $warning on $danger")`` → ``"bold #E5C07B on #BE5046"``.

    Raises ``KeyError`` for a variable no theme defines (a typo in memtui's code)."""
    if "$" not in style:
        return style
    theme, variables = _variables()
    key = (theme, style)
    found = _resolved.get(key)
    if found is None:
        found = _resolved[key] = _VARIABLE.sub(lambda m: _color(variables.get(m.group(1)), m.group(1)), style)
    return found


def severity_style(severity: Severity) -> str:
    """The resolved style of a finding of ``severity``."""
    return tone(SEVERITY_STYLE[severity])


def worst(severities: list[Severity]) -> Severity:
    """The worst of ``severities`` (``info`` for none)."""
    return min(severities, key=SEVERITIES.index, default="info")


def styled(text: str, style: str = "", **kwargs: Any) -> Text:
    """``Text(text, style=…)`` with the style's ``$variables`` resolved (``tone``)."""
    return Text(text, style=tone(style), **kwargs)


def assemble(*parts: str | Text | tuple[str, str]) -> Text:
    """``Text.assemble`` with the ``$variables`` of each ``(text, style)`` pair resolved."""
    return Text.assemble(*(part if not isinstance(part, tuple) else (part[0], tone(part[1])) for part in parts))
