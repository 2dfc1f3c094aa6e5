"""What a session loaded beside memtui's prediction, on real Claude Code 2.1.328 transcripts:
the captured ``layers`` workspace's two sessions (startup, a lazy rule after a Read, recall on in
one of them) and the ``usage`` workspace's sessions (two cwds). Then the explanations: a file
changed since, a rule made conditional since, another memory dir, and the differences nothing
explains (fidelity bugs), made by editing a real transcript's record."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from memtui.core.audit.loaded import SessionNotFoundError, compare_session, find_session, load_session
from memtui.core.places.flavor import get_flavor
from memtui.core.places.locations import Locations, resolve_locations
from memtui.core.places.slug import slugify
from support.captures import CAPTURES, Workspace, fill, rebuild
from support.usage import rebuild_usage


def _layers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, which: str) -> tuple[Workspace, Locations, Path]:
    ws = rebuild("layers", tmp_path, monkeypatch)
    text = fill((CAPTURES / "transcripts" / f"{which}.jsonl").read_text(encoding="utf-8"), ws.root)
    session = json.loads(text.splitlines()[0])["sessionId"]
    path = ws.home / ".claude" / "projects" / slugify(str(ws.cwd)) / f"{session}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return ws, resolve_locations(get_flavor("claude"), ws.cwd), path


def _statuses(rows: object) -> list[tuple[str, str]]:
    return [(Path(r.path).name, r.status) for r in rows]  # type: ignore[attr-defined]


def test_a_real_session_matches_the_prediction(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ws, loc, path = _layers(tmp_path, monkeypatch, "base")
    result = load_session(loc, "latest")
    assert result.transcript == path
    # the CLI's instructions attachment: user CLAUDE.md, project CLAUDE.md, its import, a rule,
    # CLAUDE.local.md, MEMORY.md — all as memtui computes them, same order, same text
    assert _statuses(result.startup) == [("CLAUDE.md", "same"), ("CLAUDE.md", "same"), ("style.md", "same"),
                                         ("always.md", "same"), ("CLAUDE.local.md", "same"), ("MEMORY.md", "same")]
    assert result.differences == [] and result.reads == ()


def test_a_lazy_load_is_matched_with_the_read_that_caused_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ws, loc, _ = _layers(tmp_path, monkeypatch, "recall")
    result = load_session(loc, "latest")
    (read,) = result.reads
    assert (read.tool, read.target) == ("Read", str(ws.cwd / "src" / "app.py"))
    assert _statuses(read.rows) == [("python.md", "same")]  # the user rule `paths: "**/*.py"`
    # recall was on in that session, so MEMORY.md stayed out; it is off for memtui now
    (diff,) = result.differences
    assert (Path(diff.path).name, diff.status, diff.bug) == ("MEMORY.md", "predicted-only", False)
    assert "recall was on in that session" in diff.reason


def test_a_file_changed_since_the_session_is_explained(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ws, loc, _ = _layers(tmp_path, monkeypatch, "base")
    local = ws.cwd / "CLAUDE.local.md"
    local.write_text("# Local\nSandbox DB on 5434.\n")
    os.utime(local, (time.time(), time.time()))
    rule = ws.cwd / ".claude" / "rules" / "always.md"
    rule.write_text('---\npaths: "**/*.go"\n---\n# Always\nWrite tests.\n')
    result = load_session(loc, "latest")
    rows = {Path(r.path).name: r for r in result.differences}
    assert rows["CLAUDE.local.md"].status == "changed" and "changed since the session" in rows["CLAUDE.local.md"].reason
    assert rows["always.md"].status == "recorded-only" and "changed since the session" in rows["always.md"].reason
    assert result.bugs == []


def test_differences_nothing_explains_are_fidelity_bugs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ws, loc, path = _layers(tmp_path, monkeypatch, "base")
    lines = path.read_text().splitlines()
    at = next(i for i, line in enumerate(lines) if '"type":"instructions"' in line.replace(" ", ""))
    obj = json.loads(lines[at])
    files = obj["attachment"]["files"]
    dropped = files.pop(1)  # the session "did not load" the project CLAUDE.md
    stray = ws.cwd / "docs" / "old.md"  # and "loaded" a file memtui never would
    stray.write_text("# Old\n")
    os.utime(stray, (ws.captured_at - 86400, ws.captured_at - 86400))
    files.append({"path": str(stray), "type": "Project", "content": "# Old"})
    lines[at] = json.dumps(obj)
    path.write_text("\n".join(lines) + "\n")
    result = compare_session(loc, path)
    bugs = {Path(r.path).name: r.status for r in result.bugs}
    assert bugs == {"CLAUDE.md": "predicted-only", "old.md": "recorded-only"}
    assert Path(dropped["path"]).name == "CLAUDE.md"
    assert all("fidelity bug" in r.reason for r in result.bugs)


def test_sessions_of_another_cwd_and_a_changed_index(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ws = rebuild_usage(tmp_path, monkeypatch)
    loc = resolve_locations(get_flavor("claude"), ws.proj)
    svc = compare_session(loc, find_session(loc, ws.transcript("svc").stem[:8]).path)
    assert svc.cwd == str(ws.proj / "svc")
    # cwd svc: proj/CLAUDE.md and proj/svc/CLAUDE.md; recall was on (no MEMORY.md then)
    assert _statuses(svc.startup)[:2] == [("CLAUDE.md", "same"), ("CLAUDE.md", "same")]
    assert [r.status for r in svc.differences] == ["predicted-only"] and svc.bugs == []
    # the oncall session edited MEMORY.md after it loaded it: changed since, not a bug
    oncall = compare_session(loc, ws.transcript("oncall"))
    (diff,) = oncall.differences
    assert (Path(diff.path).name, diff.status, diff.bug) == ("MEMORY.md", "changed", False)


def test_unknown_sessions_are_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ws = rebuild_usage(tmp_path, monkeypatch)
    loc = resolve_locations(get_flavor("claude"), ws.proj)
    with pytest.raises(SessionNotFoundError):
        find_session(loc, "ffffffff")
    assert find_session(loc, "latest").path == ws.transcript("hello")
