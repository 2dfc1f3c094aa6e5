"""Rules: ``.agent/rules/**/*.md`` discovery and conditional ``paths:`` (docs/behaviour.md §3.1, §3.4).

``paths`` may be a YAML list or a comma-separated string (commas inside ``{}`` do not split);
each pattern is brace-expanded (``bracex``), a trailing ``/**`` dropped, empties dropped. No
pattern left, or all ``**``: the rule is unconditional. Matching has gitignore semantics and
is case-insensitive (the reference uses the ``ignore`` package, whose default is
``ignorecase``): ``pathspec.GitIgnoreSpec`` over lower-cased patterns and paths.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import bracex
from pathspec import GitIgnoreSpec

from memtui.core.base.diagnostics import Diagnostic
from memtui.core.places.behaviour import RuleOrder

RULE_SUFFIX = ".md"  # case-sensitive, like the reference's ``name.endsWith('.md')``


def split_paths(value: Any) -> list[str]:
    """The reference's ``splitPathInFrontmatter``: lists flatten, strings split on commas
    outside braces, parts trimmed, each part brace-expanded; anything else gives ``[]``."""
    if isinstance(value, list):
        return [p for item in value for p in split_paths(item)]
    if not isinstance(value, str):
        return []
    parts: list[str] = []
    current = ""
    depth = 0
    for ch in value:
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
        elif ch == "," and depth == 0:
            if current.strip():
                parts.append(current.strip())
            current = ""
            continue
        current += ch
    if current.strip():
        parts.append(current.strip())
    expanded: list[str] = []
    for part in parts:
        try:
            expanded.extend(bracex.expand(part))
        except (ValueError, RuntimeError):  # bracex refuses runaway expansions
            expanded.append(part)
    return expanded


# Keys other tools use for a rule's file patterns; the agent reads only ``paths:`` (Claude Code
# 2.1.328 too: a rule with ``globs:`` loads unconditionally).
IGNORED_PATH_KEYS = ("globs", "glob", "scope", "applies_to")


def ignored_path_keys(data: dict[str, Any]) -> list[str]:
    """The keys of ``IGNORED_PATH_KEYS`` in a frontmatter mapping that has no ``paths:``."""
    if "paths" in data:
        return []
    return [k for k in IGNORED_PATH_KEYS if k in data and data[k] not in (None, "", [])]


def suggested_paths(value: Any) -> str:
    """``paths:`` written for ``value`` (a string or a list of strings) as a YAML block list
    with each pattern quoted."""
    items = split_paths(value) if isinstance(value, (str, list)) else []
    if not items:
        return "paths:"
    quoted = "".join(f'\n  - "{p}"' for p in items)
    return f"paths:{quoted}"


def brace_split(value: Any) -> list[tuple[str, list[str]]]:
    """Brace globs a YAML flow list cut at their commas (``paths: [src/**/*.{js,ts}]`` is the
    list ``src/**/*.{js``, ``ts}``): each as ``(glob rejoined, the pieces)``. ``[]`` when the
    value is not a list or no item opens a brace it does not close."""
    if not isinstance(value, list):
        return []
    out: list[tuple[str, list[str]]] = []
    items = [str(v) for v in value if isinstance(v, str)]
    i = 0
    while i < len(items):
        depth = items[i].count("{") - items[i].count("}")
        if depth <= 0:
            i += 1
            continue
        pieces = [items[i]]
        j = i + 1
        while j < len(items) and depth > 0:
            pieces.append(items[j])
            depth += items[j].count("{") - items[j].count("}")
            j += 1
        if depth == 0:
            out.append((",".join(pieces), pieces))
        i = j
    return out


_FLOW_PATHS = re.compile(r"^paths:[ \t]*\[(?P<items>.*)\][ \t]*$", re.MULTILINE)
_BRACE_GLOB = re.compile(r"""[^\s,\[\]"']*\{[^{}"']*,[^{}"']*\}[^\s,\[\]"']*""")


def flow_list_braces(raw: str, patterns: Sequence[str] | None) -> list[tuple[str, list[str]]]:
    """Unquoted brace globs with commas inside a ``paths: [...]`` flow list of the raw
    frontmatter ``raw`` (YAML cannot read them as one item: the list is cut at the commas, or
    the line fails and the quoting retry reads the whole ``[...]`` as one string), each with
    the patterns the agent ended up with (``patterns``)."""
    m = _FLOW_PATHS.search(raw)
    if m is None:
        return []
    items = m.group("items")
    return [(g.group(0), list(patterns or ())) for g in _BRACE_GLOB.finditer(items) if items[g.start() - 1 : g.start()] not in ('"', "'")]


@dataclass(frozen=True, slots=True)
class RulePaths:
    """A file's ``paths:`` as the agent reads it. ``patterns`` is ``None`` for an
    unconditional file; ``problem`` is ``(code, sentence)`` when ``paths`` is present but
    does not make the file conditional, else ``None``."""

    patterns: tuple[str, ...] | None
    problem: tuple[str, str] | None = None


