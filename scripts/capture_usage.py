#!/usr/bin/env python3
"""Capture real Claude Code transcripts in which the agent uses its memory, as test inputs for
``memtui usage``, ``memtui cascade --session`` and ``memtui recall eval --transcripts``.

    python scripts/capture_usage.py [--oracle ../shared/oracle] [--work /tmp/memtui-usage-capture] [--claude CLI]

Builds one workspace (its own HOME, a git repository ``proj`` with a subfolder ``svc``, a
memory dir of eight memories, recall turned on through the CLI's cached flag) and runs the real
CLI (``claude -p``) four times against a local mock of the Messages API (the oracle's
``mock_server.py``, on 127.0.0.1, with a scripted main loop: a prompt's ``READ:<path>``,
``WRITE:<path>``, ``EDIT:<path>`` and ``TASK:<path>`` directives become, one per turn and in
order, a ``Read``, a ``Write``, an ``Edit`` of the file, and an ``Agent`` call whose sub-agent
reads the file; the recall side request picks the first five manifest entries):

- ``deploy`` (cwd ``proj``, recall on): reads ``deploy.md``, ``old_notes.md`` and ``src/app.py``;
- ``svc`` (cwd ``proj/svc``: a session in another cwd, same memory dir; recall on): a
  sub-agent reads ``reference_dash.md``;
- ``oncall`` (cwd ``proj``, recall off): reads ``MEMORY.md``, writes ``project_oncall.md``,
  edits ``MEMORY.md``;
- ``hello`` (cwd ``proj``, recall off): no memory used.

After the runs ``old_notes.md`` is deleted (a used file that no longer exists). The workspace's
files (with mtimes) and every transcript the CLI wrote (sessions and sub-agents, by their path
under ``~/.claude/projects``) go to ``tests/captures/claude-2.1.328/usage/usage.json``, with
``{root}`` / ``{root_slug}`` for the workspace's folder and its slug. The tests never need the
CLI or the network; this script does (npm, when ``--claude`` is not given).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time
import uuid
from http.server import ThreadingHTTPServer
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "scripts"))

from capture_claude_code import VERSION, Workspace, ensure_cli, placeholders, slug  # noqa: E402

OUT = REPO / "tests" / "captures" / f"claude-{VERSION}" / "usage"
DIRECTIVE = re.compile(r"\b(READ|WRITE|EDIT|TASK):(\S+)")


def _prompt(body: dict) -> str:
    """The first human prompt of a main-loop request (not a system reminder)."""
    for m in body.get("messages", []):
        if m.get("role") != "user":
            continue
        c = m.get("content")
        parts = [c] if isinstance(c, str) else [b.get("text", "") for b in c if isinstance(b, dict) and b.get("type") == "text"]
        for t in parts:
            if DIRECTIVE.search(t) and "<system-reminder>" not in t[:20]:
                return t
    return ""


def make_handler(mock: object) -> type:
    """The oracle's handler with a scripted main loop (see the module docstring)."""

    class Handler(mock.Handler):  # type: ignore[attr-defined,name-defined,misc]
        def _messages(self, body: dict) -> object:
            if mock._is_recall(body) or not body.get("tools"):  # type: ignore[attr-defined]
                return super()._messages(body)
            steps = DIRECTIVE.findall(_prompt(body))
            done = sum(1 for m in body.get("messages", []) for b in (m.get("content") if isinstance(m.get("content"), list) else [])
                       if isinstance(b, dict) and b.get("type") == "tool_result")
            if done >= len(steps):
                return super()._messages({**body, "tools": None} if steps else body)
            verb, path = steps[done]
            mid = "msg_mock_" + uuid.uuid4().hex[:16]
            model = body.get("model", "claude-mock")
            if verb == "READ":
                return self._tool_use(body, model, mid, "Read", {"file_path": path})
            if verb == "WRITE":
                text = "---\nname: oncall\ndescription: Who is on call this week and how to page them\ntype: project\n---\nPage #oncall.\n"
                return self._tool_use(body, model, mid, "Write", {"file_path": path, "content": text})
            if verb == "EDIT":
                line = "- [Oncall](project_oncall.md) — who is on call\n"
                return self._tool_use(body, model, mid, "Edit", {"file_path": path, "old_string": "- [Deploy]", "new_string": line + "- [Deploy]"})
            return self._tool_use(body, model, mid, "Agent", {"description": "Look up the dashboard", "prompt": f"READ:{path}", "subagent_type": "general-purpose"})

    return Handler


