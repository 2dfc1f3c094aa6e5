"""The captures of Claude Code 2.1.332's organization dream gate
(``tests/captures/claude-2.1.332/org_gate/<variant>.json``, made by ``scripts/oracle_org.sh``
from the real CLI) and a builder that lays one variant's state out again under a test's temp dir.

The state is the oracle's ``dream`` scenario as far as the gates read it: the flag on in the
flag cache, ``autoDreamEnabled: true``, the past session transcripts 1..6 h old, the lock
(content, age) and the files the variant placed under the project dir, each of its lines at the
line number it had in the CLI's scenario (the lines before it are filler that holds no mark).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cache
from pathlib import Path
from typing import Any

from support.cli_captures import slug

CAPTURES = Path(__file__).resolve().parents[1] / "captures" / "claude-2.1.332" / "org_gate"
# A frozen clock (the tests' "now"), 2026-12-06 21:00 UTC.
NOW = datetime(2026, 12, 6, 21, 0, tzinfo=UTC)
FLAG_CACHE = {"tengu_onyx_plover": {"enabled": True, "available": True}}
FILLER = '{"type":"user","message":{"role":"user","content":"hello there"}}'


@cache
def variants() -> dict[str, dict[str, Any]]:
    """Every captured variant by name."""
    return {p.stem: json.loads(p.read_text(encoding="utf-8")) for p in sorted(CAPTURES.glob("*.json"))}


@dataclass(frozen=True)
class OrgScene:
    """A variant's state rebuilt: ``home``, ``project`` (the cwd), ``project_dir`` (its
    transcripts), ``memory_dir``, ``lock`` (its path), the capture, and ``marked``: every placed
    line as ``(absolute path, line number, text)``."""

    home: Path
    project: Path
    project_dir: Path
    memory_dir: Path
    lock: Path
    record: dict[str, Any]
    marked: tuple[tuple[Path, int, str], ...]


def _stamp(path: Path, when: float) -> None:
    os.utime(path, (when, when))


def build_org(tmp_path: Path, name: str, now: datetime = NOW) -> OrgScene:
    """Lay out variant ``name`` under ``tmp_path`` as it stood before the CLI ran, ``now``
    being the moment the CLI started. The locked dirs a variant names are created (the test
    decides how to make them unreadable: tests run as root)."""
    record = variants()[name]
    ts = now.timestamp()
    home, project = tmp_path / "home", tmp_path / "proj"
    (project / ".git").mkdir(parents=True)
    (project / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    project_dir = home / ".claude" / "projects" / slug(str(project))
    memory_dir = project_dir / "memory"
    memory_dir.mkdir(parents=True)
    (memory_dir / "MEMORY.md").write_text("# Memory index\n")
    (home / ".claude.json").write_text(json.dumps({"cachedGrowthBookFeatures": FLAG_CACHE}))
    (home / ".claude" / "settings.json").write_text(json.dumps({"autoDreamEnabled": True}))
    ages = {sid: (i + 1) * 3600.0 for i, sid in enumerate(record["past_sessions"])}
    for sid in record["past_sessions"]:
        (project_dir / f"{sid}.jsonl").write_text(FILLER + "\n")
    marked: list[tuple[Path, int, str]] = []
    for f in record["files"]:
        path = project_dir / f["path"]
        path.parent.mkdir(parents=True, exist_ok=True)
        rows: dict[int, str] = dict(zip(f["line"], f["lines"], strict=True))
        last = max(rows)
        path.write_text("".join((rows.get(n, FILLER)) + "\n" for n in range(1, last + 1)))
        marked.extend((path, n, text) for n, text in rows.items())
    for sid, age in ages.items():
        _stamp(project_dir / f"{sid}.jsonl", ts - age)
    lock = memory_dir / ".consolidate-lock"
    before = record["lock_before"]
    if before["exists"]:
        lock.write_text(before["content"])
        _stamp(lock, ts - before["age_h"] * 3600)
    for d in record["locked_dirs"]:
        (project_dir / d).mkdir(parents=True, exist_ok=True)
    return OrgScene(home, project, project_dir, memory_dir, lock, record, tuple(marked))