def rule_paths(data: dict[str, Any]) -> RulePaths:
    """The globs of a frontmatter mapping ``data`` (the reference's ``parseFrontmatterPaths``)."""
    if "paths" not in data:
        return RulePaths(None)
    value = data["paths"]
    if not value:  # None, "", [] — JavaScript falsy ([] is truthy there but yields no patterns)
        return RulePaths(None, ("paths-empty", f"`paths: {_show(value)}` has no patterns, so the rule is unconditional (loads everywhere)"))
    patterns = [p[:-3] if p.endswith("/**") else p for p in split_paths(value)]
    patterns = [p for p in patterns if p]
    if not patterns:
        return RulePaths(None, ("paths-empty", f"`paths: {_show(value)}` leaves no usable pattern, so the rule is unconditional"))
    if all(p == "**" for p in patterns):
        return RulePaths(None, ("paths-match-all", "`paths` only holds `**`, which the agent treats as unconditional"))
    return RulePaths(tuple(patterns))


def _show(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, list):
        return "[]" if not value else str(value)
    return repr(value)


@dataclass(frozen=True, slots=True)
class RuleMatcher:
    """A compiled, case-insensitive gitignore matcher for one rule's patterns."""

    patterns: tuple[str, ...]
    spec: GitIgnoreSpec

    @classmethod
    def compile(cls, patterns: Sequence[str]) -> RuleMatcher:
        """Compile ``patterns`` (lower-cased: the reference matches case-insensitively).
        Compiled matchers are shared (a rules dir is matched again on every read)."""
        return _compile(tuple(patterns))

    def matches(self, target: Path, base: Path) -> bool:
        """``target`` (absolute, normalised) relative to ``base`` matches; a target outside
        ``base`` — or a relative path starting with ``..``, like the reference's check —
        never matches."""
        rel = relative_to(target, base)
        if not rel or rel.startswith(".."):
            return False
        return self.spec.match_file(rel.replace(os.sep, "/").lower())


def relative_to(target: Path | str, base: Path | str) -> str | None:
    """``target`` relative to ``base`` for normalised absolute paths, ``None`` when outside
    (``""`` when equal)."""
    t, b = str(target), str(base).rstrip(os.sep)
    if t == b:
        return ""
    prefix = b + os.sep
    return t[len(prefix) :] if t.startswith(prefix) else None


@functools.lru_cache(maxsize=4096)
def _compile(patterns: tuple[str, ...]) -> RuleMatcher:
    return RuleMatcher(patterns, GitIgnoreSpec.from_lines([p.lower() for p in patterns]))


@dataclass(slots=True)
class RuleListing:
    """Rule files under one rules dir in processing order (realpaths, as the reference
    passes them on), plus findings (symlink loops, ignored names, unreadable dirs)."""

    files: list[Path] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)


def list_rule_files(rules_dir: Path, order: RuleOrder = "sorted") -> RuleListing:
    """Walk ``rules_dir`` recursively like the reference's ``processMdRules``.

    Follows symlinked directories, remembering each directory's raw path and realpath so
    loops terminate; names must end in ``.md`` (case-sensitive). ``order``: ``sorted`` takes
    each directory's entries by name (the seed design's stable display); ``directory`` takes
    them in the order the directory lists them (what ``readdir`` returns, as Claude Code
    does), a sub-folder walked where it appears. Never raises.
    """
    listing = RuleListing()
    visited: set[str] = set()
    _walk(rules_dir, visited, listing, order)
    return listing


def _walk(directory: Path, visited: set[str], listing: RuleListing, order: RuleOrder) -> None:
    key = str(directory)
    if key in visited:
        listing.diagnostics.append(
            Diagnostic("rules-symlink-loop", "info", f"{directory} was already visited (a symlink loop); not entered again", key)
        )
        return
    real = os.path.realpath(directory)
    visited.add(key)
    if real != key:
        visited.add(real)
    try:
        with os.scandir(real) as it:
            entries = list(it)
        if order == "sorted":
            entries.sort(key=lambda e: e.name)
    except FileNotFoundError:
        return
    except NotADirectoryError:
        return
    except OSError as exc:
        listing.diagnostics.append(
            Diagnostic("rules-unreadable", "warning", f"cannot list rules directory: {exc.strerror}; its rules are skipped", key)
        )
        return
    for entry in entries:
        entry_path = directory / entry.name
        try:
            is_link = entry.is_symlink()
            # Entries of the (real) directory: only a symlink needs a full realpath.
            resolved = os.path.realpath(entry_path) if is_link else os.path.join(real, entry.name)
            is_dir = os.path.isdir(resolved) if is_link else entry.is_dir(follow_symlinks=False)
            is_file = os.path.isfile(resolved) if is_link else entry.is_file(follow_symlinks=False)
        except OSError:
            continue
        if is_dir:
            _walk(Path(resolved), visited, listing, order)
        elif is_file and entry.name.endswith(RULE_SUFFIX):
            listing.files.append(Path(resolved))
        elif is_file and entry.name.lower().endswith(RULE_SUFFIX):
            listing.diagnostics.append(
                Diagnostic(
                    "rule-name-case",
                    "warning",
                    f"`{entry.name}` is ignored: rule names must end in `.md` (lower case)",
                    str(entry_path),
                )
            )
