"""The project's decision on external imports (docs/behaviour.md §3.3).

An import whose target lies outside the cwd loads from Managed, Project and Local files only
once the project has approved external imports. memtui stores the decision per project in
its own state dir (``<state>/approvals.json``, written atomically) — never inside the memory
dir. For the claude flavor it also reads (never writes) the agent's own flag
``projects[<project>].hasClaudeMdExternalIncludesApproved`` in ``~/.claude.json``
(``$CLAUDE_CONFIG_DIR/.claude.json`` when that is set).

Precedence: an explicit argument, then memtui's recorded decision, then the claude.json flag,
else *undecided* (external imports are pending).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Literal

from memtui.core.base.replace_file import replace_file
from memtui.core.base.jsontext import loads_checked
from memtui.core.base.safe_read import MAX_STATE_BYTES, read_text_regular
from memtui.core.base.diagnostics import Diagnostic
from memtui.core.places.claude_json import global_config_path, read_global_config
from memtui.core.places.flavor import Flavor
from memtui.core.places.gitroot import resolve_git_roots

from .imports import is_inside
from .model import Cascade, ExternalApproval, Layer

APPROVALS_FILE = "approvals.json"
Decision = Literal["approved", "declined"]


# The layers whose imports outside the cwd wait for the project's decision.
DECIDED_LAYERS: tuple[Layer, ...] = ("managed", "project", "local")


class ApprovalsError(OSError):
    """memtui's approvals file could not be written."""


@dataclass(frozen=True, slots=True)
class AffectedImport:
    """An external import a decision changes: ``path`` (its target), ``imported_by`` (the
    importing file, ``None`` when not known) and ``line`` (1-based, of the ``@`` in it)."""

    path: str
    imported_by: str | None
    line: int | None


def decision_effect(cascade: Cascade, decision: Decision) -> list[AffectedImport]:
    """The imports whose fate ``decision`` changes in ``cascade``: the pending external
    imports when there are any (either decision settles them); else, for ``"approved"``, the
    external imports declined now, and for ``"declined"`` the ones loaded now — imports from
    Managed, Project and Local files to a file outside the cwd. Empty: the decision changes
    nothing."""
    if cascade.pending_external_imports:
        return [AffectedImport(p.path, p.imported_by, p.line) for p in cascade.pending_external_imports]
    now = "declined" if decision == "approved" else "loaded"
    return [
        AffectedImport(f.path, f.parent, f.line)
        for f in cascade.files
        if f.parent and f.status == now and f.layer in DECIDED_LAYERS and not is_inside(Path(f.path), cascade.cwd)
    ]


def project_key(cwd: Path) -> str:
    """The path decisions are keyed on, like the reference's project config key: the
    canonical git root of ``cwd`` (so all worktrees share one decision), else ``cwd``."""
    roots = resolve_git_roots(cwd)
    return str(roots.canonical or Path(os.path.realpath(cwd)))


def approvals_path(state_dir: Path) -> Path:
    """``<state_dir>/approvals.json``."""
    return state_dir / APPROVALS_FILE


def _load(path: Path) -> tuple[dict[str, Any], Diagnostic | None]:
    try:
        data = loads_checked(read_text_regular(path, MAX_STATE_BYTES, errors="strict"))
    except FileNotFoundError:
        return {}, None
    except (OSError, ValueError) as exc:  # ValueError: not UTF-8, not JSON, nested past MAX_JSON_DEPTH
        return {}, Diagnostic("approvals-unreadable", "warning", f"memtui's approvals file cannot be read ({exc}); treated as empty", str(path))
    if not isinstance(data, dict):
        return {}, Diagnostic("approvals-unreadable", "warning", "memtui's approvals file is not a JSON object; treated as empty", str(path))
    return data, None


def recorded_decision(state_dir: Path, key: str) -> tuple[Decision | None, Diagnostic | None]:
    """memtui's recorded decision for project ``key`` (``None`` when never decided)."""
    data, diag = _load(approvals_path(state_dir))
    projects = data.get("projects")
    entry = projects.get(key) if isinstance(projects, dict) else None
    value = entry.get("external_imports") if isinstance(entry, dict) else None
    if value in ("approved", "declined"):
        return value, diag
    return None, diag


