"""``memtui extract`` and ``memtui inbox``: the JSON shape, the cursor across runs,
a session id instead of a path, the demo's "remember" transcript, accept / reject by id."""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from pathlib import Path

from click.testing import CliRunner, Result
from support.extract import SESSION, Talk

from memtui.cli import main

NOW = "2026-03-10T12:00:00Z"


def run(*args: str, env: dict[str, str] | None = None) -> Result:
    """``memtui ARGS`` with the clock frozen at NOW unless ``env`` says otherwise."""
    return CliRunner().invoke(main, list(args), env={"MEMTUI_NOW": NOW} if env is None else env)


def talk_file(tmp_path: Path) -> Path:
    talk = Talk(cwd=str(tmp_path))
    talk.human("Draft the release notes. And remember that we never deploy on Fridays.")
    talk.say("Done.")
    return talk.write(tmp_path / f"{SESSION}.jsonl")


def test_extract_json_shape_and_cursor(tmp_path: Path) -> None:
    memory = tmp_path / "memory"
    transcript = talk_file(tmp_path)
    result = run("--memory-dir", str(memory), "extract", str(transcript), "--extractor", "offline", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["skipped"] is None and data["cursor"] == "u2" and data["written"] == []
    (p,) = data["proposals"]
    assert {k: p[k] for k in ("path", "type", "name", "description")} == {
        "path": "feedback_we_never_deploy_on_fridays.md", "type": "feedback",
        "name": "We never deploy on Fridays", "description": "We never deploy on Fridays."}
    assert p["body"].startswith("We never deploy on Fridays.\n\n**Why:**")
    assert {"session_id": SESSION, "message_uuid": "u1"}.items() <= p["source"].items()
    assert p["heuristic"] is True and data["extractor"] == "offline"

    again = json.loads(run("--memory-dir", str(memory), "extract", str(transcript), "--json").output)
    assert again == {**again, "skipped": "nothing new since the cursor", "cursor": "u2", "proposals": [], "written": []}


def test_extract_apply_writes(tmp_path: Path) -> None:
    memory = tmp_path / "memory"
    transcript = talk_file(tmp_path)
    data = json.loads(run("--memory-dir", str(memory), "extract", str(transcript), "--apply", "--json").output)
    assert data["written"] == ["feedback_we_never_deploy_on_fridays.md"]
    assert f"originSessionId: {SESSION}" in (memory / data["written"][0]).read_text(encoding="utf-8")


def test_extract_text_output_and_errors(tmp_path: Path) -> None:
    memory = tmp_path / "memory"
    transcript = talk_file(tmp_path)
    out = run("--memory-dir", str(memory), "extract", str(transcript))
    assert out.exit_code == 0 and "offline: explicit cues only, heuristic" in out.output and "[heuristic]" in out.output
    missing = run("--memory-dir", str(memory), "extract", str(tmp_path / "nope.jsonl"))
    assert missing.exit_code == 2 and "no such file" in missing.output
    no_key = run("--memory-dir", str(memory), "extract", str(transcript), "--all", "--extractor", "claude")
    assert no_key.exit_code == 1 and "no API key" in no_key.output and "Traceback" not in no_key.output


def test_inbox_list_show_accept_reject(tmp_path: Path) -> None:
    memory = tmp_path / "memory"
    transcript = talk_file(tmp_path)
    talk = Talk(cwd=str(tmp_path), session="other-session")
    talk.human("From now on, use uv instead of pip.")
    other = talk.write(tmp_path / "other-session.jsonl")
    base = ("--memory-dir", str(memory))
    run(*base, "extract", str(transcript))
    run(*base, "extract", str(other))
    listed = json.loads(run(*base, "inbox", "--json").output)
    assert [p["description"] for p in listed] == ["We never deploy on Fridays.", "Use uv instead of pip."]
    first, second = listed[0]["id"], listed[1]["id"]

    shown = run(*base, "inbox", "show", first, "--json")
    excerpt = json.loads(shown.output)["excerpt"]
    assert [t["is_source"] for t in excerpt["turns"]] == [True, False]

    accepted = run(*base, "inbox", "accept", first[:6], "--name", "No Friday deploys")
    assert accepted.exit_code == 0 and "wrote" in accepted.output
    text = (memory / "feedback_we_never_deploy_on_fridays.md").read_text(encoding="utf-8")
    assert text.startswith("---\nname: No Friday deploys\n")
    assert "(feedback_we_never_deploy_on_fridays.md)" in (memory / "MEMORY.md").read_text(encoding="utf-8")

    rejected = run(*base, "inbox", "reject", second)
    assert rejected.exit_code == 0 and not (memory / "feedback_use_uv_instead_of_pip.md").exists()
    assert json.loads(run(*base, "inbox", "--json").output) == []
    assert [p["status"] for p in json.loads(run(*base, "inbox", "--all", "--json").output)] == ["accepted", "rejected"]
    again = run(*base, "inbox", "reject", second)
    assert again.exit_code == 1 and "already rejected" in again.output
    assert run(*base, "inbox", "accept", "zzz").exit_code == 1


def test_demo_transcript_by_session_id_lands_in_the_inbox(tmp_path: Path) -> None:
    """As a new user would: the demo, no key, `memtui extract <session>` → accept → today + index."""
    from memtui.demo import materialize

    ws = materialize(tmp_path / "demo", datetime.now(UTC))
    env = {"HOME": str(ws.home)}  # the real clock: the accepted memory is written now
    old = os.getcwd()
    os.chdir(ws.project)
    try:
        data = json.loads(run("extract", "0fbf947b-f5e6-4b91-aa3c-54ebdc14f29a", "--json", env=env).output)
        (p,) = data["proposals"]
        assert p["description"].startswith("We never deploy on Fridays")
        skipped = json.loads(run("extract", "45b86495-095d-42b2-9dd5-25ef4e2e682c", "--json", env=env).output)
        assert skipped["skipped"] is not None and "agent wrote memory itself" in skipped["skipped"]
        assert run("inbox", "accept", p["id"], env=env).exit_code == 0
        ls = json.loads(run("ls", "--json", env=env).output)
        entry = next(e for e in ls if e["path"] == p["path"])
        assert entry["age_label"] == "today" and entry["in_index"] and entry["type"] == "feedback"
        assert f"({p['path']})" in (ws.memory_dir / "MEMORY.md").read_text(encoding="utf-8")
    finally:
        os.chdir(old)
