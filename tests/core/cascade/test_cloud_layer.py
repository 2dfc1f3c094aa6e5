"""The personal cloud configuration layer of Claude Code 2.1.332 (SPEC §13.1), as memtui shows it.

A cloud session with ``CLAUDE_CODE_FETCH_PERSONAL_CLOUD_CONFIGURATION`` set fetches a user
CLAUDE.md and rules and splices them right after ``~/.claude/CLAUDE.md`` and its rules; a cloud
file shadows the ``~/.claude`` file of the same name; ``claudeMdExcludes`` apply to either name;
a local run with only the variable set loads nothing new. memtui cannot see the cloud copy, so
it shows placeholders at that position when the variable is set, and what they would replace.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from memtui.core.cascade import compute_cascade
from memtui.core.places.flavor import CLAUDE, CLAUDE_2_1_328
from memtui.core.places.locations import resolve_locations

ENV = "CLAUDE_CODE_FETCH_PERSONAL_CLOUD_CONFIGURATION"


def _setup(tmp_path: Path) -> Path:
    home = Path(os.environ["HOME"])
    (home / ".claude" / "rules").mkdir(parents=True)
    (home / ".claude" / "CLAUDE.md").write_text("# mine\nBe terse.\n")
    (home / ".claude" / "rules" / "style.md").write_text("Prefer small diffs.\n")
    project = tmp_path / "proj"
    (project / ".git").mkdir(parents=True)
    (project / "CLAUDE.md").write_text("# project\n")
    return project


def _cascade(project: Path, flavor=CLAUDE, **env: str):  # type: ignore[no-untyped-def]
    environ = {**os.environ, **env}
    return compute_cascade(resolve_locations(flavor, project, environ=environ), project, environ=environ)


def test_placeholders_sit_after_the_user_layer_and_load_nothing(tmp_path: Path) -> None:
    project = _setup(tmp_path)
    home = Path(os.environ["HOME"])
    plain, cloud = _cascade(project), _cascade(project, **{ENV: ""})  # any value, even empty, asks for it
    assert [f.status for f in plain.files].count("cloud-only") == 0
    paths = [(f.path, f.layer, f.status) for f in cloud.files]
    assert paths[:4] == [
        (str(home / ".claude" / "CLAUDE.md"), "user", "loaded"),
        (str(home / ".claude" / "rules" / "style.md"), "user", "loaded"),
        ("<personal-cloud-configuration>/.claude/CLAUDE.md", "user", "cloud-only"),
        ("<personal-cloud-configuration>/.claude/rules/*.md", "user", "cloud-only"),
    ]
    assert paths[4] == (str(project / "CLAUDE.md"), "project", "loaded")
    # A local run with the variable set loads nothing new: the model's text is the same.
    assert cloud.rendered == plain.rendered and cloud.total_chars == plain.total_chars
    placeholder = cloud.files[2]
    assert not placeholder.loaded and placeholder.chars == 0
    assert f"a cloud CLAUDE.md replaces {home / '.claude' / 'CLAUDE.md'}, which is then not loaded" in placeholder.reason
    assert "its @ imports are not followed" in placeholder.reason
    assert "style.md here" in cloud.files[3].reason
    assert any(note.startswith(f"{ENV} is set (any value counts, even 0 or empty): a cloud session fetches") for note in cloud.notes)


def test_excludes_that_match_the_local_name_drop_the_cloud_file_too(tmp_path: Path) -> None:
    project = _setup(tmp_path)
    (project / ".claude").mkdir()
    (project / ".claude" / "settings.json").write_text(json.dumps({"claudeMdExcludes": ["**/.claude/CLAUDE.md"]}))
    cloud = _cascade(project, **{ENV: "1"})
    placeholder = next(f for f in cloud.files if f.path == "<personal-cloud-configuration>/.claude/CLAUDE.md")
    assert [d.code for d in placeholder.diagnostics] == ["cloud-excluded"]
    assert "'**/.claude/CLAUDE.md'" in placeholder.diagnostics[0].message


def test_2_1_328_has_no_cloud_layer(tmp_path: Path) -> None:
    project = _setup(tmp_path)
    old = _cascade(project, CLAUDE_2_1_328, **{ENV: "1"})
    assert all(f.status != "cloud-only" for f in old.files)
    assert not any(ENV in note for note in old.notes)


def test_an_excludes_pattern_on_the_cloud_name_is_not_called_relative(tmp_path: Path) -> None:
    """SPEC §13.1: a pattern matching ``<personal-cloud-configuration>/.claude/<name>`` drops
    the cloud file, so such a pattern is no "relative pattern that never matches"."""
    project = _setup(tmp_path)
    (project / ".claude").mkdir()
    (project / ".claude" / "settings.json").write_text(json.dumps({"claudeMdExcludes": ["<personal-cloud-configuration>/**", "docs/*.md"]}))
    cloud = _cascade(project, **{ENV: "1"})
    relative = [d.message for d in cloud.diagnostics if d.code == "excludes-pattern-relative"]
    assert len(relative) == 1 and "'docs/*.md'" in relative[0]
    placeholder = next(f for f in cloud.files if f.path == "<personal-cloud-configuration>/.claude/CLAUDE.md")
    assert [d.code for d in placeholder.diagnostics] == ["cloud-excluded"]
