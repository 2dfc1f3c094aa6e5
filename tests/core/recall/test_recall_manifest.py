"""Recall manifest (docs/behaviour.md §6): exact line format, newest-first order, the 200 cap, skip rules."""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

from memtui.core.recall import MANIFEST_CAP, build_manifest, load_corpus, skip_reason
from memtui.core.recall.manifest import SESSION_BUDGET

NOW = datetime(2026, 3, 10, 12, 0, tzinfo=UTC)
T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC).timestamp()  # 2026-03-02T09:00:00.000Z


def mem(d: Path, rel: str, text: str, mtime: float) -> Path:
    path = d / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    os.utime(path, (mtime, mtime))
    return path


def test_manifest_lines_exact(tmp_path: Path) -> None:
    d = tmp_path / "memory"
    mem(d, "feedback_tests.md", "---\nname: t\ndescription: Run the real DB in tests\ntype: feedback\n---\nbody\n", T0)
    mem(d, "team/reference_tracker.md", "---\ndescription: Bugs live in Linear INGEST\ntype: reference\n---\n", T0 + 0.25)
    mem(d, "nested.md", "---\ndescription: nested type\nmetadata:\n  type: user\n---\n", T0 - 86400)
    mem(d, "bare.md", "no frontmatter here\n", T0 - 2 * 86400 + 0.5)
    mem(d, "Feedback_case.md", "---\ntype: Feedback\n---\n", T0 - 3 * 86400)
    mem(d, "MEMORY.md", "- [x](feedback_tests.md)\n", T0 + 999)
    mem(d, "notes.txt", "not a memory\n", T0 + 999)
    manifest = build_manifest([doc.header for doc in load_corpus(d).docs])
    assert manifest.lines == (
        "- [reference] team/reference_tracker.md (2026-03-02T09:00:00.250Z): Bugs live in Linear INGEST",
        "- [feedback] feedback_tests.md (2026-03-02T09:00:00.000Z): Run the real DB in tests",
        "- nested.md (2026-03-01T09:00:00.000Z): nested type",
        "- bare.md (2026-02-28T09:00:00.500Z)",
        "- Feedback_case.md (2026-02-27T09:00:00.000Z)",
    )
    assert manifest.text == "\n".join(manifest.lines)
    assert (manifest.count, manifest.total) == (5, 5)


def test_frontmatter_closing_after_line_30_is_invisible(tmp_path: Path) -> None:
    d = tmp_path / "memory"
    filler = "".join(f"k{i}: v\n" for i in range(30))
    mem(d, "late.md", f"---\n{filler}description: too late\ntype: user\n---\n", T0)
    assert build_manifest([x.header for x in load_corpus(d).docs]).lines == ("- late.md (2026-03-02T09:00:00.000Z)",)


def test_cap_keeps_the_200_newest_of_a_generated_store(tmp_path: Path) -> None:
    d = tmp_path / "memory"
    for i in range(260):
        mem(d, f"m{i:03d}.md", f"---\ndescription: memory {i}\ntype: project\n---\n", T0 + i * 60)
    manifest = build_manifest([x.header for x in load_corpus(d).docs])
    assert MANIFEST_CAP == 200
    assert (manifest.count, manifest.total) == (200, 260)
    assert manifest.lines[0].startswith("- [project] m259.md (2026-03-02T13:19:00.000Z)")
    assert manifest.lines[-1].startswith("- [project] m060.md ")
    assert [h.relpath for h in manifest.headers] == [f"m{i:03d}.md" for i in range(259, 59, -1)]


def test_missing_dir_gives_an_empty_manifest(tmp_path: Path) -> None:
    manifest = build_manifest([x.header for x in load_corpus(tmp_path / "nope").docs])
    assert (manifest.count, manifest.total, manifest.text) == (0, 0, "")


def test_single_word_queries_are_skipped() -> None:
    assert skip_reason("deploy") is not None
    assert skip_reason("  deploy\n") is not None
    assert skip_reason("") is not None
    assert skip_reason("部署流程") is not None  # no whitespace: one "word" for the reference
    assert skip_reason("deploy now") is None
    assert skip_reason("deploy\tnow") is None


def test_session_budget_of_60_kib() -> None:
    assert SESSION_BUDGET == 61_440
    assert skip_reason("two words", surfaced_units=61_439) is None
    reason = skip_reason("two words", surfaced_units=61_440)
    assert reason == ("session budget spent: 61,440 of 61,440 characters of memories already shown in this session"
                      " (the agent stops recalling there)")


def test_core_recall_imports_no_ui() -> None:
    code = (
        "import sys, memtui.core.recall, memtui.core.recall.engine, memtui.core.sessions.transcripts;"
        "print(sorted(m for m in ('textual', 'rich') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
