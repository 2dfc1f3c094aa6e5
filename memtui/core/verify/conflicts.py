"""Memories that contradict each other: two memories on the same subject that disagree on a
date, a number, a version, a name or a yes/no (the offline rule; ``memtui.core.verify.judge``
asks Claude when a key is set).

The rule, in two steps:

1. **Same subject.** A memory's subject terms are the words of its file name, ``name`` and
   ``description`` (lower-cased, three letters or more, stop words and numbers dropped, a plural
   ``s`` cut). Two memories are about the same thing when they share at least
   ``MIN_SHARED_SUBJECT`` subject terms, counting only terms that are not common in the
   directory (in at most ``max(COMMON_MIN, COMMON_SHARE × N)`` memories).
2. **Different values for the same thing.** Each sentence of the description and body yields
   values: ISO dates (``2026-03-05``), versions (``v2``, ``1.4.0``), numbers with a unit (``30
   days``, ``42k``, ``5%``), a person named after a role word (``owner: Tomasz``), and one side
   of a yes/no pair (``enabled``/``disabled``…). A value of memory A and a value of the same kind
   of memory B *differ* when neither memory mentions the other's value at all, and the two
   sentences share a term of the pair's shared subject. "14 days" in
   one and "30 days" in the other is no conflict when the other also says "14 days".

Each pair is reported once, with every differing value; ``older`` is the memory with the older
mtime. A memory marked ``superseded_by`` is left out (that conflict has been dealt with).
"""

from __future__ import annotations

import re
from collections import defaultdict
from itertools import islice
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from pathlib import Path

from memtui.core.memory.derived import per_memory
from memtui.core.memory.memories import Memory

if TYPE_CHECKING:
    from memtui.core.memory.catalogdb import CatalogDB
    from memtui.core.places.behaviour import MemoryFormat

MIN_SHARED_SUBJECT = 2
COMMON_MIN = 5
COMMON_SHARE = 0.01
MAX_CANDIDATES_PER_MEMORY = 20  # most similar partners compared per memory (memtui's bound)
MAX_VALUES = 500
"""At most this many values are read from one memory (memtui's bound, as ``MAX_CLAIMS`` is for
claims): the first, its description's then its body's in the order ``values_of`` reads them.
Rule step 2 compares each value of a memory with each value of the same kind of its partner, so
a memory of thousands of numbers (a pasted log or table) would cost millions of comparisons per
pair; values past the first ``MAX_VALUES`` are not compared (``memory_values`` says so)."""
MAX_DIFFERING = 50
"""At most this many differing values are reported for one pair (memtui's bound): the first, in
the older memory's order. Two memories of ``MAX_VALUES`` values each could differ in 250,000."""
SUPERSEDED_KEY = "superseded_by"

