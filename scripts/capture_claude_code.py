#!/usr/bin/env python3
"""Capture what the real Claude Code CLI sends, as test fixtures for the ``claude`` flavor.

    python scripts/capture_claude_code.py [--oracle ../shared/oracle] [--work /tmp/memtui-capture]

Builds a few small workspaces (their own HOME, a git repository, memories, settings), runs the
real CLI on each through the oracle harness (``run_oracle.py``: the CLI talks only to a local
mock of the Messages API on 127.0.0.1, which records every request), and writes, for each
workspace, ``tests/captures/claude-<version>/context/<name>.json``: the files of the workspace with
their mtimes, and per run what the CLI sent — the instruction block of its first message, the
``# Memory`` section of its system prompt, each lazily loaded file's message after a read, the
recall request and the injected memories. Two of the CLI's own transcripts go to
``context/transcripts/``. Paths are stored with ``{root}`` for the workspace's folder and
``{root_slug}`` for its slug, so a test can rebuild the workspace anywhere and compare
memtui's output with the CLI's byte for byte. The tests never need the CLI or the network;
this script does (npm, to install the CLI when ``--claude`` is not given).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
VERSION = "2.1.328"
OUT = REPO / "tests" / "captures" / f"claude-{VERSION}" / "context"
DAY = 86400.0


def slug(path: str) -> str:
    """The agent's slug of an ASCII path (every character outside [A-Za-z0-9] becomes ``-``)."""
    return re.sub(r"[^A-Za-z0-9]", "-", path)


class Workspace:
    """A scenario being built: files under ``root`` (HOME is ``root/home``, the project
    ``root/proj``), each with an age in days."""

    def __init__(self, root: Path, name: str) -> None:
        self.name = name
        self.root = root / name
        self.home = self.root / "home"
        self.proj = self.root / "proj"
        self.files: dict[str, float] = {}
        self.snapshot: dict[str, dict[str, object]] = {}
        self.runs: list[dict[str, object]] = []
        self.cwd = self.proj
        (self.proj / ".git").mkdir(parents=True)
        subprocess.run(["git", "init", "-q", "-b", "main", str(self.proj)], check=True)
        self.write("home/.claude.json", json.dumps({"hasCompletedOnboarding": True, "numStartups": 1}, indent=2))

    def write(self, rel: str, text: str, age_days: float = 0.0) -> None:
        path = self.root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text.encode("utf-8"))
        self.files[rel] = age_days

    def memory(self, rel: str) -> str:
        return f"home/.claude/projects/{slug(str(self.proj))}/memory/{rel}"

    def spec(self) -> dict[str, object]:
        now = time.time()
        for rel, age in self.files.items():
            stamp = now - age * DAY
            os.utime(self.root / rel, (stamp, stamp))
            self.snapshot[rel] = {"text": (self.root / rel).read_text(encoding="utf-8"), "mtime": (self.root / rel).stat().st_mtime}
        return {"name": self.name, "cwd": str(self.cwd), "home": str(self.home), "runs": self.runs}


