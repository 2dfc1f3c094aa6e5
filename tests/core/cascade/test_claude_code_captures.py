"""The claude flavor against what Claude Code 2.1.328 itself sent (``tests/captures/``).

Each test rebuilds a captured workspace and compares memtui's text with the CLI's, byte for
byte: the instruction block of the first message, the ``# Memory`` section of the system
prompt (recall off and on), each lazily loaded file's message after a read (a rule as a
``<system-reminder>``, a nested AGENTS.md as the plugin's system-role message), and the memory
dir a project's settings choose in a ``-p`` run.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from support.captures import rebuild

from memtui.core.cascade import compute_cascade
from memtui.core.places.flavor import CLAUDE
from memtui.core.places.locations import resolve_locations


def _cascade(ws, reads=()):  # type: ignore[no-untyped-def]
    locations = resolve_locations(CLAUDE, ws.cwd)
    return compute_cascade(locations, ws.cwd, reads=list(reads))


def test_instruction_block_and_memory_section_with_recall_off(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ws = rebuild("layers", tmp_path, monkeypatch)
    run = ws.run("base")
    result = _cascade(ws)
    # user file, the user's conditional rule left out, project file + import, the BOM rule
    # (conditional-less, its BOM dropped), local file, MEMORY.md cut with the cut named
    assert result.rendered == run["instruction_block"]
    assert "were cut off, starting at line 201" in result.rendered
    assert result.memory_prompt == run["memory_prompt"]


def test_with_recall_on_the_index_leaves_the_context_and_the_memory_section_changes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ws = rebuild("layers", tmp_path, monkeypatch)
    run = ws.run("recall")
    ws.set_flags(run["flags"])
    result = _cascade(ws, run["reads"])
    assert result.recall is not None and result.recall.on
    assert result.rendered == run["instruction_block"]
    assert "MEMORY.md" not in result.rendered
    assert result.memory_prompt == run["memory_prompt"]
    assert result.memory_prompt != ws.run("base")["memory_prompt"]


def test_a_conditional_rule_loads_after_a_read_as_the_clis_message(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ws = rebuild("layers", tmp_path, monkeypatch)
    run = ws.run("recall")
    ws.set_flags(run["flags"])
    result = _cascade(ws, run["reads"])
    captured = run["lazy"]
    assert [step.target for step in result.reads] == [c["target"] for c in captured]
    for step, cap in zip(result.reads, captured, strict=True):
        assert step.messages == [m["text"] for m in cap["messages"]]


def test_agents_md_at_startup_and_after_a_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ws = rebuild("agents", tmp_path, monkeypatch)
    run = ws.run("read")
    result = _cascade(ws, run["reads"])
    assert result.rendered == run["instruction_block"]
    assert result.agents_md_mode == "claude-md-or-agents-md"
    (step,) = result.reads
    (cap,) = run["lazy"]
    assert [m["role"] for m in cap["messages"]] == ["system"]
    assert step.messages == [m["text"] for m in cap["messages"]]


def test_project_settings_move_the_memory_dir_in_a_p_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ws = rebuild("trust", tmp_path, monkeypatch)
    run = ws.run("base")
    locations = resolve_locations(CLAUDE, ws.cwd)
    result = compute_cascade(locations, ws.cwd)
    assert result.rendered == run["instruction_block"]
    assert result.memory_prompt == run["memory_prompt"]
    assert locations.memory_dir == ws.root / "project-mem"
    assert locations.memory_dir_source == "project"
    # an interactive session in this (untrusted) workspace would use the user's setting
    assert locations.memory_dir_untrusted == ws.home / "user-mem"
