"""Likely secrets in memory text, found with two maintained rule sets: Yelp's ``detect-secrets``
plugins and the rules of gitleaks' default config.

Memory files are prose read by a model and, for team memory, shared with a whole organisation:
a credential pasted into one leaks to everyone. This module runs, in-process (no subprocess, no
baseline, no network verification), three checks over the text:

1. **detect-secrets' plugins** that match a *known credential format* (AWS, GitHub, GitLab,
   Slack, Stripe, OpenAI, private key blocks, JWTs, URLs with a password, …) plus one for
   Anthropic API keys, which ``detect-secrets`` does not know; line by line.
2. **gitleaks' rules** (``secret_rules/gitleaks.toml``: ``config/gitleaks.toml`` of
   github.com/gitleaks/gitleaks, MIT, vendored byte for byte at ``GITLEAKS_COMMIT``; 216 of its
   222 rules are used): fine-grained GitHub tokens, Google API keys, Hugging Face and
   DigitalOcean tokens and ~200 other formats. Their semantics are gitleaks' own
   (``config/config.go``, ``detect/detect.go``): a rule runs on a text only when the lower-cased
   text holds one of its ``keywords``; its ``regex`` is compiled by RE2 (``google-re2``: Go's
   engine and syntax) and searched over the whole text, so a match may span lines; the secret is the rule's ``secretGroup``, else the
   first non-empty group of the match, else the match; a finding needs the secret's Shannon
   entropy (bits per character, over its UTF-8 length, as gitleaks' ``shannonEntropy``) to be
   *above* the rule's ``entropy``; the global and the rule's allowlists (``regexes`` on the
   secret, the match or the line as ``regexTarget`` says, ``stopwords`` in the lower-cased
   secret, ``condition`` OR / AND) then drop it.
3. **URL credentials**: a URL whose authority holds a password (``scheme://user:pass@host``,
   read with ``urllib.parse.urlsplit``). detect-secrets' ``BasicAuthDetector`` finds most, but
   refuses passwords holding an RFC 3986 sub-delimiter (``!$&'()*+,;=``), which RFC 3986 allows
   there and people use; gitleaks' default config has no URL rule.

Left out on purpose:

- detect-secrets' high-entropy-string and keyword plugins, and gitleaks' ``generic-api-key``
  (any rule whose id names it generic, the test gitleaks' own ``filter`` uses): they key on
  words such as ``key``, ``token``, ``password`` plus entropy, and flag commit hashes, UUIDs and
  sentences such as "password: see the vault", common in memories. The service-specific
  gitleaks rules (``heroku … = <uuid>``) need the service's name beside an assignment and stay.
- detect-secrets' public-IP plugin (an address is not a credential).
- gitleaks rules bound to a file path (``path``: ``*.tf``, ``nuget.config``, Kubernetes YAML,
  PHP, ``.p12``): this scan has text, not a path, and gitleaks' ``DetectString`` skips them
  too. ``skipped_gitleaks_rules()`` names every rule left out and why.
- gitleaks' ``gitleaks:allow`` comment (a scan for leaks into a shared memory must not be
  switched off by the text it scans) and its decoding passes (base64, hex, percent).

**Placeholders** are not secrets: a URL password that gitleaks' ``curl-auth-user`` allowlist
calls a placeholder (``user:pass``, ``user:password…``, ``:changeme``, ``<user>:<pw>``,
``:$VAR``, ``{{ … }}``) or detect-secrets' filters call templated (``{x}``, ``<x>``,
``${x}``, ``$x``) is not reported, so ``https://user:pass@host`` in documentation is quiet.

**Normalisation** first, so simple evasions do not hide a key: characters of Unicode category
Cf (zero-width space, joiners, word joiner, BOM, soft hyphen, bidi controls) are removed; a
backtick becomes a space (a key in Markdown code, or split by one); typographic quotes become
ASCII quotes (``“AIza…”`` ends where ``"AIza…"`` does). No line break is added or removed, so
line numbers are those of the original text.

A finding never carries the secret itself: only its kind, rule name, line, and a mask (its
first characters — at most 4, at most a quarter of it — ``…`` and its length).

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
over the whole plugin set (``tests/core/memory/test_secretscan_prefilter.py``). gitleaks'
keywords go into the same automaton (lower-cased, as gitleaks matches them): the pass that marks
the lines also says which gitleaks rules run.

Time is linear in the length of the text. gitleaks' rules are Go RE2 patterns and run on RE2
itself (``google-re2``), one search of the whole text per rule, as gitleaks runs them: no
backtracking, whatever the text. detect-secrets' patterns (Python ``re``) scan lines in
overlapping windows of bounded size, so no pattern's backtracking grows with the input; a match
up to ``_OVERLAP`` (1,024) characters long lies wholly inside some window.
``benchmarks/secrets_bench.py`` measures the hostile shapes (a base64 blob beside a rule's
keyword, a line of ``curl -u`` repeated…) at three sizes.
"""

