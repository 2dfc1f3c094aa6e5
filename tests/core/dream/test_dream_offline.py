"""The offline consolidator on a generated store: duplicates merged with
nothing lost, relative dates converted against the mtime, the index within the cap with no
dangling links, and a second run that changes nothing."""

from __future__ import annotations

import random
import threading
from pathlib import Path

import pytest
from support.dream import (
    DAY,
    NOW,
    context,
    generate_store,
    generated_body,
    memory,
    norm,
    sentences_of,
    snapshot,
    write,
)

from memtui.core.dream import (
    DreamCancelled,
    DreamContext,
    PhaseStarted,
    plan_dream,
    plan_to_json,
)
from memtui.core.dream.prune import is_hub
from memtui.core.writes.edits import apply_plan
from memtui.core.memory.index import INDEX_NAME, parse_entries, truncate_index
from memtui.core.writes.journal import Journal
from memtui.core.memory.memories import scan_memories

T = NOW.timestamp()
MONDAY_NOON = 1772452800.0  # 2026-03-02T12:00:00Z, a Monday

DB_OLD = memory(
    "Real database in tests",
    "Integration tests must hit a real Postgres database, never mocks",
    "feedback",
    "Integration tests must hit a real Postgres database, never mocks. We were burned when mocked tests passed and the prod migration failed.\n\n"
    "**Why:** mocks hid a broken migration.\n\n**How to apply:** start the docker compose database before the suite.\n",
)
DB_NEW = memory(
    "No mocks for the database",
    "Integration tests must hit a real Postgres database, never mocks",
    "feedback",
    "Integration tests must hit a real Postgres database, never mocks. We were burned when mocked tests passed and the prod migration failed. Use the shared conftest fixture.\n\n"
    "**Why:** mocks hid a broken migration.\n\n**How to apply:** start the docker compose database before the suite.\n",
)
EDITOR_BODY = "The user edits in Neovim with a tiling window manager and prefers short terminal commands.\n"
BOARD = "The deploy board lives in the Linear project OPS, and tickets tagged deploy block a release. Ask in the ops channel before moving one."
RELEASE = memory(
    "Release plan",
    "The release ships tomorrow",
    "project",
    "We ship the release tomorrow. Marketing starts next week.\n\n上周四我们冻结了分支。明天发布说明。\n\n**Why:** the beta ends.\n\n**How to apply:** freeze merges.\n",
)


def build(tmp_path: Path) -> DreamContext:
    ctx = context(tmp_path)
    m = ctx.memory_dir
    generate_store(m, 230)  # and a MEMORY.md of 230 lines: over the 200-line cap
    write(m / "feedback_db_old.md", DB_OLD, T - 20 * DAY)
    write(m / "feedback_db_new.md", DB_NEW, T - 2 * DAY)
    write(m / "user_editor.md", memory("Editor", "The user's editor setup", "user", EDITOR_BODY), T - 9 * DAY)
    write(m / "user_editor_copy.md", memory("Editor again", "Neovim and a tiling window manager", "user", EDITOR_BODY), T - 4 * DAY)
    write(m / "reference_board_a.md", memory("Deploy board", "Where deploy tickets live", "reference", BOARD + "\n"), T - 15 * DAY)
    write(m / "reference_board_b.md", memory("Deploy board", "Where deploy tickets live", "reference", BOARD + " The board is triaged every week.\n"), T - 12 * DAY)
    write(m / "reference_board_c.md", memory("Deploy board", "Where the deploy tickets live", "reference", BOARD + "\n"), T - 11 * DAY)
    write(m / "project_release.md", RELEASE, MONDAY_NOON)
    write(m / "team" / "shared.md", memory("Shared", "A team memory", "project", "We deploy tomorrow.\n"), T - DAY)
    index = (m / INDEX_NAME).read_text(encoding="utf-8")
    long_hook = "the database rule, with the whole story of the failed migration that taught us never to mock the database layer in integration tests again"
    index += (
        "- [Old thing](deleted_thing.md) — a file that is gone\n"
        f"- [Real database](feedback_db_old.md) — {long_hook}\n"
        "- [DB again](feedback_db_new.md) — the same rule\n"
        "- [Editor](user_editor.md) — editor\n"
        "- [Board](reference_board_b.md) — the deploy board\n"
    )
    write(m / INDEX_NAME, index, T - 30 * DAY)
    return ctx


