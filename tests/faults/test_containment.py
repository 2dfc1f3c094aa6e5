"""No way out through a link: every write lands where its name *leads*, and that must be inside
the memory dir.

Each case plants a symlink the way a hostile teammate or a dotfiles setup would — a folder of
the memory dir linked to a folder outside it, a memory linked to a file outside, a folder
swapped for a link while memtui is writing — and runs the real command. Held: not one byte
written outside (the outside tree is compared byte for byte), a refusal that names the link
and where it really leads, and a memory that is a link *inside* the memory dir edited at its
target with the link kept.
"""

from __future__ import annotations

import json
import os
from datetime import datetime, timezone
from pathlib import Path

import pytest
from click.testing import CliRunner

from memtui.cli import main
from memtui.core.memory.memories import read_memory
from memtui.core.writes import steps
from memtui.core.writes.contained import ContainmentError, open_target
from memtui.core.writes.edits import ApplyError, EditError, apply_plan, plan_create_text, plan_delete, plan_save
from memtui.core.writes.journal import Journal

NOW = datetime(2026, 3, 10, 12, 0, tzinfo=timezone.utc)
MEMORY = "---\nname: {name}\ndescription: {name} memory\ntype: user\n---\n\n{body}\n"


def tree(root: Path) -> dict[str, bytes | str]:
    """Every file under ``root`` with its bytes (a link: its target), for byte-for-byte checks."""
    out: dict[str, bytes | str] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in [*filenames, *dirnames]:
            path = Path(dirpath) / name
            rel = str(path.relative_to(root))
            if path.is_symlink():
                out[rel] = "-> " + os.readlink(path)
            elif path.is_file():
                out[rel] = path.read_bytes()
    return out


@pytest.fixture
def setup(tmp_path: Path) -> tuple[Path, Path, Path]:
    """(project, memory dir, outside): the outside folder holds a stand-in authorized_keys."""
    project = tmp_path / "project"
    project.mkdir()
    mem = tmp_path / "memory"
    mem.mkdir()
    (mem / "user_a.md").write_text(MEMORY.format(name="a", body="a"))
    (mem / "MEMORY.md").write_text("- [a](user_a.md) — a\n")
    outside = tmp_path / "home" / ".ssh"
    outside.mkdir(parents=True)
    (outside / "authorized_keys").write_text("ssh-ed25519 AAAA the real key\n")
    return project, mem, outside


def run(project: Path, mem: Path, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["--project", str(project), "--memory-dir", str(mem), *args], catch_exceptions=False)
    return result.exit_code, result.output


def test_team_import_through_a_linked_team_folder_writes_nothing_outside(setup: tuple[Path, Path, Path], tmp_path: Path) -> None:
    project, mem, outside = setup
    (mem / "team").symlink_to(outside, target_is_directory=True)
    before = tree(outside)
    bundle = tmp_path / "bundle.json"
    bundle.write_text(json.dumps({"authorized_keys": "ssh-rsa EVIL attacker\n", "notes.md": MEMORY.format(name="n", body="n")}))
    code, out = run(project, mem, "team", "import", str(bundle))
    assert code in (1, 2), out
    assert tree(outside) == before
    assert str(outside) in out and "outside the memory dir" in out
    assert "Traceback" not in out


def test_restore_through_a_folder_swapped_for_a_link_is_refused(setup: tuple[Path, Path, Path]) -> None:
    project, mem, outside = setup
    (mem / "sub").mkdir()
    (mem / "sub" / "user_b.md").write_text(MEMORY.format(name="b", body="b"))
    journal = Journal(Path(os.environ["MEMTUI_STATE_DIR"]), mem)
    apply_plan(mem, plan_delete(mem, read_memory(mem / "sub" / "user_b.md", mem)), journal, NOW)
    assert not (mem / "sub" / "user_b.md").exists()
    os.rmdir(mem / "sub")
    (mem / "sub").symlink_to(outside, target_is_directory=True)
    before = tree(outside)
    code, out = run(project, mem, "restore", "sub/user_b.md")
    assert code in (1, 2), out
    assert tree(outside) == before
    assert "outside the memory dir" in out and str(outside) in out
    assert "Traceback" not in out


