"""The claude flavor's view of Claude Code 2.1.328's own extraction, against its captured runs:
the gates for each turn of the CLI's own transcripts (flags, ``-p``, the prose gate, the skip
when the conversation wrote memory itself), the extraction prompt byte for byte, and the claude
extractor's request (the CLI's prompt with the manifest, the main model, its refusals)."""

from __future__ import annotations

import json
import re
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx2
import pytest
from support.cli_captures import build, captured_paths, prompt, runs
from support.fake_api import Api, client, reply, text, use

from memtui.core.extract import extract
from memtui.core.extract.autoextract import check_autoextract, extraction_prompt
from memtui.core.extract.claude import ClaudeExtractor
from memtui.core.extract.inbox import Inbox
from memtui.core.memory.headers import scan_headers
from memtui.core.recall.manifest import build_manifest
from memtui.core.places.flavor import CLAUDE
from memtui.core.places.locations import resolve_locations
from memtui.core.places.release import dir_text, load_release
from memtui.core.sessions.transcripts import Transcript, is_human_turn, read_transcript

RELEASE = load_release("claude-2.1.328")
EXTRACT_RUNS = ["extract_p", "x_p_noslate", "x_p_prose", "x_p_three", "x_p_direct", "x_tmux", "both"]
_MANIFEST_LINE = re.compile(r"^- \[(\w+)\] (\S+) \(([^)]+)\): (.*)$")


def own_transcript(run: str, scene_dir: Path) -> Path:
    """The CLI's own transcript of ``run`` in the rebuilt project dir. x_p_noslate's was not
    kept: its session is extract_p's (the same prompt, the same mock answer)."""
    source = "extract_p" if run == "x_p_noslate" else run
    after = {s["name"] for s in runs()[source]["after"]["sessions"]}
    before = {s["name"] for s in runs()[source]["before"]["sessions"]}
    (name,) = after - before
    return scene_dir / name


def turns(transcript: Transcript) -> list[tuple[int, int]]:
    """The entry range of each turn: from one typed user message to the next."""
    starts = [e.index for e in transcript.entries if is_human_turn(e) and not e.is_sidechain]
    return [(0 if i == 0 else s, starts[i + 1] if i + 1 < len(starts) else len(transcript.entries)) for i, s in enumerate(starts)]


