#!/usr/bin/env python3
"""Real Claude Code transcripts for memtui's memory-store audit (SPEC §14): which memory dir each
session was told and loaded, which it wrote, and what each sub-agent loaded.

Usage:
  CLAUDE=/tmp/oracle/cc/node_modules/.bin/claude python3 scripts/oracle_stores.py [--work /tmp/oracle-stores] [NAME...]
  python3 scripts/oracle_stores.py --compare [NAME...]     (memtui against the last run's workspaces)

Each scenario gets its own HOME and workspace under ``WORK/<name>/`` and runs one or more ``claude
-p`` sessions against a mock of the Messages API (``../shared/oracle/mock_server.py`` plus
scripted tool calls): the first user prompt's directives ``WRITE:<abs path>`` and
``AGENT:<subagent_type>`` become one Write / Agent tool call per turn, in order, then a text
answer. Between sessions a scenario may change the workspace (move a worktree, move the
checkout, switch auto memory off). Afterwards every transcript under ``home/.claude/projects``
is copied to ``tests/captures/claude-2.1.332/stores/<name>/`` with its path relative to HOME
(``api-request`` bodies are dropped: they copy the conversation and make the files large), and a
``scenario.json`` records the layout (``tests/support/stores.py`` lays it out again elsewhere).
Then memtui's ``stores --json`` runs on each live workspace (real git metadata, the CLI's own
paths) and is compared with ``EXPECT`` and with the dir the CLI told the session that reads now:
MATCH/DIFFER per point and a ``TOTAL`` line.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import threading
import uuid
from http.server import ThreadingHTTPServer
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO.parent / "shared" / "oracle"))
import mock_server as ms  # noqa: E402

sys.path.insert(0, str(HERE))
from capture_usage import _prompt  # noqa: E402  (the first human prompt of a main-loop request)

CLAUDE = os.environ.get("CLAUDE", "/tmp/oracle/cc/node_modules/.bin/claude")
CAPS = REPO / "tests" / "captures" / "claude-2.1.332" / "stores"
RELEASE = "2.1.332"
BODY = "---\nname: {name}\ndescription: {name} for the store audit\nmetadata:\n  type: project\n---\n\n{name} body.\n"


def _directives(body: dict) -> list[tuple[str, str]]:
    """The ``WRITE:<path>`` / ``AGENT:<type>`` directives of the first human prompt (found by its
    ``WRITE:``: a prompt here that starts sub-agents writes a memory too)."""
    return re.findall(r"\b(WRITE|AGENT):(\S+)", _prompt(body))


def _messages(self, body):
    if ms._is_recall(body) or not body.get("tools"):
        return _orig(self, body)
    steps = _directives(body)
    done = sum(1 for m in body.get("messages", []) for b in (m.get("content") if isinstance(m.get("content"), list) else [])
               if isinstance(b, dict) and b.get("type") == "tool_result")
    if done >= len(steps):
        return _orig(self, body)
    kind, arg = steps[done]
    mid = "msg_mock_" + uuid.uuid4().hex[:16]
    if kind == "WRITE":
        name = Path(arg).stem
        return self._tool_use(body, model=body.get("model", "m"), mid=mid, name="Write",
                              inp={"file_path": arg, "content": BODY.format(name=name)})
    return self._tool_use(body, model=body.get("model", "m"), mid=mid, name="Agent",
                          inp={"description": f"{arg} helper", "prompt": "Reply with the word OK.", "subagent_type": arg})


_orig = ms.Handler._messages
ms.Handler._messages = _messages


def _serve(log: Path) -> tuple[ThreadingHTTPServer, int]:
    srv = ThreadingHTTPServer(("127.0.0.1", 0), ms.Handler)
    srv.logfile = str(log)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv, srv.server_address[1]


def git(*args: str, cwd: Path) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True,
                   env={**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@e", "GIT_COMMITTER_NAME": "t",
                        "GIT_COMMITTER_EMAIL": "t@e"})


def slug(p: Path | str) -> str:
    return re.sub(r"[^A-Za-z0-9]", "-", str(p))


def w(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def repo(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    git("init", "-q", "-b", "main", cwd=path)
    w(path / "README.md", "x\n")
    git("add", "-A", cwd=path)
    git("commit", "-q", "-m", "init", cwd=path)
    return path


def store(home: Path, key: Path | str, names: list[str]) -> Path:
    mem = home / ".claude" / "projects" / slug(key) / "memory"
    for n in names:
        w(mem / f"{n}.md", BODY.format(name=n))
    w(mem / "MEMORY.md", "".join(f"- [{n}]({n}.md) — {n}\n" for n in names))
    return mem


class Scenario:
    def __init__(self, work: Path, name: str) -> None:
        self.name = name
        self.root = work / name
        shutil.rmtree(self.root, ignore_errors=True)
        self.home = self.root / "home"
        w(self.home / ".claude.json", json.dumps({"hasCompletedOnboarding": True, "numStartups": 1,
                                                   "firstStartTime": "2026-01-01T00:00:00.000Z"}))
        self.sessions: list[dict] = []
        self.layout: dict = {"name": name, "root": str(self.root), "home": str(self.home)}

    def run(self, cwd: Path, prompt: str, *, args: tuple[str, ...] = (), env: dict | None = None, label: str = "") -> None:
        log = self.root / f"requests-{len(self.sessions)}.jsonl"
        srv, port = _serve(log)
        try:
            e = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(self.home), "LANG": "C.UTF-8", "TERM": "dumb",
                 "ANTHROPIC_BASE_URL": f"http://127.0.0.1:{port}", "ANTHROPIC_API_KEY": "sk-ant-test",
                 "DISABLE_TELEMETRY": "1", "DISABLE_AUTOUPDATER": "1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
                 "DISABLE_ERROR_REPORTING": "1", **(env or {})}
            r = subprocess.run([CLAUDE, "-p", prompt, "--output-format", "json", *args], cwd=cwd, env=e,
                               capture_output=True, timeout=240, stdin=subprocess.DEVNULL)
        finally:
            srv.shutdown()
        out = r.stdout.decode(errors="replace")
        try:
            sid = json.loads(out).get("session_id")
        except ValueError:
            sid = None
        self.sessions.append({"label": label, "cwd": str(cwd), "args": list(args), "env": env or {}, "rc": r.returncode, "session_id": sid})
        print(f"  {self.name}/{label}: rc={r.returncode} session={sid} {r.stderr.decode(errors='replace')[:200]}")

    def collect(self) -> None:
        dest = CAPS / self.name
        shutil.rmtree(dest, ignore_errors=True)
        projects = self.home / ".claude" / "projects"
        for p in sorted(projects.rglob("*")):
            if not p.is_file():
                continue
            rel = p.relative_to(self.home)
            if p.suffix == ".jsonl":
                kept = [ln for ln in p.read_text(encoding="utf-8").splitlines(keepends=True)
                        if not ln.startswith('{"type":"api-request')]
                w(dest / "home" / rel, "".join(kept))
            elif p.suffix in (".json", ".md"):
                w(dest / "home" / rel, p.read_text(encoding="utf-8"))
        for extra in (".claude/settings.json",):
            if (self.home / extra).is_file():
                w(dest / "home" / extra, (self.home / extra).read_text(encoding="utf-8"))
        for p in sorted(self.root.rglob("*")):  # the workspace's own files (git metadata aside)
            rel = p.relative_to(self.root)
            own = rel.name == ".claude.json" or {"backups", "plugins"} & set(rel.parts)  # the CLI's own state: ids, caches
            if p.is_file() and rel.parts[0] != "home" and ".git" not in rel.parts and not rel.name.startswith("requests-") and not own:
                text = p.read_text(encoding="utf-8")
                if p.suffix == ".jsonl":
                    text = "".join(ln for ln in text.splitlines(keepends=True) if not ln.startswith('{"type":"api-request'))
                w(dest / "work" / rel, text)
        self.layout["sessions"] = self.sessions
        w(dest / "scenario.json", json.dumps(self.layout, indent=2) + "\n")


def healthy(s: Scenario) -> None:
    """One repository, sessions at its root: one writes a memory and starts a general-purpose
    and an Explore sub-agent; every session reads the store it writes."""
    proj = repo(s.root / "proj")
    mem = store(s.home, proj, ["deploy", "style"])
    s.layout.update(project=str(proj))
    s.run(proj, "hello there")
    s.run(proj, f"save this WRITE:{mem}/build.md AGENT:general-purpose AGENT:Explore", label="write+agents")


def subdir(s: Scenario) -> None:
    """A session started in repo/svc reads the repository's store but writes into the store of
    its own cwd's slug (allowed without a prompt), which nothing reads."""
    proj = repo(s.root / "proj")
    store(s.home, proj, ["deploy"])
    svc = proj / "svc"
    w(svc / "main.py", "print(1)\n")
    stray = s.home / ".claude" / "projects" / slug(svc) / "memory"
    s.layout.update(project=str(proj), stray=str(stray))
    s.run(proj, "hello there", label="root")
    s.run(svc, f"remember WRITE:{stray}/svc_notes.md", label="svc-write")


