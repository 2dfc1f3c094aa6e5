"""The Claude consolidator against a scripted Messages API (``httpx2.MockTransport``; anthropic
2.x sends through httpx2). The agent works on a staging copy it is never told about (its tools map
the live memory dir there); only what the docs/behaviour.md §7 policy allows reaches it, and the
staging-vs-real diff is the plan. Nothing touches the network."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import httpx2
import pytest
from support.dream import DAY, NOW, context, memory, snapshot, write
from support.fake_api import MODEL, Api, client, reply, scripted, text, use

from memtui.core.dream import (
    DreamCancelled,
    DreamContext,
    DreamError,
    DreamSession,
    plan_dream,
    read_lock,
)
from memtui.core.dream.lock import LOCK_NAME

T = NOW.timestamp()
NEW_MEMORY = "---\nname: Review style\ndescription: The user wants terse code reviews\ntype: feedback\n---\n\nKeep reviews terse.\n\n**Why:** said so in session s1.\n\n**How to apply:** bullet points only.\n"


def store(tmp_path: Path) -> DreamContext:
    ctx = context(tmp_path)
    write(ctx.memory_dir / "user_role.md", memory("Role", "The user is a data scientist", "user", "Data scientist.\n"), T - 5 * DAY)
    write(ctx.memory_dir / "user_role_copy.md", memory("Role", "The user is a data scientist", "user", "Data scientist, works on logging.\n"), T - 2 * DAY)
    write(ctx.memory_dir / "MEMORY.md", "- [Role](user_role.md) — data scientist\n- [Role](user_role_copy.md) — again\n", T - DAY)
    write(ctx.memory_dir / "team" / "shared.md", memory("Shared", "team", "project", "Shared.\n"), T - DAY)
    return ctx


def tool_results(body: dict[str, Any]) -> list[dict[str, Any]]:
    return [b for b in body["messages"][-1]["content"] if b["type"] == "tool_result"]


def test_only_the_allowed_write_succeeds_and_becomes_the_plan(tmp_path: Path) -> None:
    ctx = store(tmp_path)
    before = snapshot(ctx.memory_dir)
    api = scripted(
        reply(
            text("Phase: orient\nLooking around."),
            use("t1", "Write", file_path="../../outside.md", content="escaped\n"),
            use("t2", "Bash", command="rm user_role_copy.md"),
            use("t3", "Bash", command="cat user_role.md > y.md"),
            use("t4", "Write", file_path="feedback_review_style.md", content=NEW_MEMORY),
        ),
        reply(text("Phase: prune\nDone.\n- feedback_review_style.md: a review preference the user stated in session s1"), stop="end_turn"),
    )
    events: list[Any] = []
    dp = plan_dream(ctx, NOW, "claude", emit=events.append, client=client(api))

    results = tool_results(api.bodies[1])
    assert [r["tool_use_id"] for r in results] == ["t1", "t2", "t3", "t4"]
    assert [r.get("is_error", False) for r in results] == [True, True, True, False]
    assert "outside" in json.dumps(results[0]["content"]).lower() or "refused" in json.dumps(results[0]["content"]).lower()

    assert [(c.relpath, c.kind) for c in dp.plan.changes] == [("feedback_review_style.md", "create")]
    assert dp.plan.changes[0].after == NEW_MEMORY.encode("utf-8")
    assert dp.reasons == ("claude: a review preference the user stated in session s1",)
    assert dp.consolidator == "claude"
    assert [f.code for f in dp.findings] == ["agent-tool-refused"] * 3
    # nothing reached the memory dir, nothing escaped, the staging copy is gone
    assert snapshot(ctx.memory_dir) == before
    assert not list(tmp_path.rglob("outside.md")) and not list(tmp_path.rglob("y.md"))
    assert not list((ctx.dream_state_dir / "staging").iterdir())
    # the request: the system prompt's four phases, the live memory dir (never the staging copy), the docs/behaviour.md §7 tools
    first = api.bodies[0]
    assert first["model"] == MODEL
    assert "Phase: <name>" in first["system"] and f"The memory directory is {ctx.memory_dir}\n" in first["messages"][0]["content"]
    assert all(str(ctx.dream_state_dir) not in json.dumps(body) for body in api.bodies)
    assert {t["name"] for t in first["tools"]} == {"Read", "Grep", "Glob", "Bash", "Write", "Edit"}
    phases = [e.phase for e in events if e.kind == "phase-started"]
    assert phases == ["orient", "gather", "consolidate", "prune"]


def test_an_emptied_file_becomes_a_capped_delete_and_team_edits_are_dropped(tmp_path: Path) -> None:
    ctx = store(tmp_path)
    api = Api(lambda n, body: httpx2.Response(200, json=[
        reply(
            use("a", "Edit", file_path="user_role.md", old_string="Data scientist.", new_string="Data scientist, works on logging."),
            use("b", "Write", file_path="user_role_copy.md", content=""),
            use("c", "Edit", file_path="MEMORY.md", old_string="- [Role](user_role_copy.md) — again\n", new_string=""),
            use("d", "Write", file_path="team/shared.md", content="rewritten\n"),
        ),
        reply(text("- user_role.md: merged the copy\n- user_role_copy.md: merged into user_role.md"), stop="end_turn"),
    ][n - 1]))
    dp = plan_dream(ctx, NOW, "claude", client=client(api))
    assert [(c.relpath, c.kind) for c in dp.plan.changes] == [("MEMORY.md", "modify"), ("user_role.md", "modify"), ("user_role_copy.md", "delete")]
    reasons = dict(zip([c.relpath for c in dp.plan.changes], dp.reasons, strict=True))
    assert reasons["user_role.md"] == "claude: merged the copy"
    assert reasons["user_role_copy.md"].startswith("claude: merged into user_role.md (emptied")
    assert reasons["MEMORY.md"].startswith("claude: Edit MEMORY.md")
    assert [f.code for f in dp.findings] == ["team-untouched"]
    capped = plan_dream(ctx, NOW, "claude", client=client(Api(lambda n, body: httpx2.Response(200, json=[
        reply(use("b", "Write", file_path="user_role_copy.md", content="")),
        reply(text("ok"), stop="end_turn"),
    ][n - 1]))), max_deletions=0)
    assert capped.empty and [f.code for f in capped.findings] == ["duplicate-deferred"]


def test_an_api_error_plans_nothing_and_rolls_the_lock_back(tmp_path: Path) -> None:
    ctx = store(tmp_path)
    api = Api(lambda n, body: httpx2.Response(500, json={"type": "error", "error": {"type": "api_error", "message": "boom"}}))
    session = DreamSession.start(ctx, NOW, force=True)
    with pytest.raises(DreamError, match="HTTP 500"):
        session.plan("claude", client=client(api))
    assert not (ctx.memory_dir / LOCK_NAME).exists()
    assert read_lock(ctx.memory_dir).exists is False


def test_cancel_stops_the_agent(tmp_path: Path) -> None:
    ctx = store(tmp_path)
    cancel = threading.Event()

    def script(n: int, body: dict[str, Any]) -> httpx2.Response:
        cancel.set()  # the user pressed Cancel while the first request was out
        return httpx2.Response(200, json=reply(use("a", "Write", file_path="user_x.md", content="x\n")))

    with pytest.raises(DreamCancelled):
        plan_dream(ctx, NOW, "claude", client=client(Api(script)), cancel=cancel)
    assert not list((ctx.dream_state_dir / "staging").iterdir())
