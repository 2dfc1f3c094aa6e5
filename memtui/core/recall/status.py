"""What the recall badge says: whether the chosen selector asks a model, works offline, cannot
run, or failed — worked out in one place from the selector choice and the last result, so the
badge and the result never disagree."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from memtui.core.recall.engine import NO_KEY, OFFLINE_SELECTORS, RecallResult, SelectorChoice

SelectorState = Literal["online", "offline", "no-key", "error"]


@dataclass(frozen=True, slots=True)
class SelectorStatus:
    """The badge of a selector: ``state``; ``chip`` (the badge's word: ONLINE, OFFLINE, NO KEY,
    ERROR); ``title`` (what runs, e.g. ``"claude · claude-sonnet-5-5"`` or ``"lexical (BM25) as
    you type"``); ``reason`` (why, or what to do; ``None``: nothing to add)."""

    state: SelectorState
    chip: str
    title: str
    reason: str | None


def selector_status(choice: SelectorChoice, model: str, result: RecallResult | None = None, *, asking: bool = False) -> SelectorStatus:
    """The badge for ``choice`` (running ``model`` when it asks one).

    - lexical / semantic (``OFFLINE_SELECTORS``): OFFLINE, as you type — for want of a key, or
      by choice;
    - claude / hybrid without a credential: NO KEY — they recall nothing (they never fall back
      to BM25: their result carries the same "no API key" error);
    - claude / hybrid with one: ONLINE, Enter sends one request (``asking``: a request is out);
      ERROR with the failure when ``result`` (the last one, used only when it came from this
      selector) failed.
    """
    name = choice.selector.name
    if name in OFFLINE_SELECTORS:
        reason = NO_KEY if choice.offline_cause == "no-credentials" else "by choice: an API key is set"
        kind = "embeddings + BM25" if name == "semantic" else "BM25"
        return SelectorStatus("offline", "OFFLINE", f"{name} ({kind}) as you type", reason)
    if choice.offline_cause == "no-credentials":
        return SelectorStatus("no-key", "NO KEY", f"{name} recalls nothing without an API key", NO_KEY)
    if result is not None and result.selector == name and result.error:
        return SelectorStatus("error", "ERROR", f"{name} · {model}", result.error)
    return SelectorStatus("online", "ONLINE", f"{name} · {model}", "asking…" if asking else "Enter sends one request")
