"""An import is judged by where it leads, as Claude Code 2.1.332 judges it.

Captured from the real CLI (``claude -p`` 2.1.332 against the oracle's mock, 2026-12-06, a
project ``proj`` beside a folder ``outside``; the same layout is built here). ``proj/CLAUDE.md``
imports ``@./notes.md`` (a link to ``outside/secret.md``), ``@linked/inner.md`` (``linked`` a
link to ``outside/dir``), ``@inside.md`` (a link to ``proj/real.md``), ``@../outside/back.md``
(a link back to ``proj/back.md``) and ``@../outside/plain.md``. Without approval the CLI sent
only ``proj/CLAUDE.md`` and ``proj/inside.md``; with external imports approved it sent all six,
each under the name it was imported by (never the link's target).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from support.cascade import cascade, entry, loaded, write

from memtui.core.places.flavor import CLAUDE

IMPORTS = "# Symlink imports\nSee @./notes.md and @linked/inner.md and @inside.md and @../outside/back.md and @../outside/plain.md\n"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path.resolve()
    proj, out = root / "proj", root / "outside"
    write(out, "secret.md", "# outside/secret.md SECRET CONTENT\n")
    write(out, "dir/inner.md", "# outside/dir/inner.md\n")
    write(out, "plain.md", "# outside/plain.md\n")
    write(proj, "CLAUDE.md", IMPORTS)
    write(proj, "real.md", "# real.md inside\n")
    write(proj, "back.md", "# proj/back.md reached from outside link\n")
    (proj / ".git").mkdir()
    (proj / "notes.md").symlink_to(out / "secret.md")
    (proj / "linked").symlink_to(out / "dir", target_is_directory=True)
    (proj / "inside.md").symlink_to(proj / "real.md")
    (out / "back.md").symlink_to(proj / "back.md")
    return proj


def test_without_approval_a_link_out_of_the_project_waits_like_any_external_import(project: Path) -> None:
    c = cascade(project, flavor=CLAUDE)
    assert loaded(c, project.parent) == ["proj/CLAUDE.md", "proj/inside.md"]
    pending = sorted(Path(p.path).relative_to(project.parent).as_posix() for p in c.pending_external_imports)
    assert pending == ["outside/back.md", "outside/plain.md", "proj/linked/inner.md", "proj/notes.md"]
    notes = entry(c, project / "notes.md")
    assert notes.status == "pending-approval"
    assert f"is a link to {project.parent / 'outside' / 'secret.md'}" in notes.reason


def test_approved_every_import_loads_under_the_name_it_was_imported_by(project: Path) -> None:
    c = cascade(project, flavor=CLAUDE, approved=True)
    assert loaded(c, project.parent) == [
        "proj/CLAUDE.md",
        "proj/notes.md",
        "proj/linked/inner.md",
        "proj/inside.md",
        "outside/back.md",
        "outside/plain.md",
    ]
    assert "SECRET CONTENT" in entry(c, project / "notes.md").content
