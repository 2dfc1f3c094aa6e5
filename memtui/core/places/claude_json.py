"""Claude Code's global config ``~/.claude.json`` (``$CLAUDE_CONFIG_DIR/.claude.json`` when that
is set), read only: the feature-flag cache the CLI keeps there (``cachedGrowthBookFeatures``),
which decides whether its dream and its extraction run at all.

The CLI rewrites the file often and it can hold megabytes of per-project history; it is read
through ``safe_read`` (a FIFO or a device there is refused, never a hang), at most
``MAX_CONFIG_BYTES``, and parsed once per (mtime, size).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memtui.core.base.diagnostics import Diagnostic
from memtui.core.base.jsontext import loads_checked
from memtui.core.base.safe_read import read_regular
from memtui.core.places.flavor import home_dir

CONFIG_NAME = ".claude.json"
# The key of the flag cache: the features the CLI fetched last, as it keeps them on disk.
FLAG_CACHE_KEY = "cachedGrowthBookFeatures"
# memtui's bound on the file (a long-used config is a few MB).
MAX_CONFIG_BYTES = 64 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class GlobalConfig:
    """The config as read: ``path``, ``exists``, the parsed object (``{}`` when absent or
    unusable), ``mtime`` (epoch s or ``None``) and a diagnostic when it could not be used."""

    path: Path
    exists: bool
    data: Mapping[str, Any] = field(default_factory=dict)
    mtime: float | None = None
    diagnostic: Diagnostic | None = None

    @property
    def flag_cache(self) -> Mapping[str, Any] | None:
        """``cachedGrowthBookFeatures``, or ``None`` when the file has none (the CLI then uses
        each flag's default)."""
        value = self.data.get(FLAG_CACHE_KEY)
        return value if isinstance(value, dict) else None

    def flag(self, name: str) -> tuple[Any, bool]:
        """``(value, cached)``: the cached value of feature flag ``name`` and whether the cache
        holds it at all."""
        cache = self.flag_cache
        if cache is None or name not in cache:
            return None, False
        return cache[name], True


def global_config_path(environ: Mapping[str, str] | None = None) -> Path:
    """``$CLAUDE_CONFIG_DIR/.claude.json`` else ``$HOME/.claude.json``."""
    env = os.environ if environ is None else environ
    base = env.get("CLAUDE_CONFIG_DIR")
    return (Path(base) if base else home_dir(env)) / CONFIG_NAME


_CACHE: dict[Path, tuple[tuple[float, int], GlobalConfig]] = {}


def read_global_config(environ: Mapping[str, str] | None = None) -> GlobalConfig:
    """Read the global config. Never raises: a missing file is ``exists=False``; one that
    cannot be read or is not a JSON object carries a ``claude-json-unreadable`` diagnostic."""
    path = global_config_path(environ)
    try:
        st = path.stat()
    except OSError:
        return GlobalConfig(path, False)
    key = (st.st_mtime, st.st_size)
    hit = _CACHE.get(path)
    if hit is not None and hit[0] == key:
        return hit[1]
    try:
        raw, _ = read_regular(path, MAX_CONFIG_BYTES)
        data = loads_checked(raw.decode("utf-8-sig"))  # NaN, or nesting past MAX_JSON_DEPTH: JSONInputError
    except (OSError, ValueError) as exc:  # ValueError: JSONInputError, UnicodeDecodeError
        reason = getattr(exc, "strerror", None) or str(exc)[:200]
        config = GlobalConfig(path, True, {}, st.st_mtime, Diagnostic("claude-json-unreadable", "warning", f"cannot read Claude Code's config ({reason}): its trust records, approval flags and cached feature flags are unknown", str(path)))
    else:
        if isinstance(data, dict):
            config = GlobalConfig(path, True, data, st.st_mtime)
        else:
            config = GlobalConfig(path, True, {}, st.st_mtime, Diagnostic("claude-json-unreadable", "warning", "Claude Code's config is not a JSON object: its trust records, approval flags and cached feature flags are unknown", str(path)))
    _CACHE[path] = (key, config)
    return config
