"""Likely secrets in memory text, found with the pattern plugins of ``detect-secrets``.

Memory files are prose read by a model and, for team memory, shared with a whole organisation:
a credential pasted into one leaks to everyone. This module runs Yelp's ``detect-secrets``
plugins in-process (no subprocess, no baseline, no network verification) over each line.

Only the plugins that match a *known credential format* are used (AWS, GitHub, GitLab, Slack,
Stripe, OpenAI, private key blocks, JWTs, URLs with a password, …) plus one for Anthropic API
keys, which ``detect-secrets`` does not know. Left out on purpose: the high-entropy-string and
keyword plugins (they flag commit hashes, UUIDs and sentences such as "password: see the
vault", common in memories) and the public-IP plugin (an address is not a credential).

A finding never carries the secret itself: only its kind and line.

Running 30 plugins' patterns over every line costs ~3 ms per memory (minutes at 100,000). A
**literal pre-filter** (``secret_prefilter``) decides first which plugins can match a text at
all, and on which lines: every pattern is read (its parsed form, ``re._parser``) for literals
that any match must contain — a conjunction of alternatives, e.g. ``(?:A3T[A-Z0-9]|AKIA|…)``
needs one of ``A3T``, ``AKIA``, …; one Aho-Corasick pass finds which of them the text holds
(case-insensitive patterns against the lower-cased text). A line is scanned by a plugin, exactly
as before, only when it holds the literals one of the plugin's patterns needs. Why this loses
nothing: a match of a pattern on a line (or a window of it) is a run of the line's characters
that contains the pattern's required literals — lookarounds and anchors consume nothing, so they
only add conditions. Case-insensitive literals are ASCII; ``str.lower`` maps every character
that ``re.IGNORECASE`` equates with an ASCII letter onto that letter except three (``İ``, ``ı``,
``ſ``), and a text holding one of those is treated as holding every case-insensitive literal.
A pattern from which no literal can be read is run on every line. The test suite checks this
over the whole plugin set (``tests/core/memory/test_secretscan_prefilter.py``).
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from detect_secrets.plugins.base import RegexBasedDetector

__all__ = ["SecretFinding", "find_secrets"]

# detect-secrets plugins left out (see the module docstring).
_EXCLUDED_PLUGINS = frozenset({"IPPublicDetector"})

# Long lines are scanned in overlapping windows. Some plugin patterns backtrack quadratically
# (OpenAI's ``sk-[A-Za-z0-9-_]*…``, npm's ``//.+/:_authToken``): one 240 KB line of ``sk-sk-…``
# took 148 s whole; in windows the cost is linear (about 3 s for 250,000 bytes of that worst
# case, milliseconds for prose). Any secret up to _OVERLAP characters long lies wholly inside
# some window (a JWT, the longest common format, is usually well under 1,000).
_WINDOW = 2048
_OVERLAP = 1024


@dataclass(frozen=True, slots=True)
class SecretFinding:
    """One likely secret: ``kind`` is the scanner's name for it (``"AWS Access Key"``), ``line``
    1-based. The matched value is deliberately not kept."""

    kind: str
    line: int

    def describe(self) -> str:
        """``"AWS Access Key on line 3"``."""
        return f"{self.kind} on line {self.line}"


def find_secrets(text: str) -> list[SecretFinding]:
    """Every likely secret in ``text``, in line order, one finding per (kind, line).

    ``text`` is the whole file as a string. Pure and thread-safe: the plugins' ``analyze_string``
    is called directly, bypassing ``detect-secrets``' global settings. Time is linear in the
    length of ``text`` (lines over 2,048 characters are scanned in overlapping windows). Only
    the (line, plugin) pairs the literal pre-filter marks are scanned (module docstring): the
    result is ``find_secrets_line_by_line``'s.
    """
    plugins = _plugins()
    findings: list[SecretFinding] = []
    lines = text.splitlines()
    for number, marked in secret_prefilter().marked_lines(text, lines):
        line = lines[number - 1]
        seen: set[str] = set()
        for chunk in _windows(line):
            for i in marked:
                plugin = plugins[i]
                kind = str(plugin.secret_type)
                if kind not in seen and _first(plugin.analyze_string(chunk)):
                    seen.add(kind)
                    findings.append(SecretFinding(kind, number))
    return findings


def find_secrets_line_by_line(text: str) -> list[SecretFinding]:
    """``find_secrets`` without the pre-filter: every plugin on every line (the reference the
    pre-filter is tested against)."""
    findings: list[SecretFinding] = []
    plugins = _plugins()
    for number, line in enumerate(text.splitlines(), start=1):
        seen: set[str] = set()
        for chunk in _windows(line):
            for plugin in plugins:
                kind = str(plugin.secret_type)
                if kind not in seen and _first(plugin.analyze_string(chunk)):
                    seen.add(kind)
                    findings.append(SecretFinding(kind, number))
    return findings


def _windows(line: str) -> Iterator[str]:
    """``line`` itself when short, else windows of ``_WINDOW`` characters overlapping by
    ``_OVERLAP``."""
    if len(line) <= _WINDOW:
        yield line
        return
    step = _WINDOW - _OVERLAP
    for start in range(0, len(line) - _OVERLAP, step):
        yield line[start : start + _WINDOW]


def _first(matches: Iterable[str]) -> bool:
    """Whether a plugin's generator yields anything non-empty."""
    return any(bool(m) for m in matches)


