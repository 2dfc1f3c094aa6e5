"""The claude consolidator's staging copy is invisible to the model: a scripted multi-turn dream
(the CLI's own captured dream tool calls, then reads, searches, shell commands, writes and
refusals over every path form) never sends the copy's path in any request — prompt, system,
tool descriptions, results, errors — while every write lands in the copy and the live memory
dir keeps its bytes until the plan is applied. Nothing touches the network (``httpx2.MockTransport``)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import httpx2
import pytest
from support.cli_captures import build, captured_paths, prompt, runs
from support.trees import file_bytes
from support.fake_api import Api, client, reply, text, use

from memtui.core.dream import DreamSession
from memtui.core.dream.gates import DreamContext
from memtui.core.dream.lock import LOCK_NAME
from memtui.core.places.flavor import CLAUDE
from memtui.core.places.locations import resolve_locations
from memtui.core.places.release import dir_text

RUN = "dream1"
TOOL_DENIAL = "only Read, Grep, Glob, read-only Bash, and Edit/Write within {d} are allowed"


def memory_bytes(root: Path) -> dict[str, bytes]:
    """Every regular file below ``root`` but the lock (links not followed), with its bytes."""
    return file_bytes(root, skip=(LOCK_NAME,))


def captured_steps(ctx: DreamContext) -> list[list[dict[str, Any]]]:
    """The CLI's dream tool calls (the mock's five steps), in the test's live directories."""
    cap_mem, cap_dir = captured_paths(runs()[RUN])
    calls = json.loads(json.dumps(json.loads(prompt(runs()[RUN]["files"]["dream_tools"]))).replace(cap_mem, dir_text(ctx.memory_dir)).replace(cap_dir, str(ctx.sessions_dir)))
    steps, i = [], 0
    for n in (1, 3, 1, 3, 3):
        steps.append([{"name": c["name"], "input": c["input"]} for c in calls[i : i + n]])
        i += n
    return steps