def record_decision(state_dir: Path, key: str, decision: Decision, now: datetime | None = None) -> Path:
    """Store ``decision`` for project ``key`` atomically (temp file in the same dir, fsync,
    ``os.replace``); other projects' decisions are kept. Returns the file's path.

    Raises ``ApprovalsError`` when the state dir cannot be written.
    """
    path = approvals_path(state_dir)
    data, _ = _load(path)
    projects = data.get("projects")
    if not isinstance(projects, dict):
        projects = {}
    stamp = (now or datetime.now(timezone.utc)).isoformat()
    projects[key] = {"external_imports": decision, "decided_at": stamp}
    data = {"version": 1, **{k: v for k, v in data.items() if k not in ("version", "projects")}, "projects": projects}
    text = (json.dumps(data, ensure_ascii=False, indent=2) + "\n").encode("utf-8")
    try:
        replace_file(path, lambda handle: handle.write(text), prefix=".approvals-", fsync=True)
    except OSError as exc:
        raise ApprovalsError(exc.errno, f"cannot write {path}: {exc.strerror or exc}") from exc
    return path


def claude_json_path(environ: Mapping[str, str] | None = None) -> Path:
    """The claude flavor's global config: ``$CLAUDE_CONFIG_DIR/.claude.json`` else ``~/.claude.json``."""
    return global_config_path(environ)


def claude_json_flag(flavor: Flavor, key: str, environ: Mapping[str, str] | None = None) -> tuple[bool | None, Diagnostic | None]:
    """The flavor's own approval flag for project ``key`` (``None`` when absent or when the
    flavor has none), from the global config as ``places.claude_json`` reads it (bounded,
    never a FIFO, parsed once per mtime and size). Read-only; a broken file is a diagnostic."""
    if flavor.external_import_flag is None:
        return None, None
    config = read_global_config(environ)
    if config.diagnostic is not None:
        return None, config.diagnostic
    projects = config.data.get("projects")
    entry = projects.get(key) if isinstance(projects, dict) else None
    value = entry.get(flavor.external_import_flag) if isinstance(entry, dict) else None
    return (value if isinstance(value, bool) else None), None


def agent_approval_note(flavor: Flavor) -> tuple[str, str] | None:
    """What a person deciding on external imports should know about the agent's own answer, as
    ``(sentence, details)``: the plain sentence (the agent keeps its own answer, which memtui
    does not change) and the details line (the key and file); ``None`` for a flavor whose agent
    keeps no answer of its own."""
    if flavor.external_import_flag is None:
        return None
    return ("The agent keeps its own answer for this project in ~/.claude.json; memtui does not change it.",
            f"projects[<project>].{flavor.external_import_flag} in ~/.claude.json ($CLAUDE_CONFIG_DIR/.claude.json when set)")


def resolve_approval(
    flavor: Flavor,
    state_dir: Path,
    cwd: Path,
    *,
    approved_external: bool | None = None,
    environ: Mapping[str, str] | None = None,
) -> tuple[ExternalApproval, list[Diagnostic]]:
    """Decide whether external imports load for the project at ``cwd``, and why."""
    key = project_key(cwd)
    diags: list[Diagnostic] = []
    decision, diag = recorded_decision(state_dir, key)
    if diag:
        diags.append(diag)
    flag, diag = claude_json_flag(flavor, key, environ)
    if diag:
        diags.append(diag)
    if decision is not None and flag is not None and (decision == "approved") != flag:
        diags.append(
            Diagnostic(
                "external-approval-mismatch",
                "warning",
                f"memtui records external imports as {decision} for this project, but the agent's own answer in "
                f"{claude_json_path(environ)} is {'approved' if flag else 'declined'}: the agent follows its own answer "
                f"({flavor.external_import_flag} of this project)",
                str(claude_json_path(environ)),
            )
        )
    if approved_external is not None:
        return ExternalApproval(approved_external, decision, "argument", key), diags
    if decision is not None:
        return ExternalApproval(decision == "approved", decision, "memtui", key), diags
    if flag is not None:
        return ExternalApproval(flag, "approved" if flag else "declined", "claude.json", key), diags
    return ExternalApproval(False, None, "default", key), diags
