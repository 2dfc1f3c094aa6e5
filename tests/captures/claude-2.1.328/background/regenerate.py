#!/usr/bin/env python3
"""Regenerate the captures of Claude Code 2.1.328's own background memory work (auto-dream and
auto-memory extraction) that the tests compare memtui against.

    python tests/captures/claude-2.1.328/background/regenerate.py \
        [--oracle ../shared/oracle/dream-extract] [--claude /tmp/oracle/cc/node_modules/.bin/claude] \
        [--work /tmp/memtui-bgcap]

Needs the real CLI (``--claude``, or ``$CLAUDE``), tmux, and the oracle's scripts
(``--oracle``: ``build.py`` makes a scenario, ``mock_dream.py`` answers the CLI's requests on
127.0.0.1, ``run_cc.py`` runs the CLI once, ``scenctl.py``/``setflags.py``/``variant.py`` set the
lock, the transcripts' ages and the flag cache). The runs are the oracle's ``run_all.sh``, in its
order, on a tmux socket of their own; around each run this script records:

- ``before``: what the gates read — the flag cache (``cachedGrowthBookFeatures`` of
  ``~/.claude.json``), the user settings, the lock (content and age), every ``*.jsonl`` of the
  project dir in directory order (name, age, size), the memory files (name, age, size);
- ``after``: the lock and the project dir again;
- the CLI's verdict: the requests it sent (``kinds``: main/dream/extract, with the time of each
  relative to ``before``), its ``[autoDream]`` / ``[extractMemories]`` debug lines (time
  relative to ``before``), and for the requests themselves the dream prompt, the extraction
  prompts, the ``memory_update`` notices of the next main request, the dream's tool exchange
  and the system prompt's ``# Memory`` section of a dream and of an extraction (``prompts/``);
- the CLI's own session transcripts written during the runs that kept one
  (``transcripts/<run>.<session>.jsonl.gz``, gzipped: each holds the request bodies and is
  ~170 KB).

Ages are seconds before their snapshot (``age_s``), whose time is ``at`` (epoch s, the CLI's
clock, which its transcripts' timestamps share), so a test can rebuild the state at a frozen
clock. Everything goes to ``runs.json`` next to this script.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[3]
SOCKET = f"memtui-bgcap-{os.getpid()}"
DREAM = {"tengu_onyx_plover": {"enabled": True, "available": True}}
# The CLI's own transcripts are kept for these runs (test input for the transcript reader and
# for the failed-dream trap).
KEEP_TRANSCRIPTS = ("gate_fail", "both", "x_tmux", "extract_p", "x_p_prose", "x_p_three", "x_p_direct")
# The system prompt's "# Memory" section is kept for these (the one of a dream, of an extraction).
KEEP_MEMORY_SECTION = ("dream1", "extract_p")


class Harness:
    def __init__(self, oracle: Path, claude: str, work: Path) -> None:
        self.scripts = oracle / "scripts"
        self.claude = claude
        self.work = work
        (work / "scen").mkdir(parents=True, exist_ok=True)
        (work / "out").mkdir(parents=True, exist_ok=True)
        self.runs: list[dict[str, Any]] = []
        self.prompts = HERE / "prompts"
        self.transcripts = HERE / "transcripts"
        for d in (self.prompts, self.transcripts):
            if d.exists():
                shutil.rmtree(d)
            d.mkdir(parents=True)

    def py(self, script: str, *args: str) -> str:
        return subprocess.run([sys.executable, str(self.scripts / script), *args], check=True, capture_output=True, text=True).stdout

    def scen(self, name: str) -> Path:
        return self.work / "scen" / name

    def spec(self, name: str) -> dict[str, Any]:
        return json.loads((self.scen(name) / "scenario.json").read_text())

    def build(self, name: str, *args: str) -> None:
        self.py("build.py", "--root", str(self.work / "scen"), "--name", name, *args)

    def ctl(self, name: str, *args: str) -> None:
        self.py("scenctl.py", str(self.scen(name)), *args)

    def flags(self, name: str, value: dict[str, Any]) -> None:
        self.py("setflags.py", str(self.scen(name)), json.dumps(value))

    def variant(self, name: str, flag: str, setting: str) -> None:
        self.py("variant.py", str(self.scen(name)), flag, setting)

    def run(self, run: str, scen: str, mode: str, prompts: list[str], *, wait: float, wait_kind: str = "", mock_env: list[str] = ()) -> None:
        spec = self.spec(scen)
        before = snapshot(spec)
        out = self.work / "out" / run
        argv = ["--scen", str(self.scen(scen)), "--out", str(out), "--mode", mode, "--wait", str(wait)]
        for p in prompts:
            argv += ["--prompt", p]
        if wait_kind:
            argv += ["--wait-kind", wait_kind]
        for kv in mock_env:
            argv += ["--mock-env", kv]
        code = (
            "import sys, runpy; sys.path.insert(0, %r); import run_cc; run_cc.SOCK = %r; "
            "sys.argv = ['run_cc.py'] + %r; run_cc.main()" % (str(self.scripts), SOCKET, argv)
        )
        env = dict(os.environ, CLAUDE=self.claude)
        subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True, env=env, timeout=400)
        after = snapshot(spec)
        record = {
            "run": run,
            "scenario": scen,
            "mode": mode,
            "prompts": prompts,
            "mock_env": list(mock_env),
            "paths": {k: spec[k] for k in ("home", "cwd", "project_dir", "memory_dir")},
            "before": {"at": round(before["t"], 3), **before["state"]},
            "after": {"at": round(after["t"], 3), **after["state"]},
        }
        record.update(outcome(run, out, before["t"], spec, self.prompts))
        if run in KEEP_TRANSCRIPTS:
            record["transcripts"] = self.keep_transcripts(run, spec, before["state"])
        self.runs.append(record)
        print(run, [k[0] for k in record["kinds"]], record["after"]["lock"], flush=True)

    def keep_transcripts(self, run: str, spec: dict[str, Any], before: dict[str, Any]) -> list[str]:
        old = {s["name"] for s in before["sessions"]}
        kept = []
        for name in sorted(os.listdir(spec["project_dir"])):
            if not name.endswith(".jsonl") or name in old:
                continue
            target = self.transcripts / f"{run}.{name}.gz"
            with open(Path(spec["project_dir"]) / name, "rb") as src, gzip.GzipFile(target, "wb", mtime=0) as dst:
                shutil.copyfileobj(src, dst)
            kept.append(target.name)
        return kept


def snapshot(spec: dict[str, Any]) -> dict[str, Any]:
    """What the gates read, with ages relative to now."""
    now = time.time()
    home = Path(spec["home"])
    try:
        cj = json.loads((home / ".claude.json").read_text())
    except (OSError, ValueError):
        cj = {}
    try:
        settings = json.loads((home / ".claude" / "settings.json").read_text())
    except (OSError, ValueError):
        settings = None
    mem = Path(spec["memory_dir"])
    lock = mem / ".consolidate-lock"
    if lock.exists():
        st = lock.stat()
        lock_state = {"exists": True, "content": lock.read_text(), "age_s": round(now - st.st_mtime, 3)}
    else:
        lock_state = {"exists": False}
    sessions = []
    pdir = Path(spec["project_dir"])
    for name in os.listdir(pdir):  # directory order, as the CLI lists them
        p = pdir / name
        if name.endswith(".jsonl") and p.is_file():
            st = p.stat()
            sessions.append({"name": name, "age_s": round(now - st.st_mtime, 3), "size": st.st_size})
    memories = []
    if mem.is_dir():
        for p in sorted(mem.iterdir()):
            if p.is_file() and p.name != ".consolidate-lock":
                st = p.stat()
                memories.append({"name": p.name, "age_s": round(now - st.st_mtime, 3), "size": st.st_size})
    return {
        "t": now,
        "state": {
            "flags": cj.get("cachedGrowthBookFeatures"),
            "user_settings": settings,
            "lock": lock_state,
            "sessions": sessions,
            "memories": memories,
        },
    }


_DEBUG = re.compile(r"^(\d{4}-\d\d-\d\dT[\d:.]+Z) \[DEBUG\] (\[(?:autoDream|extractMemories|autoMem)\].*)$")


def _texts(message: dict[str, Any]) -> list[str]:
    c = message.get("content")
    if isinstance(c, str):
        return [c]
    return [b.get("text", "") for b in c or [] if isinstance(b, dict) and b.get("type") == "text"]


def tool_exchange(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every tool call of a fork's conversation with the result the CLI gave it, after the
    fork's prompt (the main conversation's own calls come before it)."""
    start = max((i for i, m in enumerate(messages) if m.get("role") == "user" and any(
        mark in t for t in _texts(m) for mark in ("# Dream: Memory Consolidation", "You are now acting as the memory extraction subagent"))), default=0)
    exchange = []
    uses: dict[str, dict[str, Any]] = {}
    for m in messages[start:]:
        if not isinstance(m.get("content"), list):
            continue
        for b in m["content"]:
            if b.get("type") == "tool_use":
                uses[b["id"]] = {"name": b["name"], "input": b["input"]}
            elif b.get("type") == "tool_result" and b.get("tool_use_id") in uses:
                c = b.get("content")
                text = c if isinstance(c, str) else "\n".join(x.get("text", "") for x in c or [] if isinstance(x, dict))
                exchange.append({**uses[b["tool_use_id"]], "is_error": b.get("is_error") is True, "result": text})
    return exchange