_STOP = frozenset(
    """
    the and for with that this from into onto over under about after before than then when what which who whom whose
    are was were been being has have had having does did doing not but all any each few more most other some such only own
    same very can will just should now our ours you your yours they them their theirs its it's his her hers him she
    also use used uses using make made like want need needs must may might would could shall there here where why how
    new old one two three four five six seven eight nine ten first last next per via yes
    project user feedback reference memory memories note notes file files day days week weeks month months year years
    """.split()
)
_WORD = re.compile(r"[^\W\d_][\w-]*[^\W_]|[^\W\d_]{3,}", re.UNICODE)
_SENTENCE = re.compile(r"(?<=[.;!?])\s+|\n\s*\n|\n(?=\s*(?:[-*+]|\d+[.)])\s)")
_DATE = re.compile(r"\b(\d{4}-\d{2}-\d{2})\b")
_VERSION = re.compile(r"(?<![\w.])(v\d+(?:\.\d+){0,3}|\d+\.\d+\.\d+)(?!\w|\.\d)", re.IGNORECASE)
_UNITS = {
    "%": "%", "percent": "%", "k": "k", "m": "m",
    "ms": "ms", "millisecond": "ms", "milliseconds": "ms",
    "s": "s", "sec": "s", "secs": "s", "second": "s", "seconds": "s",
    "min": "min", "mins": "min", "minute": "min", "minutes": "min",
    "h": "h", "hour": "h", "hours": "h", "day": "day", "days": "day", "week": "week", "weeks": "week",
    "month": "month", "months": "month", "year": "year", "years": "year",
    "kb": "KB", "mb": "MB", "gb": "GB", "tb": "TB",
    "rows": "rows", "row": "rows", "events": "events", "requests": "requests", "users": "users",
    "retries": "retries", "attempts": "attempts", "replicas": "replicas", "partitions": "partitions",
    "brokers": "brokers", "workers": "workers", "nodes": "nodes", "lines": "lines", "characters": "characters",
}
_NUMBER = re.compile(r"(?<![\w.-])(\d+(?:[.,]\d+)?)\s?(" + "|".join(sorted((re.escape(u) for u in _UNITS), key=len, reverse=True)) + r")(?![\w])", re.IGNORECASE)
_ROLE = re.compile(r"\b(owner|owned by|maintainer|maintained by|lead|contact|reviewer|reviewed by|on-call|oncall|assignee)\b[^.;\n]{0,20}?\b([A-Z][a-z]+(?: [A-Z][a-z]+)?)\b")
_YES_NO_PAIRS = (
    ("enabled", "disabled"), ("allowed", "forbidden"), ("required", "optional"), ("true", "false"),
    ("on", "off"), ("public", "private"), ("supported", "unsupported"), ("sync", "async"),
)
_YES_NO = {w: (a, b) for a, b in _YES_NO_PAIRS for w in (a, b)}
_YES_NO_RE = re.compile(r"\b(?:is|are|be|stays?|remains?|now|set to|turned)\s+(" + "|".join(_YES_NO) + r")\b", re.IGNORECASE)


def _stem(word: str) -> str:
    w = word.lower()
    if len(w) > 4 and w.endswith("ies"):
        return w[:-3] + "y"
    if len(w) > 3 and w.endswith("s") and not w.endswith(("ss", "us", "is")):
        return w[:-1]
    return w


def terms(text: str) -> set[str]:
    """The content words of ``text`` (see the module doc)."""
    out = set()
    for word in set(_WORD.findall(text.replace("_", " "))):  # each distinct word stemmed once
        w = _stem(word)
        if len(w) >= 3 and w not in _STOP and not w.isdigit():
            out.add(w)
    return out


@dataclass(frozen=True, slots=True)
class Value:
    """A value a sentence states: ``kind`` (``date``, ``version``, ``number:<unit>``,
    ``name:<role>``, ``yes-no:<a>/<b>``), ``value`` as normalised for comparison, ``text`` as
    written, ``line`` (in the file), ``terms`` of its sentence (from ``memory_values``: those
    among the memory's subject terms, all rule step 2 compares — the terms two sentences share
    within the pair's shared subject)."""

    kind: str
    value: str
    text: str
    line: int
    terms: frozenset[str]


def _sentences(text: str, first_line: int) -> list[tuple[str, int]]:
    out = []
    pos = 0
    for m in [*_SENTENCE.finditer(text), None]:
        end = m.start() if m else len(text)
        chunk = text[pos:end]
        if chunk.strip():
            out.append((chunk, first_line + text.count("\n", 0, pos)))
        if m is None:
            break
        pos = m.end()
    return out


# A sentence without a digit, a yes/no word or a role word states no value: skipped at once.
_DIGIT = re.compile(r"\d")
# A run of digits lies inside one sentence: its start marks the sentence as well as each digit.
_DIGIT_RUN = re.compile(r"\d+")
_TRIGGER_WORD = re.compile(r"\b(?:" + "|".join(_YES_NO) + r"|owner|owned|maintainer|maintained|lead|contact|reviewer|reviewed|on-call|oncall|assignee)\b", re.IGNORECASE)


_TRIGGER_WORD_LOWER = re.compile(_TRIGGER_WORD.pattern)


def _states_values(text: str) -> bool:
    return _DIGIT.search(text) is not None or _TRIGGER_WORD.search(text) is not None


