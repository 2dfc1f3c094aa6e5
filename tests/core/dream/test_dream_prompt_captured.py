"""The claude flavor's dream request against the ones Claude Code 2.1.328 sent: the dream prompt
byte for byte once the memory dir, the transcripts dir and the session list are substituted;
the consolidator's own request (a scripted Messages API replaying the CLI's captured dream tool
calls) carrying that prompt over memtui's staging copy, the main loop's model, and the CLI's
permission answers — the shell and tool refusals word for word, ``rm`` of a memory file as a
planned deletion that touches nothing before apply."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import httpx2
import pytest
from support.cli_captures import build, captured_paths, prompt, runs
from support.fake_api import Api, client, reply, text, use

from memtui.core.dream import plan_dream
from memtui.core.dream.autodream import counted_sessions
from memtui.core.dream.gates import DreamContext
from memtui.core.dream.prompt import build_dream_request, dream_prompt
from memtui.core.places.flavor import CLAUDE
from memtui.core.places.locations import resolve_locations
from memtui.core.places.release import dir_text, load_release

RELEASE = load_release("claude-2.1.328")
FIRED = [name for name, r in runs().items() if "dream_prompt" in r["files"]]
_SESSIONS = re.compile(r"Sessions since last consolidation \((\d+)\):\n((?:- .+\n?)*)$")


def scene_ctx(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, run: str) -> DreamContext:
    scene = build(tmp_path, run)
    monkeypatch.setenv("HOME", str(scene.home))
    return DreamContext.from_locations(resolve_locations(CLAUDE, scene.project))


def expected_prompt(run: str, memory_dir: str, transcripts_dir: str, session_ids: list[str]) -> str:
    """The CLI's prompt of ``run`` with its memory dir, transcripts dir and session list
    replaced by these (the list only after checking it names the same sessions)."""
    captured = prompt(runs()[run]["files"]["dream_prompt"])
    cap_mem, cap_dir = captured_paths(runs()[run])
    m = _SESSIONS.search(captured)
    assert m, "the captured prompt ends with its session list"
    listed = [line[2:] for line in m.group(2).splitlines()]
    assert int(m.group(1)) == len(listed) and sorted(listed) == sorted(session_ids)
    body = captured[: m.start(2)].replace(cap_mem, memory_dir).replace(cap_dir, transcripts_dir)
    return body + "\n".join(f"- {s}" for s in session_ids)


@pytest.mark.parametrize("run", FIRED)
def test_the_dream_prompt_is_the_clis(run: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ctx = scene_ctx(tmp_path, monkeypatch, run)
    ids = counted_sessions(ctx)
    mine = dream_prompt(RELEASE, dir_text(ctx.memory_dir), str(ctx.sessions_dir), ids)
    assert mine == expected_prompt(run, dir_text(ctx.memory_dir), str(ctx.sessions_dir), ids)


def test_the_request_as_the_cli_would_send_it_now(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ctx = scene_ctx(tmp_path, monkeypatch, "dream1")
    request = build_dream_request(ctx, RELEASE, counted_sessions(ctx), max_tokens=8192, instructions="x")
    assert (request.model, request.model_source) == (runs()["dream1"]["files"]["dream_request"]["model"], "Claude Code 2.1.328 default")
    assert request.prompt == expected_prompt("dream1", dir_text(ctx.memory_dir), str(ctx.sessions_dir), list(request.session_ids))
    assert request.system.startswith(f"# Memory\n\nYou have a persistent file-based memory at `{dir_text(ctx.memory_dir)}`.")


def replay(run: str) -> list[list[dict[str, Any]]]:
    """The CLI's dream tool calls of ``run``, grouped by the step that made them."""
    calls = json.loads(prompt(runs()[run]["files"]["dream_tools"]))
    steps: list[list[dict[str, Any]]] = []
    # the mock answered in steps: ls; 3 reads; grep; write+edit+rm; 3 refused calls
    sizes = [1, 3, 1, 3, 3]
    i = 0
    for n in sizes:
        steps.append(calls[i : i + n])
        i += n
    assert i == len(calls)
    return steps


