"""A dream as a generator of events (for callers that prefer ``for event in ...`` to a
callback): the consolidator runs in a worker thread, events come through a queue, and the
last item is ``DreamDone`` holding the plan (or the error, re-raised in the caller).
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from memtui.core.dream.events import DreamEvent, Emit
from memtui.core.dream.plan import DreamPlan


@dataclass(frozen=True, slots=True)
class DreamDone:
    """The end of a stream: the finished ``plan``."""

    plan: DreamPlan
    kind: str = "done"


def stream_dream(run: Callable[[Emit], DreamPlan], cancel: threading.Event | None = None) -> Iterator[DreamEvent | DreamDone]:
    """Yield the events of ``run(emit)`` as they happen, then ``DreamDone(plan)``. ``run`` is,
    e.g., ``lambda emit: plan_dream(ctx, now, emit=emit, cancel=cancel)``. An exception in
    ``run`` (``DreamCancelled`` included) is raised here after the events before it. Closing
    the generator early sets ``cancel`` (when given) and waits for the worker."""
    q: queue.Queue[tuple[str, object]] = queue.Queue()

    def worker() -> None:
        try:
            q.put(("plan", run(lambda e: q.put(("event", e)))))
        except BaseException as exc:  # noqa: BLE001 - re-raised in the consumer
            q.put(("error", exc))

    thread = threading.Thread(target=worker, name="memtui-dream", daemon=True)
    thread.start()
    try:
        while True:
            kind, item = q.get()
            if kind == "event":
                yield item  # type: ignore[misc]
            elif kind == "plan":
                assert isinstance(item, DreamPlan)
                yield DreamDone(item)
                return
            else:
                assert isinstance(item, BaseException)
                raise item
    finally:
        if thread.is_alive() and cancel is not None:
            cancel.set()
        thread.join(timeout=30)
