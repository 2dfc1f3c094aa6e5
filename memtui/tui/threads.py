"""How the app's thread workers end when the app does.

Textual runs a thread worker in its event loop's default executor. asyncio's default executor
is a ``ThreadPoolExecutor``: when the loop closes it joins every thread, and at interpreter exit
``concurrent.futures`` joins them again — so one worker still reading (a doctor over a large
memory dir, a recall on a slow model) kept the process alive after the app had closed, and
ctrl+c then broke into that join with a traceback.

``DetachedExecutor`` runs each call on its own daemon thread and never waits on shutdown. The
panes' long workers check ``is_cancelled`` between steps and stop soon after the app cancels
them; a reader that does not is left behind and ends with the process. Writes are the
exception: the app waits for its writing workers (``WRITE_GROUPS``) before it exits, and a write
cut short anyway (the process killed) is settled by the journal at the next start.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, TypeVar

T = TypeVar("T")

# The worker groups whose threads write to the memory dir or memtui's state: the app waits for
# them before exiting (each is one journaled transaction: seconds at most).
WRITE_GROUPS = frozenset({"memories-apply", "doctor-fix", "dream-apply", "inbox-write"})

_counter = itertools.count(1)


class DetachedExecutor(ThreadPoolExecutor):
    """An executor whose every call runs on a new daemon thread and whose ``shutdown`` returns
    at once (``wait`` is ignored): nothing joins a thread still running. A
    ``ThreadPoolExecutor`` by type only (asyncio's default executor must be one): its pool is
    never used, so none of its threads is joined at exit either."""

    def submit(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> Future[T]:
        """Run ``fn(*args, **kwargs)`` on a daemon thread; the future gets its result or its
        exception (``BaseException`` included, so a ``SystemExit`` in a worker is reported, not
        lost)."""
        future: Future[T] = Future()

        def run() -> None:
            if not future.set_running_or_notify_cancel():
                return
            try:
                result = fn(*args, **kwargs)
            except BaseException as exc:  # noqa: BLE001 - handed to the future, which re-raises it
                future.set_exception(exc)
            else:
                future.set_result(result)

        threading.Thread(target=run, name=f"memtui-worker-{next(_counter)}", daemon=True).start()
        return future

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        """Nothing to wait for: the threads are daemons (see the module docstring)."""
