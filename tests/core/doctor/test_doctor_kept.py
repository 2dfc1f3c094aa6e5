"""The doctor's whole report kept in the catalog database (``memtui.core.doctor.kept``): a run
with nothing changed takes it without loading the catalog, and still checks the claims about the
code against the project as it is; any change to what the findings are made from — a memory, a
file the agent never reads, the index, a directory, the instruction texts, the usage, an option —
makes the doctor work them out again. Every expected report is the one a doctor without the
database gives on the same files (the oracle), plus a finding worked out by hand where a test
makes one appear."""

from __future__ import annotations

import os
import sqlite3
from datetime import UTC, datetime
from pathlib import Path

import pytest

from memtui.core.doctor import run as run_mod
from memtui.core.doctor import run_doctor
from memtui.core.doctor.kept import FINDINGS_KIND, REPORT_KIND, KeptFindings
from memtui.core.doctor.model import DoctorReport
from memtui.core.memory import catalogdb
from memtui.core.memory.catalogdb import DB_NAME, CatalogDB
from memtui.core.sessions.usage import MemoryUsage, SessionRecord, UsageReport
from memtui.demo import materialize
from memtui.demo import DemoWorkspace

NOW = datetime(2026, 3, 10, 12, tzinfo=UTC)


@pytest.fixture(autouse=True)
def no_racy_window(monkeypatch: pytest.MonkeyPatch) -> None:
    """The demo's files were written just now (their ctime cannot be set back): without this
    every one would be racy and nothing kept."""
    monkeypatch.setattr(catalogdb, "RACY_SECONDS", -10)


