"""memtui's own sentences: counts that read as English ("1 memory", "2 memories"), and the plain
words for what the agent's feature flags decide (never in text the agent itself words: its
warnings and prompts are quoted as it writes them).

**Plain wording.** A sentence for a person names no internal flag (``tengu_…``), no cache key
(``cachedGrowthBookFeatures``) and no Python module: those go in a separate ``details`` string,
shown on its own muted ``details:`` line (or in a details view). Names a user types — a setting
(``autoDreamEnabled``), a variable they set (``ANTHROPIC_API_KEY``) — may stand in an
instruction ("set autoDreamEnabled: true in ~/.claude/settings.json"). Lengths are said in
characters, never "units" (they are UTF-16 code units: one per character outside the emoji and
other astral planes).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

# The label of the line that carries the internal names behind a plain sentence.
DETAILS = "details"
# What a cached feature flag that is off (false, absent, or never cached) means for a person.
OFF_FOR_YOUR_ACCOUNT = "off for your account"
ON_FOR_YOUR_ACCOUNT = "on for your account"
# A flag of a CLI that holds no flag cache at all: it takes every flag's default (off) until it
# has fetched the flags and saved them, which it does when it starts online. Nothing is known
# then about the account, only about this machine.
OFF_NOTHING_SAVED = "off on this machine: Claude Code has not saved your account's feature settings here, and without them it treats the feature as off"
# What turns such a feature on: a start online saves the settings.
SAVE_BY_STARTING = "start Claude Code online once: it saves your account's feature settings, and the feature is on if Anthropic turned it on for your account"


def off_for(has_cache: bool) -> str:
    """How a feature flag that is not on reads to a person: ``OFF_FOR_YOUR_ACCOUNT`` when the
    CLI holds a flag cache (what it saved for the account), ``OFF_NOTHING_SAVED`` when it holds
    none."""
    return OFF_FOR_YOUR_ACCOUNT if has_cache else OFF_NOTHING_SAVED
# Whether the agent recalls memories for this user, after its name ("Claude Code 2.1.328 …").
RECALLS = "recalls memories for you"
DOES_NOT_RECALL = "does not recall memories for you"
# How the CLI picks up a change of a feature flag: it refreshes its cached flags when it starts
# online (memtui's reading of the flag cache; it is never written by memtui).
ONLY_ANTHROPIC = "only Anthropic can turn it on for your account; Claude Code picks that up when it starts online"


def counted(n: float, singular: str, plural: str | None = None) -> str:
    """``n`` and the noun that agrees with it: ``counted(1, "memory", "memories")`` is
    ``"1 memory"``, ``counted(1200, "file")`` is ``"1,200 files"``. An ``int`` gets thousands
    separators, a ``float`` the shortest form (``2.5``); the singular for exactly 1 (or -1),
    else ``plural`` (default: ``singular`` + ``"s"``)."""
    number = f"{n:,}" if isinstance(n, int) else f"{n:g}"
    word = singular if abs(n) == 1 else (plural if plural is not None else f"{singular}s")
    return f"{number} {word}"


def tilde(path: Path | str, environ: Mapping[str, str] | None = None) -> str:
    """``path`` with the home directory (``$HOME`` of ``environ``, default the process's)
    written ``~``, as a person reads it."""
    text = str(path)
    home = (os.environ if environ is None else environ).get("HOME", "").rstrip("/")
    if home and (text == home or text.startswith(home + "/")):
        return "~" + text[len(home):]
    return text


def details_line(details: str) -> str:
    """``"details: <details>"``, the one form a details line takes (``""`` for no details)."""
    return f"{DETAILS}: {details}" if details else ""


def with_sources(details: str, sources: Sequence[str]) -> str:
    """One details string from ``details`` and the ``sources`` its numbers came from:
    ``"<details>; from <source>; <source>"`` (either part may be empty; ``""`` when both are)."""
    parts = [details] if details else []
    if sources:
        parts.append("from " + "; ".join(sources))
    return "; ".join(parts)


def flag_details(flag: str, value: Any, cached: bool, config: str, cache_key: str, *, has_cache: bool = True) -> str:
    """The details behind a plain "off/on for your account": the flag's name and what the agent's
    global config holds for it. ``value``: the cached value (any JSON); ``cached``: the cache
    holds the flag at all; ``config``: the config file as shown (``~/.claude.json``);
    ``cache_key``: the key of its flag cache; ``has_cache``: the file has that cache at all.

    ``flag tengu_x: true in ~/.claude.json (cachedGrowthBookFeatures)``,
    ``flag tengu_x: not cached in ~/.claude.json (cachedGrowthBookFeatures)``,
    ``flag tengu_x: ~/.claude.json holds no flag cache (cachedGrowthBookFeatures)``."""
    if not has_cache:
        return f"flag {flag}: {config} holds no flag cache ({cache_key})"
    if not cached:
        return f"flag {flag}: not cached in {config} ({cache_key})"
    return f"flag {flag}: {json_value(value)} in {config} ({cache_key})"


def json_value(value: Any) -> str:
    """A setting's or a cached flag's value as JSON (``true``, ``{"enabled": false}``), as a
    person would write it in the file; ``repr`` for anything JSON cannot write."""
    try:
        return json.dumps(value, ensure_ascii=False, sort_keys=False)
    except (TypeError, ValueError):
        return repr(value)
