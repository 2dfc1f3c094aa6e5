"""The small memory dir the app tests run on, written by hand, with a frozen clock."""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from pathlib import Path

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
DAY = 86_400

# relpath -> (text, age in days)
MEMORIES: dict[str, tuple[str, float]] = {
    "user_role.md": (
        "---\nname: Role\ndescription: Backend engineer who writes Go daily\ntype: user\n---\n\nNew to the React side.\n",
        0.2,
    ),
    "feedback_terse.md": (
        "---\nname: Terse replies\ndescription: No recap paragraphs at the end of answers\ntype: feedback\n---\n\n"
        "Skip the closing summary.\n\n**Why:** recaps were never read.\n\n**How to apply:** stop after the answer.\n",
        1.5,
    ),
    "project_freeze.md": (
        "---\nname: Release freeze\ndescription: Only fixes merge after the freeze date\ntype: project\n---\n\n"
        "Freeze from 2026-12-04.\n\n**Why:** the mobile branch is cut.\n\n**How to apply:** park feature branches.\n",
        12,
    ),
    "reference_grafana.md": (
        "---\nname: Latency board\ndescription: Grafana board for ingest latency\ntype: reference\n---\n\n"
        "Board `ingest-latency`, panel p95.\n",
        45,
    ),
    "feedback_nested.md": (
        "---\nname: Squash merges\ndescription: One commit per pull request\nmetadata:\n  type: feedback\n---\n\n"
        "Squash every PR.\n\n**Why:** bisect stays clean.\n\n**How to apply:** use the squash button.\n",
        200,
    ),
}
INDEX = (
    "- [Role](user_role.md) — Go backend engineer\n"
    "- [Terse replies](feedback_terse.md) — no recaps\n"
    "- [Gone](project_gone.md) — deleted long ago\n"
)


def write_memory_dir(memory_dir: Path) -> None:
    """Write ``MEMORIES`` and ``INDEX`` with mtimes relative to ``NOW``."""
    memory_dir.mkdir(parents=True, exist_ok=True)
    for rel, (text, age) in MEMORIES.items():
        path = memory_dir / rel
        path.write_text(text, encoding="utf-8")
        stamp = NOW.timestamp() - age * DAY
        os.utime(path, (stamp, stamp))
    (memory_dir / "MEMORY.md").write_text(INDEX, encoding="utf-8")


def write_transcript(path: Path, cwd: Path, *texts: str) -> Path:
    """A session transcript at ``path``: each of ``texts`` as a user turn in ``cwd``, each
    answered "Noted."; session ``s1``, timestamps a minute apart on NOW's day."""
    lines = []
    parent = None
    for i, text in enumerate(texts):
        uuid = f"u{i}"
        lines.append({"type": "user", "uuid": uuid, "parentUuid": parent, "sessionId": "s1", "cwd": str(cwd),
                      "timestamp": f"2026-11-30T10:0{i}:00.000Z", "message": {"role": "user", "content": text}})
        parent = uuid
        lines.append({"type": "assistant", "uuid": f"a{i}", "parentUuid": parent, "sessionId": "s1", "cwd": str(cwd),
                      "timestamp": f"2026-11-30T10:0{i}:30.000Z",
                      "message": {"role": "assistant", "content": [{"type": "text", "text": "Noted."}]}})
        parent = f"a{i}"
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    return path
