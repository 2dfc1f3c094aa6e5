"""A laboratory for crashing memtui on purpose: workspaces with one transaction of each kind to
run, a forked child that runs a memtui command and can be killed right after its k-th write
step (``memtui.core.writes.steps``), and snapshots to tell all-old from all-new.

Forked children (``os.fork``) die with ``os._exit`` — no ``finally``, no flush, no lock release
by Python: as abrupt as ``kill -9`` for the files on disk.
"""

from __future__ import annotations

import json
import os
import sys
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from memtui.core.writes import steps

NOW = datetime(2026, 3, 10, 12, 0, tzinfo=UTC)
NOW_ISO = "2026-03-10T12:00:00Z"
DAY = 86_400.0
T = NOW.timestamp()
KILLED = 137  # the exit code of a child killed after its k-th step


def write(path: Path, data: str | bytes, mtime: float | None = None) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data.encode("utf-8") if isinstance(data, str) else data)
    if mtime is not None:
        os.utime(path, (mtime, mtime))
    return path


def memory(name: str, description: str, mem_type: str, body: str) -> str:
    return f"---\nname: {name}\ndescription: {description}\ntype: {mem_type}\n---\n\n{body}"


Tree = dict[str, object]


def tree(root: Path, *, mtimes: bool = False, skip: tuple[str, ...] = (".consolidate-lock",)) -> Tree:
    """Every entry below ``root``: files → bytes (with ``mtimes``: (bytes, mtime in µs)),
    directories → ``"dir"``; names in ``skip`` left out."""
    out: Tree = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for d in dirnames:
            out[os.path.relpath(os.path.join(dirpath, d), root)] = "dir"
        for name in filenames:
            if name in skip:
                continue
            p = Path(dirpath) / name
            rel = os.path.relpath(p, root)
            data = p.read_bytes()
            out[rel] = (data, p.stat().st_mtime_ns // 1000) if mtimes else data
    return out


def files_only(t: Tree) -> Tree:
    return {k: v for k, v in t.items() if v != "dir"}


def temp_files(root: Path) -> list[str]:
    """Leftover temp files of memtui below ``root``."""
    return sorted(
        os.path.relpath(os.path.join(d, n), root) for d, _, names in os.walk(root) for n in names if n.startswith(".memtui-")
    )


@dataclass
class Workspace:
    """One transaction ready to run: ``args`` (the memtui command), ``undo_args`` (the command
    that reverts it, ``None`` when there is none), the memory dir and memtui's state dir."""

    root: Path
    memory_dir: Path
    state_dir: Path
    args: list[str]
    undo_args: list[str] | None = field(default_factory=lambda: ["undo"])
    # the command that makes it again from all-old (default: ``args``)
    rerun_args: list[str] | None = None

    def env(self) -> dict[str, str]:
        return {"MEMTUI_STATE_DIR": str(self.state_dir), "MEMTUI_NOW": NOW_ISO}

    def cli(self, args: list[str]) -> list[str]:
        return ["--memory-dir", str(self.memory_dir), *args]


@dataclass(frozen=True)
class Outcome:
    """How a child ended: exit code (``KILLED`` when the hook stopped it), its output, the
    number of steps it took."""

    code: int
    stdout: str
    stderr: str
    steps: int


def run_child(ws: Workspace, args: list[str], *, kill_at: int | None = None, hook: Callable[[str, str], None] | None = None) -> Outcome:
    """Run ``memtui <args>`` for ``ws`` in a forked child. ``kill_at``: ``os._exit(KILLED)``
    right after that step (1-based); ``hook``: called at each step first (a racing writer)."""
    out_file = ws.root / f".child-{os.getpid()}.out"
    err_file = ws.root / f".child-{os.getpid()}.err"
    count_file = ws.root / f".child-{os.getpid()}.steps"
    pid = os.fork()
    if pid == 0:  # the child
        code = 0
        counted = [0]
        try:
            out_fd = os.open(out_file, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            err_fd = os.open(err_file, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            os.dup2(out_fd, 1)
            os.dup2(err_fd, 2)
            sys.stdout = open(1, "w", encoding="utf-8", errors="surrogateescape", closefd=False)  # noqa: SIM115
            sys.stderr = open(2, "w", encoding="utf-8", errors="surrogateescape", closefd=False)  # noqa: SIM115
            os.environ.update(ws.env())

            def step_hook(name: str, path: str) -> None:
                if hook is not None:
                    hook(name, path)
                counted[0] += 1
                if kill_at is not None and counted[0] == kill_at:
                    os._exit(KILLED)

            steps.set_fault_hook(step_hook)
            if args and args[0].startswith("__"):
                _core_command(ws, args)
            else:
                from memtui.cli import main

                main(ws.cli(args), prog_name="memtui")
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        except BaseException:  # noqa: BLE001 - report, then die with a distinct code
            traceback.print_exc()
            code = 99
        finally:
            try:
                sys.stdout.flush()
                sys.stderr.flush()
                count_file.write_text(str(counted[0]))
            finally:
                os._exit(code)
    _, status = os.waitpid(pid, 0)
    code = os.waitstatus_to_exitcode(status)
    taken = int(count_file.read_text()) if count_file.exists() and code != KILLED else -1
    result = Outcome(code, out_file.read_text(errors="replace"), err_file.read_text(errors="replace"), taken)
    for f in (out_file, err_file, count_file):
        f.unlink(missing_ok=True)
    return result


def run_inprocess(ws: Workspace, args: list[str], *, hook: Callable[[str, str], None] | None = None) -> Outcome:
    """Run ``memtui <args>`` for ``ws`` in this process (click's runner; the environment is
    the test's: ``MEMTUI_STATE_DIR`` must be ``ws.state_dir``); ``hook`` sees every step."""
    from click.testing import CliRunner

    from memtui.cli import main

    counted = [0]

    def step_hook(name: str, path: str) -> None:
        counted[0] += 1
        if hook is not None:
            hook(name, path)

    previous = steps.set_fault_hook(step_hook)
    try:
        if args and args[0].startswith("__"):
            try:
                _core_command(ws, args)
            except Exception as exc:  # noqa: BLE001 - reported like a command's error
                return Outcome(1, "", f"{type(exc).__name__}: {exc}", counted[0])
            return Outcome(0, "", "", counted[0])
        result = CliRunner().invoke(main, ws.cli(args), prog_name="memtui", catch_exceptions=False)
        return Outcome(result.exit_code, result.stdout, result.stderr, counted[0])
    finally:
        steps.set_fault_hook(previous)


def _core_command(ws: Workspace, args: list[str]) -> None:
    """The app's edits that have no command of their own: ``__save REL TEXT`` (a hand edit),
    ``__rename OLD NEW``, ``__delete REL`` — through the same core calls the app makes."""
    from memtui.core.memory.memories import read_memory
    from memtui.core.writes.edits import apply_plan, plan_delete, plan_rename, plan_save
    from memtui.core.writes.journal import Journal

    mem = ws.memory_dir
    if args[0] == "__recover":  # what every memtui start does first
        from memtui.core.writes.transaction import recover_at_start

        for message in recover_at_start(ws.state_dir, mem):
            print(message, file=sys.stderr)
        return
    memory_ = read_memory(mem / args[1], mem)
    if args[0] == "__save":
        plan = plan_save(mem, memory_, args[2])
    elif args[0] == "__rename":
        plan = plan_rename(mem, memory_, args[2])
    else:
        plan = plan_delete(mem, memory_)
    apply_plan(mem, plan, Journal(ws.state_dir, mem), NOW)


# ----- the transactions ---------------------------------------------------------------------------


def _base(root: Path) -> tuple[Path, Path]:
    """The memory dir and memtui's state dir (the test's ``MEMTUI_STATE_DIR``: every memory
    dir has its own folder in it)."""
    mem = root / "memory"
    mem.mkdir(parents=True)
    return mem, Path(os.environ["MEMTUI_STATE_DIR"])


def _prepare(ws: Workspace, args: list[str]) -> None:
    """Run a command in this process to set a workspace up."""
    done = run_inprocess(ws, args)
    assert done.code == 0, (args, done)


def save_workspace(root: Path) -> Workspace:
    """A hand edit of one memory (the app's ``e``), through the core: one file."""
    mem, state = _base(root)
    write(mem / "user_a.md", memory("A", "a", "user", "before\n"), T - 3 * DAY)
    write(mem / "MEMORY.md", "- [A](user_a.md) — a\n", T - 3 * DAY)
    return Workspace(root, mem, state, ["__save", "user_a.md", memory("A", "a", "user", "after\n")])


def rename_workspace(root: Path) -> Workspace:
    """A rename: the index, a new file, a deleted one."""
    mem, state = _base(root)
    write(mem / "user_a.md", memory("A", "a", "user", "body\n"), T - 3 * DAY)
    write(mem / "user_b.md", memory("B", "b", "user", "body b\n"), T - 2 * DAY)
    write(mem / "MEMORY.md", "- [A](user_a.md) — a\n- [B](user_b.md) — b\n", T - 3 * DAY)
    return Workspace(root, mem, state, ["__rename", "user_a.md", "sub/user_c.md"])


def dream_workspace(root: Path) -> Workspace:
    """``memtui dream apply --force`` (offline): dates made absolute in three memories, a
    duplicate merged and deleted, the index pruned."""
    mem, state = _base(root)
    for i in range(3):
        write(mem / f"project_p{i}.md", memory(f"P{i}", f"milestone {i}", "project", f"Milestone {i} is due tomorrow.\n"), T - (3 + i) * DAY)
    body = "The user reviews pull requests in the morning before standup every day.\n"
    write(mem / "user_x.md", memory("X", "x", "user", body), T - 9 * DAY)
    write(mem / "user_y.md", memory("Y", "y", "user", body), T - 8 * DAY)
    write(mem / "MEMORY.md", "".join(f"- [P{i}](project_p{i}.md) — milestone {i}\n" for i in range(3)) + "- [X](user_x.md) — x\n- [Y](user_y.md) — y\n- [Gone](gone.md) — dangling\n", T - 9 * DAY)
    return Workspace(root, mem, state, ["dream", "apply", "--force", "--consolidator", "offline"], ["dream", "undo"])


def team_workspace(root: Path) -> Workspace:
    """``memtui team import``: an update, two new files (one in a new folder), the team index."""
    mem, state = _base(root)
    write(mem / "team" / "old.md", memory("Old", "old", "reference", "v1\n"), T - 5 * DAY)
    write(mem / "team" / "MEMORY.md", "- [Old](old.md) — old\n", T - 5 * DAY)
    bundle = {
        "old.md": memory("Old", "old", "reference", "v2\n"),
        "new.md": memory("New", "a new one", "reference", "fresh\n"),
        "notes/deep.md": memory("Deep", "deeper", "project", "deep\n"),
    }
    write(root / "bundle.json", json.dumps(bundle))
    return Workspace(root, mem, state, ["team", "import", str(root / "bundle.json")])


def doctor_workspace(root: Path) -> Workspace:
    """``memtui doctor --fix all --yes``: a BOM removed, a nested type lifted, an index entry
    added — one change."""
    mem, state = _base(root)
    write(mem / "user_bom.md", "\ufeff" + memory("Bom", "bom", "user", "x\n"), T - 4 * DAY)
    write(mem / "user_nested.md", "---\nname: N\ndescription: n\nmetadata:\n  type: user\n---\n\nn\n", T - 4 * DAY)
    write(mem / "MEMORY.md", "- [Bom](user_bom.md) — bom\n", T - 4 * DAY)
    return Workspace(root, mem, state, ["doctor", "--fix", "all", "--yes"])


def inbox_workspace(root: Path) -> Workspace:
    """``memtui inbox accept ID``: a new memory and its index line, the proposal decided."""
    mem, state = _base(root)
    write(mem / "MEMORY.md", "- [A](user_a.md) — a\n", T - 4 * DAY)
    write(mem / "user_a.md", memory("A", "a", "user", "a\n"), T - 4 * DAY)
    from memtui.core.extract.inbox import Inbox, Proposal, ProposalSource, proposal_id

    ws = Workspace(root, mem, state, [])
    ident = proposal_id("s1", "u1", "create", "feedback|tabs|Use tabs.")
    Inbox(state, mem).add(
        Proposal(ident, "create", "feedback_tabs.md", "feedback", "Tabs", "use tabs, not spaces", "Use tabs.\n\n**Why:** asked.\n\n**How to apply:** always.\n",
                 ProposalSource("s1", "u1"), "offline", True, NOW.isoformat())
    )
    ws.args = ["inbox", "accept", ident]
    return ws


def undo_workspace(root: Path) -> Workspace:
    """``memtui undo`` of a change of three files."""
    ws = rename_workspace(root)
    _prepare(ws, ws.args)
    ws.args = ["undo"]
    ws.undo_args = None  # an undo is not undone; from all-old, ``undo`` again must reach all-new
    return ws


def restore_workspace(root: Path) -> Workspace:
    """``memtui restore``: a deleted memory back with its index line."""
    mem, state = _base(root)
    write(mem / "user_a.md", memory("A", "a", "user", "keep me\n"), T - 6 * DAY)
    write(mem / "MEMORY.md", "- [A](user_a.md) — a\n", T - 6 * DAY)
    ws = Workspace(root, mem, state, ["__delete", "user_a.md"])
    _prepare(ws, ws.args)
    ws.args = ["restore", "user_a.md"]
    return ws


def merge_workspace(root: Path) -> Workspace:
    """``memtui stores merge SRC --into DST --yes``: a stray store's memories moved into the one
    read — a new file, a clash renamed, a same file dropped, DST's index grown, SRC's files and
    index deleted. The "memory dir" is the stores' common folder, whose journal records it."""
    _, state = _base(root)
    projects = root / "projects"
    src, dst = projects / "-p-svc" / "memory", projects / "-p" / "memory"
    write(src / "project_new.md", memory("New", "new", "project", "new\n"), T - 3 * DAY)
    write(src / "project_same.md", memory("Same", "same", "project", "same\n"), T - 3 * DAY)
    write(src / "project_clash.md", memory("Clash", "clash", "project", "svc's\n"), T - 3 * DAY)
    write(src / "MEMORY.md", "- [New](project_new.md) — new\n- [Same](project_same.md) — same\n- [Clash](project_clash.md) — clash\n", T - 3 * DAY)
    write(dst / "project_same.md", memory("Same", "same", "project", "same\n"), T - 4 * DAY)
    write(dst / "project_clash.md", memory("Clash", "clash", "project", "root's\n"), T - 4 * DAY)
    write(dst / "MEMORY.md", "- [Same](project_same.md) — same\n- [Clash](project_clash.md) — clash\n", T - 4 * DAY)
    (root / "memory").rmdir()
    return Workspace(root, projects, state, ["stores", "merge", str(src), "--into", str(dst), "--yes"])


BUILDERS: dict[str, Callable[[Path], Workspace]] = {
    "merge": merge_workspace,
    "save": save_workspace,
    "rename": rename_workspace,
    "dream": dream_workspace,
    "team": team_workspace,
    "doctor": doctor_workspace,
    "inbox": inbox_workspace,
    "undo": undo_workspace,
    "restore": restore_workspace,
}
