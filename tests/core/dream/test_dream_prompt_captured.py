"""The claude flavor's dream request against the ones Claude Code 2.1.328 sent: the dream prompt
and the system prompt's ``# Memory`` section byte for byte; the consolidator's own request (a
scripted Messages API replaying the CLI's captured dream tool calls) carrying that prompt over
the live memory dir, as the CLI names it, the main loop's model, and the CLI's permission
answers — the shell and tool refusals word for word, ``rm`` of a memory file as a planned
deletion that touches nothing before apply.

The captures were made under another HOME (``/tmp/oracle-13/bgcap/scen/<run>/home``) than a
test's ``tmp_path``, and a test may not build its workspace there, so the directories are
**substituted both ways**: the CLI's memory dir and transcripts dir in the captured text are
replaced by the test's (``expected_prompt``), and the test's in memtui's text by the CLI's
(``as_captured``), each compared byte for byte. What may differ is only the session list's
order (the CLI lists the sessions in its own readdir order, memtui in the test dir's; the ids
and their count are the same). The dream prompt and the ``# Memory`` section carry no date."""

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


def live_calls(run: str, ctx: DreamContext) -> list[list[dict[str, Any]]]:
    """The CLI's dream tool calls of ``run`` by step, with the capture's memory dir and
    transcripts dir replaced by the test's (the live ones: what the model is shown)."""
    cap_mem, cap_dir = captured_paths(runs()[run])
    out = []
    for step in replay(run):
        calls = []
        for call in step:
            raw = json.dumps(call).replace(cap_mem, dir_text(ctx.memory_dir)).replace(cap_dir, str(ctx.sessions_dir))
            calls.append(json.loads(raw))
        out.append(calls)
    return out


def scripted_calls(steps: list[list[dict[str, Any]]]) -> Api:
    """A Messages API answering request n with the tool calls of ``steps[n - 1]``, then a
    summary."""

    def answer(n: int, body: dict[str, Any]) -> httpx2.Response:
        if n > len(steps):
            return httpx2.Response(200, json=reply(text("Consolidated."), stop="end_turn"))
        return httpx2.Response(200, json=reply(*(use(f"t{n}_{k}", c["name"], **c["input"]) for k, c in enumerate(steps[n - 1]))))

    return Api(answer)


def as_captured(text_: str, run: str, ctx: DreamContext) -> str:
    """memtui's ``text_`` with the test's memory dir and transcripts dir written as the CLI's
    capture of ``run`` names them."""
    cap_mem, cap_dir = captured_paths(runs()[run])
    return text_.replace(dir_text(ctx.memory_dir), cap_mem).replace(str(ctx.sessions_dir), cap_dir)


@pytest.mark.parametrize("run", FIRED)
def test_the_consolidators_prompt_and_memory_section_are_the_clis_byte_for_byte(run: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ctx = scene_ctx(tmp_path, monkeypatch, run)
    api = scripted_calls([])
    plan_dream(ctx, build(tmp_path / "clock", run).now(7), "claude", client=client(api))
    (first,) = api.bodies
    sent = first["messages"][-1]["content"][-1]["text"]
    captured = prompt(runs()[run]["files"]["dream_prompt"])
    m, c = _SESSIONS.search(sent), _SESSIONS.search(captured)
    assert m and c
    # everything before the session list: identical once the directories are the CLI's
    assert as_captured(sent[: m.start()], run, ctx) == captured[: c.start()]
    # the list: the same heading, count and ids; the order is each machine's readdir order
    assert m.group(1) == c.group(1) and sorted(m.group(2).splitlines()) == sorted(c.group(2).splitlines())
    # and the other way: the captured prompt in the test's directories
    assert sent == expected_prompt(run, dir_text(ctx.memory_dir), str(ctx.sessions_dir), counted_sessions(ctx))
    cap_mem, _ = captured_paths(runs()[run])
    section = prompt(runs()["dream1"]["files"]["memory_section"]).rstrip("\n").replace(captured_paths(runs()["dream1"])[0], cap_mem)
    assert as_captured(first["system"], run, ctx) == section
    assert first["system"] == RELEASE.memory_section(dir_text(ctx.memory_dir))


def test_the_consolidator_sends_the_clis_dream_and_applies_its_permission_rules(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    run = "dream1"
    ctx = scene_ctx(tmp_path, monkeypatch, run)
    (ctx.memory_dir / "project_deploy.md").write_text("---\nname: project-deploy\ndescription: how we deploy\ntype: project\n---\n\nWe deploy with `make deploy` from main.\n")
    (ctx.memory_dir / "project_deploy_2.md").write_text("---\nname: project-deploy-2\ndescription: deploy steps (again)\ntype: project\n---\n\nDeploys: run `make deploy`.\n")
    (ctx.memory_dir / "MEMORY.md").write_text("# Memory index\n\n- [Deploy](project_deploy.md) — how we deploy\n- [Deploy steps](project_deploy_2.md) — deploy steps (again)\n")
    real_before = {p.name: p.read_bytes() for p in ctx.memory_dir.iterdir()}
    live = dir_text(ctx.memory_dir)
    steps = live_calls(run, ctx)
    api = scripted_calls(steps)
    dp = plan_dream(ctx, build(tmp_path / "clock", run).now(7), "claude", client=client(api))

    first = api.bodies[0]
    assert first["model"] == "claude-opus-5-5"
    assert first["messages"][-1]["content"][-1]["text"] == expected_prompt(run, live, str(ctx.sessions_dir), counted_sessions(ctx))
    assert first["system"] == RELEASE.memory_section(live)

    captured = [c for step in steps for c in step]
    results = [b for body in api.bodies[1:] for b in body["messages"][-1]["content"] if b["type"] == "tool_result"]
    assert len(results) == len(captured)
    for call, result in zip(captured, results, strict=True):
        if call["result"].startswith(("Only read-only shell commands", "only Read, Grep, Glob")):
            # the CLI's refusal, word for word, naming the live memory dir as the CLI's does
            assert result["is_error"] and result["content"] == call["result"]
        elif call["name"] in ("Write", "Edit") and not call["is_error"]:
            assert not result["is_error"], result
    rm = next(c for c in captured if c["name"] == "Bash" and c["input"]["command"].startswith("rm "))
    assert not rm["is_error"]
    plan = {c.relpath: c.kind for c in dp.plan.changes}
    assert plan["project_deploy_2.md"] == "delete"  # the CLI's `rm`, as a planned deletion
    assert plan["project_release_schedule.md"] == "create" and plan["MEMORY.md"] == "modify"
    assert {p.name: p.read_bytes() for p in ctx.memory_dir.iterdir()} == real_before  # nothing applied
    assert dp.request is not None and dp.request.memory_dir == live
    assert dp.request.staging_dir is not None and dp.request.staging_dir.startswith(str(ctx.dream_state_dir / "staging"))
    assert dp.request.to_json()["staging_dir"] == dp.request.staging_dir
    shown = dp.request.render()
    assert f"memory dir: {live}" in shown and f"writes staged in: {dp.request.staging_dir}" in shown


@pytest.mark.parametrize("run", ["dream1", "extract_p"])
def test_the_system_prompts_memory_section_is_the_clis(run: str) -> None:
    """The ``# Memory`` section of the dream's and of the extraction's system prompt (the same
    text: both forks carry the main loop's system prompt). The capture runs to the blank line
    before the next heading."""
    cap_mem, _ = captured_paths(runs()[run])
    assert RELEASE.memory_section(cap_mem) == prompt(runs()[run]["files"]["memory_section"]).rstrip("\n")
