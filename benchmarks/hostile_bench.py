"""Hostile inputs through the ``memtui`` commands: wall time, peak memory and growth exponent.

Each measurement runs one ``memtui`` command as a child process (this checkout, or the tree
``--src`` names, e.g. an older commit unpacked with ``git archive``) on a workspace built from a
fixed recipe in a temp dir, and reports its wall time and its peak RSS (GNU ``time -f %M``, see
``run_child``). Inputs, each at several sizes:

- ``index``: a ``MEMORY.md`` of ``- [ei](ei.md)`` links (after the two ordinary entries), 0.1,
  1 and 20 MB, one link a line (multi-line) or all on one line (one-line),
  through ``index --json``, ``doctor --json``, ``ls --json``, ``dream plan``, ``recall`` and
  ``cascade``;
- ``team``: a team bundle of 1,200 and 12,000 small memories (four types in turn) through
  ``team import``;
- ``memory``: one project memory of 0.1, 1 and 5 MB on the deploy window in six shapes (one
  line of sentences with values; one paragraph of lines with numbers and no sentence break;
  short sentences each with values; names in backticks; paths; relative dates) next to an
  ordinary memory on the same subject that states other values, through ``doctor --json``,
  ``verify``, ``recall``, ``dream plan`` and ``ls --json``.

Baselines, measured in the same run: each command on the ordinary workspace (``fixed``: its
start-up and fixed cost), and per input a floor that reads it once in a child Python (the index
and the memory: read and split into lines; the bundle: parse it and write every file). ``k`` is
the growth exponent ``log(t2/t1) / log(n2/n1)`` of the wall time from one size to the next (1 =
linear, 2 = quadratic, 0 = bounded), raw and "above fixed" (the ordinary-workspace time taken off
both: what grows with the input; ``—`` when the smaller is within 50 ms of it). A run over
``--timeout`` seconds is stopped and shown as ``>T``.

    python benchmarks/hostile_bench.py [--groups index team memory] [--timeout 300] [--src DIR]
        [--index-sizes 100000 1000000 20000000] [--team-sizes 1200 12000]
        [--memory-sizes 100000 1000000 5000000] [--shapes one-line numbers-paragraph ...]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NOW = "2026-03-10T12:00:00Z"
RUNNER = """
import sys
sys.path.insert(0, sys.argv[1])
from memtui.cli import main
main(sys.argv[2:], prog_name="memtui")
"""
ORDINARY = {
    "user_tabs.md": "---\nname: Tabs\ndescription: the user indents with tabs in every file\ntype: user\n---\n\nTabs, not spaces.\n",
    "project_deploy_window.md": (
        "---\nname: Deploy window\ndescription: deploys run on Tuesday, the freeze starts 2026-04-01\ntype: project\n---\n\n"
        "The deploy window is 30 minutes on Tuesday. The freeze starts 2026-04-01.\n\n"
        "**Why:** the release train.\n\n**How to apply:** plan merges for Monday.\n"
    ),
}
ORDINARY_INDEX = "".join(f"- [{name}]({name}) — an ordinary memory\n" for name in ORDINARY)
RECALL_PROMPT = "when is the deploy window and the freeze"


@dataclass(frozen=True, slots=True)
class Run:
    """One child run: ``seconds`` of wall time (``None``: stopped at the timeout), peak RSS in
    MB, exit status and the first 300 characters of its standard output and error."""

    seconds: float | None
    rss_mb: float
    status: int
    out: str


TIME = shutil.which("time", path="/usr/bin:/bin")


def run_child(argv: Sequence[str], env: dict[str, str], timeout: float, cwd: Path | None = None) -> Run:
    """``argv`` as a child process: its wall time and peak RSS, killed (its process group) after
    ``timeout`` seconds. The peak comes from GNU ``time -f %M`` (which starts the command from
    its own small process: a child forked straight from this one would count this process's
    pages in its ``ru_maxrss``), else from ``os.wait4``."""
    with tempfile.TemporaryFile() as out, tempfile.NamedTemporaryFile(mode="r") as peak:
        command = [TIME, "-q", "-f", "%M", "-o", peak.name, *argv] if TIME else list(argv)
        started = time.monotonic()
        proc = subprocess.Popen(command, env=env, cwd=cwd, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)
        timer = threading.Timer(timeout, lambda: os.killpg(proc.pid, signal.SIGKILL))
        timer.start()
        try:
            _, status, usage = os.wait4(proc.pid, 0)
        finally:
            timer.cancel()
        seconds = time.monotonic() - started
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        text = out.read(300).decode("utf-8", "replace")
        kb = peak.read().strip().splitlines()[-1:] if TIME else []
    killed = proc.returncode == -signal.SIGKILL and seconds >= timeout
    rss_kb = int(kb[0]) if kb and kb[0].isdigit() else usage.ru_maxrss
    return Run(None if killed else seconds, rss_kb / 1024, proc.returncode, text)


class Bench:
    """Workspaces below ``root`` and runs of ``memtui`` from ``src``."""

    def __init__(self, root: Path, src: Path, timeout: float) -> None:
        self.root = root
        self.src = src
        self.timeout = timeout
        self.env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(root / "home"),
            "MEMTUI_NOW": NOW,
            "LANG": "C.UTF-8",
            "PYTHONDONTWRITEBYTECODE": "1",
        }
        (root / "home").mkdir(exist_ok=True)

    def workspace(self, name: str) -> tuple[Path, Path]:
        """A fresh project (an instruction file, one source file) and memory dir with the
        ordinary memories and their index."""
        base = self.root / name
        if base.exists():
            shutil.rmtree(base)
        project = base / "project"
        (project / "src").mkdir(parents=True)
        (project / "AGENT.md").write_text("# Project\nUse tabs.\n")
        (project / "src" / "app.py").write_text("def main():\n    return 0\n")
        mem = base / "memory"
        mem.mkdir()
        for rel, text in ORDINARY.items():
            (mem / rel).write_text(text)
        (mem / "MEMORY.md").write_text(ORDINARY_INDEX)
        return project, mem

    def memtui(self, project: Path, mem: Path, *args: str) -> Run:
        argv = [sys.executable, "-c", RUNNER, str(self.src), "--project", str(project), "--memory-dir", str(mem), *args]
        return run_child(argv, self.env, self.timeout, cwd=project)

    def python(self, code: str, *args: str) -> Run:
        return run_child([sys.executable, "-c", code, *args], self.env, self.timeout)


# ---- inputs -------------------------------------------------------------------------------


def write_filled(path: Path, head: str, unit: Callable[[int], str], size: int, tail: str = "") -> None:
    """Write ``head``, then ``unit(0)``, ``unit(1)``… until the file holds ``size`` bytes or
    more, then ``tail`` — piece by piece, so that this process stays small (see ``run_child``)."""
    with path.open("w", encoding="utf-8") as fh:
        fh.write(head)
        total, i = len(head.encode()), 0
        while total < size:
            part = unit(i)
            fh.write(part)
            total += len(part.encode())
            i += 1
        fh.write(tail)


def index_link(one_line: bool) -> Callable[[int], str]:
    """The pieces of a hostile ``MEMORY.md``: ``- [ei](ei.md)`` links (about 20 bytes each),
    one a line or all on one line (separated by a space)."""
    sep = " " if one_line else "\n"
    return lambda i: f"- [e{i}](e{i}.md){sep}"


# shape -> a function of i giving the next piece of the body (ASCII, so characters are bytes)
SHAPES: dict[str, Callable[[int], str]] = {
    # one line of short sentences with values, no line break
    "one-line": lambda i: f"The deploy window for service {i} is {i % 90 + 10} minutes and the freeze starts 2026-0{i % 9 + 1}-1{i % 10}. ",
    # a paragraph of lines with numbers and no sentence break: one "sentence" of the whole body
    "numbers-paragraph": lambda i: f"deploy window retry {i % 7 + 2} retries after {i % 900 + 100} ms on node {i} with {i % 50 + 1} workers\n",
    # short sentences, each with values, a line each
    "value-sentences": lambda i: f"The deploy window is {i % 60 + 5} minutes on v{i % 9}.{i % 7}.{i % 5} with {i % 40 + 2} workers.\n",
    # names in backticks
    "backticks": lambda i: f"The deploy calls `deploy_step_{i}` then `FreezeWindow{i}.run()`; ",
    # paths
    "paths": lambda i: f"see src/deploy/window_{i}.py and docs/freeze/step-{i}.md for the deploy window; ",
    # relative dates
    "relative-dates": lambda i: ("The deploy window opens tomorrow. ", "The freeze starts next Monday. ", "We shipped 3 weeks ago. ",
                                 "Review in two days. ")[i % 4],
}
MEMORY_HEAD = "---\nname: Deploy window notes\ndescription: the deploy window and the freeze, from the release train\ntype: project\n---\n\n"




def bundle(n: int) -> dict[str, str]:
    """A team bundle of ``n`` small memories (``note_00000.md``…), four types in turn."""
    types = ("user", "feedback", "project", "reference")
    return {
        f"note_{i:05d}.md": f"---\nname: Team note {i}\ndescription: what the team agreed about topic {i}\ntype: {types[i % 4]}\n---\n\nAgreed on topic {i}.\n"
        for i in range(n)
    }


FLOOR_READ = "import sys; data = open(sys.argv[1], 'rb').read().decode('utf-8', 'replace'); print(len(data.split(chr(10))))"
FLOOR_BUNDLE = """
import json, os, sys
bundle = json.loads(open(sys.argv[1], 'rb').read())
os.makedirs(sys.argv[2])
for key, text in bundle.items():
    with open(os.path.join(sys.argv[2], key), 'w', encoding='utf-8') as fh:
        fh.write(text)
