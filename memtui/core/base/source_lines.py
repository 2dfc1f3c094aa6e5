"""The lines around the line a finding points at, read from the file as written (line numbers
of findings count the file's own lines, frontmatter included)."""

from __future__ import annotations

from dataclasses import dataclass

from memtui.core.base.safe_read import read_regular

# memtui's choice: a file larger than this is not read to show a few of its lines.
MAX_SOURCE_BYTES = 8 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class SourceLines:
    """Lines ``first`` … ``first + len(lines) - 1`` (1-based) of ``path``, around ``line``.

    ``error``: why the file could not be read (``lines`` is then empty); ``past_end``: ``line``
    lies beyond the file's last line (``lines`` is then empty)."""

    path: str
    line: int
    first: int
    lines: tuple[str, ...]
    error: str | None = None
    past_end: bool = False


def source_lines(path: str, line: int, *, around: int = 2) -> SourceLines:
    """Lines ``line ± around`` of the file at ``path`` (UTF-8, a BOM dropped, undecodable bytes
    replaced). Never raises: an unreadable file (missing, not a regular file, over
    ``MAX_SOURCE_BYTES``) comes back with ``error`` set."""
    try:
        data, _ = read_regular(path, MAX_SOURCE_BYTES)
    except OSError as exc:
        return SourceLines(path, line, line, (), error=exc.strerror or str(exc))
    lines = data.decode("utf-8-sig", errors="replace").splitlines()
    if not 1 <= line <= max(len(lines), 1):
        return SourceLines(path, line, line, (), past_end=True)
    first = max(1, line - around)
    last = min(len(lines), line + around)
    return SourceLines(path, line, first, tuple(lines[first - 1 : last]) if lines else ("",))
