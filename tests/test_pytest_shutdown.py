"""A passing test run ends without a ``PytestUnraisableExceptionWarning`` / ``KeyboardInterrupt``
traceback from hypothesis.

The cause: when pytest finishes it runs five full garbage collections (its unraisable-exception
cleanup) with its unraisable hook still installed. Each walks every live object; in a worker of
this suite that is the anthropic SDK's models and all the tests left (~190,000 objects, 0.1–0.5 s
a pass on a busy machine). An xdist worker whose shutdown is not over 5 s after the controller
asked sends itself SIGINT (execnet's ``_terminate_execution``). The signal is handled at the next
Python bytecode, which during a collection is a ``gc.callbacks`` function — hypothesis registers
one to time collections — so the ``KeyboardInterrupt`` is "ignored in" that callback, reported
to pytest's hook, and printed after the run passed.

The fix (``tests/conftest.py``, ``pytest_unconfigure``): collect once and ``gc.freeze`` what
survives before that cleanup, so its five passes walk almost nothing.

The run below replays it in a fresh pytest process, deterministically: a tiny hypothesis test
module with a large live heap (standing in for the SDK) under the project's conftest, and a
plugin in the role of execnet's 5-second deadline: it interrupts the process (SIGINT) when a
full collection of pytest's cleanup has more than ``BUDGET`` objects to walk, which is what made
the real shutdown overrun.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

CONFTEST = Path(__file__).with_name("conftest.py")
# Objects a full collection may walk during pytest's cleanup before the deadline plugin treats it
# as overrunning (the heap left below is 150,000; the interpreter, pytest and hypothesis ~100,000).
BUDGET = 50_000

DEADLINE_PLUGIN = f'''
import gc
import signal

import pytest

_cleanup = False


def _overrun(phase, info):
    # a full pass of pytest's cleanup with more to walk than the budget: the worker would miss
    # execnet's 5 s, and execnet would interrupt it mid-collection
    if _cleanup and phase == "start" and info["generation"] == 2 and len(gc.get_objects()) > {BUDGET}:
        signal.raise_signal(signal.SIGINT)


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config):
    global _cleanup
    _cleanup = True  # every unconfigure hook has run; pytest's cleanup collections come next
    gc.callbacks.append(_overrun)
'''

TESTS = '''
from hypothesis import given, strategies as st

# long-lived objects the collector tracks, as the SDK's models and the suite's fixtures are
HEAP = [{"n": n} for n in range(150_000)]


@given(st.integers())
def test_hypothesis_times_collections(n):
    assert isinstance(n, int)


def test_heap_is_alive():
    assert len(HEAP) == 150_000
'''


def test_a_passing_run_ends_without_an_interrupt_in_a_gc_callback(tmp_path: Path) -> None:
    (tmp_path / "conftest.py").write_text(CONFTEST.read_text(encoding="utf-8"), encoding="utf-8")
    (tmp_path / "deadline_plugin.py").write_text(DEADLINE_PLUGIN, encoding="utf-8")
    (tmp_path / "test_tiny.py").write_text(TESTS, encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "deadline_plugin", "-p", "no:cacheprovider", "-p", "no:xdist", "test_tiny.py"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300, check=False,
    )
    output = run.stdout + run.stderr
    assert run.returncode == 0, output
    assert "2 passed" in output, output
    assert "PytestUnraisableExceptionWarning" not in output, output
    assert "KeyboardInterrupt" not in output, output
