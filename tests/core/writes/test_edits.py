"""The one write path: plans, atomic apply with rollback, journal, undo, trash (docs/behaviour.md §4.4, §10).

Expected file contents are written out by hand.
"""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path

import pytest

from memtui.core.writes.edits import (
    ApplyError,
    ConflictError,
    EditError,
    apply_plan,
    plan_create,
    plan_create_text,
    plan_delete,
    plan_rename,
    plan_retype,
    plan_save,
    restore_plan,
    trash,
    undo,
    undo_plan,
)
from memtui.core.writes.journal import Journal
from memtui.core.memory.memories import read_memory
from support.faults import failing_step

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
OLD = NOW.timestamp() - 30 * 86_400


@pytest.fixture
def mem(tmp_path: Path) -> Path:
    d = tmp_path / "memory"
    d.mkdir()
    return d


@pytest.fixture
def journal(tmp_path: Path, mem: Path) -> Journal:
    return Journal(tmp_path / "state", mem)


def write(path: Path, data: bytes, mtime: float = OLD) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    os.utime(path, (mtime, mtime))


def tree(root: Path) -> dict[str, tuple[bytes, float]]:
    return {p.relative_to(root).as_posix(): (p.read_bytes(), p.stat().st_mtime) for p in sorted(root.rglob("*")) if p.is_file()}


CRLF_CASED = b"---\r\nname: DB\r\ndescription: real db\r\ntype: Feedback\r\noriginSessionId: abc\r\nzeta: [1, 2]\r\n---\r\n\r\nUse the real DB \xe2\x80\x94 always.\r\n"


def test_retype_changes_only_the_type_line_crlf_and_unknown_keys_kept(mem: Path, journal: Journal) -> None:
    write(mem / "feedback_db.md", CRLF_CASED)
    plan = plan_retype(mem, read_memory(mem / "feedback_db.md", mem), "feedback")
    apply_plan(mem, plan, journal, NOW)
    assert (mem / "feedback_db.md").read_bytes() == CRLF_CASED.replace(b"type: Feedback\r\n", b"type: feedback\r\n")


def test_retype_lifts_metadata_type_keeping_sibling_keys(mem: Path, journal: Journal) -> None:
    write(mem / "f.md", b"---\nname: T\nmetadata:\n  type: feedback\n  source: chat\ndescription: d\n---\nbody\n")
    apply_plan(mem, plan_retype(mem, read_memory(mem / "f.md", mem), "feedback"), journal, NOW)
    assert (mem / "f.md").read_bytes() == b"---\nname: T\nmetadata:\n  source: chat\ndescription: d\ntype: feedback\n---\nbody\n"


def test_retype_without_frontmatter_adds_a_block_and_keeps_the_body(mem: Path, journal: Journal) -> None:
    write(mem / "r.md", b"# Dashboards\n\nLatency board.\n")
    apply_plan(mem, plan_retype(mem, read_memory(mem / "r.md", mem), "reference"), journal, NOW)
    assert (mem / "r.md").read_bytes() == b"---\ntype: reference\n---\n# Dashboards\n\nLatency board.\n"


def test_retype_to_the_same_type_is_refused(mem: Path) -> None:
    write(mem / "u.md", b"---\ntype: user\n---\nx\n")
    with pytest.raises(EditError):
        plan_retype(mem, read_memory(mem / "u.md", mem), "user")


def test_a_change_on_disk_after_loading_is_a_conflict_and_nothing_is_written(mem: Path, journal: Journal) -> None:
    write(mem / "u.md", b"---\ntype: user\n---\nmine\n")
    loaded = read_memory(mem / "u.md", mem)
    write(mem / "u.md", b"---\ntype: user\n---\ntheirs\n")
    with pytest.raises(ConflictError):
        plan_save(mem, loaded, "---\ntype: user\n---\nedited\n")
    # a plan made before the change is refused at apply time too
    fresh = read_memory(mem / "u.md", mem)
    plan = plan_save(mem, fresh, "---\ntype: user\n---\nedited\n")
    write(mem / "u.md", b"---\ntype: user\n---\nagent again\n")
    with pytest.raises(ConflictError):
        apply_plan(mem, plan, journal, NOW)
    assert (mem / "u.md").read_bytes() == b"---\ntype: user\n---\nagent again\n"


def test_crash_between_temp_file_and_replace_leaves_the_original_and_no_temp_file(mem: Path, journal: Journal) -> None:
    write(mem / "u.md", b"---\ntype: user\n---\noriginal\n")
    plan = plan_save(mem, read_memory(mem / "u.md", mem), "---\ntype: user\n---\nnew\n")
    # the memory's temp file is written, then the disk fills up before it is swapped in
    with failing_step("write", mem, 1, OSError(28, "No space left on device")), pytest.raises(ApplyError):
        apply_plan(mem, plan, journal, NOW)
    assert (mem / "u.md").read_bytes() == b"---\ntype: user\n---\noriginal\n"
    assert sorted(p.name for p in mem.iterdir()) == ["u.md"]