def _stating_sentences(text: str, first_line: int) -> list[tuple[str, int]]:
    """The sentences of ``_sentences(text, first_line)`` that ``_states_values``, found with one
    pass of each trigger over the whole text: a trigger match holds no white space and a
    sentence is bounded by white space (or the text's ends), so a match lies inside one
    sentence, and ``\b`` at a sentence's edge means what it means in the whole text."""
    # an ASCII text lower-cased keeps its positions, and the case-sensitive pattern finds there
    # exactly what the case-insensitive one finds in the text (the words are lower-case ASCII),
    # about three times faster
    words = _TRIGGER_WORD_LOWER.finditer(text.lower()) if text.isascii() else _TRIGGER_WORD.finditer(text)
    marks = sorted([m.start() for m in _DIGIT_RUN.finditer(text)] + [m.start() for m in words])
    if not marks:
        return []
    out: list[tuple[str, int]] = []
    at = 0  # the first mark not yet behind the current sentence
    pos = 0
    counted, line = 0, first_line  # the line of offset ``counted``, counted forward once
    for m in [*_SENTENCE.finditer(text), None]:
        end = m.start() if m else len(text)
        while at < len(marks) and marks[at] < pos:
            at += 1
        if at < len(marks) and marks[at] < end:
            chunk = text[pos:end]
            if chunk.strip():
                line += text.count("\n", counted, pos)
                counted = pos
                out.append((chunk, line))
        if m is None or at >= len(marks):
            break
        pos = m.end()
    return out


def values_of(text: str, first_line: int, *, limit: int = MAX_VALUES) -> list[Value]:
    """Every value stated in ``text`` (see the module doc), at most ``limit``: a sentence's in
    the order dates, versions, numbers, names, yes/no, then the next sentence's; each with every
    term of its sentence. ``first_line``: the file line of ``text``'s first line."""
    out: list[Value] = []
    if limit <= 0:
        return out
    for sentence, line in _stating_sentences(text, first_line):
        room = limit - len(out)  # each kind's matches are read only as far as the limit needs
        found: list[tuple[str, str, str, int]] = []
        for m in islice(_DATE.finditer(sentence), room):
            found.append(("date", m.group(1), m.group(1), m.start()))
        stripped = _DATE.sub(lambda m: " " * len(m.group(0)), sentence)
        for m in islice(_VERSION.finditer(stripped), room - len(found)):
            found.append(("version", m.group(1).lower().lstrip("v"), m.group(1), m.start()))
        for m in islice(_NUMBER.finditer(stripped), room - len(found)):
            unit = _UNITS[m.group(2).lower()] if m.group(2).lower() in _UNITS else m.group(2)
            found.append((f"number:{unit}", m.group(1).replace(",", "."), m.group(0), m.start()))
        for m in islice(_ROLE.finditer(sentence), room - len(found)):
            found.append((f"name:{m.group(1).lower().replace(' by', '')}", m.group(2), m.group(2), m.start()))
        for m in islice(_YES_NO_RE.finditer(sentence), room - len(found)):
            word = m.group(1).lower()
            a, b = _YES_NO[word]
            found.append((f"yes-no:{a}/{b}", word, word, m.start(1)))
        if not found:
            continue
        sentence_terms = frozenset(terms(_DATE.sub(" ", sentence)))
        # each value's line: the sentence's first line plus the newlines before it, counted
        # forward once over the sentence (a paragraph of thousands of lines and no sentence
        # break is one sentence: a count from its start per value would be quadratic)
        line_at: dict[int, int] = {}
        counted, at_line = 0, line
        for at in sorted({f[3] for f in found}):
            at_line += sentence.count("\n", counted, at)
            counted = at
            line_at[at] = at_line
        for kind, value, written, at in found:
            out.append(Value(kind, value, written, line_at[at], sentence_terms))
        if len(out) >= limit:
            break
    return out


@dataclass(frozen=True, slots=True)
class DifferingValue:
    """One disagreement: ``kind``, the ``older`` and ``newer`` memory's values as written, their
    ``lines``, and ``about`` (the shared terms of the two sentences)."""

    kind: str
    older: str
    newer: str
    older_line: int
    newer_line: int
    about: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        """``{kind, older, newer, older_line, newer_line, about}``."""
        return {"kind": self.kind, "older": self.older, "newer": self.newer, "older_line": self.older_line, "newer_line": self.newer_line, "about": list(self.about)}


