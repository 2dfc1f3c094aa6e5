"""How the Recall pane draws one ``RecallResult``: picks as cards, near misses, the
reference-versus-this-recall comparison, and the exact manifest and request texts.

Pure functions from core results to rich renderables / strings, so the pane module only holds
state and workers, and these can be tested without an app.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from memtui.core.base.wording import counted, details_line
from memtui.core.base.terminal import visible, visible_block
from memtui.core.memory.age import age_band
from memtui.core.recall import MANIFEST_CAP, Pick, RecallResult
from memtui.core.verify.conflicts import Conflict
from memtui.tui.badges import age_badge, type_badge
from memtui.tui.theme import assemble, styled, tone

MUTED = "$muted"
SOFT = "$soft"
OUTSIDE = "bold $special"
OUTSIDE_MARK = "✦"
NOT_SENT = "italic $warning"

Describe = Callable[[str], "str | None"]


def heading(title: str, detail: str = "") -> Text:
    """A section heading: bold title, muted detail."""
    return assemble((title, "bold"), (f"  {detail}" if detail else "", MUTED))


CONFLICT = "bold $warning"
CONFLICT_MARK = "⚠"


def picks_view(result: RecallResult, newer: Mapping[str, Sequence[Conflict]] | None = None) -> RenderableType:
    """The picks as compact cards: rank, type badge, path and age on the first line, then the
    description (one line) and the reason, a mark on picks the reference could not have made
    (outside its 200-newest window), and one on picks a newer memory contradicts (``newer``:
    relpath → the conflicts in which it is the older memory). For a skipped prompt: what
    recall would pick, marked as not sent."""
    if result.skipped:
        return would_pick_view(result, newer)
    if not result.picks:
        why = "the model chose none" if result.online and not result.error else "nothing matched well enough"
        if result.error:
            why = "see the error above"
        return Group(heading("Picks", "none"), styled(f"No memory recalled — {why}.", style=SOFT))
    return Group(heading("Picks", f"{len(result.picks)} of at most 5"), _cards(result.picks, newer=newer))


def would_pick_view(result: RecallResult, newer: Mapping[str, Sequence[Conflict]] | None = None) -> RenderableType:
    """What recall would pick for a skipped prompt, each card marked *not sent* (and, as in
    ``picks_view``, marked when a newer memory contradicts it)."""
    detail = f"not sent — the agent skips this prompt ({result.would_pick_selector} selector, offline)"
    if not result.would_pick:
        return Group(heading("Would pick", detail), styled("Nothing: no memory matched well enough.", style=SOFT))
    return Group(heading("Would pick", detail), _cards(result.would_pick, not_sent=True, newer=newer))


def _cards(picks: Sequence[Pick], *, not_sent: bool = False, newer: Mapping[str, Sequence[Conflict]] | None = None) -> Table:
    grid = Table.grid(padding=(0, 1), expand=True)
    grid.add_column(width=1, justify="right", style=tone("bold"))
    grid.add_column(ratio=1)
    for rank, pick in enumerate(picks, 1):
        header = pick.doc.header
        top = Table.grid(padding=(0, 1), expand=True)
        top.add_column(no_wrap=True)
        top.add_column(ratio=1, no_wrap=True, overflow="ellipsis")
        top.add_column(no_wrap=True, justify="right")
        path = styled(visible(pick.relpath), style="bold")
        if not_sent:
            path.append("  not sent", style=tone(NOT_SENT))
        top.add_row(type_badge(header.type, None), path, age_badge(pick.age_label, age_band(pick.age_days)))
        lines: list[RenderableType] = [top]
        if header.description:
            lines.append(styled(visible(header.description), style=SOFT, no_wrap=True, overflow="ellipsis"))
        lines.append(styled(visible(pick.reason), style=f"italic {MUTED}", no_wrap=True, overflow="ellipsis"))
        if not pick.in_reference_window and not not_sent:
            lines.append(styled(f"{OUTSIDE_MARK} outside the reference's {MANIFEST_CAP}-newest window", style=OUTSIDE))
        for conflict in (newer or {}).get(pick.relpath, ())[:2]:
            lines.append(styled(visible(f"{CONFLICT_MARK} a newer memory disagrees: {conflict.newer} — {conflict.describe()}"), style=CONFLICT, no_wrap=True, overflow="ellipsis"))
        grid.add_row(f"{rank}", Group(*lines))
    return grid


def near_misses_view(result: RecallResult, describe: Describe) -> RenderableType:
    """The near misses as the core orders them (highest score first, ties by path): score, path
    and the description (cut to one line), under one muted line that says what the score is
    (``RecallResult.near_misses_scale``)."""
    if not result.near_misses:
        return Group(heading("Near misses", "none"))
    grid = Table.grid(padding=(0, 1), expand=True)
    grid.add_column(width=5, justify="right", style=tone("$warning"))
    grid.add_column(no_wrap=True, style=tone("bold"))
    grid.add_column(ratio=1, no_wrap=True, overflow="ellipsis", style=tone(SOFT))
    for near in result.near_misses:
        grid.add_row(f"{near.score:.2f}", Text(visible(near.relpath)), Text(visible(describe(near.relpath) or "")))
    return Group(heading("Near misses"), styled(result.near_misses_scale, style=MUTED), grid)


def details_view(details: str) -> Text:
    """The muted ``details:`` line that carries the internal names behind a plain sentence (a
    flag, a config file, a variable): ``memtui.core.base.wording``."""
    return styled(visible(details_line(details)), style=MUTED)


def compare_view(result: RecallResult) -> RenderableType:
    """What the reference would have sent (the 200 newest) versus what this recall used, and
    the picks that lie outside the reference's window."""
    ref = result.manifest
    grid = Table.grid(padding=(0, 2))
    grid.add_column(style=tone(MUTED), no_wrap=True)
    grid.add_column(overflow="fold")
    grid.add_row("reference sends", f"the {ref.count} newest of {counted(ref.total, 'memory', 'memories')}")
    sent = result.sent
    if sent is None:
        used = styled(f"no request — {result.selector} ranks all {counted(ref.total, 'memory', 'memories')} here", style=SOFT)
    else:
        window = {h.relpath for h in ref.headers}
        outside = sum(1 for h in sent.headers if h.relpath not in window)
        verb = "sent" if result.online else "would send"
        what = "best by meaning and words" if result.selector == "hybrid" else "newest"
        used = assemble(f"{verb} the {sent.count} {what} of {sent.total}")
        if outside:
            used.append(f" · {outside} outside the reference's window", style=tone(OUTSIDE))
        elif result.selector == "hybrid":
            used.append(" · the same memories as the reference", style=tone(SOFT))
    grid.add_row(f"{result.selector} used", used)
    misses = result.reference_window_misses
    if misses:
        grid.add_row("picks outside", styled("\n".join(f"{OUTSIDE_MARK} {visible(m)}" for m in misses), style=OUTSIDE))
    else:
        grid.add_row("picks outside", styled("none — the reference could have made every pick", style=SOFT))
    return Group(heading("Reference vs this recall"), grid)


