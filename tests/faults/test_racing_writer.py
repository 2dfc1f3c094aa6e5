"""No lost update: another process writing a file at ANY step of memtui's change never loses
its bytes.

memtui does not close the window between its check and its write by re-checking (a window
would remain); it keeps the version it displaces instead: each file is swapped into place
atomically (``RENAME_EXCHANGE``) and the version that comes out is compared with the one the
change was made from. Another writer's version is put back, kept in the journal, and the change
refused. So, for every step k of each transaction and every file it writes, a writer that
replaces that file right after step k (in place, or by renaming a new file over it) must find
its bytes afterwards: in the file, in the journal's ``kept/`` copies, or as the before-image of
the change (memtui read them and built on them — undo restores them).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from support.faultlab import BUILDERS, NOW_ISO, Workspace, run_inprocess, temp_files

from memtui.core.writes.journal import Journal


@pytest.fixture(autouse=True)
def frozen_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMTUI_NOW", NOW_ISO)


def outside_write(path: Path, data: bytes, *, rename: bool) -> None:
    """Another process's write: in place (``open``/``write``), or a new file renamed over."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if rename:
        tmp = path.with_name(f".outside-{os.getpid()}")
        tmp.write_bytes(data)
        os.replace(tmp, path)
    else:
        with open(path, "wb") as fh:
            fh.write(data)


def recoverable(ws: Workspace, relpath: str, data: bytes) -> str | None:
    """Where ``data`` can still be found: ``file``, ``kept``, ``before-image``, or ``None``."""
    path = ws.memory_dir / relpath
    if path.is_file() and path.read_bytes() == data:
        return "file"
    journal = Journal(ws.state_dir, ws.memory_dir)
    for entry in journal.entries():
        for index, change in enumerate(entry.changes):
            if change.relpath != relpath:
                continue
            if any(p.read_bytes() == data for p in journal.kept(entry.id, index)):
                return "kept"
            if journal.before_image(entry.id, relpath) == data:
                return "before-image"
    return None


# the transactions whose files an outside writer races, and at most how many of their files
RACED = {"save": 1, "rename": 3, "team": 3, "dream": 3, "undo": 3, "restore": 2, "inbox": 2}


@pytest.mark.parametrize("kind", sorted(RACED))
def test_a_writer_racing_every_step_never_loses_its_bytes(kind: str, tmp_path: Path) -> None:
    build = BUILDERS[kind]
    ref = build(tmp_path / "ref")
    done = run_inprocess(ref, ref.args)
    assert done.code == 0, done
    entry = Journal(ref.state_dir, ref.memory_dir).entries()[-1]
    targets = [c.relpath for c in entry.changes][: RACED[kind]]
    tried = 0
    where: dict[str, int] = {}
    for relpath in targets:
        for k in range(1, done.steps + 1):
            ws = build(tmp_path / f"{len(where)}-{tried}")
            data = f"written by another process at step {k}\n".encode()
            fired: list[int] = []

            def race(step: str, path: str, k: int = k, ws: Workspace = ws, data: bytes = data) -> None:
                fired.append(1)
                if len(fired) == k:
                    outside_write(ws.memory_dir / relpath, data, rename=k % 2 == 0)

            result = run_inprocess(ws, ws.args, hook=race)
            assert result.code in (0, 1, 2), (k, relpath, result)
            found = recoverable(ws, relpath, data)
            assert found is not None, f"{kind}: the outside write to {relpath} at step {k} was lost ({result.stderr.strip()})"
            where[found] = where.get(found, 0) + 1
            assert temp_files(ws.memory_dir) == [], (k, relpath)
            journal = Journal(ws.state_dir, ws.memory_dir)
            assert journal.open_ids() == [] and all(e.status != "pending" for e in journal.entries())
            tried += 1
    assert where.get("file", 0) > 0
    print(f"faults: racing writer {kind}: {tried} races, {tried} held ({', '.join(f'{v} {k}' for k, v in sorted(where.items()))})")
