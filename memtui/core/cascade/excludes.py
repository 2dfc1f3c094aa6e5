"""The excludes setting (``agentMdExcludes`` / ``claudeMdExcludes``, docs/behaviour.md §3.1).

A list of globs matched against the file's **absolute** path with ``picomatch`` semantics
and ``dot: true``: ``*`` and ``?`` stay inside one path segment, ``**`` as a whole segment
spans any number of segments, ``[...]`` is a class, ``{a,b}`` expands (``bracex``). It
applies only to User, Project and Local files (and their imports); Managed files, auto
memory and team memory cannot be excluded. The reference merges array settings from every
layer, so the lists of all four settings files are combined.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

import bracex

from memtui.core.base.diagnostics import Diagnostic
from memtui.core.places.settings import SettingsLayers, SettingsSource

EXCLUDABLE_LAYERS = frozenset({"user", "project", "local"})
_SETTINGS_ORDER: tuple[SettingsSource, ...] = ("user", "project", "local", "policy")


def glob_to_regex(pattern: str) -> re.Pattern[str]:
    """Compile one brace-free glob to a regex with picomatch's segment rules (``dot: true``)."""
    out: list[str] = []
    segments = pattern.split("/")
    for index, segment in enumerate(segments):
        last = index == len(segments) - 1
        if segment == "**":
            # ``a/**/b`` matches ``a/b`` too; a trailing ``**`` matches everything below.
            out.append(".*" if last else "(?:[^/]*/)*")
            continue
        out.append(_segment_regex(segment))
        if not last:
            out.append("/")
    return re.compile("".join(out) + r"\Z", re.DOTALL)


def _segment_regex(segment: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(segment):
        ch = segment[i]
        if ch == "*":
            while i + 1 < len(segment) and segment[i + 1] == "*":
                i += 1
            out.append("[^/]*")
        elif ch == "?":
            out.append("[^/]")
        elif ch == "[":
            close = segment.find("]", i + 2)
            if close == -1:
                out.append(re.escape(ch))
            else:
                body = segment[i + 1 : close]
                if body.startswith("!"):
                    body = "^" + body[1:]
                out.append("[" + body.replace("\\", "\\\\") + "]")
                i = close
        else:
            out.append(re.escape(ch))
        i += 1
    return "".join(out)


@dataclass(slots=True)
class ExcludeMatcher:
    """The combined excludes of all settings layers, compiled."""

    patterns: tuple[str, ...] = ()
    compiled: list[tuple[str, re.Pattern[str]]] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)

    @classmethod
    def from_settings(cls, settings: SettingsLayers, key: str, virtual_roots: tuple[str, ...] = ()) -> ExcludeMatcher:
        """Collect ``key`` from every layer (a value that is not a list of strings is
        reported and skipped) and compile each pattern. ``virtual_roots``: names the agent gives
        files that are not on disk (``<personal-cloud-configuration>``): a pattern starting with
        one is matched against those names, so it is not reported as relative."""
        matcher = cls()
        seen: list[str] = []
        for source in _SETTINGS_ORDER:
            value = settings.layers.get(source, {}).get(key)
            if value is None:
                continue
            where = str(settings.paths[source]) if source in settings.paths else None
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                matcher.diagnostics.append(
                    Diagnostic("excludes-invalid", "warning", f"`{key}` must be a list of glob strings; ignored", where)
                )
                continue
            for pattern in value:
                if pattern and pattern not in seen:
                    seen.append(pattern)
                    if not (pattern.startswith("/") or pattern.startswith("**") or pattern.startswith(tuple(f"{r}/" for r in virtual_roots))):
                        matcher.diagnostics.append(
                            Diagnostic(
                                "excludes-pattern-relative",
                                "warning",
                                f"`{key}` pattern {pattern!r} is relative; it is matched against absolute paths, "
                                f"so it never matches (start it with `**/` or `/`)",
                                where,
                            )
                        )
        matcher.patterns = tuple(seen)
        for pattern in seen:
            try:
                expansions = bracex.expand(pattern)
            except (ValueError, RuntimeError):
                expansions = [pattern]
            for expanded in expansions:
                matcher.compiled.append((pattern, glob_to_regex(expanded.replace("\\", "/"))))
        return matcher

    def match(self, path: str | Path) -> str | None:
        """The first pattern matching ``path`` or its realpath, else ``None``."""
        if not self.compiled:
            return None
        candidates = {str(path).replace("\\", "/"), os.path.realpath(path).replace("\\", "/")}
        for pattern, regex in self.compiled:
            if any(regex.match(c) for c in candidates):
                return pattern
        return None
