"""AGENTS.md, as a release's AGENTS.md support loads it (``Behaviour.instructions.agents_md``).

Claude Code reads AGENTS.md through a built-in plugin whose ``instructionFiles`` option —
read only from the user settings or ``--settings``, under
``pluginConfigs["agents-md@builtin"].options`` — picks a mode:

- ``claude-md``: no AGENTS.md at all;
- ``claude-md-or-agents-md`` (default): a project with no CLAUDE.md of its own (no
  ``CLAUDE.md``, ``.claude/CLAUDE.md`` or ``CLAUDE.local.md`` in the cwd or any folder above it)
  gets its AGENTS.md files (``AGENTS.md``, ``.claude/AGENTS.md``) from the cwd up to ``/``;
  after a read, the AGENTS.md files of the folders between the cwd (exclusive) and the file
  read, except in a folder that has a CLAUDE.md of its own;
- ``claude-md-and-agents-md``: AGENTS.md files load beside the CLAUDE.md files;
- ``managed-only``: the user's and the project's instruction files are dropped.

The legacy option ``projectInstructions`` (``none`` | ``claude`` | ``agents-fallback`` |
``both``) is read only while ``instructionFiles`` is left at its default. An AGENTS.md whose
text equals a project file already in the context is not loaded again. Startup files are put
before the files of the first folder below theirs; a lazily loaded one arrives as a
system-role ``tool.call hook additional context: Contents of <path>:`` message.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memtui.core.base.diagnostics import Diagnostic
from memtui.core.places.behaviour import AgentsMd
from memtui.core.places.settings import SettingsLayers

from .loader import Loader, LoadEnv
from .model import CascadeFile

# The plugin's id in `enabledPlugins` and the feature flag that can switch it off.
PLUGIN_ID = "agents-md@builtin"
AVAILABILITY_FLAG = "tengu_agents_md_mod"
# Variables under which the plugin adds nothing after a read.
LAZY_OFF_ENV = ("CLAUDE_CODE_SIMPLE", "CLAUDE_CODE_DISABLE_ATTACHMENTS")
_TRUTHY = {"1", "true", "yes", "on"}


@dataclass(frozen=True, slots=True)
class AgentsMdMode:
    """The mode in effect: ``mode`` (one of the plugin's modes, ``None`` when the plugin is
    off), ``source`` (where it was read: ``default``, ``user``, ``flag``, or ``legacy``), and
    findings about the options."""

    mode: str | None
    source: str
    diagnostics: tuple[Diagnostic, ...] = ()

    @property
    def loads_agents(self) -> bool:
        """AGENTS.md files can load in this mode."""
        return self.mode in ("claude-md-or-agents-md", "claude-md-and-agents-md")

    @property
    def fallback(self) -> bool:
        """AGENTS.md only where there is no CLAUDE.md."""
        return self.mode == "claude-md-or-agents-md"


def _options(settings: SettingsLayers, path: Sequence[str]) -> tuple[dict[str, Any], dict[str, str]]:
    """The plugin's options, the ``--settings`` value over the user settings', and which layer
    gave each key."""
    merged: dict[str, Any] = {}
    origin: dict[str, str] = {}
    for layer in ("user", "flag"):
        node: Any = settings.layers.get(layer, {})
        for key in path:
            node = node.get(key) if isinstance(node, dict) else None
        if isinstance(node, dict):
            for key, value in node.items():
                merged[key] = value
                origin[key] = layer
    return merged, origin


def agents_md_mode(plugin: AgentsMd | None, settings: SettingsLayers, flags: Mapping[str, Any] | None = None) -> AgentsMdMode:
    """The plugin's mode for these settings. ``flags``: the agent's cached feature flags
    (the plugin is off when ``tengu_agents_md_mod`` is false there)."""
    if plugin is None:
        return AgentsMdMode(None, "release")
    if flags is not None and flags.get(AVAILABILITY_FLAG) is False:
        return AgentsMdMode(None, "flag", (Diagnostic("agents-md-off", "info", f"the agent's cached flag {AVAILABILITY_FLAG} is off: no AGENTS.md loads"),))
    for layer in ("flag", "user"):
        enabled = settings.layers.get(layer, {}).get("enabledPlugins")
        if isinstance(enabled, dict) and enabled.get(PLUGIN_ID) is False:
            return AgentsMdMode(None, layer, (Diagnostic("agents-md-off", "info", f"enabledPlugins turns {PLUGIN_ID} off: no AGENTS.md loads"),))
    options, origin = _options(settings, plugin.settings_path)
    raw = options.get(plugin.mode_key)
    mode = raw if isinstance(raw, str) and raw in plugin.modes else plugin.default_mode
    source = origin.get(plugin.mode_key, "default") if mode == raw else "default"
    diags: list[Diagnostic] = []
    if raw is not None and mode != raw:
        diags.append(Diagnostic("agents-md-mode-unknown", "warning", f"{plugin.mode_key} {raw!r} is not one of {', '.join(plugin.modes)}: the default {mode} applies"))
    legacy_raw = options.get(plugin.legacy_key)
    if legacy_raw is not None:
        legacy = plugin.legacy_modes.get(legacy_raw, plugin.legacy_fallback) if isinstance(legacy_raw, str) else plugin.legacy_fallback
        if mode == plugin.default_mode:
            diags.append(
                Diagnostic(
                    "agents-md-legacy-option",
                    "info",
                    f"option {plugin.legacy_key} is honoured for now, read as {plugin.mode_key} {legacy}; set {plugin.mode_key} instead",
                )
            )
            return AgentsMdMode(legacy, "legacy", tuple(diags))
        diags.append(Diagnostic("agents-md-legacy-option", "info", f"option {plugin.legacy_key} is not read: {plugin.mode_key} {mode} is set"))
    return AgentsMdMode(mode, source, tuple(diags))


def project_dir_of(path: str) -> str:
    """The folder a project file belongs to: the part before ``/.claude/``, else its folder."""
    norm = path.replace("\\", "/")
    cut = norm.rfind("/.claude/")
    if cut == -1:
        cut = norm.rfind("/")
    return "/" if cut <= 0 else norm[:cut]


def _below(path: str, base: str) -> bool:
    return path.startswith(base.rstrip("/") + "/")


def _chain_root(entry: CascadeFile, by_path: Mapping[str, CascadeFile]) -> str:
    seen = {entry.path}
    path, parent = entry.path, entry.parent
    while parent is not None and parent not in seen:
        seen.add(parent)
        path = parent
        node = by_path.get(parent)
        parent = node.parent if node is not None else None
    return path


def is_claude_project(files: Iterable[CascadeFile], claude_names: Sequence[str]) -> bool:
    """A CLAUDE.md, ``.claude/CLAUDE.md`` or ``CLAUDE.local.md`` of the cwd or a folder above it
    is in the startup context."""
    for f in files:
        if f.loaded and f.layer in ("project", "local") and f.depth == 0 and any(f.path.endswith(f"/{n}") for n in claude_names):
            return True
    return False


def ancestor_files(
    env: LoadEnv, names: Sequence[str], start: Path, below: Path | None, processed: set[str] | None = None
) -> list[CascadeFile]:
    """The files named ``names`` in ``start`` and every folder above it — up to ``/``, or only
    those strictly below ``below`` — root first, each followed by its imports (loaded like a
    project file; excluded, empty and missing files give nothing)."""
    dirs: list[Path] = []
    current = start
    while current != current.parent:
        if below is not None and not _below(str(current), str(below)):
            break
        dirs.append(current)
        current = current.parent
    dirs.reverse()
    loader = Loader(env, set(processed or ()))
    out: list[CascadeFile] = []
    for directory in dirs:
        for name in names:
            entries = loader.process_file(directory / name, "project", "instructions", env.approval.approved)
            out.extend(e for e in entries if e.loaded)
    return out


def unseen(candidates: Iterable[CascadeFile], context: Iterable[CascadeFile]) -> list[CascadeFile]:
    """``candidates`` minus those whose path is in ``context`` and those whose trimmed text
    equals a project or local file's of ``context`` (each path once)."""
    context = list(context)
    paths = {f.path for f in context}
    texts = {f.content.strip() for f in context if f.layer in ("project", "local") and f.content.strip()}
    out: list[CascadeFile] = []
    for f in candidates:
        text = f.content.strip()
        if f.path in paths or (text and text in texts):
            continue
        paths.add(f.path)
        out.append(f)
    return out


