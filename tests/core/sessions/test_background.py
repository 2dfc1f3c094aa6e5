"""Reading the CLI's own background records out of its transcripts: its session listing (UUID
names, directory order, whole-millisecond mtimes), the entrypoint, ``memory_saved`` /
``memory_update`` lines, a file read again only from where it grew, a line still being written."""

from __future__ import annotations

import json
import os
from pathlib import Path

from memtui.core.sessions.background import list_cli_sessions, read_activity

SID = "3ea3993f-d755-44b1-ade9-01ecb290d6cd"


def line(obj: dict[str, object]) -> str:
    return json.dumps(obj) + "\n"


def test_listing_keeps_session_ids_only(tmp_path: Path) -> None:
    for name in (f"{SID}.jsonl", "agent-1234.jsonl", "notes.jsonl", f"{SID}.txt"):
        (tmp_path / name).write_text("")
    os.utime(tmp_path / f"{SID}.jsonl", ns=(1_796_155_352_238_685_400, 1_796_155_352_238_685_400))
    (found,) = list_cli_sessions(tmp_path)
    assert (found.session_id, found.mtime_ms) == (SID, 1_796_155_352_238)


def test_records_entrypoint_and_incremental_reads(tmp_path: Path) -> None:
    path = tmp_path / f"{SID}.jsonl"
    path.write_text(
        line({"type": "user", "entrypoint": "sdk-cli", "timestamp": "2026-12-01T20:11:06.048Z", "message": {"role": "user", "content": "hi"}})
        + line({"type": "system", "subtype": "memory_saved", "writtenPaths": ["/m/a.md"], "verb": "Improved", "timestamp": "2026-12-01T20:11:07.038Z"})
    )
    first = read_activity(path)
    assert first.entrypoint == "sdk-cli" and not first.interactive(("sdk-cli",))
    assert [(r.kind, r.line_type, r.paths, r.verb) for r in first.records] == [("dream", "memory_saved", ("/m/a.md",), "Improved")]
    update = {"type": "attachment", "timestamp": "2026-12-01T20:11:10.034Z", "attachment": {"type": "memory_update", "source": "extract", "summary": "saved 1 memory", "paths": ["/m/b.md"], "inContextPaths": []},
              "rendered": [{"content": "<system-reminder>\nBackground memory extraction updated your memory directory: saved 1 memory\n</system-reminder>"}]}
    with open(path, "a") as fh:
        fh.write(line(update) + '{"type": "system", "subtype": "memory_saved", "writtenPa')  # the CLI is still writing
    second = read_activity(path)
    assert [(r.kind, r.line_type, r.line) for r in second.records] == [("dream", "memory_saved", 2), ("extract", "memory_update", 3)]
    assert second.records[1].notice == "Background memory extraction updated your memory directory: saved 1 memory"
    with open(path, "a") as fh:
        fh.write('ths": ["/m/c.md"], "teamCount": 0}\n')
    third = read_activity(path)
    assert [(r.kind, r.team_count, r.line) for r in third.records][-1] == ("extract", 0, 4)
    assert (third.first_time, third.last_time) == (1796155866.048, 1796155870.034)


def test_an_unreadable_or_hostile_file_gives_nothing(tmp_path: Path) -> None:
    path = tmp_path / f"{SID}.jsonl"
    path.write_bytes(b"\xff\xfe not json\n" + line({"type": "system", "subtype": "memory_saved", "writtenPaths": "nope"}).encode())
    act = read_activity(path)
    assert act.records[0].paths == () and act.entrypoint is None
    assert read_activity(tmp_path / "missing.jsonl").records == ()
