"""``run_doctor``: every check of the lint catalog (docs/behaviour.md §4.3) over one memory dir."""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Callable, Iterable, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, replace
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import cast

from memtui.core.memory.catalog import load_catalog
from memtui.core.base.diagnostics import Diagnostic
from memtui.core.base.gcpause import gc_paused
from memtui.core.doctor.content import (
    content_findings,
    instruction_finding,
    normalize_prose,
    second_block_findings,
    secret_findings,
)
from memtui.core.doctor.dates import memory_date_base, relative_dates
from memtui.core.doctor.duplicates import (
    NEAR_DUPLICATE_THRESHOLD,
    NearTexts,
    block_of,
    body_key,
    duplicate_findings,
    near_duplicate_pairs,
    near_pairs_fingerprint,
    near_text,
    store_near_pairs,
    stored_near_pairs,
    SketchBook,
)
from memtui.core.doctor.index_checks import index_findings
from memtui.core.doctor.kept import KeptFindings, KeptReport, keep_report, kept_report, report_fingerprint
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
from memtui.core.memory.memories import MEMORY_TYPES, SEED_FORMAT, TEAM_DIR, Memory, with_text
from memtui.core.places.behaviour import IndexWarning, MemoryFormat
from memtui.core.memory.catalogdb import CatalogDB, code_fingerprint, jsonable, pack
from memtui.core.sessions.usage import UsageReport
from memtui.core.verify.check import MemoryVerification, VerifyReport, verify_memories
from memtui.core.verify.claims import Claim, claims_from_json, claims_to_json, memory_claims
from memtui.core.verify.conflicts import (
    MAX_VALUES,
    Conflict,
    Value,
    find_conflicts,
    values_and_subject,
    values_capped,
    values_from_json,
    values_to_json,
)
from memtui.core.verify.grep import DEFAULT_TIMEOUT_S

# Claude's judgement of conflicts (``memtui.core.verify.judge``): given the memories and the
# offline rule's conflicts, the conflicts to report and a note (an error, the model's count).
ConflictJudge = Callable[[Sequence[Memory], Sequence[Conflict]], tuple[list[Conflict], str | None]]

# Parser codes the doctor computes itself (richer: the index's own check, the dates with fixes).
_RECOMPUTED = frozenset({"relative-date", "not-indexed"})
# What the doctor keeps per memory in the catalog database (``CatalogDB.derived``): the findings
# made from the memory's text alone (dates, content, secrets), its body key, the values it
# states and its subject terms (the conflict check's inputs), under a fingerprint of the code that makes them; its
# claims about the code (the claims check's input) under one of the code that finds them; the
# ``in-instructions`` result under one of the code and the instruction texts; the
# near-duplicate pairs of the whole dir (``CatalogDB.result``). A warm run with nothing changed
# reads no memory file; with nothing below the memory dir changed it takes the whole report
# (``memtui.core.doctor.kept``) and checks only the claims about the code again.
FACTS_KIND = "doctor"
CLAIMS_KIND = "doctor-claims"
INSTRUCTIONS_KIND = "doctor-in-instructions"
NEAR_KIND = "doctor-near-duplicates"
_FACTS_MODULES = (
    "doctor/run",
    "doctor/dates",
    "doctor/content",
    "doctor/model",
    "doctor/duplicates",
    "memory/secretscan",
    "memory/lint",
    "memory/memories",
    "memory/frontmatter",
    "verify/conflicts",
)
_CLAIMS_MODULES = ("doctor/run", "verify/claims", "memory/memories", "memory/frontmatter")


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


_WEEK_PHRASE = re.compile(r"\bweek(?:end)?\b|周|週|주", re.IGNORECASE)
_MONTH_PHRASE = re.compile(r"\bmonth\b|月|달", re.IGNORECASE)
_YEAR_PHRASE = re.compile(r"\byear\b|年", re.IGNORECASE)
_QUARTER_PHRASE = re.compile(r"\bquarter\b", re.IGNORECASE)
_DAY_IN_WEEK = re.compile(r"(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)|[一二三四五六日天]$|曜日|요일", re.IGNORECASE)