from __future__ import annotations

import math
import re
from bisect import bisect_right
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from detect_secrets.plugins.base import RegexBasedDetector

__all__ = ["GitleaksRule", "SecretFinding", "find_secrets", "gitleaks_findings", "gitleaks_rules", "mask", "normalize", "skipped_gitleaks_rules"]

# The vendored gitleaks config: where it came from and its SHA-256 (the test suite checks the
# file against it, so changing the rules changes this module and the doctor's cached findings).
GITLEAKS_TOML = Path(__file__).resolve().parent / "secret_rules" / "gitleaks.toml"
GITLEAKS_COMMIT = "b58d3f102cf3a2c84cb7f923d05c25c9b1aed84b"
GITLEAKS_TOML_SHA256 = "e163e53b9e7e8a8511e77271e2b323ed057759542a6d988258afe3a1fa329caf"

# detect-secrets plugins left out (see the module docstring).
_EXCLUDED_PLUGINS = frozenset({"IPPublicDetector"})
# detect-secrets plugins whose hits are URL credentials (placeholders dropped, see the module
# docstring).
_URL_PLUGINS = frozenset({"BasicAuthDetector"})
# gitleaks' rule whose allowlist names placeholder credentials (``user:password`` forms).
_PLACEHOLDER_RULE = "curl-auth-user"
URL_RULE = "url-password"
URL_KIND = "URL with a password"

# Long lines are scanned by detect-secrets' patterns in overlapping windows. Some backtrack
# quadratically (OpenAI's ``sk-[A-Za-z0-9-_]*…``, npm's ``//.+/:_authToken``): one 240 KB line of
# ``sk-sk-…`` took 148 s whole; in windows the cost is linear. Any secret up to _OVERLAP characters long lies wholly
# inside some window (a JWT, the longest common format, is usually well under 1,000).
_WINDOW = 2048
_OVERLAP = 1024

# Characters removed before matching: Unicode category Cf (format: zero-width space U+200B,
# ZWNJ U+200C, ZWJ U+200D, word joiner U+2060, BOM U+FEFF, soft hyphen U+00AD, bidi controls).
_FORMAT_CHARS = r"\p{Cf}"
# Backticks become spaces; typographic quotes their ASCII forms (one character each: offsets and
# line breaks stay).
_QUOTE_CHARS = "\u2018\u2019\u201a\u201c\u201d\u201e"
_QUOTES = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201a": "'", "\u201c": '"', "\u201d": '"', "\u201e": '"'})
# A URL's scheme and authority (RFC 3986 §3: the authority ends at "/", "?", "#"; here also at
# white space, quotes and angle brackets, which end a URL in prose).
_URL = re.compile(r"(?<![A-Za-z0-9+.-])[A-Za-z][A-Za-z0-9+.-]*://[^\s/?#<>\"]+")


