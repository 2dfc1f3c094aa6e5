"""Textual's ``OptionList``, safe to page while it has no room to draw a line."""

from __future__ import annotations

from textual.widgets import OptionList as TextualOptionList


class OptionList(TextualOptionList):
    """An ``OptionList`` whose page keys do nothing while the list has no visible line.

    Textual 8.2.8 computes the list's lines only once it has a size: paging a list squeezed
    to no height (a small terminal, a tall neighbour) looked its highlighted option up in an
    empty table and raised ``KeyError``, ending the app.
    """

    def action_page_up(self) -> None:
        """Up a page (nothing while no line is shown)."""
        if self.scrollable_content_region.area:
            super().action_page_up()

    def action_page_down(self) -> None:
        """Down a page (nothing while no line is shown)."""
        if self.scrollable_content_region.area:
            super().action_page_down()
