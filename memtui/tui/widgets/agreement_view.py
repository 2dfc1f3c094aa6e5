"""The Recall pane's agreement line: how often memtui's selectors pick what the agent's own recall
picked for the same prompts (recall@5, from the transcripts), and the prompts behind it."""

from __future__ import annotations

from rich.text import Text

from memtui.core.audit.agreement import Agreement
from memtui.core.base.terminal import visible
from memtui.tui.theme import assemble, styled, tone

MUTED = "$muted"
# The detail lists at most this many prompts (``memtui recall eval --transcripts`` lists them all).
DETAIL_PROMPTS = 8


def _figure(value: float | None) -> tuple[str, str]:
    if value is None:
        return ("—", MUTED)
    style = "bold $success" if value >= 0.6 else ("bold $warning" if value >= 0.3 else "bold $error")
    return (f"{value:.2f}", style)


def agreement_text(agreement: Agreement | None, *, details: bool, running: bool = False, off_note: str | None = None) -> Text:
    """One line (and, with ``details``, the prompts): the selectors' recall@5 against the agent.
    ``off_note``: why no session may hold a recall (the agent's gate), said when none does."""
    if agreement is None:
        return styled("comparing with the agent's own recall (its transcripts)…", style=MUTED)
    if not agreement.sessions:
        return styled("vs the agent's own recall: no session on record", style=MUTED)
    if not agreement.prompts:
        return styled(
            f"vs the agent's own recall: no recall recorded in {agreement.sessions} session(s)" + (f" ({off_note})" if off_note else ""),
            style=MUTED,
        )
    out = assemble(
        ("vs the agent's own recall", "bold"),
        (f" · {len(agreement.prompts)} prompt(s) in {agreement.sessions_with_recall} of {agreement.sessions} session(s) · recall@5 ", MUTED),
    )
    for name in agreement.selectors:
        out.append(f"{name} ", style=tone(MUTED))
        if name in agreement.skipped:
            out.append("needs a key  " if "key" in agreement.skipped[name] else "—  ", style=tone(MUTED))
        else:
            out.append_text(assemble(_figure(agreement.mean(name)), "  "))
    out.append("(computing hybrid…)" if running else ("ctrl+l hides" if details else "ctrl+l details"), style=tone("italic " + MUTED))
    if details:
        for p in agreement.prompts[:DETAIL_PROMPTS]:
            out.append(f"\n{visible(p.recalled.session_id[:8])}:{p.recalled.line} ", style=tone("$note"))
            out.append(visible(" ".join(p.recalled.prompt.split())[:90]), style="bold")
            out.append("\n  claude  " + visible(", ".join(p.recalled.claude)), style=tone(MUTED))
            for name, picks in p.picks.items():
                if picks is not None:
                    hits = set(picks) & set(p.recalled.claude)
                    out.append(f"\n  {name:<7} ", style=tone(MUTED))
                    for i, rel in enumerate(picks):
                        out.append(("" if i == 0 else ", ") + visible(rel), style=tone("$success") if rel in hits else "")
        more = len(agreement.prompts) - DETAIL_PROMPTS
        if more > 0:
            out.append(f"\n… {more} more: memtui recall eval --transcripts", style=tone(MUTED))
    return out
