"""Where everything lives for one project (docs/behaviour.md §2): memory dir, sessions dir, state dir.

The auto-memory dir is decided by the first rule that applies:

1. the flavor's env override (``AGENT_MEMORY_DIR`` / ``CLAUDE_COWORK_MEMORY_PATH_OVERRIDE``),
   used as given (no ``~`` expansion);
2. ``autoMemoryDirectory`` from the policy, then user, then local settings — **never** the
   checked-in project settings (a repository must not be able to point memory at ``~/.ssh``);
3. ``<base>/projects/<slug(canonical git root, else project root)>/memory/``.

An override is valid only if absolute (or ``~/x`` in settings), at least 3 characters after
normalising, not ``~``/``~/``, a drive root or a UNC path, and free of NUL. The reference
ignores an invalid value silently; memtui ignores it too but says so (``memory-dir-override-invalid``).
"""

from __future__ import annotations

import os
import posixpath
import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import platformdirs

from memtui.core.base.diagnostics import Diagnostic
from memtui.core.places.agentconfig import Trust, workspace_trust
from memtui.core.places.claude_json import GlobalConfig, read_global_config
from memtui.core.places.flavor import Flavor, home_dir
from memtui.core.places.gitroot import resolve_git_roots
from memtui.core.places.settings import MERGE_PRIORITY, SettingsLayers, load_settings
from memtui.core.places.slug import slugify

MemoryDirSource = Literal["env", "policy", "flag", "user", "project", "local", "default", "option"]
# docs/behaviour.md §2: the settings layers allowed to move the memory dir, in order (the seed design's;
# a release gives its own: ``Behaviour.memory_dir_sources``). Never "project" there.
MEMORY_DIR_SETTING_SOURCES: tuple[Literal["policy", "user", "local"], ...] = ("policy", "user", "local")
_TRUTHY = {"1", "true", "yes", "on"}
_FALSY = {"0", "false", "no", "off"}


@dataclass(frozen=True, slots=True)
class Locations:
    """Every location memtui computes for one project, with the reasons and findings.

    Paths are absolute. ``memory_dir_source`` says which rule chose ``memory_dir``;
    ``auto_memory_source`` which rule decided ``auto_memory_enabled``
    (``"env"``, a settings layer, or ``"default"``) and ``auto_memory_layer`` the settings layer
    whose file decided it (its ``env`` block or ``autoMemoryEnabled``; ``None`` otherwise).

    When the release lets a settings layer move the memory dir only in a trusted workspace,
    ``memory_dir`` is the trusted outcome (a ``-p``/SDK run, or an interactive session whose
    workspace trust was accepted) and ``memory_dir_untrusted`` / ``memory_dir_untrusted_source``
    the outcome of an interactive session in an untrusted workspace, when it differs;
    ``trust``: what the agent's own records say about this workspace; ``agent_config``: the
    agent's global config, read once.
    """

    flavor: Flavor
    project_root: Path
    git_root: Path | None
    canonical_git_root: Path | None
    slug: str
    user_base_dir: Path
    managed_dir: Path
    memory_dir: Path
    memory_dir_source: MemoryDirSource
    sessions_dir: Path
    state_dir: Path
    auto_memory_enabled: bool
    auto_memory_source: str
    settings: SettingsLayers
    diagnostics: tuple[Diagnostic, ...]
    trust: Trust | None = None
    memory_dir_untrusted: Path | None = None
    memory_dir_untrusted_source: MemoryDirSource | None = None
    agent_config: GlobalConfig | None = None
    auto_memory_layer: str | None = None


