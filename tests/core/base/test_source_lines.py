"""The lines around a finding's line, read from the file as written."""

from __future__ import annotations

import os
from pathlib import Path

from memtui.core.base.source_lines import source_lines


def test_lines_around_the_line_a_bom_dropped(tmp_path: Path) -> None:
    path = tmp_path / "AGENT.md"
    path.write_bytes("\ufeff---\npaths: x\n---\nfour\nfive\nsix\n".encode())
    got = source_lines(str(path), 2)
    assert (got.first, got.lines, got.error, got.past_end) == (1, ("---", "paths: x", "---", "four"), None, False)
    assert source_lines(str(path), 6).lines == ("four", "five", "six")


def test_past_the_end_and_unreadable_files_say_so(tmp_path: Path) -> None:
    path = tmp_path / "short.md"
    path.write_text("one\n")
    assert source_lines(str(path), 9).past_end
    missing = source_lines(str(tmp_path / "gone.md"), 1)
    assert missing.error is not None and missing.lines == ()
    fifo = tmp_path / "fifo.md"
    os.mkfifo(fifo)
    assert source_lines(str(fifo), 1).error is not None  # a FIFO is refused, never waited on
