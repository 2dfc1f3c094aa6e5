"""Builders for the dream tests: memories with chosen mtimes, transcripts, a generated store,
and a whole-tree snapshot (bytes + mtimes) to compare before/after."""

from __future__ import annotations

import json
import os
import random
import re
import unicodedata
from datetime import UTC, datetime
from pathlib import Path

from memtui.core.dream import DreamContext

NOW = datetime(2026, 3, 10, 12, 0, tzinfo=UTC)
DAY = 86_400.0


def write(path: Path, text: str | bytes, mtime: float | None = None) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, str):
        path.write_bytes(text.encode("utf-8"))
    else:
        path.write_bytes(text)
    if mtime is not None:
        os.utime(path, (mtime, mtime))
    return path


def memory(name: str, description: str, mem_type: str, body: str) -> str:
    return f"---\nname: {name}\ndescription: {description}\ntype: {mem_type}\n---\n\n{body}"


def transcript(sessions_dir: Path, session_id: str, mtime: float) -> Path:
    """A two-line JSONL session transcript whose file mtime is ``mtime``."""
    lines = [
        {"type": "user", "sessionId": session_id, "cwd": "/p", "timestamp": "2026-03-01T00:00:00Z", "message": {"role": "user", "content": "hello there"}},
        {"type": "assistant", "sessionId": session_id, "cwd": "/p", "message": {"role": "assistant", "content": [{"type": "text", "text": "hi"}]}},
    ]
    return write(sessions_dir / f"{session_id}.jsonl", "".join(json.dumps(x) + "\n" for x in lines), mtime)


def context(tmp_path: Path, **kw: object) -> DreamContext:
    memory_dir = tmp_path / "memory"
    memory_dir.mkdir(parents=True, exist_ok=True)
    sessions = tmp_path / "sessions"
    sessions.mkdir(exist_ok=True)
    return DreamContext(memory_dir, sessions, tmp_path / "state", **kw)  # type: ignore[arg-type]


def snapshot(root: Path) -> dict[str, tuple[bytes, float]]:
    """Every file below ``root``: relpath → (bytes, mtime)."""
    out: dict[str, tuple[bytes, float]] = {}
    for dirpath, _, files in os.walk(root):
        for name in files:
            p = Path(dirpath) / name
            out[p.relative_to(root).as_posix()] = (p.read_bytes(), p.stat().st_mtime)
    return out


def norm(text: str) -> str:
    """The containment rule of the merge, written out: NFKC, case-folded, Markdown marks and
    list markers dropped, whitespace collapsed."""
    text = unicodedata.normalize("NFKC", text).casefold()
    text = re.sub(r"(?m)^\s*(?:[-*+]|\d+[.)])\s+", " ", text)
    text = re.sub(r"[*_`>#]+", " ", text)
    return " ".join(text.split())


def sentences_of(text: str) -> list[str]:
    out = []
    for line in text.splitlines():
        for s in re.split(r"(?<=[.!?])\s+|(?<=[。！？])", line.strip()):
            if s.strip():
                out.append(s.strip())
    return out


WORDS = ["alpha", "bravo", "cobalt", "delta", "ember", "falcon", "garnet", "harbor", "indigo", "juniper", "kestrel", "lumen", "meadow", "nickel", "onyx", "pepper", "quartz", "raven", "saffron", "tundra", "umber", "velvet", "willow", "xenon", "yarrow", "zephyr", "anchor", "beacon", "cinder", "drift", "eclipse", "fable", "glacier", "hollow", "ivory", "jasper", "kindle", "lagoon", "mosaic", "nimbus", "orchid", "prism", "quiver", "ripple", "summit", "thicket", "upland", "vortex", "wander", "yonder", "zenith", "acorn", "bramble", "canyon", "dune", "estuary", "fjord", "grove", "heath", "inlet", "jetty", "knoll", "ledge", "marsh", "notch", "oasis", "plateau", "quarry", "ridge", "shoal", "tarn"]
TYPES = ("user", "feedback", "project", "reference")


def generated_body(rng: random.Random, i: int) -> str:
    sents = []
    for k in range(3):
        words = rng.sample(WORDS, 9)
        sents.append(f"Item{i} note{k} " + " ".join(words) + ".")
    return " ".join(sents[:2]) + "\n\n" + sents[2] + "\n"


def generate_store(memory_dir: Path, n: int, *, seed: int = 7, base_mtime: float | None = None, index: bool = True) -> list[str]:
    """``n`` distinct memories (types cycling), mtimes a minute apart, and (``index``) a
    MEMORY.md with one line per memory. Returns the relpaths."""
    rng = random.Random(seed)
    base = base_mtime if base_mtime is not None else NOW.timestamp() - 30 * DAY
    rels: list[str] = []
    lines: list[str] = []
    for i in range(n):
        t = TYPES[i % 4]
        rel = f"{t}_gen_{i:05d}.md"
        desc = f"Generated memory {i} about {' '.join(rng.sample(WORDS, 3))}"
        write(memory_dir / rel, memory(f"Gen {i}", desc, t, generated_body(rng, i)), base + 60 * i)
        rels.append(rel)
        lines.append(f"- [Gen {i}]({rel}) — {desc}")
    if index:
        write(memory_dir / "MEMORY.md", "\n".join(lines) + "\n", base)
    return rels