@lru_cache(maxsize=1)
def _plugins() -> tuple[RegexBasedDetector, ...]:
    """The credential-format plugins of ``detect-secrets``, instantiated once (imported lazily:
    the library pulls in ``requests``)."""
    from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
    from detect_secrets.plugins.base import RegexBasedDetector

    class AnthropicKeyDetector(RegexBasedDetector):
        """Anthropic API and admin keys (``sk-ant-api03-…``, ``sk-ant-admin01-…``)."""

        secret_type = "Anthropic API Key"
        denylist = (re.compile(r"sk-ant-[a-z]+\d{2}-[A-Za-z0-9_\-]{32,}"),)

    classes: list[Any] = [
        cls
        for cls in get_mapping_from_secret_type_to_class().values()
        if issubclass(cls, RegexBasedDetector) and cls.__name__ not in _EXCLUDED_PLUGINS
    ]
    classes.sort(key=lambda plugin_class: str(plugin_class.__name__))
    classes.append(AnthropicKeyDetector)
    return tuple(plugin_class() for plugin_class in classes)


# Characters ``re.IGNORECASE`` equates with an ASCII letter whose ``str.lower`` is not that
# letter (found by matching every code point against every ASCII letter: the test suite does it
# again): a text holding one may match a case-insensitive literal its lower-cased form lacks.
IGNORECASE_EXTRA = frozenset("\u0130\u0131\u017f")
# Plugins whose own ``analyze_string`` only filters the matches of their patterns (so a line no
# pattern matches yields nothing); any other override is run on every line.
_FILTERING_PLUGINS = frozenset({"JwtTokenDetector"})
# Limits of the literal reading (memtui's choice): alternatives kept per literal set, and their
# length.
_MAX_ALTERNATIVES = 256
_MAX_LITERAL = 64

Literal = tuple[str, bool]  # (text, case-insensitive: lower-cased)
Clause = frozenset[Literal]  # one of these must occur
Need = tuple[Clause, ...]  # all of these clauses (empty: nothing known, always run)