@dataclass(frozen=True, slots=True)
class SecretFinding:
    """One likely secret on 1-based ``line``.

    ``kind``: what it is — detect-secrets' type (``"AWS Access Key"``), gitleaks' rule id
    (``"github-fine-grained-pat"``; gitleaks has no shorter name) or ``"URL with a password"``.
    ``rule``: the rule that found it — detect-secrets' plugin class (``"AWSKeyDetector"``),
    gitleaks' rule id, or ``"url-password"``. ``masked``: the secret's first characters (at
    most 4, at most a quarter of it), ``…`` and its length in characters (``"AKIA… (20 chars)"``). The
    secret itself is deliberately not kept."""

    kind: str
    line: int
    rule: str = ""
    masked: str = ""

    def detail(self) -> str:
        """The rule and the mask: ``"AWSKeyDetector, AKIA…20"``, or ``"ghp_…40"`` when the kind
        is the rule's name."""
        return ", ".join(part for part in (self.rule if self.rule != self.kind else "", self.masked) if part)

    def describe(self) -> str:
        """``"AWS Access Key on line 3 (AWSKeyDetector, AKIA…20)"``, ``"github-pat on line 3
        (ghp_…40)"``."""
        detail = self.detail()
        return f"{self.kind} on line {self.line}" + (f" ({detail})" if detail else "")


@dataclass(frozen=True, slots=True)
class _Hit:
    """A finding before the merge: its place in the normalised text (``None``: unknown) and the
    secret (only ever masked)."""

    line: int
    start: int | None
    end: int | None
    kind: str
    rule: str
    secret: str


def normalize(text: str) -> str:
    """``text`` as the scan reads it: Cf characters removed, backticks as spaces, typographic
    quotes as ASCII quotes (module docstring). Line breaks are kept, so ``str.splitlines``
    numbers the lines as in ``text``."""
    if not text.isascii():
        text = _format_chars().sub("", text)
        if any(q in text for q in _QUOTE_CHARS):
            text = text.translate(_QUOTES)
    return text.replace("`", " ")


@lru_cache(maxsize=1)
def _format_chars() -> Any:
    import regex

    return regex.compile(_FORMAT_CHARS)


def find_secrets(text: str) -> list[SecretFinding]:
    """Every likely secret in ``text``, in line order: one finding per (rule, line), and one per
    secret (where two rules' matches overlap, the first rule's: detect-secrets' plugins, then the
    URL check, then gitleaks' rules in file order).

    ``text`` is the whole file as a string; it is normalised first (``normalize``). Pure and
    thread-safe: the plugins' patterns are run directly, bypassing ``detect-secrets``' global
    settings. Time is linear in the length of ``text`` (module docstring). Only the (line,
    plugin) pairs and the gitleaks rules the literal pre-filter marks are scanned: the result is
    ``find_secrets_line_by_line``'s.
    """
    text = normalize(text)
    lines = text.splitlines()
    starts = _line_starts(text)
    plugins = _plugins()
    marked, keywords = secret_prefilter().scan(text, lines, starts)
    hits: list[_Hit] = []
    for number, indexes in marked:
        hits.extend(_plugin_hits(number, lines[number - 1], starts[number - 1], [plugins[i] for i in indexes]))
    if "://" in text:
        hits.extend(_url_hits(text, lines, starts))
    hits.extend(_gitleaks_hits(text, starts, _rules_for(keywords)))
    return _merge(hits)


def find_secrets_line_by_line(text: str) -> list[SecretFinding]:
    """``find_secrets`` without the pre-filter: every plugin on every line, every gitleaks rule
    whose keyword a plain substring test finds (the reference the pre-filter is tested
    against)."""
    text = normalize(text)
    lines = text.splitlines()
    starts = _line_starts(text)
    plugins = _plugins()
    hits: list[_Hit] = []
    for number, line in enumerate(lines, start=1):
        hits.extend(_plugin_hits(number, line, starts[number - 1], list(plugins)))
    hits.extend(_url_hits(text, lines, starts))
    lowered = _go_lower(text)
    rules = [r for r in gitleaks_rules() if not r.keywords or any(k in lowered for k in r.keywords)]
    hits.extend(_gitleaks_hits(text, starts, rules))
    return _merge(hits)