def test_failure_midway_restores_every_file(mem: Path, journal: Journal) -> None:
    write(mem / "a.md", b"---\nname: A\ndescription: a\ntype: user\n---\nA\n")
    write(mem / "MEMORY.md", b"- [A](a.md) \xe2\x80\x94 a\n")
    before = tree(mem)
    plan = plan_rename(mem, read_memory(mem / "a.md", mem), "b.md")
    assert [c.kind for c in plan.changes] == ["modify", "create", "delete"]
    # the index was written; the new file fails
    with failing_step("write", mem, 2, OSError(5, "Input/output error")) as calls, pytest.raises(ApplyError):
        apply_plan(mem, plan, journal, NOW)
    assert len(calls) == 3  # the index, the new file, then the rollback's write of the index
    assert {k: v[0] for k, v in tree(mem).items()} == {k: v[0] for k, v in before.items()}
    assert [e.status for e in journal.entries()] == ["failed"]


def test_rename_follows_the_index_link(mem: Path, journal: Journal) -> None:
    write(mem / "a.md", b"---\nname: A\ndescription: a\ntype: user\n---\nA\n")
    write(mem / "MEMORY.md", b"# Index\n- [A](a.md) \xe2\x80\x94 hook\n- [Other](o.md) \xe2\x80\x94 x\n")
    apply_plan(mem, plan_rename(mem, read_memory(mem / "a.md", mem), "sub/a2.md"), journal, NOW)
    assert not (mem / "a.md").exists()
    assert (mem / "sub/a2.md").read_bytes() == b"---\nname: A\ndescription: a\ntype: user\n---\nA\n"
    assert (mem / "MEMORY.md").read_bytes() == b"# Index\n- [A](sub/a2.md) \xe2\x80\x94 hook\n- [Other](o.md) \xe2\x80\x94 x\n"


@pytest.mark.parametrize("bad", ["../x.md", "/abs.md", "x.txt", "MEMORY.md", "team/MEMORY.md", ""])
def test_rename_refuses_bad_names(mem: Path, bad: str) -> None:
    write(mem / "a.md", b"---\ntype: user\n---\nA\n")
    with pytest.raises(EditError):
        plan_rename(mem, read_memory(mem / "a.md", mem), bad)


def test_create_writes_the_type_template_and_an_index_line(mem: Path, journal: Journal) -> None:
    write(mem / "MEMORY.md", b"- [A](a.md) \xe2\x80\x94 a")  # no final newline
    apply_plan(mem, plan_create(mem, "feedback", "No mocks", "Integration tests hit the real DB"), journal, NOW)
    assert (mem / "feedback_no_mocks.md").read_text() == (
        "---\nname: No mocks\ndescription: Integration tests hit the real DB\ntype: feedback\n---\n\n"
        "The rule, in one or two sentences.\n\n**Why:** what happened that made it a rule.\n\n"
        "**How to apply:** when and how to follow it.\n"
    )
    assert (mem / "MEMORY.md").read_text() == (
        "- [A](a.md) — a\n- [No mocks](feedback_no_mocks.md) — Integration tests hit the real DB\n"
    )


def test_create_from_text_refuses_a_template_or_empty_body_and_writes_nothing(mem: Path) -> None:
    draft = "---\nname: No mocks\ndescription: Integration tests hit the real DB\ntype: feedback\n---\n\n"
    template = draft + "The rule, in one or two sentences.\n\n**Why:** what happened that made it a rule.\n\n**How to apply:** when and how to follow it.\n"
    with pytest.raises(EditError, match="still the template"):
        plan_create_text(mem, "feedback_no_mocks.md", template)
    with pytest.raises(EditError, match="body is empty"):
        plan_create_text(mem, "feedback_no_mocks.md", draft + "\n")
    # the first line written, the two placeholders below it left as they were
    half = draft + "Integration tests hit the real DB.\n\n**Why:** what happened that made it a rule.\n\n**How to apply:** when and how to follow it.\n"
    with pytest.raises(EditError, match="placeholder lines “\\*\\*Why:\\*\\* what happened that made it a rule.”; “\\*\\*How to apply:\\*\\* when and how to follow it.”"):
        plan_create_text(mem, "feedback_no_mocks.md", half)
    with pytest.raises(EditError, match="no name and no description and no type"):
        plan_create_text(mem, "feedback_no_mocks.md", "oops" + draft + "Use the real DB.\n")
    assert list(mem.iterdir()) == []


def test_create_from_text_writes_the_text_and_indexes_what_the_agent_reads(mem: Path, journal: Journal) -> None:
    text = "---\nname: No mocks\ndescription: Integration tests hit the real DB\ntype: feedback\n---\n\nUse the real DB.\n"
    apply_plan(mem, plan_create_text(mem, "feedback_no_mocks.md", text), journal, NOW)
    assert (mem / "feedback_no_mocks.md").read_text() == text
    assert (mem / "MEMORY.md").read_text() == "- [No mocks](feedback_no_mocks.md) — Integration tests hit the real DB\n"


