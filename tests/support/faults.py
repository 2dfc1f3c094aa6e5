"""Fault injection through the write path's one hook (``memtui.core.writes.steps``)."""

from __future__ import annotations

import os
import re
from collections.abc import Collection, Iterator
from contextlib import contextmanager
from pathlib import Path

from memtui.core.writes import steps


@contextmanager
def failing_step(step: str, root: Path, nth: int | Collection[int], exc: BaseException) -> Iterator[list[str]]:
    """Raise ``exc`` right after the ``nth`` (1-based; or each of several) step named ``step``
    on a path below ``root``; yields the paths of every such step, in order. A ``write`` step is
    the new bytes of a temp file: raising there means the file's write failed (the temp file
    is removed, nothing is swapped in). A hook already installed is called first."""
    failing = {nth} if isinstance(nth, int) else set(nth)
    calls: list[str] = []
    prefix = f"{root}{os.sep}"

    def hook(name: str, path: str) -> None:
        if previous is not None:
            previous(name, path)
        if name == step and path.startswith(prefix):
            calls.append(path)
            if len(calls) in failing:
                raise exc

    previous = steps.set_fault_hook(None)
    steps.set_fault_hook(hook)
    try:
        yield calls
    finally:
        steps.set_fault_hook(previous)


def target_of(temp_path: str) -> tuple[str, int]:
    """(directory, change index) of a transaction temp file ``.memtui-<entry>-<n><a|b>.tmp``."""
    name = os.path.basename(temp_path)
    index = name.rsplit("-", 1)[1].removesuffix(".tmp")[:-1]
    return os.path.dirname(temp_path), int(index)


def transaction_temps(paths: list[str]) -> list[int]:
    """The change index of each transaction temp file among ``paths`` (others left out)."""
    return [target_of(p)[1] for p in paths if re.fullmatch(r"\.memtui-\d{7}-\d{8}T\d{6}-\d+[ab]\.tmp", os.path.basename(p))]