def build(root: Path) -> list[Workspace]:
    """The workspaces: instruction layers and recall; AGENTS.md; a memory dir moved by the
    project settings."""
    layers = Workspace(root, "layers")
    layers.write("home/.claude/CLAUDE.md", "# User instructions\n\nBe terse. <!-- inline stays -->\n\n<!-- block: stripped -->\n")
    layers.write("home/.claude/rules/python.md", '---\npaths: "**/*.py"\n---\n# Python files\nUse type hints.\n')
    layers.write("proj/CLAUDE.md", "---\ntitle: stripped\n---\n# Project\n\nBuild with `make`. See @docs/style.md\n")
    layers.write("proj/docs/style.md", "# Style (imported)\nShort functions.\n")
    layers.write("proj/.claude/rules/always.md", "\ufeff---\ndescription: a BOM before the fence\n---\n# Always\nWrite tests.\n")
    layers.write("proj/CLAUDE.local.md", "# Local\nSandbox DB on 5433.\n")
    layers.write("proj/src/app.py", "print('hi')\n")
    mem = layers.memory
    layers.write(mem("user_role.md"), "---\nname: user-role\ndescription: The user is a backend engineer who prefers Go\ntype: user\n---\nBackend engineer.\n", 0)
    layers.write(mem("deploy.md"), "---\nname: deploy\ndescription: Staging deploys go through make ship and need the VPN\nmetadata:\n  type: project\n---\nRun `make ship`.\n**Why:** private API.\n**How to apply:** VPN first.", 3)
    layers.write(mem("review.md"), "---\nname: review\ndescription: Code review etiquette for the ingest service\ntype: Feedback\n---\nShort comments.\n", 12)
    lines = [f"- [Memory {i}](m{i:03d}.md) — hook {i}" for i in range(1, 206)]
    layers.write(mem("MEMORY.md"), "\n".join(lines) + "\n")
    query = f"how do I deploy the ingest service to staging READ:{layers.proj / 'src/app.py'}"
    layers.runs = [
        {"name": "base", "prompt": "hello there"},
        {"name": "recall", "prompt": query, "flags": {"tengu_moth_copse": True}, "recall_query": query, "reads": ["src/app.py"]},
    ]

    agents = Workspace(root, "agents")
    agents.write("proj/AGENTS.md", "# Root AGENTS.md\nNo CLAUDE.md in this project.\n")
    agents.write("proj/svc/AGENTS.md", "# svc/AGENTS.md\nLoaded after a read below svc/.\n")
    agents.write("proj/svc/main.go", "package main\n")
    agents.runs = [
        {"name": "read", "prompt": f"look READ:{agents.proj / 'svc/main.go'}", "reads": ["svc/main.go"]},
    ]

    trust = Workspace(root, "trust")
    trust.write("home/.claude/settings.json", json.dumps({"autoMemoryDirectory": "~/user-mem"}))
    trust.write("proj/.claude/settings.json", json.dumps({"autoMemoryDirectory": str(trust.root / "project-mem")}))
    trust.write("proj/CLAUDE.md", "# Trust\n")
    trust.write("project-mem/MEMORY.md", "- [Project](p.md) — from the project settings (-p is trusted)\n")
    trust.write("home/user-mem/MEMORY.md", "- [User](u.md) — from the user settings\n")
    trust.runs = [{"name": "base", "prompt": "hello there"}]
    return [layers, agents, trust]


def _blocks(message: dict) -> list[dict]:
    content = message.get("content")
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [b for b in content or [] if isinstance(b, dict)]


def _unwrap(text: str) -> str:
    head, tail = "<system-reminder>\n", "\n</system-reminder>"
    return text[len(head) : -len(tail)] if text.startswith(head) and text.endswith(tail) else text


def extract(requests: list[dict]) -> dict[str, object]:
    """What matters in one run's requests: the instruction block, the ``# Memory`` section,
    the lazy loads after each Read, the recall request and the injection."""
    def is_recall(body: dict) -> bool:
        return any("selecting memories" in b.get("text", "") for b in body.get("system") or [] if isinstance(b, dict))

    bodies = [r["body"] for r in requests if isinstance(r.get("body"), dict)]
    mains = [b for b in bodies if b.get("tools") and not is_recall(b)]
    recalls = [b for b in bodies if is_recall(b)]
    out: dict[str, object] = {"instruction_block": None, "memory_prompt": None, "lazy": [], "recall_request": None, "injection": None}
    if not mains:
        return out
    first = mains[0]
    for block in _blocks(first["messages"][0]):
        text = block.get("text", "")
        if "Codebase and user instructions are shown below." in text[:200]:
            out["instruction_block"] = _unwrap(text)
    system = "\n".join(b.get("text", "") for b in first.get("system") or [] if isinstance(b, dict))
    m = re.search(r"^# Memory\n.*?(?=\n\n# |\Z)", system, re.M | re.S)
    out["memory_prompt"] = m.group(0) if m else None
    last = max(mains, key=lambda b: len(b.get("messages", [])))
    lazy: list[dict[str, object]] = []
    for message in last["messages"]:
        for block in _blocks(message):
            if block.get("type") == "tool_use" and block.get("name") == "Read":
                lazy.append({"target": (block.get("input") or {}).get("file_path"), "messages": []})
                continue
            text = block.get("text") or ""
            if lazy and ("Contents of /" in text[:300]) and (text.startswith("<system-reminder>") or " hook additional context: " in text[:60]):
                lazy[-1]["messages"].append({"role": message.get("role"), "text": text})  # type: ignore[union-attr]
            elif text.startswith("Retrieved for possible relevance"):
                out["injection"] = text
    out["lazy"] = lazy
    if recalls:
        body = recalls[0]
        out["recall_request"] = {
            "model": body.get("model"),
            "max_tokens": body.get("max_tokens"),
            "system": [b for b in body.get("system", []) if not b.get("text", "").startswith("x-anthropic-billing-header")],
            "messages": body.get("messages"),
            "output_config": body.get("output_config"),
            "thinking": body.get("thinking"),
        }
    return out


