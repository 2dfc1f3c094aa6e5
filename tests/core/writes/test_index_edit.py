"""Index lines go under the heading of their memory's type (docs/behaviour.md §4.4): ``add_entry`` /
``add_entries`` (the one insertion every index writer uses), ``restore_entry`` (a deleted
memory's line back where it was), and the callers: create, rename into the team, restore,
the doctor's add-index-entry fix, team import.

Every expected index text is written out by hand.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from memtui.core.doctor import combined_fix_plan, run_doctor
from memtui.core.writes.edits import (
    apply_plan,
    plan_create,
    plan_delete,
    plan_rename,
    restore_plan,
    trash,
)
from memtui.core.writes.index_edit import (
    add_entries,
    add_entry,
    memory_type_of,
    newly_dropped,
    restore_entry,
)
from memtui.core.writes.journal import Journal
from memtui.core.memory.memories import read_memory
from memtui.core.team.bundle import import_bundle

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
NEW = "- [New](new.md) — n"

INDEX = (
    "# Memory index\n"
    "\n"
    "## User\n"
    "- [Role](user_role.md) — backend engineer\n"
    "\n"
    "## Feedback\n"
    "- [Terse](feedback_terse.md) — short answers\n"
    "\n"
    "## Reference\n"
    "- [Tracker](reference_tracker.md) — bugs in INGEST\n"
)


# --- add_entry: where a new line goes -------------------------------------------------------


def test_a_user_line_goes_under_user_not_at_the_end() -> None:
    assert add_entry(INDEX, NEW, "user") == (
        "# Memory index\n"
        "\n"
        "## User\n"
        "- [Role](user_role.md) — backend engineer\n"
        "- [New](new.md) — n\n"
        "\n"
        "## Feedback\n"
        "- [Terse](feedback_terse.md) — short answers\n"
        "\n"
        "## Reference\n"
        "- [Tracker](reference_tracker.md) — bugs in INGEST\n"
    )


def test_a_line_of_the_last_section_goes_at_the_end() -> None:
    assert add_entry(INDEX, NEW, "reference") == INDEX + "- [New](new.md) — n\n"


def test_no_type_or_no_heading_for_it_appends_at_the_end() -> None:
    assert add_entry(INDEX, NEW) == INDEX + "- [New](new.md) — n\n"
    assert add_entry(INDEX, NEW, "project") == INDEX + "- [New](new.md) — n\n"
    assert add_entry("- [A](a.md)\n", NEW, "user") == "- [A](a.md)\n- [New](new.md) — n\n"
    assert add_entry("", NEW, "user") == "- [New](new.md) — n\n"


@pytest.mark.parametrize(
    "heading",
    ["# User", "## user", "### Users", "## USER memories", "#### Who the user is", "## User ##", "   ## User"],
)
def test_headings_that_name_the_type(heading: str) -> None:
    text = f"{heading}\n- [A](a.md)\n\n## Other\n- [B](b.md)\n"
    assert add_entry(text, NEW, "user") == f"{heading}\n- [A](a.md)\n- [New](new.md) — n\n\n## Other\n- [B](b.md)\n"


@pytest.mark.parametrize("heading", ["## Userland", "## Misuse", "    ## User", "##User", "## [User prefs](user_prefs.md)"])
def test_headings_that_do_not_name_the_type(heading: str) -> None:
    text = f"{heading}\n- [A](a.md)\n\n## Other\n- [B](b.md)\n"
    assert add_entry(text, NEW, "user") == text + "- [New](new.md) — n\n"


@pytest.mark.parametrize(
    ("mem_type", "heading"),
    [("feedback", "## Feedback & corrections"), ("project", "### project memories"), ("reference", "## References")],
)
def test_each_type_singular_or_plural(mem_type: str, heading: str) -> None:
    text = f"# Index\n{heading}\n- [A](a.md)\n# Tail\n"
    assert add_entry(text, NEW, mem_type) == f"# Index\n{heading}\n- [A](a.md)\n- [New](new.md) — n\n# Tail\n"


def test_an_empty_section_gets_the_line_right_after_its_heading() -> None:
    text = "## User\n## Feedback\n- [B](b.md)\n"
    assert add_entry(text, NEW, "user") == "## User\n- [New](new.md) — n\n## Feedback\n- [B](b.md)\n"


def test_the_first_heading_naming_the_type_wins() -> None:
    text = "## User\n- [A](a.md)\n## Reference\n- [R](r.md)\n## User (old)\n- [Z](z.md)\n"
    assert add_entry(text, NEW, "user") == "## User\n- [A](a.md)\n- [New](new.md) — n\n## Reference\n- [R](r.md)\n## User (old)\n- [Z](z.md)\n"


def test_heading_style_entries_belong_to_their_section() -> None:
    text = "## User\n### [Role](user_role.md)\n### [Tone](user_tone.md)\n\n## Feedback\n"
    assert add_entry(text, NEW, "user") == "## User\n### [Role](user_role.md)\n### [Tone](user_tone.md)\n- [New](new.md) — n\n\n## Feedback\n"


def test_crlf_line_ends_are_kept() -> None:
    text = "## User\r\n- [A](a.md)\r\n\r\n## Project\r\n- [P](p.md)\r\n"
    assert add_entry(text, NEW, "user") == "## User\r\n- [A](a.md)\r\n- [New](new.md) — n\r\n\r\n## Project\r\n- [P](p.md)\r\n"
    assert add_entry(text, NEW, "project") == text + "- [New](new.md) — n\r\n"
    assert add_entry(text, NEW) == text + "- [New](new.md) — n\r\n"


def test_a_missing_final_newline() -> None:
    # inserted in the middle: the rest of the file, its missing final newline included, is kept
    text = "## User\n- [A](a.md)\n## Feedback\n- [B](b.md)"
    assert add_entry(text, NEW, "user") == "## User\n- [A](a.md)\n- [New](new.md) — n\n## Feedback\n- [B](b.md)"
    # at the end: the line gets its own line
    assert add_entry(text, NEW, "feedback") == "## User\n- [A](a.md)\n## Feedback\n- [B](b.md)\n- [New](new.md) — n\n"
    assert add_entry("## User\r\n- [A](a.md)", NEW, "user") == "## User\r\n- [A](a.md)\r\n- [New](new.md) — n\r\n"


def test_add_entries_keeps_the_order_of_lines_for_one_place() -> None:
    text = "## User\n- [A](a.md)\n\n## Feedback\n- [B](b.md)\n"
    out = add_entries(text, [("feedback", "- [F1](f1.md)"), ("user", "- [U1](u1.md)"), (None, "- [X](x.md)"), ("feedback", "- [F2](f2.md)"), ("user", "- [U2](u2.md)")])
    assert out == (
        "## User\n- [A](a.md)\n- [U1](u1.md)\n- [U2](u2.md)\n\n"
        "## Feedback\n- [B](b.md)\n- [F1](f1.md)\n- [F2](f2.md)\n- [X](x.md)\n"
    )
    assert add_entries(text, []) == text


def test_under_its_heading_a_new_line_is_not_the_one_past_the_cap() -> None:
    # 200 lines: the user section first, then 197 reference entries. A new user memory used to be
    # line 201 — past the agent's cap, never loaded; under ## User it is line 3, and the last
    # reference entry is the one that falls out (and the edit warns about it).
    text = "## User\n- [U1](u1.md)\n## Reference\n" + "".join(f"- [R{i}](r{i}.md)\n" for i in range(1, 198))
    out = add_entry(text, "- [U2](u2.md)", "user")
    assert out.splitlines()[:4] == ["## User", "- [U1](u1.md)", "- [U2](u2.md)", "## Reference"]
    assert [(e.line, e.relpath) for e in newly_dropped(text, out)] == [(201, "r197.md")]


# --- restore_entry: back where it was --------------------------------------------------------


OLD = "## User\n- [A](a.md)\n- [X](x.md) — x\n- [B](b.md)\n\n## Reference\n- [R](r.md)\n"
X = "- [X](x.md) — x"


def test_restored_between_its_old_neighbours() -> None:
    current = "## User\n- [A](a.md)\n- [B](b.md)\n\n## Reference\n- [R](r.md)\n"
    assert restore_entry(current, X, OLD, "user") == OLD


def test_restored_as_first_or_last_line() -> None:
    assert restore_entry("- [A](a.md)\n", "- [X](x.md)", "- [X](x.md)\n- [A](a.md)\n") == "- [X](x.md)\n- [A](a.md)\n"
    assert restore_entry("- [A](a.md)\n", "- [X](x.md)", "- [A](a.md)\n- [X](x.md)\n") == "- [A](a.md)\n- [X](x.md)\n"
    assert restore_entry("- [A](a.md)", "- [X](x.md)", "- [A](a.md)\n- [X](x.md)") == "- [A](a.md)\n- [X](x.md)\n"
    assert restore_entry("", "- [X](x.md)", "- [X](x.md)\n") == "- [X](x.md)\n"


def test_neighbours_gone_it_goes_under_its_type() -> None:
    current = "## User\n- [C](c.md)\n\n## Reference\n- [R](r.md)\n"
    assert restore_entry(current, X, OLD, "user") == "## User\n- [C](c.md)\n- [X](x.md) — x\n\n## Reference\n- [R](r.md)\n"
    assert restore_entry(current, X, OLD) == current + "- [X](x.md) — x\n"


def test_neighbours_no_longer_next_to_each_other_or_twice_it_goes_under_its_type() -> None:
    apart = "## User\n- [A](a.md)\n- [N](n.md)\n- [B](b.md)\n\n## Reference\n- [R](r.md)\n"
    assert restore_entry(apart, X, OLD, "user") == "## User\n- [A](a.md)\n- [N](n.md)\n- [B](b.md)\n- [X](x.md) — x\n\n## Reference\n- [R](r.md)\n"
    twice = "## User\n- [A](a.md)\n- [B](b.md)\n## Reference\n- [A](a.md)\n- [B](b.md)\n"
    assert restore_entry(twice, X, OLD, "reference") == twice + "- [X](x.md) — x\n"


def test_blank_neighbours_say_nothing_about_the_place() -> None:
    old = "## User\n- [A](a.md)\n\n- [X](x.md)\n\n## Feedback\n- [B](b.md)\n"
    current = "## User\n- [A](a.md)\n\n\n## Feedback\n- [B](b.md)\n"
    assert restore_entry(current, "- [X](x.md)", old, "feedback") == current + "- [X](x.md)\n"


def test_restore_keeps_crlf() -> None:
    old = "## User\r\n- [A](a.md)\r\n- [X](x.md)\r\n- [B](b.md)\r\n"
    assert restore_entry("## User\r\n- [A](a.md)\r\n- [B](b.md)\r\n", "- [X](x.md)", old, "user") == old


# --- memory_type_of ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("---\nname: A\ntype: user\n---\nbody\n", "user"),
        ("---\nname: A\nmetadata:\n  type: feedback\n---\n", "feedback"),
        ("---\ntype: Project\n---\n", "project"),
        ("---\r\ntype: reference\r\n---\r\n", "reference"),
        ("---\ntype: banana\n---\n", None),
        ("---\ntype: [user]\n---\n", None),
        ("no frontmatter\n", None),
    ],
)
def test_memory_type_of(text: str, expected: str | None) -> None:
    assert memory_type_of(text) == expected


# --- the callers ------------------------------------------------------------------------------


@pytest.fixture
def mem(tmp_path: Path) -> Path:
    d = tmp_path / "memory"
    d.mkdir()
    return d


@pytest.fixture
def journal(tmp_path: Path, mem: Path) -> Journal:
    return Journal(tmp_path / "state", mem)


def test_create_puts_the_line_under_its_type(mem: Path, journal: Journal) -> None:
    (mem / "MEMORY.md").write_bytes(INDEX.encode())
    apply_plan(mem, plan_create(mem, "user", "Tone", "likes plain words"), journal, NOW)
    assert (mem / "MEMORY.md").read_text(encoding="utf-8") == (
        "# Memory index\n"
        "\n"
        "## User\n"
        "- [Role](user_role.md) — backend engineer\n"
        "- [Tone](user_tone.md) — likes plain words\n"
        "\n"
        "## Feedback\n"
        "- [Terse](feedback_terse.md) — short answers\n"
        "\n"
        "## Reference\n"
        "- [Tracker](reference_tracker.md) — bugs in INGEST\n"
    )


def test_delete_then_restore_puts_the_line_back_where_it_was(mem: Path, journal: Journal) -> None:
    (mem / "MEMORY.md").write_bytes(INDEX.encode())
    (mem / "user_role.md").write_bytes(b"---\nname: Role\ndescription: backend engineer\ntype: user\n---\nR\n")
    apply_plan(mem, plan_delete(mem, read_memory(mem / "user_role.md", mem)), journal, NOW)
    assert "user_role.md" not in (mem / "MEMORY.md").read_text(encoding="utf-8")
    apply_plan(mem, restore_plan(mem, journal, trash(journal)[0]), journal, NOW)
    assert (mem / "MEMORY.md").read_text(encoding="utf-8") == INDEX


def test_restore_after_the_section_changed_puts_the_line_under_its_type(mem: Path, journal: Journal) -> None:
    (mem / "MEMORY.md").write_bytes(INDEX.encode())
    (mem / "user_role.md").write_bytes(b"---\nname: Role\ndescription: backend engineer\ntype: user\n---\nR\n")
    apply_plan(mem, plan_delete(mem, read_memory(mem / "user_role.md", mem)), journal, NOW)
    # meanwhile the user section got a new first line: the old neighbours are not adjacent now
    apply_plan(mem, plan_create(mem, "user", "Tone", "likes plain words"), journal, NOW)
    apply_plan(mem, restore_plan(mem, journal, trash(journal)[0]), journal, NOW)
    assert (mem / "MEMORY.md").read_text(encoding="utf-8") == (
        "# Memory index\n"
        "\n"
        "## User\n"
        "- [Tone](user_tone.md) — likes plain words\n"
        "- [Role](user_role.md) — backend engineer\n"
        "\n"
        "## Feedback\n"
        "- [Terse](feedback_terse.md) — short answers\n"
        "\n"
        "## Reference\n"
        "- [Tracker](reference_tracker.md) — bugs in INGEST\n"
    )


def test_rename_into_the_team_puts_the_line_under_its_type_in_the_team_index(mem: Path, journal: Journal) -> None:
    (mem / "MEMORY.md").write_bytes(b"- [Terse](feedback_terse.md) \xe2\x80\x94 short answers\n")
    (mem / "feedback_terse.md").write_bytes(b"---\nname: Terse\ndescription: short answers\ntype: feedback\n---\nT\n")
    (mem / "team").mkdir()
    (mem / "team" / "MEMORY.md").write_bytes(b"## Feedback\n- [Squash](squash.md)\n\n## Project\n- [Freeze](freeze.md)\n")
    apply_plan(mem, plan_rename(mem, read_memory(mem / "feedback_terse.md", mem), "team/feedback_terse.md"), journal, NOW)
    assert (mem / "MEMORY.md").read_bytes() == b""
    assert (mem / "team" / "MEMORY.md").read_text(encoding="utf-8") == (
        "## Feedback\n- [Squash](squash.md)\n- [Terse](feedback_terse.md) — short answers\n\n## Project\n- [Freeze](freeze.md)\n"
    )


def test_doctor_add_index_entry_puts_the_line_under_its_type(mem: Path) -> None:
    (mem / "MEMORY.md").write_bytes(INDEX.encode())
    (mem / "feedback_terse.md").write_bytes(b"---\nname: Terse\ndescription: short answers\ntype: feedback\n---\nT\n\n**Why:** w\n\n**How to apply:** h\n")
    (mem / "feedback_tests.md").write_bytes(
        b"---\nname: Real DB\ndescription: integration tests hit a real database\ntype: feedback\n---\nUse it.\n\n**Why:** w\n\n**How to apply:** h\n"
    )
    report = run_doctor(mem, NOW)
    missing = [f for f in report.findings if f.code == "not-indexed" and f.path == "feedback_tests.md"]
    assert len(missing) == 1
    plan = combined_fix_plan(mem, missing)
    [change] = plan.changes
    assert (change.after or b"").decode() == (
        "# Memory index\n"
        "\n"
        "## User\n"
        "- [Role](user_role.md) — backend engineer\n"
        "\n"
        "## Feedback\n"
        "- [Terse](feedback_terse.md) — short answers\n"
        "- [Real DB](feedback_tests.md) — integration tests hit a real database\n"
        "\n"
        "## Reference\n"
        "- [Tracker](reference_tracker.md) — bugs in INGEST\n"
    )


def test_team_import_puts_new_lines_under_their_types(mem: Path, tmp_path: Path) -> None:
    team = mem / "team"
    team.mkdir()
    (team / "MEMORY.md").write_bytes(b"## Reference\r\n- [Tracker](tracker.md)\r\n\r\n## Project\r\n- [Freeze](freeze.md)\r\n")
    import_bundle(
        {
            "dash.md": "---\nname: Dashboard\ndescription: latency graphs\ntype: reference\n---\n",
            "notes.md": "no frontmatter",
        },
        mem,
        state_dir=tmp_path / "state",
        now=NOW,
    )
    assert (team / "MEMORY.md").read_bytes().decode() == (
        "## Reference\r\n- [Tracker](tracker.md)\r\n- [Dashboard](dash.md) — latency graphs\r\n\r\n"
        "## Project\r\n- [Freeze](freeze.md)\r\n- [notes](notes.md)\r\n"
    )
