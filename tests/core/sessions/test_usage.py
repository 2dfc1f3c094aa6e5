"""Per-memory usage from real Claude Code 2.1.328 transcripts (``scripts/capture_usage.py``) and
from transcripts written here for the edges: a line cut short, unknown line types, an errored
tool call, a resumed session repeating its calls, a legacy sub-agent file.

The expected counts were made by hand from the captured transcripts (the tool calls and
attachments of each, listed in the comments), not from memtui's output.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from memtui.core.places.flavor import get_flavor
from memtui.core.places.locations import Locations, resolve_locations
from memtui.core.sessions.projects import project_dirs
from memtui.core.sessions.usage import UsageIndex, memory_usage
from support.usage import UsageWorkspace, rebuild_usage

# By hand, from the four captured sessions:
# - "deploy" (cwd proj, recall on): Read deploy.md, Read old_notes.md (deleted after the runs),
#   Read src/app.py; one relevant_memories attachment: user_role, reference_dash,
#   feedback_tests, project_kafka.
# - "svc" (cwd proj/svc: its own project dir): an Agent call; the sub-agent's transcript
#   (<session>/subagents/agent-*.jsonl) has Read reference_dash.md.
# - "oncall" (cwd proj, recall off): Read MEMORY.md, Write project_oncall.md, Edit MEMORY.md.
# - "hello": no tool call, no recall.
EXPECTED = {
    # path: (recalled, read, written, sessions)
    "deploy.md": (0, 1, 0, 1),
    "feedback_tests.md": (1, 0, 0, 1),
    "project_kafka.md": (1, 0, 0, 1),
    "project_oncall.md": (0, 0, 1, 1),
    "reference_dash.md": (1, 1, 0, 2),
    "user_role.md": (1, 0, 0, 1),
    "user_tz.md": (0, 0, 0, 0),
    "team/reference_runbook.md": (0, 0, 0, 0),
}


def _locations(ws: UsageWorkspace) -> Locations:
    return resolve_locations(get_flavor("claude"), ws.proj)


def _counts(report: object) -> dict[str, tuple[int, int, int, int]]:
    return {m.relpath: (m.recalled, m.read, m.written, m.sessions) for m in report.memories}  # type: ignore[attr-defined]


def test_counts_equal_the_hand_count(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ws = rebuild_usage(tmp_path, monkeypatch)
    report = memory_usage(_locations(ws), ws.captured_at)
    assert _counts(report) == EXPECTED
    assert len(report.sessions) == 4  # the sub-agent belongs to the svc session
    assert report.transcripts == 5
    assert [m.relpath for m in report.never_used] == ["user_tz.md", "team/reference_runbook.md"]
    (gone,) = report.missing
    assert (gone.relpath, gone.read, gone.exists) == ("old_notes.md", 1, False)
    svc = next(s for s in report.sessions if s.cwd and s.cwd.endswith("/proj/svc"))
    assert svc.subagents == 1
    data = report.to_json()
    assert data["sessions"] == 4 and data["from"] < data["to"]
    assert set(data["memories"][0]) >= {"path", "recalled", "read", "written", "sessions", "last_used"}
    dash = next(m for m in data["memories"] if m["path"] == "reference_dash.md")
    # the recall in "deploy" (first use), the sub-agent's Read in "svc" (last use)
    assert dash["first_used"] < dash["last_used"]


def test_a_session_in_another_cwd_counts_for_the_repository(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ws = rebuild_usage(tmp_path, monkeypatch)
    dirs = project_dirs(_locations(ws))
    assert [d.path.name.endswith("-proj-svc") for d in dirs] == [False, True]
    assert dirs[1].cwd == str(ws.proj / "svc")


def test_a_project_of_another_repository_does_not_count(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ws = rebuild_usage(tmp_path, monkeypatch)
    other = ws.projects / "-elsewhere"
    other.mkdir()
    text = (ws.transcript("hello")).read_text().replace(str(ws.proj), "/elsewhere")
    (other / "4f1b3a9e-0000-4000-8000-000000000000.jsonl").write_text(text)
    assert len(memory_usage(_locations(ws), ws.captured_at).sessions) == 4


def test_unchanged_transcripts_are_not_read_again_and_grown_ones_resume(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ws = rebuild_usage(tmp_path, monkeypatch)
    loc = _locations(ws)
    first = UsageIndex(loc)
    assert first.refresh().read == 5
    again = UsageIndex(loc)  # a new process: the store in the state dir
    stats = again.refresh()
    assert (stats.read, stats.resumed, stats.unchanged) == (0, 0, 5)
    # The hello session goes on: it reads user_tz.md (a line appended, as the CLI appends).
    hello = ws.transcript("hello")
    call = {"parentUuid": None, "isSidechain": False, "type": "assistant", "uuid": "u-tz", "timestamp": "2026-12-01T23:30:00.000Z",
            "cwd": str(ws.proj), "sessionId": hello.stem,
            "message": {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_tz", "name": "Read", "input": {"file_path": str(ws.memory_dir / "user_tz.md")}}]}}
    with open(hello, "a") as fh:
        fh.write(json.dumps(call, separators=(",", ":")) + "\n")
    stats = again.refresh()
    assert (stats.read, stats.resumed, stats.unchanged) == (0, 1, 4)
    assert _counts(again.report(ws.captured_at))["user_tz.md"] == (0, 1, 0, 1)


def test_a_transcript_cut_mid_line_counts_the_line_once_it_is_whole(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ws = rebuild_usage(tmp_path, monkeypatch)
    deploy = ws.transcript("deploy")
    whole = deploy.read_bytes()
    at = whole.index(b'"relevant_memories"')  # inside the recall line: the CLI is writing it
    deploy.write_bytes(whole[:at])
    index = UsageIndex(_locations(ws))
    index.refresh()
    cut = _counts(index.report(ws.captured_at))
    assert cut["user_role.md"] == (0, 0, 0, 0) and cut["deploy.md"] == (0, 1, 0, 1)
    deploy.write_bytes(whole)
    assert index.refresh().resumed == 1
    assert _counts(index.report(ws.captured_at)) == EXPECTED


def test_unknown_line_types_and_garbage_are_skipped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ws = rebuild_usage(tmp_path, monkeypatch)
    hello = ws.transcript("hello")
    mem = str(ws.memory_dir / "user_tz.md")
    extra = [
        {"type": "future-line", "path": mem, "sessionId": hello.stem},  # a type no release wrote yet
        {"type": "attachment", "attachment": {"type": "memory_preview", "path": mem}, "sessionId": hello.stem},
        {"type": "assistant", "message": {"role": "assistant", "content": [{"type": "tool_use", "id": "t-grep", "name": "Grep", "input": {"path": mem}}]}},
    ]
    with open(hello, "a") as fh:
        for obj in extra:
            fh.write(json.dumps(obj) + "\n")
        fh.write("{not json " + mem + "\n")
        fh.write("[1, 2, 3]\n")
    report = memory_usage(_locations(ws), ws.captured_at)
    assert _counts(report) == EXPECTED


def _session_line(ws: UsageWorkspace, session: str, obj: dict[str, object]) -> str:
    base = {"parentUuid": None, "isSidechain": False, "cwd": str(ws.proj), "sessionId": session, "version": "2.1.328"}
    return json.dumps({**base, **obj}, separators=(",", ":")) + "\n"


def test_errored_calls_do_not_count_and_copies_count_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ws = rebuild_usage(tmp_path, monkeypatch)
    sid = "7d2c9a10-1111-4222-8333-444455556666"
    tz = str(ws.memory_dir / "user_tz.md")
    lines = [
        _session_line(ws, sid, {"type": "user", "uuid": "p1", "timestamp": "2026-12-01T23:40:00.000Z", "message": {"role": "user", "content": "what tz"}}),
        _session_line(ws, sid, {"type": "assistant", "uuid": "a1", "timestamp": "2026-12-01T23:40:01.000Z",
                                "message": {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_bad", "name": "Read", "input": {"file_path": str(ws.memory_dir / "nope.md")}}]}}),
        _session_line(ws, sid, {"type": "user", "uuid": "r1", "timestamp": "2026-12-01T23:40:02.000Z",
                                "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_bad", "is_error": True, "content": "File does not exist."}]}}),
        _session_line(ws, sid, {"type": "assistant", "uuid": "a2", "timestamp": "2026-12-01T23:40:03.000Z",
                                "message": {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_tz", "name": "Read", "input": {"file_path": tz}}]}}),
        _session_line(ws, sid, {"type": "user", "uuid": "r2", "timestamp": "2026-12-01T23:40:04.000Z",
                                "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_tz", "content": "CET"}]}}),
    ]
    own = ws.memory_dir.parent
    (own / f"{sid}.jsonl").write_text("".join(lines))
    # a resumed session whose transcript starts with a copy of that conversation
    resumed = "8e3dab21-1111-4222-8333-444455556666"
    (own / f"{resumed}.jsonl").write_text("".join(lines).replace(sid, resumed))
    report = memory_usage(_locations(ws), ws.captured_at)
    counts = _counts(report)
    assert counts["user_tz.md"] == (0, 1, 0, 1)  # once, not twice; the session that made the call
    assert report.get("nope.md") is None  # the failed Read of a missing file is no use
    assert len(report.sessions) == 6


def test_a_legacy_subagent_file_counts_for_its_session(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ws = rebuild_usage(tmp_path, monkeypatch)
    hello = ws.transcript("hello")
    own = hello.parent
    line = _session_line(ws, hello.stem, {"isSidechain": True, "agentId": "a1b2", "type": "assistant", "uuid": "s1", "timestamp": "2026-12-01T23:50:00.000Z",
                                          "message": {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_legacy", "name": "Read", "input": {"file_path": str(ws.memory_dir / "team/reference_runbook.md")}}]}})
    (own / "agent-a1b2.jsonl").write_text(line)
    report = memory_usage(_locations(ws), ws.captured_at)
    assert _counts(report)["team/reference_runbook.md"] == (0, 1, 0, 1)
    assert len(report.sessions) == 4
    assert next(s for s in report.sessions if s.session_id == hello.stem).subagents == 1


def test_since_keeps_recent_sessions_and_uses(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ws = rebuild_usage(tmp_path, monkeypatch)
    loc = _locations(ws)
    index = UsageIndex(loc)
    index.refresh()
    oncall = ws.transcript("oncall")
    started = json.loads(oncall.read_text().splitlines()[0])["timestamp"]
    from memtui.core.sessions.background import parse_time

    t0 = parse_time(started)
    assert t0 is not None
    # a window opening just before the oncall session: oncall and hello are in, deploy and svc out
    report = index.report(t0 + 3600, since_days=(3600 + 0.5) / 86400)
    assert len(report.sessions) == 2
    counts = _counts(report)
    assert counts["project_oncall.md"] == (0, 0, 1, 1)
    assert counts["reference_dash.md"] == (0, 0, 0, 0)


def test_a_vanished_transcript_is_forgotten(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ws = rebuild_usage(tmp_path, monkeypatch)
    index = UsageIndex(_locations(ws))
    index.refresh()
    shutil.rmtree(ws.projects / (ws.memory_dir.parent.name + "-svc"))
    assert index.refresh().forgotten == 2
    assert _counts(index.report(ws.captured_at))["reference_dash.md"] == (1, 0, 0, 1)


def test_uses_of_a_memory_name_the_session_and_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ws = rebuild_usage(tmp_path, monkeypatch)
    index = UsageIndex(_locations(ws))
    index.refresh()
    uses = index.uses_of("reference_dash.md")
    assert [(u.use.kind, u.subagent) for u in uses] == [("recalled", False), ("read", True)]
    deploy = ws.transcript("deploy")
    lines = deploy.read_text().splitlines()
    assert '"relevant_memories"' in lines[uses[0].use.line - 1]
    assert json.loads(lines[uses[0].use.line - 1])["uuid"] == uses[0].use.uuid


def test_an_unreadable_store_is_replaced(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ws = rebuild_usage(tmp_path, monkeypatch)
    loc = _locations(ws)
    UsageIndex(loc).refresh()
    (store,) = list((tmp_path / "state").rglob("usage.sqlite3"))
    for extra in store.parent.glob("usage.sqlite3-*"):
        os.unlink(extra)
    store.write_bytes(b"not a database at all" * 100)
    assert _counts(memory_usage(loc, ws.captured_at)) == EXPECTED


def test_the_counts_kept_in_the_store_follow_its_changes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ws = rebuild_usage(tmp_path, monkeypatch)
    loc = _locations(ws)
    first = UsageIndex(loc)
    first.refresh()
    assert _counts(first.report(ws.captured_at)) == EXPECTED  # computed, then kept
    second = UsageIndex(loc)  # another process: reads the kept counts
    second.refresh()
    assert _counts(second.report(ws.captured_at)) == EXPECTED
    shutil.rmtree(ws.projects / (ws.memory_dir.parent.name + "-svc"))
    third = UsageIndex(loc)
    third.refresh()  # forgets the svc session: the kept counts are stale
    assert _counts(third.report(ws.captured_at))["reference_dash.md"] == (1, 0, 0, 1)
    assert _counts(UsageIndex(loc).report(ws.captured_at))["reference_dash.md"] == (1, 0, 0, 1)


def test_memory_relpaths_lists_what_the_agent_reads(tmp_path: Path) -> None:
    from memtui.core.memory.memories import iter_memory_files
    from memtui.core.sessions.usage import memory_relpaths

    for rel in ("a.md", "MEMORY.md", "team/MEMORY.md", "team/b.md", "x/y/c.md", "notes.txt", "d.MD"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("x")
    assert memory_relpaths(tmp_path) == [rel for _, rel in iter_memory_files(tmp_path)] == ["a.md", "team/b.md", "x/y/c.md"]


def test_file_names_that_are_not_utf8_are_stored_and_found(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ws = rebuild_usage(tmp_path, monkeypatch)
    odd_memory = os.fsdecode(b"odd_\xff.md")
    (ws.memory_dir / odd_memory).write_text("---\nname: odd\ndescription: odd\ntype: user\n---\nodd\n")
    odd_session = ws.transcript("hello").parent / os.fsdecode(b"sess\xfe.jsonl")
    shutil.copy(ws.transcript("hello"), odd_session)
    index = UsageIndex(_locations(ws))
    index.refresh()
    report = index.report(ws.captured_at)
    assert report.get(odd_memory) is not None and index.uses_of(odd_memory) == []
    assert str(odd_session) in {str(s.path) for s in report.sessions}
    assert UsageIndex(_locations(ws)).refresh().unchanged == 6  # found again by its stored name


def test_by_use_sorts_and_filters_by_the_agents_use() -> None:
    """The Memories pane's U and N: most used first (ties: the latest use first), least used
    first, only the never used; as listed until the transcripts are read."""
    from dataclasses import dataclass as _dataclass

    from memtui.core.sessions.usage import MemoryUsage, UsageReport, by_use

    @_dataclass(frozen=True)
    class Listed:
        relpath: str

    listed = [Listed("a.md"), Listed("b.md"), Listed("c.md"), Listed("d.md")]
    report = UsageReport(
        memory_dir=Path("/m"), now=1000.0, since_days=None, sessions=(),
        memories=(
            MemoryUsage("a.md"),  # never used
            MemoryUsage("b.md", recalled=1, read=1, sessions=1, last_used=100.0),  # 2 uses
            MemoryUsage("c.md", written=1, sessions=1, last_used=300.0),  # 1 use, latest
            MemoryUsage("d.md", read=2, sessions=2, last_used=200.0),  # 2 uses, later than b
        ),
        missing=(),
    )
    names = lambda xs: [x.relpath for x in xs]  # noqa: E731
    assert names(by_use(listed, None, sort="most-used", never_used=True)) == ["a.md", "b.md", "c.md", "d.md"]
    assert names(by_use(listed, report)) == ["a.md", "b.md", "c.md", "d.md"]
    assert names(by_use(listed, report, sort="most-used")) == ["d.md", "b.md", "c.md", "a.md"]
    assert names(by_use(listed, report, sort="least-used")) == ["a.md", "c.md", "b.md", "d.md"]
    assert names(by_use(listed, report, never_used=True)) == ["a.md"]
    assert names(by_use([Listed("new.md"), *listed], report, sort="least-used", never_used=True)) == ["new.md", "a.md"]