@dataclass(frozen=True, slots=True)
class Conflict:
    """Two memories on one subject that disagree. ``older`` / ``newer``: relpaths (by mtime);
    ``subject``: the shared subject terms; ``values``: what differs; ``source``: ``offline`` or
    ``claude``; ``explanation``: Claude's sentence, or ``""``."""

    older: str
    newer: str
    subject: tuple[str, ...]
    values: tuple[DifferingValue, ...]
    source: str = "offline"
    explanation: str = ""
    older_mtime: float = 0.0
    newer_mtime: float = 0.0

    def describe(self) -> str:
        """``“cutover” 2026-01-03 here, 2026-02-14 in project_kafka_migration.md`` (from the
        older memory's side)."""
        parts = []
        for v in self.values[:3]:
            about = f"“{' '.join(v.about[:3])}”: " if v.about else ""
            parts.append(f"{about}{v.older} here, {v.newer} in {self.newer}")
        text = "; ".join(parts)
        if self.explanation:
            text = f"{text} — {self.explanation}" if text else self.explanation
        return text

    def to_json(self) -> dict[str, Any]:
        """``{older, newer, subject, values: [...], source, explanation}``."""
        return {"older": self.older, "newer": self.newer, "subject": list(self.subject), "values": [v.to_json() for v in self.values], "source": self.source, "explanation": self.explanation}


@dataclass(slots=True)
class _Doc:
    mem: Memory
    subject: set[str]
    values: list[Value] = field(default_factory=list)


def _description_line(mem: Memory) -> int:
    for number, line in enumerate(mem.text.split("\n")[: max(mem.body_line - 1, 0)], start=1):
        if line.startswith("description:"):
            return number
    return 1


def memory_values(mem: Memory) -> list[Value]:
    """Every value ``mem`` states (its description's, then its body's), at most ``MAX_VALUES``
    (then ``values_capped`` is true of the list): what rule step 2 compares, each with the
    terms of its sentence that are subject terms of ``mem``. Made from the memory's text alone
    (``mem`` must hold its text)."""
    return values_and_subject(mem)[0]


def values_and_subject(mem: Memory) -> tuple[list[Value], set[str]]:
    """``memory_values(mem)`` and, when it states a value, ``memory_subject(mem)`` (else an
    empty set: the rule never compares its subject then), each made once."""
    values: list[Value] = []
    if mem.description:
        values.extend(values_of(mem.description, _description_line(mem)))
    values.extend(values_of(mem.body, mem.body_line, limit=MAX_VALUES - len(values)))
    if not values:
        return values, set()
    subject = memory_subject(mem)
    narrowed: dict[int, frozenset[str]] = {}  # a sentence's terms, once per sentence (its values share them)
    out: list[Value] = []
    for v in values:
        kept = narrowed.get(id(v.terms))
        if kept is None:
            kept = narrowed[id(v.terms)] = v.terms & subject
        out.append(replace(v, terms=kept))
    return out, subject


def values_capped(values: Sequence[Value]) -> bool:
    """Whether ``values`` (a ``memory_values`` list) stopped at ``MAX_VALUES``: the memory may
    state more, which rule step 2 does not compare."""
    return len(values) >= MAX_VALUES


def values_to_json(values: Sequence[Value]) -> list[list[Any]]:
    """``[[kind, value, text, line, [terms…]], …]`` (terms sorted): ``values_from_json``'s input."""
    return [[v.kind, v.value, v.text, v.line, sorted(v.terms)] for v in values]


def values_from_json(data: Any) -> list[Value]:
    """The values a ``values_to_json`` list describes. Raises ``ValueError`` for another shape."""
    try:
        out = [Value(kind, value, text, line, frozenset(words)) for kind, value, text, line, words in data]
    except (TypeError, ValueError) as exc:
        raise ValueError(f"not a list of values: {exc}") from exc
    for v in out:
        if not (isinstance(v.kind, str) and isinstance(v.value, str) and isinstance(v.text, str) and type(v.line) is int and all(isinstance(w, str) for w in v.terms)):
            raise ValueError("not a list of values: wrong types")
    return out


# What ``conflict_inputs`` keeps per memory in the catalog database (``CatalogDB.derived``):
# the values it states and, when it states one, its subject terms, under a fingerprint of the
# code that makes them.
VALUES_KIND = "conflict-values"
_VALUES_MODULES = ("verify/conflicts", "memory/memories", "memory/frontmatter")