def gitleaks_findings(text: str, rules: Iterable[GitleaksRule] | None = None) -> list[SecretFinding]:
    """The findings of gitleaks' rules alone (default: every rule used) on ``text``, normalised:
    what gitleaks' detector built from those rules reports (a rule runs when ``text`` holds one
    of its keywords), in line order, one per (rule, line); no merging with the other checks."""
    text = normalize(text)
    lowered = _go_lower(text)
    chosen = [r for r in (gitleaks_rules() if rules is None else rules) if not r.keywords or any(k in lowered for k in r.keywords)]
    hits = sorted(_gitleaks_hits(text, _line_starts(text), chosen), key=lambda h: h.line)
    out: list[SecretFinding] = []
    seen: set[tuple[str, int]] = set()
    for hit in hits:
        if (hit.rule, hit.line) not in seen:
            seen.add((hit.rule, hit.line))
            out.append(SecretFinding(hit.kind, hit.line, hit.rule, mask(hit.secret)))
    return out


def _merge(hits: list[_Hit]) -> list[SecretFinding]:
    """Findings in line order (stable), one per (rule, line), none overlapping an earlier kept
    one."""
    kept_starts: list[int] = []  # the kept spans, sorted and disjoint: starts and ends
    kept_ends: list[int] = []
    seen: set[tuple[str, int]] = set()
    out: list[SecretFinding] = []
    for hit in sorted(hits, key=lambda h: h.line):
        if (hit.rule, hit.line) in seen or _placeholder_secret(hit.secret):
            continue
        if hit.start is not None and hit.end is not None:
            i = bisect_right(kept_starts, hit.start)
            if (i > 0 and kept_ends[i - 1] > hit.start) or (i < len(kept_starts) and kept_starts[i] < hit.end):
                continue
            kept_starts.insert(i, hit.start)
            kept_ends.insert(i, hit.end)
        seen.add((hit.rule, hit.line))
        out.append(SecretFinding(hit.kind, hit.line, hit.rule, mask(hit.secret)))
    return out


def _placeholder_secret(secret: str) -> bool:
    """Whether a matched secret is a placeholder written in its format: half of it or more one
    run of a single character (``ghp_xxxxxxxx…``, ``AKIAXXXXXXXXXXXXXXXX``, ``sk_live_000…``).
    A real key is random: no character repeats that long."""
    longest = run = 0
    previous = ""
    for ch in secret:
        run = run + 1 if ch == previous else 1
        previous = ch
        longest = max(longest, run)
    return len(secret) >= 8 and longest * 2 >= len(secret)


def mask(secret: str) -> str:
    """``secret``'s first characters (at most 4 and at most a quarter of it), ``…``, and its
    length in characters: ``mask("AKIAIOSFODNN7EXAMPLE") == "AKIA… (20 chars)"``."""
    return f"{secret[: min(4, len(secret) // 4)]}… ({len(secret)} chars)"


def _line_starts(text: str) -> list[int]:
    """The offset of each line of ``text.splitlines()`` (and one past the end)."""
    starts = [0]
    for line in text.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))
    return starts


def _go_lower(text: str) -> str:
    """``text`` lower-cased as Go's ``strings.ToLower`` does it, one character for one: Python
    lower-cases ``İ`` to two characters, Go to ``i``."""
    return text.replace("\u0130", "i").lower()


def _windows(line: str) -> Iterator[tuple[int, str]]:
    """``(offset, chunk)``: ``line`` itself when short, else windows of ``_WINDOW`` characters
    overlapping by ``_OVERLAP``."""
    if len(line) <= _WINDOW:
        yield 0, line
        return
    step = _WINDOW - _OVERLAP
    for start in range(0, len(line) - _OVERLAP, step):
        yield start, line[start : start + _WINDOW]


# --- detect-secrets -----------------------------------------------------------------------------


def _plugin_hits(number: int, line: str, line_start: int, plugins: list[Any]) -> list[_Hit]:
    """The hits of ``plugins`` on one line (``line_start``: its offset in the text)."""
    hits: list[_Hit] = []
    for offset, chunk in _windows(line):
        for plugin in plugins:
            name = type(plugin).__name__
            for span, matched, secret in _plugin_matches(plugin, chunk):
                if name in _URL_PLUGINS and _placeholder_url(matched.strip(":/@")):
                    continue
                start = None if span is None else line_start + offset + span
                hits.append(_Hit(number, start, None if start is None else start + len(matched), str(plugin.secret_type), name, secret))
    return hits


