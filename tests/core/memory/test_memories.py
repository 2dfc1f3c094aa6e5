"""docs/behaviour.md §4.1, §4.2 (+ the §4.3 checks done at parse time): tolerant parsing of every file below
the memory dir. Every problem is one diagnostic with a stable code; no file fails the scan.

Each code of `DIAGNOSTIC_CODES` is triggered by a hand-made file below; the expected *set* of
codes for each file is worked out by hand from the spec, and a clean file of each type has none.
"""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path

import pytest

from memtui.core.memory.catalog import load_catalog
from memtui.core.memory.memories import DIAGNOSTIC_CODES, MemoryDirError, read_memory, scan_memories

NOW = datetime(2026, 3, 10, 12, 0, tzinfo=UTC)
# Monday 2026-03-02 12:00 UTC (fixtures README: Thursday → 2026-03-05, tomorrow → 2026-03-03)
MONDAY = datetime(2026, 3, 2, 12, 0, tzinfo=UTC).timestamp()


def fm(*lines: str, body: str = "\nBody text.\n") -> str:
    return "---\n" + "".join(f"{line}\n" for line in lines) + "---\n" + body


WHY_HOW = "\nThe rule.\n\n**Why:** a reason.\n\n**How to apply:** a step.\n"

CLEAN = {
    "user_role.md": fm("name: Role", "description: Backend engineer, new to React", "type: user"),
    "feedback_squash.md": fm("name: Squash", "description: PRs are squashed", "type: feedback", body=WHY_HOW),
    "project_freeze.md": fm(
        "name: Freeze",
        "description: Release freeze from 2026-03-05",
        "type: project",
        body="\nFrom 2026-03-05 only fixes merge.\n\n**Why:** the release branch is cut.\n\n**How to apply:** park features.\n",
    ),
    "reference_dash.md": fm("name: Dashboards", "description: Latency board in grafana", "type: reference"),
}


def write(root: Path, rel: str, content: str | bytes, mtime: float | None = None) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, str):
        path.write_text(content, encoding="utf-8", newline="")
    else:
        path.write_bytes(content)
    if mtime is not None:
        os.utime(path, (mtime, mtime))
    return path


def codes_of(mem) -> set[str]:  # type: ignore[no-untyped-def]
    return {d.code for d in mem.diagnostics}


# A file per diagnostic code, with the full set of codes expected on it (worked out by hand).
HEADER_31 = "---\nname: Deep\ndescription: closes late\ntype: user\n" + "".join(f"k{i}: v\n" for i in range(26)) + "---\nbody\n"
CASES: dict[str, tuple[str | bytes | None, set[str]]] = {
    "unreadable": (None, {"unreadable"}),  # a dangling symlink (root can read chmod-000 files)
    "not-utf8": (b"---\nname: caf\xe9\ndescription: d\ntype: user\n---\nbody\n", {"not-utf8"}),
    "empty": ("", {"empty"}),
    "no-frontmatter": ("# Dashboards\n\nLatency board.\n", {"no-frontmatter"}),
    "frontmatter-after-bom": ("\ufeff" + CLEAN["user_role.md"], {"frontmatter-after-bom"}),
    "frontmatter-after-blank": ("\n" + CLEAN["user_role.md"], {"frontmatter-after-blank"}),
    "frontmatter-unclosed": ("---\nname: Role\ndescription: d\ntype: user\n\nbody\n", {"frontmatter-unclosed"}),
    "frontmatter-repaired": (fm("name: Role", "description: a: b", "type: user"), {"frontmatter-repaired"}),
    "frontmatter-invalid": (fm("name: Role", "paths:", "\t- src/**"), {"frontmatter-invalid"}),
    "frontmatter-not-mapping": ("---\n- a\n- b\n---\nbody\n", {"frontmatter-not-mapping"}),
    "frontmatter-beyond-header": (HEADER_31, {"frontmatter-beyond-header"}),
    "type-missing": (fm("name: Role", "description: d"), {"type-missing"}),
    "type-nested": (fm("name: Terse", "description: d", "metadata:", "  type: feedback", body=WHY_HOW), {"type-nested"}),
    "type-case": (fm("name: Db", "description: d", "type: Feedback", body=WHY_HOW), {"type-case"}),
    "type-unknown": (fm("name: Note", "description: d", "type: note"), {"type-unknown"}),
    "description-missing": (fm("name: Role", "type: user"), {"description-missing"}),
    "description-multiline": (fm("name: Role", "description: |", "  line one", "  line two", "type: user"), {"description-multiline"}),
    "name-missing": (fm("description: d", "type: user"), {"name-missing"}),
    # `name: ""` is there, empty: reported as empty, not as a missing field
    "name-empty": (fm('name: ""', "description: d", "type: user"), {"name-empty"}),
    "missing-why": (fm("name: S", "description: d", "type: feedback", body="\nRule.\n\n**How to apply:** x.\n"), {"missing-why"}),
    "missing-how-to-apply": (fm("name: S", "description: d", "type: feedback", body="\nRule.\n\n**Why:** x.\n"), {"missing-how-to-apply"}),
    "relative-date": (
        fm("name: M", "description: d", "type: project", body="\nThe backup finishes tomorrow.\n\n**Why:** x.\n\n**How to apply:** y.\n"),
        {"relative-date"},
    ),
    "over-recall-limit": (fm("name: Big", "description: d", "type: user", body="\n" + "x" * 5000 + "\n"), {"over-recall-limit"}),
    "not-indexed": (CLEAN["user_role.md"], {"not-indexed"}),  # checked through the catalog
    # 1.1 MB: over memtui's 1 MiB read cap, and so over recall's 4,096 bytes too
    "too-large": (fm("name: Big", "description: d", "type: user", body="\n" + "x" * 1_100_000 + "\n"), {"too-large", "over-recall-limit"}),
}


