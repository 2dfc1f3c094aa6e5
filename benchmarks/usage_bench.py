"""Benchmark: ``memtui usage`` — per-memory usage from the agent's transcripts — on 20,000
memories and 2,000 session transcripts.

    python benchmarks/usage_bench.py [--memories 20000] [--sessions 2000] [--turns 4] [--runs 3] [--keep DIR]

Generates in a temp dir (seeded): a memory dir of ``--memories`` memories (``generate.py``'s
``write_memories``) and ``--sessions`` transcripts written from the lines of a real Claude Code
2.1.328 session (``tests/captures/claude-2.1.328/usage/usage.json``, the "deploy" session: its
opening lines, request logs and prompt snapshots kept as they are), each with ``--turns`` turns
of: a prompt, a request log, a ``Read`` of a random memory and its result, a
``relevant_memories`` recall of four random memories, a prompt snapshot; one session in ten also
``Write``s a memory, one in twenty has a sub-agent transcript. Then times, each in one process:

- **floor**: reading every byte of every transcript once (the least any reader of them does);
- **cold**: ``UsageIndex.refresh`` + ``report`` with an empty store (every transcript read);
- **warm**: the same from a new ``UsageIndex`` on the store (nothing changed: each transcript is
  stat'ed, not read) — what ``memtui usage`` costs on a second run;
- **grown**: after a turn is appended to 20 transcripts (each read from where it grew);
- **report**: ``report`` alone (the aggregation over 20,000 memories).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from generate import write_memories  # noqa: E402

CAPTURE = ROOT / "tests" / "captures" / "claude-2.1.328" / "usage" / "usage.json"
NOW = datetime(2026, 12, 20, 12, 0, tzinfo=UTC)


def _templates(root: Path, memory_dir: Path, proj: Path) -> tuple[list[str], dict[str, str], str]:
    """The deploy session's lines with the placeholders filled for this workspace, and the
    turn's line templates by role."""
    data = json.loads(CAPTURE.read_text(encoding="utf-8"))
    rel = next(k for k in data["transcripts"] if "/subagents/" not in k and "how do I deploy" in data["transcripts"][k]["text"])
    text = data["transcripts"][rel]["text"]
    capture_mem = "{root}/home/.claude/projects/{root_slug}-proj/memory"
    text = text.replace(capture_mem, str(memory_dir)).replace("{root}/proj", str(proj)).replace("{root}", str(root))
    lines = text.splitlines()
    kinds: dict[str, str] = {}
    for line in lines:
        obj = json.loads(line)
        att = (obj.get("attachment") or {}).get("type")
        content = (obj.get("message") or {}).get("content")
        if obj.get("type") == "attachment" and att in ("relevant_memories", "prompt_snapshot"):
            kinds.setdefault(att, line)
        elif obj.get("type") == "assistant" and isinstance(content, list) and content[0].get("name") == "Read" and str(memory_dir) in line:
            kinds.setdefault("read", line)
        elif obj.get("type") == "user" and isinstance(content, list) and str(memory_dir) in line:
            kinds.setdefault("result", line)
        elif obj.get("type") == "user" and isinstance(content, str):
            kinds.setdefault("prompt", line)
        elif obj.get("type") == "api-request-blob":
            kinds.setdefault("blob", line)
    opening = [line for line in lines[:14]]
    return opening, kinds, json.loads(lines[0])["sessionId"]