def _plugin_matches(plugin: Any, chunk: str) -> Iterator[tuple[int | None, str, str]]:
    """``(start, matched text, secret)`` for each match of ``plugin`` that its
    ``analyze_string`` reports on ``chunk``. The secret to mask is the first value it yields (a
    capture group, or the match) of 8 characters or more, else the whole match (GitHub's
    pattern yields only its prefix, ``ghp``).

    ``RegexBasedDetector.analyze_string`` yields ``findall``'s items (the non-empty groups of a
    tuple); JWTs must also be formally valid (``JwtTokenDetector.is_formally_valid``). A plugin
    overriding ``analyze_string`` otherwise is asked itself (start unknown)."""
    if _asks_itself(type(plugin)):
        for value in plugin.analyze_string(chunk):
            if value:
                yield None, value, value
        return
    valid = getattr(plugin, "is_formally_valid", None)
    for rx in plugin.denylist:
        for m in rx.finditer(chunk):
            if rx.groups == 0:
                values = [m.group(0)]
            elif rx.groups == 1:
                values = [m.group(1) or ""]
            else:
                values = [v for v in m.groups() if v]
            if valid is not None:
                values = [v for v in values if valid(v)]
            if any(values):
                yield m.start(), m.group(0), next((v for v in values if len(v) >= 8), m.group(0))


@lru_cache(maxsize=None)
def _asks_itself(cls: type) -> bool:
    """Whether plugin class ``cls`` overrides ``analyze_string`` other than by filtering its
    patterns' matches (its hits then come from it, without a place)."""
    from detect_secrets.plugins.base import RegexBasedDetector

    return cls.analyze_string is not RegexBasedDetector.analyze_string and cls.__name__ not in _FILTERING_PLUGINS  # type: ignore[attr-defined]


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


# --- URL credentials ----------------------------------------------------------------------------


def _url_hits(text: str, lines: list[str], starts: list[int]) -> list[_Hit]:
    """URLs whose authority holds a password that is no placeholder."""
    from urllib.parse import urlsplit

    hits: list[_Hit] = []
    for number, line in enumerate(lines, start=1):
        if "://" not in line or "@" not in line:
            continue
        for offset, chunk in _windows(line):
            for m in _URL.finditer(chunk):
                try:
                    parts = urlsplit(m.group(0))
                    password, host = parts.password, parts.hostname
                except ValueError:  # a malformed authority (an unclosed "[")
                    continue
                if not password or not host or _placeholder_url(f"{parts.username}:{password}"):
                    continue
                start = starts[number - 1] + offset + m.start()
                hits.append(_Hit(number, start, start + len(m.group(0)), URL_KIND, URL_RULE, password))
    return hits


def _placeholder_url(userinfo: str) -> bool:
    """Whether ``user:password`` is a placeholder: gitleaks' ``curl-auth-user`` allowlist or
    its global allowlist allows it, or detect-secrets' filters call the password templated
    (``{x}``, ``<x>``, ``${x}``) or a variable (``$x``). An empty user name is read as ``_``
    (the allowlist's ``[^:]+:`` wants one character)."""
    from detect_secrets.filters.heuristic import is_prefixed_with_dollar_sign, is_templated_secret

    user, _, password = userinfo.partition(":")
    if is_templated_secret(password) or is_prefixed_with_dollar_sign(password):
        return True
    config = _gitleaks()
    target = f"{user or '_'}:{password}"
    return any(a.allows(target, target, target) for a in config.placeholder) or any(a.allows(password, password, password) for a in config.allowlists)


# --- gitleaks -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Allowlist:
    """One gitleaks allowlist (``config/allowlist.go``) as it applies to text without a path or
    commit: ``regexes`` (joined into one, as gitleaks' ``joinRegexOr`` does) on the target,
    ``stopwords`` in the lower-cased secret; ``condition`` AND also needs its paths and commits,
    which a text never meets."""

    pattern: str | None
    target: str  # "secret", "match" or "line"
    stopwords: tuple[str, ...]
    all_of: bool
    has_path_or_commit: bool

    def allows(self, secret: str, match: str, line: str) -> bool:
        target = {"match": match, "line": line}.get(self.target, secret)
        regex_ok = False
        if self.pattern is not None and target:
            m = _compile(self.pattern).search(target)
            regex_ok = m is not None and m.group() != ""  # gitleaks: FindString(f) != ""
        lowered = secret.lower()
        stop_ok = bool(secret) and any(w in lowered for w in self.stopwords)
        if not self.all_of:
            return regex_ok or stop_ok
        checks = [False] * self.has_path_or_commit + [regex_ok] * (self.pattern is not None) + [stop_ok] * bool(self.stopwords)
        return all(checks)