# One memory's conflict inputs: the values it states, its subject terms (empty when it states
# no value: the rule never compares its subject then).
_Inputs = tuple[list[Value], set[str]]


def _inputs(mem: Memory) -> _Inputs:
    return values_and_subject(mem)


def _inputs_to_json(inputs: _Inputs) -> list[Any]:
    return [values_to_json(inputs[0]), sorted(inputs[1])]


def _inputs_from_json(data: Any) -> _Inputs:
    try:
        stated, words = data
    except (TypeError, ValueError) as exc:
        raise ValueError(f"not conflict inputs: {exc}") from exc
    if not isinstance(words, list) or not all(isinstance(w, str) for w in words):
        raise ValueError("not conflict inputs: subject terms are not strings")
    return values_from_json(stated), set(words)


def conflict_inputs(memories: Sequence[Memory], db: CatalogDB | None) -> tuple[dict[str, list[Value]], dict[str, set[str]]]:
    """``(values, subjects)`` for ``find_conflicts``: relpath → ``memory_values`` and relpath →
    ``memory_subject`` (made only for a memory that states a value) of each of ``memories``:
    from ``db`` (the memory dir's catalog database, or ``None``) for a file whose bytes did not
    change since they were stored, else from its text (read now, and stored when it is the
    bytes the record describes). A memory the rule leaves out (superseded, unreadable) is in
    neither."""
    made = per_memory(memories, db, VALUES_KIND, _VALUES_MODULES, _inputs, _inputs_to_json, _inputs_from_json,
                      skip=lambda mem: SUPERSEDED_KEY in mem.frontmatter or not mem.sha256)
    values = {rel: got[0] for rel, got in made.items()}
    subjects = {rel: got[1] for rel, got in made.items() if got[0]}
    return values, subjects


def memory_subject(mem: Memory) -> set[str]:
    """The subject terms of ``mem`` (rule step 1): the ``terms`` of its file name (without
    ``.md``), ``name`` and ``description``. Made from the parsed header alone (``mem`` need not
    hold its text)."""
    stem = mem.relpath.rsplit("/", 1)[-1].removesuffix(".md")
    return terms(" ".join([stem, mem.name or "", mem.description or ""]))


def _doc(mem: Memory, *, need_values: bool = True, values: Sequence[Value] | None = None, subject: set[str] | None = None) -> _Doc | None:
    if SUPERSEDED_KEY in mem.frontmatter or not mem.sha256:
        return None
    found = list(values) if values is not None else memory_values(mem)
    if need_values and not found:  # no value to compare: its subject is not needed
        return None
    if subject is None:
        subject = memory_subject(mem)
    if not subject:
        return None
    return _Doc(mem, subject, found)


def _differing(a: _Doc, b: _Doc, subject: set[str]) -> list[DifferingValue]:
    """The values of ``a`` and ``b`` that differ (``a`` the older), at most ``MAX_DIFFERING``."""
    by_kind_a: dict[str, set[str]] = defaultdict(set)
    by_kind_b: dict[str, set[str]] = defaultdict(set)
    values_b: dict[str, list[Value]] = defaultdict(list)  # kind -> b's values of it, in order
    for v in a.values:
        by_kind_a[v.kind].add(v.value)
    for v in b.values:
        by_kind_b[v.kind].add(v.value)
        values_b[v.kind].append(v)
    out: list[DifferingValue] = []
    seen: set[tuple[str, str, str]] = set()
    for va in a.values:
        if va.kind not in by_kind_b or va.value in by_kind_b[va.kind] or not va.terms & subject:
            continue
        for vb in values_b[va.kind]:
            if vb.value in by_kind_a[va.kind]:
                continue
            shared = va.terms & vb.terms
            if not shared & subject:
                continue
            key = (va.kind, va.value, vb.value)
            if key in seen:
                continue
            seen.add(key)
            about = tuple(sorted(shared & subject))
            out.append(DifferingValue(va.kind, va.text, vb.text, va.line, vb.line, about))
            if len(out) >= MAX_DIFFERING:
                return out
    return out