def worktree(s: Scenario) -> None:
    """A linked worktree moved without `git worktree repair`: its back-link is broken, so its
    sessions read (and write) a store of their own."""
    proj = repo(s.root / "proj")
    store(s.home, proj, ["deploy"])
    git("worktree", "add", "-q", str(s.root / "wt"), "-b", "feature", cwd=proj)
    s.run(s.root / "wt", "hello there", label="linked")
    (s.root / "wt").rename(s.root / "wt-moved")
    moved = s.root / "wt-moved"
    own = s.home / ".claude" / "projects" / slug(moved) / "memory"
    s.layout.update(project=str(proj), worktree=str(moved), worktree_store=str(own))
    s.run(moved, f"remember WRITE:{own}/wt_notes.md", label="moved-write")
    s.run(proj, "hello there", label="main")


def trust(s: Scenario) -> None:
    """autoMemoryDirectory in the project's settings.local.json: honoured by a -p session, not
    by one that ignores persisted trust."""
    proj = repo(s.root / "proj")
    shared = s.root / "shared-mem"
    w(shared / "deploy.md", BODY.format(name="deploy"))
    w(shared / "MEMORY.md", "- [deploy](deploy.md) — deploy\n")
    w(proj / ".claude" / "settings.local.json", json.dumps({"autoMemoryDirectory": str(shared)}))
    default = s.home / ".claude" / "projects" / slug(proj) / "memory"
    s.layout.update(project=str(proj), setting_dir=str(shared), default_store=str(default))
    s.run(proj, f"remember WRITE:{shared}/trusted_note.md", label="trusted")
    s.run(proj, f"remember WRITE:{default}/untrusted_note.md", args=("--ignore-persisted-trust",), label="untrusted")


