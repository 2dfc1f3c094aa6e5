"""Doctor checks on the project around a memory dir rather than on the memories in it.

- ``unread-memory-folder``: a memory folder committed to the repository (``.claude/memory/``
  with Markdown files in it) that is not the memory dir the agent resolves. Claude Code reads
  its memories from ``~/.claude/projects/<slug>/memory/`` unless ``autoMemoryDirectory`` (an
  absolute path, from the settings layers its release reads: ``memtui where`` names them) points
  elsewhere: a folder of memories in the repository that the resolution does not reach is loaded
  by no session, however current it looks.
"""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

from memtui.core.doctor.model import DoctorReport, Finding, finding, sort_key
from memtui.core.places.locations import Locations

# Where people commit a copy of Claude Code's memory folder, relative to the project root.
COMMITTED_MEMORY_FOLDERS = (".claude/memory",)
# memtui's bound on the files looked at in one such folder (a count is all the finding needs).
MAX_LISTED = 10_000


def _memory_count(folder: Path) -> int:
    """The memory files in ``folder``: ``.md`` files other than a README, counted only when the
    folder has an index (``MEMORY.md``) or one of them opens with a frontmatter block (a folder of
    notes or an empty export target is no memory folder)."""
    count = 0
    looks_like_memory = False
    try:
        with os.scandir(folder) as entries:
            for n, entry in enumerate(entries):
                if n >= MAX_LISTED:
                    break
                name = entry.name
                if not name.endswith(".md") or name.upper().startswith("README") or not entry.is_file(follow_symlinks=False):
                    continue
                if name == "MEMORY.md":
                    looks_like_memory = True
                    continue
                count += 1
                if not looks_like_memory:
                    looks_like_memory = _opens_with_frontmatter(Path(entry.path))
    except OSError:
        return 0
    return count if looks_like_memory else 0


def _opens_with_frontmatter(path: Path) -> bool:
    try:
        with path.open("rb") as fh:
            return fh.read(8).lstrip(b"\xef\xbb\xbf").startswith(b"---")
    except OSError:
        return False


def _same_or_inside(a: Path, b: Path) -> bool:
    try:
        ra, rb = a.resolve(), b.resolve()
    except (OSError, RuntimeError):
        return False
    return ra == rb or ra.is_relative_to(rb) or rb.is_relative_to(ra)


def project_findings(locations: Locations) -> list[Finding]:
    """The project-level findings for ``locations`` (the claude flavor only: the seed design
    says nothing of where else memories may lie). Reads only; never raises for a bad folder."""
    if locations.flavor.name != "claude":
        return []
    out: list[Finding] = []
    roots = dict.fromkeys(p for p in (locations.project_root, locations.git_root, locations.canonical_git_root) if p is not None)
    for root in roots:
        for rel in COMMITTED_MEMORY_FOLDERS:
            folder = root / rel
            try:
                if folder.is_symlink() or not folder.is_dir() or _same_or_inside(folder, locations.memory_dir):
                    continue
            except OSError:
                continue  # a folder that cannot be looked at (no permission): nothing to say
            files = _memory_count(folder)
            if not files:
                continue
            out.append(
                finding(
                    "unread-memory-folder",
                    None,
                    None,
                    f"{folder}: {files} memor{'ies' if files != 1 else 'y'} Claude Code never reads (it reads {locations.memory_dir}; `memtui where` says why)",
                    folder=str(folder),
                    files=files,
                    memory_dir=str(locations.memory_dir),
                )
            )
    return out


# The stores findings doctor repeats (``memtui.core.stores``); ``store-never-read`` is
# ``unread-memory-folder`` here.
STORE_CODES_IN_DOCTOR = ("store-written-not-read", "store-split", "auto-memory-off", "memory-setting-ignored")


def store_findings(locations: Locations) -> list[Finding]:
    """The findings of ``memtui stores`` (claude flavor; not with ``--memory-dir``, which
    names the store itself) as doctor findings: the fix's command, or its words, end the
    message; ``data`` holds the finding's JSON (both paths, the evidence, the fixes)."""
    if locations.flavor.name != "claude" or locations.memory_dir_source == "option":
        return []
    from memtui.core.stores.audit import audit_stores

    out: list[Finding] = []
    for f in audit_stores(locations).findings:
        if f.code not in STORE_CODES_IN_DOCTOR:
            continue
        fix = f.fixes[0] if f.fixes else None
        tail = f" — fix: `{fix.command}`" if fix is not None and fix.command else f" — fix: {fix.text}" if fix is not None else ""
        out.append(Finding(f.code, f.severity, None, None, f.message + tail, None, f.to_json()))
    return out


def add_project_findings(report: DoctorReport, locations: Locations) -> DoctorReport:
    """``report`` with ``project_findings(locations)`` and ``store_findings(locations)`` among
    its findings (in report order)."""
    extra = project_findings(locations) + store_findings(locations)
    if not extra:
        return report
    return replace(report, findings=tuple(sorted([*extra, *report.findings], key=sort_key)), rendered=None, counted=None)
