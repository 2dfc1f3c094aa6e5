"""Benchmark: the memory-store audit (``memtui.core.stores.audit.audit_stores``) is linear in the
size of the repository's transcripts.

    python benchmarks/stores_bench.py [--mb 25 50 100 200] [--runs 3]

For each total size, lays out in a temp HOME (seeded) one repository whose sessions ran at its
root and in a subfolder, 1 MB of transcript each, built from the lines of a real Claude Code
2.1.332 session (``tests/captures/claude-2.1.332/stores/healthy``: the told text in a
``prompt_snapshot``, the ``AutoMem`` index, a Write) padded with ~64 KB ``api-request`` lines and
short conversation lines, a sub-agent transcript for one session in four, and as many project
dirs of other repositories as sessions (each read only at its head). Then two shapes that stress
a line scanner, of the same total size: one transcript that is a single line with no newline, and
one of nothing but short lines that each carry a Write of a ``.md`` file (every line decoded).
Times, in one process:

- **cold**: ``audit_stores`` with the evidence cache emptied (every transcript read);
- **warm**: again, nothing changed (the evidence of each transcript reused by size and mtime);

against the floor measured in the same run: reading every byte of the same transcripts in 1 MiB
chunks and counting the newlines. The growth exponent is the slope of log(time) over log(size)
between the smallest and the largest size (1.0 = linear).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from memtui.core.places.flavor import CLAUDE  # noqa: E402
from memtui.core.places.locations import resolve_locations  # noqa: E402
from memtui.core.places.slug import slugify  # noqa: E402
from memtui.core.stores import evidence as ev_mod  # noqa: E402
from memtui.core.stores.audit import audit_stores  # noqa: E402

CAPTURE = ROOT / "tests" / "captures" / "claude-2.1.332" / "stores" / "healthy"
CAPTURE_ROOT = "/tmp/oracle-stores/healthy"


def _real_lines() -> list[str]:
    scen = json.loads((CAPTURE / "scenario.json").read_text())
    sid = next(s["session_id"] for s in scen["sessions"] if s["label"] == "write+agents")
    path = next(CAPTURE.rglob(f"{sid}.jsonl"))
    return path.read_text(encoding="utf-8").splitlines(keepends=True)


def build(home: Path, proj: Path, mb: int, shape: str, seed: int = 7) -> None:
    rng = random.Random(seed)
    real = [ln.replace(CAPTURE_ROOT, str(home.parent)).replace(slugify(CAPTURE_ROOT), slugify(str(home.parent))) for ln in _real_lines()]
    blob = json.dumps({"type": "api-request", "body": "x" * 65_536}) + "\n"
    (proj / ".git").mkdir(parents=True, exist_ok=True)
    (proj / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (proj / "svc").mkdir(exist_ok=True)
    projects = home / ".claude" / "projects"
    for s in range(mb):
        cwd = proj if s % 2 else proj / "svc"
        pdir = projects / slugify(str(cwd))
        pdir.mkdir(parents=True, exist_ok=True)
        sid = str(uuid.UUID(int=rng.getrandbits(128)))
        head = [ln.replace(str(proj), str(cwd)) for ln in real]
        if shape == "one line" and s == 0:
            (pdir / f"{sid}.jsonl").write_bytes(b'{"cwd":"' + str(cwd).encode() + b'","x":"' + b"a" * (mb * 1_000_000) + b'"}')
            continue
        if shape == "one line":
            continue
        out, size = list(head), sum(len(x) for x in head)
        while size < 1_000_000:
            if shape == "writes":
                line = json.dumps({"type": "assistant", "cwd": str(cwd), "message": {"content": [{"type": "tool_use", "id": f"t{size}", "name": "Write", "input": {"file_path": f"{home}/.claude/projects/x/memory/n{size}.md"}}]}}) + "\n"
            elif rng.random() < 0.15:
                line = blob
            else:
                line = json.dumps({"type": "user", "sessionId": sid, "cwd": str(cwd), "message": {"content": " ".join(rng.choice("abcdefgh") * 5 for _ in range(40))}}) + "\n"
            out.append(line)
            size += len(line)
        (pdir / f"{sid}.jsonl").write_text("".join(out), encoding="utf-8")
        if s % 4 == 0:
            sub = pdir / sid / "subagents"
            sub.mkdir(parents=True, exist_ok=True)
            (sub / "agent-a1.jsonl").write_text("".join(head), encoding="utf-8")
            (sub / "agent-a1.meta.json").write_text('{"agentType":"general-purpose"}')
        other = projects / f"-elsewhere-repo{s}"
        other.mkdir(parents=True, exist_ok=True)
        (other / f"{sid}.jsonl").write_text(json.dumps({"type": "user", "cwd": f"/elsewhere/repo{s}"}) + "\n", encoding="utf-8")


def floor(home: Path) -> float:
    t = time.perf_counter()
    for path in (home / ".claude" / "projects").rglob("*.jsonl"):
        with open(path, "rb") as fh:
            while chunk := fh.read(1 << 20):
                chunk.count(b"\n")
    return time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mb", type=int, nargs="+", default=[25, 50, 100, 200])
    ap.add_argument("--runs", type=int, default=3)
    a = ap.parse_args()
    rows = []
    for shape in ("transcripts", "writes", "one line"):
        series = []
        for mb in a.mb:
            with tempfile.TemporaryDirectory() as tmp:
                home, proj = Path(tmp) / "home", Path(tmp) / "proj"
                build(home, proj, mb, shape)
                os.environ["HOME"] = str(home)
                loc = resolve_locations(CLAUDE, proj, environ={"HOME": str(home)})
                cold, warm, base = [], [], []
                for _ in range(a.runs):
                    ev_mod._CACHE.clear()
                    t = time.perf_counter()
                    audit_stores(loc)
                    cold.append(time.perf_counter() - t)
                    t = time.perf_counter()
                    report = audit_stores(loc)
                    warm.append(time.perf_counter() - t)
                    base.append(floor(home))
                c, w, f = statistics.median(cold), statistics.median(warm), statistics.median(base)
                series.append((mb, c))
                rows.append((shape, mb, c, f, w, len(report.sessions)))
                print(f"{shape:<12} {mb:>4} MB  cold {c * 1000:8.0f} ms  floor {f * 1000:7.0f} ms  ratio {c / f:5.2f}x  warm {w * 1000:6.1f} ms  sessions {len(report.sessions)}", flush=True)
        (m0, t0), (m1, t1) = series[0], series[-1]
        print(f"{shape}: growth exponent {math.log(t1 / t0) / math.log(m1 / m0):.2f}")


if __name__ == "__main__":
    main()