def manifest_title(result: RecallResult) -> str:
    """The manifest section's title: which manifest it is and its size."""
    if result.sent is not None:
        verb = "sent" if result.online else "that would be sent"
        return f"Manifest {verb} · {result.sent.count} lines"
    return f"Manifest the reference would send · {result.manifest.count} lines"


def manifest_text(result: RecallResult) -> Text:
    """The exact manifest (the one sent, else the reference's), one memory a line (control
    characters from the memories shown as escapes)."""
    manifest = result.sent if result.sent is not None else result.manifest
    return Text(visible_block(manifest.text or "(empty: no memories)"))


def request_title(result: RecallResult) -> str:
    """The request section's title."""
    if result.request is None:
        return f"Request · none ({result.selector} runs locally)"
    return f"Request {'sent' if result.online else 'that would be sent'} · {result.request.model}"


def request_text(result: RecallResult) -> Text:
    """The exact request: model, max_tokens, system prompt and user message (control
    characters from the memories shown as escapes)."""
    req = result.request
    if req is None:
        return Text(f"The {result.selector} selector sends nothing. Choose claude or hybrid to see the request.")
    return Text(
        visible_block(
            f"model: {req.model}\nmax_tokens: {req.max_tokens}\n"
            f"output: {{\"selected_memories\": [string]}}\n\n"
            f"── system ──\n{req.system}\n\n── user ──\n{req.user}"
        )
    )
