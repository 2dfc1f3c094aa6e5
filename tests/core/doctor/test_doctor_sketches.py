"""Each memory's near-duplicate sketch kept in the catalog database (``SketchBook``): after one
memory changes, the doctor and the dream tokenise that memory's text only, and find the pairs a
run without the database finds (the oracle: ``run_doctor`` with no cache, and the brute force
of the module's definition). Large blocks are forced with ``EXACT_BLOCK_MAX`` so the MinHash
path, the one the sketches feed, runs on a few dozen memories."""

from __future__ import annotations

import random
import sqlite3
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from support.doctor import NOW, write

import memtui.core.doctor.duplicates as dup
from memtui.core.doctor import run_doctor
from memtui.core.doctor.model import DoctorReport
from memtui.core.memory import catalogdb
from memtui.core.memory.catalogdb import DB_NAME, CatalogDB

WORDS = ("deploy ingest service staging canary rollback migration schema kafka topic retention replica "
         "backup restore alert latency budget review squash commit branch release token rotate vault "
         "dashboard oncall pager runbook queue worker shard index cache warm cold").split()


@pytest.fixture(autouse=True)
def no_racy_window(monkeypatch: pytest.MonkeyPatch) -> None:
    """The files are written just now: without this every one would be racy and nothing kept."""
    monkeypatch.setattr(catalogdb, "RACY_SECONDS", -10)


