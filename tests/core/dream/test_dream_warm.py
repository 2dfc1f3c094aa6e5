"""A second offline dream plan with nothing changed reads no memory file for the conflict rule or
the claims check (each memory's values and claims come from the catalog database) and plans
exactly what the first did: it reads only the files its plan edits and those whose index line
it writes."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from support.opens import memory_files_opened

from memtui.core.dream import DreamContext, plan_dream
from memtui.core.memory import catalogdb
from memtui.core.places.flavor import AGENT
from memtui.core.places.locations import resolve_locations
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
