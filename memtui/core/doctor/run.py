"""``run_doctor``: every check of the lint catalog (SPEC §4.3) over one memory dir."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from pathlib import Path

from memtui.core.memory.catalog import load_catalog
from memtui.core.base.diagnostics import Diagnostic
from memtui.core.doctor.content import (
    content_findings,
    instruction_findings,
    secret_findings,
)
from memtui.core.doctor.dates import relative_dates
from memtui.core.doctor.duplicates import NEAR_DUPLICATE_THRESHOLD, duplicate_findings
from memtui.core.doctor.index_checks import index_findings
from memtui.core.doctor.usage_checks import unused_findings
from memtui.core.doctor.model import (
    DOCTOR_CODES,
    DoctorReport,
    Finding,
    finding,
    sort_key,
)
from memtui.core.memory.lint import mtime_datetime
from memtui.core.places.locations import Locations
from memtui.core.memory.index import SEED_WARNING
from memtui.core.memory.memories import MEMORY_TYPES, SEED_FORMAT, TEAM_DIR, Memory
from memtui.core.memory.scancache import ScanCache
from memtui.core.places.behaviour import IndexWarning, MemoryFormat
from memtui.core.sessions.usage import UsageReport

# Parser codes the doctor computes itself (richer: the index's own check, the dates with fixes).
_RECOMPUTED = frozenset({"relative-date", "not-indexed"})


def _relpath(memory_dir: Path, path: str | None) -> str | None:
    if path is None:
        return None
    p = Path(path)
    try:
        return p.relative_to(memory_dir).as_posix()
    except ValueError:
        return path


def _fix_for(memory: Memory, code: str) -> tuple[str | None, dict[str, object]]:
    declared = memory.declared_type
    if code == "type-nested" and declared is not None:
        return ("lift-type" if declared.lower() in MEMORY_TYPES else None), {"declared": declared}
    if code == "type-case" and declared is not None and memory.frontmatter.get("type") == declared:
        return "lower-case-type", {"declared": declared}
    if code == "frontmatter-after-bom":
        return "remove-bom", {}
    if code == "frontmatter-after-blank":
        return "remove-leading-blank", {}
    return None, {}


def _parser_findings(memory: Memory) -> list[Finding]:
    out: list[Finding] = []
    for d in memory.diagnostics:
        if d.code in _RECOMPUTED:
            continue
        fix, data = _fix_for(memory, d.code)
        severity = DOCTOR_CODES[d.code][0] if d.code in DOCTOR_CODES else d.severity
        out.append(Finding(d.code, severity, memory.relpath, d.line, d.message, fix, data))
    return out


def _date_findings(memory: Memory) -> list[Finding]:
    out: list[Finding] = []
    base = mtime_datetime(memory.mtime).date().isoformat()
    for dp in relative_dates(memory):
        if dp.resolved is None:
            meant = "cannot be resolved to a date"
        else:
            meant = f"meant {dp.resolved.isoformat()}"
        where = " in the description" if dp.where == "description" else ""
        message = f"relative date “{dp.phrase}”{where} {meant} (from the file's mtime, {base}); write the absolute date"
        out.append(
            finding(
                "relative-date",
                memory.relpath,
                dp.line,
                message,
                fix="absolute-date" if dp.replacement is not None else None,
                phrase=dp.phrase,
                column=dp.column,
                resolved=dp.resolved.isoformat() if dp.resolved else None,
                replacement=dp.replacement,
                where=dp.where,
            )
        )
    return out


def _stray(memory_dir: Path, diags: Sequence[Diagnostic]) -> list[Finding]:
    out: list[Finding] = []
    for d in diags:
        if d.code in DOCTOR_CODES:
            out.append(finding(d.code, _relpath(memory_dir, d.path), d.line, d.message))
        else:
            out.append(Finding(d.code, d.severity, _relpath(memory_dir, d.path), d.line, d.message))
    return out


def run_doctor(
    memory_dir: Path,
    now: datetime,
    *,
    instruction_texts: Sequence[str] = (),
    near_duplicate_threshold: float = NEAR_DUPLICATE_THRESHOLD,
    cache: ScanCache | None = None,
    fmt: MemoryFormat = SEED_FORMAT,
    warning_style: IndexWarning = SEED_WARNING,
    usage: UsageReport | None = None,
) -> DoctorReport:
    """Audit ``memory_dir`` at time ``now`` against the whole lint catalog (SPEC §4.3).

    ``instruction_texts``: the text of the instruction files the agent loads (AGENT.md, rules);
    a memory repeating one is flagged ``in-instructions``. ``near_duplicate_threshold``: the
    rapidfuzz score (0–100) from which two memories are near-duplicates. ``cache``: the memory
    dir's ``ScanCache`` (unchanged files are not parsed again; their text is still read);
    ``fmt`` / ``warning_style``: the release's memory format and index warning (the cache must
    be that format's). ``usage``: the memories' usage from the agent's transcripts (see
    ``usage_checks``; ``None`` leaves the ``unused`` check out).

    Returns every finding (codes in ``DOCTOR_CODES``), sorted by path and line. Raises
    ``MemoryDirError`` (an ``OSError``) when the dir is missing; a bad file never raises.
    Reads only; writes nothing (fixes are plans: ``fix_plan``).
    """
    catalog = load_catalog(memory_dir, now, cache=cache, fmt=fmt, warning_style=warning_style)
    memories = [e.memory for e in catalog.entries]
    findings: list[Finding] = _stray(memory_dir, catalog.diagnostics)
    for mem in memories:
        findings.extend(_parser_findings(mem))
        findings.extend(_date_findings(mem))
        findings.extend(content_findings(mem))
        findings.extend(secret_findings(mem))
    relpaths = {m.relpath for m in memories}
    findings.extend(index_findings(memory_dir, catalog.index, relpaths))
    if catalog.team_index is not None:
        findings.extend(index_findings(memory_dir, catalog.team_index, relpaths, TEAM_DIR))
    findings.extend(duplicate_findings(memories, threshold=near_duplicate_threshold))
    if instruction_texts:
        findings.extend(instruction_findings(memories, instruction_texts))
    if usage is not None:
        findings.extend(unused_findings(usage, memories))
    findings.sort(key=sort_key)
    return DoctorReport(memory_dir, tuple(findings), len(memories))


def instruction_texts(locations: Locations, cwd: Path | None = None) -> list[str]:
    """The text of every instruction file the agent loads at ``cwd`` (default: the project
    root) — not the memory indexes: what a memory should not repeat. A cascade that cannot be
    computed leaves the ``in-instructions`` check out (``[]``)."""
    from memtui.core.cascade import compute_cascade

    try:
        cascade = compute_cascade(locations, cwd or locations.project_root)
    except (OSError, ValueError):
        return []
    return [f.content for f in cascade.files if f.content and f.layer not in ("automem", "teammem")]
