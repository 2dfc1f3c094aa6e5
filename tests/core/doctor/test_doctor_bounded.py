"""The doctor's index checks and fixes on big indexes: work per line and per index, not per
link times the text. Counts of parses and checks, and the results, by hand."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from memtui.core.doctor import combined_fix_plan, fixes, index_checks, run_doctor
from memtui.core.memory import index as index_mod
from memtui.core.memory.index import read_index

NOW = datetime(2026, 3, 10, 12, tzinfo=UTC)


def _memory(path: Path, name: str) -> None:
    path.write_text(f"---\nname: {name}\ndescription: what {name} says\ntype: user\n---\n\n{name}.\n")


def test_a_one_line_index_of_3000_links_reads_its_line_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    names = [f"m{i:04d}.md" for i in range(3_000)]
    for name in names[:2]:
        _memory(tmp_path / name, name)
    (tmp_path / "MEMORY.md").write_text("".join(f"- [M{i}]({name}) — hook (obsolete) " for i, name in enumerate(names)) + "\n")
    marks: list[str] = []
    real = index_checks.superseded_marker
    monkeypatch.setattr(index_checks, "superseded_marker", lambda line: marks.append(line) or real(line))
    report = read_index(tmp_path, names[:2])
    found = index_checks.index_findings(tmp_path, report, set(names[:2]))
    dangling = [f for f in found if f.code == "index-dangling"]
    assert len(dangling) == 2_998 and all(f.fix is None for f in dangling)  # the line links other files too
    assert len(marks) == 1  # the one line's hook, read once for its two linked memories
    assert [f.data["relpath"] for f in found if f.code == "index-superseded"] == ["m0000.md", "m0001.md"]


def test_a_line_of_one_missing_link_is_offered_for_removal(tmp_path: Path) -> None:
    (tmp_path / "MEMORY.md").write_text("- [Gone](gone.md) — a hook\n- [A](gone.md) and [B](gone2.md)\n")
    report = read_index(tmp_path, [])
    found = index_checks.index_findings(tmp_path, report, set())
    assert [(f.line, f.fix) for f in found if f.code == "index-dangling"] == [(1, "drop-index-line"), (2, None), (2, None)]


def test_an_index_over_the_cap_says_what_was_not_audited(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(index_mod, "MAX_INDEX_FILE_BYTES", 4_096)
    _memory(tmp_path / "a.md", "a")
    # 18 bytes ("—" is 3), then 1,000 lines of 21: 21,018 bytes
    (tmp_path / "MEMORY.md").write_text("- [A](a.md) — a\n" + "".join(f"- [E{i:04d}](e{i:05d}.md)\n" for i in range(1_000)))
    report = run_doctor(tmp_path, NOW)
    [truncated] = [f for f in report.findings if f.code == "index-truncated"]
    assert truncated.message.endswith(
        "; only the first 4.0 KB of MEMORY.md (20.5 KB) was audited (skipped: 16.5 KB, over the 4.0 KB cap): entries past it are not listed)"
    )
    # whole lines of the first 4,096 bytes: 18 + 194 × 21 = 4,092
    assert truncated.data == {"audited_bytes": 4_092, "size_bytes": 21_018}
    assert len([f for f in report.findings if f.code == "index-dangling"]) == 194
    assert not [f for f in report.findings if f.code == "index-unreadable"]


def test_removing_3000_dead_lines_parses_each_line_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _memory(tmp_path / "kept.md", "kept")
    lines = ["# Memory", "- [Kept](kept.md) — stays"] + [f"- [Gone {i}](gone_{i}.md) — no file" for i in range(3_000)]
    (tmp_path / "MEMORY.md").write_text("\n".join(lines) + "\n")
    report = run_doctor(tmp_path, NOW)
    dead = [f for f in report.findings if f.code == "index-dangling"]
    assert len(dead) == 3_000
    parsed: list[int] = []
    real = fixes.parse_entries
    monkeypatch.setattr(fixes, "parse_entries", lambda text, index_dir="": parsed.append(text.count("\n") + 1) or real(text, index_dir))
    plan = combined_fix_plan(tmp_path, dead)
    assert sum(parsed) == 3_000  # each dead line alone (the whole index parsed once per line before)
    [change] = plan.changes
    assert change.after == b"# Memory\n- [Kept](kept.md) \xe2\x80\x94 stays\n"
    assert plan.index_overflow == ()


def test_2000_new_index_lines_are_added_in_one_edit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    names = [f"user_{i:04d}.md" for i in range(2_000)]
    for name in names:
        _memory(tmp_path / name, name.removesuffix(".md"))
    (tmp_path / "MEMORY.md").write_text("# Memory\n\n## User\n- [Old](user_old.md)\n\n## Project\n")
    report = run_doctor(tmp_path, NOW)
    missing = [f for f in report.findings if f.code == "not-indexed"]
    assert len(missing) == 2_000
    edits: list[int] = []
    real = fixes.add_entries
    monkeypatch.setattr(fixes, "add_entries", lambda text, items: edits.append(len(items)) or real(text, items))
    plan = combined_fix_plan(tmp_path, missing)
    assert edits == [2_000]
    [change] = [c for c in plan.changes if c.relpath == "MEMORY.md"]
    after = change.after.decode()
    # under the User heading, after its last line, in the findings' order (by path)
    expected = "".join(f"- [{n.removesuffix('.md')}]({n}) — what {n.removesuffix('.md')} says\n" for n in names)
    assert after == f"# Memory\n\n## User\n- [Old](user_old.md)\n{expected}\n## Project\n"
    # the new lines are lines 5 to 2,004: those past line 200 are what the edit pushes past the cap
    assert len(plan.index_overflow) == 2_004 - 200