@dataclass(frozen=True, slots=True)
class GitleaksRule:
    """One rule of the vendored gitleaks config: ``id``, ``pattern`` (RE2 syntax; ``regex`` is
    it compiled by RE2 on first use, ``_compile``), ``keywords``
    (lower-cased), ``secret_group`` (0: the first non-empty group), ``entropy`` (bits per
    character; 0: none), ``allowlists``."""

    id: str
    pattern: str
    keywords: frozenset[str]
    secret_group: int
    entropy: float
    allowlists: tuple[_Allowlist, ...]

    @property
    def regex(self) -> Any:
        """``pattern`` compiled by RE2 (cached; ``re2.error`` if it does not compile)."""
        return _compile(self.pattern)

    def secret_of(self, match: str) -> str:
        """gitleaks' secret of a match (``detect.go``): the regex is run again on the match,
        and its ``secretGroup`` — else its first non-empty group — is the secret."""
        m = self.regex.search(match)
        if m is None or self.regex.groups == 0:
            return match
        if self.secret_group > 0:
            return (m.group(self.secret_group) or "") if self.secret_group <= self.regex.groups else match
        return next((g for g in m.groups() if g), match)


@dataclass(frozen=True, slots=True)
class _GitleaksConfig:
    rules: tuple[GitleaksRule, ...]
    allowlists: tuple[_Allowlist, ...]  # global
    placeholder: tuple[_Allowlist, ...]  # the curl-auth-user rule's
    skipped: dict[str, str]


def gitleaks_rules() -> tuple[GitleaksRule, ...]:
    """The gitleaks rules this scan runs, in the config's order (read once)."""
    return _gitleaks().rules


@lru_cache(maxsize=1)
def _rules_by_keyword() -> tuple[dict[str, tuple[int, ...]], tuple[int, ...]]:
    """keyword -> the indexes of the rules it runs; the rules without keywords (always run)."""
    by_keyword: dict[str, list[int]] = defaultdict(list)
    for i, rule in enumerate(gitleaks_rules()):
        for keyword in rule.keywords:
            by_keyword[keyword].append(i)
    always = tuple(i for i, rule in enumerate(gitleaks_rules()) if not rule.keywords)
    return {k: tuple(v) for k, v in by_keyword.items()}, always


def _rules_for(keywords: Iterable[str]) -> list[GitleaksRule]:
    """The rules a text holding ``keywords`` runs, in the config's order."""
    by_keyword, always = _rules_by_keyword()
    chosen = set(always)
    for keyword in keywords:
        chosen.update(by_keyword.get(keyword, ()))
    rules = gitleaks_rules()
    return [rules[i] for i in sorted(chosen)]


def shannon_entropy(data: str) -> float:
    """gitleaks' ``shannonEntropy`` (``detect/utils.go``): −Σ p·log₂ p over the characters of
    ``data``, each p its count divided by the UTF-8 length of ``data`` in bytes; 0 for ``""``."""
    if not data:
        return 0.0
    size = len(data.encode("utf-8", "surrogatepass"))
    return -sum((n / size) * math.log2(n / size) for n in Counter(data).values())


@lru_cache(maxsize=None)
def _compile(pattern: str) -> Any:
    """A gitleaks (Go RE2) pattern compiled by RE2 itself (``google-re2``): Go's syntax and
    semantics, and time linear in the text whatever the pattern (no backtracking). Raises
    ``re2.error`` (such a rule is skipped, ``skipped_gitleaks_rules``)."""
    import re2

    return re2.compile(pattern)


