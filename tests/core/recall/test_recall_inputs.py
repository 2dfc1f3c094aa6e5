"""The inputs of one recall, built once for ``memtui recall`` and the Recall pane."""

from __future__ import annotations

from pathlib import Path

from memtui.core.recall import load_corpus
from memtui.core.recall.inputs import SessionContext, recall_inputs, split_names

BODY = "---\nname: Board\ndescription: Latency board\ntype: reference\n---\n\nPanel p95.\n"


def test_split_names_drops_blanks_and_repeats() -> None:
    assert split_names(" Bash, Edit,,Bash , ") == ["Bash", "Edit"]
    assert split_names(None) == [] and split_names("") == []


def test_without_a_session_recall_weighs_the_surfaced_files_itself(tmp_path: Path) -> None:
    corpus = load_corpus(tmp_path)
    inputs = recall_inputs(corpus, tools=["Bash", "Edit", "Bash"], surfaced=["a.md", "a.md"])
    assert inputs.recent_tools == ("Bash", "Edit")
    assert inputs.surfaced == ("a.md",) and inputs.surfaced_units is None


def test_with_a_session_the_given_files_add_their_size_to_the_sessions_count(tmp_path: Path) -> None:
    (tmp_path / "board.md").write_text(BODY, encoding="utf-8")
    corpus = load_corpus(tmp_path)
    session = SessionContext("s1", ("Read",), ("old.md",), 1_000)
    inputs = recall_inputs(corpus, tools=["Read"], session=session, surfaced=["board.md", "gone.md"])
    assert inputs.surfaced == ("board.md", "gone.md", "old.md")
    # board.md is injected whole (ASCII: one UTF-16 unit a character); gone.md does not exist: 0
    assert inputs.surfaced_units == 1_000 + len(BODY)
