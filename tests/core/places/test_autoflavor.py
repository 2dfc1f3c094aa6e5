"""``--flavor auto``: claude when the project (or HOME) has Claude Code's files and the agent
flavor's are absent, else agent; the reason is part of the choice. Expected slugs are built by
hand (``ascii_slug``: every non-alphanumeric character of a short ASCII path becomes ``-``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from memtui.core.places.autoflavor import choose_flavor, other_flavor_hint
from memtui.core.places.flavor import AGENT, CLAUDE, UnknownFlavorError
from memtui.core.places.locations import resolve_locations


def ascii_slug(path: Path) -> str:
    return "".join(c if c.isalnum() else "-" for c in str(path))


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    root.mkdir()
    return root.resolve()


def test_nothing_there_is_agent(project: Path) -> None:
    choice = choose_flavor(None, project)
    assert (choice.flavor, choice.source) == (AGENT, "auto")
    assert "no CLAUDE.md" in choice.reason


def test_claude_md_in_the_project_is_claude(project: Path) -> None:
    (project / "CLAUDE.md").write_text("# rules\n")
    choice = choose_flavor("auto", project)
    assert choice.flavor is CLAUDE
    assert choice.reason == "auto: Claude Code's CLAUDE.md found"


def test_claude_dir_at_the_git_root_counts_for_a_subdir(project: Path) -> None:
    (project / ".git").mkdir()
    (project / ".claude").mkdir()
    sub = project / "src" / "pkg"
    sub.mkdir(parents=True)
    choice = choose_flavor(None, sub)
    assert choice.flavor is CLAUDE
    assert choice.reason == "auto: Claude Code's ../../.claude/ found"


def test_transcripts_below_home_are_claude(project: Path, isolated_env: Path) -> None:
    (isolated_env / ".claude" / "projects" / ascii_slug(project)).mkdir(parents=True)
    choice = choose_flavor(None, project)
    assert choice.flavor is CLAUDE
    assert f"~/.claude/projects/{ascii_slug(project)}/" in choice.reason


def test_an_install_leaving_only_the_claude_dir_in_home_is_not_enough(project: Path, isolated_env: Path) -> None:
    (isolated_env / ".claude").mkdir()
    (isolated_env / ".claude" / "settings.json").write_text("{}")
    assert choose_flavor(None, project).flavor is AGENT


def test_both_flavors_files_are_agent(project: Path) -> None:
    (project / "CLAUDE.md").write_text("x")
    (project / "AGENT.md").write_text("x")
    choice = choose_flavor(None, project)
    assert choice.flavor is AGENT
    assert "both" in choice.reason


def test_a_name_wins_over_detection_flag_before_env(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (project / "CLAUDE.md").write_text("x")
    assert choose_flavor("agent", project).flavor is AGENT
    assert choose_flavor("agent", project).reason == "--flavor agent"
    monkeypatch.setenv("MEMTUI_FLAVOR", "agent")
    assert (choose_flavor(None, project).flavor, choose_flavor(None, project).reason) == (AGENT, "MEMTUI_FLAVOR=agent")
    assert choose_flavor("claude", project).flavor is CLAUDE
    monkeypatch.setenv("MEMTUI_FLAVOR", "auto")
    assert choose_flavor(None, project).flavor is CLAUDE
    with pytest.raises(UnknownFlavorError):
        choose_flavor("cursor", project)


def test_an_empty_memory_dir_names_the_other_flavors_memories(project: Path, isolated_env: Path) -> None:
    slug = ascii_slug(project)
    agent_dir = isolated_env / ".agent" / "projects" / slug / "memory"
    agent_dir.mkdir(parents=True)
    claude_dir = isolated_env / ".claude" / "projects" / slug / "memory"
    claude_dir.mkdir(parents=True)
    (claude_dir / "user_role.md").write_text("---\nname: role\n---\nx\n")
    hint = other_flavor_hint(resolve_locations(AGENT, project))
    assert hint is not None and (hint.name, hint.memory_dir) == ("claude", claude_dir)
    # a memory of its own: no hint
    (agent_dir / "a.md").write_text("x")
    assert other_flavor_hint(resolve_locations(AGENT, project)) is None


def test_no_hint_without_the_other_flavors_files_or_with_memory_dir_given(project: Path, tmp_path: Path) -> None:
    assert other_flavor_hint(resolve_locations(AGENT, project)) is None
    (project / "CLAUDE.md").write_text("x")
    hint = other_flavor_hint(resolve_locations(AGENT, project))
    assert hint is not None and (hint.files, hint.memory_dir) == (("CLAUDE.md",), None)
    assert other_flavor_hint(resolve_locations(AGENT, project, memory_dir=tmp_path / "m")) is None
