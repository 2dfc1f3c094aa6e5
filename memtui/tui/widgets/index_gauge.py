"""The index gauge: ``MEMORY.md`` lines and characters against the agent's caps."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from memtui.core.memory.index import MAX_INDEX_LINES, MAX_INDEX_UNITS, IndexReport, size_label
from memtui.tui.pane import NARROW_BELOW
from memtui.tui.theme import assemble

_BAR = 12


def _bar(value: int, limit: int) -> Text:
    ratio = value / limit if limit else 0
    filled = min(_BAR, round(ratio * _BAR))
    color = "$success" if ratio <= 0.8 else "$warning" if ratio <= 1 else "$error"
    return assemble(("█" * filled, color), ("░" * (_BAR - filled), "$muted"))


class IndexGauge(Static):
    """One line: lines and characters (UTF-16 code units) of the index against 200 / 25,000,
    plus counts of dropped entries, dangling links and unindexed memories, and how much of an
    index over memtui's cap was audited (the counts are of that part)."""

    _report: IndexReport | None = None

    def on_resize(self) -> None:
        self.show_report(self._report)

    def show_report(self, report: IndexReport | None) -> None:
        """Render ``report`` (``None``: no memory dir); bars only when the terminal is wide."""
        self._report = report
        if report is None:
            self.update("")
            return
        if not report.exists:
            self.update(assemble(("MEMORY.md ", "bold"), ("missing — the agent loads no index", "$warning")))
            return
        trunc = report.truncation
        lines = trunc.lines if trunc else 0
        units = trunc.units if trunc else 0
        bars = self.app.size.width >= NARROW_BELOW  # narrow terminals: the numbers only
        parts: list[Text | tuple[str, str] | str] = [("MEMORY.md ", "bold")]
        if bars:
            parts.append(_bar(lines, MAX_INDEX_LINES))
        parts.append(f" {lines}/{MAX_INDEX_LINES} lines " if bars else f"{lines}/{MAX_INDEX_LINES} lines ")
        if bars:
            parts.append(_bar(units, MAX_INDEX_UNITS))
        parts.append(f" {units:,}/{MAX_INDEX_UNITS:,} characters" if bars else f"· {units / 1000:.1f}k/{MAX_INDEX_UNITS // 1000}k characters")
        for count, label, color in (
            (report.dropped_count, "dropped", "$error"),
            (len(report.dangling), "dangling", "$warning"),
            (len(report.unindexed), "unindexed", "$info"),
        ):
            if not count and not bars:
                continue  # narrow: only what needs attention
            parts.append(" · ")
            parts.append((f"{count} {label}", color if count else "$muted"))
        if report.skip is not None:
            parts.append(" · ")
            parts.append((f"audited {size_label(report.skip.audited)} of {size_label(report.skip.size)}", "$warning"))
        self.update(assemble(*parts))