def validate_memory_dir_override(raw: object, *, expand_tilde: bool, home: Path) -> tuple[Path | None, str | None]:
    """Check one override value. Returns ``(path, None)`` when valid, else ``(None, reason)``.

    ``expand_tilde`` is true for settings values (``~/x`` allowed) and false for the env var.
    The rules are the reference's ``validateMemoryPath``.
    """
    if not isinstance(raw, str):
        return None, f"must be a string, got {type(raw).__name__}"
    if not raw:
        return None, "is empty"
    if "\0" in raw:
        return None, "contains a NUL byte"
    candidate = raw
    if expand_tilde and (candidate.startswith("~/") or candidate.startswith("~\\")):
        rest = candidate[2:]
        rest_norm = posixpath.normpath(rest or ".")
        if rest_norm in (".", ".."):
            return None, f"{raw!r} points at the home directory itself"
        candidate = posixpath.join(str(home), rest)
    normalized = re.sub(r"[/\\]+$", "", posixpath.normpath(candidate))
    if normalized.startswith("\\\\") or normalized.startswith("//"):
        return None, f"{raw!r} is a UNC path"
    if re.fullmatch(r"[A-Za-z]:", normalized):
        return None, f"{raw!r} is a drive root"
    if not posixpath.isabs(normalized):
        hint = " (`~` is not expanded here)" if raw.startswith("~") else ""
        return None, f"{raw!r} is not an absolute path{hint}"
    if len(normalized) < 3:
        return None, f"{raw!r} is too short (a root-level path)"
    return Path(unicodedata.normalize("NFC", normalized)), None


def _settings_env(settings: SettingsLayers, name: str) -> tuple[str | None, str | None]:
    """The value of variable ``name`` in the ``env`` block of the highest settings layer that
    sets it, and that layer (``None, None`` when none does)."""
    for source in MERGE_PRIORITY:
        block = settings.layers.get(source, {}).get("env")
        if isinstance(block, dict) and isinstance(block.get(name), str):
            return block[name], source
    return None, None


def _auto_memory_enabled(flavor: Flavor, settings: SettingsLayers, env: Mapping[str, str]) -> tuple[bool, str, str | None]:
    """Whether auto memory is on, and what decided it. The switch variable counts when a
    settings file's ``env`` block sets it, for a release that copies those blocks into its
    environment over the shell's (``Behaviour.settings_env``: Claude Code 2.1.328 and 2.1.332,
    oracle scenarios ``o_automem_settings_env`` and ``o_automem_project_env``), else from the
    environment; then ``autoMemoryEnabled``. Returns ``(enabled, what decided it, the settings
    layer whose file decided it or None)``."""
    raw, layer = _settings_env(settings, flavor.disable_auto_memory_env) if flavor.behaviour.settings_env else (None, None)
    where = f"{flavor.disable_auto_memory_env} in the env block of the {layer} settings"
    if raw is None:
        raw, where, layer = env.get(flavor.disable_auto_memory_env), "env", None
    if raw is not None:
        value = raw.strip().lower()
        if value in _TRUTHY:
            return False, where, layer
        if value in _FALSY:
            return True, where, layer
    value, source = settings.get("autoMemoryEnabled")
    if isinstance(value, bool) and source is not None:
        return value, source, source
    return True, "default", None


# Claude Code's check of a project dir name (the 2.1.328 and 2.1.332 bundles: ``/^[A-Za-z0-9_-]{1,64}$/``, and
# not a name Windows reserves).
PROJECT_DIR_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")
_RESERVED_NAME = re.compile(r"(?:con|prn|aux|nul|com[0-9]|lpt[0-9])", re.IGNORECASE)


def project_dir_name(flavor: Flavor, env: Mapping[str, str]) -> str | None:
    """The project dir name that replaces the slug (every session's transcripts and the default
    memory dir go under ``<base>/projects/<name>/``): ``flavor.project_dir_name_env`` when the
    flavor has one, ``flavor.config_dir_env`` is set and the name is valid; else ``None``. An
    invalid name is ignored, as the agent ignores it."""
    if flavor.project_dir_name_env is None or not env.get(flavor.config_dir_env):
        return None
    name = env.get(flavor.project_dir_name_env)
    if not name or not PROJECT_DIR_NAME.fullmatch(name) or _RESERVED_NAME.fullmatch(name):
        return None
    return name


def state_dir(environ: Mapping[str, str] | None = None) -> Path:
    """memtui's own state dir: ``$MEMTUI_STATE_DIR`` else ``platformdirs.user_state_dir("memtui")``.

    Never inside the memory dir: the agent's recall reads every ``*.md`` below it.
    """
    env = os.environ if environ is None else environ
    override = env.get("MEMTUI_STATE_DIR")
    if override:
        return Path(override)
    return Path(platformdirs.user_state_dir("memtui", appauthor=False))