def moved(s: Scenario) -> None:
    """A checkout moved to another path: its old store keeps the memories, the new path gets a
    store of its own."""
    old = repo(s.root / "old-place" / "proj")
    mem = store(s.home, old, ["deploy", "style"])
    s.run(old, f"save WRITE:{mem}/before_move.md", label="before")
    new = s.root / "new-place" / "proj"
    new.parent.mkdir(parents=True)
    old.rename(new)
    shutil.rmtree(s.root / "old-place")
    s.layout.update(project=str(new), old_project=str(old), old_store=str(mem))
    s.run(new, "hello there", label="after")


def automem_off(s: Scenario) -> None:
    """A memory plugin's installer puts CLAUDE_CODE_DISABLE_AUTO_MEMORY=1 in the user settings'
    env block: the sessions after it neither get the memory section nor the index."""
    proj = repo(s.root / "proj")
    store(s.home, proj, ["deploy"])
    s.layout.update(project=str(proj))
    s.run(proj, "hello there", label="on")
    w(s.home / ".claude" / "settings.json", json.dumps({"env": {"CLAUDE_CODE_DISABLE_AUTO_MEMORY": "1"},
                                                         "enabledPlugins": {"claude-mem@thedotmack": True}}, indent=2))
    s.run(proj, "hello there", label="off")


def ignored(s: Scenario) -> None:
    """autoMemoryDirectory set to a relative path in the user settings: invalid, skipped
    silently; the session reads the default store."""
    proj = repo(s.root / "proj")
    store(s.home, proj, ["deploy"])
    w(s.home / ".claude" / "settings.json", json.dumps({"autoMemoryDirectory": "notes/memory"}, indent=2))
    s.layout.update(project=str(proj))
    s.run(proj, "hello there", label="ignored")


def committed(s: Scenario) -> None:
    """A team's committed .claude/memory/ in the repository: nothing loads it."""
    proj = repo(s.root / "proj")
    w(proj / ".claude" / "memory" / "team_rule.md", BODY.format(name="team_rule"))
    w(proj / ".claude" / "memory" / "MEMORY.md", "- [team_rule](team_rule.md) — team rule\n")
    git("add", "-A", cwd=proj)
    git("commit", "-q", "-m", "team memory", cwd=proj)
    store(s.home, proj, ["deploy"])
    s.layout.update(project=str(proj))
    s.run(proj, "hello there", label="root")


