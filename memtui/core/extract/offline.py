"""The offline extractor: one ``feedback``/``user`` proposal per explicit cue, no model.

It reads only what a person typed in the unread range (human turns, see
``transcripts.is_human_turn``), finds cues with :func:`memtui.core.extract.cues.find_cues`, and
drafts a memory for each. A cue whose statement is already the description of an existing
memory (case-insensitive) is not drafted again. Its findings are marked heuristic.

Body shapes follow docs/behaviour.md §4.1: a ``feedback`` memory gets the rule, ``**Why:**`` (the user's
own words, quoted) and ``**How to apply:**``; a ``user`` memory the statement and its quote.
"""

from __future__ import annotations

from memtui.core.extract.base import Draft, ExtractionRequest, ExtractorName
from memtui.core.extract.cues import Cue, cue_description, cue_name, find_cues
from memtui.core.sessions.transcripts import is_human_turn


def cue_body(cue: Cue) -> str:
    """The body of the memory drafted for ``cue`` (docs/behaviour.md §4.1 shapes, see the module docstring)."""
    quote = f"“{cue.sentence}”"
    if cue.type == "feedback":
        return (
            f"{cue.statement}\n\n"
            f"**Why:** the user asked for this explicitly: {quote}\n\n"
            "**How to apply:** follow it in this project from now on, unless the user says otherwise.\n"
        )
    return f"{cue.statement}\n\nThe user said so: {quote}\n"


class OfflineExtractor:
    """Explicit cues only (see :mod:`memtui.core.extract.cues`)."""

    name: ExtractorName = "offline"
    heuristic = True

    def run(self, request: ExtractionRequest) -> tuple[list[Draft], list[str]]:
        """Drafts for every cue in the unread human turns, in order. Never raises."""
        known = {(h.description or "").casefold().strip(" .。") for h in request.headers}
        drafts: list[Draft] = []
        notes: list[str] = []
        seen: set[str] = set()
        for entry in request.entries:
            if not is_human_turn(entry):
                continue
            for cue in find_cues(entry.text):
                description = cue_description(cue.statement)
                key = description.casefold().strip(" .。")
                if key in known:
                    notes.append(f"already remembered: {description}")
                    continue
                if key in seen:
                    continue
                seen.add(key)
                drafts.append(
                    Draft("create", cue.type, cue_name(cue.statement), description, cue_body(cue), entry.uuid, quote=cue.sentence)
                )
        if not drafts and not notes:
            notes.append("no explicit cue (“remember that…”, “from now on…”, “记住…”, “覚えて…”) in the new messages")
        return drafts, notes