@pytest.mark.parametrize("kind", ["create", "modify", "delete"])
def test_no_change_writes_through_a_folder_linked_outside(setup: tuple[Path, Path, Path], kind: str) -> None:
    _, mem, outside = setup
    (outside / "user_x.md").write_text(MEMORY.format(name="x", body="outside"))
    (mem / "linked").symlink_to(outside, target_is_directory=True)
    before = tree(outside)
    journal = Journal(Path(os.environ["MEMTUI_STATE_DIR"]), mem)
    from memtui.core.writes.edits import FileChange, Plan

    if kind == "create":
        with pytest.raises(EditError, match="outside the memory dir"):
            plan_create_text(mem, "linked/user_new.md", MEMORY.format(name="new", body="new"))
        plan = Plan("Create linked/user_new.md", (FileChange("linked/user_new.md", None, b"new\n"),))
    else:
        memory = read_memory(mem / "linked" / "user_x.md", mem)
        with pytest.raises(EditError, match="outside the memory dir"):
            plan_delete(mem, memory) if kind == "delete" else plan_save(mem, memory, MEMORY.format(name="x", body="changed"))
        after = None if kind == "delete" else b"changed\n"
        plan = Plan(f"{kind} linked/user_x.md", (FileChange("linked/user_x.md", memory.text.encode(), after),))
    with pytest.raises(ApplyError, match="outside the memory dir"):
        apply_plan(mem, plan, journal, NOW)
    assert tree(outside) == before


def test_a_memory_linked_inside_the_dir_is_edited_at_its_target_and_stays_a_link(setup: tuple[Path, Path, Path]) -> None:
    project, mem, _ = setup
    (mem / "shared").mkdir()
    (mem / "shared" / "user_real.md").write_text("---\nname: real\ndescription: real memory\ntype: Feedback\n---\n\nbody\n")
    (mem / "user_link.md").symlink_to(Path("shared") / "user_real.md")
    code, out = run(project, mem, "doctor", "--fix", "all", "--yes")
    assert "Traceback" not in out
    assert (mem / "user_link.md").is_symlink()
    assert os.readlink(mem / "user_link.md") == "shared/user_real.md"
    assert (mem / "shared" / "user_real.md").read_text() == "---\nname: real\ndescription: real memory\ntype: feedback\n---\n\nbody\n"


def test_doctor_fix_on_a_memory_linked_outside_is_refused_and_keeps_the_link(setup: tuple[Path, Path, Path]) -> None:
    project, mem, outside = setup
    (outside / "dotfile.md").write_text("---\nname: dot\ndescription: kept in dotfiles\ntype: Feedback\n---\n\nbody\n")
    (mem / "feedback_dot.md").symlink_to(outside / "dotfile.md")
    before = tree(outside)
    code, out = run(project, mem, "doctor", "--fix", "lower-case-type", "--yes")
    assert "Traceback" not in out
    assert code in (1, 2), out
    assert (mem / "feedback_dot.md").is_symlink()
    assert tree(outside) == before
    assert "outside the memory dir" in out and str(outside / "dotfile.md") in out


def test_a_folder_swapped_for_a_link_after_the_check_does_not_redirect_the_write(setup: tuple[Path, Path, Path]) -> None:
    """The attacker's race: the folder is real when memtui checks it and a link to ``~/.ssh``
    from the first byte memtui writes on; the write stays in the folder memtui opened."""
    _, mem, outside = setup
    (mem / "sub").mkdir()
    (mem / "sub" / "user_b.md").write_text(MEMORY.format(name="b", body="b"))
    before = tree(outside)
    journal = Journal(Path(os.environ["MEMTUI_STATE_DIR"]), mem)
    plan = plan_save(mem, read_memory(mem / "sub" / "user_b.md", mem), MEMORY.format(name="b", body="new"))
    swapped: list[str] = []

    def swap_in_a_link(step: str, path: str) -> None:
        if step == "write" and Path(path).parent == mem / "sub" and not swapped:  # memtui's temp file, in the folder it opened
            swapped.append(path)
            os.rename(mem / "sub", mem / "sub.real")
            (mem / "sub").symlink_to(outside, target_is_directory=True)

    previous = steps.set_fault_hook(swap_in_a_link)
    try:
        apply_plan(mem, plan, journal, NOW)
    finally:
        steps.set_fault_hook(previous)
    assert swapped
    assert tree(outside) == before
    assert (mem / "sub.real" / "user_b.md").read_text() == MEMORY.format(name="b", body="new")


@pytest.mark.parametrize(
    ("make", "code"),
    [
        (lambda mem, out: (mem / "d").symlink_to(out, target_is_directory=True), "symlink-escape"),
        (lambda mem, out: (mem / "d").symlink_to(mem / "missing"), "dangling-symlink"),
        (lambda mem, out: (mem / "d").symlink_to(mem / "d"), "symlink-loop"),
        (lambda mem, out: (mem / "d").write_text("a file"), "not-a-folder"),
        (lambda mem, out: (mem / "d").symlink_to(mem, target_is_directory=True), "symlink-escape"),
    ],
)
def test_each_way_out_has_its_own_reason(setup: tuple[Path, Path, Path], make: object, code: str) -> None:
    _, mem, outside = setup
    make(mem, outside)  # type: ignore[operator]
    with pytest.raises(ContainmentError) as caught:
        open_target(mem, "d/user_x.md", create_dirs=True)
    assert caught.value.code == code
    assert "d" in caught.value.reason


