"""The offline consolidator's "Reconcile memories against CLAUDE.md" (the claude flavor): a
feedback or project memory naming a command differently from an instruction line is a finding
naming both places; the same command agrees; CLAUDE.md is never edited."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from support.dream import NOW, write

from memtui.core.dream import DreamContext, plan_dream
from memtui.core.dream.reconcile import InstructionFile, reconcile_findings
from memtui.core.places.flavor import AGENT, CLAUDE
from memtui.core.places.locations import resolve_locations

CLAUDE_MD = "# Project\n\nDeploy with `make deploy` (staging first).\nRun tests with `pytest -x`.\n"


def test_a_different_command_for_the_same_task_is_a_finding() -> None:
    md = InstructionFile(Path("/p/CLAUDE.md"), CLAUDE_MD)
    found = reconcile_findings(
        [
            ("project_release.md", "project", "We ship with `make release` on Fridays.\n"),  # make: release vs deploy
            ("feedback_tests.md", "feedback", "Always run `pytest -x`.\n"),  # the same command: agrees
            ("user_role.md", "user", "Uses `make release` daily.\n"),  # a user memory: not reconciled
        ],
        [md],
    )
    assert [(f.code, f.path) for f in found] == [("reconcile-claude-md", "project_release.md")]
    assert "`make release` here, `make deploy` in CLAUDE.md line 3" in found[0].message
    assert "never edits CLAUDE.md" in found[0].message


@pytest.mark.parametrize("flavor", [CLAUDE, AGENT])
def test_the_offline_dream_reconciles_only_for_the_claude_flavor(flavor, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    project = tmp_path / "proj"
    (project / ".git").mkdir(parents=True)
    write(project / flavor.instruction_file, CLAUDE_MD)
    loc = resolve_locations(flavor, project)
    memory = "---\nname: Release\ndescription: how we ship\ntype: project\n---\n\nWe ship with `make release`.\n"
    write(loc.memory_dir / "project_release.md", memory, NOW.timestamp() - 3600)
    write(loc.memory_dir / "MEMORY.md", "- [Release](project_release.md) — how we ship\n")
    before = (project / flavor.instruction_file).read_bytes()
    dp = plan_dream(DreamContext.from_locations(loc), NOW, "offline")
    codes = [f.code for f in dp.findings]
    assert ("reconcile-claude-md" in codes) is (flavor is CLAUDE)
    assert (project / flavor.instruction_file).read_bytes() == before
    assert all(not c.relpath.endswith(flavor.instruction_file) for c in dp.plan.changes)
    assert os.path.exists(loc.memory_dir / "project_release.md")
