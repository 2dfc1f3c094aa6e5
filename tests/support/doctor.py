"""Shared helpers for the doctor tests: write memory files with a chosen mtime, run the doctor."""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path

from memtui.core.doctor import DoctorReport, Finding, run_doctor

NOW = datetime(2026, 3, 10, 12, tzinfo=UTC)
# Monday 2026-03-02 09:00 UTC: the fixture's mtime for relative dates.
MONDAY = datetime(2026, 3, 2, 9, tzinfo=UTC).timestamp()

CLEAN_FEEDBACK = (
    "---\nname: Squash merges\ndescription: PRs in this repo are squashed into one commit\ntype: feedback\n---\n\n"
    "Squash every PR into a single commit.\n\n**Why:** the history stays bisectable.\n\n"
    "**How to apply:** use the squash button, never a merge commit.\n"
)
CLEAN_INDEX = "# Memory index\n\n- [Squash merges](feedback_squash.md) — one commit per PR\n"


def write(memory_dir: Path, relpath: str, content: str | bytes, mtime: float = MONDAY) -> Path:
    path = memory_dir / relpath
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, str):
        path.write_bytes(content.encode("utf-8"))
    else:
        path.write_bytes(content)
    os.utime(path, (mtime, mtime))
    return path


def clean_dir(tmp_path: Path) -> Path:
    """A memory dir with one well-formed, indexed feedback memory: the doctor finds nothing."""
    memory_dir = tmp_path / "memory"
    memory_dir.mkdir()
    write(memory_dir, "feedback_squash.md", CLEAN_FEEDBACK)
    write(memory_dir, "MEMORY.md", CLEAN_INDEX)
    return memory_dir


def doctor(memory_dir: Path, **kwargs: object) -> DoctorReport:
    return run_doctor(memory_dir, NOW, **kwargs)  # type: ignore[arg-type]


def only(report: DoctorReport, code: str, path: str | None = None) -> list[Finding]:
    return [f for f in report.findings if f.code == code and (path is None or f.path == path)]


def codes_of(report: DoctorReport, path: str) -> list[str]:
    return sorted(f.code for f in report.findings if f.path == path)
