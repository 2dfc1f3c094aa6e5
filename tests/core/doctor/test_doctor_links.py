"""Memories that are links, and linked folders, as the doctor reports them."""

from __future__ import annotations

from pathlib import Path

from support.doctor import CLEAN_FEEDBACK, clean_dir, doctor, only


def test_a_link_to_a_memory_of_the_dir_is_one_file_listed_twice_not_two_to_merge(tmp_path: Path) -> None:
    mem = clean_dir(tmp_path)
    (mem / "feedback_alias.md").symlink_to("feedback_squash.md")
    report = doctor(mem)
    (dup,) = only(report, "duplicate")
    assert dup.path == "feedback_alias.md"
    assert dup.message.startswith("a link to feedback_squash.md: one file the agent lists twice")
    assert "merge what differs" not in dup.message


def test_two_real_copies_are_still_duplicates(tmp_path: Path) -> None:
    mem = clean_dir(tmp_path)
    (mem / "feedback_copy.md").write_text(CLEAN_FEEDBACK)
    report = doctor(mem)
    assert sorted(f.path for f in only(report, "duplicate")) == ["feedback_copy.md", "feedback_squash.md"]
    assert all("keep one (merge what differs)" in f.message for f in only(report, "duplicate"))


def test_a_dangling_link_does_not_block_the_other_fixes(tmp_path: Path) -> None:
    from memtui.core.doctor import combined_fix_plan

    mem = clean_dir(tmp_path)
    (mem / "user_b.md").write_text("---\nname: b\ndescription: b memory\ntype: user\n---\n\nB\n")
    (mem / "user_dangling.md").symlink_to("nowhere.md")
    report = doctor(mem)
    plan = combined_fix_plan(mem, only(report, "not-indexed"))
    assert [c.relpath for c in plan.changes] == ["MEMORY.md"]
    assert "- [b](user_b.md) — b memory" in plan.changes[0].after.decode()  # type: ignore[union-attr]
    assert plan.skipped == ("user_dangling.md is a link to nowhere.md, which does not exist: nothing to fix there",)