def worktree_ok(s: Scenario) -> None:
    """A linked worktree with its link intact: its sessions read and write the main checkout's
    store (nothing to say)."""
    proj = repo(s.root / "proj")
    mem = store(s.home, proj, ["deploy"])
    git("worktree", "add", "-q", str(s.root / "wt"), "-b", "feature", cwd=proj)
    s.layout.update(project=str(proj), worktree=str(s.root / "wt"))
    s.run(s.root / "wt", f"remember WRITE:{mem}/from_wt.md", label="wt-write")
    s.run(proj, "hello there", label="main")


def two_subdirs(s: Scenario) -> None:
    """Sessions in two subfolders write into their own folders' stores; one more session in a
    third subfolder only reads."""
    proj = repo(s.root / "proj")
    store(s.home, proj, ["deploy"])
    strays = []
    for sub in ("api", "web"):
        (proj / sub).mkdir()
        stray = s.home / ".claude" / "projects" / slug(proj / sub) / "memory"
        strays.append(str(stray))
        s.run(proj / sub, f"remember WRITE:{stray}/{sub}_notes.md", label=f"{sub}-write")
    (proj / "docs").mkdir()
    s.run(proj / "docs", "hello there", label="docs-read")
    s.layout.update(project=str(proj), strays=strays)


def config_dir(s: Scenario) -> None:
    """CLAUDE_CONFIG_DIR moves every store; the sessions read and write there (nothing to say)."""
    proj = repo(s.root / "proj")
    cfg = s.root / "cfg"
    mem = cfg / "projects" / slug(proj) / "memory"
    w(mem / "deploy.md", BODY.format(name="deploy"))
    w(mem / "MEMORY.md", "- [deploy](deploy.md) — deploy\n")
    w(cfg / ".claude.json", json.dumps({"hasCompletedOnboarding": True, "numStartups": 1}))
    s.layout.update(project=str(proj), config_dir=str(cfg))
    s.run(proj, f"save WRITE:{mem}/cfg_note.md", env={"CLAUDE_CONFIG_DIR": str(cfg)}, label="cfg")


def project_dir_name(s: Scenario) -> None:
    """CLAUDE_CODE_PROJECT_DIR_NAME with CLAUDE_CONFIG_DIR: the store is named by it."""
    proj = repo(s.root / "proj")
    cfg = s.root / "cfg"
    w(cfg / ".claude.json", json.dumps({"hasCompletedOnboarding": True, "numStartups": 1}))
    s.layout.update(project=str(proj), config_dir=str(cfg))
    s.run(proj, "hello there", env={"CLAUDE_CONFIG_DIR": str(cfg), "CLAUDE_CODE_PROJECT_DIR_NAME": "my-named-project"}, label="named")


def user_setting(s: Scenario) -> None:
    """autoMemoryDirectory in the user settings: every session reads and writes there, trusted
    or not (nothing to say)."""
    proj = repo(s.root / "proj")
    shared = s.root / "notes-mem"
    w(shared / "deploy.md", BODY.format(name="deploy"))
    w(shared / "MEMORY.md", "- [deploy](deploy.md) — deploy\n")
    w(s.home / ".claude" / "settings.json", json.dumps({"autoMemoryDirectory": str(shared)}))
    s.layout.update(project=str(proj), setting_dir=str(shared))
    s.run(proj, f"save WRITE:{shared}/a_note.md", label="trusted")
    s.run(proj, "hello there", args=("--ignore-persisted-trust",), label="untrusted")


def automem_enabled_false(s: Scenario) -> None:
    """autoMemoryEnabled: false in the project's settings."""
    proj = repo(s.root / "proj")
    store(s.home, proj, ["deploy"])
    w(proj / ".claude" / "settings.json", json.dumps({"autoMemoryEnabled": False}))
    s.layout.update(project=str(proj))
    s.run(proj, "hello there", label="off")


SCENARIOS = {f.__name__: f for f in (healthy, subdir, worktree, trust, moved, automem_off, ignored, committed,
                                     worktree_ok, two_subdirs, config_dir, project_dir_name, user_setting, automem_enabled_false)}


# What memtui must say of each scenario: the findings (code, cause), and the session whose told
# dir is the one the agent reads now (None: auto memory is off, no session is told).
EXPECT: dict[str, tuple[list[tuple[str, str | None]], str | None]] = {
    "healthy": ([], "write+agents"),
    "subdir": ([("store-written-not-read", "subdir")], "root"),
    "worktree": ([("store-split", "worktree-link")], "main"),
    "trust": ([("store-split", "trust")], "trusted"),
    "moved": ([("store-split", "moved")], "after"),
    "automem_off": ([("auto-memory-off", "switch")], None),
    "ignored": ([("memory-setting-ignored", "setting")], "ignored"),
    "committed": ([("store-never-read", "committed")], "root"),
    "worktree_ok": ([], "main"),
    "two_subdirs": ([("store-written-not-read", "subdir"), ("store-written-not-read", "subdir")], "docs-read"),
    "config_dir": ([], "cfg"),
    "project_dir_name": ([], "named"),
    "user_setting": ([], "trusted"),
    "automem_enabled_false": ([("auto-memory-off", "switch")], None),
}
_TOLD = re.compile(r"persistent file-based memory at `([^`]*)`")


