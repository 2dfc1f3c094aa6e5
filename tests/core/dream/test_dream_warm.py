"""A second offline dream plan with nothing changed reads no memory file for the conflict rule or
the claims check (each memory's values and claims come from the catalog database) and plans
exactly what the first did: it reads only the files its plan edits and those whose index line
it writes."""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from support.opens import memory_files_opened, subject_terms_made

from memtui.core.dream import DreamContext, offline, plan_dream
from memtui.core.dream.plan import plan_to_json
from memtui.core.memory import catalogdb
from memtui.core.memory.memories import Memory
from memtui.core.places.flavor import AGENT
from memtui.core.places.locations import Locations, resolve_locations
from memtui.core.verify import conflicts
from memtui.demo import materialize

NOW = datetime(2026, 11, 30, 12, tzinfo=UTC)


def test_a_warm_dream_plan_reads_no_memory_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(catalogdb, "RACY_SECONDS", -10)  # the demo's files were written just now
    ws = materialize(tmp_path / "demo", NOW)
    loc = resolve_locations(AGENT, ws.project, environ={"HOME": str(ws.home), "MEMTUI_STATE_DIR": str(tmp_path / "state")})
    first = plan_dream(DreamContext.from_locations(loc), NOW)
    # the demo's conflict and drifted claim (test_dream_verify) are in the plan
    assert "project_sqs_to_kafka.md" in {c.relpath for c in first.plan.changes}
    assert any(f.code == "memory-stale-claim" for f in first.findings)
    with memory_files_opened(monkeypatch, ws.memory_dir) as opened:
        second = plan_dream(DreamContext.from_locations(loc), NOW)
    assert second.plan.changes == first.plan.changes
    assert second.findings == first.findings
    index = next(c for c in first.plan.changes if c.relpath == "MEMORY.md")
    before, after = (index.before or b"").decode(), (index.after or b"").decode()
    memories = [p.relative_to(ws.memory_dir).as_posix() for p in ws.memory_dir.rglob("*.md") if p.name != "MEMORY.md"]
    indexed_now = {rel for rel in memories if f"({rel})" in after and f"({rel})" not in before}
    edited = {c.relpath for c in first.plan.changes} - {"MEMORY.md"}
    assert set(opened) <= edited | indexed_now
    assert len(set(opened)) < len(memories) // 4


def _plan(loc: Locations, *, database: bool = True) -> dict[str, Any]:
    """``memtui dream plan --consolidator offline --json``'s document (``database=False``: the
    catalog database disabled, every fact made from the files)."""
    if database:
        return plan_to_json(plan_dream(DreamContext.from_locations(loc), NOW))
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(offline.CatalogDB, "for_memory_dir", classmethod(lambda cls, state_dir, memory_dir, **kw: cls(None, memory_dir)))
        return plan_to_json(plan_dream(DreamContext.from_locations(loc), NOW))


def test_a_warm_dream_plan_makes_no_subject_terms(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The conflict rule's subject terms (file name, name, description) are kept with the
    values each memory states: a warm plan marks the same memory superseded without making
    them again, and equals a plan made without the database."""
    monkeypatch.setattr(catalogdb, "RACY_SECONDS", -10)  # the demo's files were written just now
    ws = materialize(tmp_path / "demo", NOW)
    loc = resolve_locations(AGENT, ws.project, environ={"HOME": str(ws.home), "MEMTUI_STATE_DIR": str(tmp_path / "state")})
    expected = _plan(loc, database=False)
    _plan(loc)  # fills the database
    made = subject_terms_made(monkeypatch)
    warm = _plan(loc)
    assert made == []
    assert warm == expected
    assert any(c["path"] == "project_sqs_to_kafka.md" and "marked superseded" in c["reason"] for c in warm["changes"])


def _memory(path: Path, name: str, description: str, body: str, stamp: float) -> None:
    path.write_text(f"---\nname: {name}\ndescription: {description}\ntype: project\n---\n\n{body}\n", encoding="utf-8")
    os.utime(path, (stamp, stamp))


def test_a_changed_memory_gets_its_subject_terms_made_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two memories on one subject disagreeing on a number: the older is marked superseded.
    Once the newer one's name and description are about something else, a warm plan marks
    nothing for them (its subject terms were made again, not read back) and equals a plan
    made without the database."""
    monkeypatch.setattr(catalogdb, "RACY_SECONDS", -10)
    ws = materialize(tmp_path / "demo", NOW)
    loc = resolve_locations(AGENT, ws.project, environ={"HOME": str(ws.home), "MEMTUI_STATE_DIR": str(tmp_path / "state")})
    day = 86_400.0
    older, newer = ws.memory_dir / "project_invoice_a.md", ws.memory_dir / "project_invoice_b.md"
    _memory(older, "Invoice archive retention", "How long invoices stay in the archive",
            "Invoices stay in the archive for 30 days; the nightly purge job removes older ones.", NOW.timestamp() - 20 * day)
    _memory(newer, "Invoice archive retention rule", "Finance's invoice archive rule",
            "Finance asked for a longer window: the archive keeps invoices 90 days. Legal signed off.", NOW.timestamp() - 10 * day)

    def marked(plan: dict[str, Any]) -> list[str]:
        return [c["path"] for c in plan["changes"] if c["path"].startswith("project_invoice") and "marked superseded" in c["reason"]]

    first = _plan(loc)
    assert marked(first) == ["project_invoice_a.md"]
    assert _plan(loc) == first  # warm: the same mark from the kept terms

    # the same number, now about the deploy window: no shared subject term any more
    _memory(newer, "Deploy window", "When releases go out",
            "Finance asked for a longer window: the archive keeps invoices 90 days. Legal signed off.", NOW.timestamp() - 10 * day)
    made: list[str] = []
    real = conflicts.memory_subject

    def spy(mem: Memory) -> set[str]:
        made.append(mem.relpath)
        return real(mem)

    monkeypatch.setattr(conflicts, "memory_subject", spy)
    warm = _plan(loc)
    assert made == ["project_invoice_b.md"]
    assert marked(warm) == []
    assert warm == _plan(loc, database=False)


def test_a_dream_plan_collects_less_often_and_gives_back_the_thresholds(tmp_path: Path) -> None:
    """While the offline consolidator runs, young collections are rare (every
    ``YOUNG_THRESHOLD`` allocations instead of CPython's 700); the thresholds the process had
    are restored after it, a cancelled run included."""
    import gc
    import threading

    from memtui.core.base.gcpause import YOUNG_THRESHOLD
    from memtui.core.dream import DreamCancelled

    ws = materialize(tmp_path / "demo", NOW)
    loc = resolve_locations(AGENT, ws.project, environ={"HOME": str(ws.home), "MEMTUI_STATE_DIR": str(tmp_path / "state")})
    seen: list[tuple[int, int, int]] = []
    before = gc.get_threshold()
    gc.set_threshold(900, 11, 12)
    try:
        plan_dream(DreamContext.from_locations(loc), NOW, emit=lambda event: seen.append(gc.get_threshold()))
        assert gc.get_threshold() == (900, 11, 12)
        assert seen and set(seen) == {(YOUNG_THRESHOLD, 11, 12)}
        cancel = threading.Event()

        def stop(event: object) -> None:
            cancel.set()

        with pytest.raises(DreamCancelled):
            plan_dream(DreamContext.from_locations(loc), NOW, emit=stop, cancel=cancel)
        assert gc.get_threshold() == (900, 11, 12)
    finally:
        gc.set_threshold(*before)
