"""Leaving the app: q / ctrl+q end the process even while a worker is still reading, a write in
flight ends whole first, ctrl+c says how to quit in plain words, and esc closes the key panel.

The process-level tests run the real ``memtui`` command in a pseudo-terminal, as a user's shell
does, with the doctor replaced (through ``sitecustomize``) by one that never finishes and never
looks at cancellation: the worst reader there can be.
"""

from __future__ import annotations

import os
import pty
import select
import struct
import subprocess
import sys
import termios
import fcntl
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from support.pilot import TIMEOUT, settle, wait_until

from memtui.core.doctor import DoctorCancelled
from memtui.tui.app import MemtuiApp
from memtui.tui.doctor import DoctorScreen
from memtui.tui.widgets.keys_panel import key_panel

# A doctor that never ends and never checks for cancellation (a stuck read), installed before
# memtui's modules are imported.
STUCK_DOCTOR = """
import threading, memtui.core.doctor as doctor
def run_doctor(*args, **kwargs):
    threading.Event().wait()
doctor.run_doctor = run_doctor
"""

# Leaving the alternate screen: the terminal is given back as it was.
LEAVE_ALT_SCREEN = b"\x1b[?1049l"


async def test_esc_closes_the_key_panel_and_keeps_the_pane_as_it_was(make_app: Callable[..., MemtuiApp]) -> None:
    app = make_app()
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        await pilot.press("slash", "a")  # a search typed, then back to the list
        await pilot.press("escape")
        focused = app.focused
        await pilot.press("question_mark")
        await wait_until(pilot, lambda: key_panel(app.screen) is not None, what="the key panel")
        await pilot.press("escape")
        await wait_until(pilot, lambda: key_panel(app.screen) is None, what="the key panel closed")
        assert app.focused is focused
        assert app.query_one("#memories-search").value == "a"  # type: ignore[attr-defined]  # esc closed the panel only
        await pilot.press("escape")  # with no panel, esc is the pane's again: it clears the search
        await wait_until(pilot, lambda: app.query_one("#memories-search").value == "", what="the search cleared")  # type: ignore[attr-defined]


async def test_ctrl_c_says_how_to_quit_in_plain_words(make_app: Callable[..., MemtuiApp]) -> None:
    app = make_app()
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+c")
        await pilot.pause()
        said = [n.message for n in app._notifications]
        assert said == ["Press q to quit (ctrl+q from a text box)."]
        assert app.is_running


async def test_quit_does_not_wait_for_a_reader_that_never_ends(make_app: Callable[..., MemtuiApp], monkeypatch: pytest.MonkeyPatch) -> None:
    release = threading.Event()
    ran_on: list[threading.Thread] = []

    def stuck(*args: object, **kwargs: object) -> None:
        ran_on.append(threading.current_thread())
        release.wait(TIMEOUT)

    monkeypatch.setattr("memtui.tui.doctor.run_doctor", stuck)
    app = make_app()
    try:
        async with app.run_test(size=(120, 36)) as pilot:
            await settle(pilot)
            await pilot.press("D")
            await wait_until(pilot, lambda: bool(ran_on), what="the doctor running")
            await pilot.press("ctrl+q")
            await wait_until(pilot, lambda: not app.is_running, what="the app gone", quiet=True)
        # the reader is left on a daemon thread, which does not keep the process alive
        assert ran_on[0].daemon and ran_on[0].is_alive()
    finally:
        release.set()


async def test_quit_waits_for_a_write_in_flight(make_app: Callable[..., MemtuiApp]) -> None:
    app = make_app()
    ended: list[bool] = []
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        started = threading.Event()

        def write() -> None:  # stands in for a journaled transaction of the Memories pane
            started.set()
            time.sleep(0.5)
            ended.append(True)

        app.run_worker(write, thread=True, group="memories-apply")
        await wait_until(pilot, started.is_set, what="the write started")
        await pilot.press("q")
        await wait_until(pilot, lambda: not app.is_running, what="the app gone", quiet=True)
    assert ended == [True]


async def test_the_doctor_shows_its_progress_and_esc_stops_it(make_app: Callable[..., MemtuiApp], monkeypatch: pytest.MonkeyPatch) -> None:
    stopped = threading.Event()

    def slow(*args: object, progress: Callable[[str, int, int], None], **kwargs: object) -> None:
        try:
            for done in range(10_000):
                progress("reading", done, 10_000)
                time.sleep(0.01)
        except DoctorCancelled:
            stopped.set()
            raise

    monkeypatch.setattr("memtui.tui.doctor.run_doctor", slow)
    app = make_app()
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        await pilot.press("D")
        await wait_until(pilot, lambda: isinstance(app.screen, DoctorScreen), what="the doctor screen")
        summary = app.screen.query_one("#doctor-summary")
        await wait_until(pilot, lambda: " of 10,000 memories" in str(summary.render()), what="the progress")
        text = str(summary.render())
        assert text.startswith("Running the doctor: reading ") and text.endswith("esc stops it")
        await pilot.press("escape")
        await wait_until(pilot, lambda: not isinstance(app.screen, DoctorScreen), what="back to the memories")
        await wait_until(pilot, stopped.is_set, what="the run stopped")


