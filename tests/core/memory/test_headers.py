"""docs/behaviour.md §6 "Scan": the recall header scan reads only the first 30 lines of each `*.md` below the
memory dir (team/ included, `MEMORY.md` excluded); frontmatter must close there; unreadable
files are dropped; newest mtime first."""

from __future__ import annotations

import os
from pathlib import Path

from memtui.core.memory.headers import read_head, scan_headers


def write(root: Path, rel: str, text: str, mtime: float | None = None) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    if mtime is not None:
        os.utime(path, (mtime, mtime))
    return path


def closing_on_line(n: int) -> str:
    """A memory whose closing `---` is on line ``n`` (description and type on lines 2–3)."""
    filler = "".join(f"k{i}: v\n" for i in range(n - 4))
    text = "---\ndescription: the recall key\ntype: project\n" + filler + "---\nbody\n"
    assert text.split("\n")[n - 1] == "---" and text.split("\n").index("---", 1) == n - 1
    return text


def test_frontmatter_closing_on_line_30_is_read(tmp_path: Path) -> None:
    write(tmp_path, "a.md", closing_on_line(30))
    (h,) = scan_headers(tmp_path)
    assert (h.description, h.type) == ("the recall key", "project")


def test_frontmatter_closing_on_line_31_is_invisible(tmp_path: Path) -> None:
    write(tmp_path, "a.md", closing_on_line(31))
    (h,) = scan_headers(tmp_path)
    assert h.relpath == "a.md"
    assert (h.description, h.type) == (None, None)


def test_read_head_returns_only_30_lines(tmp_path: Path) -> None:
    path = write(tmp_path, "a.md", "".join(f"line {i}\n" for i in range(1, 101)))
    head, _ = read_head(path)
    assert head.split("\n") == [f"line {i}" for i in range(1, 31)]


def test_read_head_with_long_lines_beyond_the_first_chunk(tmp_path: Path) -> None:
    path = write(tmp_path, "a.md", "".join(f"{i:04d}" + "x" * 996 + "\n" for i in range(40)))
    head, _ = read_head(path)
    lines = head.split("\n")
    assert len(lines) == 30
    assert lines[29].startswith("0029") and len(lines[29]) == 1000


def test_newest_first_team_included_index_excluded(tmp_path: Path) -> None:
    t = 1_772_000_000.0
    write(tmp_path, "old.md", closing_on_line(5), t - 3 * 86400)
    write(tmp_path, "team/shared.md", closing_on_line(5), t - 60)
    write(tmp_path, "mid.md", closing_on_line(5), t - 86400)
    write(tmp_path, "MEMORY.md", "- [old](old.md)\n", t)
    write(tmp_path, "team/MEMORY.md", "- [s](shared.md)\n", t)
    assert [h.relpath for h in scan_headers(tmp_path)] == ["team/shared.md", "mid.md", "old.md"]
    assert [h.mtime for h in scan_headers(tmp_path)] == [t - 60, t - 86400, t - 3 * 86400]


def test_unrecognised_type_is_none_and_missing_description_is_none(tmp_path: Path) -> None:
    write(tmp_path, "a.md", "---\nname: x\ntype: Feedback\n---\nbody\n")
    write(tmp_path, "b.md", "no frontmatter\n")
    headers = {h.relpath: (h.description, h.type) for h in scan_headers(tmp_path)}
    assert headers == {"a.md": (None, None), "b.md": (None, None)}


def test_unreadable_files_are_dropped(tmp_path: Path) -> None:
    write(tmp_path, "ok.md", closing_on_line(5))
    (tmp_path / "dangling.md").symlink_to(tmp_path / "gone.md")
    assert [h.relpath for h in scan_headers(tmp_path)] == ["ok.md"]


def test_bom_file_has_no_header_fields(tmp_path: Path) -> None:
    write(tmp_path, "a.md", "\ufeff" + closing_on_line(5))
    (h,) = scan_headers(tmp_path)
    assert (h.description, h.type) == (None, None)


def test_repaired_yaml_is_read_by_the_header_scan(tmp_path: Path) -> None:
    write(tmp_path, "a.md", "---\ndescription: freeze: only fixes\ntype: project\n---\n")
    (h,) = scan_headers(tmp_path)
    assert (h.description, h.type) == ("freeze: only fixes", "project")
