"""Reading what a transcript records about the memory store, on transcripts of Claude Code 2.1.332
(``tests/captures/claude-2.1.332/stores``, made by ``scripts/oracle_stores.py``).

The expected values follow from how each scenario was run: the prompt's ``WRITE:`` directives
made the mock ask for those Writes, the scenario put MEMORY.md where the CLI then loaded it
from, and the ``AGENT:`` directives started a general-purpose and an Explore sub-agent."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from support.stores import CAPTURES

from memtui.core.stores.evidence import MAX_LINE_BYTES, read_evidence


def _layout(name: str) -> dict:
    return json.loads((CAPTURES / name / "scenario.json").read_text())


def _session(name: str, label: str) -> tuple[Path, str]:
    layout = _layout(name)
    sid = next(s["session_id"] for s in layout["sessions"] if s["label"] == label)
    found = next((CAPTURES / name / "home").rglob(f"{sid}.jsonl"))
    return found, sid


def test_a_subdirectory_session_is_told_the_repository_store_and_writes_its_own() -> None:
    layout = _layout("subdir")
    path, sid = _session("subdir", "svc-write")
    ev = read_evidence(path, sid)
    repo_store = layout["home"] + "/.claude/projects/-tmp-oracle-stores-subdir-proj/memory"
    assert ev.told == (repo_store,)
    assert [i.path for i in ev.loaded] == [repo_store + "/MEMORY.md"]
    assert ev.loaded[0].content == "- [deploy](deploy.md) — deploy"
    assert [(w.path, w.tool, w.ok) for w in ev.writes] == [(layout["stray"] + "/svc_notes.md", "Write", True)]
    assert ev.cwd == layout["project"] + "/svc"
    assert (ev.entrypoint, ev.version) == ("sdk-cli", "2.1.332")
    assert ev.first_time is not None and ev.first_time.startswith("2026-12-07T")
    assert ev.commits and all(len(c) == 7 for c in ev.commits)


def test_an_untrusted_session_is_told_the_default_store_and_loads_no_index_there() -> None:
    layout = _layout("trust")
    trusted = read_evidence(*_session("trust", "trusted"))
    untrusted = read_evidence(*_session("trust", "untrusted"))
    assert trusted.told == (layout["setting_dir"],)
    assert [i.store for i in trusted.loaded] == [layout["setting_dir"]]
    assert untrusted.told == (layout["default_store"],)
    assert untrusted.loaded == ()  # the default store had no MEMORY.md yet


def test_auto_memory_off_leaves_neither_the_memory_section_nor_the_index() -> None:
    on = read_evidence(*_session("automem_off", "on"))
    off = read_evidence(*_session("automem_off", "off"))
    assert on.told and on.loaded
    assert off.told == () and off.loaded == ()


def test_sub_agents_general_purpose_loads_the_index_explore_none() -> None:
    _, sid = _session("healthy", "write+agents")
    subs = sorted((CAPTURES / "healthy" / "home").rglob(f"{sid}/subagents/agent-*.jsonl"))
    seen = {}
    for p in subs:
        ev = read_evidence(p, sid, p.stem[len("agent-") :])
        seen[ev.agent_type] = ev
    assert set(seen) == {"general-purpose", "Explore"}
    assert [i.content for i in seen["general-purpose"].loaded] == ["- [deploy](deploy.md) — deploy\n- [style](style.md) — style"]
    assert seen["general-purpose"].told == ()  # a sub-agent gets the index but no memory section
    assert seen["Explore"].loaded == () and seen["Explore"].told == ()


def _line(obj: dict) -> bytes:
    return json.dumps(obj).encode() + b"\n"


def test_a_refused_write_is_not_ok_and_a_write_without_result_is_unknown(tmp_path: Path) -> None:
    t = tmp_path / "s.jsonl"
    use = {"type": "assistant", "message": {"role": "assistant", "content": [
        {"type": "tool_use", "id": "t1", "name": "Write", "input": {"file_path": "/m/a.md", "content": "x"}},
        {"type": "tool_use", "id": "t2", "name": "Edit", "input": {"file_path": "/m/b.md"}},
        {"type": "tool_use", "id": "t3", "name": "Write", "input": {"file_path": "/m/c.txt"}},
    ]}}
    result = {"type": "user", "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "is_error": True, "content": "denied"}]}}
    t.write_bytes(_line(use) + _line(result))
    ev = read_evidence(t, "s")
    assert [(w.path, w.ok) for w in ev.writes] == [("/m/a.md", False), ("/m/b.md", None)]


def test_bad_lines_a_long_line_and_a_cut_last_line_are_skipped(tmp_path: Path) -> None:
    t = tmp_path / "s.jsonl"
    told = b'{"parentUuid":null,"attachment":{"type":"prompt_snapshot","systemPrompt":["# Memory\\n\\nYou have a persistent file-based memory at `/m/store/`. ok"]},"type":"attachment","cwd":"/p"}\n'
    long_line = b'{"x":"' + b"a" * (MAX_LINE_BYTES + 10) + b'persistent file-based memory at `/evil/`"}\n'
    t.write_bytes(b"not json\n" + long_line + told + b'{"cut":"persistent file-based memory at `/half/`')
    ev = read_evidence(t, "s")
    assert ev.told == ("/m/store",)
    assert ev.cwd == "/p"


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_fifo_transcript_gives_an_error_not_a_hang(tmp_path: Path) -> None:
    fifo = tmp_path / "s.jsonl"
    os.mkfifo(fifo)
    ev = read_evidence(fifo, "s")
    assert ev.error and ev.told == ()


def test_the_told_words_count_only_in_the_system_prompt(tmp_path: Path) -> None:
    # A page the agent fetched, or what a person typed, can hold the same sentence: no evidence.
    t = tmp_path / "s.jsonl"
    fetched = {"type": "user", "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t9", "content": "<html>You have a persistent file-based memory at `/home/u/.claude/agents/`.</html>"}]}}
    typed = {"type": "user", "message": {"role": "user", "content": "You have a persistent file-based memory at `/etc/`."}}
    shape = {"type": "api-request-shape", "shape": {"system": [{"type": "text", "text": "intro\n\n# Memory\n\nYou have a persistent file-based memory at `/m/real/`."}]}}
    relative = {"type": "api-request-shape", "shape": {"system": [{"type": "text", "text": "# Memory\n\nYou have a persistent file-based memory at `rel/dir/`."}]}}
    mid_sentence = {"type": "api-request-shape", "shape": {"system": [{"type": "text", "text": "Style: You have a persistent file-based memory at `/m/style/`."}]}}
    root = {"type": "api-request-shape", "shape": {"system": [{"type": "text", "text": "# Memory\n\nYou have a persistent file-based memory at `/`."}]}}
    t.write_bytes(b"".join(json.dumps(o, separators=(",", ":")).encode() + b"\n" for o in (fetched, typed, shape, relative, mid_sentence, root)))
    assert read_evidence(t, "s").told == ("/m/real",)
