"""The claude extractor's first request against the extraction requests Claude Code 2.1.328 sent:
the extraction prompt and the system prompt's ``# Memory`` section byte for byte, the section
naming the live memory dir (``~/.claude/projects/<slug>/memory/``) as the CLI's does, never
memtui's staging copy.

The captures were made under another HOME than a test's ``tmp_path`` (the project's own,
``tests/captures/claude-2.1.328/background/``: ``/tmp/oracle-13/bgcap/scen/<run>/home``; the
oracle's, ``../shared/oracle/dream-extract/captures/<run>/requests.jsonl``:
``/tmp/dreamcap/scen/<run>/home``), so the memory dir is **substituted both ways**: the CLI's
in the captured text by the test's, and the test's in memtui's text by the CLI's, each compared
byte for byte. The extraction prompt names no directory (checked); its manifest comes from
memory files written to give the captured lines (type, name, description, mtime). The range
is the CLI's own transcript of the run up to the end of the turn that triggered the pass."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx2
import pytest
from support.cli_captures import build, captured_paths, prompt, runs, slug
from support.fake_api import Api, client, reply, text
from test_autoextract_captured import captured_manifest, own_transcript, turns, write_manifest

from memtui.core.extract.base import ExtractionRequest
from memtui.core.extract.claude import ClaudeExtractor
from memtui.core.memory.headers import scan_headers
from memtui.core.places.release import dir_text, load_release
from memtui.core.sessions.transcripts import read_transcript

RELEASE = load_release("claude-2.1.328")
# Runs whose first extraction prompt was captured and whose CLI transcript was kept.
FIRST_PASS = ["extract_p", "x_p_three", "x_tmux", "both"]
ORACLE = Path(__file__).resolve().parents[4] / "shared" / "oracle" / "dream-extract" / "captures"
ORACLE_RUNS = ["extract_p", "both"]


def nothing_to_save() -> Api:
    """A Messages API whose model answers every request with the prompt's own "nothing" reply."""
    return Api(lambda _n, _body: httpx2.Response(200, json=reply(text("Nothing to save."), stop="end_turn")))


def first_request(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, run: str, sent: str) -> tuple[dict[str, Any], Path, ClaudeExtractor]:
    """Run the claude extractor on the first turn of ``run``'s own CLI transcript, over a memory
    dir whose manifest is the one of ``sent`` (a captured extraction prompt); returns its first
    request body, the live memory dir and the extractor."""
    scene = build(tmp_path, run, "before")
    monkeypatch.setenv("HOME", str(scene.home))
    write_manifest(scene.memory_dir, captured_manifest(sent))
    after = build(tmp_path / "after", run, "after")
    transcript = read_transcript(own_transcript(run, after.project_dir))
    start, end = turns(transcript)[0]
    request = ExtractionRequest(transcript, start, end, scene.memory_dir, transcript.session_id, scene.now(60), tuple(scan_headers(scene.memory_dir)))
    api = nothing_to_save()
    extractor = ClaudeExtractor(state_dir=tmp_path / "state", client=client(api), release=RELEASE)
    drafts, _notes = extractor.run(request)
    assert drafts == [] and len(api.bodies) == 1
    return api.bodies[0], scene.memory_dir, extractor


def swapped_both_ways(mine: str, captured: str, cap_mem: str, live: str) -> None:
    """``mine`` (naming ``live``) is ``captured`` (naming ``cap_mem``), read either way."""
    assert cap_mem in captured and live in mine
    assert mine.replace(live, cap_mem) == captured
    assert mine == captured.replace(cap_mem, live)


@pytest.mark.parametrize("run", FIRST_PASS)
def test_the_first_extraction_request_is_the_clis_byte_for_byte(run: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    record = runs()[run]
    sent = prompt(record["files"]["extract_prompts"][0])
    body, live, extractor = first_request(tmp_path, monkeypatch, run, sent)
    cap_mem, cap_dir = captured_paths(record)
    assert cap_dir not in sent and record["paths"]["home"] not in sent  # the prompt names no directory
    assert body["messages"][-1]["content"][-1]["text"] == sent
    # extract_p's capture kept the section; every run's is the same template over its own dir
    section = prompt(runs()["extract_p"]["files"]["memory_section"]).rstrip("\n")
    section = section.replace(captured_paths(runs()["extract_p"])[0], cap_mem)
    swapped_both_ways(body["system"], section, cap_mem, dir_text(live))
    assert body["model"] == runs()["extract_p"]["files"]["extract_request"]["model"]
    record_ = extractor.last_request
    assert record_ is not None and record_.prompt == sent and record_.system == body["system"] and record_.memory_dir == dir_text(live)
    assert record_.staging_dir is not None and record_.staging_dir.rstrip("/") not in json.dumps(body)


def oracle_requests(run: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (ORACLE / run / "requests.jsonl").read_text(encoding="utf-8").splitlines() if line.strip()]


def memory_section_of(system: Any) -> str:
    """The ``# Memory`` section of a captured system prompt (its blocks joined by newlines), to
    the blank line before the next heading, as the project's captures keep it."""
    joined = "\n".join(b.get("text", "") for b in system) if isinstance(system, list) else str(system)
    start = joined.index("# Memory\n")
    end = joined.find("\n# ", start + 1)
    return joined[start : end if end != -1 else None].rstrip("\n")


@pytest.mark.skipif(not ORACLE.is_dir(), reason="../shared/oracle/dream-extract is not present")
@pytest.mark.parametrize("run", ORACLE_RUNS)
def test_the_first_extraction_request_is_the_oracles_byte_for_byte(run: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Against the oracle's own capture of the run (another run of the same scenario): the
    extraction prompt of its first pass and the ``# Memory`` section of the system prompt it
    sent (``"<same as line 1 …>"``: the first request's)."""
    reqs = oracle_requests(run)
    first = next(r for r in reqs if r["kind"] == "extract" and r["step"] == 0)
    system = first["body"]["system"]
    if isinstance(system, str) and system.startswith("<same as line 1"):
        system = reqs[0]["body"]["system"]
    home = json.loads((ORACLE / run / "meta.json").read_text(encoding="utf-8"))["env"]["HOME"]
    cwd = str(Path(home).parent / "proj")
    assert f"Primary working directory: {cwd}\n" in json.dumps(reqs[0]["body"], ensure_ascii=False).replace("\\n", "\n")
    cap_mem = f"{home}/.claude/projects/{slug(cwd)}/memory/"
    sent = first["body"]["messages"][-1]["content"][-1]["text"]
    assert home not in sent
    body, live, _ = first_request(tmp_path, monkeypatch, run, sent)
    assert body["messages"][-1]["content"][-1]["text"] == sent
    assert body["model"] == first["body"]["model"]
    swapped_both_ways(body["system"], memory_section_of(system), cap_mem, dir_text(live))