def test_every_diagnostic_code_has_a_case() -> None:
    assert set(CASES) == set(DIAGNOSTIC_CODES)


@pytest.mark.parametrize("code", sorted(CASES))
def test_each_code_is_triggered_by_its_file(tmp_path: Path, code: str) -> None:
    content, expected = CASES[code]
    if content is None:
        (tmp_path / "broken.md").symlink_to(tmp_path / "missing-target.md")
    else:
        write(tmp_path, "case.md", content, MONDAY)
    if code == "not-indexed":
        catalog = load_catalog(tmp_path, NOW)
        (entry,) = catalog.entries
        assert {d.code for d in entry.diagnostics} == expected
        return
    scan = scan_memories(tmp_path)
    (mem,) = scan.memories  # listed, never dropped
    assert codes_of(mem) == expected
    for d in mem.diagnostics:
        assert d.severity in ("error", "warning", "info")
        assert d.message


def test_non_mapping_frontmatter_is_flagged(tmp_path: Path) -> None:
    write(tmp_path, "list.md", CASES["frontmatter-not-mapping"][0])
    (mem,) = scan_memories(tmp_path).memories
    assert "frontmatter-not-mapping" in codes_of(mem)
    assert (mem.name, mem.type) == (None, None)


@pytest.mark.parametrize("name", sorted(CLEAN))
def test_clean_files_have_no_diagnostics(tmp_path: Path, name: str) -> None:
    path = write(tmp_path, name, CLEAN[name], MONDAY)
    mem = read_memory(path, tmp_path)
    assert mem.diagnostics == ()
    assert mem.type == name.split("_")[0]


def test_clean_indexed_files_have_no_catalog_diagnostics(tmp_path: Path) -> None:
    for name, text in CLEAN.items():
        write(tmp_path, name, text, MONDAY)
    write(tmp_path, "MEMORY.md", "".join(f"- [{n}]({n}) — hook\n" for n in CLEAN))
    catalog = load_catalog(tmp_path, NOW)
    assert len(catalog.entries) == 4
    assert all(e.diagnostics == () and e.in_index for e in catalog.entries)
    assert catalog.diagnostics == ()


# --- fields ---------------------------------------------------------------------------------------


def test_fields_of_a_clean_memory(tmp_path: Path) -> None:
    path = write(tmp_path, "user_role.md", CLEAN["user_role.md"], MONDAY)
    mem = read_memory(path, tmp_path)
    assert (mem.name, mem.description, mem.type, mem.declared_type) == ("Role", "Backend engineer, new to React", "user", "user")
    assert mem.relpath == "user_role.md"
    assert mem.team is False
    assert mem.mtime == MONDAY
    assert mem.size == len(CLEAN["user_role.md"].encode())