def placeholders(value: object, root: str) -> object:
    """``value`` with the workspace's path and slug replaced by ``{root}`` / ``{root_slug}``."""
    if isinstance(value, str):
        return value.replace(slug(root), "{root_slug}").replace(root, "{root}")
    if isinstance(value, list):
        return [placeholders(v, root) for v in value]
    if isinstance(value, dict):
        return {str(placeholders(k, root)): placeholders(v, root) for k, v in value.items()}
    return value


def ensure_cli(work: Path, given: str | None) -> str:
    """The CLI to run: ``given``, else the pinned version installed with npm into ``work``."""
    if given:
        return given
    cli = work / "cc" / "node_modules" / ".bin" / "claude"
    if not cli.exists():
        (work / "cc").mkdir(parents=True, exist_ok=True)
        subprocess.run(["npm", "init", "-y"], cwd=work / "cc", check=True, capture_output=True)
        subprocess.run(["npm", "install", "--no-audit", "--no-fund", f"@anthropic-ai/claude-code@{VERSION}"], cwd=work / "cc", check=True)
    return str(cli)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--oracle", default=str(REPO.parent / "shared" / "oracle"), help="the oracle harness (run_oracle.py, mock_server.py)")
    ap.add_argument("--work", default="/tmp/memtui-capture", help="scratch dir (wiped)")
    ap.add_argument("--claude", default=None, help=f"the Claude Code {VERSION} CLI (default: installed with npm into --work)")
    a = ap.parse_args()
    oracle = Path(a.oracle)
    work = Path(a.work).resolve()
    scen = work / "scen"
    shutil.rmtree(scen, ignore_errors=True)
    shutil.rmtree(work / "captures", ignore_errors=True)
    scen.mkdir(parents=True)
    cli = ensure_cli(work, a.claude)
    version = subprocess.run([cli, "--version"], capture_output=True, text=True, check=True).stdout.strip()
    if not version.startswith(VERSION):
        sys.exit(f"{cli} is {version}, not {VERSION}")
    workspaces = build(scen)
    for ws in workspaces:
        (ws.root / "scenario.json").write_text(json.dumps(ws.spec(), indent=2))
    memtui = REPO / ".venv" / "bin" / "memtui"
    subprocess.run(
        [sys.executable, str(oracle / "run_oracle.py"), "--claude", cli, "--memtui", str(memtui if memtui.exists() else "memtui"),
         "--scen", str(scen), "--out", str(work / "captures")],
        check=True,
    )
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "transcripts").mkdir(exist_ok=True)
    for ws in workspaces:
        root = str(ws.root)
        files = ws.snapshot
        runs = []
        for run in ws.runs:
            path = work / "captures" / ws.name / f"cc_{run['name']}.requests.jsonl"
            requests = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
            runs.append({**run, **extract(requests)})
        data = {"cli_version": VERSION, "captured_at": time.time(), "cwd": str(ws.cwd), "files": files, "runs": runs}
        (OUT / f"{ws.name}.json").write_text(json.dumps(placeholders(data, root), indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        if ws.name == "layers":
            for session in (ws.home / ".claude" / "projects").glob("*/*.jsonl"):
                text = session.read_text(encoding="utf-8")
                label = "recall" if '"relevant_memories"' in text else "base"
                (OUT / "transcripts" / f"{label}.jsonl").write_text(str(placeholders(text, root)), encoding="utf-8")
    print(f"captures written to {OUT}")


if __name__ == "__main__":
    main()