def _settings_choice(
    flavor: Flavor, settings: SettingsLayers, home: Path, *, trusted: bool, diags: list[Diagnostic] | None
) -> tuple[Path | None, MemoryDirSource | None]:
    """The memory dir the release's settings layers choose (``None`` when none does), for a
    trusted or an untrusted workspace. The seed design tries the next layer after an invalid
    value; Claude Code takes the first layer that sets the key and falls back to the default
    when its value is invalid."""
    release = flavor.behaviour
    for layer, needs_trust in release.memory_dir_sources:
        if needs_trust and not trusted:
            continue
        value = settings.layers.get(layer, {}).get("autoMemoryDirectory")
        if value is None:
            continue
        path, reason = validate_memory_dir_override(value, expand_tilde=True, home=home)
        if path is not None:
            return path, layer
        if diags is not None:
            diags.append(
                Diagnostic(
                    "memory-dir-override-invalid",
                    "warning",
                    f"autoMemoryDirectory {reason}; ignored (the agent ignores it silently)",
                    str(settings.paths[layer]) if layer in settings.paths else None,
                )
            )
        if not release.memory_dir_invalid_falls_through:
            return None, None
    return None, None


def resolve_locations(
    flavor: Flavor,
    project: Path | None = None,
    *,
    memory_dir: Path | None = None,
    environ: Mapping[str, str] | None = None,
    flag_settings: str | None = None,
) -> Locations:
    """Compute the locations for the project at ``project`` (default: the current directory).

    ``memory_dir`` (the CLI's ``--memory-dir``) skips resolution entirely; ``flag_settings``:
    the agent's ``--settings`` value (a file's path or inline JSON). Never raises for bad
    settings or git metadata: those become ``diagnostics``.
    """
    env = os.environ if environ is None else environ
    project_root = Path(os.path.realpath(project if project is not None else os.getcwd()))
    env = {**env, **{k: os.path.abspath(env[k]) for k in ("HOME", flavor.config_dir_env) if env.get(k)}}
    diags: list[Diagnostic] = []
    roots = resolve_git_roots(project_root)
    diags.extend(roots.diagnostics)
    base = flavor.user_base_dir(env)
    settings = load_settings(flavor, project_root, env, flag_settings=flag_settings)
    diags.extend(settings.diagnostics)
    home = home_dir(env)
    named = project_dir_name(flavor, env)
    slug = named or slugify(str(roots.canonical or project_root))
    release = flavor.behaviour
    needs_trust = any(t for _, t in release.memory_dir_sources)
    config = read_global_config(env) if (needs_trust or flavor.external_import_flag or not release.recall_gate.always) else None
    if config is not None and config.diagnostic is not None:
        diags.append(config.diagnostic)
    trust = workspace_trust(config, project_root, roots.git_root) if config is not None and needs_trust else None

    chosen: Path | None = None
    source: MemoryDirSource = "default"
    untrusted: Path | None = None
    untrusted_source: MemoryDirSource | None = None
    if memory_dir is not None:
        chosen, source = Path(os.path.abspath(memory_dir)), "option"
    else:
        env_value = env.get(flavor.memory_dir_env)
        if env_value:
            path, reason = validate_memory_dir_override(env_value, expand_tilde=False, home=home)
            if path is not None:
                chosen, source = path, "env"
            else:
                diags.append(
                    Diagnostic(
                        "memory-dir-override-invalid",
                        "warning",
                        f"${flavor.memory_dir_env} {reason}; ignored (the agent ignores it silently)",
                    )
                )
        if chosen is None:
            picked, layer = _settings_choice(flavor, settings, home, trusted=True, diags=diags)
            if picked is not None and layer is not None:
                chosen, source = picked, layer
            if needs_trust and not (trust is not None and trust.trusted):
                alt, alt_layer = _settings_choice(flavor, settings, home, trusted=False, diags=None)
                if (alt, alt_layer) != (picked, layer):
                    untrusted = alt if alt is not None else base / "projects" / slug / "memory"
                    untrusted_source = alt_layer or "default"
        allowed = {layer for layer, _ in release.memory_dir_sources}
        if "project" not in allowed and settings.layers.get("project", {}).get("autoMemoryDirectory") is not None:
            diags.append(
                Diagnostic(
                    "memory-dir-in-project-settings",
                    "info",
                    "autoMemoryDirectory in the checked-in project settings is never used "
                    "(a repository must not choose where memory is written); move it to settings.local.json",
                    str(settings.paths["project"]),
                )
            )
    if chosen is None:
        chosen = base / "projects" / slug / "memory"
    enabled, enabled_source, enabled_layer = _auto_memory_enabled(flavor, settings, env)
    state = Path(os.path.abspath(state_dir(env)))
    mem_abs = Path(os.path.abspath(chosen))
    if state == mem_abs or mem_abs in state.parents:
        diags.append(
            Diagnostic(
                "state-dir-in-memory-dir",
                "error",
                f"memtui's state dir {state} is inside the memory dir: the agent's recall would read "
                "memtui's backups and trash as memories; set MEMTUI_STATE_DIR elsewhere",
            )
        )
    return Locations(
        flavor=flavor,
        project_root=project_root,
        git_root=roots.git_root,
        canonical_git_root=roots.canonical,
        slug=slug,
        user_base_dir=base,
        managed_dir=flavor.managed_dir(env),
        memory_dir=chosen,
        memory_dir_source=source,
        sessions_dir=base / "projects" / (named or slugify(str(project_root))),
        state_dir=state,
        auto_memory_enabled=enabled,
        auto_memory_source=enabled_source,
        auto_memory_layer=enabled_layer,
        settings=settings,
        diagnostics=tuple(diags),
        trust=trust,
        memory_dir_untrusted=untrusted,
        memory_dir_untrusted_source=untrusted_source,
        agent_config=config,
    )


