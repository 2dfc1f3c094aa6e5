"""Input that would hang memtui or grow it without bound is read with a bound or refused with a
diagnostic, in every reader: a YAML "billion laughs", FIFOs and links to ``/dev/zero`` where a
memory, the index, the lock, an instruction file, a transcript or a bundle should be.

Each reader runs as a real ``memtui`` process with a 20-second limit (a hang fails the test
instead of hanging it), an address-space limit, and its peak memory reported.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

HANG_S = 20
MAX_RSS_MB = 600  # a /dev/zero read grew memtui to 2.6 GB before it was bounded
_RUNNER = """
import os, resource, sys
from memtui.cli import main
try:
    main(sys.argv[1:], prog_name="memtui")
finally:
    with open(os.environ["MEMTUI_TEST_RSS"], "w") as fh:
        fh.write(str(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss))
"""


def _limit() -> None:  # pragma: no cover - runs in the child
    resource.setrlimit(resource.RLIMIT_AS, (8 << 30, 8 << 30))  # a safety net for the machine


def memtui(tmp_path: Path, *args: str, stdin: bytes | None = None) -> tuple[subprocess.CompletedProcess[bytes], float, float]:
    """Run ``memtui args``; returns the process, seconds taken and peak RSS in MB. A run over
    ``HANG_S`` fails the test."""
    rss = tmp_path / f"rss-{time.monotonic_ns()}"
    env = {**os.environ, "MEMTUI_TEST_RSS": str(rss), "MEMTUI_NOW": "2026-03-10T12:00:00Z"}
    started = time.monotonic()
    try:
        proc = subprocess.run(
            [sys.executable, "-c", _RUNNER, *args], input=stdin, capture_output=True, timeout=HANG_S, env=env, preexec_fn=_limit
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"memtui {' '.join(args)} hung (over {HANG_S} s)")
    seconds = time.monotonic() - started
    peak = int(rss.read_text()) / 1024 if rss.exists() else 0.0
    return proc, seconds, peak


def workspace(tmp_path: Path) -> tuple[Path, Path]:
    project = tmp_path / "project"
    project.mkdir()
    (project / "AGENT.md").write_text("# Project\nUse tabs.\n")
    mem = tmp_path / "memory"
    mem.mkdir()
    (mem / "user_ok.md").write_text("---\nname: OK\ndescription: an ordinary memory about tabs\ntype: user\n---\n\nTabs.\n")
    (mem / "MEMORY.md").write_text("- [OK](user_ok.md) — an ordinary memory about tabs\n")
    (mem / "team").mkdir()
    (mem / "team" / "MEMORY.md").write_text("")
    return project, mem


def plant(path: Path, kind: str) -> None:
    """Replace ``path`` by a FIFO (nobody ever writes it) or a symlink to ``/dev/zero``."""
    if path.exists() or path.is_symlink():
        path.unlink()
    path.parent.mkdir(parents=True, exist_ok=True)
    if kind == "fifo":
        os.mkfifo(path)
    else:
        path.symlink_to("/dev/zero")


# (hostile path, relative to the memory dir or "P/…" for the project, and the commands that read it)
READERS: list[tuple[str, list[list[str]]]] = [
    ("user_bad.md", [["ls"], ["index"], ["doctor"], ["dream", "plan"], ["recall", "ordinary tabs memory"], ["cascade"]]),
    ("MEMORY.md", [["ls"], ["index"], ["doctor"], ["dream", "plan"], ["recall", "ordinary tabs memory"], ["cascade"]]),
    ("team/MEMORY.md", [["index", "--team"], ["doctor"], ["dream", "plan"]]),
    (".consolidate-lock", [["dream", "status"], ["dream", "apply", "--force", "--consolidator", "offline"]]),
    ("P/AGENT.md", [["cascade"], ["cascade", "--rendered"], ["doctor"]]),
    ("P/.agent/settings.local.json", [["where"], ["ls"]]),
]


@pytest.mark.parametrize("kind", ["fifo", "zero"])
@pytest.mark.parametrize(("where", "commands"), READERS, ids=[r[0] for r in READERS])
def test_a_fifo_or_dev_zero_in_any_reader_never_hangs_or_grows_memory(tmp_path: Path, kind: str, where: str, commands: list[list[str]]) -> None:
    project, mem = workspace(tmp_path)
    plant(project / where[2:] if where.startswith("P/") else mem / where, kind)
    for command in commands:
        proc, seconds, peak = memtui(tmp_path, "--project", str(project), "--memory-dir", str(mem), *command)
        assert proc.returncode in (0, 1), (command, proc.stderr.decode(errors="replace"))
        assert b"Traceback" not in proc.stderr, (command, proc.stderr.decode(errors="replace"))
        assert peak < MAX_RSS_MB, (command, peak)
        print(f"faults: {kind} at {where}: memtui {' '.join(command)} ended in {seconds:.1f} s, {peak:.0f} MB")


@pytest.mark.parametrize("kind", ["fifo", "zero"])
def test_a_fifo_or_dev_zero_as_transcript_or_bundle_is_refused(tmp_path: Path, kind: str) -> None:
    project, mem = workspace(tmp_path)
    transcript = tmp_path / "session.jsonl"
    plant(transcript, kind)
    bundle = tmp_path / "bundle.json"
    plant(bundle, kind)
    sessions = tmp_path / "home" / "sessions-here.jsonl"
    for command in (
        ["extract", str(transcript), "--extractor", "offline"],
        ["team", "import", str(bundle)],
        ["recall", "ordinary tabs memory", "--transcript", str(transcript)],
    ):
        proc, _, peak = memtui(tmp_path, "--project", str(project), "--memory-dir", str(mem), *command)
        assert proc.returncode in (1, 2), (command, proc.stdout, proc.stderr)
        assert b"Traceback" not in proc.stderr and proc.stderr.startswith(b"memtui: "), (command, proc.stderr)
        assert peak < MAX_RSS_MB
    del sessions
    # the Stop hook with a FIFO transcript: logged, never waits
    payload = json.dumps({"session_id": "s", "transcript_path": str(transcript), "cwd": str(project)}).encode()
    proc, _, _ = memtui(tmp_path, "--memory-dir", str(mem), "hook", "stop", "--wait", "--extractor", "offline", stdin=payload)
    assert proc.returncode == 0


def test_a_yaml_bomb_is_refused_where_it_is_parsed_and_nothing_walks_it(tmp_path: Path) -> None:
    """A 1.4 KB "billion laughs" (9 anchors of 9 aliases: 9⁹ nodes to walk) brought in by a
    team import: every command that reads the memory ends at once with a diagnostic."""
    project, mem = workspace(tmp_path)
    lol = 'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n' + "".join(
        f"{chr(98 + i)}: &{chr(98 + i)} [{','.join([f'*{chr(97 + i)}'] * 9)}]\n" for i in range(8)
    )
    bomb = f"---\nname: Laughs\ndescription: a bomb\ntype: reference\n{lol}---\n\nbody\n"
    bundle = tmp_path / "bundle.json"
    bundle.write_text(json.dumps({"laughs.md": bomb}))
    proc, _, _ = memtui(tmp_path, "--memory-dir", str(mem), "team", "import", str(bundle))
    assert proc.returncode == 0, proc.stderr
    (mem / "user_bomb.md").write_text(bomb)
    for command in (["ls"], ["ls", "--json"], ["ls"], ["index", "--team"], ["doctor"], ["doctor", "--json"], ["dream", "plan"],
                    ["recall", "laughs bomb memory"], ["cascade"]):
        proc, seconds, peak = memtui(tmp_path, "--project", str(project), "--memory-dir", str(mem), *command)
        assert proc.returncode in (0, 1), (command, proc.stderr)
        assert peak < MAX_RSS_MB, (command, peak)
        print(f"faults: yaml bomb: memtui {' '.join(command)} ended in {seconds:.1f} s, {peak:.0f} MB")
    listed = json.loads(memtui(tmp_path, "--memory-dir", str(mem), "ls", "--json")[0].stdout)
    bomb_entry = next(e for e in listed if e["path"] == "user_bomb.md")
    assert any("billion laughs" in d["message"] for d in bomb_entry["diagnostics"]) or bomb_entry["name"] == "Laughs"


def _within(seconds: float, fn: Callable[[], object]) -> object:
    """``fn()`` in a daemon thread; fails the test when it runs over ``seconds``."""
    box: list[object] = []
    thread = threading.Thread(target=lambda: box.append(fn()), daemon=True)
    thread.start()
    thread.join(seconds)
    if thread.is_alive():
        pytest.fail(f"still running after {seconds} s (a hang)")
    return box[0] if box else None


@pytest.mark.parametrize("kind", ["fifo", "zero"])
def test_the_claude_extractor_never_reads_a_fifo_or_dev_zero(tmp_path: Path, kind: str) -> None:
    from support.fake_api import client, reply, scripted, text

    from memtui.core.extract import extract

    _, mem = workspace(tmp_path)
    plant(mem / "user_bad.md", kind)
    talk = tmp_path / "s1.jsonl"
    talk.write_text(
        json.dumps({"type": "user", "uuid": "u1", "sessionId": "s1", "cwd": str(tmp_path), "timestamp": "2026-03-10T11:00:00Z",
                    "message": {"role": "user", "content": "remember that I prefer tabs over spaces in every file"}}) + "\n"
    )
    api = scripted(reply(text("nothing to save"), stop="end_turn"))
    from datetime import UTC, datetime

    result = _within(HANG_S, lambda: extract(talk, mem, tmp_path / "state", datetime(2026, 3, 10, 12, tzinfo=UTC), extractor="claude", client=client(api)))
    assert result is not None
    assert len(api.bodies) == 1  # the agent ran


@pytest.mark.parametrize("sep", ["\n", " "], ids=["lines", "one-line"])
def test_a_20_mb_index_is_audited_in_its_first_mb_by_every_reader(tmp_path: Path, sep: str) -> None:
    """A ``MEMORY.md`` of 700,000 links (20,300,000 bytes), one a line or all on one line: each
    command that reads it ends with the over-cap note where it reports on the index, and none
    reads it whole into its audit (it took 57 s and 2 GB before)."""
    project, mem = workspace(tmp_path)
    with (mem / "MEMORY.md").open("w", encoding="ascii") as fh:
        for start in range(0, 700_000, 10_000):
            fh.write("".join(f"- [Entry {i:06d}](e{i:06d}.md){sep}" for i in range(start, start + 10_000)))
    note = "only the first 1.0 MB of MEMORY.md (19.4 MB) was audited (skipped: 18.4 MB, over the 1.0 MB cap): entries past it are not listed"
    base = ["--project", str(project), "--memory-dir", str(mem)]
    proc, _, peak = memtui(tmp_path, *base, "index", "--json")
    data = json.loads(proc.stdout)
    assert data["skipped"]["note"] == note and data["skipped"]["size_bytes"] == 20_300_000
    assert (data["lines"], data["units"]) == ((700_000, 20_299_999) if sep == "\n" else (1, 20_299_999))
    assert peak < MAX_RSS_MB
    proc, _, peak = memtui(tmp_path, *base, "doctor", "--json")
    [truncated] = [f for f in json.loads(proc.stdout)["findings"] if f["code"] == "index-truncated"]
    assert truncated["message"].endswith(f"; {note})")
    assert peak < MAX_RSS_MB
    for command in (["ls"], ["dream", "plan"], ["recall", "ordinary tabs memory"], ["cascade"]):
        proc, seconds, peak = memtui(tmp_path, *base, *command)
        assert proc.returncode in (0, 1), (command, proc.stderr.decode(errors="replace"))
        assert b"Traceback" not in proc.stderr and peak < MAX_RSS_MB, (command, peak)
        print(f"faults: 20 MB index ({'one line' if sep == ' ' else 'lines'}): memtui {' '.join(command)} ended in {seconds:.1f} s, {peak:.0f} MB")


def test_a_bracket_heavy_one_line_index_is_read_by_pattern_not_markdown(tmp_path: Path) -> None:
    """``![_`` repeated over 1 MiB made markdown-it spend 18 s on one line; past 64 KiB a line's
    plain links are found by pattern (the same entries as markdown-it for plain links)."""
    from memtui.core.memory.index import MARKDOWN_LINE_CHARS, parse_entries

    line = "![_" * (MARKDOWN_LINE_CHARS // 3 + 1) + "](x.md) [a](a.md)"
    (entry,) = parse_entries(line)
    assert (entry.title, entry.target, entry.relpath) == ("a", "a.md", "a.md")
    plain = "".join(f"[m{i}](m{i}.md) " for i in range(MARKDOWN_LINE_CHARS // 10))
    assert [e.target for e in parse_entries(plain)] == [f"m{i}.md" for i in range(MARKDOWN_LINE_CHARS // 10)]


def test_a_transcript_over_the_cap_is_named_not_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A parsed transcript takes ~6× its size in memory: one over ``MAX_TRANSCRIPT_BYTES`` is
    refused by every reader, with its size and the cap, never parsed."""
    from memtui.core.base.safe_read import FileTooLargeError
    from memtui.core.sessions import transcripts, uses

    monkeypatch.setattr(transcripts, "MAX_TRANSCRIPT_BYTES", 1024 * 1024)
    monkeypatch.setattr(uses, "MAX_TRANSCRIPT_BYTES", 1024 * 1024)
    path = tmp_path / "s.jsonl"
    path.write_text('{"type":"user","message":{"role":"user","content":"hi"}}\n' * 30_000)  # 1.7 MB
    with pytest.raises(FileTooLargeError, match=r"skipped: 1\.\d MB, over the 1 MB cap of a transcript"):
        transcripts.read_transcript(path)
    with pytest.raises(FileTooLargeError, match="over the 1 MB cap of a transcript"):
        uses.UsesReader(tmp_path / "memory").read(path)