def test_the_model_never_sees_the_staging_copy_and_writes_wait_for_apply(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    scene = build(tmp_path, RUN)
    monkeypatch.setenv("HOME", str(scene.home))
    ctx = DreamContext.from_locations(resolve_locations(CLAUDE, scene.project))
    live = ctx.memory_dir
    (live / "MEMORY.md").write_text("# Memory index\n\n- [Deploy](project_deploy.md) — how we deploy\n")
    (live / "project_deploy.md").write_text("---\nname: deploy\ndescription: how we deploy\ntype: project\n---\n\nWe deploy with `make deploy`.\n")
    (live / "project_deploy_2.md").write_text("---\nname: deploy-2\ndescription: again\ntype: project\n---\n\nDeploys: `make deploy`.\n")
    (live / "user_role.md").write_text("---\nname: role\ndescription: the role\ntype: user\n---\n\nData scientist.\n")  # the CLI's Edit of "x" misses, as it did
    outside = tmp_path / "outside"
    outside.mkdir()
    (live / "linked").symlink_to(outside)  # copied as a link: a write through it must not escape
    before = memory_bytes(live)
    home_rel = "~/" + live.relative_to(scene.home).as_posix()
    from_cwd = os.path.relpath(live, scene.project)
    mine = [
        [
            {"name": "Glob", "input": {"pattern": "*.md", "path": str(live)}},
            {"name": "Grep", "input": {"pattern": "deploy", "path": home_rel}},
            {"name": "Read", "input": {"file_path": f"{from_cwd}/MEMORY.md"}},
            {"name": "Read", "input": {"file_path": f"{live}/missing.md"}},
            {"name": "Bash", "input": {"command": f"find {live} -name '*.md' -newer {live}/project_deploy.md"}},
            {"name": "Bash", "input": {"command": f"stat {live}/MEMORY.md"}},
            {"name": "Bash", "input": {"command": f"cat {live}/missing.md"}},
            {"name": "Bash", "input": {"command": f"grep -rl {dir_text(live)} {ctx.sessions_dir} --include=*.jsonl"}},
            {"name": "Bash", "input": {"command": "pwd"}},
        ],
        [
            {"name": "Write", "input": {"file_path": f"{home_rel}/feedback_terse.md", "content": "---\nname: terse\ndescription: be terse\ntype: feedback\n---\n\nBe terse.\n"}},
            {"name": "Edit", "input": {"file_path": "MEMORY.md", "old_string": "# Memory index\n", "new_string": "# Memory index\n\n- [Terse](feedback_terse.md) — be terse\n"}},
            {"name": "Write", "input": {"file_path": f"{live}/../escape.md", "content": "x\n"}},
            {"name": "Write", "input": {"file_path": f"{live}/linked/escape.md", "content": "x\n"}},
            {"name": "Bash", "input": {"command": f"rm {live}/linked/escape.md"}},
            {"name": "Edit", "input": {"file_path": f"{live}/user_role.md", "old_string": "no such text", "new_string": "y"}},
        ],
    ]
    steps = captured_steps(ctx) + mine
    seen: dict[int, dict[str, bytes]] = {}

    def staging_dir() -> Path:
        (stamp,) = (ctx.dream_state_dir / "staging").iterdir()
        return stamp / "memory"

    def answer(n: int, body: dict[str, Any]) -> httpx2.Response:
        assert memory_bytes(live) == before, f"request {n}: the live dir changed before apply"
        seen[n] = memory_bytes(staging_dir())
        if n > len(steps):
            return httpx2.Response(200, json=reply(text("Consolidated."), stop="end_turn"))
        return httpx2.Response(200, json=reply(*(use(f"t{n}_{k}", c["name"], **c["input"]) for k, c in enumerate(steps[n - 1]))))

    api = Api(answer)
    with DreamSession.start(ctx, scene.now(7), force=True) as session:
        dp = session.plan("claude", scene.now(7), client=client(api))
        staged = dp.request.staging_dir
        assert staged is not None and staged.startswith(str(ctx.dream_state_dir))
        forbidden = {staged.rstrip("/"), os.path.realpath(staged), str(ctx.dream_state_dir), os.path.realpath(ctx.dream_state_dir)}
        # every request, whole: prompt, system, tools offered, every tool result and error
        assert len(api.bodies) == len(steps) + 1
        for n, body in enumerate(api.bodies, start=1):
            sent = json.dumps(body, ensure_ascii=False)
            for name in forbidden:
                assert name not in sent, f"request {n} names the staging copy {name}"
        results = {b["tool_use_id"]: b for body in api.bodies[1:] for b in body["messages"][-1]["content"] if b["type"] == "tool_result"}
        assert len(results) == sum(len(s) for s in steps)
        k = len(captured_steps(ctx)) + 1
        look = [results[f"t{k}_{i}"] for i in range(9)]
        assert all(not r["is_error"] for r in look[:3]) and look[3]["is_error"] and look[6]["is_error"]
        assert f"{live}/MEMORY.md" in look[0]["content"] and f"{live}/project_deploy.md:" in look[1]["content"]
        assert f"File: {live}/MEMORY.md" in look[5]["content"] and f"{live}/missing.md" in look[3]["content"] + look[6]["content"]
        assert look[8]["content"] == str(scene.project)
        assert results["t5_2"]["is_error"] and "String to replace not found" not in results["t5_2"]["content"]  # memtui's own words
        changes = [results[f"t{k + 1}_{i}"] for i in range(6)]
        assert [r["is_error"] for r in changes] == [False, False, True, True, True, True]
        assert changes[2]["content"] == changes[3]["content"] == TOOL_DENIAL.format(d=dir_text(live))
        # the writes went to the copy, request by request; the live dir and the outside kept their bytes
        assert "project_release_schedule.md" not in seen[4] and "project_release_schedule.md" in seen[5]
        assert "feedback_terse.md" in seen[len(steps) + 1] and "project_deploy_2.md" not in seen[len(steps) + 1]
        assert memory_bytes(live) == before and not list(outside.iterdir())
        assert not (live.parent / "escape.md").exists()
        plan = {c.relpath: c.kind for c in dp.plan.changes}
        assert plan == {"MEMORY.md": "modify", "feedback_terse.md": "create", "project_release_schedule.md": "create", "project_deploy_2.md": "delete"}
        session.apply(dp, scene.now(8))
    after = memory_bytes(live)
    assert "project_deploy_2.md" not in after and after["feedback_terse.md"].startswith(b"---\nname: terse")
    assert b"- [Terse](feedback_terse.md)" in after["MEMORY.md"] and "project_release_schedule.md" in after
