"""Content checks on a memory's body that need no other file (docs/behaviour.md §4.1, §4.3).

- the body shape of ``feedback`` and ``project`` memories: the rule or fact, then ``**Why:**``,
  then ``**How to apply:**``;
- relative dates in ``project`` memories ("tomorrow", "on Thursday", "上周四"), each resolved
  to an absolute date against the file's mtime — a memory is read months later, when
  "tomorrow" means nothing.

Candidate phrases are found by memtui's own patterns (what counts as relative is the memory
system's rule); resolving a phrase to a date is ``dateparser``'s job (imported lazily: it takes
~0.1 s to import). Chinese week phrases (``上周四``), which dateparser does not resolve, are
computed here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from functools import lru_cache
from typing import Any

_WEEKDAYS_EN = "monday|tuesday|wednesday|thursday|friday|saturday|sunday"
_RELATIVE_EN = re.compile(
    r"\b(?:the day (?:after tomorrow|before yesterday)"
    r"|tomorrow|yesterday"
    rf"|(?:next|last|coming|past)\s+(?:{_WEEKDAYS_EN})(?!s\b)"
    r"|(?:next|last|coming|past)\s+(?:week|month|year|weekend|quarter)"
    r"|(?:\d+|a|an|one|two|three)\s+(?:days?|weeks?|months?)\s+ago)\b",
    re.IGNORECASE,
)
_WEEKDAYS_DE = "montag|dienstag|mittwoch|donnerstag|freitag|samstag|sonntag"
_WEEKDAYS_ES = "lunes|martes|miércoles|miercoles|jueves|viernes|sábado|sabado|domingo"
# German and Spanish: the unambiguous phrases ("morgen" and "mañana" also mean "morning": left out
# unless fixed as "übermorgen" / "pasado mañana").
_RELATIVE_DE_ES = re.compile(
    rf"\b(?:gestern|vorgestern|übermorgen|(?:nächste[nrs]?|kommende[nrs]?|letzte[nrs]?|vergangene[nrs]?)\s+(?:woche|monat|jahr|{_WEEKDAYS_DE})"
    r"|vor\s+(?:\d+|zwei|drei|vier)\s+(?:tagen|wochen|monaten)"
    rf"|ayer|anteayer|pasado\s+mañana|la\s+semana\s+(?:que\s+viene|pasada|próxima)|el\s+(?:mes|año)\s+(?:que\s+viene|pasado|próximo)"
    rf"|el\s+próximo\s+(?:{_WEEKDAYS_ES})|el\s+(?:{_WEEKDAYS_ES})\s+pasado|hace\s+(?:\d+|dos|tres|cuatro)\s+(?:días|semanas|meses))\b",
    re.IGNORECASE,
)
_ZH_WEEKDAY = {"一": 0, "二": 1, "三": 2, "四": 3, "五": 4, "六": 5, "日": 6, "天": 6}
_RELATIVE_ZH_WEEK = re.compile(r"(?<![每逢])(上|下)(?:个|個)?(?:周|週|星期|礼拜|禮拜)([一二三四五六日天])?")
# Japanese / Korean week + weekday ("先週の金曜日", "다음 주 목요일"): computed here, like 上周四.
_JA_WEEKDAY = {"月": 0, "火": 1, "水": 2, "木": 3, "金": 4, "土": 5, "日": 6}
_KO_WEEKDAY = {"월": 0, "화": 1, "수": 2, "목": 3, "금": 4, "토": 5, "일": 6}
_RELATIVE_JA_WEEK = re.compile(r"(先週|来週)の?([月火水木金土日])曜日?")
_RELATIVE_KO_WEEK = re.compile(r"(지난|다음)\s?주\s?([월화수목금토일])요일")
_WEEK_SHIFT = {"先週": -1, "今週": 0, "来週": 1, "지난": -1, "이번": 0, "다음": 1}
# Day words of one exact day: offset from the base date (dateparser misses some, e.g. 모레).
CJK_DAY_OFFSETS = {
    "前天": -2, "昨天": -1, "今天": 0, "明天": 1, "后天": 2, "後天": 2,
    "一昨日": -2, "昨日": -1, "今日": 0, "明日": 1, "明後日": 2,
    "그저께": -2, "어제": -1, "오늘": 0, "내일": 1, "모레": 2,
}
_RELATIVE_CJK = re.compile(
    r"前天|昨天|明天|后天|後天|上个月|下个月|下個月|上個月|去年|明年"  # Chinese
    r"|一昨日|昨日|明日|明後日|先週|再来週|来週|先月|来月|昨年|来年"  # Japanese
    r"|그저께|어제|내일|모레|지난\s?주|다음\s?주|지난\s?달|다음\s?달"  # Korean
)
# Every phrase `_RELATIVE_EN` matches contains one of these (lower-cased; weekdays end in "day").
# An ASCII text without any of them has no relative date: the search is skipped (most memories).
_EN_KEYWORDS = ("day", "tomorrow", "week", "month", "year", "quarter", "gestern", "woche", "monat", "jahr", "vor ", "ayer", "semana", "hace ", "pasado")
# A phrase after one of these is a recurring rule or a duration, not a relative date ("every
# next Monday", "each Monday", "per week", "for the last week").
_RECURRING = re.compile(r"(?:\bevery(?:\s+other)?|\beach|\bon\s+an?|\bany|\bper|\bfor\s+the|\bover\s+the|\bduring\s+the|\bwithin\s+the|\bin\s+the)\s+$", re.IGNORECASE)
# A phrase after a negation or "of" is an idiom, not a day: "none pay tomorrow" (not at once),
# "the jobs of tomorrow".
_IDIOM_BEFORE = re.compile(r"(?:\b(?:none|not|no|never|nobody|nothing|neither|nor)\b|n't|n’t)(?:\s+\S+){0,3}\s+$|\bof\s+$", re.IGNORECASE)
# A weekday followed by one of these is a range of days in a schedule ("Monday to Friday").
_WEEKDAY_RANGE = re.compile(rf"^\s*(?:-|–|—|to|through|thru|and|or|,)\s*(?:{_WEEKDAYS_EN})", re.IGNORECASE)
# Quoted text: what someone said or wrote (a script, a chat, a title), not the memory's own claim
# about when something happens. Pairs of straight, curly, single (not an apostrophe) and CJK quotes
# within one line.
_QUOTED = re.compile(r'"[^"\n]*"|“[^”\n]*”|‘[^’\n]*’|「[^」\n]*」|『[^』\n]*』|`[^`\n]*`|(?<!\w)\'(?:[^\'\n]|(?<=\w)\'(?=\w)){1,160}\'(?!\w)')
# A written date next to a phrase already says the day ("next Tuesday (2024-03-12)"); a heading
# that opens with one dates its section ("## 2024-03-04"), a line that opens with one itself
# ("- 2024-03-04: …").
_ABSOLUTE_DATE = re.compile(r"(?<!\d)(?:19|20)\d{2}[-/.年](?:0?[1-9]|1[0-2])(?:[-/.月](?:0?[1-9]|[12]\d|3[01])日?)?(?!\d)")
_DATED_LINE = re.compile(r"^\s*(?:#{1,6}\s+|[-*+]\s+|\*\*|\|\s*)?\**\[?(?:19|20)\d{2}[-/.年](?:0?[1-9]|1[0-2])[-/.月](?:0?[1-9]|[12]\d|3[01])")
_CLAUSE_SPLIT = re.compile(r"[;.!?,:。；！？，：]")
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s")
# Names that begin with a day word: 明日香 (a given name).
_CJK_NAMES = re.compile(r"明日[香美奈菜花]")
# Only the start of a body is searched for relative dates: ~0.1 ms per phrase (dateparser) would
# make a pathological 20,000-line file take a minute. Recall reads the first 4,096 bytes anyway.
MAX_SCAN_CHARS = 64 * 1024
# At most this many relative dates are reported per text (memtui's bound: each costs a dateparser
# call; a memory with more has one problem, said often enough).
MAX_DATES = 50
# The characters before a phrase that decide whether it is a rule or an idiom ("every", "none").
_CONTEXT_CHARS = 60
# The labels that give a memory's reason and its instruction, in the languages memories are
# written in: ``**Why:**``, ``Why：`` (a full-width colon), ``## Why``, ``Reason:``, ``**原因**``…
_WHY_WORDS = (
    r"why|reason|reasons|rationale|because|motivation|background|context"
    r"|原因|理由|为什么|為什麼|背景|缘由|緣由|动机|動機|なぜ|根拠|이유|배경|왜|por\s*qu[ée]|raz[óo]n|motivo|contexto"
    r"|warum|grund|begründung|hintergrund|pourquoi|raison|contexte"
)
_HOW_WORDS = (
    r"how to apply|how to use|how to|apply|application|usage|action|what to do|when to apply|rule|rules"
    r"|如何应用|如何應用|怎么用|怎麼用|应用|應用|做法|用法|适用|適用|规则|規則|执行|執行|适用方法|適用方法|使い方|対応|運用|적용|적용\s*방법|사용법"
    r"|c[óo]mo aplicar|c[óo]mo usar|aplicaci[óo]n|aplicar|regla"
    r"|wie anwenden|anwendung|vorgehen|umsetzung|comment appliquer|application|règle"
)
# Possessive runs (``*+``): a line of 30,000 spaces is read once, not tried at every split.
_LABEL = r"(?im)^[ \t>*_\-\d.)]*+(?:#{{1,6}}+[ \t]*+)?(?:{words})[ \t]*+(?:\*\*|__)?+[ \t]*+(?:[:：]|$)|(?:\*\*|__)(?:{words})[ \t]*+[:：]?[ \t]*+(?:\*\*|__)"
_WHY = re.compile(_LABEL.format(words=_WHY_WORDS))
_HOW = re.compile(_LABEL.format(words=_HOW_WORDS))


@dataclass(frozen=True, slots=True)
class RelativeDate:
    """A relative date phrase: ``phrase`` as written, ``line`` (1-based, in the file),
    ``resolved`` (the absolute date it meant on ``base``, or ``None`` when it cannot be told)."""

    phrase: str
    line: int
    resolved: date | None
    column: int = 0  # 0-based character offset of ``phrase`` in its line


def missing_sections(body: str) -> list[str]:
    """Which of ``"Why:"`` and ``"How to apply:"`` a feedback/project body lacks."""
    missing = []
    # Both patterns need their words (case-insensitively; no other character case-folds to
    # these letters), so a body without them is decided without running the regexes.
    if not _WHY.search(body):
        missing.append("Why:")
    if not _HOW.search(body):
        missing.append("How to apply:")
    return missing


def _resolve_zh_week(match: re.Match[str], base: date) -> date | None:
    shift = {"上": -1, "下": 1}.get(match.group(1), 0)
    monday = base - timedelta(days=base.weekday()) + timedelta(weeks=shift)
    day = match.group(2)
    return monday + timedelta(days=_ZH_WEEKDAY[day]) if day else monday


def _resolve_ja_ko_week(match: re.Match[str], base: date) -> date:
    monday = base - timedelta(days=base.weekday()) + timedelta(weeks=_WEEK_SHIFT[match.group(1)])
    day = _JA_WEEKDAY.get(match.group(2), _KO_WEEKDAY.get(match.group(2), 0))
    return monday + timedelta(days=day)


def _dateparser_resolve(phrase: str, base: datetime) -> date | None:
    cleaned = re.sub(r"^(?:on|coming)\s+", "", phrase.strip(), flags=re.IGNORECASE)
    if cleaned in CJK_DAY_OFFSETS:
        return base.date() + timedelta(days=CJK_DAY_OFFSETS[cleaned])
    return _dateparser_cached(cleaned.casefold(), base.date())


@lru_cache(maxsize=8192)
def _dateparser_cached(cleaned: str, base: date) -> date | None:
    """dateparser's reading of ``cleaned`` relative to ``base`` (cached: one phrase on one day
    always means the same date, and dateparser takes milliseconds per call)."""
    import dateparser  # lazy: ~0.1 s import

    settings: Any = {"RELATIVE_BASE": datetime(base.year, base.month, base.day, 12), "PREFER_DATES_FROM": "future"}
    parsed = dateparser.parse(cleaned, languages=["en", "zh", "ja", "ko", "de", "es"], settings=settings)
    return parsed.date() if parsed else None


_SENTENCE_START = re.compile(r"(?:^|[.!?。！？]\s+|^\s*(?:[-*+]|\d+[.)])\s+(?:\[[ xX]\]\s+)?)[*_(\"“]*$")


def _named(line: str, m: re.Match[str], before: str) -> bool:
    """Whether an English phrase is part of a name or a title rather than prose: capitalised
    where a sentence does not start ("Tomorrow Labs", "The Day After Tomorrow"), in a heading,
    glued to a name (``Yesterday.js``), or a label (``Yesterday:`` in a template)."""
    phrase = m.group(0)
    after = line[m.end() : m.end() + 3]
    if after[:1] in (".", "-", "_") and after[1:2].isalnum():
        return True  # Yesterday.js, Tomorrow.io, tomorrow-labs
    if not phrase[:1].isupper() or phrase.isupper():
        return False  # lower case, or capitals for emphasis ("ship it NEXT THURSDAY")
    if _HEADING.match(line) or after.lstrip()[:1] == ":":
        return True
    return not _SENTENCE_START.search(before)


def find_relative_dates(text: str, base: datetime, *, first_line: int = 1) -> list[RelativeDate]:
    """Relative date phrases in ``text`` with the date each meant at ``base`` (the file's mtime).

    ``first_line`` is the file line number of ``text``'s first line. Not relative dates: phrases
    in fenced code blocks, block quotes (``> …``) and quoted text or code spans (a script, a chat
    line, a title: someone else's words), recurring rules and durations ("every Monday", "per
    week", "for the past week"), ranges of weekdays ("Monday to Friday"), idioms ("none pay
    tomorrow", "the jobs of tomorrow"), and the words that
    mostly mean "currently" (today, tonight, this week, 今天, 오늘).
    """
    found: list[RelativeDate] = []
    scan = text[:MAX_SCAN_CHARS]
    if scan.isascii() and not any(word in scan.lower() for word in _EN_KEYWORDS):
        return found  # no pattern can match: the CJK ones need CJK, every English phrase has a key word
    # A match within a line is a match in the whole text (no pattern is anchored): one search
    # each over the text rules out most bodies before the line-by-line pass.
    if not any(p.search(scan) for p in (_RELATIVE_EN, _RELATIVE_DE_ES, _RELATIVE_CJK, _RELATIVE_ZH_WEEK, _RELATIVE_JA_WEEK, _RELATIVE_KO_WEEK)):
        return found
    fence: str | None = None
    dated = False  # under a heading that opens with a written date
    for offset, line in enumerate(scan.split("\n")):
        opened = _FENCE.match(line)
        if fence is not None:
            if opened and opened.group(1)[0] == fence[0] and len(opened.group(1)) >= len(fence) and not line.strip()[len(opened.group(1)):].strip():
                fence = None
            continue
        if opened:
            fence = opened.group(1)
            continue
        if line.lstrip().startswith(">"):
            continue
        if _HEADING.match(line):
            dated = bool(_DATED_LINE.match(line))  # a dated heading dates its section
        if dated or _DATED_LINE.match(line) or line.lstrip().startswith("|"):
            continue  # a dated entry says its day; a table cell is a label ("| Yesterday | … |")
        # positions inside quotes or a week phrase: each marked once (linear in the line)
        quoted: set[int] = set()
        if any(c in line for c in '"“‘「『`\''):
            for q in _QUOTED.finditer(line):
                quoted.update(range(q.start(), q.end()))
        taken: set[int] = set()
        spans: list[tuple[int, RelativeDate]] = []
        for m in _RELATIVE_ZH_WEEK.finditer(line):
            spans.append((m.start(), RelativeDate(m.group(0), first_line + offset, _resolve_zh_week(m, base.date()), m.start())))
            taken.update(range(m.start(), m.end()))
        for m in (*_RELATIVE_JA_WEEK.finditer(line), *_RELATIVE_KO_WEEK.finditer(line)):
            spans.append((m.start(), RelativeDate(m.group(0), first_line + offset, _resolve_ja_ko_week(m, base.date()), m.start())))
            taken.update(range(m.start(), m.end()))
        for pattern in (_RELATIVE_EN, _RELATIVE_DE_ES, _RELATIVE_CJK):
            for m in pattern.finditer(line):
                if len(found) + len(spans) >= MAX_DATES:
                    break
                if m.start() in taken or m.start() in quoted:
                    continue
                before = line[max(0, m.start() - _CONTEXT_CHARS) : m.start()]
                if pattern is _RELATIVE_EN and _named(line, m, before):
                    continue  # "Tomorrow Labs", "Yesterday.js", "# Today vs Tomorrow": a name or a title
                if _ABSOLUTE_DATE.search(line, max(0, m.start() - 30), m.end() + 30):
                    continue  # "next Tuesday (2024-03-12)": the day is written
                if pattern is _RELATIVE_CJK and _CJK_NAMES.match(line, m.start()):
                    continue
                if _RECURRING.search(before) or _WEEKDAY_RANGE.match(line, m.end()) or (pattern is _RELATIVE_EN and _IDIOM_BEFORE.search(_CLAUSE_SPLIT.split(before)[-1])):
                    continue  # "every Friday", "on a Friday", "Monday to Friday": a rule, not a date
                spans.append((m.start(), RelativeDate(m.group(0), first_line + offset, _dateparser_resolve(m.group(0), base), m.start())))
        found.extend(rd for start, rd in sorted(spans, key=lambda s: s[0]) if start not in quoted)
        if len(found) >= MAX_DATES:
            return found[:MAX_DATES]
    return found


_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_NAME_DATE = re.compile(r"(?<!\d)((?:19|20)\d{2})[-_.]?(0[1-9]|1[0-2])[-_.]?(0[1-9]|[12]\d|3[01])(?!\d)")


@dataclass(frozen=True, slots=True)
class DateBase:
    """The day a memory's relative dates are read against: ``moment`` (aware UTC) and
    ``source``: ``"modified"`` (the frontmatter field), ``"file name"`` or ``"mtime"``."""

    moment: datetime
    source: str

    @property
    def what(self) -> str:
        """``the file's mtime`` / ``the `modified` field`` / ``the date in the file name``."""
        return {"modified": "the `modified` field", "file name": "the date in the file name"}.get(self.source, "the file's mtime")

    def describe(self) -> str:
        """``the file's mtime, 2026-03-02`` (and likewise for the other sources)."""
        return f"{self.what}, {self.moment.date().isoformat()}"


def _field_moment(value: Any) -> datetime | None:
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=UTC)
    if isinstance(value, date):
        return datetime(value.year, value.month, value.day, 12, tzinfo=UTC)
    if not isinstance(value, str):
        return None
    text = value.strip()
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        m = _NAME_DATE.fullmatch(text[:10]) if len(text) >= 8 else None
        if m is None:
            return None
        try:
            return datetime(int(m.group(1)), int(m.group(2)), int(m.group(3)), 12, tzinfo=UTC)
        except ValueError:
            return None
    if len(text) <= 10:  # a bare date: noon, so that no time zone moves its day
        parsed = parsed.replace(hour=12)
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def date_base(file_name: str, frontmatter: dict[str, Any], mtime: float) -> DateBase:
    """What a memory's relative dates are read against: the frontmatter's ``modified`` field
    when it holds a date, else a date in the file name (``project_session_2026-03-25.md``),
    else the file's mtime — a copied or checked-out file's mtime says when it landed here, not
    when "tomorrow" was written."""
    moment = _field_moment(frontmatter.get("modified")) if isinstance(frontmatter, dict) else None
    if moment is not None:
        return DateBase(moment.astimezone(UTC), "modified")
    name = file_name.replace("\\", "/").rsplit("/", 1)[-1]
    m = _NAME_DATE.search(name)
    if m is not None:
        try:
            return DateBase(datetime(int(m.group(1)), int(m.group(2)), int(m.group(3)), 12, tzinfo=UTC), "file name")
        except ValueError:
            pass
    return DateBase(mtime_datetime(mtime), "mtime")


def mtime_datetime(mtime: float) -> datetime:
    """An epoch-seconds mtime as an aware UTC datetime (clamped to what Python can represent)."""
    try:
        return datetime.fromtimestamp(mtime, UTC)
    except (OverflowError, OSError, ValueError):
        return (datetime.max if mtime > 0 else datetime.min).replace(tzinfo=UTC)