def _pairs(
    memories: Sequence[Memory],
    *,
    need_values: bool,
    values: Mapping[str, Sequence[Value]] | None = None,
    subjects: Mapping[str, set[str]] | None = None,
) -> list[tuple[_Doc, _Doc, set[str]]]:
    """The pairs on one subject (rule step 1) as ``(older, newer, shared subject)``."""
    given = values if values is not None else {}
    known = subjects if subjects is not None else {}
    docs = [d for d in (_doc(m, need_values=need_values, values=given.get(m.relpath), subject=known.get(m.relpath)) for m in memories) if d is not None]
    common = max(COMMON_MIN, int(COMMON_SHARE * len(memories)))
    postings: dict[str, list[int]] = defaultdict(list)
    for i, d in enumerate(docs):
        for t in d.subject:
            postings[t].append(i)
    usable = {t for t, ids in postings.items() if len(ids) <= common}
    out: list[tuple[_Doc, _Doc, set[str]]] = []
    for i, d in enumerate(docs):
        counts: dict[int, int] = defaultdict(int)
        for t in d.subject & usable:
            for j in postings[t]:
                if j > i:
                    counts[j] += 1
        partners = sorted((j for j, c in counts.items() if c >= MIN_SHARED_SUBJECT), key=lambda j: (-counts[j], j))[:MAX_CANDIDATES_PER_MEMORY]
        for j in partners:
            e = docs[j]
            older, newer = (d, e) if (d.mem.mtime, d.mem.relpath) <= (e.mem.mtime, e.mem.relpath) else (e, d)
            out.append((older, newer, d.subject & e.subject & usable))
    return out


def subject_pairs(memories: Sequence[Memory]) -> list[tuple[str, str]]:
    """Every pair of ``memories`` on one subject (rule step 1, values or not) as ``(older,
    newer)`` relpaths, the pairs sharing most subject terms first."""
    pairs = _pairs(memories, need_values=False)
    pairs.sort(key=lambda p: (-len(p[2]), p[0].mem.relpath, p[1].mem.relpath))
    return [(a.mem.relpath, b.mem.relpath) for a, b, _ in pairs]


def find_conflicts(
    memories: Sequence[Memory],
    values: Mapping[str, Sequence[Value]] | None = None,
    subjects: Mapping[str, set[str]] | None = None,
) -> list[Conflict]:
    """Every pair of ``memories`` the offline rule (module doc) finds in conflict, sorted by
    the older memory's relpath. Reads no file (the memories' text is used). ``values``:
    relpath → that memory's ``memory_values``, made earlier (e.g. kept in the catalog
    database); a memory it has need not hold its text. ``subjects``: relpath → that memory's
    ``memory_subject``, made earlier (the others' are made here)."""
    out: list[Conflict] = []
    for older, newer, subject in _pairs(memories, need_values=True, values=values, subjects=subjects):
        diffs = _differing(older, newer, subject)
        if diffs:
            out.append(Conflict(older.mem.relpath, newer.mem.relpath, tuple(sorted(subject)), tuple(diffs), older_mtime=older.mem.mtime, newer_mtime=newer.mem.mtime))
    out.sort(key=lambda c: (c.older, c.newer))
    return out


def conflict_from_json(data: Any) -> Conflict:
    """The ``Conflict`` a ``Conflict.to_json`` value describes. Raises ``ValueError`` for
    another shape."""
    try:
        values = tuple(
            DifferingValue(str(v["kind"]), str(v["older"]), str(v["newer"]), int(v["older_line"]), int(v["newer_line"]), tuple(str(a) for a in v["about"]))
            for v in data["values"]
        )
        return Conflict(str(data["older"]), str(data["newer"]), tuple(str(t) for t in data["subject"]), values, str(data.get("source", "offline")), str(data.get("explanation", "")))
    except (KeyError, TypeError, ValueError) as exc:
        raise ValueError(f"not a conflict: {exc}") from exc


def newer_conflicts(conflicts: Sequence[Conflict]) -> dict[str, list[Conflict]]:
    """relpath → the conflicts in which it is the older memory (a newer one disagrees)."""
    out: dict[str, list[Conflict]] = defaultdict(list)
    for c in conflicts:
        out[c.older].append(c)
    return dict(out)


# What ``newer_conflicts_in`` keeps for the whole dir in its catalog database
# (``CatalogDB.result``): every conflict the offline rule finds there, under
# ``conflicts_fingerprint``.
CONFLICTS_KIND = "newer-conflicts"
# The layout of that value; bumped when it changes.
CONFLICTS_RECIPE = "newer-conflicts/1"