def test_a_folder_linked_inside_the_dir_is_followed(setup: tuple[Path, Path, Path]) -> None:
    _, mem, _ = setup
    (mem / "real").mkdir()
    (mem / "alias").symlink_to("real", target_is_directory=True)
    with open_target(mem, "alias/user_x.md") as target:
        assert target.folder == (mem / "real").resolve()
        assert target.relpath == "real/user_x.md"


def test_a_link_out_is_written_only_once_the_user_confirms_that_link_to_that_target(setup: tuple[Path, Path, Path]) -> None:
    project, mem, outside = setup
    (outside / "dotfile.md").write_text("---\nname: dot\ndescription: kept in dotfiles\ntype: Feedback\n---\n\nbody\n")
    (outside / "other.md").write_text("---\nname: other\ndescription: another file\ntype: Feedback\n---\n\nbody\n")
    (mem / "feedback_dot.md").symlink_to(outside / "dotfile.md")
    code, out = run(project, mem, "links", "--json")
    (listed,) = json.loads(out)["links"]
    assert listed == {"relpath": "feedback_dot.md", "target": str(outside / "dotfile.md"), "inside": False, "exists": True, "confirmed": False, "writable": False}
    code, out = run(project, mem, "links", "confirm", "feedback_dot.md")
    assert code == 0, out
    code, out = run(project, mem, "doctor", "--fix", "lower-case-type", "--yes")
    assert "Traceback" not in out
    assert (mem / "feedback_dot.md").is_symlink()
    assert (outside / "dotfile.md").read_text() == "---\nname: dot\ndescription: kept in dotfiles\ntype: feedback\n---\n\nbody\n"
    code, out = run(project, mem, "undo")
    assert code == 0, out
    assert (outside / "dotfile.md").read_text() == "---\nname: dot\ndescription: kept in dotfiles\ntype: Feedback\n---\n\nbody\n"
    # the link re-pointed: the confirmation was for the old target
    (mem / "feedback_dot.md").unlink()
    (mem / "feedback_dot.md").symlink_to(outside / "other.md")
    before = tree(outside)
    code, out = run(project, mem, "doctor", "--fix", "lower-case-type", "--yes")
    assert tree(outside) == before
    assert "memtui links confirm feedback_dot.md" in out


def test_a_linked_folder_is_named_and_a_linked_index_can_be_confirmed(setup: tuple[Path, Path, Path], tmp_path: Path) -> None:
    project, mem, outside = setup
    notes = tmp_path / "dotfiles"
    notes.mkdir()
    (notes / "user_deploy.md").write_text(MEMORY.format(name="deploy", body="deploy"))
    (mem / "shared").symlink_to(notes, target_is_directory=True)
    code, out = run(project, mem, "ls")
    assert "".join(f"shared/ is a link to {notes}: the agent's memory scan does not enter linked folders".split()) in "".join(out.split())
    code, out = run(project, mem, "links", "confirm", "shared")
    assert code == 2 and "linked folder" in out
    (notes / "INDEX.md").write_text("- [a](user_a.md) — a\n")
    (mem / "MEMORY.md").unlink()
    (mem / "MEMORY.md").symlink_to(notes / "INDEX.md")
    code, out = run(project, mem, "links", "--json")
    assert [m["relpath"] for m in json.loads(out)["links"]] == ["MEMORY.md"]
    code, out = run(project, mem, "links", "confirm", "MEMORY.md")
    assert code == 0, out


def test_links_confirm_says_what_is_wrong(setup: tuple[Path, Path, Path]) -> None:
    project, mem, _ = setup
    (mem / "user_l1.md").symlink_to("user_l2.md")
    (mem / "user_l2.md").symlink_to("user_l1.md")
    assert "part of a symlink loop" in run(project, mem, "links", "confirm", "user_l1.md")[1]
    assert "name the memory by its path inside" in run(project, mem, "links", "confirm", str(mem / "user_a.md"))[1]
    assert "is not a symlink" in run(project, mem, "links", "confirm", "user_a.md")[1]
    assert "does not exist" in run(project, mem, "links", "confirm", "user_zz.md")[1]