def test_non_utf8_bytes_are_replaced_not_fatal(tmp_path: Path) -> None:
    write(tmp_path, "latin1.md", CASES["not-utf8"][0])
    (mem,) = scan_memories(tmp_path).memories
    assert mem.name == "caf\ufffd"
    assert mem.type == "user"


def test_50kb_single_line_is_listed(tmp_path: Path) -> None:
    text = "---\nname: Blob\ndescription: one huge line\ntype: reference\n---\n" + "y" * (50 * 1024)
    write(tmp_path, "blob.md", text)
    (mem,) = scan_memories(tmp_path).memories
    assert mem.type == "reference"
    assert mem.description == "one huge line"
    assert codes_of(mem) == {"over-recall-limit"}


def test_one_line_of_51_kb_without_frontmatter(tmp_path: Path) -> None:
    write(tmp_path, "raw.md", "z" * (51 * 1024))
    (mem,) = scan_memories(tmp_path).memories
    assert codes_of(mem) == {"no-frontmatter", "over-recall-limit"}


def test_crlf_file_parses_normally(tmp_path: Path) -> None:
    write(tmp_path, "user_crlf.md", CLEAN["user_role.md"].replace("\n", "\r\n"))
    (mem,) = scan_memories(tmp_path).memories
    assert mem.type == "user"
    assert mem.name == "Role"
    assert mem.description == "Backend engineer, new to React"
    assert mem.diagnostics == ()


def test_crlf_feedback_body_shape_is_recognised(tmp_path: Path) -> None:
    write(tmp_path, "fb.md", CLEAN["feedback_squash.md"].replace("\n", "\r\n"))
    (mem,) = scan_memories(tmp_path).memories
    assert mem.diagnostics == ()


def test_nested_type_is_declared_but_not_recognised(tmp_path: Path) -> None:
    write(tmp_path, "feedback_nested.md", CASES["type-nested"][0])
    (mem,) = scan_memories(tmp_path).memories
    assert mem.type is None
    assert mem.declared_type == "feedback"
    (diag,) = mem.diagnostics
    assert "metadata" in diag.message
    assert "top-level" in diag.message or "lift" in diag.message


@pytest.mark.parametrize("declared", ["Feedback", "FEEDBACK", "User"])
def test_miscased_type_is_declared_but_not_recognised(tmp_path: Path, declared: str) -> None:
    write(tmp_path, "m.md", fm("name: n", "description: d", f"type: {declared}", body=WHY_HOW))
    (mem,) = scan_memories(tmp_path).memories
    assert mem.type is None
    assert mem.declared_type == declared
    (diag,) = mem.diagnostics
    assert diag.code == "type-case"
    assert f"`{declared.lower()}`" in diag.message  # the one-key fix


def test_unknown_type_is_declared(tmp_path: Path) -> None:
    write(tmp_path, "n.md", CASES["type-unknown"][0])
    (mem,) = scan_memories(tmp_path).memories
    assert (mem.type, mem.declared_type) == (None, "note")


def test_top_level_type_wins_over_nested(tmp_path: Path) -> None:
    write(tmp_path, "n.md", fm("name: n", "description: d", "type: user", "metadata:", "  type: feedback"))
    (mem,) = scan_memories(tmp_path).memories
    assert (mem.type, mem.declared_type) == ("user", "user")


def test_no_frontmatter_has_no_fields(tmp_path: Path) -> None:
    write(tmp_path, "reference_no_fm.md", "# Dashboards\n\nLatency board.\n")
    (mem,) = scan_memories(tmp_path).memories
    assert (mem.name, mem.description, mem.type, mem.declared_type) == (None, None, None, None)


def test_repaired_yaml_fields_are_read(tmp_path: Path) -> None:
    write(tmp_path, "p.md", fm("name: Freeze", "description: Freeze starts on 2026-03-05: only fixes merge", "type: project", body=WHY_HOW))
    (mem,) = scan_memories(tmp_path).memories
    assert mem.description == "Freeze starts on 2026-03-05: only fixes merge"
    assert mem.type == "project"
    assert codes_of(mem) == {"frontmatter-repaired"}


