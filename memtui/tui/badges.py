"""Type and age badges, shared by every pane that lists memories."""

from __future__ import annotations

from rich.text import Text

from memtui.core.base.terminal import visible
from memtui.core.memory.age import AgeBand
from memtui.core.memory.memories import MemoryType
from memtui.tui.theme import assemble, styled

TYPE_COLORS: dict[MemoryType, str] = {
    "user": "$special",
    "feedback": "$warning",
    "project": "$success",
    "reference": "$note",
}
AGE_COLORS: dict[AgeBand, str] = {
    "fresh": "$success",
    "recent": "$info",
    "aging": "$warning",
    "stale": "$caution",
    "old": "$error",
}


def type_badge(mem_type: MemoryType | None, declared: str | None) -> Text:
    """A coloured ``type`` chip; an unrecognised type shows what the file declares, in red."""
    if mem_type is not None:
        return styled(f" {mem_type} ", style=f"bold $chip-text on {TYPE_COLORS[mem_type]}")
    label = f"{visible(declared)}?" if declared else "untyped"
    return styled(f" {label} ", style="bold $on-danger on $danger")


def age_badge(label: str, band: AgeBand) -> Text:
    """The age label coloured by band (fresh → old)."""
    return styled(label, style=f"bold {AGE_COLORS[band]}")


def team_badge() -> Text:
    """The marker of a team memory (shared, synced across the organization)."""
    return assemble((" team ", "bold $chip-text on $info"), " ")
