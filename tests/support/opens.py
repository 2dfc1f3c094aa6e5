"""Which memory files a piece of code opens: every read of a user file goes through ``os.open``
(``memtui.core.base.safe_read``), so a spy on it sees them all."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest


@contextmanager
def memory_files_opened(monkeypatch: pytest.MonkeyPatch, memory_dir: Path) -> Iterator[list[str]]:
    """Within the block, the relpaths (sorted on exit) of the ``.md`` files below ``memory_dir``
    opened, the index ``MEMORY.md`` aside."""
    root = str(memory_dir) + os.sep
    seen: list[str] = []
    real = os.open

    def spy(path: object, *args: object, **kwargs: object) -> int:
        text = os.fsdecode(path) if isinstance(path, (str, bytes, os.PathLike)) else ""
        if text.startswith(root) and text.endswith(".md") and os.path.basename(text) != "MEMORY.md":
            seen.append(text[len(root) :])
        return real(path, *args, **kwargs)  # type: ignore[arg-type]

    with monkeypatch.context() as m:
        m.setattr(os, "open", spy)
        yield seen
    seen.sort()


def subject_terms_made(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The texts the conflict rule makes subject terms of from now on (``conflicts.terms``:
    a file name, name and description), in call order; kept facts make none."""
    from memtui.core.verify import conflicts

    made: list[str] = []
    real = conflicts.terms

    def spy(text: str) -> set[str]:
        made.append(text)
        return real(text)

    monkeypatch.setattr(conflicts, "terms", spy)
    return made