def insert_startup(files: list[CascadeFile], agents: list[CascadeFile]) -> None:
    """Put ``agents`` (AGENTS.md files and their imports) into ``files`` the way the plugin
    does: grouped by their root file's folder, each group before the first loaded project or
    local file of a folder below it, else after the last loaded project or local file, else
    before the auto-memory index."""
    by_path = {f.path: f for f in agents}
    groups: dict[str, list[CascadeFile]] = {}
    for f in agents:
        groups.setdefault(project_dir_of(_chain_root(f, by_path)), []).append(f)
    for directory, group in groups.items():
        at = _insertion_index(files, directory)
        files[at:at] = group


def _insertion_index(files: list[CascadeFile], directory: str) -> int:
    loaded = {f.path: f for f in files if f.loaded}
    own = [i for i, f in enumerate(files) if f.loaded and f.layer in ("project", "local")]
    for i in own:
        if _below(project_dir_of(_chain_root(files[i], loaded)), directory):
            return i
    if own:
        return own[-1] + 1
    for i, f in enumerate(files):
        if f.layer in ("automem", "teammem"):
            return i
    return len(files)


@dataclass(slots=True)
class AgentsMdSession:
    """What the plugin keeps for lazy loads: the mode, whether the project has a CLAUDE.md,
    the startup context (``context``, for the path and text checks) and the paths the
    plugin's own loads start with taken (``processed``: the managed and user CLAUDE.md)."""

    mode: AgentsMdMode
    plugin: AgentsMd
    claude_project: bool
    context: list[CascadeFile] = field(default_factory=list)
    processed: frozenset[str] = frozenset()


