"""Relative dates for the doctor: every phrase in a project memory's body *and* description,
the absolute date it meant at the file's mtime, and — when it names one exact day — the text
that replaces it (the ``absolute-date`` fix).

Which phrases are fixed (one exact day, nothing to guess): today / tonight / tomorrow /
yesterday / the day after tomorrow / the day before yesterday; ``N days ago`` / ``in N days``;
a weekday, bare or after on / this / coming / last / past (read as the next such day after the
mtime, the previous one after last/past; not the mtime's own weekday, which could mean either
that day or a week later); the CJK day words (明天, 昨日, 내일, 모레, …) and a week word with a
weekday (上周四, 先週の金曜日, 다음 주 목요일). Not fixed: ``next Thursday`` (this week's or
next week's?), weeks, months, years — they are reported with the date dateparser reads, but the
fix would invent a precision the author never wrote.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date

from memtui.core.memory.lint import (
    CJK_DAY_OFFSETS,
    DateBase,
    RelativeDate,
    date_base,
    find_relative_dates,
)
from memtui.core.memory.memories import Memory

_EN_DAY = re.compile(r"^(?:the day (?:after tomorrow|before yesterday)|today|tonight|tomorrow|yesterday)$", re.IGNORECASE)
_EN_WEEKDAY = re.compile(r"^(?:(on|this|coming|last|past)\s+)?(monday|tuesday|wednesday|thursday|friday|saturday|sunday)$", re.IGNORECASE)
_EN_DAYS = re.compile(r"^(?:(?:in|within)\s+(?:\d+|a|an|one|two|three|four|five|six|seven)\s+days?|(?:\d+|a|an|one|two|three)\s+days?\s+ago)$", re.IGNORECASE)
_CJK_WEEKDAY = re.compile(r"^(?:(?:上|下|本|这|這)(?:个)?(?:周|週|星期|礼拜|禮拜)[一二三四五六日天]|(?:先週|今週|来週)の?[月火水木金土日]曜日?|(?:지난|이번|다음)\s?주\s?[월화수목금토일]요일)$")
_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_PREPOSITION_BEFORE = re.compile(r"\b(?:on|by|until|till|since|from|before|after|at|for|to|of|through|than)\s+$", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class DatedPhrase:
    """A relative date found by the doctor: ``line`` (in the file), ``column`` (0-based in the
    line), ``resolved`` (or ``None``), ``replacement`` (the fix's text, or ``None`` when not
    unambiguous), ``where`` (``"body"`` or ``"description"``)."""

    phrase: str
    line: int
    column: int
    resolved: date | None
    replacement: str | None
    where: str


def exact_day(phrase: str, resolved: date | None, base: date) -> bool:
    """Whether ``phrase`` names one exact day (see the module doc)."""
    if resolved is None:
        return False
    p = " ".join(phrase.split())
    if _EN_DAY.match(p) or _EN_DAYS.match(p) or p in CJK_DAY_OFFSETS or _CJK_WEEKDAY.match(phrase):
        return True
    m = _EN_WEEKDAY.match(p)
    if m:
        return (m.group(1) or "").lower() in ("last", "past") or _WEEKDAYS.index(m.group(2).lower()) != base.weekday()
    return False


def replacement_for(phrase: str, resolved: date, line: str, column: int) -> str | None:
    """The text that replaces ``phrase`` at ``column`` of ``line``: the ISO date, with ``on ``
    in English prose unless a preposition already precedes it ("finishes tomorrow" → "finishes
    on 2026-03-03", "until tomorrow" → "until 2026-03-03"). ``None`` for a possessive ("today's")."""
    iso = resolved.isoformat()
    after = line[column + len(phrase) :]
    if after.startswith(("'s", "’s")):
        return None
    if not phrase[:1].isascii():
        return iso
    if phrase.lower().startswith("on "):
        return phrase[:3] + iso
    if _PREPOSITION_BEFORE.search(line[:column]):
        return iso
    at_sentence_start = not line[:column].strip() or line[:column].rstrip().endswith((".", "!", "?", ":"))
    word = "On" if phrase[:1].isupper() and at_sentence_start else "on"
    return f"{word} {iso}"


def _dated(rd: RelativeDate, line_text: str, where: str, base: date) -> DatedPhrase:
    replacement = None
    if rd.resolved is not None and exact_day(rd.phrase, rd.resolved, base):
        replacement = replacement_for(rd.phrase, rd.resolved, line_text, rd.column)
    return DatedPhrase(rd.phrase, rd.line, rd.column, rd.resolved, replacement, where)


def memory_date_base(memory: Memory) -> DateBase:
    """The day ``memory``'s relative dates are read against (``date_base``: the ``modified``
    field, a date in the file name, else the mtime)."""
    return date_base(memory.relpath, memory.frontmatter, memory.mtime)


def relative_dates(memory: Memory) -> list[DatedPhrase]:
    """The relative dates of a memory with a frontmatter (of any type: "tomorrow" in a feedback
    memory is as wrong months later as in a project one), description first, then the body."""
    if memory.body_line <= 1:
        return []
    base_dt = memory_date_base(memory).moment
    base = base_dt.date()
    lines = memory.text.split("\n")
    out: list[DatedPhrase] = []
    if memory.body_line > 1:
        for number, line in enumerate(lines[: memory.body_line - 1], start=1):
            if line.startswith("description:"):
                for rd in find_relative_dates(line, base_dt, first_line=number):
                    if rd.column >= len("description:"):
                        out.append(_dated(rd, line, "description", base))
                break
    # The frontmatter pattern may end mid-line (``---\s*`` eats indentation): shift that line.
    first_line = lines[memory.body_line - 1] if memory.body_line - 1 < len(lines) else ""
    shift = len(first_line) - len(memory.body.split("\n", 1)[0])
    for rd in find_relative_dates(memory.body, base_dt, first_line=memory.body_line):
        if rd.line == memory.body_line and shift:
            rd = RelativeDate(rd.phrase, rd.line, rd.resolved, rd.column + shift)
        out.append(_dated(rd, lines[rd.line - 1] if rd.line - 1 < len(lines) else "", "body", base))
    return out