def test_bom_file_has_no_fields(tmp_path: Path) -> None:
    write(tmp_path, "bom.md", CASES["frontmatter-after-bom"][0])
    (mem,) = scan_memories(tmp_path).memories
    assert (mem.name, mem.type) == (None, None)


def test_relative_dates_resolved_from_the_mtime(tmp_path: Path) -> None:
    body = "\nThe migration runs next Thursday; the backup finishes tomorrow.\n\n**Why:** x.\n\n**How to apply:** y.\n"
    path = write(tmp_path, "project_dates.md", fm("name: M", "description: d", "type: project", body=body), MONDAY)
    mem = read_memory(path, tmp_path)
    rel = [d for d in mem.diagnostics if d.code == "relative-date"]
    assert len(rel) == 2
    thursday, tomorrow = rel
    assert "Thursday" in thursday.message and "2026-03-05" in thursday.message
    assert "tomorrow" in tomorrow.message and "2026-03-03" in tomorrow.message
    assert thursday.line == tomorrow.line == 7  # 5 lines of frontmatter, a blank line, then this


def test_relative_dates_are_flagged_in_feedback_memories_too(tmp_path: Path) -> None:
    write(tmp_path, "f.md", fm("name: F", "description: d", "type: feedback", body="\nDeploy tomorrow.\n\n**Why:** x.\n\n**How to apply:** y.\n"), MONDAY)
    (mem,) = scan_memories(tmp_path).memories
    assert [(d.code, d.line) for d in mem.diagnostics] == [("relative-date", 7)]


def test_frontmatter_closing_on_line_30_is_within_the_header(tmp_path: Path) -> None:
    text = "---\nname: Edge\ndescription: closes on 30\ntype: user\n" + "".join(f"k{i}: v\n" for i in range(25)) + "---\nbody\n"
    assert text.split("\n").index("---", 1) + 1 == 30
    write(tmp_path, "edge.md", text)
    (mem,) = scan_memories(tmp_path).memories
    assert mem.diagnostics == ()


def test_frontmatter_closing_on_line_30_followed_by_blank_line_is_within_the_header(tmp_path: Path) -> None:
    text = "---\nname: Edge\ndescription: closes on 30\ntype: user\n" + "".join(f"k{i}: v\n" for i in range(25)) + "---\n\nbody\n"
    assert text.split("\n").index("---", 1) + 1 == 30
    write(tmp_path, "edge.md", text)
    (mem,) = scan_memories(tmp_path).memories
    assert "frontmatter-beyond-header" not in codes_of(mem)


def test_over_recall_limit_by_lines(tmp_path: Path) -> None:
    write(tmp_path, "long.md", fm("name: L", "description: d", "type: user", body="x\n" * 200))
    (mem,) = scan_memories(tmp_path).memories
    assert codes_of(mem) == {"over-recall-limit"}


def test_exactly_200_lines_is_not_over_the_recall_limit(tmp_path: Path) -> None:
    text = fm("name: L", "description: d", "type: user", body="x\n" * 195)
    assert text.count("\n") == 200 and len(text.encode()) <= 4096
    write(tmp_path, "fits.md", text)
    (mem,) = scan_memories(tmp_path).memories
    assert mem.diagnostics == ()


def test_exactly_4096_bytes_is_not_over_the_recall_limit(tmp_path: Path) -> None:
    head = fm("name: L", "description: d", "type: user", body="\n")
    text = head + "x" * (4096 - len(head) - 1) + "\n"
    assert len(text.encode()) == 4096
    write(tmp_path, "fits.md", text)
    (mem,) = scan_memories(tmp_path).memories
    assert mem.diagnostics == ()


# --- the scan -------------------------------------------------------------------------------------


def test_team_flag(tmp_path: Path) -> None:
    for rel in ("team/reference_tracker.md", "team/sub/deep.md", "teamwork/x.md", "team.md", "notes/team/y.md"):
        write(tmp_path, rel, CLEAN["reference_dash.md"])
    team = {m.relpath: m.team for m in scan_memories(tmp_path).memories}
    assert team == {
        "team/reference_tracker.md": True,
        "team/sub/deep.md": True,
        "teamwork/x.md": False,
        "team.md": False,
        "notes/team/y.md": False,
    }


