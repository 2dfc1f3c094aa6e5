"""Type and age badges, shared by every pane that lists memories."""

from __future__ import annotations

from rich.text import Text

from memtui.core.base.terminal import visible
from memtui.core.memory.age import AgeBand
from memtui.core.memory.memories import MemoryType

TYPE_COLORS: dict[MemoryType, str] = {
    "user": "#c678dd",
    "feedback": "#e5c07b",
    "project": "#98c379",
    "reference": "#61afef",
}
AGE_COLORS: dict[AgeBand, str] = {
    "fresh": "#98c379",
    "recent": "#56b6c2",
    "aging": "#e5c07b",
    "stale": "#d19a66",
    "old": "#e06c75",
}


def type_badge(mem_type: MemoryType | None, declared: str | None) -> Text:
    """A coloured ``type`` chip; an unrecognised type shows what the file declares, in red."""
    if mem_type is not None:
        return Text(f" {mem_type} ", style=f"bold #1e1e1e on {TYPE_COLORS[mem_type]}")
    label = f"{visible(declared)}?" if declared else "untyped"
    return Text(f" {label} ", style="bold #ffffff on #be5046")


def age_badge(label: str, band: AgeBand) -> Text:
    """The age label coloured by band (fresh → old)."""
    return Text(label, style=f"bold {AGE_COLORS[band]}")


def team_badge() -> Text:
    """The marker of a team memory (shared, synced across the organization)."""
    return Text.assemble((" team ", "bold #1e1e1e on #56b6c2"), " ")
