"""How the agent's own use of a memory is shown: the Memories table's "used" cell, the preview's
usage lines, and the list of uses that opens the conversation at one of them."""

from __future__ import annotations

from datetime import UTC, datetime
from functools import lru_cache

from rich.console import Group, RenderableType
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Label, Static
from memtui.tui.pane import KeysFooter
from memtui.tui.widgets.option_list import OptionList
from textual.widgets.option_list import Option

from memtui.core.base.terminal import visible
from memtui.core.memory.age import age_days_at
from memtui.core.sessions.usage import MemoryUsage, UsageReport, UseDetail
from memtui.tui.theme import assemble, styled

MUTED = "$muted"
USED_STYLE = "$success"
NEVER_STYLE = "$warning"
# The preview lists at most this many uses (the dialog behind `o` lists them all).
PREVIEW_USES = 6
_KIND = {"recalled": "recalled", "read": "read", "written": "written"}


def short_age(when: float, now: float) -> str:
    """``today``, ``1d``, ``12d``: the age of a use, short enough for a table cell."""
    days = age_days_at(when, now)
    return "today" if days == 0 else f"{days}d"


@lru_cache(maxsize=4096)
def used_text(uses: int, age: str | None) -> Text:
    """The "used" cell: the number of uses and the age of the last (``never`` without one;
    ``—`` when no session is on record: nothing to tell)."""
    if uses < 0:
        return styled("—", style=MUTED)
    if uses == 0:
        return styled("never", style=NEVER_STYLE)
    return assemble((f"{uses}", "bold " + USED_STYLE), (f" · {age}" if age else "", MUTED))


UsedKey = tuple[int, "str | None"]


def used_key(usage: MemoryUsage | None, now: float, sessions: int = 1) -> UsedKey:
    """What the "used" cell shows for ``usage`` (``None``: a memory without a use): the number
    of uses and the short age of the last; ``(-1, None)`` with no ``sessions`` on record."""
    if sessions == 0:
        return (-1, None)
    if usage is None or not usage.used:
        return (0, None)
    total = usage.recalled + usage.read + usage.written
    return (total, short_age(usage.last_used, now) if usage.last_used is not None else None)


def _stamp(when: float | None) -> str:
    return "—" if when is None else datetime.fromtimestamp(when, UTC).strftime("%Y-%m-%d %H:%M")


def usage_summary(usage: MemoryUsage | None, report: UsageReport | None) -> Text:
    """One line: ``recalled 1 · read 1 · written 0 — 2 sessions, last 2026-12-01 23:20``."""
    if report is None:
        return styled("reading the agent's transcripts…", style=MUTED)
    covered = len(report.sessions)
    if covered == 0:
        return styled("no session of the agent on record", style=MUTED)
    if usage is None or not usage.used:
        return styled(f"never used in the {covered} session(s) on record", style=NEVER_STYLE)
    return assemble(
        (f"recalled {usage.recalled} · read {usage.read} · written {usage.written}", "bold"),
        (f" — {usage.sessions} of {covered} session(s), last {_stamp(usage.last_used)}", MUTED),
    )


def use_line(detail: UseDetail, *, short: bool = False) -> Text:
    """One use: when, the session, what happened (and by which tool); ``short`` for the
    preview's narrow column (no year, no tool)."""
    use = detail.use
    who = " (sub-agent)" if detail.subagent else ""
    tool = "" if short or use.tool in ("recall", "Read") else f" by {use.tool}"
    when = _stamp(use.time)[5:] if short else _stamp(use.time)
    return assemble(
        (when, MUTED), " ", (visible(detail.session_id[:8]), "$note"), " ",
        (_KIND[use.kind], "bold"), (tool + who, MUTED),
    )


def uses_block(uses: list[UseDetail]) -> RenderableType:
    """The newest uses under the summary, and how to open one."""
    if not uses:
        return Text("")
    newest = list(reversed(uses))[:PREVIEW_USES]
    lines: list[RenderableType] = [use_line(d, short=True) for d in newest]
    more = len(uses) - len(newest)
    lines.append(styled(f"{'… ' + str(more) + ' more · ' if more else ''}o opens the conversation at a use", style="italic " + MUTED))
    return Group(*lines)


class UsesDialog(ModalScreen["UseDetail | None"]):
    """Every use of one memory, newest first; enter opens the conversation at that point."""

    BINDINGS = [Binding("escape,q", "cancel", "Close", id="uses.cancel", tooltip="Close the list")]

    def __init__(self, relpath: str, uses: list[UseDetail]) -> None:
        super().__init__()
        self.relpath = relpath
        self.uses = list(reversed(uses))

    def compose(self) -> ComposeResult:
        with Vertical(id="uses-dialog", classes="dialog"):
            yield Label(Text(f"Where the agent used {visible(self.relpath)}"), classes="dialog-title")
            yield OptionList(*(Option(use_line(d)) for d in self.uses), id="uses-options")
            yield Static(styled("enter opens the conversation at that point · esc closes", style=MUTED))
        yield KeysFooter()  # this dialog's keys, not the pane's under it

    @on(OptionList.OptionSelected)
    def _selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(self.uses[event.option_index])

    def action_cancel(self) -> None:
        self.dismiss(None)