class SecretPrefilter:
    """Which plugins (indexes into ``_plugins()``) may match a text, and on which lines.

    ``needs[i]``: one ``Need`` per pattern of plugin ``i`` (the plugin may match where any of its
    patterns' needs hold); ``None``: always run plugin ``i``."""

    def __init__(self, needs: list[list[Need] | None]) -> None:
        import ahocorasick

        self.needs = needs
        self._exact = ahocorasick.Automaton()
        self._folded = ahocorasick.Automaton()
        self.always = frozenset(i for i, n in enumerate(needs) if n is None or any(not need for need in n))
        literals = {lit for n in needs if n for need in n for clause in need for lit in clause}
        for text, folded in literals:
            (self._folded if folded else self._exact).add_word(text, (text, folded))
        self._has_exact = any(not f for _, f in literals)
        self._has_folded = any(f for _, f in literals)
        if self._has_exact:
            self._exact.make_automaton()
        if self._has_folded:
            self._folded.make_automaton()
        self._folded_all = frozenset(lit for lit in literals if lit[1])
        # literal -> the plugins whose needs mention it (only those are checked on a line)
        lit_plugins: dict[Literal, set[int]] = defaultdict(set)
        for i, n in enumerate(needs):
            for need in n or ():
                for clause in need:
                    for lit in clause:
                        lit_plugins[lit].add(i)
        self._lit_plugins = {lit: frozenset(v) for lit, v in lit_plugins.items()}
        self._folded_plugins = frozenset(i for lit in self._folded_all for i in self._lit_plugins[lit])

    def _holds(self, i: int, found: set[Literal]) -> bool:
        needs = self.needs[i]
        return needs is None or any(all(not clause.isdisjoint(found) for clause in need) for need in needs)

    def marked_lines(self, text: str, lines: list[str]) -> list[tuple[int, list[int]]]:
        """``(line number, plugins)`` for each line of ``lines`` (``text.splitlines()``) where
        some plugin may match, the plugins in order.

        One pass of each automaton over the whole text finds every occurrence of every literal
        (overlapping ones included); an occurrence belongs to the line it starts on (a match
        inside a line holds its literals inside that line). Lower-casing keeps every character's
        place except for ``İ`` (one of ``IGNORECASE_EXTRA``): a text holding one of those has
        every case-insensitive literal on every line."""
        starts: list[int] = []
        pos = 0
        for line in text.splitlines(keepends=True):
            starts.append(pos)
            pos += len(line)
        per_line: dict[int, set[Literal]] = defaultdict(set)
        if self._has_exact:
            for end, lit in self._exact.iter(text):
                per_line[bisect_right(starts, end - len(lit[0]) + 1) - 1].add(lit)
        fold_all = False
        if not self._has_folded:
            pass
        elif IGNORECASE_EXTRA.isdisjoint(text):
            # case-insensitive literals in the lower-cased text (same places)
            for end, lit in self._folded.iter(text.lower()):
                per_line[bisect_right(starts, end - len(lit[0]) + 1) - 1].add(lit)
        else:
            fold_all = True
        lit_plugins = self._lit_plugins
        extra = self._folded_plugins if fold_all else frozenset()
        if self.always or fold_all:
            numbers: Iterable[int] = range(len(lines))
        else:
            numbers = sorted(per_line)
        out: list[tuple[int, list[int]]] = []
        for k in numbers:
            found = per_line.get(k, set())
            if fold_all:
                found = found | self._folded_all
            cands = set(self.always) | extra
            for lit in found:
                cands |= lit_plugins[lit]
            marked = sorted(i for i in cands if i in self.always or self._holds(i, found))
            if marked:
                out.append((k + 1, marked))
        return out

    def possible(self, text: str) -> list[int]:
        """The plugins that may match on some line of ``text``, in plugin order."""
        return sorted({i for _number, marked in self.marked_lines(text, text.splitlines()) for i in marked})

    def on_line(self, line: str, possible: list[int]) -> list[int]:
        """Of ``possible``, the plugins that may match on ``line`` alone, in order."""
        marked = self.marked_lines(line, line.splitlines())
        allowed = set(marked[0][1]) if marked else set()
        return [i for i in possible if i in allowed]


@lru_cache(maxsize=1)
def secret_prefilter() -> SecretPrefilter:
    """The pre-filter of ``_plugins()`` (built once)."""
    from detect_secrets.plugins.base import RegexBasedDetector

    needs: list[list[Need] | None] = []
    for plugin in _plugins():
        cls = type(plugin)
        if cls.analyze_string is not RegexBasedDetector.analyze_string and cls.__name__ not in _FILTERING_PLUGINS:
            needs.append(None)
            continue
        needs.append([pattern_needs(rx) for rx in plugin.denylist])
    return SecretPrefilter(needs)


def pattern_needs(rx: re.Pattern[str]) -> Need:
    """The literals any match of ``rx`` must contain: a conjunction of clauses, each a set of
    alternatives (see the module docstring); ``()`` when none can be read."""
    try:
        from re import _parser as sre_parse  # type: ignore[attr-defined]

        tree = sre_parse.parse(rx.pattern, rx.flags)
    except Exception:  # an unknown construct: nothing can be said, run it everywhere
        return ()
    _exact, clauses = _seq(list(tree), bool(rx.flags & re.IGNORECASE))
    # (dropping a clause only weakens the test: single characters are left out when longer
    # literals are needed too, as they would be found in nearly every text)
    kept = [c for c in dict.fromkeys(clauses) if min(len(t) for t, _ in c) >= 2]
    return tuple(kept or sorted(clauses, key=lambda c: -min(len(t) for t, _ in c))[:1])