@pytest.fixture
def tokenised(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The texts the near-duplicate join tokenises into its word table (for sketches)."""
    seen: list[str] = []
    real = dup._TokenTable.add

    def spy(self: dup._TokenTable, text: str) -> None:
        seen.append(text)
        real(self, text)

    monkeypatch.setattr(dup._TokenTable, "add", spy)
    return seen


def memory(description: str, body: str, kind: str = "project") -> str:
    return f"---\nname: n\ndescription: {description}\ntype: {kind}\n---\n\n{body}\n"


def store(tmp_path: Path, n: int = 40, seed: int = 3) -> Path:
    """``n`` project memories of 12–20 random words, every fifth followed by a near copy (one
    word changed): a block large enough for MinHash once ``EXACT_BLOCK_MAX`` is lowered."""
    rng = random.Random(seed)
    memory_dir = tmp_path / "memory"
    for i in range(n):
        words = [rng.choice(WORDS) for _ in range(rng.randint(12, 20))]
        write(memory_dir, f"m{i:03}.md", memory(" ".join(words[:5]), " ".join(words)))
        if i % 5 == 0:
            words[3] = "changed"
            write(memory_dir, f"m{i:03}-copy.md", memory(" ".join(words[:5]), " ".join(words)))
    write(memory_dir, "MEMORY.md", "# Index\n")
    return memory_dir


def near(report: DoctorReport) -> list[tuple[str | None, tuple[str, ...]]]:
    return [(f.path, tuple(f.data["others"])) for f in report.findings if f.code == "near-duplicate"]


def test_after_one_change_only_that_memory_is_tokenised(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, tokenised: list[str]) -> None:
    monkeypatch.setattr(dup, "EXACT_BLOCK_MAX", 5)
    memory_dir = store(tmp_path)
    state = tmp_path / "state"
    first = run_doctor(memory_dir, NOW, cache=CatalogDB.for_memory_dir(state, memory_dir))
    assert len(tokenised) == 48  # every memory once: nothing kept yet
    assert first.findings == run_doctor(memory_dir, NOW).findings
    assert len(near(first)) >= 12  # most of the 8 planted pairs, a finding on each side
    # a new pair appears: m001 becomes a near copy of m002
    text = (memory_dir / "m002.md").read_text()
    write(memory_dir, "m001.md", text[: text.rindex(" ")] + " rewritten\n")
    tokenised.clear()
    second = run_doctor(memory_dir, NOW, cache=CatalogDB.for_memory_dir(state, memory_dir))
    assert len(tokenised) == 1 and tokenised[0].endswith(" rewritten")  # only the changed memory
    oracle = run_doctor(memory_dir, NOW)
    assert second.findings == oracle.findings
    assert ("m001.md", ("m002.md",)) in near(second)


def test_the_dream_reads_the_kept_sketches_too(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, tokenised: list[str]) -> None:
    from memtui.core.dream.gates import DreamContext
    from memtui.core.dream.run import plan_dream

    monkeypatch.setattr(dup, "EXACT_BLOCK_MAX", 5)
    memory_dir = store(tmp_path)
    sessions = tmp_path / "sessions"
    sessions.mkdir()
    state = tmp_path / "state"
    run_doctor(memory_dir, NOW, cache=CatalogDB.for_memory_dir(state, memory_dir))  # keeps every sketch
    tokenised.clear()
    kept = plan_dream(DreamContext(memory_dir, sessions, state), NOW, "offline")
    assert tokenised == []  # the doctor's sketches serve the dream
    fresh = plan_dream(DreamContext(memory_dir, sessions, tmp_path / "other-state"), NOW, "offline")
    assert kept.plan.diff() == fresh.plan.diff() and kept.plan.diff() != ""


@pytest.mark.parametrize("value", [b"", b"short", bytes(dup._SKETCH_BYTES + 1)])
def test_a_kept_sketch_of_the_wrong_size_is_made_again_from_the_text(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, tokenised: list[str], value: bytes) -> None:
    monkeypatch.setattr(dup, "EXACT_BLOCK_MAX", 5)
    memory_dir = store(tmp_path)
    state = tmp_path / "state"
    expected = run_doctor(memory_dir, NOW, cache=CatalogDB.for_memory_dir(state, memory_dir))
    with sqlite3.connect(next(state.rglob(DB_NAME))) as conn:
        assert conn.execute("UPDATE derived SET value = ? WHERE kind = ? AND relpath = ?", (value, dup.SKETCH_KIND, "m005.md")).rowcount == 1
        conn.execute("DELETE FROM results")  # no kept report or pairs: the join runs again
    tokenised.clear()
    again = run_doctor(memory_dir, NOW, cache=CatalogDB.for_memory_dir(state, memory_dir))
    assert len(tokenised) == 1 and again.findings == expected.findings


def test_signatures_skip_memories_without_words() -> None:
    """A memory with no words between two others leaves their signatures as they are alone,
    and has a signature of zeros; each row is the least of each hash function over its words,
    worked out here one word at a time."""
    a, b = dup._minhash_params()
    prime = (1 << 31) - 1
    docs = [[5, 9, 77], [], [1 << 30, 3], [], []]
    words = np.array([w for d in docs for w in d], dtype=np.int32)
    lens = np.array([len(d) for d in docs])
    sig = dup._signatures(words, lens)
    for row, d in zip(sig.tolist(), docs, strict=True):
        assert row == ([min((int(a[j]) * w + int(b[j])) % prime for w in d) for j in range(len(a))] if d else [0] * len(a))


def test_a_small_store_keeps_no_sketch_and_does_not_import_numpy(tmp_path: Path) -> None:
    """A store whose blocks all take the exact path never makes the sketches' arrays."""
    memory_dir = store(tmp_path, n=6)
    code = (
        "import sys\n"
        "from pathlib import Path\n"
        "from datetime import datetime, UTC\n"
        "from memtui.core.doctor import run_doctor\n"
        "from memtui.core.memory import catalogdb\n"
        "from memtui.core.memory.catalogdb import CatalogDB\n"
        "catalogdb.RACY_SECONDS = -10  # the files were written just now\n"
        f"md = Path({str(memory_dir)!r})\n"
        "now = datetime(2026, 3, 10, 12, tzinfo=UTC)\n"
        f"r = run_doctor(md, now, cache=CatalogDB.for_memory_dir(Path({str(tmp_path / 'state')!r}), md))\n"
        "print(r.findings == run_doctor(md, now).findings, any(f.code == 'near-duplicate' for f in r.findings), 'numpy' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["True", "True", "False"]
    with sqlite3.connect(next((tmp_path / "state").rglob(DB_NAME))) as conn:
        assert conn.execute("SELECT count(*) FROM derived WHERE kind = ?", (dup.SKETCH_KIND,)).fetchone()[0] == 0
        assert conn.execute("SELECT count(*) FROM derived").fetchone()[0] > 0  # the other facts were kept
