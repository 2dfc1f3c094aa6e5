"""Replacing a state file as a whole (``memtui.core.base.replace_file``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from memtui.core.base.replace_file import replace_file


def test_the_new_bytes_replace_the_old_and_no_temp_file_is_left(tmp_path: Path) -> None:
    path = tmp_path / "a" / "b" / "state.bin"  # parents made
    replace_file(path, lambda fh: fh.write(b"old"), prefix=".state-")
    replace_file(path, lambda fh: fh.write(b"new"), prefix=".state-", fsync=True)
    assert path.read_bytes() == b"new"
    assert sorted(p.name for p in path.parent.iterdir()) == ["state.bin"]


def test_a_failing_writer_leaves_the_old_file_and_no_temp_file(tmp_path: Path) -> None:
    path = tmp_path / "state.bin"
    path.write_bytes(b"old")

    def half(fh) -> None:  # noqa: ANN001
        fh.write(b"ne")
        raise ValueError("the writer failed")

    with pytest.raises(ValueError):
        replace_file(path, half, prefix=".state-")
    assert path.read_bytes() == b"old"
    assert [p.name for p in tmp_path.iterdir()] == ["state.bin"]