def all_text(memory_dir: Path) -> str:
    return "\n".join(norm(m.text) for m in scan_memories(memory_dir).memories)


def test_offline_plan_on_a_generated_store(tmp_path: Path) -> None:
    ctx = build(tmp_path)
    before = snapshot(ctx.memory_dir)
    inputs = {m.relpath: m for m in scan_memories(ctx.memory_dir).memories if not m.team}
    dp = plan_dream(ctx, NOW)
    assert snapshot(ctx.memory_dir) == before  # a plan writes nothing
    actions = {c.relpath: c.kind for c in dp.plan.changes}
    reasons = dict(zip([c.relpath for c in dp.plan.changes], dp.reasons, strict=True))

    # merged into the oldest of each group; 4 deletions (cap 5)
    assert {r for r, k in actions.items() if k == "delete"} == {"feedback_db_new.md", "user_editor_copy.md", "reference_board_b.md", "reference_board_c.md"}
    assert all("merged into" in reasons[r] for r, k in actions.items() if k == "delete")
    # never a file without a reason: only these change
    hubs = {r for r, k in actions.items() if r.startswith("index-")}
    assert set(actions) == {
        INDEX_NAME, "feedback_db_old.md", "feedback_db_new.md", "user_editor.md", "user_editor_copy.md",
        "reference_board_a.md", "reference_board_b.md", "reference_board_c.md", "project_release.md", *hubs,
    }
    assert hubs and all(actions[h] == "create" for h in hubs)
    assert all(r for r in dp.reasons)
    assert not any(r.startswith("team/") for r in actions)
    assert {f.code for f in dp.findings} >= {"relative-date-kept", "team-untouched"}
    data = plan_to_json(dp)
    assert set(data) >= {"changes", "findings", "events"}
    assert set(data["changes"][0]) == {"path", "action", "reason", "diff"}

    # apply, then check the store
    apply_plan(ctx.memory_dir, dp.plan, Journal(ctx.state_dir, ctx.memory_dir), NOW)
    after = scan_memories(ctx.memory_dir)
    text = all_text(ctx.memory_dir)

    # nothing lost: every sentence of every input (description and body) is still in some
    # memory — the date sentences in their converted form
    converted = {
        "We ship the release tomorrow.": "We ship the release on 2026-03-03.",
        "The release ships tomorrow": "The release ships on 2026-03-03",
        "上周四我们冻结了分支。": "2026-02-26我们冻结了分支。",
        "明天发布说明。": "2026-03-03发布说明。",
    }
    for rel, mem in inputs.items():
        for s in sentences_of(f"{mem.description}\n{mem.body}"):
            s = converted.get(s, s)
            assert norm(s) in text, (rel, s)

    # dates against the mtime (Monday 2026-03-02): exact days converted, "next week" kept
    release = (ctx.memory_dir / "project_release.md").read_text(encoding="utf-8")
    assert "description: The release ships on 2026-03-03\n" in release
    assert "We ship the release on 2026-03-03. Marketing starts next week." in release
    assert "2026-02-26我们冻结了分支。2026-03-03发布说明。" in release
    assert (ctx.memory_dir / "project_release.md").stat().st_mtime == MONDAY_NOON  # mtime kept
    assert (ctx.memory_dir / "team" / "shared.md").read_text(encoding="utf-8").endswith("We deploy tomorrow.\n")

    # the merge kept the older file, with the newer one's distinct sentence appended
    db = (ctx.memory_dir / "feedback_db_old.md").read_text(encoding="utf-8")
    assert db.startswith(DB_OLD)
    assert "Use the shared conftest fixture." in db
    assert db.count("**Why:**") == 1
    assert (ctx.memory_dir / "feedback_db_old.md").stat().st_mtime == T - 2 * DAY  # newest of the group
    assert (ctx.memory_dir / "user_editor.md").read_text(encoding="utf-8").endswith("Neovim and a tiling window manager\n")
    board = (ctx.memory_dir / "reference_board_a.md").read_text(encoding="utf-8")
    assert board.count(BOARD) == 1 and "The board is triaged every week." in board

    # the index: within the cap, no dangling link, every memory reachable (index or hub)
    index_text = (ctx.memory_dir / INDEX_NAME).read_text(encoding="utf-8")
    assert truncate_index(index_text).truncated_by == ()
    assert all(len(line) <= 150 for line in index_text.splitlines())
    reachable: set[str] = set()
    for rel in [INDEX_NAME, *(m.relpath for m in after.memories if is_hub(m.relpath, m.text))]:
        for e in parse_entries((ctx.memory_dir / rel).read_text(encoding="utf-8")):
            assert e.relpath is not None and (ctx.memory_dir / e.relpath).exists(), (rel, e.target)
            reachable.add(e.relpath)
    assert {m.relpath for m in after.memories if not m.team} <= reachable
    assert "](feedback_db_old.md)" in index_text and "feedback_db_new.md" not in index_text
    assert "deleted_thing.md" not in index_text
    # the long line's detail moved into the memory before the line was cut
    assert "the whole story of the failed migration" in db

    # a second run changes nothing
    again = plan_dream(ctx, NOW)
    assert again.empty, [(c.relpath, r) for c, r in again.items()]