@pytest.fixture
def loads(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """The memory dirs the doctor loads a catalog of (a kept report loads none)."""
    seen: list[Path] = []
    real = run_mod.load_catalog

    def spy(memory_dir: Path, *args: object, **kwargs: object) -> object:
        seen.append(memory_dir)
        return real(memory_dir, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(run_mod, "load_catalog", spy)
    return seen


def doctor(ws: DemoWorkspace, state: Path | None, **options: object) -> DoctorReport:
    cache = CatalogDB.for_memory_dir(state, ws.memory_dir) if state is not None else None
    return run_doctor(ws.memory_dir, NOW, cache=cache, project_root=ws.project, **options)  # type: ignore[arg-type]


def same(a: DoctorReport, b: DoctorReport) -> None:
    assert a.findings == b.findings
    assert a.to_json() == b.to_json()
    assert a.memories == b.memories


def test_nothing_changed_takes_the_kept_report(tmp_path: Path, loads: list[Path]) -> None:
    ws = materialize(tmp_path / "demo", NOW)
    state = tmp_path / "state"
    expected = doctor(ws, None)
    same(doctor(ws, state), expected)
    assert len(loads) == 2
    warm = doctor(ws, state)
    assert len(loads) == 2  # no catalog loaded
    same(warm, expected)
    assert warm.verification is not None and expected.verification is not None
    assert warm.verification.counts() == expected.verification.counts()
    assert {rel: m.results for rel, m in warm.verification.memories.items()} == {rel: m.results for rel, m in expected.verification.memories.items()}
    assert list(warm.verification.memories) == list(expected.verification.memories)


def test_the_claims_are_checked_against_the_project_as_it_is(tmp_path: Path, loads: list[Path]) -> None:
    ws = materialize(tmp_path / "demo", NOW)
    state = tmp_path / "state"
    first = doctor(ws, state)
    stale = sorted({f.data["claim"] for f in first.findings if f.code == "stale-path"})
    assert "ops/alerts/" in stale  # the demo's team memory names a directory the project lacks
    _write(ws.project / "ops" / "alerts" / "rules.yaml", "x: 1\n")  # the project now has it
    warm = doctor(ws, state)
    assert len(loads) == 1  # the kept report, the claims checked again
    assert "ops/alerts/" not in {f.data["claim"] for f in warm.findings if f.code == "stale-path"}
    same(warm, doctor(ws, None))


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


@pytest.mark.parametrize(
    "change",
    [
        "a memory's body",
        "a memory touched to another mtime",
        "a new memory",
        "a memory removed",
        "a file the agent never reads",
        "the index",
        "an empty directory",
    ],
)
def test_a_change_below_the_memory_dir_is_worked_out_again(tmp_path: Path, loads: list[Path], change: str) -> None:
    ws = materialize(tmp_path / "demo", NOW)
    state = tmp_path / "state"
    doctor(ws, state)
    mem = ws.memory_dir
    some = sorted(p for p in mem.glob("*.md") if p.name != "MEMORY.md")[0]
    if change == "a memory's body":
        some.write_text(some.read_text(encoding="utf-8") + "\nTomorrow we ship.\n", encoding="utf-8")
    elif change == "a memory touched to another mtime":
        os.utime(some, (some.stat().st_mtime - 86_400 * 400, some.stat().st_mtime - 86_400 * 400))
    elif change == "a new memory":
        _write(mem / "project_new.md", "---\nname: New\ndescription: a new one\ntype: project\n---\nbody\n")
    elif change == "a memory removed":
        some.unlink()
    elif change == "a file the agent never reads":
        _write(mem / "notes.txt", "scratch\n")
    elif change == "the index":
        _write(mem / "MEMORY.md", (mem / "MEMORY.md").read_text(encoding="utf-8") + "- [Gone](gone.md) — nothing\n")
    else:
        (mem / "empty-dir").mkdir()
    warm = doctor(ws, state)
    assert len(loads) == 2  # worked out again
    expected = doctor(ws, None)
    same(warm, expected)
    if change == "a file the agent never reads":
        assert ("not-a-memory", "notes.txt") in {(f.code, f.path) for f in warm.findings}
    if change == "the index":
        assert ("index-dangling", "gone.md") in {(f.code, f.data.get("target")) for f in warm.findings}
    assert len(doctor(ws, state).findings) == len(expected.findings) and len(loads) == 3  # kept again


def test_other_instruction_texts_are_worked_out_again(tmp_path: Path, loads: list[Path]) -> None:
    ws = materialize(tmp_path / "demo", NOW)
    state = tmp_path / "state"
    doctor(ws, state, instruction_texts=["Unrelated words only."])
    body = next(p for p in sorted(ws.memory_dir.glob("feedback_*.md"))).read_text(encoding="utf-8").split("---", 2)[2].strip()
    warm = doctor(ws, state, instruction_texts=[body])
    assert len(loads) == 2
    same(warm, doctor(ws, None, instruction_texts=[body]))
    assert any(f.code == "in-instructions" for f in warm.findings)


def _usage(memory_dir: Path, relpaths: list[str], used: dict[str, float], start: float) -> UsageReport:
    """20 sessions an hour apart from ``start``; ``used``: relpath -> its last use."""
    sessions = tuple(SessionRecord(f"s{i}", None, 0, None, start + 3600 * i, start + 3600 * i + 60, None, 0, None) for i in range(20))
    memories = tuple(MemoryUsage(rel, read=1 if rel in used else 0, last_used=used.get(rel)) for rel in relpaths)
    return UsageReport(memory_dir, start + 86_400, None, sessions, memories, ())


def test_other_usage_is_worked_out_again(tmp_path: Path, loads: list[Path]) -> None:
    ws = materialize(tmp_path / "demo", NOW)
    state = tmp_path / "state"
    relpaths = sorted(p.relative_to(ws.memory_dir).as_posix() for p in ws.memory_dir.rglob("*.md") if p.name != "MEMORY.md")
    start = NOW.timestamp() + 86_400  # after every memory's mtime: each is old enough to judge
    first = doctor(ws, state, usage=_usage(ws.memory_dir, relpaths, {}, start))
    assert {f.path for f in first.findings if f.code == "unused"} == set(relpaths)
    later = _usage(ws.memory_dir, relpaths, {relpaths[0]: start + 600}, start)
    warm = doctor(ws, state, usage=later)
    assert len(loads) == 2
    assert {f.path for f in warm.findings if f.code == "unused"} == set(relpaths[1:])
    same(warm, doctor(ws, None, usage=later))
    assert len(loads) == 3
    same(doctor(ws, state, usage=later), warm)  # the same usage again: kept
    assert len(loads) == 3


def test_another_threshold_is_worked_out_again(tmp_path: Path, loads: list[Path]) -> None:
    ws = materialize(tmp_path / "demo", NOW)
    state = tmp_path / "state"
    doctor(ws, state)
    warm = doctor(ws, state, near_duplicate_threshold=50.0)
    assert len(loads) == 2
    same(warm, doctor(ws, None, near_duplicate_threshold=50.0))


def test_a_racy_dir_keeps_no_report(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, loads: list[Path]) -> None:
    monkeypatch.setattr(catalogdb, "RACY_SECONDS", 2)
    ws = materialize(tmp_path / "demo", NOW)  # written just now
    state = tmp_path / "state"
    expected = doctor(ws, None)
    same(doctor(ws, state), expected)
    same(doctor(ws, state), expected)
    assert len(loads) == 3
    db_file = next(state.rglob(DB_NAME))
    with sqlite3.connect(db_file) as conn:
        assert conn.execute("SELECT count(*) FROM results WHERE kind = ?", (REPORT_KIND,)).fetchone()[0] == 0


def test_a_directory_link_keeps_no_report(tmp_path: Path, loads: list[Path]) -> None:
    ws = materialize(tmp_path / "demo", NOW)
    outside = tmp_path / "outside"
    outside.mkdir()
    (ws.memory_dir / "linked").symlink_to(outside, target_is_directory=True)
    state = tmp_path / "state"
    doctor(ws, state)
    # a file appears behind the link: the index's links through it may change their answer
    _write(outside / "x.md", "---\nname: X\ndescription: x\ntype: user\n---\nbody\n")
    warm = doctor(ws, state)
    assert len(loads) == 2
    same(warm, doctor(ws, None))


def _header(state: Path) -> list[object]:
    import orjson

    with sqlite3.connect(next(state.rglob(DB_NAME))) as conn:
        return orjson.loads(conn.execute("SELECT value FROM results WHERE kind = ?", (REPORT_KIND,)).fetchone()[0])  # type: ignore[no-any-return]


def _damage(state: Path, kind: str, value: bytes | None) -> None:
    with sqlite3.connect(next(state.rglob(DB_NAME))) as conn:
        if value is None:
            assert conn.execute("DELETE FROM results WHERE kind = ?", (kind,)).rowcount == 1
        else:
            assert conn.execute("UPDATE results SET value = ? WHERE kind = ?", (value, kind)).rowcount == 1


# the kept header: [counts (error, warning, info), number of findings, SHA-256 of the findings'
# columns, relpaths, claims, length of the findings' text]; each damage breaks one part
_HEADER_DAMAGE = {
    "garbage": lambda h: b"garbage",
    "short": lambda h: b"[[], [], []]",
    "negative count": lambda h: [[-1, h[0][1], h[0][2] + 1], *h[1:]],
    "counts not summing to the number": lambda h: [[h[0][0], h[0][1], h[0][2] + 1], *h[1:]],
    "two counts": lambda h: [h[0][:2], *h[1:]],
    "another digest": lambda h: [*h[:2], "0" * 64, *h[3:]],
    "a relpath that is not text": lambda h: [*h[:3], [*h[3], 7], *h[4:]],
    "claims of the wrong shape": lambda h: [*h[:4], {"a.md": [["x"]]}, h[5]],
}


@pytest.mark.parametrize("damage", list(_HEADER_DAMAGE))
def test_a_damaged_kept_report_is_worked_out_again(tmp_path: Path, loads: list[Path], damage: str) -> None:
    import orjson

    ws = materialize(tmp_path / "demo", NOW)
    state = tmp_path / "state"
    expected = doctor(ws, state)
    value = _HEADER_DAMAGE[damage](_header(state))
    _damage(state, REPORT_KIND, value if isinstance(value, bytes) else orjson.dumps(value))
    warm = doctor(ws, state)
    assert len(loads) == 2
    same(warm, expected)


@pytest.mark.parametrize("damage", ["one byte", "missing", "another report's"])
def test_kept_findings_that_are_not_the_bytes_kept_are_worked_out_again(tmp_path: Path, loads: list[Path], damage: str) -> None:
    """The findings' columns are decoded only when read: they are taken only when they are the
    bytes whose SHA-256 the header names."""
    ws = materialize(tmp_path / "demo", NOW)
    state = tmp_path / "state"
    expected = doctor(ws, state)
    with sqlite3.connect(next(state.rglob(DB_NAME))) as conn:
        kept = conn.execute("SELECT value FROM results WHERE kind = ?", (FINDINGS_KIND,)).fetchone()[0]
    middle = len(kept) // 2
    value = {"one byte": kept[:middle] + bytes([kept[middle] ^ 0x01]) + kept[middle + 1:], "missing": None,
             "another report's": b'[["m"], [["c"], ["info"], [null], [null], [0], [null], [{}]]]'}[damage]
    _damage(state, FINDINGS_KIND, value)
    warm = doctor(ws, state)
    assert len(loads) == 2
    same(warm, expected)


def test_a_kept_report_printed_as_json_decodes_no_finding(tmp_path: Path, loads: list[Path], capsys: pytest.CaptureFixture[str]) -> None:
    """``doctor --json`` of an unchanged dir prints the kept text and counts: the findings stay
    undecoded until something reads them, and then are the findings worked out anew."""
    ws = materialize(tmp_path / "demo", NOW)
    state = tmp_path / "state"
    expected = run_doctor(ws.memory_dir, NOW)
    run_doctor(ws.memory_dir, NOW, cache=CatalogDB.for_memory_dir(state, ws.memory_dir))
    warm = run_doctor(ws.memory_dir, NOW, cache=CatalogDB.for_memory_dir(state, ws.memory_dir))
    assert len(loads) == 2 and isinstance(warm.findings, KeptFindings)  # the oracle and the first run
    printed = _printed(warm, capsys, fragment=True)
    assert warm.has_errors == expected.has_errors and warm.counts() == expected.counts()
    assert warm.findings._items is None  # nothing decoded yet
    assert printed == _printed(expected, capsys, fragment=False)
    assert len(warm.findings) == len(expected.findings) > 0
    assert list(warm.findings) == list(expected.findings) and warm.findings == expected.findings
    assert warm.findings[0] == expected.findings[0] and warm.by_path() == expected.by_path()


def test_a_judge_is_asked_each_time(tmp_path: Path, loads: list[Path]) -> None:
    ws = materialize(tmp_path / "demo", NOW)
    state = tmp_path / "state"
    doctor(ws, state)
    asked: list[int] = []

    def judge(memories: object, conflicts: list[object]) -> tuple[list[object], str | None]:
        asked.append(len(conflicts))
        return list(conflicts), "judged"

    report = doctor(ws, state, judge=judge)
    assert asked and len(loads) == 2 and report.notes == ("judged",)


def _printed(report: DoctorReport, capsys: pytest.CaptureFixture[str], *, fragment: bool) -> str:
    from memtui.commands.common import emit_json

    capsys.readouterr()
    emit_json(report.to_json(fragment=fragment))
    return capsys.readouterr().out


def test_a_kept_report_prints_the_text_kept_with_it(tmp_path: Path, loads: list[Path], capsys: pytest.CaptureFixture[str]) -> None:
    """Without claims to check (nothing to merge in), the kept findings' JSON text is printed
    as it was kept: the same text ``emit_json`` writes for the findings worked out anew."""
    ws = materialize(tmp_path / "demo", NOW)
    state = tmp_path / "state"
    cache = CatalogDB.for_memory_dir(state, ws.memory_dir)
    expected = run_doctor(ws.memory_dir, NOW)
    first = run_doctor(ws.memory_dir, NOW, cache=cache)  # works the report out, keeps it and its text
    warm = run_doctor(ws.memory_dir, NOW, cache=CatalogDB.for_memory_dir(state, ws.memory_dir))
    assert len(loads) == 2 and warm.rendered is not None and first.rendered is not None and expected.rendered is None
    same(warm, expected)
    same(first, expected)
    printed = _printed(expected, capsys, fragment=False)
    assert _printed(warm, capsys, fragment=True) == _printed(first, capsys, fragment=True) == _printed(expected, capsys, fragment=True) == printed
    # with claims that find something, the text is made again with them merged in
    with_claims = doctor(ws, state)
    assert with_claims.rendered is None and any(f.code.startswith("stale") for f in with_claims.findings)


def test_a_damaged_kept_text_is_not_printed(tmp_path: Path, loads: list[Path], capsys: pytest.CaptureFixture[str]) -> None:
    from memtui.core.doctor.kept import RENDERED_KIND

    ws = materialize(tmp_path / "demo", NOW)
    state = tmp_path / "state"
    expected = run_doctor(ws.memory_dir, NOW)
    run_doctor(ws.memory_dir, NOW, cache=CatalogDB.for_memory_dir(state, ws.memory_dir))
    db_file = next(state.rglob(DB_NAME))
    with sqlite3.connect(db_file) as conn:
        packed = conn.execute("SELECT value FROM results WHERE kind = ?", (RENDERED_KIND,)).fetchone()[0]
        middle = len(packed) // 2
        damaged = packed[:middle] + bytes([packed[middle] ^ 0xFF]) + packed[middle + 1 :]  # one byte changed
        conn.execute("UPDATE results SET value = ? WHERE kind = ?", (damaged, RENDERED_KIND))
    warm = run_doctor(ws.memory_dir, NOW, cache=CatalogDB.for_memory_dir(state, ws.memory_dir))
    assert len(loads) == 2 and warm.rendered is None
    assert _printed(warm, capsys, fragment=True) == _printed(expected, capsys, fragment=False)


@pytest.mark.parametrize(("message", "data", "kept"), [
    ("plain", {"n": 1, "others": ["a.md"], "score": 91.5}, True),
    ("plain", {"others": ("a.md",)}, False),  # a tuple would come back a list
    ("plain", {"score": float("nan")}, False),  # JSON has no NaN
    ("plain", {"big": 2**70}, False),
    ("lone \udc80 surrogate", {}, False),
    ("plain", {1: "a key that is not text"}, False),
])
def test_only_what_json_gives_back_unchanged_is_kept(tmp_path: Path, message: str, data: dict[object, object], kept: bool) -> None:
    from memtui.core.doctor.kept import keep_report, kept_report
    from memtui.core.doctor.model import Finding

    (tmp_path / "memory").mkdir()
    db = CatalogDB.for_memory_dir(tmp_path / "state", tmp_path / "memory")
    assert db.enabled
    finding = Finding("near-duplicate", "info", "a.md", 3, message, None, data)
    keep_report(db, "fp", [finding], ["a.md"], {})
    got = kept_report(db, "fp")
    assert (got is not None) == kept
    if got is not None:
        assert got.findings == [finding] and got.relpaths == ["a.md"] and got.claims == {}
        assert got.counts == {"error": 0, "warning": 0, "info": 1}
        assert got.rendered is not None and orjson_loads(got.rendered) == [finding.to_json()]


def orjson_loads(text: bytes) -> object:
    import orjson

    return orjson.loads(text)


@pytest.mark.parametrize("count", [0, 1, 2, 3, 5])
def test_the_findings_text_is_what_orjson_writes_for_the_report_in_any_number_of_chunks(count: int, monkeypatch: pytest.MonkeyPatch) -> None:
    import orjson

    from memtui.core.doctor import model

    monkeypatch.setattr(model, "_RENDER_CHUNK", 2)  # chunks of two findings: full, last partial
    findings = [model.Finding("relative-date", "warning", f"m{i}.md", i, f"say «{i}»\nplainly", None, {"n": [i, {"k": "v"}]}) for i in range(count)]
    expected = orjson.dumps({"findings": [f.to_json() for f in findings], "after": 1}, option=orjson.OPT_INDENT_2)
    got = orjson.dumps({"findings": orjson.Fragment(model.findings_json(findings)), "after": 1}, option=orjson.OPT_INDENT_2)
    assert got == expected