def generate(root: Path, memories: int, sessions: int, turns: int, seed: int = 17) -> tuple[Path, Path, Path, list[str]]:
    rng = random.Random(seed)
    home = root / "home"
    proj = root / "proj"
    (proj / ".git").mkdir(parents=True)
    (proj / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    pdir = home / ".claude" / "projects" / "".join(c if c.isalnum() else "-" for c in str(proj))
    memory_dir = pdir / "memory"
    memory_dir.mkdir(parents=True)
    rels = write_memories(memory_dir, memories, seed)
    opening, kinds, old_sid = _templates(root, memory_dir, proj)
    capture_paths = ("deploy.md", "old_notes.md", "user_role.md", "reference_dash.md", "feedback_tests.md", "project_kafka.md")
    for s in range(sessions):
        sid = str(uuid.UUID(int=rng.getrandbits(128)))
        out = [line.replace(old_sid, sid) for line in opening]
        for _ in range(turns):
            picks = rng.sample(rels, 5)
            read = kinds["read"].replace(old_sid, sid).replace(f"memory/{capture_paths[0]}", f"memory/{picks[0]}")
            tool_id = f"toolu_bench_{rng.getrandbits(64):016x}"
            read = read.replace("toolu_mock_4c159e28327b4648", tool_id)
            result = kinds["result"].replace(old_sid, sid).replace("toolu_mock_4c159e28327b4648", tool_id)
            recall = kinds["relevant_memories"].replace(old_sid, sid)
            for old, new in zip(capture_paths[2:], picks[1:], strict=True):
                recall = recall.replace(f"memory/{old}", f"memory/{new}")
            recall = recall.replace('"uuid":"78cad75a', f'"uuid":"{rng.getrandbits(32):08x}')
            out += [kinds["prompt"].replace(old_sid, sid), kinds["blob"].replace(old_sid, sid), read, result, recall,
                    kinds["prompt_snapshot"].replace(old_sid, sid)]
        if s % 10 == 0:
            write = kinds["read"].replace(old_sid, sid).replace('"name":"Read"', '"name":"Write"').replace(
                f"memory/{capture_paths[0]}", f"memory/{rng.choice(rels)}").replace("toolu_mock_4c159e28327b4648", f"toolu_w_{s}")
            out.append(write)
        path = pdir / f"{sid}.jsonl"
        path.write_text("\n".join(out) + "\n")
        if s % 20 == 0:
            sub = pdir / sid / "subagents"
            sub.mkdir(parents=True)
            line = kinds["read"].replace(old_sid, sid).replace('"isSidechain":false', '"isSidechain":true').replace(
                f"memory/{capture_paths[0]}", f"memory/{rng.choice(rels)}").replace("toolu_mock_4c159e28327b4648", f"toolu_s_{s}")
            (sub / f"agent-a{s:016x}.jsonl").write_text(line + "\n")
    return home, proj, pdir, rels


def floor(pdir: Path) -> int:
    """Read every byte of every transcript once (the I/O floor of any reader)."""
    n = 0
    for path in pdir.rglob("*.jsonl"):
        with open(path, "rb") as fh:
            while block := fh.read(16 * 1024 * 1024):
                n += len(block)
    return n


def timed(fn: object) -> float:
    t = time.perf_counter()
    fn()  # type: ignore[operator]
    return (time.perf_counter() - t) * 1000


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--memories", type=int, default=20_000)
    ap.add_argument("--sessions", type=int, default=2_000)
    ap.add_argument("--turns", type=int, default=4)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--keep", default=None, help="generate into (or reuse) this dir")
    a = ap.parse_args()
    root = Path(a.keep) if a.keep else Path(tempfile.mkdtemp(prefix="usage-bench-"))
    if not (root / "proj").exists():
        t = time.perf_counter()
        generate(root, a.memories, a.sessions, a.turns)
        print(f"generated in {time.perf_counter() - t:.1f} s: {root}", flush=True)
    os.environ["HOME"] = str(root / "home")
    from memtui.core.places.flavor import get_flavor
    from memtui.core.places.locations import resolve_locations
    from memtui.core.sessions.usage import UsageIndex
    from memtui.core.sessions.usage_store import UsageStore

    loc = resolve_locations(get_flavor("claude"), root / "proj")
    pdir = loc.sessions_dir
    files = list(pdir.rglob("*.jsonl"))
    mb = sum(f.stat().st_size for f in files) / 1e6
    rows: dict[str, list[float]] = {"floor": [], "cold": [], "warm": [], "grown": [], "report": []}
    for run in range(a.runs):
        state = root / f"state-{run}"
        shutil.rmtree(state, ignore_errors=True)
        state.mkdir()
        store_path = state / "usage.sqlite3"
        rows["floor"].append(timed(lambda: floor(pdir)))
        rows["cold"].append(timed(lambda: (lambda i: (i.refresh(), i.report(NOW)))(UsageIndex(loc, store=UsageStore(store_path)))))
        rows["warm"].append(timed(lambda: (lambda i: (i.refresh(), i.report(NOW)))(UsageIndex(loc, store=UsageStore(store_path)))))
        grown = sorted(p for p in pdir.glob("*.jsonl"))[run * 20 : run * 20 + 20]
        for p in grown:
            with open(p, "a") as fh:
                fh.write(p.read_text().splitlines()[-2] + "\n")
        index = UsageIndex(loc, store=UsageStore(store_path))
        rows["grown"].append(timed(lambda: (index.refresh(), index.report(NOW))))
        rows["report"].append(timed(lambda: index.report(NOW)))
    report = index.report(NOW)
    used = sum(1 for m in report.memories if m.used)
    print(f"{len(report.memories):,} memories ({used:,} used), {len(report.sessions):,} sessions, {len(files):,} transcripts, {mb:,.0f} MB")
    base = statistics.median(rows["floor"])
    for name, values in rows.items():
        med = statistics.median(values)
        print(f"{name:>7}: median {med:8.1f} ms  (runs: {', '.join(f'{v:.0f}' for v in values)})  {med / base:5.2f}× the floor")
    print(f"load average: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    if not a.keep:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
