"""``run_doctor``: every check of the lint catalog (SPEC §4.3) over one memory dir."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from datetime import datetime
from pathlib import Path

from memtui.core.memory.catalog import load_catalog
from memtui.core.base.diagnostics import Diagnostic
from memtui.core.doctor.content import (
    content_findings,
    instruction_findings,
    second_block_findings,
    secret_findings,
)
from memtui.core.doctor.dates import memory_date_base, relative_dates
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
from memtui.core.places.locations import Locations
from memtui.core.memory.index import SEED_WARNING
from memtui.core.memory.memories import MEMORY_TYPES, SEED_FORMAT, TEAM_DIR, Memory
from memtui.core.memory.scancache import ScanCache
from memtui.core.places.behaviour import IndexWarning, MemoryFormat
from memtui.core.sessions.usage import UsageReport
from memtui.core.verify.check import VerifyReport, verify_memories
from memtui.core.verify.conflicts import Conflict, find_conflicts
from memtui.core.verify.grep import DEFAULT_TIMEOUT_S

# Claude's judgement of conflicts (``memtui.core.verify.judge``): given the memories and the
# offline rule's conflicts, the conflicts to report and a note (an error, the model's count).
ConflictJudge = Callable[[Sequence[Memory], Sequence[Conflict]], tuple[list[Conflict], str | None]]

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
    base = memory_date_base(memory)
    for dp in relative_dates(memory):
        if dp.resolved is None:
            meant = "cannot be resolved to a date"
        else:
            meant = f"meant {dp.resolved.isoformat()}"
        where = " in the description" if dp.where == "description" else ""
        message = f"relative date “{dp.phrase}”{where} {meant} (from {base.describe()}); write the absolute date"
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
                base=base.source,
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
    project_root: Path | None = None,
    verify_timeout: float = DEFAULT_TIMEOUT_S,
    judge: ConflictJudge | None = None,
    usage: UsageReport | None = None,
) -> DoctorReport:
    """Audit ``memory_dir`` at time ``now`` against the whole lint catalog (SPEC §4.3).

    ``instruction_texts``: the text of the instruction files the agent loads (AGENT.md, rules);
    a memory repeating one is flagged ``in-instructions``. ``near_duplicate_threshold``: the
    rapidfuzz score (0–100) from which two memories are near-duplicates. ``cache``: the memory
    dir's ``ScanCache`` (unchanged files are not parsed again; their text is still read);
    ``fmt`` / ``warning_style``: the release's memory format and index warning (the cache must
    be that format's). ``project_root``: the directory the memories' claims about the code are
    checked against (``memtui.core.verify``: ``stale-*`` findings; ``None`` skips the check), the
    read of its files bounded by ``verify_timeout`` seconds. ``judge``: Claude's judgement of
    conflicts (else the offline rule's ``possible-conflict`` findings stand). ``usage``: the memories' usage from the
    agent's transcripts (see ``usage_checks``; ``None`` leaves the ``unused`` check out).

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
    findings.extend(second_block_findings(memories))
    conflicts = find_conflicts(memories)
    notes: list[str] = []
    if judge is not None:
        conflicts, note = judge(memories, conflicts)
        if note:
            notes.append(note)
    findings.extend(conflict_findings(conflicts))
    verification: VerifyReport | None = None
    if project_root is not None:
        verification = verify_memories(memories, project_root, exclude=[memory_dir], timeout=verify_timeout)
        findings.extend(verify_findings(verification))
    if usage is not None:
        findings.extend(unused_findings(usage, memories))
    findings.sort(key=sort_key)
    return DoctorReport(memory_dir, tuple(findings), len(memories), verification=verification, notes=tuple(notes))


def verify_findings(report: VerifyReport) -> list[Finding]:
    """The ``stale-*`` (and ``verify-incomplete``) findings of a verification."""
    return [finding(v.code, v.relpath, v.line, v.message, **v.data) for v in report.findings()]


def _age_words(older: float, newer: float) -> str:
    days = int((newer - older) // 86_400)
    return "the same day" if days < 1 else f"{days} day{'s' if days != 1 else ''} newer"


def conflict_findings(conflicts: Iterable[Conflict]) -> list[Finding]:
    """One ``possible-conflict`` finding per conflict, on the older memory, naming both files
    and the differing values; its fix marks the older one superseded."""
    out: list[Finding] = []
    for c in conflicts:
        line = c.values[0].older_line if c.values else None
        by = " (Claude's judgement)" if c.source == "claude" else ""
        message = f"may contradict {c.newer} ({_age_words(c.older_mtime, c.newer_mtime)}){by}: {c.describe()}. If the newer one is right, mark this one superseded"
        out.append(finding("possible-conflict", c.older, line, message, fix="mark-superseded", other=c.newer, conflict=c.to_json()))
    return out


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
