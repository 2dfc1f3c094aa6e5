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
"""

from __future__ import annotations

import re
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
    length of ``text`` (lines over 2,048 characters are scanned in overlapping windows).
    """
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