def test_memory_md_is_excluded_at_any_depth_but_other_cases_are_memories(tmp_path: Path) -> None:
    for rel in ("MEMORY.md", "team/MEMORY.md", "a/b/MEMORY.md"):
        write(tmp_path, rel, "- [x](x.md)\n")
    write(tmp_path, "memory.md", CLEAN["user_role.md"])
    write(tmp_path, "a/b/real.md", CLEAN["user_role.md"])
    assert sorted(m.relpath for m in scan_memories(tmp_path).memories) == ["a/b/real.md", "memory.md"]


def test_stray_files_are_not_memories_and_are_reported(tmp_path: Path) -> None:
    write(tmp_path, "Notes.MD", CLEAN["user_role.md"])
    write(tmp_path, "todo.txt", "x\n")
    write(tmp_path, "sub/img.png", b"\x89PNG")
    write(tmp_path, ".consolidate-lock", "1234")
    write(tmp_path, "ok.md", CLEAN["user_role.md"])
    scan = scan_memories(tmp_path)
    assert [m.relpath for m in scan.memories] == ["ok.md"]
    by_file = {Path(d.path).name: d.code for d in scan.diagnostics}
    assert by_file == {"Notes.MD": "md-extension-case", "todo.txt": "not-a-memory", "img.png": "not-a-memory"}


def test_symlinked_directories_are_not_followed(tmp_path: Path) -> None:
    mem_dir = tmp_path / "memory"
    outside = tmp_path / "outside"
    write(outside, "secret.md", CLEAN["user_role.md"])
    write(mem_dir, "own.md", CLEAN["user_role.md"])
    (mem_dir / "linked").symlink_to(outside, target_is_directory=True)
    (mem_dir / "loop").symlink_to(mem_dir, target_is_directory=True)
    assert [m.relpath for m in scan_memories(mem_dir).memories] == ["own.md"]


def test_newest_mtime_first_and_posix_relpaths(tmp_path: Path) -> None:
    base = NOW.timestamp()
    write(tmp_path, "old.md", CLEAN["user_role.md"], base - 10 * 86400)
    write(tmp_path, "deep/dir/newest.md", CLEAN["user_role.md"], base - 60)
    write(tmp_path, "team/mid.md", CLEAN["user_role.md"], base - 86400)
    assert [m.relpath for m in scan_memories(tmp_path).memories] == ["deep/dir/newest.md", "team/mid.md", "old.md"]


def test_non_ascii_file_name(tmp_path: Path) -> None:
    write(tmp_path, "笔记_用户偏好.md", fm("name: 用户偏好", "description: 用户喜欢简洁的中文回复", "type: user"))
    (mem,) = scan_memories(tmp_path).memories
    assert mem.relpath == "笔记_用户偏好.md"
    assert (mem.name, mem.type) == ("用户偏好", "user")
    assert mem.diagnostics == ()


def test_one_bad_file_does_not_hide_the_others(tmp_path: Path) -> None:
    for i, (content, _) in enumerate(CASES.values()):
        if content is not None:
            write(tmp_path, f"f{i:02d}.md", content)
    (tmp_path / "dangling.md").symlink_to(tmp_path / "nowhere.md")
    scan = scan_memories(tmp_path)
    assert len(scan.memories) == len(CASES)


def test_missing_memory_dir_raises_an_oserror(tmp_path: Path) -> None:
    with pytest.raises(MemoryDirError):
        scan_memories(tmp_path / "absent")
    (tmp_path / "file").write_text("x")
    with pytest.raises(OSError):
        scan_memories(tmp_path / "file")


def test_a_quick_first_batch_reads_only_the_newest_files(tmp_path: Path) -> None:
    for i in range(10):
        path = tmp_path / f"m{i}.md"
        path.write_text(f"---\ndescription: m{i}\ntype: user\n---\nx\n")
        os.utime(path, (1_000_000 + i * 100, 1_000_000 + i * 100))  # m9 newest
    (tmp_path / "notes.txt").write_text("stray")
    first = scan_memories(tmp_path, newest=3)
    assert [m.relpath for m in first.memories] == ["m9.md", "m8.md", "m7.md"]
    assert first.total == 10 and not first.complete
    assert first.diagnostics == ()  # dir-level findings wait for the full scan
    full = scan_memories(tmp_path)
    assert len(full.memories) == 10 and full.complete
    assert [d.code for d in full.diagnostics] == ["not-a-memory"]
