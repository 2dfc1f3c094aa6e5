"""The offline dream on the demo uses the claims check and the conflict rule: Gather reports the
memories that drifted from the code, Consolidate proposes marking the older of the two Kafka
cutover memories superseded (an edit to review, nothing deleted). Expected values by hand from
the demo's template: the cutover is now - 28 days in the 65-day-old memory and now + 14 days in
the 4-day-old one; the project renamed `parcelly_v2` to `parcelly_v2_enabled`."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from support.dream import snapshot

from memtui.core.dream import DreamContext, plan_dream
from memtui.core.places.flavor import AGENT
from memtui.core.places.locations import resolve_locations
from memtui.demo import materialize

NOW = datetime(2026, 11, 30, 12, tzinfo=UTC)


def test_the_demo_dream_reports_drift_and_proposes_superseded(tmp_path: Path) -> None:
    ws = materialize(tmp_path / "demo", NOW)
    loc = resolve_locations(AGENT, ws.project, environ={"HOME": str(ws.home)})
    assert loc.memory_dir == ws.memory_dir
    before = snapshot(ws.root)
    dp = plan_dream(DreamContext.from_locations(loc), NOW)
    assert snapshot(ws.root) == before  # a plan writes nothing

    # the dream leaves team/ alone: only the private memory's drift is reported (the team
    # memory's `ops/alerts/` is the doctor's and verify's to show)
    [drift] = [f for f in dp.findings if f.code == "memory-stale-claim"]
    assert (drift.phase, drift.path, drift.line) == ("gather", "project_vendor_api_cutover.md", 8)
    assert "parcelly_v2_enabled" in drift.message

    changes = {c.relpath: c for c in dp.plan.changes}
    reasons = dict(zip([c.relpath for c in dp.plan.changes], dp.reasons, strict=True))
    older = changes["project_sqs_to_kafka.md"]
    assert older.kind == "modify"
    after = older.after.decode()
    assert "superseded_by: project_kafka_migration.md\n" in after
    assert "it says 2026-12-14 where this says 2026-11-02" in after
    assert "possible conflict with the newer project_kafka_migration.md" in reasons["project_sqs_to_kafka.md"]
    assert "nothing deleted" in reasons["project_sqs_to_kafka.md"]
    # every line of the older memory is kept; the newer one is not touched by the mark
    assert all(line in after.splitlines() for line in (ws.memory_dir / "project_sqs_to_kafka.md").read_text().splitlines())
    assert "project_kafka_migration.md" not in changes
    assert not any(c.kind == "delete" for c in dp.plan.changes)