def build(root: Path) -> Workspace:
    ws = Workspace(root, "usage")
    ws.write("proj/CLAUDE.md", "# Project\n\nBuild with `make`.\n")
    ws.write("proj/src/app.py", "print('hi')\n")
    ws.write("proj/svc/CLAUDE.md", "# svc\n\nThe service.\n")
    ws.write("proj/svc/main.go", "package main\n")
    mem = ws.memory
    ws.write(mem("user_role.md"), "---\nname: user-role\ndescription: The user is a backend engineer who prefers Go\ntype: user\n---\nBackend engineer.\n", 1)
    ws.write(mem("deploy.md"), "---\nname: deploy\ndescription: Staging deploys go through make ship and need the VPN\nmetadata:\n  type: project\n---\nRun `make ship`.\n**Why:** private API.\n**How to apply:** VPN first.\n", 3)
    ws.write(mem("reference_dash.md"), "---\nname: dashboard\ndescription: The staging dashboard lives at grafana.example.com/d/staging\ntype: reference\n---\ngrafana.example.com/d/staging\n", 4)
    ws.write(mem("feedback_tests.md"), "---\nname: tests\ndescription: Run the integration tests against a real database, never mocks\ntype: feedback\n---\nReal DB.\n**Why:** mocks hid a migration bug.\n**How to apply:** docker compose up db first.\n", 5)
    ws.write(mem("project_kafka.md"), "---\nname: kafka\ndescription: The ingest service moves from RabbitMQ to Kafka in Q3\ntype: project\n---\nKafka in Q3.\n**Why:** throughput.\n**How to apply:** new consumers on Kafka.\n", 6)
    ws.write(mem("old_notes.md"), "---\nname: old-notes\ndescription: Notes from the first sprint, mostly obsolete\ntype: project\n---\nObsolete.\n", 20)
    ws.write(mem("user_tz.md"), "---\nname: timezone\ndescription: The user works from Berlin, CET\ntype: user\n---\nCET.\n", 30)
    ws.write(mem("team/reference_runbook.md"), "---\nname: runbook\ndescription: The team's incident runbook is in Notion under Ops\ntype: reference\n---\nNotion / Ops.\n", 40)
    ws.write(mem("MEMORY.md"), "- [Deploy](deploy.md) — make ship, VPN first\n- [Dashboard](reference_dash.md) — grafana staging\n- [Tests](feedback_tests.md) — real DB\n")
    d, m = ws.proj, ws.root / mem("")
    on = {"tengu_moth_copse": True}
    ws.runs = [
        {"name": "deploy", "cwd": str(d), "flags": on,
         "prompt": f"how do I deploy the ingest service to staging READ:{m / 'deploy.md'} READ:{m / 'old_notes.md'} READ:{d / 'src/app.py'}"},
        {"name": "svc", "cwd": str(d / "svc"), "flags": on, "prompt": f"where is the staging dashboard TASK:{m / 'reference_dash.md'}"},
        {"name": "oncall", "cwd": str(d), "prompt": f"remember who is on call READ:{m / 'MEMORY.md'} WRITE:{m / 'project_oncall.md'} EDIT:{m / 'MEMORY.md'}"},
        {"name": "hello", "cwd": str(d), "prompt": "hello there"},
    ]
    return ws


def set_flags(home: Path, flags: dict | None) -> None:
    path = home / ".claude.json"
    data = json.loads(path.read_text()) if path.exists() else {}
    data.pop("cachedGrowthBookFeatures", None)
    if flags:
        data["cachedGrowthBookFeatures"] = dict(flags)
    path.write_text(json.dumps(data, indent=2))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--oracle", default=str(REPO.parent / "shared" / "oracle"), help="the oracle harness (mock_server.py)")
    ap.add_argument("--work", default="/tmp/memtui-usage-capture", help="scratch dir (wiped)")
    ap.add_argument("--claude", default=None, help=f"the Claude Code {VERSION} CLI (default: installed with npm into --work)")
    a = ap.parse_args()
    sys.path.insert(0, a.oracle)
    import mock_server

    work = Path(a.work).resolve()
    scen = work / "scen"
    shutil.rmtree(scen, ignore_errors=True)
    scen.mkdir(parents=True)
    cli = ensure_cli(work, a.claude)
    ws = build(scen)
    ws.spec()  # stamp the mtimes
    server = ThreadingHTTPServer(("127.0.0.1", 0), make_handler(mock_server))
    server.logfile = str(work / "requests.jsonl")  # type: ignore[attr-defined]
    threading.Thread(target=server.serve_forever, daemon=True).start()
    port = server.server_address[1]
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(ws.home), "LANG": "C.UTF-8", "TERM": "dumb",
        "ANTHROPIC_BASE_URL": f"http://127.0.0.1:{port}", "ANTHROPIC_API_KEY": "sk-ant-test", "DISABLE_TELEMETRY": "1",
        "DISABLE_AUTOUPDATER": "1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_ERROR_REPORTING": "1",
        "CLAUDE_CODE_GB_DISK_CACHE_WHEN_TELEMETRY_OFF": "1",
    }
    try:
        for run in ws.runs:
            set_flags(ws.home, run.get("flags"))
            done = subprocess.run([cli, "-p", run["prompt"], "--output-format", "json"], cwd=run["cwd"], env=env,
                                  capture_output=True, timeout=180, stdin=subprocess.DEVNULL)
            print(run["name"], "rc", done.returncode, flush=True)
            time.sleep(1.1)  # distinct timestamps and mtimes per session
    finally:
        set_flags(ws.home, None)
        server.shutdown()
    (ws.root / ws.memory("old_notes.md")).unlink()
    root = str(ws.root)
    files = {}
    memory = ws.memory("")
    for path in sorted(ws.root.rglob("*")):
        rel = path.relative_to(ws.root).as_posix()
        if not path.is_file() or rel.startswith("proj/.git/"):
            continue
        if rel.startswith("home/.claude/projects/") and not rel.startswith(memory):
            continue  # the transcripts: below
        files[rel] = {"text": path.read_text(encoding="utf-8"), "mtime": path.stat().st_mtime}
    transcripts = {}
    projects = ws.home / ".claude" / "projects"
    for path in sorted(projects.rglob("*.jsonl")):
        transcripts[path.relative_to(projects).as_posix()] = {"text": path.read_text(encoding="utf-8"), "mtime": path.stat().st_mtime}
    data = {"cli_version": VERSION, "captured_at": time.time(), "cwd": str(ws.proj), "files": files, "transcripts": transcripts,
            "runs": [{"name": r["name"], "cwd": r["cwd"], "prompt": r["prompt"], "recall": bool(r.get("flags"))} for r in ws.runs]}
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "usage.json").write_text(json.dumps(placeholders(data, root), indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"capture written to {OUT / 'usage.json'}: {len(transcripts)} transcripts")


if __name__ == "__main__":
    main()
