"""The consolidation lock, docs/behaviour.md §8, with real PIDs: this process (alive) and a finished child
(dead). Expected values are the spec's rules written out by hand."""

from __future__ import annotations

import multiprocessing
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from support.dream import NOW, write

from memtui.core.dream import LockHeldError, LockLostError, acquire_lock, read_lock
from memtui.core.dream.lock import LOCK_NAME, lock_body, pid_alive

T = NOW.timestamp()


@pytest.fixture(scope="module")
def dead_pid() -> int:
    out = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True, check=True)
    pid = int(out.stdout)
    assert not pid_alive(pid)
    return pid


@pytest.fixture
def mem(tmp_path: Path) -> Path:
    d = tmp_path / "memory"
    d.mkdir()
    return d


def lock_at(mem: Path, body: str, age_s: float) -> Path:
    return write(mem / LOCK_NAME, body, T - age_s)


def test_absent_lock_means_never_consolidated_and_is_free(mem: Path) -> None:
    info = read_lock(mem)
    assert (info.exists, info.mtime, info.last_consolidated_at, info.holder_pid) == (False, None, None, None)
    handle = acquire_lock(mem, NOW)
    after = read_lock(mem)
    assert after.holder_pid == os.getpid()
    assert after.mtime == T  # mtime = acquisition time
    assert after.prior_mtime == 0.0  # the note says: there was no file
    assert handle.prior_mtime is None and handle.reclaimed is None


def test_live_pid_under_60_minutes_blocks(mem: Path) -> None:
    lock_at(mem, f"{os.getpid()}\n", 59 * 60)
    with pytest.raises(LockHeldError) as err:
        acquire_lock(mem, NOW)
    assert err.value.holder_pid == os.getpid()
    assert read_lock(mem).body == f"{os.getpid()}\n"  # untouched


def test_live_pid_over_60_minutes_is_reclaimed(mem: Path) -> None:
    lock_at(mem, f"{os.getpid()}\n", 61 * 60)
    handle = acquire_lock(mem, NOW)
    assert handle.reclaimed == "stale"
    assert handle.prior_mtime == T - 61 * 60


def test_dead_pid_is_reclaimed_even_when_fresh(mem: Path, dead_pid: int) -> None:
    lock_at(mem, str(dead_pid), 60)
    handle = acquire_lock(mem, NOW)
    assert handle.reclaimed == "dead-holder"
    assert handle.prior_mtime == T - 60


def test_success_leaves_the_acquisition_mtime_and_an_empty_body(mem: Path) -> None:
    lock_at(mem, "", 3 * 86_400)
    handle = acquire_lock(mem, NOW)
    assert handle.commit()
    info = read_lock(mem)
    assert (info.body, info.mtime, info.last_consolidated_at) == ("", T, T)


def test_rollback_without_prior_deletes_the_file(mem: Path) -> None:
    acquire_lock(mem, NOW).rollback()
    assert not (mem / LOCK_NAME).exists()


def test_rollback_restores_the_prior_mtime_with_an_empty_body(mem: Path) -> None:
    lock_at(mem, "", 2 * 86_400)
    handle = acquire_lock(mem, NOW)
    assert read_lock(mem).mtime == T
    assert handle.rollback()
    info = read_lock(mem)
    assert (info.body, info.mtime) == ("", T - 2 * 86_400)


def test_rollback_does_not_touch_a_lock_someone_else_took(mem: Path) -> None:
    handle = acquire_lock(mem, NOW)
    lock_at(mem, "424242\n", 0)
    assert not handle.rollback()
    assert read_lock(mem).body == "424242\n"


def test_a_crashed_run_is_recognised_and_rolled_back_to_its_prior(mem: Path, dead_pid: int) -> None:
    prior = T - 48 * 3600
    lock_at(mem, lock_body(dead_pid, prior, "abc"), 10 * 60)  # died 10 minutes ago, mid-run
    info = read_lock(mem)
    assert info.crashed
    assert info.holder_pid == dead_pid  # the reference reads the leading integer only
    assert info.last_consolidated_at == prior  # not the crashed run's acquisition time
    handle = acquire_lock(mem, NOW)
    assert handle.reclaimed == "crashed-run"
    assert handle.prior_mtime == prior  # a rollback now goes back to before the crash
    handle.rollback()
    assert read_lock(mem).mtime == prior


def test_a_crashed_first_run_means_never(mem: Path, dead_pid: int) -> None:
    lock_at(mem, lock_body(dead_pid, None, "abc"), 60)
    assert read_lock(mem).last_consolidated_at is None
    acquire_lock(mem, NOW).rollback()
    assert not (mem / LOCK_NAME).exists()


def test_write_then_reread_loses_to_another_body(mem: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import memtui.core.dream.lock as lock_mod

    real = lock_mod._set

    def racer_writes_after_us(path: Path, body: str, mtime: float) -> None:
        real(path, body, mtime)
        real(path, "31337\nprior-mtime: 0\nrun: other\n", mtime)

    monkeypatch.setattr(lock_mod, "_set", racer_writes_after_us)
    with pytest.raises(LockLostError):
        acquire_lock(mem, NOW)


def test_two_threads_racing_exactly_one_wins(mem: Path) -> None:
    barrier = threading.Barrier(8)
    results: list[str] = []

    def racer() -> None:
        barrier.wait()
        try:
            acquire_lock(mem, NOW)
            results.append("won")
        except (LockHeldError, LockLostError):
            results.append("lost")

    threads = [threading.Thread(target=racer) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(results) == ["lost"] * 7 + ["won"]


def _process_racer(mem: str, start: object, out: object) -> None:
    start.wait()  # type: ignore[attr-defined]
    try:
        acquire_lock(Path(mem), NOW)
        out.put("won")  # type: ignore[attr-defined]
    except (LockHeldError, LockLostError):
        out.put("lost")  # type: ignore[attr-defined]
    # stay alive until the parent has read every result, so the winner's PID is live
    start.wait()  # type: ignore[attr-defined]


def test_two_processes_racing_exactly_one_wins(mem: Path) -> None:
    ctx = multiprocessing.get_context("fork")
    n = 4
    start = ctx.Barrier(n + 1)
    out = ctx.Queue()
    procs = [ctx.Process(target=_process_racer, args=(str(mem), start, out)) for _ in range(n)]
    for p in procs:
        p.start()
    start.wait()
    results = sorted(out.get(timeout=30) for _ in range(n))
    start.wait()
    for p in procs:
        p.join(timeout=30)
    assert results == ["lost"] * (n - 1) + ["won"]
