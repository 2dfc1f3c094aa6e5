"""The doctor on a copy of the trap fixture gives the findings its README lists; every
safe fix is a plan whose result matches a hand-written file byte for byte, and undo brings the
original bytes back."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from support.doctor import MONDAY, NOW, clean_dir, doctor, only, write

from memtui.core.doctor import CERTAIN_FIXES, FixError, combined_fix_plan, fix_plan, run_doctor
from memtui.core.writes.edits import apply_plan, undo
from memtui.core.writes.journal import Journal

TRAPS = Path("/work/shared/fixtures/traps/memory")


@pytest.fixture
def traps(tmp_path: Path) -> Path:
    if not TRAPS.is_dir():
        pytest.skip("shared trap fixture not present")
    memory_dir = tmp_path / "memory"
    shutil.copytree(TRAPS, memory_dir)
    for path in [memory_dir, *memory_dir.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    os.utime(memory_dir / "project_relative_dates.md", (MONDAY, MONDAY))
    return memory_dir


def test_trap_fixture_findings(traps: Path) -> None:
    report = doctor(traps)
    got = {(f.path, f.code, f.line, f.fix) for f in report.findings}
    expected_from_readme = {
        ("feedback_nested_type.md", "type-nested", 4, "lift-type"),
        ("project_colon_yaml.md", "frontmatter-repaired", 2, None),
        ("reference_no_frontmatter.md", "no-frontmatter", None, None),
        ("feedback_Type_case.md", "type-case", 4, "lower-case-type"),
        ("project_relative_dates.md", "relative-date", 7, None),  # tomorrow: reported, never rewritten
        ("feedback_missing_why.md", "missing-why", None, None),
        ("feedback_missing_why.md", "missing-how-to-apply", None, None),
        ("MEMORY.md", "index-dangling", 9, "drop-index-line"),  # project_gone.md
        ("MEMORY.md", "index-heading-entry", 8, "entry-from-heading"),
    }
    assert expected_from_readme <= got
    dates = [(f.line, f.data["phrase"], f.data["resolved"]) for f in only(report, "relative-date")]
    assert dates == [(7, "tomorrow", "2026-03-03")]  # "on Thursday" (this one, or every one?) is not reported
    [dangling] = only(report, "index-dangling")
    assert dangling.data["target"] == "project_gone.md"
    unindexed = sorted(f.path for f in only(report, "not-indexed"))
    assert unindexed == sorted(
        ["feedback_Type_case.md", "project_relative_dates.md", "reference_no_frontmatter.md", "user_crlf.md", "笔记_用户偏好.md", "team/reference_tracker.md"]
    )
    # user_crlf.md parses normally: nothing but the index finding.
    assert [f.code for f in report.findings if f.path == "user_crlf.md"] == ["not-indexed"]
    assert not report.has_errors


def apply_and_check(memory_dir: Path, plan_files: dict[str, bytes | None], plan: object) -> None:
    """Apply ``plan``, compare every touched file with ``plan_files`` (``None`` = absent), undo,
    and check the original bytes are back."""
    from memtui.core.writes.edits import Plan

    assert isinstance(plan, Plan) and plan.action == "fix"
    originals = {rel: (memory_dir / rel).read_bytes() if (memory_dir / rel).exists() else None for rel in plan_files}
    journal = Journal(memory_dir.parent / "state", memory_dir)
    apply_plan(memory_dir, plan, journal, NOW)
    for rel, expected in plan_files.items():
        actual = (memory_dir / rel).read_bytes() if (memory_dir / rel).exists() else None
        assert actual == expected, rel
    undo(memory_dir, journal, NOW)
    for rel, original in originals.items():
        actual = (memory_dir / rel).read_bytes() if (memory_dir / rel).exists() else None
        assert actual == original, rel


def test_fix_lift_type(traps: Path) -> None:
    [f] = only(doctor(traps), "type-nested")
    expected = (
        b"---\nname: Keep replies short\ndescription: The user wants terse answers without recap paragraphs\n"
        b"type: feedback\n---\n\nAnswer in at most a few sentences unless asked for detail.\n\n"
        b"**Why:** long recaps were skipped unread.\n\n**How to apply:** drop the closing summary.\n"
    )
    apply_and_check(traps, {"feedback_nested_type.md": expected}, fix_plan(traps, f))


def test_fix_type_case_on_a_crlf_file(tmp_path: Path) -> None:
    memory_dir = clean_dir(tmp_path)
    original = b"---\r\nname: Tests\r\ndescription: Real database\r\ntype: Feedback\r\nextra: kept\r\n---\r\n\r\nUse docker.\r\n\r\n**Why:** mocks lied.\r\n\r\n**How to apply:** always.\r\n"
    write(memory_dir, "feedback_db.md", original)
    [f] = only(doctor(memory_dir), "type-case")
    expected = b"---\r\nname: Tests\r\ndescription: Real database\r\ntype: feedback\r\nextra: kept\r\n---\r\n\r\nUse docker.\r\n\r\n**Why:** mocks lied.\r\n\r\n**How to apply:** always.\r\n"
    apply_and_check(memory_dir, {"feedback_db.md": expected}, fix_plan(memory_dir, f))


def test_fix_remove_bom_and_leading_blank(tmp_path: Path) -> None:
    memory_dir = clean_dir(tmp_path)
    write(memory_dir, "user_a.md", b"\xef\xbb\xbf---\nname: A\ndescription: d\ntype: user\n---\n\nx\n")
    write(memory_dir, "user_b.md", b"\n \n---\nname: B\ndescription: d\ntype: user\n---\n\ny\n")
    report = doctor(memory_dir)
    [bom] = only(report, "frontmatter-after-bom")
    [blank] = only(report, "frontmatter-after-blank")
    apply_and_check(memory_dir, {"user_a.md": b"---\nname: A\ndescription: d\ntype: user\n---\n\nx\n"}, fix_plan(memory_dir, bom))
    apply_and_check(memory_dir, {"user_b.md": b"---\nname: B\ndescription: d\ntype: user\n---\n\ny\n"}, fix_plan(memory_dir, blank))


def test_ambiguous_relative_date_has_no_fix(tmp_path: Path) -> None:
    memory_dir = clean_dir(tmp_path)
    write(memory_dir, "project_p.md", "---\nname: P\ndescription: d\ntype: project\n---\n\nShip next week.\n\n**Why:** w\n\n**How to apply:** h\n")
    [f] = only(doctor(memory_dir), "relative-date")
    assert f.fix is None
    with pytest.raises(FixError):
        fix_plan(memory_dir, f)


def test_fix_index_dangling_and_heading(traps: Path) -> None:
    report = doctor(traps)
    index = (traps / "MEMORY.md").read_bytes()
    assert index == (
        "# Memory index\n\n## Feedback\n- [Keep replies short](feedback_nested_type.md) — terse answers\n"
        "- [Squash merges](feedback_missing_why.md) — one commit per PR\n\n## Project\n"
        "### [Release freeze](project_colon_yaml.md)\n- [Old decision](project_gone.md) — this file no longer exists\n"
    ).encode()
    plan = combined_fix_plan(traps, [*only(report, "index-dangling"), *only(report, "index-heading-entry")])
    expected = (
        "# Memory index\n\n## Feedback\n- [Keep replies short](feedback_nested_type.md) — terse answers\n"
        "- [Squash merges](feedback_missing_why.md) — one commit per PR\n\n## Project\n"
        "- [Release freeze](project_colon_yaml.md)\n"
    ).encode()
    apply_and_check(traps, {"MEMORY.md": expected}, plan)


def test_fix_add_index_entries_main_and_team(traps: Path) -> None:
    report = doctor(traps)
    wanted = {"user_crlf.md", "笔记_用户偏好.md", "team/reference_tracker.md"}
    plan = combined_fix_plan(traps, [f for f in only(report, "not-indexed") if f.path in wanted])
    main_index = (traps / "MEMORY.md").read_bytes() + (
        "- [Role](user_crlf.md) — Backend engineer, new to the frontend code\n"
        "- [用户偏好](笔记_用户偏好.md) — 用户喜欢简洁的中文回复\n"
    ).encode()
    team_index = "- [Bug tracker](reference_tracker.md) — Bugs are tracked in the INGEST project of the team tracker\n".encode()
    apply_and_check(traps, {"MEMORY.md": main_index, "team/MEMORY.md": team_index}, plan)


def test_fix_refuses_when_the_file_changed(traps: Path) -> None:
    [f] = only(doctor(traps), "type-case")
    (traps / "feedback_Type_case.md").write_text("---\nname: x\ndescription: d\ntype: feedback\n---\n\nbody\n")
    with pytest.raises(FixError, match="changed since the doctor ran"):
        fix_plan(traps, f)


def test_no_fix_deletes_a_memory(traps: Path) -> None:
    report = doctor(traps)
    plan = combined_fix_plan(traps, list(report.fixable()))
    assert all(c.after is not None for c in plan.changes)
    before = {p.relative_to(traps).as_posix() for p in traps.rglob("*.md")}
    apply_plan(traps, plan, Journal(traps.parent / "state", traps), NOW)
    after = {p.relative_to(traps).as_posix() for p in traps.rglob("*.md")}
    assert before <= after and after - before == {"team/MEMORY.md"}
    # Every fixable finding is gone after the one plan.
    assert doctor(traps).fixable() == []


def test_no_fix_rewrites_prose_and_all_applies_only_the_certain_ones(traps: Path) -> None:
    report = run_doctor(traps, NOW)
    # dates in prose, long index hooks and conflicts are the user's to word: no fix at all
    assert [f for f in report.findings if f.code in ("relative-date", "index-line-too-long", "possible-conflict") and f.fix] == []
    certain = report.certain()
    assert certain and {f.fix for f in certain} <= CERTAIN_FIXES
    # an offered fix that drops or adds index text is there one code at a time, never in `all`
    offered = {f.fix for f in report.fixable()}
    assert {"drop-index-line", "add-index-entry"} <= offered
    assert not {"drop-index-line", "add-index-entry"} & {f.fix for f in certain}
