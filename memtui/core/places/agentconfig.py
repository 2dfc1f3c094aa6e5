"""What the agent's global config (``~/.claude.json``, read by
``memtui.core.places.claude_json``) says about memory: workspace trust and the recall gate.

Claude Code keeps per-project records in ``projects[<path>]`` — among them
``hasTrustDialogAccepted``, set when a person accepts the workspace trust dialog — and caches
its feature flags under ``cachedGrowthBookFeatures``. memtui never writes the file.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memtui.core.base.wording import ON_FOR_YOUR_ACCOUNT, flag_details, off_for, tilde
from memtui.core.places.claude_json import GlobalConfig
from memtui.core.places.behaviour import RecallGate

# The agent's own key for "a person accepted the trust dialog for this folder".
TRUST_KEY = "hasTrustDialogAccepted"


def project_record(config: GlobalConfig, key: str) -> Mapping[str, Any]:
    """The record ``projects[key]`` of the agent's config (``{}`` when absent)."""
    projects = config.data.get("projects")
    entry = projects.get(key) if isinstance(projects, dict) else None
    return entry if isinstance(entry, dict) else {}


@dataclass(frozen=True, slots=True)
class Trust:
    """Whether a person accepted the workspace trust dialog for the project.

    ``trusted``: a record says so; ``key``: the folder whose record says it (``None`` when
    none does); ``checked``: the folders looked at, nearest first."""

    trusted: bool
    key: str | None
    checked: tuple[str, ...]


def workspace_trust(config: GlobalConfig, cwd: Path, git_root: Path | None) -> Trust:
    """Claude Code's trust lookup for ``cwd``: the record of ``cwd`` or of any folder above it
    up to the git root (up to ``/`` outside a repository) with ``hasTrustDialogAccepted: true``.
    ``-p`` and SDK runs count as trusted whatever the records say (the caller decides that)."""
    current = Path(os.path.normpath(cwd))
    stop = Path(os.path.normpath(git_root)) if git_root is not None else None
    checked: list[str] = []
    while True:
        key = str(current)
        checked.append(key)
        if project_record(config, key).get(TRUST_KEY) is True:
            return Trust(True, key, tuple(checked))
        if stop is not None and current == stop:
            break
        if current == current.parent:
            break
        current = current.parent
    return Trust(False, None, tuple(checked))


@dataclass(frozen=True, slots=True)
class RecallState:
    """Whether the agent recalls memories for this user, and why.

    ``on``; ``source``: ``"always"`` (the release always recalls), ``"flag"`` (the cached
    feature flag), ``"env"`` (the variable) or ``"off"``; ``reason``: a plain clause for a
    person, with no flag or cache-key name (``"this feature is off for your account"``);
    ``details``: the facts behind it — the flag's name and cached value, the config file, the
    variable (``""`` when there is nothing to add; ``memtui.core.base.wording``)."""

    on: bool
    source: str
    reason: str
    details: str = ""


def _flag_value(config: GlobalConfig, gate: RecallGate) -> tuple[Any, str | None]:
    for key in gate.cache_keys:
        cache = config.data.get(key)
        if isinstance(cache, dict) and gate.flag in cache:
            return cache[gate.flag], key
    return None, None


def recall_state(gate: RecallGate, config: GlobalConfig, environ: Mapping[str, str] | None = None) -> RecallState:
    """Read the release's recall ``gate`` for this user: the cached flag in ``config`` or the
    gate's variable in ``environ``."""
    if gate.always:
        return RecallState(True, "always", "this release always recalls")
    env = os.environ if environ is None else environ
    value, where = _flag_value(config, gate) if gate.flag else (None, None)
    cache_key = where or (gate.cache_keys[0] if gate.cache_keys else "")
    has_cache = any(isinstance(config.data.get(key), dict) for key in gate.cache_keys)
    flag = flag_details(gate.flag or "", value, where is not None, tilde(config.path), cache_key, has_cache=has_cache) if gate.flag else ""
    if value is True:
        off = [name for name in gate.cache_off_env if env.get(name)]
        if off and not (gate.cache_keep_env and env.get(gate.cache_keep_env)):
            return RecallState(True, "flag", f"this feature is {ON_FOR_YOUR_ACCOUNT}, but with {off[0]} set the agent reads that only when "
                               f"{gate.cache_keep_env} is set too", flag)
        return RecallState(True, "flag", f"this feature is {ON_FOR_YOUR_ACCOUNT}", flag)
    if gate.env and (env.get(gate.env) or "").strip():
        return RecallState(True, "env", f"{gate.env} is set", flag)
    unset = f"{gate.env} is not set" if gate.env else ""
    return RecallState(False, "off", f"this feature is {off_for(has_cache)}", "; ".join(part for part in (flag, unset) if part))