def test_deletion_cap_defers_whole_groups(tmp_path: Path) -> None:
    ctx = context(tmp_path)
    rng = random.Random(3)
    for i in range(7):
        body = generated_body(rng, i)
        write(ctx.memory_dir / f"user_p{i}_a.md", memory(f"P{i}", f"Pair {i}", "user", body), T - 10 * DAY)
        write(ctx.memory_dir / f"user_p{i}_b.md", memory(f"P{i}", f"Pair {i}", "user", body), T - 5 * DAY)
    dp = plan_dream(ctx, NOW)
    assert dp.deletions == 5
    assert [f.path for f in dp.findings if f.code == "duplicate-deferred"] == ["user_p5_a.md", "user_p6_a.md"]
    small = plan_dream(ctx, NOW, max_deletions=2)
    assert small.deletions == 2


def test_duplicates_across_types_are_reported_not_merged(tmp_path: Path) -> None:
    ctx = context(tmp_path)
    body = "The staging cluster is rebuilt from scratch every night, so data written there does not survive.\n"
    write(ctx.memory_dir / "user_x.md", memory("X", "x", "user", body), T - 3 * DAY)
    write(ctx.memory_dir / "reference_x.md", memory("X", "x", "reference", body), T - 2 * DAY)
    dp = plan_dream(ctx, NOW)
    assert dp.deletions == 0
    assert [f.code for f in dp.findings if f.code.startswith("duplicate")] == ["duplicate-across-types"]


def test_cancel_stops_between_phases(tmp_path: Path) -> None:
    ctx = build(tmp_path)
    cancel = threading.Event()
    seen: list[str] = []

    def on_event(event: object) -> None:
        if isinstance(event, PhaseStarted):
            seen.append(event.phase)
            if event.phase == "consolidate":
                cancel.set()

    with pytest.raises(DreamCancelled):
        plan_dream(ctx, NOW, emit=on_event, cancel=cancel)
    assert seen == ["orient", "gather", "consolidate"]


def test_events_stream_every_phase_in_order(tmp_path: Path) -> None:
    ctx = build(tmp_path)
    events: list[object] = []
    dp = plan_dream(ctx, NOW, emit=events.append)
    kinds = [(e.kind, getattr(e, "phase", None)) for e in events]  # type: ignore[attr-defined]
    starts = [p for k, p in kinds if k == "phase-started"]
    ends = [p for k, p in kinds if k == "phase-finished"]
    assert starts == ends == ["orient", "gather", "consolidate", "prune"]
    assert {k for k, _ in kinds} == {"phase-started", "phase-finished", "file-read", "finding", "proposed-change", "progress", "log"}
    assert len(dp.events) == len(events)
    reads = [e for e in events if e.kind == "file-read"]  # type: ignore[attr-defined]
    assert len(reads) == 239  # 238 memories outside team/ + MEMORY.md


