"""The claude dream's staging copy is bounded: it copies only regular files under its caps and
says what it left out, so a sparse 20 GB ``.md``, a FIFO or a link to ``/dev/zero`` in the memory
dir never fills the disk or hangs the copy."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from memtui.core.dream import claude as dream_claude
from memtui.core.dream.claude import MAX_STAGED_FILE_BYTES, _snapshot

MEMORY = b"---\nname: a\ndescription: a memory\ntype: user\n---\n\nbody\n"


def staged_bytes(root: Path) -> int:
    return sum((Path(d) / f).lstat().st_size for d, _, files in os.walk(root) for f in files if not (Path(d) / f).is_symlink())


def test_only_capped_regular_files_are_copied_and_the_rest_is_named(tmp_path: Path) -> None:
    mem = tmp_path / "memory"
    (mem / "sub").mkdir(parents=True)
    (mem / "user_a.md").write_bytes(MEMORY)
    os.utime(mem / "user_a.md", (1_700_000_000, 1_700_000_000))
    with open(mem / "sparse.md", "wb") as fh:
        fh.truncate(20 * 1024**3)  # 20 GB, no blocks on disk
    (mem / "over.md").write_bytes(b"x" * (MAX_STAGED_FILE_BYTES + 1))
    os.mkfifo(mem / "sub" / "fifo.md")
    (mem / "zero.md").symlink_to("/dev/zero")
    staging = tmp_path / "staging" / "memory"
    staged, left = _snapshot(mem, staging)
    assert staged == {"user_a.md": MEMORY}
    assert (staging / "user_a.md").read_bytes() == MEMORY
    assert (staging / "user_a.md").stat().st_mtime == 1_700_000_000
    assert os.readlink(staging / "zero.md") == "/dev/zero"  # a link stays a link, never read
    assert not (staging / "sparse.md").exists() and not (staging / "over.md").exists() and not (staging / "sub" / "fifo.md").exists()
    reasons = dict(left)
    assert sorted(reasons) == ["over.md", "sparse.md", "sub/fifo.md"]
    assert reasons["sparse.md"] == "20GB, over the 1MB cap of the dream's copy"
    assert reasons["over.md"] == "1MB, over the 1MB cap of the dream's copy"
    assert "not a regular file" in reasons["sub/fifo.md"]
    assert staged_bytes(staging) == len(MEMORY)


def test_the_copy_stops_at_its_total_cap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(dream_claude, "MAX_STAGED_BYTES", 2 * len(MEMORY))
    mem = tmp_path / "memory"
    mem.mkdir()
    for name in ("a.md", "b.md", "c.md"):
        (mem / name).write_bytes(MEMORY)
    staged, left = _snapshot(mem, tmp_path / "staging")
    assert sorted(staged) == ["a.md", "b.md"]
    assert left == [("c.md", f"the dream's copy reached its {2 * len(MEMORY)} bytes cap")]
    assert staged_bytes(tmp_path / "staging") == 2 * len(MEMORY)
