"""``memtui verify [--json]``: every memory's claims about the code checked against the project
(the canonical git root), and memories that contradict each other. Nothing is written.

Exit status: 0 (stale claims and conflicts are findings, not failures); 2 for a usage error.
"""

from __future__ import annotations

import click

from memtui.commands.common import CliContext, common_options, emit_json, say, user_errors
from memtui.core.base.wording import counted
from memtui.core.base.terminal import visible
from memtui.core.memory.catalogdb import CatalogDB
from memtui.core.memory.memories import scan_memories, with_text
from memtui.core.verify import verify_memories, verify_root
from memtui.core.verify.conflicts import find_conflicts
from memtui.core.verify.grep import DEFAULT_TIMEOUT_S
from memtui.core.verify.judge import auto_judge


@click.command("verify")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.option("--timeout", type=click.FloatRange(min=0.1), default=DEFAULT_TIMEOUT_S, show_default=True, help="Seconds the symbol search may take.")
@click.option("--judge", type=click.Choice(["auto", "offline", "claude"]), default="auto", show_default=True, help="Conflicts: the offline rule, or Claude's judgement (auto: when an API key is set).")
@common_options
@click.pass_obj
@user_errors
def verify_cmd(obj: CliContext, as_json: bool, timeout: float, judge: str) -> None:
    """Check what the memories say about the code (paths, lines, symbols, commands) against the
    project, and find memories that contradict each other."""
    locations = obj.locations
    memory_dir, exists = obj.readable_memory_dir()
    fmt = locations.flavor.behaviour.memory_format
    cache = CatalogDB.for_memory_dir(locations.state_dir, memory_dir, fmt=fmt) if exists else None
    scan = scan_memories(memory_dir, cache=cache, fmt=fmt, missing_ok=True)
    memories = [with_text(m)[0] for m in scan.memories]  # every body is read: one read each
    root = verify_root(locations)
    report = verify_memories(memories, root, exclude=[memory_dir], timeout=timeout)
    conflicts = find_conflicts(memories)
    note = None
    judged = auto_judge(mode=judge)
    if judged is not None:
        conflicts, note = judged(memories, conflicts)
    if as_json:
        emit_json({**report.to_json(), "conflicts": [c.to_json() for c in conflicts], "conflict_note": note})
        return
    counts = report.counts()
    say(f"{visible(str(root))}  ({counted(report.files, 'file')} via {report.source}; {counted(counts['memories'], 'memory', 'memories')}, {counts['with_claims']} naming something in it)")
    for mv in report.memories.values():
        if not mv.results or report.missing:  # no project: one note below, not a line per claim
            continue
        style = {"fg": "yellow"} if mv.stale else {}
        say(f"{visible(mv.relpath)}  {mv.summary()}", **style)
        for r in mv.results:
            if r.status == "stale":
                say(f"  {r.claim.line:>5}  {r.code:<14} {visible(r.message)}")
            elif r.status == "unchecked":
                say(f"  {r.claim.line:>5}  unchecked      `{visible(r.claim.text)}`: {visible(r.message)}", dim=True)
    for c in conflicts:
        say(f"possible conflict: {visible(c.older)} ↔ {visible(c.newer)}", fg="yellow")
        say(f"  {visible(c.describe())}")
    for text in (*report.notes, *([note] if note else [])):
        say(f"note: {visible(text)}", dim=True)
    say("")
    say(f"{counts['verified']} of {counted(counts['claims'] - counts['unchecked'], 'claim')} verified, {counts['stale']} stale, {counts['unchecked']} unchecked; {counted(len(conflicts), 'possible conflict')} ({report.seconds:.2f} s)")
