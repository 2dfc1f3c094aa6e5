"""The instruction cascade (docs/behaviour.md §3): what the agent loads from its instruction files.

``compute_cascade`` computes the startup context (files in load order, each with a reason,
diagnostics, pending external imports, the rendered text); ``new_session`` +
``simulate_read`` step through lazy loading one read at a time; ``list_nested`` (or
``compute_cascade(nested=True)``) lists the nested files below the cwd that a read would load;
``record_decision`` stores the project's external-import decision.
"""

from __future__ import annotations

from .approvals import AffectedImport, ApprovalsError, decision_effect, project_key, record_decision, resolve_approval
from .discovery import compute_cascade
from .lazy import new_session, simulate_read
from .nested import agent_name, list_nested
from .model import (
    Cascade,
    CascadeFile,
    ExternalApproval,
    Kind,
    Layer,
    NestedListing,
    PendingImport,
    ReadStep,
    SessionState,
    Status,
)
from .render import LABELS, PREAMBLE, render_context

__all__ = [
    "LABELS",
    "PREAMBLE",
    "AffectedImport",
    "ApprovalsError",
    "Cascade",
    "CascadeFile",
    "ExternalApproval",
    "Kind",
    "Layer",
    "NestedListing",
    "PendingImport",
    "ReadStep",
    "SessionState",
    "Status",
    "agent_name",
    "compute_cascade",
    "decision_effect",
    "list_nested",
    "new_session",
    "project_key",
    "record_decision",
    "render_context",
    "resolve_approval",
    "simulate_read",
]