def test_missing_entries_go_under_the_heading_of_their_type() -> None:
    from memtui.core.writes.index_edit import (
        add_entries,  # the one insertion every index writer uses
    )

    text = "# Memory index\r\n\r\n## User\r\n- [A](a.md) — a\r\n\r\n## Feedback notes\r\n- [B](b.md) — b\r\n"
    out = add_entries(text, [("user", "- [C](c.md) — c"), ("project", "- [D](d.md) — d"), ("feedback", "- [E](e.md) — e")])
    assert out == (
        "# Memory index\r\n\r\n## User\r\n- [A](a.md) — a\r\n- [C](c.md) — c\r\n\r\n"
        "## Feedback notes\r\n- [B](b.md) — b\r\n- [E](e.md) — e\r\n- [D](d.md) — d\r\n"
    )
    assert add_entries("", [("user", "- [C](c.md) — c")]) == "- [C](c.md) — c\n"


def test_prune_reads_each_index_line_once_whatever_its_passes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from memtui.core.dream import prune as prune_mod

    ctx = context(tmp_path)
    generate_store(ctx.memory_dir, 600)  # an index of 600 lines: far over the cap, folded into hubs
    calls: list[str] = []
    real = prune_mod.parse_entries

    def counting(text: str, index_dir_rel: str = "") -> list[object]:
        calls.append(text)
        return real(text, index_dir_rel)  # type: ignore[return-value]

    monkeypatch.setattr(prune_mod, "parse_entries", counting)
    dp = plan_dream(ctx, NOW)
    assert any(c.relpath.startswith("index-") for c in dp.plan.changes)  # the cap was dealt with
    lines = (ctx.memory_dir / INDEX_NAME).read_text(encoding="utf-8").split("\n")
    # steps 1-4 re-read the index and the hubs after every edit; each distinct line is parsed once
    assert len(calls) == len(set(calls))
    assert len(calls) <= len(set(lines)) + 10


def test_events_in_the_json_plan_start_with_their_kind() -> None:
    """``memtui dream plan --json``'s ``events``: each one's kind first, then its fields in
    declaration order, values as they are (``null`` for a missing line or phase)."""
    import orjson

    from memtui.core.dream.events import FileRead, Finding, LogLine, PhaseFinished, PhaseStarted, Progress, ProposedChange, event_to_json

    events = [
        PhaseStarted("orient", "list the memory dir"),
        FileRead("orient", "user_role.md", 120),
        Progress("orient", 250, 20000),
        Finding("gather", "memory-drifted", "a.md", "changed since the last consolidation"),
        Finding("consolidate", "relative-date-kept", "b.md", "“next week” names no exact day", 7),
        ProposedChange("consolidate", "b.md", "modify", "dates made absolute"),
        LogLine(None, "warning", "no project"),
        PhaseFinished("prune", "0 file(s) changed for the index"),
    ]
    assert [orjson.dumps(event_to_json(e)).decode() for e in events] == [
        '{"kind":"phase-started","phase":"orient","title":"list the memory dir"}',
        '{"kind":"file-read","phase":"orient","path":"user_role.md","size":120}',
        '{"kind":"progress","phase":"orient","done":250,"total":20000}',
        '{"kind":"finding","phase":"gather","code":"memory-drifted","path":"a.md","message":"changed since the last consolidation","line":null}',
        '{"kind":"finding","phase":"consolidate","code":"relative-date-kept","path":"b.md","message":"“next week” names no exact day","line":7}',
        '{"kind":"proposed-change","phase":"consolidate","path":"b.md","action":"modify","reason":"dates made absolute"}',
        '{"kind":"log","phase":null,"level":"warning","text":"no project"}',
        '{"kind":"phase-finished","phase":"prune","summary":"0 file(s) changed for the index"}',
    ]
