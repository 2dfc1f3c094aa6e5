"""Text from files, made safe for the app's widgets: shown, never obeyed.

A memory's name, path, description or body can hold terminal escape sequences (ESC, C1
controls), bidi overrides and other invisible characters, and — since many Textual widgets read
strings as markup — markup such as ``[@click=app.quit]``. Two layers keep both out:

- every string taken from a file goes into a widget through ``plain`` / ``block`` (a ``Text``,
  never parsed as markup) or ``markup_safe`` (for the places that only take markup: a border
  title), after :func:`memtui.core.base.terminal.visible` has turned each such character into a
  visible escape (``\\x1b``, ``\\u202e``);
- ``install_render_guard`` is the backstop: the characters a terminal would act on are removed
  from every line the app writes (they have no width, so no layout changes), so a string that
  missed the first layer is at worst shown without them — never obeyed.
"""

from __future__ import annotations

from typing import Any

from rich.markup import escape
from rich.segment import Segment
from rich.text import Text
from textual.strip import Strip

from memtui.core.base.terminal import UNSAFE, visible, visible_block
from memtui.tui.theme import tone

__all__ = ["block", "install_render_guard", "markup_safe", "plain"]


def plain(text: str | None, style: str = "") -> Text:
    """One line from a file as a ``Text`` (no markup), its unsafe characters escaped;
    ``style`` may name theme colours (``$muted``)."""
    return Text(visible(text or ""), style=tone(style))


def block(text: str | None, style: str = "") -> Text:
    """Several lines from a file as a ``Text`` (no markup); lines and tabs kept."""
    return Text(visible_block(text or ""), style=tone(style))


def markup_safe(text: str | None) -> str:
    """One line from a file for a place that reads markup (a border title, a tree label):
    escaped, then its markup brackets escaped."""
    return escape(visible(text or ""))


_GUARDED = "_memtui_render_guard"


def install_render_guard() -> None:
    """Make every ``Strip`` drop, before it is written to the terminal, the characters
    ``memtui.core.base.terminal.UNSAFE`` lists (controls, bidi and format characters) from its
    text segments. Idempotent. Textual is pinned exactly, so the one method it wraps is known."""
    if getattr(Strip.render, _GUARDED, False):
        return
    original = Strip.render

    def render(self: Strip, console: Any) -> str:
        if self._render_cache is None:
            segments = self._segments
            if any(not seg.control and UNSAFE.search(seg.text) for seg in segments):
                self._segments = [
                    Segment(UNSAFE.sub("", seg.text), seg.style, seg.control) if not seg.control else seg for seg in segments
                ]
        return original(self, console)

    setattr(render, _GUARDED, True)
    Strip.render = render  # type: ignore[method-assign]
