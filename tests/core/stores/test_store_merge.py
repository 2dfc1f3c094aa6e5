"""Merging a stray store into the one that is read: what moves, what clashes, the index lines,
and the undo that puts every byte (and folder) back."""

from __future__ import annotations

import os
from datetime import datetime, timezone
from pathlib import Path

import pytest
from support.trees import file_bytes

from memtui.core.stores.merge import MergeError, apply_merge, merge_journals, plan_merge, touches, undo_merge
from memtui.core.writes.edits import undo, undoable_entries
from memtui.core.writes.journal import Journal

NOW = datetime(2026, 12, 7, 12, 0, tzinfo=timezone.utc)
MEM = "---\nname: {0}\ndescription: {0}\ntype: project\n---\n\n{0} body\n"


def _w(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


@pytest.fixture()
def stores(tmp_path: Path) -> tuple[Path, Path, Path]:
    home = tmp_path / "home"
    projects = home / ".claude" / "projects"
    src, dst = projects / "-p-svc" / "memory", projects / "-p" / "memory"
    _w(src / "new_one.md", MEM.format("new_one"))
    _w(src / "same.md", MEM.format("same"))
    _w(src / "clash.md", MEM.format("clash from svc"))
    _w(src / "notes.txt", "not a memory\n")
    _w(src / "MEMORY.md", "# Index\n- [New one](new_one.md) — new\n- [Same](same.md) — same\n- [Clash](clash.md) — clash\n")
    _w(dst / "same.md", MEM.format("same"))
    _w(dst / "clash.md", MEM.format("clash"))
    _w(dst / "MEMORY.md", "- [Same](same.md) — same\n- [Clash](clash.md) — clash\n")
    return home, src, dst


def test_merge_moves_renames_a_clash_and_carries_index_lines(stores: tuple[Path, Path, Path], tmp_path: Path) -> None:
    home, src, dst = stores
    merge = plan_merge(src, dst, home=home)
    assert {(i.relpath, i.target, i.action) for i in merge.items} == {
        ("new_one.md", "new_one.md", "move"),
        ("same.md", "same.md", "same"),
        ("clash.md", "clash-2.md", "renamed"),
        ("notes.txt", None, "left"),
        ("MEMORY.md", None, "removed"),
    }
    assert merge.index_lines == ("- [New one](new_one.md) — new", "- [Clash](clash-2.md) — clash")
    apply_merge(merge, tmp_path / "state", NOW)
    assert (dst / "new_one.md").read_text() == MEM.format("new_one")
    assert (dst / "clash-2.md").read_text() == MEM.format("clash from svc")
    assert (dst / "clash.md").read_text() == MEM.format("clash")
    assert (dst / "MEMORY.md").read_text() == (
        "- [Same](same.md) — same\n- [Clash](clash.md) — clash\n- [New one](new_one.md) — new\n- [Clash](clash-2.md) — clash\n"
    )
    assert sorted(os.listdir(src)) == ["notes.txt"]  # the index went too: every line was carried or a heading


def test_undo_puts_every_byte_and_folder_back(stores: tuple[Path, Path, Path], tmp_path: Path) -> None:
    home, src, dst = stores
    fresh = dst.parent.parent / "-q" / "memory"  # a store that does not exist yet
    before = file_bytes(home)
    merge = plan_merge(src, fresh, home=home)
    entry = apply_merge(merge, tmp_path / "state", NOW)
    assert fresh.is_dir() and not (src / "new_one.md").exists()
    (folder, journal), = merge_journals(tmp_path / "state", fresh)
    assert folder == merge.root == home / ".claude" / "projects"
    assert [e.id for e in undoable_entries(journal) if touches(e, folder, fresh)] == [entry.id]
    assert [e.id for e in undoable_entries(journal) if touches(e, folder, src)] == [entry.id]
    undo_merge(folder, journal, NOW)
    assert file_bytes(home) == before
    assert not fresh.parent.exists()


def test_copy_keeps_the_source(stores: tuple[Path, Path, Path], tmp_path: Path) -> None:
    home, src, dst = stores
    before = file_bytes(src)
    apply_merge(plan_merge(src, dst, home=home, copy=True), tmp_path / "state", NOW)
    assert file_bytes(src) == before
    assert (dst / "new_one.md").is_file()


def test_an_index_with_other_text_is_kept(stores: tuple[Path, Path, Path], tmp_path: Path) -> None:
    home, src, dst = stores
    _w(src / "MEMORY.md", "Remember: ask before deploying.\n- [New one](new_one.md) — new\n")
    merge = plan_merge(src, dst, home=home)
    apply_merge(merge, tmp_path / "state", NOW)
    assert (src / "MEMORY.md").read_text() == "Remember: ask before deploying.\n- [New one](new_one.md) — new\n"
    assert any(i.relpath == "MEMORY.md" and i.action == "left" for i in merge.items)


@pytest.mark.parametrize(
    ("case", "message"),
    [("same", "is the store it would be merged into"), ("nested", "one store is inside the other"), ("empty", "holds no memory files")],
)
def test_refusals(stores: tuple[Path, Path, Path], tmp_path: Path, case: str, message: str) -> None:
    home, src, dst = stores
    if case == "same":
        a, b = dst, dst
    elif case == "nested":
        a, b = dst / "sub", dst
        _w(a / "x.md", "x")
    else:
        a, b = dst.parent.parent / "-empty" / "memory", dst
        a.parent.mkdir()
        a.mkdir()
    with pytest.raises(MergeError, match=message):
        plan_merge(a, b, home=home)


def test_stores_sharing_only_the_home_folder_are_refused(tmp_path: Path) -> None:
    home = tmp_path / "home"
    _w(home / "notes" / "a.md", "a")
    (home / ".claude" / "projects" / "-p" / "memory").mkdir(parents=True)
    with pytest.raises(MergeError, match="share no folder below"):
        plan_merge(home / "notes", home / ".claude" / "projects" / "-p" / "memory", home=home)


def test_a_link_in_the_source_is_left(stores: tuple[Path, Path, Path], tmp_path: Path) -> None:
    home, src, dst = stores
    secret = tmp_path / "secret.md"
    secret.write_text("secret")
    os.symlink(secret, src / "link.md")
    merge = plan_merge(src, dst, home=home)
    assert ("link.md", None, "left") in {(i.relpath, i.target, i.action) for i in merge.items}
    apply_merge(merge, tmp_path / "state", NOW)
    assert not (dst / "link.md").exists() and secret.read_text() == "secret"


def test_a_memory_the_source_index_does_not_link_comes_with_a_line_of_its_own(stores: tuple[Path, Path, Path], tmp_path: Path) -> None:
    home, src, dst = stores
    (src / "MEMORY.md").unlink()
    _w(src / "loose.md", "---\nname: Loose one\ndescription: written by a session in svc\ntype: feedback\n---\n\nbody\n")
    merge = plan_merge(src, dst, home=home)
    assert "- [Loose one](loose.md) — written by a session in svc" in merge.index_lines
    assert "- [new_one](new_one.md) — new_one" in merge.index_lines


def test_a_copy_is_the_destination_s_own_change(stores: tuple[Path, Path, Path], tmp_path: Path) -> None:
    # A copy touches DST alone: its journal is DST's, and the plain undo of the memory dir reverts it.
    home, src, dst = stores
    outside = tmp_path / "repo" / ".claude" / "memory"  # shares only tmp_path with DST
    _w(outside / "team_rule.md", MEM.format("team_rule"))
    before = file_bytes(dst)
    merge = plan_merge(outside, dst, home=home, copy=True)
    assert merge.root == dst.resolve()
    entry = apply_merge(merge, tmp_path / "state", NOW)
    journal = Journal(tmp_path / "state", dst)
    assert [e.id for e in undoable_entries(journal)] == [entry.id]
    undo(dst, journal, NOW)
    assert file_bytes(dst) == before and (outside / "team_rule.md").is_file()


def test_a_destination_file_that_is_a_link_is_refused(stores: tuple[Path, Path, Path], tmp_path: Path) -> None:
    home, src, dst = stores
    victim = tmp_path / "victim.md"
    victim.write_text("keep")
    os.symlink(victim, dst / "MEMORY.md.tmp-link")
    (dst / "MEMORY.md").unlink()
    os.symlink(victim, dst / "MEMORY.md")
    with pytest.raises(MergeError, match="is a link"):
        plan_merge(src, dst, home=home)
    assert victim.read_text() == "keep"


def test_a_destination_file_linked_to_the_source_file_is_refused(stores: tuple[Path, Path, Path], tmp_path: Path) -> None:
    # "already in DST" through a link would delete the only copy.
    home, src, dst = stores
    (dst / "same.md").unlink()
    os.symlink(src / "same.md", dst / "same.md")
    with pytest.raises(MergeError, match="is a link"):
        plan_merge(src, dst, home=home)
    assert (src / "same.md").read_text() == MEM.format("same")


def test_an_interrupted_merge_elsewhere_is_settled_by_any_start(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A merge killed half-way, journaled in the stores' common folder: the app, the hook or a
    # command started for ANOTHER memory dir settles it (the folder is on the state dir's list).
    from support.faultlab import KILLED, NOW_ISO, merge_workspace, run_child, tree

    from memtui.core.writes.transaction import recover_at_start

    monkeypatch.setenv("MEMTUI_NOW", NOW_ISO)
    ws = merge_workspace(tmp_path / "ws")
    before = tree(ws.memory_dir)
    killed = run_child(ws, ["stores", "merge", *ws.args[2:]], kill_at=50)
    assert killed.code == KILLED
    assert tree(ws.memory_dir) != before  # half-way
    other = tmp_path / "elsewhere" / "memory"
    other.mkdir(parents=True)
    assert recover_at_start(ws.state_dir, other)  # it says what it rolled back
    assert tree(ws.memory_dir) == before


def test_undo_finds_a_merge_that_only_emptied_the_source(stores: tuple[Path, Path, Path], tmp_path: Path) -> None:
    home, src, dst = stores
    for name in ("new_one.md", "clash.md", "notes.txt"):
        (src / name).unlink()
    _w(src / "MEMORY.md", "- [Same](same.md) — same\n")
    merge = plan_merge(src, dst, home=home)
    assert {c.relpath.split("/")[0] for c in merge.plan.changes} == {"-p-svc"}  # DST untouched
    entry = apply_merge(merge, tmp_path / "state", NOW)
    from memtui.core.stores.merge import undo_candidates

    (found,) = undo_candidates(tmp_path / "state", dst, home, [])
    assert found[2].id == entry.id


def test_index_lines_are_retargeted_as_written_and_other_bytes_kept(tmp_path: Path) -> None:
    home = tmp_path / "home"
    projects = home / ".claude" / "projects"
    src, dst = projects / "-s" / "memory", projects / "-d" / "memory"
    _w(src / "dup.md", MEM.format("dup from src"))
    _w(src / "my notes.md", MEM.format("notes from src"))
    (src / "MEMORY.md").write_bytes("\ufeff- [dup](./dup.md) — d\n- [spaced](<my notes.md>) — s\n".encode())
    _w(dst / "dup.md", MEM.format("dup"))
    _w(dst / "my notes.md", MEM.format("notes"))
    (dst / "MEMORY.md").write_bytes(b"- [caf\xe9](cafe.md) \xe2\x80\x94 not UTF-8\n")
    merge = plan_merge(src, dst, home=home)
    assert merge.index_lines == ("- [dup](dup-2.md) — d", "- [spaced](<my notes-2.md>) — s")
    apply_merge(merge, tmp_path / "state", NOW)
    assert (dst / "MEMORY.md").read_bytes() == b"- [caf\xe9](cafe.md) \xe2\x80\x94 not UTF-8\n" + "- [dup](dup-2.md) — d\n- [spaced](<my notes-2.md>) — s\n".encode()


def test_a_generated_line_stays_one_line(tmp_path: Path) -> None:
    home = tmp_path / "home"
    projects = home / ".claude" / "projects"
    src, dst = projects / "-s" / "memory", projects / "-d" / "memory"
    _w(src / "new\nline.md", "---\nname: evil\x1b[31m title\ndescription: x\n---\n\nbody\n")
    dst.mkdir(parents=True)
    merge = plan_merge(src, dst, home=home)
    (line,) = merge.index_lines
    assert "\n" not in line and "\x1b" not in line
    assert "(new%0Aline.md)" in line


def test_only_the_link_is_retargeted_never_a_name_in_a_title_or_hook(tmp_path: Path) -> None:
    home = tmp_path / "home"
    projects = home / ".claude" / "projects"
    src, dst = projects / "-s" / "memory", projects / "-d" / "memory"
    for name in ("old-dup.md", "dup.md", "notes.md", "x.md"):
        _w(src / name, MEM.format(f"{name} from src"))
    for name in ("dup.md", "x.md"):
        _w(dst / name, MEM.format(name))
    _w(src / "MEMORY.md", "- [Old](old-dup.md) — see also dup.md\n- [Notes](notes.md) — supersedes x.md\n- [X](x.md) — the x\n")
    merge = plan_merge(src, dst, home=home)
    assert merge.index_lines[:3] == ("- [Old](old-dup.md) — see also dup.md", "- [Notes](notes.md) — supersedes x.md", "- [X](x-2.md) — the x")
    # dup.md clashed and SRC's index does not link it: a line of its own
    assert merge.index_lines[3:] == ("- [dup.md from src](dup-2.md) — dup.md from src",)


def test_a_line_whose_link_cannot_be_rewritten_keeps_the_source_index(tmp_path: Path) -> None:
    home = tmp_path / "home"
    projects = home / ".claude" / "projects"
    src, dst = projects / "-s" / "memory", projects / "-d" / "memory"
    _w(src / "a_b.md", MEM.format("a_b from src"))
    _w(dst / "a_b.md", MEM.format("a_b"))
    _w(src / "MEMORY.md", "- [AB](a\\_b.md) — hand-written hook\n")
    merge = plan_merge(src, dst, home=home)
    assert ("MEMORY.md", None, "left") in {(i.relpath, i.target, i.action) for i in merge.items}
    assert all(c.relpath != "-s/memory/MEMORY.md" for c in merge.plan.changes)