def other_flavor_memory_dir(loc: Locations, environ: Mapping[str, str] | None = None) -> tuple[str, Path] | None:
    """When ``loc``'s memory dir does not exist but the other flavor's does (a Claude Code
    setup opened with the default ``agent`` flavor, say), that flavor's name and dir."""
    from memtui.core.places.flavor import FLAVORS

    if loc.memory_dir.is_dir() or loc.memory_dir_source == "option":
        return None
    for name, flavor in FLAVORS.items():
        if name == loc.flavor.name:
            continue
        other = resolve_locations(flavor, loc.project_root, environ=environ)
        if other.memory_dir.is_dir():
            return name, other.memory_dir
    return None


MemoryDirProblemCode = Literal["missing", "not-a-directory"]


@dataclass(frozen=True, slots=True)
class MemoryDirProblem:
    """Why a project has no memory dir to read.

    ``code``: ``"missing"`` (nothing at ``memory_dir`` yet: the agent creates it when it first
    saves a memory) or ``"not-a-directory"`` (something else is there); ``other_flavor``: the
    other flavor's name and memory dir for this project when that one exists (a Claude Code
    setup opened with the ``agent`` flavor, say), else ``None``.
    """

    code: MemoryDirProblemCode
    memory_dir: Path
    other_flavor: tuple[str, Path] | None = None

    @property
    def what(self) -> str:
        """What is wrong, as the end of a sentence about ``memory_dir``: "is not a directory." or
        "does not exist yet — the agent creates it when it first saves a memory."."""
        if self.code == "not-a-directory":
            return "is not a directory."
        return "does not exist yet — the agent creates it when it first saves a memory."


def memory_dir_problem(loc: Locations, environ: Mapping[str, str] | None = None) -> MemoryDirProblem | None:
    """``None`` when ``loc.memory_dir`` is a directory, else what is wrong with it: the one
    check every command and pane that reads the memory dir makes."""
    memory_dir = loc.memory_dir
    if memory_dir.is_dir():
        return None
    if memory_dir.exists():
        return MemoryDirProblem("not-a-directory", memory_dir)
    return MemoryDirProblem("missing", memory_dir, other_flavor_memory_dir(loc, environ))