def _allowlist(spec: dict[str, Any]) -> _Allowlist:
    patterns = spec.get("regexes") or []
    return _Allowlist(
        pattern="(?:" + "|".join(patterns) + ")" if patterns else None,
        target=spec.get("regexTarget") or "secret",
        stopwords=tuple(sorted({w.lower() for w in spec.get("stopwords") or ()})),
        all_of=str(spec.get("condition", "")).upper() in ("AND", "&&"),
        has_path_or_commit=bool(spec.get("paths") or spec.get("commits")),
    )


@lru_cache(maxsize=1)
def _gitleaks() -> _GitleaksConfig:
    """The vendored config, read once: the rules used, the global allowlists, and
    ``skipped_gitleaks_rules``' reasons."""
    import tomllib

    data = tomllib.loads(GITLEAKS_TOML.read_text(encoding="utf-8"))
    global_specs = ([data["allowlist"]] if "allowlist" in data else []) + list(data.get("allowlists", []))
    targeted: dict[str, list[dict[str, Any]]] = defaultdict(list)
    global_lists: list[_Allowlist] = []
    for spec in global_specs:
        if spec.get("targetRules"):
            for rule_id in spec["targetRules"]:
                targeted[rule_id].append(spec)
        elif spec.get("regexes") or spec.get("stopwords"):  # paths and commits never apply here
            global_lists.append(_allowlist(spec))
    rules: list[GitleaksRule] = []
    skipped: dict[str, str] = {}
    placeholder: tuple[_Allowlist, ...] = ()
    for spec in data["rules"]:
        rule_id = spec["id"]
        allow_specs = ([spec["allowlist"]] if "allowlist" in spec else []) + list(spec.get("allowlists", [])) + targeted[rule_id]
        if rule_id == _PLACEHOLDER_RULE:
            placeholder = tuple(_allowlist(a) for a in allow_specs)
        if "generic" in rule_id.lower():
            skipped[rule_id] = "generic: keyed on words such as key, token, password plus entropy (module docstring)"
            continue
        if spec.get("path"):
            skipped[rule_id] = f"bound to file paths matching {spec['path']!r}: a scan of text has no path"
            continue
        if not spec.get("regex"):
            skipped[rule_id] = "no regex"
            continue
        allowlists = tuple(_allowlist(a) for a in allow_specs)
        rules.append(
            GitleaksRule(
                id=rule_id,
                pattern=spec["regex"],
                keywords=frozenset(k.lower() for k in spec.get("keywords") or ()),
                secret_group=int(spec.get("secretGroup", 0)),
                entropy=float(spec.get("entropy", 0.0)),
                allowlists=allowlists,
            )
        )
    return _GitleaksConfig(tuple(rules), tuple(global_lists), placeholder, skipped)


def skipped_gitleaks_rules() -> dict[str, str]:
    """The rules of the vendored config this scan does not run, each with the reason (compiles
    every rule: one whose pattern or allowlist RE2 rejects is skipped)."""
    skipped = dict(_gitleaks().skipped)
    for rule in _gitleaks().rules:
        if (error := _compile_error(rule)) is not None:
            skipped[rule.id] = f"does not compile: {error}"
    return skipped


@lru_cache(maxsize=None)
def _compile_error(rule: GitleaksRule) -> str | None:
    """Why ``rule``'s pattern or one of its allowlists' does not compile (``None``: they do)."""
    try:
        for pattern in (rule.pattern, *(a.pattern for a in rule.allowlists if a.pattern is not None)):
            _compile(pattern)
    except Exception as exc:  # re2.error: a construct RE2 does not read
        return str(exc)
    return None


