"""The Cascade pane's session view: what a session loaded beside what memtui computes now."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Label
from memtui.tui.pane import KeysFooter
from memtui.tui.widgets.option_list import OptionList
from textual.widgets.option_list import Option

from memtui.core.audit.loaded import Row, SessionLoad
from memtui.core.base.terminal import visible
from memtui.core.sessions.projects import TranscriptFile
from memtui.tui.theme import assemble, tone
from memtui.tui.widgets.cascade_view import MUTED, display_path

MARKS = {"same": ("=", "$success"), "changed": ("~", "$warning"), "recorded-only": ("−", "$warning"),
         "predicted-only": ("+", "$warning"), "moved": ("↕", "$warning")}
BUG = "bold $error"


def _name(path: str, cwd: Path, memory_dir: Path | None) -> str:
    if memory_dir is not None:
        try:
            return visible(f"{Path(path).relative_to(memory_dir).as_posix()} (memory dir)")
        except ValueError:
            pass
    return visible(display_path(path, cwd))


def _row(out: Text, row: Row, cwd: Path, memory_dir: Path | None = None) -> None:
    glyph, style = MARKS[row.status]
    if row.bug:
        style = BUG
    rec = f"{row.recorded.chars:>7,}" if row.recorded else " " * 7
    pred = f"{row.predicted.chars:>7,}" if row.predicted else " " * 7
    out.append(f"{glyph} ", style=tone(style))
    out.append(f"{rec} {pred}  ", style=tone(MUTED))
    out.append(_name(row.path, cwd, memory_dir) + "\n", style="bold" if row.status != "same" else "")
    if row.reason:
        out.append(f"            {visible(row.reason)}\n", style=tone(BUG if row.bug else MUTED))


def session_text(result: SessionLoad, cwd: Path, memory_dir: Path | None = None) -> Text:
    """The comparison as lines: the startup files, each read's lazy loads, then the verdict."""
    out = Text()
    started = result.to_json()["started"] or "?"
    out.append(f"session {visible(result.session_id[:8])}", style="bold")
    out.append(f"  started {visible(started[:19].replace('T', ' '))} in {visible(display_path(result.cwd or '?', cwd))}", style=tone(MUTED))
    if result.version:
        out.append(f"  · Claude Code {visible(result.version)}", style=tone(MUTED))
    out.append("\n\nstartup", style="bold")
    out.append("   recorded · memtui (characters)\n", style=tone(MUTED))
    for row in result.startup:
        _row(out, row, cwd, memory_dir)
    for rd in result.reads:
        out.append(f"\n{visible(rd.tool)} {visible(display_path(rd.target, cwd))}", style="bold")
        out.append(f"  (transcript line {rd.line})\n", style=tone(MUTED))
        for row in rd.rows:
            _row(out, row, cwd, memory_dir)
    diffs, bugs = result.differences, result.bugs
    out.append("\n")
    if not result.startup and not result.reads:
        out.append("nothing to compare\n", style=tone(MUTED))
    elif not diffs:
        out.append("no difference: memtui predicts what this session loaded\n", style=tone("bold $success"))
    else:
        out.append(f"{len(diffs)} difference(s), {len(diffs) - len(bugs)} explained", style=tone("bold $warning"))
        if bugs:
            out.append(f" · {len(bugs)} fidelity bug(s) to report", style=tone(BUG))
        out.append("\n")
    for note in result.notes:
        out.append(f"note: {visible(note)}\n", style=tone(MUTED))
    out.append("\n= same   ~ changed   − only the session loaded it   + only memtui would   s back · S another session", style=tone(MUTED))
    return out


class SessionPicker(ModalScreen["str | None"]):
    """The project's sessions, newest first; enter compares the one chosen."""

    BINDINGS = [Binding("escape,q", "cancel", "Close", id="sessions.cancel", tooltip="Close the list")]

    def __init__(self, sessions: list[TranscriptFile]) -> None:
        super().__init__()
        self.sessions = sessions

    def compose(self) -> ComposeResult:
        with Vertical(id="session-dialog", classes="dialog"):
            yield Label("Compare a session with the prediction", classes="dialog-title")
            yield OptionList(*(Option(_session_label(t)) for t in self.sessions), id="session-options")
        yield KeysFooter()  # this dialog's keys, not the pane's under it

    @on(OptionList.OptionSelected)
    def _selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(self.sessions[event.option_index].session_id)

    def action_cancel(self) -> None:
        self.dismiss(None)


def _session_label(t: TranscriptFile) -> Text:
    stamp = datetime.fromtimestamp(t.mtime, UTC).strftime("%Y-%m-%d %H:%M")
    return assemble((visible(t.session_id[:8]), "$note"), (f"  {stamp}  {t.size / 1024:,.0f} KB  ", MUTED), (visible(t.project_dir.name), MUTED))