@pytest.mark.parametrize("run", EXTRACT_RUNS)
def test_the_gates_of_each_turn_match_the_cli(run: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    record = runs()[run]
    scene = build(tmp_path, "extract_p" if run == "x_p_noslate" else run, "after")
    (tmp_path / "home" / ".claude.json").write_text(json.dumps({"cachedGrowthBookFeatures": record["before"]["flags"]}))
    monkeypatch.setenv("HOME", str(scene.home))
    loc = resolve_locations(CLAUDE, scene.project)
    transcript = read_transcript(own_transcript(run, scene.project_dir))
    passes = [k for k in record["kinds"] if k[0] == "extract" and k[1] == 0]
    skips = [d["text"] for d in record["debug"] if d["text"].startswith("[extractMemories] skipping")]
    ranges = turns(transcript)
    assert len(ranges) == len(record["prompts"])
    verdicts = [
        check_autoextract(transcript, start, end, loc.memory_dir, RELEASE, settings=loc.settings,
                          interactive=record["mode"] == "tmux", project_root=loc.project_root)
        for start, end in ranges
    ]
    assert sum(v.would_extract for v in verdicts) == len(passes)
    closed = [v.blocking for v in verdicts if v.blocking is not None]
    logged = [g.log for g in closed if g.log is not None]
    assert logged == skips  # the skips the CLI wrote to its debug log, in its words
    if run == "x_p_noslate":
        assert [g.id for g in closed] == ["print_mode"]
    prompts = [prompt(p) for p in record["files"].get("extract_prompts", [])]
    for verdict, sent in zip([v for v in verdicts if v.would_extract], prompts, strict=True):
        assert f"Analyze the most recent ~{verdict.messages} messages above" in sent


def write_manifest(memory_dir: Path, manifest: str) -> None:
    """Memory files that give ``manifest``'s lines: each line's type (top-level ``type:``, which
    the CLI reads as well as ``metadata.type``), name, description and ISO mtime."""
    for line in manifest.splitlines():
        m = _MANIFEST_LINE.match(line)
        assert m, line
        kind, rel, iso, desc = m.groups()
        path = memory_dir / rel
        path.write_text(f"---\nname: {rel[:-3]}\ndescription: {desc}\ntype: {kind}\n---\n\nx\n", encoding="utf-8")
        stamp = datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp()
        import os

        os.utime(path, (stamp, stamp))


def captured_manifest(sent: str) -> str:
    m = re.search(r"## Existing memory files\n\n(.*?)\n\nCheck this list", sent, re.DOTALL)
    assert m
    return m.group(1)


@pytest.mark.parametrize("name", sorted({p for r in runs().values() for p in r["files"].get("extract_prompts", [])}))
def test_the_extraction_prompt_is_the_clis(name: str, tmp_path: Path) -> None:
    sent = prompt(name)
    manifest = captured_manifest(sent)
    memory_dir = tmp_path / "memory"
    memory_dir.mkdir()
    write_manifest(memory_dir, manifest)
    (memory_dir / "MEMORY.md").write_text("# Memory index\n")
    mine = build_manifest(scan_headers(memory_dir)).text
    assert mine == manifest
    n = int(re.search(r"the most recent ~(\d+) messages", sent).group(1))  # type: ignore[union-attr]
    assert extraction_prompt(RELEASE, n, mine) == sent


def test_the_claude_extractor_sends_the_clis_extraction(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    run = "extract_p"
    record = runs()[run]
    scene = build(tmp_path, run, "before")
    monkeypatch.setenv("HOME", str(scene.home))
    sent = prompt(record["files"]["extract_prompts"][0])
    write_manifest(scene.memory_dir, captured_manifest(sent))
    after = build(tmp_path / "after", run, "after")
    transcript_path = own_transcript(run, after.project_dir)
    cap_mem, _ = captured_paths(record)
    live = dir_text(scene.memory_dir)
    calls = json.loads(prompt(record["files"]["extract_tools"]).replace(cap_mem, live))  # the CLI's calls, in the test's live dir
    steps = [calls[:1], calls[1:]]  # the mock: Read MEMORY.md; then Write + Edit + a Write outside

    def answer(n: int, body: dict[str, Any]) -> httpx2.Response:
        if n > len(steps):
            return httpx2.Response(200, json=reply(text("Saved."), stop="end_turn"))
        return httpx2.Response(200, json=reply(*(use(f"t{n}_{k}", c["name"], **c["input"]) for k, c in enumerate(steps[n - 1]))))

    api = Api(answer)
    extractor = ClaudeExtractor(state_dir=tmp_path / "state", client=client(api), model="claude-opus-5-5", release=RELEASE)
    result = extract(transcript_path, scene.memory_dir, tmp_path / "state", scene.now(60), extractor=extractor)

    first = api.bodies[0]
    assert first["model"] == record["files"]["extract_request"]["model"]
    assert first["messages"][-1]["content"][-1]["text"] == sent
    assert first["system"] == RELEASE.memory_section(live)  # the live memory dir, as the CLI names it
    assert [m["role"] for m in first["messages"]] == ["user", "assistant", "user"]
    results = [b for body in api.bodies[1:] for b in body["messages"][-1]["content"] if b["type"] == "tool_result"]
    for call, got in zip(calls, results, strict=True):
        if call["is_error"]:
            assert got["is_error"] and got["content"] == call["result"]  # the CLI's refusal, word for word
        else:
            assert not got["is_error"], got
    assert result.extractor == "claude" and [p.path for p in result.proposals] == ["project_deploy_fridays.md"]
    assert Inbox(tmp_path / "state", scene.memory_dir).pending()[0].description == "The team deploys on Fridays"


def test_the_hooks_log_says_what_claude_code_itself_does(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The Stop hook on the x_p_prose session ("hello there"): memtui's offline extraction runs,
    and its log line says Claude Code's own would not (the prose gate)."""
    from memtui.core.extract.hook import hook_log_path, run_stop_hook

    record = runs()["x_p_prose"]
    scene = build(tmp_path, "x_p_prose", "after")
    monkeypatch.setenv("HOME", str(scene.home))
    path = own_transcript("x_p_prose", scene.project_dir)
    payload = json.dumps({"session_id": path.stem, "transcript_path": str(path), "cwd": str(scene.project)}).encode()
    state = tmp_path / "state"
    run_stop_hook(payload, flavor=CLAUDE, state_dir=state, now=scene.now(60), extractor="offline")
    (logged,) = [json.loads(x) for x in hook_log_path(state).read_text().splitlines()]
    assert logged["cli"]["would_extract"] is False
    assert logged["cli"]["gates"]["prose"] is False and logged["cli"]["gates"]["flag"] is True
    assert record["before"]["flags"]["tengu_passport_quail"] is True