def _told(home: Path, layout: dict, label: str) -> str | None:
    """The dir the CLI told the session ``label`` (its own transcript, wherever it is filed)."""
    sid = next(x["session_id"] for x in layout["sessions"] if x["label"] == label)
    roots = [home, Path(layout["root"])]
    for root in roots:
        for path in root.rglob(f"{sid}.jsonl"):
            found = _TOLD.findall(path.read_text(encoding="utf-8"))
            if found:
                return found[-1].rstrip("/")
    return None


def compare(work: Path, names: list[str], memtui: str) -> int:
    """memtui's ``stores --json`` on each live scenario against what the CLI did: MATCH/DIFFER
    per point, then ``TOTAL``. Returns the number of DIFFERs."""
    match = differ = 0
    for name in names:
        layout = json.loads((CAPS / name / "scenario.json").read_text())
        home = Path(layout["home"])
        env = {"PATH": os.environ.get("PATH", ""), "HOME": str(home), "MEMTUI_STATE_DIR": str(work / "memtui-state"), "LANG": "C.UTF-8"}
        for x in layout["sessions"]:
            env.update(x.get("env", {}))
        done = subprocess.run([memtui, "stores", "--json", "--flavor", "claude", "--release", RELEASE], cwd=layout["project"], env=env, capture_output=True, text=True, timeout=120)
        try:
            data = json.loads(done.stdout)
        except ValueError:
            print(f"DIFFER {name}: memtui said no JSON ({done.stderr.strip()[:200]})")
            differ += 2
            continue
        want_findings, reads_label = EXPECT[name]
        got = sorted((f["code"], f["cause"]) for f in data["findings"])
        points = [("findings", sorted(want_findings), got)]
        if reads_label is not None:
            told = _told(home, layout, reads_label)
            points.append(("reads", os.path.realpath(told) if told else None, data["reads"]))
        for what, want, have in points:
            ok = want == have
            match += ok
            differ += not ok
            print(f"{'MATCH ' if ok else 'DIFFER'} {name}/{what}: {have}" + ("" if ok else f" (the CLI: {want})"))
    print(f"TOTAL: {match} MATCH, {differ} DIFFER")
    return differ


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--work", default="/tmp/oracle-stores")
    ap.add_argument("--collect-only", action="store_true", help="copy the captures of an earlier run again")
    ap.add_argument("--compare", action="store_true", help="only compare memtui with the scenarios of an earlier run (their live workspaces)")
    ap.add_argument("--memtui", default=str(REPO / ".venv" / "bin" / "memtui"))
    ap.add_argument("--caps", default=None, help="where the captures go (default: tests/captures/claude-2.1.332/stores; another release's run goes elsewhere)")
    ap.add_argument("--release", default="2.1.332", help="the profile memtui is asked to model in the comparison")
    ap.add_argument("names", nargs="*")
    a = ap.parse_args()
    global CAPS, RELEASE
    if a.caps:
        CAPS = Path(a.caps).resolve()
    RELEASE = a.release
    if a.compare:
        raise SystemExit(1 if compare(Path(a.work).resolve(), a.names or list(SCENARIOS), a.memtui) else 0)
    if a.collect_only:
        for name in a.names or list(SCENARIOS):
            s = Scenario.__new__(Scenario)
            s.name, s.root = name, Path(a.work).resolve() / name
            s.home = s.root / "home"
            s.layout = json.loads((CAPS / name / "scenario.json").read_text())
            s.sessions = s.layout.pop("sessions")
            s.collect()
        return
    work = Path(a.work).resolve()
    work.mkdir(parents=True, exist_ok=True)
    print(subprocess.run([CLAUDE, "--version"], capture_output=True, text=True).stdout.strip())
    for name in a.names or list(SCENARIOS):
        s = Scenario(work, name)
        SCENARIOS[name](s)
        s.collect()
    raise SystemExit(1 if compare(work, a.names or list(SCENARIOS), a.memtui) else 0)


if __name__ == "__main__":
    main()
