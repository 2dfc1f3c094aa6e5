"""A warm doctor (nothing changed since its last run, the catalog database kept) reads no memory
file, the conflict and claim checks included, and says exactly what a doctor without the
database says; a changed file is read and checked again. (The near-duplicate pairs are kept for
the whole dir: after a change their word sets are made again from every text.)"""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path

import pytest

from memtui.core.doctor import run_doctor
from memtui.core.doctor.model import DoctorReport
from memtui.core.memory import catalogdb, index
from memtui.core.memory.catalogdb import CatalogDB
from memtui.demo import materialize
from support.opens import memory_files_opened, subject_terms_made

NOW = datetime(2026, 3, 10, 12, tzinfo=UTC)


@pytest.fixture(autouse=True)
def no_racy_window(monkeypatch: pytest.MonkeyPatch) -> None:
    """The demo's files were written just now (their ctime cannot be set back): without this
    each would be 'racy' and never kept in the database."""
    monkeypatch.setattr(catalogdb, "RACY_SECONDS", -10)


def _doctor(memory_dir: Path, project: Path, state: Path | None) -> DoctorReport:
    cache = CatalogDB.for_memory_dir(state, memory_dir) if state is not None else None
    return run_doctor(memory_dir, NOW, cache=cache, project_root=project)


def _same(a: DoctorReport, b: DoctorReport) -> None:
    assert a.findings == b.findings
    assert a.to_json() == b.to_json()


def test_a_warm_doctor_reads_no_memory_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ws = materialize(tmp_path / "demo", NOW)
    state = tmp_path / "state"
    expected = _doctor(ws.memory_dir, ws.project, None)
    # what the checks that need the bodies find on the demo (see test_doctor_traps)
    assert [f.path for f in expected.findings if f.code == "possible-conflict"] == ["project_sqs_to_kafka.md"]
    assert {f.code for f in expected.findings if f.code.startswith("stale")} == {"stale-path", "stale-symbol"}
    _same(_doctor(ws.memory_dir, ws.project, state), expected)  # fills the database

    with memory_files_opened(monkeypatch, ws.memory_dir) as opened:
        _same(_doctor(ws.memory_dir, ws.project, state), expected)
    assert opened == []


def test_a_changed_file_is_checked_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ws = materialize(tmp_path / "demo", NOW)
    state = tmp_path / "state"
    _doctor(ws.memory_dir, ws.project, state)
    newer = ws.memory_dir / "project_kafka_migration.md"
    stamp = newer.stat().st_mtime
    old = newer.read_text(encoding="utf-8")
    # the newer memory now agrees with the older one's date, and names a path the project lacks
    older_date = "2026-02-10"
    changed = old.replace("2026-03-24", older_date) + "\nSee `src/nowhere/kafka_cutover.py`.\n"
    assert changed != old.replace("2026-03-24", older_date)
    newer.write_text(changed, encoding="utf-8")
    os.utime(newer, (stamp, stamp))

    expected = _doctor(ws.memory_dir, ws.project, None)
    assert [f for f in expected.findings if f.code == "possible-conflict"] == []
    assert ("stale-path", "project_kafka_migration.md") in {(f.code, f.path) for f in expected.findings}

    with memory_files_opened(monkeypatch, ws.memory_dir) as opened:
        _same(_doctor(ws.memory_dir, ws.project, state), expected)
    assert "project_kafka_migration.md" in opened


def test_a_warm_doctor_makes_no_subject_terms(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The conflict rule's subject terms (file name, name, description) are kept with the
    memory's other facts: a warm run finds the same conflict without making them again."""
    ws = materialize(tmp_path / "demo", NOW)
    state = tmp_path / "state"
    expected = _doctor(ws.memory_dir, ws.project, None)
    _doctor(ws.memory_dir, ws.project, state)  # fills the database
    made = subject_terms_made(monkeypatch)
    _same(_doctor(ws.memory_dir, ws.project, state), expected)
    assert made == []


def _memory(path: Path, name: str, description: str, stamp: float) -> None:
    path.write_text(f"---\nname: {name}\ndescription: {description}\ntype: project\n---\n\n{description}.\n", encoding="utf-8")
    os.utime(path, (stamp, stamp))


def test_kept_subject_terms_follow_a_changed_header(tmp_path: Path) -> None:
    """Two memories on the same subject disagreeing on a number conflict; once the newer one's
    name and description are about something else, a warm run finds no conflict (its subject
    terms were made again, not read back from the database)."""
    memory_dir = tmp_path / "memory"
    memory_dir.mkdir()
    state = tmp_path / "state"
    day = 86_400.0
    older, newer = memory_dir / "project_a.md", memory_dir / "project_b.md"
    _memory(older, "Invoice archive retention", "The invoice archive retention is 30 days", NOW.timestamp() - 20 * day)
    _memory(newer, "Invoice archive retention rule", "The invoice archive retention is 90 days", NOW.timestamp() - 10 * day)

    def doctor(state_dir: Path | None) -> DoctorReport:
        cache = CatalogDB.for_memory_dir(state_dir, memory_dir) if state_dir is not None else None
        return run_doctor(memory_dir, NOW, cache=cache)

    first = doctor(state)
    assert [(f.path, f.data["other"]) for f in first.findings if f.code == "possible-conflict"] == [("project_a.md", "project_b.md")]
    _same(doctor(state), first)  # warm: the same conflict from the kept terms

    # the same number, now about the deploy window: no shared subject term any more
    _memory(newer, "Deploy window", "The deploy window is 90 days", NOW.timestamp() - 10 * day)
    expected = doctor(None)
    assert [f for f in expected.findings if f.code == "possible-conflict"] == []
    _same(doctor(state), expected)


def test_a_doctor_parses_each_index_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The index checks use the links the catalog found in ``MEMORY.md`` (and
    ``team/MEMORY.md``), not a second parse of the same text; they find what they found."""
    ws = materialize(tmp_path / "demo", NOW)
    expected = _doctor(ws.memory_dir, ws.project, None)
    assert {f.code for f in expected.findings if f.path == "MEMORY.md"} == {"index-dangling"}
    parsed: list[str] = []
    real = index.parse_entries

    def spy(text: str, index_dir_rel: str = "") -> list[index.IndexEntry]:
        parsed.append(index_dir_rel)
        return real(text, index_dir_rel)

    monkeypatch.setattr(index, "parse_entries", spy)
    _same(_doctor(ws.memory_dir, ws.project, None), expected)
    assert sorted(parsed) == ["", "team"]


def test_the_doctor_gives_back_the_collector_thresholds(tmp_path: Path) -> None:
    """The doctor collects cyclic garbage less often while it runs, and restores the
    thresholds the process had (a bad file included)."""
    import gc

    ws = materialize(tmp_path / "demo", NOW)
    (ws.memory_dir / "broken.md").write_bytes(b"---\nname: [unclosed\n---\n\xff\xfe body\n")
    before = gc.get_threshold()
    gc.set_threshold(900, 11, 12)
    try:
        report = _doctor(ws.memory_dir, ws.project, tmp_path / "state")
        assert gc.get_threshold() == (900, 11, 12)
    finally:
        gc.set_threshold(*before)
    assert report.memories == 31
