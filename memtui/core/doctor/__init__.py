"""The doctor (docs/behaviour.md §4.3): every check of the lint catalog over a memory dir, as findings
``{code, severity, path, line, message, fix}``, and safe fixes as edit plans.

``run_doctor(memory_dir, now, instruction_texts=...)`` → ``DoctorReport``; ``fix_plan(memory_dir,
finding)`` / ``combined_fix_plan(memory_dir, findings)`` → ``memtui.core.writes.edits.Plan`` (apply with
``apply_plan``, undo with ``undo``). ``DOCTOR_CODES``: code → (severity, meaning); ``FIXES``:
fix id → what it does.
"""

from __future__ import annotations

from .duplicates import NEAR_DUPLICATE_THRESHOLD, PREFILTER_JACCARD
from .fixes import FixError, combined_fix_plan, fix_plan
from .model import CERTAIN_FIXES, DOCTOR_CODES, FIX_OF_CODE, FIXES, DoctorReport, Finding
from .run import DoctorCancelled, DoctorProgress, instruction_texts, run_doctor

__all__ = [
    "CERTAIN_FIXES",
    "DOCTOR_CODES",
    "FIXES",
    "FIX_OF_CODE",
    "NEAR_DUPLICATE_THRESHOLD",
    "PREFILTER_JACCARD",
    "DoctorCancelled",
    "DoctorProgress",
    "DoctorReport",
    "Finding",
    "FixError",
    "combined_fix_plan",
    "fix_plan",
    "instruction_texts",
    "run_doctor",
]
