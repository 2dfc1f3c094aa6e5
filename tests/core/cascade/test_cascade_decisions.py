"""Which imports a decision on external imports changes (what the confirmation names)."""

from __future__ import annotations

import os
from pathlib import Path

from support.cascade import cascade, write

from memtui.core.cascade import AffectedImport, decision_effect, project_key, record_decision


def test_pending_imports_are_what_either_decision_settles(tmp_path: Path) -> None:
    w = tmp_path / "w"
    write(w, "AGENT.md", "# Shared\n\n@./rules.md\n")
    write(w, "rules.md", "shared rules")
    (w / "sub").mkdir()
    c = cascade(w / "sub")
    expected = [AffectedImport(str(w / "rules.md"), str(w / "AGENT.md"), 3)]
    assert decision_effect(c, "approved") == expected
    assert decision_effect(c, "declined") == expected


def test_after_a_decision_the_other_one_names_the_imports_it_flips(tmp_path: Path) -> None:
    project = tmp_path / "p"
    write(project, "AGENT.md", "@../outside.md\n@./inside.md\n")
    write(project, "inside.md", "in")
    write(tmp_path, "outside.md", "out")
    state = Path(os.environ["MEMTUI_STATE_DIR"])
    record_decision(state, project_key(project), "declined")
    declined = cascade(project)
    # approving loads the declined outside file; the inside import never waits for a decision
    assert decision_effect(declined, "approved") == [AffectedImport(str(tmp_path / "outside.md"), str(project / "AGENT.md"), 1)]
    assert decision_effect(declined, "declined") == []
    record_decision(state, project_key(project), "approved")
    approved = cascade(project)
    assert decision_effect(approved, "declined") == [AffectedImport(str(tmp_path / "outside.md"), str(project / "AGENT.md"), 1)]
    assert decision_effect(approved, "approved") == []


def test_a_project_without_external_imports_has_nothing_to_decide(tmp_path: Path) -> None:
    write(tmp_path, "AGENT.md", "@./notes.md\n")
    write(tmp_path, "notes.md", "notes")
    c = cascade(tmp_path)
    assert decision_effect(c, "approved") == [] and decision_effect(c, "declined") == []
