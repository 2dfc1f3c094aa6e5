"""Settings files (JSON) of the four layers (docs/behaviour.md §2).

policy ``<managed>/managed-settings.json``, user ``<base>/settings.json``, project
``<project>/.agent/settings.json`` (checked in), local ``<project>/.agent/settings.local.json``.
A file that is missing is simply absent; one that is not a JSON object (or not UTF-8, or nested
deeper than ``MAX_JSON_DEPTH``) is reported and ignored. Values keep their JSON types: each
reader of a key checks the type and range it needs.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from memtui.core.base.diagnostics import Diagnostic
from memtui.core.base.jsontext import JSONInputError, loads_checked
from memtui.core.places.flavor import Flavor
from memtui.core.base.safe_read import read_regular

SettingsSource = Literal["policy", "flag", "user", "project", "local"]
# Highest priority first, for keys merged the ordinary way ("flag": the agent's `--settings`).
MERGE_PRIORITY: tuple[SettingsSource, ...] = ("policy", "flag", "local", "project", "user")


@dataclass(frozen=True, slots=True)
class SettingsLayers:
    """The parsed settings of each layer (``{}`` when absent or invalid), their paths, and
    diagnostics for files that could not be used."""

    layers: Mapping[SettingsSource, Mapping[str, Any]]
    paths: Mapping[SettingsSource, Path]
    diagnostics: tuple[Diagnostic, ...] = field(default=())

    def get(self, key: str, sources: tuple[SettingsSource, ...] = MERGE_PRIORITY) -> tuple[Any, SettingsSource | None]:
        """The value of ``key`` from the first of ``sources`` that sets it, and that source."""
        for source in sources:
            layer = self.layers.get(source, {})
            if key in layer and layer[key] is not None:
                return layer[key], source
        return None, None


def settings_paths(flavor: Flavor, project_root: Path, environ: Mapping[str, str] | None = None) -> dict[SettingsSource, Path]:
    """Where each layer's settings file lives."""
    dot = project_root / flavor.dot_dir
    return {
        "policy": flavor.managed_dir(environ) / "managed-settings.json",
        "user": flavor.user_base_dir(environ) / "settings.json",
        "project": dot / "settings.json",
        "local": dot / "settings.local.json",
    }


# A settings file is a few hundred bytes; this bounds a hostile one (a repository can ship a
# symlink to /dev/zero as .agent/settings.json).
MAX_SETTINGS_BYTES = 4 * 1024 * 1024


def _load_one(path: Path) -> tuple[dict[str, Any], Diagnostic | None]:
    if not os.path.lexists(path):
        return {}, None
    try:
        raw, _ = read_regular(path, MAX_SETTINGS_BYTES)
    except FileNotFoundError:
        return {}, Diagnostic("settings-unreadable", "warning", "a dangling symlink; ignored", str(path))
    except OSError as exc:
        return {}, Diagnostic("settings-unreadable", "warning", f"cannot read settings: {exc.strerror or exc}; ignored", str(path))
    try:
        # NaN/Infinity (JavaScript's JSON.parse rejects them) and nesting past MAX_JSON_DEPTH
        # are invalid too
        data = loads_checked(raw.decode("utf-8-sig"))
    except ValueError as exc:  # JSONInputError, UnicodeDecodeError
        line = getattr(exc, "lineno", None)
        return {}, Diagnostic("settings-invalid-json", "warning", f"not valid JSON ({str(exc)[:200]}); file ignored", str(path), line)
    if not isinstance(data, dict):
        return {}, Diagnostic("settings-invalid-json", "warning", "settings must be a JSON object; file ignored", str(path))
    return data, None


def _load_flag(value: str) -> tuple[dict[str, Any], Path | None, Diagnostic | None]:
    """The agent's ``--settings`` value: a JSON object given inline, else a file's path."""
    if value.lstrip().startswith("{"):
        try:
            data = loads_checked(value)
        except JSONInputError as exc:
            return {}, None, Diagnostic("settings-invalid-json", "warning", f"--settings is not valid JSON ({str(exc)[:200]}); ignored")
        if not isinstance(data, dict):
            return {}, None, Diagnostic("settings-invalid-json", "warning", "--settings must be a JSON object; ignored")
        return data, None, None
    path = Path(value).expanduser()
    data, diag = _load_one(path)
    if diag is None and not path.exists():
        diag = Diagnostic("settings-unreadable", "warning", "the --settings file does not exist; ignored", str(path))
    return data, path, diag


def load_settings(
    flavor: Flavor, project_root: Path, environ: Mapping[str, str] | None = None, *, flag_settings: str | None = None
) -> SettingsLayers:
    """Read all four settings files, and the agent's ``--settings`` value (a file's path or
    inline JSON, the ``flag`` layer) when given. Never raises."""
    paths = settings_paths(flavor, project_root, environ)
    layers: dict[SettingsSource, Mapping[str, Any]] = {}
    diags: list[Diagnostic] = []
    for source, path in paths.items():
        data, diag = _load_one(path)
        layers[source] = data
        if diag:
            diags.append(diag)
    if flag_settings is not None:
        data, flag_path, diag = _load_flag(flag_settings)
        layers["flag"] = data
        if flag_path is not None:
            paths["flag"] = flag_path
        if diag:
            diags.append(diag)
    return SettingsLayers(layers, paths, tuple(diags))
