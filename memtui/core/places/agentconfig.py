"""The agent's own global config file (``~/.claude.json``), read only: workspace trust, cached
feature flags.

Claude Code keeps per-project records in ``projects[<path>]`` of ``$CLAUDE_CONFIG_DIR/.claude.json``
(else ``~/.claude.json``) — among them ``hasTrustDialogAccepted``, set when a person accepts the
workspace trust dialog — and caches its feature flags under ``cachedGrowthBookFeatures``. memtui
never writes the file. A file that is missing reads as empty; one that is not JSON is a
diagnostic, never an error.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memtui.core.base.diagnostics import Diagnostic
from memtui.core.base.safe_read import read_regular
from memtui.core.places.flavor import home_dir
from memtui.core.places.release import RecallGate

# The agent's own key for "a person accepted the trust dialog for this folder".
TRUST_KEY = "hasTrustDialogAccepted"
# A config file is some KB to a few MB (it keeps per-project history); this bounds a hostile one.
MAX_CONFIG_BYTES = 64 * 1024 * 1024


def agent_config_path(environ: Mapping[str, str] | None = None) -> Path:
    """``$CLAUDE_CONFIG_DIR/.claude.json`` when that is set, else ``~/.claude.json``."""
    env = os.environ if environ is None else environ
    base = env.get("CLAUDE_CONFIG_DIR")
    return (Path(base) if base else home_dir(env)) / ".claude.json"


@dataclass(frozen=True, slots=True)
class AgentConfig:
    """The parsed config (``{}`` when absent or unreadable), its path, and a diagnostic when it
    could not be read."""

    path: Path
    data: Mapping[str, Any] = field(default_factory=dict)
    diagnostic: Diagnostic | None = None

    def project(self, key: str) -> Mapping[str, Any]:
        """The record ``projects[key]`` (``{}`` when absent)."""
        projects = self.data.get("projects")
        entry = projects.get(key) if isinstance(projects, dict) else None
        return entry if isinstance(entry, dict) else {}


def load_agent_config(environ: Mapping[str, str] | None = None) -> AgentConfig:
    """Read the agent's config. Never raises."""
    path = agent_config_path(environ)
    try:
        raw, _ = read_regular(path, MAX_CONFIG_BYTES)
        data = json.loads(raw.decode("utf-8-sig"))
    except FileNotFoundError:
        return AgentConfig(path)
    except (OSError, UnicodeDecodeError, ValueError, RecursionError) as exc:
        return AgentConfig(path, {}, Diagnostic("agent-config-unreadable", "warning", f"cannot read the agent's config ({str(exc)[:200]}); read as empty", str(path)))
    if not isinstance(data, dict):
        return AgentConfig(path, {}, Diagnostic("agent-config-unreadable", "warning", "the agent's config is not a JSON object; read as empty", str(path)))
    return AgentConfig(path, data)


@dataclass(frozen=True, slots=True)
class Trust:
    """Whether a person accepted the workspace trust dialog for the project.

    ``trusted``: a record says so; ``key``: the folder whose record says it (``None`` when
    none does); ``checked``: the folders looked at, nearest first."""

    trusted: bool
    key: str | None
    checked: tuple[str, ...]


def workspace_trust(config: AgentConfig, cwd: Path, git_root: Path | None) -> Trust:
    """Claude Code's trust lookup for ``cwd``: the record of ``cwd`` or of any folder above it
    up to the git root (up to ``/`` outside a repository) with ``hasTrustDialogAccepted: true``.
    ``-p`` and SDK runs count as trusted whatever the records say (the caller decides that)."""
    current = Path(os.path.normpath(cwd))
    stop = Path(os.path.normpath(git_root)) if git_root is not None else None
    checked: list[str] = []
    while True:
        key = str(current)
        checked.append(key)
        if config.project(key).get(TRUST_KEY) is True:
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
    feature flag), ``"env"`` (the variable) or ``"off"``; ``reason``: a sentence."""

    on: bool
    source: str
    reason: str


def _flag_value(config: AgentConfig, gate: RecallGate) -> tuple[Any, str | None]:
    for key in gate.cache_keys:
        cache = config.data.get(key)
        if isinstance(cache, dict) and gate.flag in cache:
            return cache[gate.flag], key
    return None, None


def recall_state(gate: RecallGate, config: AgentConfig, environ: Mapping[str, str] | None = None) -> RecallState:
    """Read the release's recall ``gate`` for this user: the cached flag in ``config`` or the
    gate's variable in ``environ``."""
    if gate.always:
        return RecallState(True, "always", "this release always recalls")
    env = os.environ if environ is None else environ
    value, where = _flag_value(config, gate) if gate.flag else (None, None)
    if value is True:
        caveat = ""
        if any(env.get(name) for name in gate.cache_off_env) and not (gate.cache_keep_env and env.get(gate.cache_keep_env)):
            caveat = f" (with telemetry off the agent reads these cached flags only when {gate.cache_keep_env} is set)"
        return RecallState(True, "flag", f"the feature flag {gate.flag} is on in {config.path} ({where}){caveat}")
    if gate.env and (env.get(gate.env) or "").strip():
        return RecallState(True, "env", f"{gate.env} is set")
    said = f"{gate.flag} is {json.dumps(value)} in {config.path} ({where})" if where else f"{gate.flag} is not in the agent's cached flags ({config.path})"
    unset = f"; {gate.env} is not set" if gate.env else ""
    return RecallState(False, "off", f"the agent does not recall: {said}{unset}")
