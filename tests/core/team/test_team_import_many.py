"""A team import of many files adds their index lines in one edit of ``team/MEMORY.md`` (a
rebuild of the index per file made a 10,000-file import quadratic). Expected index by hand."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from memtui.core.team import bundle as bundle_mod
from memtui.core.team.bundle import import_bundle

NOW = datetime(2026, 3, 14, 9, 30, tzinfo=UTC)
TYPES = ("user", "feedback", "project", "reference")


def test_300_files_make_one_index_edit_with_a_line_each_under_its_type(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    memory_dir = tmp_path / "memory"
    (memory_dir / "team").mkdir(parents=True)
    (memory_dir / "team" / "MEMORY.md").write_text("# Team\n\n## Project\n- [Plan](plan.md) — the plan\n")
    bundle = {
        f"note_{i:03d}.md": f"---\nname: Note {i}\ndescription: topic {i}\ntype: {TYPES[i % 4]}\n---\n\nAgreed on {i}.\n"
        for i in range(300)
    }
    edits: list[int] = []
    real = bundle_mod.add_entries
    monkeypatch.setattr(bundle_mod, "add_entries", lambda text, items: edits.append(len(items)) or real(text, items))
    report = import_bundle(bundle, memory_dir, state_dir=tmp_path / "state", now=NOW)
    assert len(report.accepted) == 300 and not report.rejected
    assert edits == [300]
    index = (memory_dir / "team" / "MEMORY.md").read_text()
    project = "".join(f"- [Note {i}](note_{i:03d}.md) — topic {i}\n" for i in range(2, 300, 4))
    others = "".join(f"- [Note {i}](note_{i:03d}.md) — topic {i}\n" for i in range(300) if i % 4 != 2)
    # project notes under "## Project" (bundle order), the others at the end (no heading names them)
    assert index == f"# Team\n\n## Project\n- [Plan](plan.md) — the plan\n{project}{others}"
    # the new lines are lines 5 to 304; line 201 is the 197th: after the 75 project notes, the
    # 122nd other one (three in each four: 40 fours, then 160, 161)
    assert report.index_overflow[0].target == "note_161.md"
    assert len(report.index_overflow) == 304 - 200


def test_a_team_index_over_the_cap_is_not_parsed_past_its_first_part(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Its links to the imported files are still found past the first part (no line twice)."""
    from memtui.core.memory import index as index_mod

    monkeypatch.setattr(index_mod, "MAX_INDEX_FILE_BYTES", 4_096)
    parsed: list[int] = []
    real = index_mod.parse_entries
    monkeypatch.setattr(index_mod, "parse_entries", lambda text, rel="": parsed.append(len(text)) or real(text, rel))
    memory_dir = tmp_path / "memory"
    (memory_dir / "team").mkdir(parents=True)
    # one line of 1,000 links of 22 characters ("- [E000](e000.md) x " is 20, "- [Kept](kept.md) " 18)
    text = "".join(f"- [E{i:03d}](e{i:03d}.md) x " for i in range(1_000)) + "- [Kept](kept.md)\n"
    (memory_dir / "team" / "MEMORY.md").write_text(text)
    bundle = {name: f"---\nname: {name}\ndescription: d\ntype: user\n---\n\nx\n" for name in ("kept.md", "new.md")}
    report = import_bundle(bundle, memory_dir, state_dir=tmp_path / "state", now=NOW)
    assert [a.status for a in report.accepted] == ["created", "created"]
    assert (memory_dir / "team" / "MEMORY.md").read_text() == text + "- [new.md](new.md) — d\n"
    assert max(parsed) <= 4_096  # the first part, and the added line
    assert [e.target for e in report.index_overflow] == ["new.md"]
