"""Trust but verify: memories checked against the code and against each other.

- ``verify_memories(memories, root)`` → ``VerifyReport``: every path, line, anchor, symbol and
  task-runner target a memory names, checked against the project (``memtui.core.verify.check``);
- ``verify_root(locations)``: the directory claims are checked against (the canonical git root,
  else the project dir);
- ``find_conflicts(memories)`` → ``Conflict`` pairs: memories on the same subject that disagree
  on a date, a number, a version, a name or a yes/no (``memtui.core.verify.conflicts``).

Nothing here writes.
"""

from __future__ import annotations

from pathlib import Path

from memtui.core.places.locations import Locations

from .check import VERIFY_CODES, ClaimResult, MemoryVerification, VerifyFinding, VerifyReport, verify_memories
from .claims import Claim, memory_claims


def verify_root(locations: Locations) -> Path:
    """The directory claims are checked against: the canonical git root (every worktree of a
    repository shares its memory, so its claims are about the main checkout), else the git
    root, else the project dir."""
    return locations.canonical_git_root or locations.git_root or locations.project_root


__all__ = [
    "VERIFY_CODES",
    "Claim",
    "ClaimResult",
    "MemoryVerification",
    "VerifyFinding",
    "VerifyReport",
    "memory_claims",
    "verify_memories",
    "verify_root",
]
