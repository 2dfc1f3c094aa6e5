#!/usr/bin/env python3
"""The variants of Claude Code 2.1.332's organization dream gate (SPEC §13.1) that
``scripts/oracle_org.sh`` runs through the real CLI, and what it keeps of each run.

    oracle_org.py list                          the variants' names, in order
    oracle_org.py runner NAME                   root | nobody (who runs the CLI and memtui)
    oracle_org.py place SCEN NAME               set the lock, write the marks (a scenario of
                                                the oracle's build.py, 6 past sessions)
    oracle_org.py collect SCEN OUT NAME CAPS    keep the run as CAPS/NAME.json
    oracle_org.py compare WORK CAPS             the CLI's verdict beside memtui's, one a line

Every variant starts from the oracle's ``dream`` scenario (flag on, ``autoDreamEnabled``, 6
past transcripts 1..6 h old, so every gate before the organization gate is open) and places
one or more lines; the lock is ``99999``, 25 h old, unless the variant says otherwise. Lines
appended to a past transcript keep that transcript's mtime.

The capture (``tests/captures/claude-2.1.332/org_gate/NAME.json``) holds what the CLI did and
what was laid out, nothing of memtui's: ``past_sessions`` (their ids; their transcripts are
1..6 h old, in this order), ``files`` (path under the project dir, ``appended``
to an existing transcript or a new file, the ``lines`` placed and their 1-based ``line``
numbers in that file), ``locked_dirs`` (mode 000, the CLI run as ``nobody``), ``lock_before``
/ ``lock_after`` (exists, content, age in s at the snapshot; ``mtime_moved_s``: after − before),
``debug`` (the CLI's ``[autoDream]`` lines, without their time stamps), ``verdict`` (``fired``,
``skip``, or ``none``) and ``reason`` (the skip's reason as logged).
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any

ORG_A = "6f1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d"
ORG_B = "0a9b8c7d-6e5f-4d3c-9b2a-1f0e9d8c7b6a"


def mark(org: str, sid: str, **extra: Any) -> str:
    """The line the CLI writes for a session signed in to ``org`` (compact separators)."""
    return json.dumps({"type": "hybrid-organization", "organizationUuid": org, "sessionId": sid, **extra}, separators=(",", ":"))


# name -> (what, lock (content, age h) or None for no lock, placements, runner)
# a placement: (where, line builder of the first past session's id); where: "main" (append to
# the first past transcript), "main2" (the second one), "sub" (<sid>/subagents/agent-a1b2c3.jsonl),
# or a path under the project dir.
VARIANTS: dict[str, tuple[str, tuple[str, float] | None, list[tuple[str, Any]], str]] = {
    "org_main": ("a mark appended to a past transcript", ("99999", 25), [("main", lambda s: mark(ORG_A, s))], "root"),
    "org_sub": ("the mark only in a subagent file", ("99999", 25), [("sub", lambda s: mark(ORG_A, s))], "root"),
    "org_bad": ("organizationUuid not a UUID", ("99999", 25), [("main", lambda s: mark("not-a-uuid", s))], "root"),
    "org_none": ("no mark (control)", ("99999", 25), [], "root"),
    "org_spaced": ('the mark written with spaces: "type": "hybrid-organization"', ("99999", 25),
                   [("main", lambda s: json.dumps({"type": "hybrid-organization", "organizationUuid": ORG_A, "sessionId": s}))], "root"),
    "org_hidden": ("the mark in a file of a hidden dir", ("99999", 25), [(".stash/old.jsonl", lambda s: mark(ORG_A, s))], "root"),
    "org_bak": ("the mark in <session>.jsonl.bak", ("99999", 25), [("{sid}.jsonl.bak", lambda s: mark(ORG_A, s))], "root"),
    "org_rotated": ("the mark in <session>.jsonl.1", ("99999", 25), [("{sid}.jsonl.1", lambda s: mark(ORG_A, s))], "root"),
    "org_two": ("marks of two organizations in two transcripts", ("99999", 25),
                [("main", lambda s: mark(ORG_A, s)), ("main2", lambda s: mark(ORG_B, s))], "root"),
    "org_upper": ("the organization UUID in upper case", ("99999", 25), [("main", lambda s: mark(ORG_A.upper(), s))], "root"),
    "org_nonsession": ("the mark in a file under a dir that is no session's", ("99999", 25), [("notes/archive/old.jsonl", lambda s: mark(ORG_A, s))], "root"),
    "org_array": ("a JSON array holding a mark object (not an object line)", ("99999", 25),
                  [("main", lambda s: "[" + mark(ORG_A, s) + "]")], "root"),
    "org_extra": ("a mark line with extra keys", ("99999", 25),
                  [("main", lambda s: mark(ORG_A, s, timestamp="2026-11-20T10:00:00.000Z", uuid="5d2c1b0a-9f8e-4d7c-8b6a-5f4e3d2c1b0a", extra={"nested": [1, 2]}))], "root"),
    "org_keyspace": ('the key written "organizationUuid" : (a space before the colon)', ("99999", 25),
                     [("main", lambda s: '{"type":"hybrid-organization","organizationUuid" : "%s","sessionId":"%s"}' % (ORG_A, s))], "root"),
    "org_nolock": ("a mark and no lock file", None, [("main", lambda s: mark(ORG_A, s))], "root"),
    "org_unreadable": ("an unreadable dir under the transcripts dir, no mark (the CLI run as nobody)", ("99999", 25),
                       [("locked/x.jsonl", lambda s: '{"type":"user"}')], "nobody"),
}
LOCKED = {"org_unreadable": ["locked"]}


def scenario(scen: Path) -> dict[str, Any]:
    return json.loads((scen / "scenario.json").read_text())


def target(spec: dict[str, Any], where: str) -> tuple[Path, bool]:
    """The file a placement writes and whether it appends to a past transcript."""
    pdir = Path(spec["project_dir"])
    sids = spec["past_sessions"]
    if where == "main":
        return pdir / f"{sids[0]}.jsonl", True
    if where == "main2":
        return pdir / f"{sids[1]}.jsonl", True
    if where == "sub":
        return pdir / sids[0] / "subagents" / "agent-a1b2c3.jsonl", False
    return pdir / where.format(sid=sids[0]), False


def place(scen: Path, name: str) -> None:
    spec = scenario(scen)
    what, lock, placements, _runner = VARIANTS[name]
    lock_path = Path(spec["memory_dir"]) / ".consolidate-lock"
    if lock is None:
        lock_path.unlink(missing_ok=True)
    else:
        lock_path.write_text(lock[0])
        t = time.time() - lock[1] * 3600
        os.utime(lock_path, (t, t))
    placed: list[dict[str, Any]] = []
    for where, build in placements:
        path, appended = target(spec, where)
        path.parent.mkdir(parents=True, exist_ok=True)
        st = path.stat() if path.exists() else None
        before = path.read_bytes().count(b"\n") if path.exists() else 0
        text = build(spec["past_sessions"][0])
        with path.open("a") as fh:
            fh.write(text + "\n")
        if st is not None:
            os.utime(path, (st.st_atime, st.st_mtime))
        rel = str(path.relative_to(spec["project_dir"]))
        entry = next((p for p in placed if p["path"] == rel), None)
        if entry is None:
            entry = {"path": rel, "appended": appended, "lines": [], "line": []}
            placed.append(entry)
        entry["lines"].append(text)
        entry["line"].append(before + 1)
    for d in LOCKED.get(name, []):
        (Path(spec["project_dir"]) / d).chmod(0)
    (scen / "placed.json").write_text(json.dumps({"what": what, "files": placed, "locked_dirs": LOCKED.get(name, [])}, indent=1))


def collect(scen: Path, out: Path, name: str, caps: Path) -> None:
    spec = scenario(scen)
    placed = json.loads((scen / "placed.json").read_text())
    before, after = (json.loads((out / n).read_text()) for n in ("lock_before.json", "lock_after.json"))
    debug = [line.split("] ", 1)[-1] for line in (out / "debug.txt").read_text(errors="replace").splitlines() if "[autoDream]" in line]
    verdict, reason = "none", None
    for line in debug:
        if line.startswith("[autoDream] firing"):
            verdict = "fired"
        elif line.startswith("[autoDream] skip — "):
            verdict, reason = "skip", line[len("[autoDream] skip — "):]

    def lock(snap: dict[str, Any]) -> dict[str, Any]:
        if not snap.get("exists"):
            return {"exists": False}
        return {"exists": True, "content": snap["content"], "age_h": snap["age_h"]}

    moved = after["mtime"] - before["mtime"] if before.get("exists") and after.get("exists") else None
    record = {
        "variant": name,
        "what": placed["what"],
        "cli": "Claude Code 2.1.332 (linux-x64), interactive through tmux, against the oracle's mock",
        "runner": VARIANTS[name][3],
        "captured_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "past_sessions": spec["past_sessions"],
        "files": placed["files"],
        "locked_dirs": placed["locked_dirs"],
        "lock_before": lock(before),
        "lock_after": {**lock(after), "mtime_moved_s": None if moved is None else round(moved, 6)},
        "debug": debug,
        "verdict": verdict,
        "reason": reason,
    }
    caps.mkdir(parents=True, exist_ok=True)
    (caps / f"{name}.json").write_text(json.dumps(record, indent=1, ensure_ascii=False) + "\n")


def compare(work: Path, caps: Path) -> int:
    bad = 0
    for name in VARIANTS:
        cap_path, mine_path = caps / f"{name}.json", work / "out" / f"{name}.memtui.json"
        if not cap_path.exists() or not mine_path.exists():
            print(f"{name:<15} (not run)")
            continue
        cap = json.loads(cap_path.read_text())
        mine = json.loads(mine_path.read_text())
        org = next((g for g in mine["gates"] if g["id"] == "organization"), None)
        memtui = "fired" if mine["would_fire"] else "skip"
        same = (cap["verdict"], cap["reason"]) == (memtui, mine.get("reason"))
        bad += not same
        orgs = ",".join(o[:8] for o in (org or {}).get("data", {}).get("organizations", []))
        print(f"{name:<15} CLI {cap['verdict']:<5} {cap['reason'] or '':<33} memtui {memtui:<5} {mine.get('reason') or '':<33} "
              f"{'same' if same else 'DIFFERENT'}  orgs[{orgs}]  lock {cap['lock_before'].get('content')!r}->{cap['lock_after'].get('content')!r} "
              f"moved {cap['lock_after'].get('mtime_moved_s')}")
    return 1 if bad else 0


def main(argv: list[str]) -> int:
    cmd, *args = argv
    if cmd == "list":
        print(" ".join(VARIANTS))
    elif cmd == "runner":
        print(VARIANTS[args[0]][3])
    elif cmd == "place":
        place(Path(args[0]), args[1])
    elif cmd == "collect":
        collect(Path(args[0]), Path(args[1]), args[2], Path(args[3]))
    elif cmd == "compare":
        return compare(Path(args[0]), Path(args[1]))
    else:
        raise SystemExit(f"unknown command {cmd}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