def _meant(phrase: str, resolved: date | None) -> str:
    """What a relative phrase meant, as precisely as it says: a day, the week of a Monday, a
    month, a year ("next week" names no day)."""
    if resolved is None:
        return "cannot be resolved to a date"
    if _DAY_IN_WEEK.search(phrase):
        return f"meant {resolved.isoformat()}"
    if _WEEK_PHRASE.search(phrase):
        monday = resolved - timedelta(days=resolved.weekday())
        return f"meant the week of {monday.isoformat()}"
    if _MONTH_PHRASE.search(phrase) or _QUARTER_PHRASE.search(phrase):
        return f"meant {resolved.strftime('%Y-%m')}"
    if _YEAR_PHRASE.search(phrase):
        return f"meant {resolved.year}"
    return f"meant {resolved.isoformat()}"


def _date_findings(memory: Memory) -> list[Finding]:
    out: list[Finding] = []
    base = memory_date_base(memory)
    for dp in relative_dates(memory):
        meant = _meant(dp.phrase, dp.resolved)
        where = " in the description" if dp.where == "description" else ""
        message = f"relative date “{dp.phrase}”{where} {meant} (from {base.describe()}); write the absolute date"
        out.append(
            finding(
                "relative-date",
                memory.relpath,
                dp.line,
                message,
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


def _text_findings(memory: Memory) -> list[Finding]:
    """The findings of one memory made from its text alone (``memory`` holds its text)."""
    return [*_date_findings(memory), *content_findings(memory), *secret_findings(memory), *second_block_findings([memory])]


# One memory's facts: its text-only findings, its body key, the values it states, its subject
# terms (only when it states a value: the conflict rule compares no other memory).
Facts = tuple[list[Finding], str | None, list[Value], set[str]]


def _encode_facts(findings: list[Finding], key: str | None, values: list[Value], subject: set[str]) -> bytes | None:
    raw = [[f.code, f.line, f.message, f.fix, dict(f.data)] for f in findings]
    stated = values_to_json(values)
    terms = sorted(subject)
    return pack([raw, key, stated, terms]) if jsonable(raw) and jsonable(stated) and jsonable(terms) else None


def _decode_facts(relpath: str, blob: bytes) -> Facts | None:
    import orjson

    try:
        raw, key, stated, terms = orjson.loads(blob)
        findings = [
            Finding(code, DOCTOR_CODES[code][0], relpath, line, message, fix, data)
            for code, line, message, fix, data in raw
            if isinstance(message, str) and isinstance(data, dict) and (line is None or isinstance(line, int))
        ]
        if len(findings) != len(raw) or not (key is None or isinstance(key, str)):
            return None
        values = values_from_json(stated)
        if not isinstance(terms, list) or not all(isinstance(t, str) for t in terms):
            return None
        subject = set(terms)
    except (orjson.JSONDecodeError, TypeError, ValueError, KeyError):
        return None
    return findings, key, values, subject


def _decode_claims(blob: bytes) -> list[Claim] | None:
    import orjson

    try:
        return claims_from_json(orjson.loads(blob))
    except (orjson.JSONDecodeError, ValueError):
        return None


class DoctorCancelled(Exception):
    """Raised by a ``progress`` callback to stop ``run_doctor`` (the user cancelled)."""


# progress(stage, done, total): see ``run_doctor``
DoctorProgress = Callable[[str, int, int], None]


def _no_progress(stage: str, done: int, total: int) -> None:
    """No one follows the run."""

def run_doctor(
    memory_dir: Path,
    now: datetime,
    *,
    instruction_texts: Sequence[str] = (),
    near_duplicate_threshold: float = NEAR_DUPLICATE_THRESHOLD,
    cache: CatalogDB | None = None,
    fmt: MemoryFormat = SEED_FORMAT,
    warning_style: IndexWarning = SEED_WARNING,
    project_root: Path | None = None,
    verify_timeout: float = DEFAULT_TIMEOUT_S,
    judge: ConflictJudge | None = None,
    usage: UsageReport | None = None,
    missing_ok: bool = False,
    progress: DoctorProgress | None = None,
) -> DoctorReport:
    """Audit ``memory_dir`` at time ``now`` against the whole lint catalog (docs/behaviour.md §4.3).

    ``instruction_texts``: the text of the instruction files the agent loads (AGENT.md, rules);
    a memory repeating one is flagged ``in-instructions``. ``near_duplicate_threshold``: the
    rapidfuzz score (0–100) from which two memories are near-duplicates. ``cache``: the memory
    dir's ``CatalogDB``: unchanged files are not parsed again, and what the doctor found in a
    file whose bytes did not change (dates, content, secrets, its body key, its repeating of
    the instructions) and the near-duplicate pairs of an unchanged dir are kept there and not
    made again, nor the values and claims about the code it states (the conflict and claims
    checks' inputs): a run with nothing changed reads no memory file. When nothing below the
    memory dir changed since a run with the same inputs (instruction texts, usage, options,
    code; ``memtui.core.doctor.kept``) and no ``judge`` is given, that run's findings are taken
    whole from ``cache`` and only the claims check runs again. ``fmt`` /
    ``warning_style``: the release's memory format and index warning (the database must be that
    format's). ``project_root``: the directory the memories' claims about the code are checked
    against (``memtui.core.verify``: ``stale-*`` findings; ``None`` skips the check), the read
    of its files bounded by ``verify_timeout`` seconds. ``judge``: Claude's judgement of
    conflicts (else the offline rule's ``possible-conflict`` findings stand). ``usage``: the memories' usage from the agent's transcripts (see
    ``usage_checks``; ``None`` leaves the ``unused`` check out).

    Returns every finding (codes in ``DOCTOR_CODES``), sorted by path and line. Raises
    ``MemoryDirError`` (an ``OSError``) when the dir is missing, unless ``missing_ok`` (a dir the
    agent has not created yet is audited as empty); a bad file never raises.
    Reads only; writes nothing to the memory dir (fixes are plans: ``fix_plan``).
    """
    with gc_paused():  # 20,000 memories' decoded facts and findings: no cyclic collection walking them meanwhile
        return _run_doctor(memory_dir, now, instruction_texts, near_duplicate_threshold, cache, fmt, warning_style, usage,
                           project_root, verify_timeout, judge, missing_ok, progress or _no_progress)



def _run_doctor(
    memory_dir: Path,
    now: datetime,
    instruction_texts: Sequence[str],
    near_duplicate_threshold: float,
    cache: CatalogDB | None,
    fmt: MemoryFormat,
    warning_style: IndexWarning,
    usage: UsageReport | None,
    project_root: Path | None,
    verify_timeout: float,
    judge: ConflictJudge | None,
    missing_ok: bool,
    progress: DoctorProgress,
) -> DoctorReport:
    progress("reading", 0, 0)
    db = cache if cache is not None and cache.enabled else None
    haystacks = [normalize_prose(t) for t in instruction_texts if t.strip()]
    report_fp: str | None = None
    if db is not None and judge is None:  # Claude's judgement is asked each time
        report_fp = report_fingerprint(memory_dir, fmt=fmt, warning_style=warning_style, threshold=near_duplicate_threshold,
                                       haystacks=haystacks, claims=project_root is not None, usage=usage)
        kept = kept_report(db, report_fp) if report_fp is not None else None
        if kept is not None:
            return _from_kept(memory_dir, kept, project_root, verify_timeout)
    catalog = load_catalog(memory_dir, now, cache=cache, fmt=fmt, warning_style=warning_style, missing_ok=missing_ok)
    memories = [e.memory for e in catalog.entries]
    findings: list[Finding] = _stray(memory_dir, catalog.diagnostics)
    facts_fp = code_fingerprint(_FACTS_MODULES)
    stored = db.derived(FACTS_KIND, facts_fp) if db is not None else {}
    instr_fp = ""
    stored_instr: dict[str, tuple[str, bytes]] = {}
    if haystacks:
        digest = hashlib.sha256(facts_fp.encode())
        for hay in haystacks:
            digest.update(hay.encode("utf-8", "surrogatepass") + b"\0")
        instr_fp = digest.hexdigest()
        stored_instr = db.derived(INSTRUCTIONS_KIND, instr_fp) if db is not None else {}
    blocks = [block_of(m) for m in memories]
    near_fp = near_pairs_fingerprint(memories, blocks, near_duplicate_threshold)
    pairs = stored_near_pairs(db, NEAR_KIND, near_fp)
    book = SketchBook(db) if pairs is None else None
    claims_fp = code_fingerprint(_CLAIMS_MODULES) if project_root is not None else ""
    stored_claims = db.derived(CLAIMS_KIND, claims_fp) if db is not None and project_root is not None else {}

    body_keys: list[str | None] = []
    instr_found: list[Finding] = []
    new_facts: dict[str, tuple[str, bytes]] = {}
    new_instr: dict[str, tuple[str, bytes]] = {}
    new_claims: dict[str, tuple[str, bytes]] = {}
    values_of: dict[str, list[Value]] = {}
    subject_of: dict[str, set[str]] = {}
    claims_of: dict[str, list[Claim]] = {}
    total = len(memories)
    progress("reading", 0, total)
    for done, mem in enumerate(memories, start=1):
        findings.extend(_parser_findings(mem))
        row_key = db.stored_key(mem.relpath) if db is not None else None
        facts = None
        if (hit := stored.get(mem.relpath)) is not None and hit[0] == row_key:
            facts = _decode_facts(mem.relpath, hit[1])
        instr: Finding | None | bool = False  # False: not known yet
        if haystacks and (ihit := stored_instr.get(mem.relpath)) is not None and ihit[0] == row_key:
            instr = _decode_instruction(mem.relpath, ihit[1])
        claims: list[Claim] | None = None
        if project_root is not None and (chit := stored_claims.get(mem.relpath)) is not None and chit[0] == row_key:
            claims = _decode_claims(chit[1])
        full: Memory | None = None
        same = False
        sketch_text = book is not None and book.needs_text(mem.relpath, row_key)
        if facts is None or (haystacks and instr is False) or sketch_text or (project_root is not None and claims is None):
            full, same = with_text(mem)
        if facts is None:
            assert full is not None
            values, subject = values_and_subject(full)
            facts = (_text_findings(full), body_key(full.body), values, subject)
            if same and row_key is not None and (blob := _encode_facts(*facts)) is not None:
                new_facts[mem.relpath] = (row_key, blob)
        findings.extend(facts[0])
        body_keys.append(facts[1])
        values_of[mem.relpath] = facts[2]
        if facts[2]:
            subject_of[mem.relpath] = facts[3]
        if project_root is not None:
            if claims is None:
                assert full is not None
                claims = memory_claims(full)
                if same and row_key is not None:
                    new_claims[mem.relpath] = (row_key, pack(claims_to_json(claims)))
            claims_of[mem.relpath] = claims
        if haystacks:
            if instr is False:
                assert full is not None
                instr = instruction_finding(full, haystacks)
                if same and row_key is not None:
                    new_instr[mem.relpath] = (row_key, _encode_instruction(instr))
            if isinstance(instr, Finding):
                instr_found.append(instr)
        if book is not None:
            book.add(mem.relpath, row_key, near_text(full) if sketch_text and full is not None else None, keep=same)
        progress("reading", done, total)
    progress("comparing", 0, total)
    if db is not None:
        db.put_derived(FACTS_KIND, facts_fp, new_facts)
        if new_instr:
            db.put_derived(INSTRUCTIONS_KIND, instr_fp, new_instr)
        if new_claims:
            db.put_derived(CLAIMS_KIND, claims_fp, new_claims)
    relpaths = {m.relpath for m in memories}
    findings.extend(index_findings(memory_dir, catalog.index, relpaths))
    if catalog.team_index is not None:
        findings.extend(index_findings(memory_dir, catalog.team_index, relpaths, TEAM_DIR))
    if pairs is None:
        pairs = near_duplicate_pairs(NearTexts(memories), blocks, threshold=near_duplicate_threshold, sketches=book.finish() if book is not None else None)
        store_near_pairs(db, NEAR_KIND, near_fp, pairs)
    findings.extend(duplicate_findings(memories, threshold=near_duplicate_threshold, body_keys=body_keys, pairs=pairs))
    findings.extend(instr_found)
    conflicts = find_conflicts(memories, values_of, subject_of)
    notes: list[str] = []
    if judge is not None:
        conflicts, note = judge([with_text(m)[0] for m in memories], conflicts)  # Claude reads the pairs' texts
        if note:
            notes.append(note)
    findings.extend(conflict_findings(conflicts, {rel for rel, found in values_of.items() if values_capped(found)}))
    verification: VerifyReport | None = None
    verified: list[Finding] = []
    if project_root is not None:
        progress("checking", 0, total)
        verification = verify_memories(memories, project_root, exclude=[memory_dir], timeout=verify_timeout, claims=claims_of)
        verified = verify_findings(verification)
    findings.extend(unused_findings(usage, memories) if usage is not None else [])
    # sorted without the claims check's findings first (what is kept: they depend on the
    # project's files), then with them: no finding of theirs has another's code, so no two
    # findings of the two sorts tie, and the order is the one of a single sort
    findings.sort(key=sort_key)
    rendered: bytes | None = None
    if report_fp is not None and db is not None:
        rendered = keep_report(db, report_fp, findings, [m.relpath for m in memories], claims_of)
    if verified:
        findings.extend(verified)
        findings.sort(key=sort_key)
        rendered = None
    if not jsonable(str(memory_dir)):
        rendered = None  # the report's text then comes from the standard library's encoder
    return DoctorReport(memory_dir, tuple(findings), len(memories), verification=verification, notes=tuple(notes), rendered=rendered)


@dataclass(frozen=True, slots=True)
class _Claimant:
    """What ``verify_memories`` reads of a memory whose claims are given: its relpath and path."""

    relpath: str
    file: str


def _from_kept(memory_dir: Path, kept: KeptReport, project_root: Path | None, verify_timeout: float) -> DoctorReport:
    """The report of an unchanged memory dir from ``kept``, the claims about the code checked
    against the project as it is now."""
    findings: Sequence[Finding] = kept.findings
    counted: dict[str, int] | None = kept.counts
    rendered = kept.rendered
    verification: VerifyReport | None = None
    if project_root is not None:
        top = os.path.join(memory_dir, "")  # as the scan joins a relpath to the dir
        # only the memories that state claims are checked; the others' results are empty
        claimants = [_Claimant(rel, top + rel) for rel in kept.relpaths if rel in kept.claims]
        checked = verify_memories(cast("list[Memory]", claimants), project_root, exclude=[memory_dir], timeout=verify_timeout, claims=kept.claims)
        results = checked.memories
        verification = replace(checked, memories={rel: results.get(rel) or MemoryVerification(rel, ()) for rel in kept.relpaths})
        verified = verify_findings(verification)
        if verified:
            findings = sorted([*findings, *verified], key=sort_key)
            counted = None
            rendered = None
    if not jsonable(str(memory_dir)):
        rendered = None  # the report's text then comes from the standard library's encoder
    return DoctorReport(memory_dir, findings if isinstance(findings, KeptFindings) else tuple(findings), len(kept.relpaths),
                        verification=verification, rendered=rendered, counted=counted)


def verify_findings(report: VerifyReport) -> list[Finding]:
    """The ``stale-*`` (and ``verify-incomplete``) findings of a verification."""
    return [Finding(v.code, v.severity, v.relpath, v.line, v.message, None, v.data) for v in report.findings()]


def _age_words(older: float, newer: float) -> str:
    days = int((newer - older) // 86_400)
    return "the same day" if days < 1 else f"{days} day{'s' if days != 1 else ''} newer"


def conflict_findings(conflicts: Iterable[Conflict], capped: AbstractSet[str] = frozenset()) -> list[Finding]:
    """One ``possible-conflict`` finding per conflict, on the older memory, naming both files
    and the differing values (no fix: which one is right is the user's call). ``capped``: the
    relpaths of memories whose values stopped at ``MAX_VALUES`` (the finding says so)."""
    out: list[Finding] = []
    for c in conflicts:
        line = c.values[0].older_line if c.values else None
        by = " (Claude's judgement)" if c.source == "claude" else ""
        message = f"may contradict {c.newer} ({_age_words(c.older_mtime, c.newer_mtime)}){by}: {c.describe()}. If they speak of the same thing and the newer one is right, update or delete this one"
        over = [rel for rel in (c.older, c.newer) if rel in capped]
        if over:
            message += f" (only the first {MAX_VALUES} values of {' and '.join(over)} were compared: {'it states' if len(over) == 1 else 'they state'} more)"
        out.append(finding("possible-conflict", c.older, line, message, other=c.newer, conflict=c.to_json()))
    return out


def _encode_instruction(found: Finding | None) -> bytes:
    return pack(None if found is None else [found.line, found.message])


def _decode_instruction(relpath: str, blob: bytes) -> Finding | None | bool:
    """The stored ``in-instructions`` result (``None``: none), ``False`` when unreadable."""
    import orjson

    try:
        raw = orjson.loads(blob)
        if raw is None:
            return None
        line, message = raw
        if isinstance(message, str) and (line is None or isinstance(line, int)):
            return finding("in-instructions", relpath, line, message)
    except (orjson.JSONDecodeError, TypeError, ValueError):
        pass
    return False


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