def test_the_consolidator_sends_the_clis_dream_and_applies_its_permission_rules(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    run = "dream1"
    ctx = scene_ctx(tmp_path, monkeypatch, run)
    (ctx.memory_dir / "project_deploy.md").write_text("---\nname: project-deploy\ndescription: how we deploy\ntype: project\n---\n\nWe deploy with `make deploy` from main.\n")
    (ctx.memory_dir / "project_deploy_2.md").write_text("---\nname: project-deploy-2\ndescription: deploy steps (again)\ntype: project\n---\n\nDeploys: run `make deploy`.\n")
    (ctx.memory_dir / "MEMORY.md").write_text("# Memory index\n\n- [Deploy](project_deploy.md) — how we deploy\n- [Deploy steps](project_deploy_2.md) — deploy steps (again)\n")
    real_before = {p.name: p.read_bytes() for p in ctx.memory_dir.iterdir()}
    cap_mem, cap_dir = captured_paths(runs()[run])
    steps = replay(run)
    staging: dict[str, str] = {}

    def answer(n: int, body: dict[str, Any]) -> httpx2.Response:
        if n == 1:
            staging["dir"] = re.search(r"Memory directory: `([^`]+)`", body["messages"][-1]["content"][-1]["text"]).group(1)  # type: ignore[union-attr]
        if n > len(steps):
            return httpx2.Response(200, json=reply(text("Consolidated."), stop="end_turn"))
        blocks = []
        for k, call in enumerate(steps[n - 1]):
            raw = json.dumps(call["input"]).replace(cap_mem, staging["dir"]).replace(cap_dir, str(ctx.sessions_dir))
            blocks.append(use(f"t{n}_{k}", call["name"], **json.loads(raw)))
        return httpx2.Response(200, json=reply(*blocks))

    api = Api(answer)
    dp = plan_dream(ctx, build(tmp_path / "clock", run).now(7), "claude", client=client(api))

    first = api.bodies[0]
    assert first["model"] == "claude-opus-5-5"
    assert first["messages"][-1]["content"][-1]["text"] == expected_prompt(run, staging["dir"], str(ctx.sessions_dir), counted_sessions(ctx))
    assert first["system"] == RELEASE.memory_section(staging["dir"])
    assert staging["dir"].startswith(str(ctx.state_dir)) and staging["dir"].endswith("/")

    captured = [c for step in steps for c in step]
    results = [b for body in api.bodies[1:] for b in body["messages"][-1]["content"] if b["type"] == "tool_result"]
    assert len(results) == len(captured)
    for call, result in zip(captured, results, strict=True):
        if call["result"].startswith(("Only read-only shell commands", "only Read, Grep, Glob")):
            # the CLI's refusal, word for word, with the memory dir it was given
            assert result["is_error"] and result["content"] == call["result"].replace(cap_mem, staging["dir"])
        elif call["name"] in ("Write", "Edit") and not call["is_error"]:
            assert not result["is_error"], result
    rm = next(c for c in captured if c["name"] == "Bash" and c["input"]["command"].startswith("rm "))
    assert not rm["is_error"]
    plan = {c.relpath: c.kind for c in dp.plan.changes}
    assert plan["project_deploy_2.md"] == "delete"  # the CLI's `rm`, as a planned deletion
    assert plan["project_release_schedule.md"] == "create" and plan["MEMORY.md"] == "modify"
    assert {p.name: p.read_bytes() for p in ctx.memory_dir.iterdir()} == real_before  # nothing applied
    assert dp.request is not None and dp.request.memory_dir == staging["dir"]


@pytest.mark.parametrize("run", ["dream1", "extract_p"])
def test_the_system_prompts_memory_section_is_the_clis(run: str) -> None:
    """The ``# Memory`` section of the dream's and of the extraction's system prompt (the same
    text: both forks carry the main loop's system prompt). The capture runs to the blank line
    before the next heading."""
    cap_mem, _ = captured_paths(runs()[run])
    assert RELEASE.memory_section(cap_mem) == prompt(runs()[run]["files"]["memory_section"]).rstrip("\n")