def lazy_agents(
    session: AgentsMdSession,
    env: LoadEnv,
    target: Path,
    loaded_paths: set[str],
    environ: Mapping[str, str],
    processed: Iterable[str] = (),
) -> list[CascadeFile]:
    """The AGENTS.md files a read of ``target`` adds (each tagged ``nested AGENTS.md``): those
    of the folders strictly below the cwd down to the target's folder, not already in the
    session, not equal in text to a project file in the context or a CLAUDE.md of those
    folders, and — in the default mode — only in folders without a CLAUDE.md."""
    if not session.mode.loads_agents or session.claude_project:
        return []
    if any((environ.get(name) or "").strip().lower() in _TRUTHY for name in LAZY_OFF_ENV):
        return []
    cwd = env.cwd
    if not _below(str(target), str(cwd)):
        return []
    plugin = session.plugin
    agents = ancestor_files(env, plugin.names, target.parent, cwd, set(processed))
    claude = ancestor_files(env, plugin.claude_names, target.parent, cwd, set(processed))
    if session.mode.fallback:
        claude_dirs = {project_dir_of(f.path) for f in claude if f.depth == 0}
        roots = {f.path: project_dir_of(f.path) for f in agents if f.depth == 0}
        by_path = {f.path: f for f in agents}
        agents = [f for f in agents if roots.get(_chain_root(f, by_path)) not in claude_dirs]
    out = [f for f in unseen(agents, [*session.context, *claude]) if f.path not in loaded_paths and f.path != str(target)]
    for f in out:
        f.reason = (
            f"nested AGENTS.md ({session.mode.mode}), loaded by the first read below {os.path.dirname(f.path)}"
            if f.depth == 0
            else f.reason
        )
    return out


def startup_agents(
    mode: AgentsMdMode, plugin: AgentsMd, files: list[CascadeFile], env: LoadEnv, processed: Iterable[str]
) -> tuple[AgentsMdSession, list[CascadeFile]]:
    """Apply the plugin to the startup ``files`` (in place): drop the user's and the project's
    files in ``managed-only`` mode, insert the AGENTS.md files of the cwd and the folders
    above it in the others. Returns the session state for lazy loads and the files added.
    ``processed``: paths already taken by the managed and user instruction files."""
    claude_project = mode.fallback and is_claude_project(files, plugin.claude_names)
    added: list[CascadeFile] = []
    if mode.mode == "managed-only":
        for f in files:
            if f.loaded and f.layer in ("user", "project", "local"):
                f.loaded = False
                f.status = "dropped"
                f.reason = "dropped by the AGENTS.md plugin's managed-only mode (only managed instructions and memory stay)"
    elif mode.loads_agents and not claude_project:
        found = ancestor_files(env, plugin.names, env.cwd, None, set(processed))
        added = unseen(found, [f for f in files if f.loaded])
        for f in added:
            if f.depth == 0:
                f.reason = f"AGENTS.md ({mode.mode}: {'no CLAUDE.md in this project' if mode.fallback else 'loaded beside CLAUDE.md'})"
        insert_startup(files, added)
    context = [f for f in files if f.loaded]
    return AgentsMdSession(mode, plugin, claude_project, context, frozenset(processed)), added