def _minimal(clause: set[Literal]) -> Clause:
    """``clause`` without the literals that contain another of it (a text holding the longer
    holds the shorter)."""
    kept: list[Literal] = []
    for text, folded in sorted(clause, key=lambda lit: len(lit[0])):
        if not any(f == folded and k in text for k, f in kept):
            kept.append((text, folded))
    return frozenset(kept)


def _valid(clause: set[Literal]) -> bool:
    return bool(clause) and all(t and (not folded or t.isascii()) for t, folded in clause)


def _seq(items: list[Any], ci: bool) -> tuple[set[Literal] | None, list[Clause]]:
    """(exact set of the sequence or ``None``, required clauses)."""
    clauses: list[Clause] = []
    run: set[Literal] | None = {("", ci)}
    overall: set[Literal] | None = {("", ci)}

    def flush() -> None:
        nonlocal run
        if run is not None and _valid(run):
            clauses.append(_minimal(run))
        run = {("", ci)}

    for item in items:
        exact, sub = _node(item, ci)
        clauses.extend(sub)
        if exact is None:
            flush()
            overall = None
            continue
        joined = _product(run, exact)
        if joined is None:  # too many alternatives: what the run holds so far is one clause
            flush()
            joined = exact if len(exact) <= _MAX_ALTERNATIVES else {("", ci)}
        run = joined
        overall = _product(overall, exact) if overall is not None else None
    flush()
    return overall, clauses


def _product(a: set[Literal] | None, b: set[Literal]) -> set[Literal] | None:
    if a is None or len(a) * len(b) > _MAX_ALTERNATIVES:
        return None
    out = {(x + y, fx or fy) for x, fx in a for y, fy in b}
    if any(len(t) > _MAX_LITERAL for t, _ in out):
        return None
    # a literal mixing case-sensitive and -insensitive parts is kept case-insensitive (lowered)
    return {(t.lower() if f else t, f) for t, f in out}


def _node(node: tuple[Any, Any], ci: bool) -> tuple[set[Literal] | None, list[Clause]]:
    from re import _constants as c  # type: ignore[attr-defined]

    op, av = node
    if op is c.LITERAL:
        ch = chr(av)
        return {(ch.lower() if ci else ch, ci)}, []
    if op is c.IN:
        chars: set[Literal] = set()
        for kind, value in av:
            if kind is c.LITERAL:
                chars.add((chr(value).lower() if ci else chr(value), ci))
            elif kind is c.RANGE and value[1] - value[0] < 16:
                chars.update((chr(v).lower() if ci else chr(v), ci) for v in range(value[0], value[1] + 1))
            else:  # a category, a negation, a wide range
                return None, []
        return chars, []
    if op is c.SUBPATTERN:
        _group, add, delete, sub = av
        inner = (ci or bool(add & re.IGNORECASE)) and not (delete & re.IGNORECASE)
        return _seq(list(sub), inner)
    if op in (c.MAX_REPEAT, c.MIN_REPEAT, getattr(c, "POSSESSIVE_REPEAT", None)):
        low, high, sub = av
        exact, clauses = _seq(list(sub), ci)
        if low == 0:
            return ({("", ci)} | exact if high == 1 and exact is not None else None), []
        if low == high == 1:
            return exact, clauses
        return None, clauses  # at least one copy: its needs hold
    if op is c.BRANCH:
        alts = [_seq(list(alt), ci) for alt in av[1]]
        if all(e is not None for e, _ in alts):
            union: set[Literal] = set().union(*(e for e, _ in alts if e is not None))
            if len(union) <= _MAX_ALTERNATIVES:
                return union, []
        merged: set[Literal] = set()
        for exact, clauses in alts:  # each alternative's strongest clause, joined
            options = [*clauses] + ([_minimal(exact)] if exact is not None and _valid(exact) else [])
            if not options:
                return None, []
            merged |= max(options, key=lambda cl: min(len(t) for t, _ in cl))
        return None, [_minimal(merged)]
    if op is getattr(c, "ATOMIC_GROUP", None):
        return _seq(list(av), ci)
    if op in (c.AT, c.ASSERT, c.ASSERT_NOT):
        return {("", ci)}, []  # consumes nothing
    return None, []  # ANY, NOT_LITERAL, GROUPREF, …: consumes something unknown
