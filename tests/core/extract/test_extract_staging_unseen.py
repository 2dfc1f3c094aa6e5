"""The claude extractor's staging copy is invisible to the model: a scripted multi-turn extraction
(reads, searches, shell commands, writes, a removal and refusals over every path form: absolute,
``~``-relative, relative to the session's cwd and to the memory dir) never sends the copy's path
or its realpath in any request — prompt, system, tool descriptions, results, errors — while
every write lands in the copy and the live memory dir keeps its bytes until a proposal is
accepted. The model is an ``anthropic`` client over ``httpx2.MockTransport`` (no network); the
clock is the capture's, frozen."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import httpx2
import pytest
from support.cli_captures import build
from support.trees import file_bytes
from support.fake_api import Api, client, reply, text, use
from test_autoextract_captured import own_transcript

from memtui.core.extract import extract
from memtui.core.extract.claude import ClaudeExtractor
from memtui.core.extract.inbox import Inbox
from memtui.core.places.release import dir_text, load_release
from memtui.core.writes.journal import Journal

RUN = "extract_p"
RELEASE = load_release("claude-2.1.328")
# Claude Code 2.1.328's refusal of a tool or path (prompts/extract_tool_exchange.txt), over the
# directory it names.
TOOL_DENIAL = "only Read, Grep, Glob, read-only Bash, and Edit/Write within {d} are allowed"
DEPLOY = "---\nname: deploy\ndescription: how we deploy\ntype: project\n---\n\nWe deploy with `make deploy`.\n"
FRIDAYS = "---\nname: deploy-fridays\ndescription: The team deploys on Fridays\ntype: project\n---\n\nWe deploy on Fridays.\n"




@pytest.mark.parametrize("release", [RELEASE, None], ids=["claude-2.1.328", "memtui-prompt"])
def test_the_model_never_sees_the_staging_copy_and_writes_wait_for_apply(release: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    scene = build(tmp_path, RUN, "before")
    monkeypatch.setenv("HOME", str(scene.home))
    live = scene.memory_dir
    for old in live.glob("*.md"):
        old.unlink()
    (live / "MEMORY.md").write_text("# Memory index\n\n- [Deploy](project_deploy.md) — how we deploy\n")
    (live / "project_deploy.md").write_text(DEPLOY)
    (live / "user_role.md").write_text("---\nname: role\ndescription: the role\ntype: user\n---\n\nData scientist.\n")
    before = file_bytes(live)
    transcript = own_transcript(RUN, build(tmp_path / "after", RUN, "after").project_dir)
    state = tmp_path / "state"
    outside = tmp_path / "outside"
    outside.mkdir()
    home_rel = "~/" + live.relative_to(scene.home).as_posix()
    from_cwd = os.path.relpath(live, scene.project)
    steps = [
        [
            {"name": "Glob", "input": {"pattern": "*.md", "path": str(live)}},
            {"name": "Grep", "input": {"pattern": "deploy", "path": home_rel}},
            {"name": "Read", "input": {"file_path": f"{from_cwd}/MEMORY.md"}},
            {"name": "Read", "input": {"file_path": f"{live}/missing.md"}},
            {"name": "Bash", "input": {"command": f"ls {live}"}},
            {"name": "Bash", "input": {"command": f"stat {live}/MEMORY.md"}},
            {"name": "Bash", "input": {"command": f"cat {live}/missing.md"}},
            {"name": "Bash", "input": {"command": f"find {live} -name '*.md'"}},
            {"name": "Bash", "input": {"command": "pwd"}},
        ],
        [
            {"name": "Write", "input": {"file_path": f"{home_rel}/project_deploy_fridays.md", "content": FRIDAYS}},
            {"name": "Edit", "input": {"file_path": f"{live}/project_deploy.md", "old_string": "`make deploy`.", "new_string": "`make deploy`, on Fridays."}},
            {"name": "Edit", "input": {"file_path": "MEMORY.md", "old_string": "# Memory index\n", "new_string": "# Memory index\n\n- [Fridays](project_deploy_fridays.md) — deploys\n"}},
            {"name": "Write", "input": {"file_path": f"{live}/../escape.md", "content": "x\n"}},
            {"name": "Write", "input": {"file_path": f"{outside}/escape.md", "content": "x\n"}},
            {"name": "Bash", "input": {"command": f"rm {live}/user_role.md"}},
            {"name": "Edit", "input": {"file_path": f"{live}/user_role.md", "old_string": "no such text", "new_string": "y"}},
        ],
        [
            {"name": "Read", "input": {"file_path": f"{live}/project_deploy_fridays.md"}},
            {"name": "Bash", "input": {"command": f"grep -rl Fridays {live}"}},
        ],
    ]
    seen: dict[int, dict[str, bytes]] = {}

    def staging() -> Path:
        (run_dir,) = [p for p in state.rglob("*") if p.parent.name == "staging" and p.parent.parent.name == "extract"]
        return run_dir

    def answer(n: int, body: dict[str, Any]) -> httpx2.Response:
        assert file_bytes(live) == before, f"request {n}: the live dir changed before apply"
        seen[n] = file_bytes(staging())
        if n > len(steps):
            return httpx2.Response(200, json=reply(text("Saved 1 memory."), stop="end_turn"))
        return httpx2.Response(200, json=reply(*(use(f"t{n}_{k}", c["name"], **c["input"]) for k, c in enumerate(steps[n - 1]))))

    api = Api(answer)
    extractor = ClaudeExtractor(state_dir=state, client=client(api), model="claude-opus-5-5", cwd=scene.project, release=release)
    result = extract(transcript, live, state, scene.now(60), extractor=extractor)

    sent = extractor.last_request
    assert sent is not None and sent.memory_dir == dir_text(live)
    staged = sent.staging_dir
    assert staged is not None and staged.startswith(f"{state}/") and not Path(staged).exists()  # removed after the run
    assert sent.to_json()["staging_dir"] == staged and sent.to_json()["memory_dir"] == dir_text(live)
    shown = sent.render()
    assert f"memory dir: {dir_text(live)}" in shown and f"writes staged in: {staged}" in shown
    forbidden = {staged.rstrip("/"), os.path.realpath(staged), str(state), os.path.realpath(state)}
    assert len(api.bodies) == len(steps) + 1
    for n, body in enumerate(api.bodies, start=1):
        whole = json.dumps(body, ensure_ascii=False)
        for name in forbidden:
            assert name not in whole, f"request {n} names the staging copy {name}"
    first = api.bodies[0]
    if release is not None:
        assert first["system"] == RELEASE.memory_section(dir_text(live))
    else:
        assert f"Write and Edit work only inside {live}. " in first["system"]
    assert str(live) in json.dumps(first["tools"], ensure_ascii=False)  # the writable root the tools describe

    results = {b["tool_use_id"]: b for body in api.bodies[1:] for b in body["messages"][-1]["content"] if b["type"] == "tool_result"}
    assert len(results) == sum(len(s) for s in steps)
    look = [results[f"t1_{i}"] for i in range(9)]
    assert [r["is_error"] for r in look] == [False, False, False, True, False, False, True, False, False]
    assert f"{live}/MEMORY.md" in look[0]["content"] and f"{live}/project_deploy.md:" in look[1]["content"]
    assert "[Deploy](project_deploy.md)" in look[2]["content"]
    assert look[4]["content"].split() == ["MEMORY.md", "project_deploy.md", "user_role.md"]
    assert f"File: {live}/MEMORY.md" in look[5]["content"]
    assert f"{live}/missing.md" in look[3]["content"] and f"{live}/missing.md" in look[6]["content"]
    assert sorted(look[7]["content"].split()) == sorted(f"{live}/{n}" for n in ("MEMORY.md", "project_deploy.md", "user_role.md"))
    assert look[8]["content"].strip() == str(scene.project)
    changes = [results[f"t2_{i}"] for i in range(7)]
    removal_allowed = release is not None  # the release's permissions let `rm` take a memory file
    assert [r["is_error"] for r in changes] == [False, False, False, True, True, not removal_allowed, True]
    if release is not None:
        assert changes[3]["content"] == changes[4]["content"] == TOOL_DENIAL.format(d=dir_text(live))
    back = [results[f"t3_{i}"] for i in range(2)]
    assert "We deploy on Fridays." in back[0]["content"] and not back[0]["is_error"]
    assert sorted(back[1]["content"].split()) == [f"{live}/{n}" for n in ("MEMORY.md", "project_deploy.md", "project_deploy_fridays.md")]

    # the writes went to the copy, request by request; the live dir and the outside kept their bytes
    assert "project_deploy_fridays.md" not in seen[2] and seen[3]["project_deploy_fridays.md"] == FRIDAYS.encode()
    assert ("user_role.md" in seen[3]) is not removal_allowed
    assert file_bytes(live) == before and not list(outside.iterdir()) and not (live.parent / "escape.md").exists()
    by_path = {p.path: p for p in result.proposals}
    assert sorted(by_path) == ["project_deploy.md", "project_deploy_fridays.md"]
    assert [by_path["project_deploy_fridays.md"].kind, by_path["project_deploy.md"].kind] == ["create", "update"]

    inbox, journal = Inbox(state, live), Journal(state, live)
    for proposal in result.proposals:
        inbox.accept(proposal.id, journal, scene.now(61))
    after = file_bytes(live)
    assert b"We deploy on Fridays." in after["project_deploy_fridays.md"]
    assert b"`make deploy`, on Fridays." in after["project_deploy.md"]
    assert after["user_role.md"] == before["user_role.md"]  # the agent's `rm` is a note, not a proposal