"""


# ---- measuring ------------------------------------------------------------------------------


def exponent(t1: float | None, t2: float | None, ratio: float, fixed: float = 0.0) -> str:
    """``log((t2-fixed)/(t1-fixed)) / log(ratio)`` as text, ``—`` when it cannot be told."""
    if t1 is None or t2 is None:
        return "—"
    a, b = t1 - fixed, t2 - fixed
    if a < 0.05 or b <= 0:
        return "—"
    return f"{math.log(b / a) / math.log(ratio):.2f}"


def fmt_run(r: Run, timeout: float) -> str:
    if r.seconds is None:
        return f">{timeout:.0f} s (stopped)"
    return f"{r.seconds:.2f} s, {r.rss_mb:,.0f} MB"


@dataclass
class Row:
    """One command at each size: its runs (in size order) and its time on the ordinary workspace."""

    what: str
    runs: list[Run]
    fixed: float = 0.0


def report(title: str, sizes: Sequence[float], label: Callable[[float], str], rows: list[Row], timeout: float) -> None:
    """A Markdown table: per size the wall time and peak RSS; per step to the next size the
    growth exponent of the wall time, raw and with the ordinary-workspace time taken off."""
    steps = list(zip(sizes, sizes[1:]))
    print(f"\n### {title}\n")
    head = " | ".join(label(n) for n in sizes)
    ks = " | ".join(f"k {label(a)} → {label(b)} (raw / above fixed)" for a, b in steps)
    print(f"| command | {head} | {ks} | fixed (ordinary) |")
    print("|---|" + "---:|" * (len(sizes) + len(steps) + 1))
    for r in rows:
        cells = " | ".join(fmt_run(run, timeout) for run in r.runs)
        growth = " | ".join(
            f"{exponent(r.runs[i].seconds, r.runs[i + 1].seconds, b / a)} / {exponent(r.runs[i].seconds, r.runs[i + 1].seconds, b / a, r.fixed)}"
            for i, (a, b) in enumerate(steps)
        )
        print(f"| {r.what} | {cells} | {growth} | {r.fixed:.2f} s |")
    sys.stdout.flush()


def _name(command: Sequence[str]) -> str:
    return " ".join(command[:1] if command[0] == "recall" else command)


def ordinary_times(bench: Bench, commands: Sequence[Sequence[str]]) -> dict[tuple[str, ...], float]:
    project, mem = bench.workspace("ordinary")
    out = {}
    for command in commands:
        r = bench.memtui(project, mem, *command)
        out[tuple(command)] = r.seconds or 0.0
    return out


INDEX_COMMANDS = (("index", "--json"), ("doctor", "--json"), ("ls", "--json"), ("dream", "plan"), ("recall", RECALL_PROMPT), ("cascade",))
MEMORY_COMMANDS = (("doctor", "--json"), ("verify",), ("recall", RECALL_PROMPT), ("dream", "plan"), ("ls", "--json"))


def check(r: Run, what: str) -> None:
    if r.status not in (0, 1) or "Traceback" in r.out:
        print(f"<!-- {what}: exit {r.status}: {r.out!r} -->", flush=True)


def bench_index(bench: Bench, sizes: Sequence[int]) -> None:
    fixed = ordinary_times(bench, INDEX_COMMANDS)
    for one_line in (False, True):
        shape = "one-line" if one_line else "multi-line"
        runs: dict[tuple[str, ...], list[Run]] = {c: [] for c in INDEX_COMMANDS}
        floors: list[Run] = []
        for size in sizes:
            project, mem = bench.workspace(f"index-{shape}-{size}")
            write_filled(mem / "MEMORY.md", ORDINARY_INDEX, index_link(one_line), size)
            floors.append(bench.python(FLOOR_READ, str(mem / "MEMORY.md")))
            for command in INDEX_COMMANDS:
                r = bench.memtui(project, mem, *command)
                runs[command].append(r)
                check(r, f"{shape} {size} {command}")
        rows = [Row("floor: read and split the file", floors)] + [Row(_name(c), runs[c], fixed[c]) for c in INDEX_COMMANDS]
        report(f"MEMORY.md, {shape}", sizes, lambda n: f"{n / 1e6:g} MB", rows, bench.timeout)


def bench_team(bench: Bench, sizes: Sequence[int]) -> None:
    project, mem = bench.workspace("team-ordinary")
    small = bench.root / "bundle-small.json"
    small.write_text(json.dumps(bundle(10)))
    fixed = bench.memtui(project, mem, "team", "import", str(small)).seconds or 0.0
    runs: list[Run] = []
    floors: list[Run] = []
    for n in sizes:
        path = bench.root / f"bundle-{n}.json"
        path.write_text(json.dumps(bundle(n)))
        floors.append(bench.python(FLOOR_BUNDLE, str(path), str(bench.root / f"floor-{n}")))
        project, mem = bench.workspace(f"team-{n}")
        r = bench.memtui(project, mem, "team", "import", str(path))
        runs.append(r)
        check(r, f"team import {n}")
    rows = [Row("floor: parse the bundle, write every file", floors), Row("team import", runs, fixed)]
    report("Team import", sizes, lambda n: f"{n:,.0f} files", rows, bench.timeout)


def bench_memory(bench: Bench, sizes: Sequence[int], shapes: Sequence[str]) -> None:
    fixed = ordinary_times(bench, MEMORY_COMMANDS)
    for shape in shapes:
        runs: dict[tuple[str, ...], list[Run]] = {c: [] for c in MEMORY_COMMANDS}
        floors: list[Run] = []
        for size in sizes:
            project, mem = bench.workspace(f"memory-{shape}-{size}")
            # a project memory of ``size`` bytes on the deploy window, its body of ``shape``
            write_filled(mem / "project_deploy_window_notes.md", MEMORY_HEAD, SHAPES[shape], size, "\n")
            (mem / "MEMORY.md").write_text(ORDINARY_INDEX + "- [Deploy window notes](project_deploy_window_notes.md) — the deploy window\n")
            floors.append(bench.python(FLOOR_READ, str(mem / "project_deploy_window_notes.md")))
            for command in MEMORY_COMMANDS:
                r = bench.memtui(project, mem, *command)
                runs[command].append(r)
                check(r, f"{shape} {size} {command}")
        rows = [Row("floor: read and split the file", floors)] + [Row(_name(c), runs[c], fixed[c]) for c in MEMORY_COMMANDS]
        report(f"One memory: {shape}", sizes, lambda n: f"{n / 1e6:g} MB", rows, bench.timeout)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--groups", nargs="+", default=["index", "team", "memory"], choices=["index", "team", "memory"])
    ap.add_argument("--index-sizes", nargs="+", type=int, default=[100_000, 1_000_000, 20_000_000], metavar="BYTES")
    ap.add_argument("--team-sizes", nargs="+", type=int, default=[1_200, 12_000], metavar="FILES")
    ap.add_argument("--memory-sizes", nargs="+", type=int, default=[100_000, 1_000_000, 5_000_000], metavar="BYTES")
    ap.add_argument("--shapes", nargs="+", default=list(SHAPES), choices=list(SHAPES))
    ap.add_argument("--timeout", type=float, default=300.0, help="seconds before a run is stopped (default 300)")
    ap.add_argument("--src", type=Path, default=ROOT, help="the source tree to run (default: this checkout)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="memtui-hostile-") as tmp:
        bench = Bench(Path(tmp), args.src.resolve(), args.timeout)
        print(f"<!-- python {sys.version.split()[0]}, {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}, src {args.src} -->")
        if "index" in args.groups:
            bench_index(bench, args.index_sizes)
        if "team" in args.groups:
            bench_team(bench, args.team_sizes)
        if "memory" in args.groups:
            bench_memory(bench, args.memory_sizes, args.shapes)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
