"""Benchmark: the claude flavor's auto-dream status (Claude Code 2.1.328's gates, traps and
history) over a project with many large session transcripts.

    python benchmarks/autodream_bench.py [--sessions 200] [--mb 1.0] [--runs 5]

Generates in a temp dir (seeded): ``--sessions`` transcripts ``<uuid>.jsonl`` of about ``--mb``
MB each, written like Claude Code's (one line per entry, ``entrypoint`` and ``timestamp`` on
each, a request blob of ~64 KB every 20 lines, one ``memory_saved`` line in one session in ten),
a memory dir with 50 memories and a lock. Then times, in one process:

- **cold**: the first ``check_autodream`` + ``dream_history`` (every transcript read);
- **warm**: the same again (nothing changed: each transcript is stat'ed, not read);
- **grown**: after one line is appended to 10 transcripts (each read from where it grew);

against a **baseline** measured in the same run: reading every transcript line by line and
testing each line for the two markers (the I/O floor of any reader of these files).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import tempfile
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)


def generate(root: Path, sessions: int, mb: float, seed: int = 7) -> tuple[Path, Path]:
    rng = random.Random(seed)
    home = root / "home"
    project = root / "proj"
    (project / ".git").mkdir(parents=True)
    (project / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    pdir = home / ".claude" / "projects" / "".join(c if c.isalnum() else "-" for c in str(project))
    mem = pdir / "memory"
    mem.mkdir(parents=True)
    for i in range(50):
        (mem / f"project_{i:02d}.md").write_text(f"---\nname: m{i}\ndescription: memory {i}\ntype: project\n---\n\nfact {i}\n")
    (mem / "MEMORY.md").write_text("".join(f"- [m{i}](project_{i:02d}.md) — memory {i}\n" for i in range(50)))
    (mem / ".consolidate-lock").write_text("12345")
    os.utime(mem / ".consolidate-lock", (NOW.timestamp() - 30 * 3600,) * 2)
    (home / ".claude.json").write_text(json.dumps({"cachedGrowthBookFeatures": {"tengu_onyx_plover": {"enabled": True}}}))
    blob = "x" * 65_536
    for s in range(sessions):
        sid = str(uuid.UUID(int=rng.getrandbits(128)))
        t0 = NOW.timestamp() - rng.uniform(0, 60) * 3600
        lines, size, n = [], 0, 0
        while size < mb * 1_000_000:
            n += 1
            stamp = datetime.fromtimestamp(t0 + n, UTC).isoformat().replace("+00:00", "Z")
            if n % 20 == 0:
                entry = {"type": "api-request-blob", "sessionId": sid, "message": {"role": "user", "content": [{"type": "text", "text": blob}]}}
            else:
                entry = {"type": "user" if n % 2 else "assistant", "entrypoint": "cli", "sessionId": sid, "timestamp": stamp,
                         "message": {"role": "user", "content": " ".join(rng.choice("abcdefgh") * 5 for _ in range(40))}}
            line = json.dumps(entry) + "\n"
            lines.append(line)
            size += len(line)
        if s % 10 == 0:
            lines.append(json.dumps({"type": "system", "subtype": "memory_saved", "writtenPaths": [str(mem / "project_01.md")], "verb": "Improved",
                                     "timestamp": datetime.fromtimestamp(t0 + n + 1, UTC).isoformat().replace("+00:00", "Z"), "sessionId": sid}) + "\n")
        path = pdir / f"{sid}.jsonl"
        path.write_text("".join(lines))
        os.utime(path, (t0 + n, t0 + n))
    return home, project


def baseline(pdir: Path) -> int:
    hits = 0
    for p in pdir.glob("*.jsonl"):
        with open(p, "rb") as fh:
            for line in fh:
                if b'"memory_saved"' in line or b'"memory_update"' in line:
                    hits += 1
    return hits


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sessions", type=int, default=200)
    ap.add_argument("--mb", type=float, default=1.0)
    ap.add_argument("--runs", type=int, default=5)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        home, project = generate(Path(tmp), a.sessions, a.mb)
        os.environ["HOME"] = str(home)
        os.environ["MEMTUI_STATE_DIR"] = str(Path(tmp) / "state")
        from memtui.core.dream.autodream import check_autodream
        from memtui.core.dream.gates import DreamContext
        from memtui.core.dream.history import dream_history
        from memtui.core.places.flavor import CLAUDE
        from memtui.core.places.locations import resolve_locations
        from memtui.core.places.release import load_release

        release = load_release("claude-2.1.328")
        ctx = DreamContext.from_locations(resolve_locations(CLAUDE, project))

        def status() -> float:
            t = time.perf_counter()
            check_autodream(ctx, NOW, release)
            dream_history(ctx)
            return time.perf_counter() - t

        base: list[float] = []
        for _ in range(a.runs):
            t = time.perf_counter()
            baseline(ctx.sessions_dir)
            base.append(time.perf_counter() - t)
        cold = status()
        warm: list[float] = []
        grown: list[float] = []
        for _ in range(a.runs):
            warm.append(status())
            for p in sorted(ctx.sessions_dir.glob("*.jsonl"))[:10]:
                with open(p, "a") as fh:
                    fh.write(json.dumps({"type": "user", "entrypoint": "cli", "timestamp": "2026-12-01T11:00:00Z"}) + "\n")
            grown.append(status())
        b = statistics.median(base)
        total = sum(p.stat().st_size for p in ctx.sessions_dir.glob("*.jsonl")) / 1e6
        print(f"{a.sessions} transcripts, {total:,.0f} MB; load {os.getloadavg()[0]:.1f}")
        print(f"baseline (read every line, test the markers): {b * 1000:,.0f} ms")
        print(f"cold status + history: {cold * 1000:,.0f} ms ({cold / b:.2f}x baseline)")
        print(f"warm: {statistics.median(warm) * 1000:,.1f} ms; after 10 transcripts grew: {statistics.median(grown) * 1000:,.1f} ms")


if __name__ == "__main__":
    main()