def conflicts_fingerprint(memory_dir: Path, fmt: MemoryFormat) -> str | None:
    """What the conflicts of ``memory_dir`` are kept under (64 hex digits): every entry below
    it with its ``stat`` key (``memtui.core.memory.dirdigest``: any memory added, removed,
    renamed or written changes it), the memory format, every module of ``memtui.core``
    (``catalogdb.core_fingerprint``), Python's version and ``CONFLICTS_RECIPE``. ``None`` when
    the dir has no digest now (an entry written within the racy window, a directory link)."""
    import hashlib
    import sys

    from memtui.core.memory import catalogdb
    from memtui.core.memory.dirdigest import dir_digest

    listing = dir_digest(memory_dir)
    if listing is None:
        return None
    recipe = repr((CONFLICTS_RECIPE, listing, repr(fmt), catalogdb.core_fingerprint(), sys.version))
    return hashlib.sha256(recipe.encode("utf-8", "surrogateescape")).hexdigest()


def _kept_conflicts(blob: bytes | None) -> list[Conflict] | None:
    """The conflicts a kept value holds (``_keep_conflicts``), ``None`` for none or one of
    another shape."""
    import orjson

    if blob is None:
        return None
    try:
        rows = orjson.loads(blob)
        if not isinstance(rows, list):
            return None
        out = []
        for row in rows:
            data, older_mtime, newer_mtime = row
            if type(older_mtime) is not float or type(newer_mtime) is not float:
                return None
            out.append(replace(conflict_from_json(data), older_mtime=older_mtime, newer_mtime=newer_mtime))
        return out
    except (orjson.JSONDecodeError, TypeError, ValueError):
        return None


def _keep_conflicts(cache: CatalogDB, fingerprint: str, conflicts: Sequence[Conflict]) -> None:
    """Keep ``conflicts`` (each ``to_json`` with its two mtimes) under ``fingerprint``; nothing
    when one would not come back the same from JSON (a lone surrogate in a file name)."""
    import orjson

    rows = [[c.to_json(), c.older_mtime, c.newer_mtime] for c in conflicts]
    try:
        blob = orjson.dumps(rows)
    except TypeError:  # orjson.JSONEncodeError
        return
    if _kept_conflicts(blob) != list(conflicts):
        return
    cache.put_result(CONFLICTS_KIND, fingerprint, blob)


def newer_conflicts_in(memory_dir: Path, fmt: MemoryFormat, cache: CatalogDB | None = None) -> dict[str, list[Conflict]]:
    """``newer_conflicts`` of every memory of ``memory_dir`` (read in the agent's memory format
    ``fmt``) by the offline rule: the "a newer memory disagrees" mark of a recall pick.
    ``cache``: the dir's ``CatalogDB``: the conflicts found are kept there for the whole dir
    (``conflicts_fingerprint``) and given back while no entry of the dir changed; else a file
    unchanged since the last scan is not parsed again, and the values it states and its
    subject terms come from the database (``conflict_inputs``) without its text being read.
    ``{}`` when the dir does not exist.

    Whether a memory's mark is right depends on every memory (which subject terms are common,
    which partners are closest), so the rule runs over the whole dir; keeping its result saves
    the scan of every record on a run where nothing changed. The fingerprint is taken before
    the scan: a file written during the scan changes the next run's fingerprint."""
    from memtui.core.memory.memories import scan_memories

    if not memory_dir.is_dir():
        return {}
    fingerprint = conflicts_fingerprint(memory_dir, fmt) if cache is not None and cache.enabled else None
    if cache is not None and fingerprint is not None and (kept := _kept_conflicts(cache.result(CONFLICTS_KIND, fingerprint))) is not None:
        return newer_conflicts(kept)
    scan = scan_memories(memory_dir, cache=cache, fmt=fmt)
    values, subjects = conflict_inputs(scan.memories, cache)
    conflicts = find_conflicts(scan.memories, values, subjects)
    if cache is not None and fingerprint is not None:
        _keep_conflicts(cache, fingerprint, conflicts)
    return newer_conflicts(conflicts)