def test_create_quotes_a_name_yaml_would_misread(mem: Path, journal: Journal) -> None:
    apply_plan(mem, plan_create(mem, "project", "Freeze: 2026", "Only fixes"), journal, NOW)
    assert (mem / "project_freeze_2026.md").read_text().startswith('---\nname: "Freeze: 2026"\n')


def test_create_warns_when_the_index_would_pass_the_200_line_cap(mem: Path) -> None:
    lines = "".join(f"- [E{i}](e{i}.md) — h\n" for i in range(1, 201))
    write(mem / "MEMORY.md", lines.encode())
    plan = plan_create(mem, "user", "New", "one more")
    assert [(e.line, e.relpath) for e in plan.index_overflow] == [(201, "user_new.md")]


def test_delete_then_restore_brings_back_bytes_and_index_line(mem: Path, journal: Journal) -> None:
    write(mem / "a.md", b"---\nname: A\ndescription: a\ntype: user\n---\nA\n")
    write(mem / "MEMORY.md", b"- [A](a.md) \xe2\x80\x94 a\n- [B](b.md) \xe2\x80\x94 b\n")
    apply_plan(mem, plan_delete(mem, read_memory(mem / "a.md", mem)), journal, NOW)
    assert not (mem / "a.md").exists()
    assert (mem / "MEMORY.md").read_bytes() == b"- [B](b.md) \xe2\x80\x94 b\n"
    items = trash(journal)
    assert [i.relpath for i in items] == ["a.md"]
    apply_plan(mem, restore_plan(mem, journal, items[0]), journal, NOW)
    assert (mem / "a.md").read_bytes() == b"---\nname: A\ndescription: a\ntype: user\n---\nA\n"
    # back where it was (its neighbour B is still the first line), not appended after B
    assert (mem / "MEMORY.md").read_bytes() == b"- [A](a.md) \xe2\x80\x94 a\n- [B](b.md) \xe2\x80\x94 b\n"
    assert trash(journal) == []


def test_the_trash_is_never_inside_the_memory_dir(mem: Path, journal: Journal) -> None:
    write(mem / "a.md", b"---\ntype: user\n---\nA\n")
    apply_plan(mem, plan_delete(mem, read_memory(mem / "a.md", mem)), journal, NOW)
    assert list(mem.rglob("*")) == []
    assert mem not in journal.root.parents


def test_repeated_undo_walks_back_to_the_original_tree_with_mtimes(mem: Path, journal: Journal) -> None:
    write(mem / "x.md", CRLF_CASED)
    write(mem / "MEMORY.md", b"- [DB](x.md) \xe2\x80\x94 real db\n")
    original = tree(mem)
    apply_plan(mem, plan_retype(mem, read_memory(mem / "x.md", mem), "feedback"), journal, NOW)
    apply_plan(mem, plan_rename(mem, read_memory(mem / "x.md", mem), "feedback_db.md"), journal, NOW)
    apply_plan(mem, plan_delete(mem, read_memory(mem / "feedback_db.md", mem)), journal, NOW)
    apply_plan(mem, plan_create(mem, "user", "Me", "who I am"), journal, NOW)
    for _ in range(4):
        undo(mem, journal, NOW)
    assert tree(mem) == original
    with pytest.raises(EditError):
        undo_plan(mem, journal)


def test_undo_refuses_when_the_file_changed_since(mem: Path, journal: Journal) -> None:
    write(mem / "u.md", b"---\ntype: User\n---\nx\n")
    apply_plan(mem, plan_retype(mem, read_memory(mem / "u.md", mem), "user"), journal, NOW)
    write(mem / "u.md", b"---\ntype: user\n---\nedited by the agent\n")
    with pytest.raises(ConflictError):
        undo_plan(mem, journal)


GRAFANA = b"---\nname: Latency board\ndescription: Grafana board for ingest latency\ntype: reference\n---\n\nBoard.\n"


def test_a_save_that_breaks_the_frontmatter_lists_what_the_agent_loses(mem: Path) -> None:
    write(mem / "r.md", GRAFANA)
    plan = plan_save(mem, read_memory(mem / "r.md", mem), "oops" + GRAFANA.decode())  # typed above the opening ---
    assert plan.losses[:3] == (
        "name “Latency board”: the agent sees no name",
        "description “Grafana board for ingest latency”: recall has nothing to match on",
        "type reference: the memory becomes untyped",
    )
    assert any(loss.startswith("why: no frontmatter") for loss in plan.losses[3:])


def test_a_mistyped_type_is_a_loss_and_an_ordinary_edit_is_not(mem: Path) -> None:
    write(mem / "r.md", GRAFANA)
    loaded = read_memory(mem / "r.md", mem)
    typo = plan_save(mem, loaded, GRAFANA.decode().replace("type: reference", "type: refrence"))
    assert typo.losses[0] == "type reference: the memory becomes “refrence”, not a type the agent knows"
    assert plan_save(mem, loaded, GRAFANA.decode().replace("Board.", "Panel p99.")).losses == ()
    # a new value is no loss: renaming, re-describing, re-typing by hand
    edited = GRAFANA.decode().replace("Latency board", "Ingest board").replace("type: reference", "type: project")
    assert plan_save(mem, loaded, edited).losses == ()