def _gitleaks_hits(text: str, starts: list[int], rules: list[GitleaksRule]) -> list[_Hit]:
    """The findings of ``rules`` over the whole ``text``, with gitleaks' semantics (module
    docstring): each rule's matches, its secret, entropy and allowlists."""
    if not rules:
        return []
    config = _gitleaks()
    hits: list[_Hit] = []
    for rule in rules:
        if _compile_error(rule) is not None:
            continue
        for m in rule.regex.finditer(text):  # one linear search of the whole text, as gitleaks does
            match = m.group().strip("\n")
            if not match:
                continue
            begin = m.start() + (len(m.group()) - len(m.group().lstrip("\n")))
            secret = rule.secret_of(match)
            if rule.entropy and shannon_entropy(secret) <= rule.entropy:
                continue
            number = bisect_right(starts, begin)
            line_end = starts[min(bisect_right(starts, begin + len(match) - 1), len(starts) - 1)]
            line = text[starts[number - 1] : line_end].rstrip("\r\n")
            if any(a.allows(secret, match, line) for a in config.allowlists + rule.allowlists):
                continue
            hits.append(_Hit(number, begin, begin + len(match), rule.id, rule.id, secret))
    return hits


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
    """Which plugins (indexes into ``_plugins()``) may match a text, and on which lines; which
    gitleaks keywords it holds.

    ``needs[i]``: one ``Need`` per pattern of plugin ``i`` (the plugin may match where any of its
    patterns' needs hold); ``None``: always run plugin ``i``. ``keywords``: gitleaks' keywords
    (lower-cased), looked up in the same automaton as the case-insensitive literals."""

    def __init__(self, needs: list[list[Need] | None], keywords: Iterable[str] = ()) -> None:
        import ahocorasick

        self.needs = needs
        self.keywords = frozenset(keywords)
        self._exact = ahocorasick.Automaton()
        self._folded = ahocorasick.Automaton()
        self.always = frozenset(i for i, n in enumerate(needs) if n is None or any(not need for need in n))
        literals = {lit for n in needs if n for need in n for clause in need for lit in clause}
        # automaton value: (literal, whether a plugin needs it, whether it is a keyword)
        for text, folded in literals:
            (self._folded if folded else self._exact).add_word(text, ((text, folded), True, folded and text in self.keywords))
        for keyword in self.keywords - {text for text, folded in literals if folded}:
            self._folded.add_word(keyword, ((keyword, True), False, True))
        self._has_exact = any(not f for _, f in literals)
        self._has_folded = any(f for _, f in literals) or bool(self.keywords)
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
        some plugin may match, the plugins in order (``scan``'s first half)."""
        return self.scan(text, lines)[0]

    def scan(self, text: str, lines: list[str], starts: list[int] | None = None) -> tuple[list[tuple[int, list[int]]], frozenset[str]]:
        """``marked_lines`` and the gitleaks keywords ``text`` holds, from one pass of each
        automaton.

        One pass of each automaton over the whole text finds every occurrence of every literal
        (overlapping ones included); an occurrence belongs to the line it starts on (a match
        inside a line holds its literals inside that line). Case-insensitive literals and
        keywords are looked up in the text lower-cased as Go does it (``İ`` → ``i``, one
        character for one, so every character keeps its place). A text holding one of
        ``IGNORECASE_EXTRA`` has every case-insensitive literal on every line (module
        docstring); its keywords are still exactly those of its lower-cased form, as gitleaks
        finds them. ``starts``: ``_line_starts(text)``, when the caller has it."""
        if starts is None:
            starts = _line_starts(text)
        per_line: dict[int, set[Literal]] = defaultdict(set)
        if self._has_exact:
            for end, (lit, _needed, _keyword) in self._exact.iter(text):
                per_line[bisect_right(starts, end - len(lit[0]) + 1) - 1].add(lit)
        keywords: set[str] = set()
        fold_all = not IGNORECASE_EXTRA.isdisjoint(text)
        if self._has_folded:
            for end, (lit, needed, keyword) in self._folded.iter(_go_lower(text)):
                if keyword:
                    keywords.add(lit[0])
                if needed and not fold_all:
                    per_line[bisect_right(starts, end - len(lit[0]) + 1) - 1].add(lit)
        fold_all = fold_all and bool(self._folded_all)
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
        return out, frozenset(keywords)

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
    """The pre-filter of ``_plugins()`` and of the gitleaks rules' keywords (built once)."""
    from detect_secrets.plugins.base import RegexBasedDetector

    needs: list[list[Need] | None] = []
    for plugin in _plugins():
        cls = type(plugin)
        if cls.analyze_string is not RegexBasedDetector.analyze_string and cls.__name__ not in _FILTERING_PLUGINS:
            needs.append(None)
            continue
        needs.append([pattern_needs(rx) for rx in plugin.denylist])
    return SecretPrefilter(needs, {k for rule in gitleaks_rules() for k in rule.keywords})


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