def outcome(run: str, out: Path, t0: float, spec: dict[str, Any], prompts_dir: Path) -> dict[str, Any]:
    """The CLI's side of one run, from its requests and its debug log."""
    reqs = []
    log = out / "requests.jsonl"
    if log.exists():
        for line in log.read_text().splitlines():
            try:
                reqs.append(json.loads(line))
            except ValueError:
                continue
    kinds = [[r.get("kind"), r.get("step"), round(r.get("t", t0) - t0, 3)] for r in reqs]
    debug = []
    dbg = out / "debug.txt"
    if dbg.exists():
        for line in dbg.read_text(errors="replace").splitlines():
            m = _DEBUG.match(line)
            if m:
                at = datetime.strptime(m.group(1), "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=timezone.utc).timestamp()
                debug.append({"offset_s": round(at - t0, 3), "text": m.group(2)})
    files: dict[str, Any] = {}
    dreams = [r for r in reqs if r.get("kind") == "dream"]
    if dreams:
        first = dreams[0]["body"]
        prompt = _texts(first["messages"][-1])[-1]
        name = f"{run}.dream_prompt.txt"
        (prompts_dir / name).write_text(prompt, encoding="utf-8")
        files["dream_prompt"] = name
        files["dream_request"] = {
            "model": first.get("model"),
            "max_tokens": first.get("max_tokens"),
            "n_messages": len(first["messages"]),
            "requests": len(dreams),
        }
        exchange = tool_exchange(dreams[-1]["body"]["messages"])
        if exchange:
            name = f"{run}.dream_tools.json"
            (prompts_dir / name).write_text(json.dumps(exchange, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
            files["dream_tools"] = name
    forks = [r for r in reqs if r.get("kind") in ("dream", "extract")]
    if forks and run in KEEP_MEMORY_SECTION:
        system = forks[0]["body"].get("system")
        text = "\n".join(b.get("text", "") for b in system if isinstance(b, dict)) if isinstance(system, list) else str(system or "")
        start = text.find("# Memory\n")
        if start != -1:
            end = text.find("\n# ", start + 1)
            name = f"{run}.memory_section.txt"
            (prompts_dir / name).write_text(text[start : end if end != -1 else None], encoding="utf-8")
            files["memory_section"] = name
    extracts = [r for r in reqs if r.get("kind") == "extract" and r.get("step") == 0]
    passes = [r for r in reqs if r.get("kind") == "extract"]
    if passes and run in KEEP_MEMORY_SECTION:
        first_pass = passes[: next((i for i, r in enumerate(passes[1:], 1) if r.get("step") == 0), len(passes))]
        exchange = tool_exchange(first_pass[-1]["body"]["messages"])
        if exchange:
            name = f"{run}.extract_tools.json"
            (prompts_dir / name).write_text(json.dumps(exchange, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
            files["extract_tools"] = name
        files["extract_request"] = {"model": passes[0]["body"].get("model"), "max_tokens": passes[0]["body"].get("max_tokens")}
    for i, r in enumerate(extracts):
        name = f"{run}.extract_prompt.{i}.txt"
        (prompts_dir / name).write_text(_texts(r["body"]["messages"][-1])[-1], encoding="utf-8")
        files.setdefault("extract_prompts", []).append(name)
    mains = [r for r in reqs if r.get("kind") == "main"]
    for i, r in enumerate(mains):
        notices = [t for m in r["body"].get("messages", []) if m.get("role") == "system" for t in _texts(m) if "updated your memory directory" in t]
        if notices:
            name = f"{run}.notices.main{i}.txt"
            (prompts_dir / name).write_text("\n\n".join(notices), encoding="utf-8")
            files.setdefault("notices", []).append(name)
    return {"kinds": kinds, "debug": debug, "files": files}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--oracle", type=Path, default=REPO.parent / "shared" / "oracle" / "dream-extract")
    ap.add_argument("--claude", default=os.environ.get("CLAUDE", "/tmp/oracle/cc/node_modules/.bin/claude"))
    ap.add_argument("--work", type=Path, default=None)
    a = ap.parse_args()
    version = subprocess.run([a.claude, "--version"], capture_output=True, text=True).stdout.strip()
    if not version.startswith("2.1.328"):
        raise SystemExit(f"{a.claude}: version {version!r}, these captures are of 2.1.328")
    work = a.work or Path(tempfile.mkdtemp(prefix="memtui-bgcap-"))
    h = Harness(a.oracle, a.claude, work)

    # --- auto-dream (interactive only) ---
    h.build("dream", "--flags", "dream")
    h.run("dream1", "dream", "tmux", ["hello there, what is in this repo?"], wait=120, wait_kind="dream")
    h.run("dream2_again", "dream", "tmux", ["hello again"], wait=15)
    h.build("gate", "--sessions", "7", "--flags", "dream")
    h.ctl("gate", "lock", "99999", "25")
    h.ctl("gate", "sessions", "30", "--to", "4")
    h.ctl("gate", "sessions", "2", "--from", "4")
    h.run("gate_4of5", "gate", "tmux", ["hello there", "second prompt"], wait=10)
    h.ctl("gate", "sessions", "1", "--to", "1")
    h.run("gate_fail", "gate", "tmux", ["hello there"], wait=40, wait_kind="dream", mock_env=["MOCK_DREAM_FAIL=1"])
    h.ctl("gate", "lock", "99999", "25")
    h.run("gate_ok", "gate", "tmux", ["hello there"], wait=40, wait_kind="dream")
    variants = [
        ("p_mode", '{"enabled":true,"available":true}', "true"),
        ("setting_false", '{"enabled":true,"available":true}', "false"),
        ("available_only_setting_true", '{"available":true}', "true"),
        ("available_only_setting_unset", '{"available":true}', "unset"),
        ("enabled_setting_unset", '{"enabled":true}', "unset"),
        ("no_flag_setting_true", "none", "true"),
    ]
    for name, flag, setting in variants:
        h.build(f"v_{name}", "--flags", "dream")
        h.variant(f"v_{name}", flag, setting)
        h.run(f"v_{name}", f"v_{name}", "print" if name == "p_mode" else "tmux", ["hello there"], wait=12, wait_kind="dream")
    live = subprocess.Popen(["sleep", "600"])
    try:
        for name, pid in (("pid1", "1"), ("dead", "99999"), ("live", str(live.pid))):
            h.build(f"lock_{name}", "--flags", "dream", "--sessions", "3")
            h.flags(f"lock_{name}", {"tengu_onyx_plover": {"enabled": True, "minHours": 0.25, "minSessions": 2}})
            h.ctl(f"lock_{name}", "lock", pid, "0.5")
            h.ctl(f"lock_{name}", "sessions", "0.17")
            h.run(f"lock_{name}", f"lock_{name}", "tmux", ["hello there"], wait=10, wait_kind="dream")
    finally:
        live.kill()
        live.wait()

    # --- extraction ---
    h.build("extract_p", "--flags", "extract")
    h.run("extract_p", "extract_p", "print", ["remember that we deploy on Fridays"], wait=60)
    h.build("x_p_noslate", "--flags", "extract")
    h.flags("x_p_noslate", {"tengu_passport_quail": True})
    h.run("x_p_noslate", "x_p_noslate", "print", ["remember that we deploy on Fridays"], wait=60)
    h.build("x_p_prose", "--flags", "extract")
    h.run("x_p_prose", "x_p_prose", "print", ["hello there"], wait=60)
    h.build("x_p_three", "--flags", "extract")
    h.run("x_p_three", "x_p_three", "print", ["hello there friend"], wait=60)
    h.build("x_p_direct", "--flags", "extract")
    mem = h.spec("x_p_direct")["memory_dir"]
    h.run("x_p_direct", "x_p_direct", "print", [f"remember that we deploy on Fridays WRITEMEM:{mem}/project_main_wrote.md"], wait=60)
    h.build("x_tmux", "--flags", "extract")
    h.flags("x_tmux", {"tengu_passport_quail": True})
    h.run("x_tmux", "x_tmux", "tmux", ["remember that we deploy on Fridays", "also remember that the staging URL is staging.example.com"], wait=15)
    h.build("both", "--flags", "dream")
    h.flags("both", {**DREAM, "tengu_passport_quail": True})
    h.run("both", "both", "tmux", ["remember that we deploy on Fridays", "thanks, what else do you know?"], wait=15)

    data = {"cli": version, "captured_at": datetime.now().astimezone().isoformat(timespec="seconds"), "runs": h.runs}
    (HERE / "runs.json").write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {HERE / 'runs.json'} ({len(h.runs)} runs); scratch: {work}")


if __name__ == "__main__":
    main()