def _run_in_terminal(args: list[str], env: dict[str, str], keys: list[tuple[bytes, str]], *, cwd: Path) -> tuple[int | None, bytes]:
    """Run ``args`` in a pseudo-terminal of 100×30; for each (key bytes, text to wait for
    first) write the key once the output shows the text (``""``: no wait). Returns the exit
    status (``None``: still running after ``TIMEOUT`` seconds — killed) and every byte written
    to the terminal."""
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 100, 0, 0))
    proc = subprocess.Popen(args, stdin=follower, stdout=follower, stderr=follower, env=env, cwd=cwd, close_fds=True, start_new_session=True)
    os.close(follower)
    out = bytearray()

    def read_for(seconds: float) -> None:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            ready, _, _ = select.select([leader], [], [], 0.05)
            if ready:
                try:
                    chunk = os.read(leader, 65536)
                except OSError:  # the terminal closed: the process is gone
                    return
                if not chunk:
                    return
                out.extend(chunk)
            elif proc.poll() is not None:
                return

    try:
        for key, wait_for_text in keys:
            deadline = time.monotonic() + TIMEOUT
            while wait_for_text and wait_for_text.encode() not in out and time.monotonic() < deadline and proc.poll() is None:
                read_for(0.1)
            read_for(0.3)
            os.write(leader, key)
        deadline = time.monotonic() + TIMEOUT
        while proc.poll() is None and time.monotonic() < deadline:
            read_for(0.1)
        read_for(0.2)
        status = proc.poll()
        if status is None:
            proc.kill()
            proc.wait()
        return status, bytes(out)
    finally:
        os.close(leader)


@pytest.fixture
def terminal_env(isolated_env: Path, tmp_path: Path) -> tuple[dict[str, str], Path, list[str]]:
    """The environment, project and command line of a ``memtui`` run in a terminal, the doctor
    stuck (``STUCK_DOCTOR``)."""
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    (hooks / "sitecustomize.py").write_text(STUCK_DOCTOR)
    project = tmp_path / "project"
    project.mkdir()
    memory = tmp_path / "memory"
    memory.mkdir()
    (memory / "user_role.md").write_text("---\nname: role\ndescription: the user's role\ntype: user\n---\nA data scientist.\n")
    (memory / "MEMORY.md").write_text("- [role](user_role.md) — the user's role\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST", "COV_"))}
    env.update(TERM="xterm-256color", PYTHONPATH=os.pathsep.join([str(hooks), *sys.path]), HOME=str(isolated_env), COLUMNS="100", LINES="30")
    args = [sys.executable, "-c", "from memtui.cli import main; main()", "--flavor", "agent", "--memory-dir", str(memory)]
    return env, project, args


def test_q_ends_the_process_while_the_doctor_is_stuck_and_gives_the_terminal_back(terminal_env: tuple[dict[str, str], Path, list[str]]) -> None:
    env, project, args = terminal_env
    # q on the doctor's screen goes back to the memories (the run cancelled), q there quits
    status, out = _run_in_terminal(args, env, [(b"D", "role"), (b"q", "Running the doctor"), (b"q", "")], cwd=project)
    assert status == 0, out[-2000:]
    assert LEAVE_ALT_SCREEN in out
    assert b"Traceback" not in out


def test_ctrl_c_twice_then_q_quits_without_a_traceback(terminal_env: tuple[dict[str, str], Path, list[str]]) -> None:
    env, project, args = terminal_env
    status, out = _run_in_terminal(args, env, [(b"D", "role"), (b"\x03", "Running the doctor"), (b"\x03", ""), (b"q", ""), (b"q", "")], cwd=project)
    assert status == 0, out[-2000:]
    assert b"Traceback" not in out
    assert b"Press q to quit" in out


async def test_quit_right_at_startup_lets_the_panes_finish_mounting(make_app: Callable[..., MemtuiApp], monkeypatch: pytest.MonkeyPatch) -> None:
    from textual.lazy import Lazy

    app = make_app()
    mounting_at_exit: list[int] = []
    exit_ = app.exit
    monkeypatch.setattr(app, "exit", lambda *a, **k: (mounting_at_exit.append(len(app.query(Lazy))), exit_(*a, **k)))
    async with app.run_test(size=(120, 36)):
        # usually the panes shown later are still waiting to be mounted here (on a busy machine
        # they may be in place already: the test then checks the plain case)
        await app.action_quit()
    assert mounting_at_exit == [0]


def test_an_app_ended_by_an_error_exits_with_a_failure_status(terminal_env: tuple[dict[str, str], Path, list[str]], tmp_path: Path) -> None:
    env, project, args = terminal_env
    # the doctor's screen fails as it opens: a bug that ends the app
    (tmp_path / "hooks" / "sitecustomize.py").write_text(
        "import memtui.tui.doctor as d\n"
        "def broken(self):\n    raise RuntimeError('a bug')\n"
        "d.DoctorScreen.on_mount = broken\n"
    )
    status, out = _run_in_terminal(args, env, [(b"D", "role")], cwd=project)
    assert status == 1, out[-2000:]
    assert b"RuntimeError" in out  # Textual's report of the error, after the terminal is given back


async def test_the_doctor_on_a_memory_dir_not_made_yet_says_so_calmly(isolated_env: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from memtui.core.places.flavor import AGENT

    project = isolated_env / "project"
    project.mkdir()
    missing = isolated_env / "memory"
    app = MemtuiApp.for_project(AGENT, project, memory_dir=missing, watch=False)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        await pilot.press("D")
        await wait_until(pilot, lambda: isinstance(app.screen, DoctorScreen), what="the doctor")
        summary = app.screen.query_one("#doctor-summary")
        await wait_until(pilot, lambda: "Nothing to check" in str(summary.render()), what="the summary")
        assert str(summary.render()) == f"Nothing to check.  {missing} does not exist yet — the agent creates it when it first saves a memory."
        assert not [n for n in app._notifications if n.severity == "error"]
