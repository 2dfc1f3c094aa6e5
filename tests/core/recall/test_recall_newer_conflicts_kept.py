"""The "a newer memory disagrees" mark of recall's picks, kept for the whole memory dir in its
catalog database: given back without a scan while nothing below the dir changed; a changed,
new or deleted memory gives the mark the texts give; a damaged kept value is worked out again;
a dir with a file written within the racy window keeps nothing. Expected conflicts by hand."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from memtui.core.memory import catalogdb, memories
from memtui.core.memory.catalogdb import CatalogDB
from memtui.core.memory.memories import SEED_FORMAT
from memtui.core.verify.conflicts import CONFLICTS_KIND, Conflict, DifferingValue, conflicts_fingerprint, newer_conflicts_in

DAY = 86_400.0
T0 = 1_770_000_000.0
OLD, NEW = "project_sqs_to_kafka.md", "project_kafka_migration.md"


def write(memory_dir: Path, name: str, description: str, body: str, age_days: float) -> None:
    memory_dir.mkdir(parents=True, exist_ok=True)
    path = memory_dir / name
    path.write_text(f"---\nname: {name}\ndescription: {description}\ntype: project\n---\n\n{body}")
    os.utime(path, (T0 - age_days * DAY, T0 - age_days * DAY))


def write_old(memory_dir: Path) -> None:
    write(memory_dir, OLD, "Kafka migration plan: partner events cutover planned for 2026-01-03", "The cutover is planned for 2026-01-03.\n", 65)


def write_new(memory_dir: Path, date: str = "2026-02-14") -> None:
    write(memory_dir, NEW, f"Kafka migration: partner events cutover on {date}", f"Cutover is on {date}.\n", 4)


def expected_conflict() -> Conflict:
    # the two cutover dates, each first stated on line 3 (the description) of its file (the
    # body's repeat of the same date adds nothing); the older memory is the one 65 days old.
    # Subject terms (three letters or more, stop words such as "project" and "for" dropped, a
    # plural "s" cut): the old one's {sqs, kafka, migration, plan, partner, event, cutover,
    # planned}, the new one's {kafka, migration, partner, event, cutover}; the shared ones are
    # in both dates' sentences too.
    return Conflict(OLD, NEW, ("cutover", "event", "kafka", "migration", "partner"),
                    (DifferingValue("date", "2026-01-03", "2026-02-14", 3, 3, ("cutover", "event", "kafka", "migration", "partner")),),
                    older_mtime=T0 - 65 * DAY, newer_mtime=T0 - 4 * DAY)


@pytest.fixture
def no_racy_window(monkeypatch: pytest.MonkeyPatch) -> None:
    """The files were written just now (their ctime cannot be set back): without this the dir
    would have no digest and nothing would be kept."""
    monkeypatch.setattr(catalogdb, "RACY_SECONDS", -10)


def db(tmp_path: Path, memory_dir: Path) -> CatalogDB:
    return CatalogDB.for_memory_dir(tmp_path / "state", memory_dir)


def no_scan(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("scanned")

    monkeypatch.setattr(memories, "scan_memories", refuse)


@pytest.mark.usefixtures("no_racy_window")
def test_a_warm_mark_is_the_kept_one_and_scans_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    memory_dir = tmp_path / "memory"
    write_old(memory_dir)
    write_new(memory_dir)
    first = newer_conflicts_in(memory_dir, SEED_FORMAT, db(tmp_path, memory_dir))
    [got] = first[OLD]
    assert (got.older, got.newer, got.values[0].older, got.values[0].newer) == (OLD, NEW, "2026-01-03", "2026-02-14")
    assert (got.older_mtime, got.newer_mtime) == (T0 - 65 * DAY, T0 - 4 * DAY)
    assert list(first) == [OLD]
    with monkeypatch.context() as m:
        no_scan(m)
        warm = newer_conflicts_in(memory_dir, SEED_FORMAT, db(tmp_path, memory_dir))
    assert warm == first
    assert warm[OLD][0].to_json() == first[OLD][0].to_json()


@pytest.mark.usefixtures("no_racy_window")
def test_a_changed_memory_gives_its_own_mark(tmp_path: Path) -> None:
    memory_dir = tmp_path / "memory"
    write_old(memory_dir)
    write_new(memory_dir)
    assert OLD in newer_conflicts_in(memory_dir, SEED_FORMAT, db(tmp_path, memory_dir))
    write_new(memory_dir, "2026-01-03")  # the newer one now agrees, at the same mtime
    assert newer_conflicts_in(memory_dir, SEED_FORMAT, db(tmp_path, memory_dir)) == {}


@pytest.mark.usefixtures("no_racy_window")
def test_a_new_and_a_deleted_memory_give_their_own_mark(tmp_path: Path) -> None:
    memory_dir = tmp_path / "memory"
    write_old(memory_dir)
    assert newer_conflicts_in(memory_dir, SEED_FORMAT, db(tmp_path, memory_dir)) == {}  # one memory: nothing to disagree with
    write_new(memory_dir)
    marks = newer_conflicts_in(memory_dir, SEED_FORMAT, db(tmp_path, memory_dir))
    assert [(c.older, c.newer) for c in marks[OLD]] == [(OLD, NEW)]
    (memory_dir / NEW).unlink()
    assert newer_conflicts_in(memory_dir, SEED_FORMAT, db(tmp_path, memory_dir)) == {}


@pytest.mark.usefixtures("no_racy_window")
@pytest.mark.parametrize("value", [b"not json", b"{}", b"[[1, 2]]", b'[[{"older": "a"}, 1.0, 2.0]]', b'[[{"older": "a", "newer": "b", "subject": [], "values": []}, 1, 2.0]]'])
def test_a_damaged_kept_value_is_worked_out_again(tmp_path: Path, value: bytes) -> None:
    memory_dir = tmp_path / "memory"
    write_old(memory_dir)
    write_new(memory_dir)
    expected = newer_conflicts_in(memory_dir, SEED_FORMAT, db(tmp_path, memory_dir))
    fingerprint = conflicts_fingerprint(memory_dir, SEED_FORMAT)
    assert fingerprint is not None
    db(tmp_path, memory_dir).put_result(CONFLICTS_KIND, fingerprint, value)
    assert newer_conflicts_in(memory_dir, SEED_FORMAT, db(tmp_path, memory_dir)) == expected
    assert db(tmp_path, memory_dir).result(CONFLICTS_KIND, fingerprint) != value  # kept anew


def test_the_kept_conflict_is_the_one_worked_out_by_hand(tmp_path: Path, no_racy_window: None) -> None:
    memory_dir = tmp_path / "memory"
    write_old(memory_dir)
    write_new(memory_dir)
    newer_conflicts_in(memory_dir, SEED_FORMAT, db(tmp_path, memory_dir))
    got = newer_conflicts_in(memory_dir, SEED_FORMAT, db(tmp_path, memory_dir))  # from the kept value
    assert got == {OLD: [expected_conflict()]}


def test_a_racy_dir_keeps_nothing(tmp_path: Path) -> None:
    memory_dir = tmp_path / "memory"
    write_old(memory_dir)
    write_new(memory_dir)  # (the files' ctime is now: within the racy window)
    assert conflicts_fingerprint(memory_dir, SEED_FORMAT) is None
    assert OLD in newer_conflicts_in(memory_dir, SEED_FORMAT, db(tmp_path, memory_dir))
