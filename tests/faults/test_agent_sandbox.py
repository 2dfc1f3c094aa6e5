"""The agent tools' sandbox under the attacks that got through: getopt abbreviations of refused
options, reads of other processes' state, FIFOs and /dev/zero in the read and edit tools — and
"read anywhere" still holds for everything else. Then the bounds: a command that grows without
end, spins, prints or errs for ever is stopped at its memory, CPU, wall-clock or output limit,
and a run of slow commands at the run's budget, with the limit named and nothing applied."""

from __future__ import annotations

import contextlib
import json
import os
import re
import resource
import shutil
import subprocess
import threading
import time
from pathlib import Path

import httpx2
import pytest
from support.dream import NOW
from support.fake_api import MODEL, Api, client, reply, scripted, text, use

from memtui.core.agent import BASH_BUDGET_S, ShellBudget, ToolPolicy, execute, run_agent
from memtui.core.agent.bash import RULES
from memtui.core.agent.options import CommandSpec, OptionError, parse_options


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "mem").mkdir(parents=True)
    (root / "notes.txt").write_text("alpha\nbeta\n")
    (root / "magic").write_text("0 string MEMTUI memtui test file\n")
    return root


def run(policy: ToolPolicy, name: str, **args: object) -> object:
    """``execute`` in a daemon thread: a hang fails the test instead of hanging it."""
    box: list[object] = []
    thread = threading.Thread(target=lambda: box.append(execute(policy, name, args)), daemon=True)
    thread.start()
    thread.join(20)
    if thread.is_alive():
        pytest.fail(f"{name} {args} hung")
    return box[0]


ATTACKS = [
    ("file --comp -m magic", "bash-forbidden-option"),  # getopt: --comp is --compile
    ("file --compile -m magic", "bash-forbidden-option"),
    ("file -Cm magic", "bash-forbidden-option"),
    ("file --magic-file=magic --comp", "bash-forbidden-option"),
    ("file -p notes.txt", "bash-forbidden-option"),
    ("file --no-s notes.txt", "bash-forbidden-option"),  # --no-sandbox
    ("tail --fol notes.txt", "bash-forbidden-option"),
    ("tail --f notes.txt", "bash-forbidden-option"),
    ("tail --follow=descriptor notes.txt", "bash-forbidden-option"),
    ("tail -qf notes.txt", "bash-forbidden-option"),
    ("tail notes.txt -F", "bash-forbidden-option"),  # GNU permutes: options after operands count
    ("tail +1f notes.txt", "bash-forbidden-option"),
    ("tail --pid=1 notes.txt", "bash-forbidden-option"),
    ("tail --re notes.txt", "bash-forbidden-option"),  # --retry
    ("grep -R alpha .", "bash-forbidden-option"),
    ("grep --dereference-r alpha .", "bash-forbidden-option"),
    ("cat /proc/self/environ", "bash-denied-path"),
    ("cat /proc/1/environ", "bash-denied-path"),
    ("head -c 100 /proc/self/mem", "bash-denied-path"),
    ("cat /proc/thread-self/environ", "bash-denied-path"),
    ("grep -a KEY /proc/self/environ", "bash-denied-path"),
    ("grep -r ANTHROPIC /", "bash-denied-path"),
    ("grep -r ANTHROPIC /proc", "bash-denied-path"),
    ("grep --directories=recurse ANTHROPIC /proc", "bash-denied-path"),
    ("grep -f /proc/self/environ notes.txt", "bash-denied-path"),
    ("wc --files0-from=/proc/self/environ", "bash-denied-path"),
    ("file -f /proc/self/environ", "bash-denied-path"),
    ("ls /proc/self/fd", "bash-denied-path"),
    ("find . -fprint out", "bash-forbidden-option"),
    ("find . -delete", "bash-forbidden-option"),
    ("find . -exec cat {} +", "bash-forbidden-option"),
    ("find -files0-from /proc/self/environ", "bash-denied-path"),
    ("cat env-link", "bash-denied-path"),  # a symlink to /proc/self/environ
    ("ls --bogus", "bash-forbidden-option"),  # the command itself would refuse it
]


@pytest.mark.parametrize(("command", "code"), ATTACKS)
def test_bash_attacks_are_refused_and_write_nothing(tree: Path, command: str, code: str) -> None:
    (tree / "env-link").symlink_to("/proc/self/environ")
    before = sorted(p.name for p in tree.iterdir())
    out = run(ToolPolicy(cwd=tree), "Bash", command=command)
    assert (out.is_error, out.code) == (True, code), out.content  # type: ignore[attr-defined]
    assert out.content.startswith("Refused: ")  # type: ignore[attr-defined]
    assert sorted(p.name for p in tree.iterdir()) == before  # no magic.mgc, nothing else
    print(f"faults: agent bash {command!r}: refused ({code})")


ALLOWED = ["tail -n 1 notes.txt", "tail -1 notes.txt", "head -c 3 notes.txt", "grep -rn alpha .", "grep --col=never -c beta notes.txt",
           "ls -la", "file -m magic notes.txt", "wc -l notes.txt", "stat -c %s notes.txt", "cat /etc/hostname", "find . -name '*.txt'",
           "ls /proc", "cat /proc/cpuinfo"]


@pytest.mark.parametrize("command", ALLOWED)
def test_read_anywhere_still_holds(tree: Path, command: str) -> None:
    out = run(ToolPolicy(cwd=tree), "Bash", command=command)
    assert out.code in (None, "bash-exit"), out.content  # type: ignore[attr-defined]


@pytest.mark.parametrize("path", ["/proc/self/environ", "/proc/self/mem", "/proc/1/environ", "/proc/thread-self/cmdline", "/proc/kcore", "env-link"])
def test_the_read_tools_never_read_process_state(tree: Path, path: str) -> None:
    (tree / "env-link").symlink_to("/proc/self/environ")
    policy = ToolPolicy(cwd=tree)
    out = run(policy, "Read", file_path=path)
    assert (out.is_error, out.code) == (True, "denied"), out.content  # type: ignore[attr-defined]
    assert "ANTHROPIC" not in out.content and "PATH=" not in out.content  # type: ignore[attr-defined]
    grep = run(policy, "Grep", pattern="PATH", path=path)
    assert grep.code == "denied", grep.content  # type: ignore[attr-defined]


def test_grep_over_the_root_never_enters_proc(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMTUI_CANARY", "canary-7f3a9")
    policy = ToolPolicy(cwd=tmp_path, search_timeout_s=2.0)
    out = run(policy, "Grep", pattern="canary-7f3a9", path="/proc")
    assert "canary-7f3a9" not in out.content.replace("'canary-7f3a9'", "")  # type: ignore[attr-defined]


@pytest.mark.parametrize("kind", ["fifo", "zero"])
def test_read_grep_and_edit_refuse_fifos_and_dev_zero(tree: Path, kind: str) -> None:
    for name in ("bad.md", "mem/bad.md"):
        path = tree / name
        if kind == "fifo":
            os.mkfifo(path)
        else:
            path.symlink_to("/dev/zero")
    policy = ToolPolicy(cwd=tree, write_root=tree / "mem")
    read = run(policy, "Read", file_path="bad.md")
    assert (read.is_error, read.code) == (True, "not-a-file"), read.content  # type: ignore[attr-defined]
    read_part = run(policy, "Read", file_path="bad.md", offset=1, limit=5)
    assert read_part.code == "not-a-file"  # type: ignore[attr-defined]
    grep = run(policy, "Grep", pattern="x", path=".")
    assert not grep.is_error or grep.code is None  # type: ignore[attr-defined]
    edit = run(policy, "Edit", file_path="bad.md", old_string="a", new_string="b")
    assert edit.is_error and edit.code in ("not-a-file", "symlink-escape"), edit.content  # type: ignore[attr-defined]
    print(f"faults: agent tools on a {kind}: Read, Grep, Edit refused at once")


@pytest.mark.skipif(shutil.which("tail") is None or b"GNU" not in subprocess.run(["tail", "--version"], capture_output=True).stdout, reason="GNU coreutils")
@pytest.mark.parametrize("command", sorted(RULES))
def test_every_long_option_of_a_rule_is_one_the_real_command_knows(command: str, tmp_path: Path) -> None:
    """The option tables are the commands' own (checked against the installed GNU tools): a
    prefix memtui resolves is one the command resolves too."""
    if shutil.which(command) is None:
        pytest.skip(f"no {command}")
    spec: CommandSpec = RULES[command].spec
    for name, (kind, _) in spec.long.items():
        if name in ("help", "version"):
            continue
        option = f"--{name}=x" if kind == "required" else f"--{name}"
        proc = subprocess.run([command, option, "--help"], capture_output=True, cwd=tmp_path, timeout=10)
        assert b"unrecognized option" not in proc.stderr and b"invalid option" not in proc.stderr, (command, option, proc.stderr)


def test_getopt_rules_match_glibc() -> None:
    spec = CommandSpec({"a": "none", "n": "required", "o": "optional"}, {"color": ("optional", "color"), "colour": ("optional", "color"),
                                                                          "compile": ("none", "C"), "count": ("required", "c")})
    assert parse_options(spec, ["--col", "x"]).options == (("color", None, "--col"),)  # same option: not ambiguous
    assert parse_options(spec, ["--com", "x"]).options == (("C", None, "--com"),)
    with pytest.raises(OptionError, match="ambiguous"):
        parse_options(spec, ["--co", "x"])
    assert parse_options(spec, ["-an5", "x"]).options == (("a", None, "-an5"), ("n", "5", "-an5"))
    assert parse_options(spec, ["-n", "-a"]).options == (("n", "-a", "-n"),)  # a required argument is taken as is
    assert parse_options(spec, ["-o", "x"]).operands == ("x",)  # an optional one only attached
    assert parse_options(spec, ["x", "--count=3", "--", "-a"]) .operands == ("x", "-a")
    with pytest.raises(OptionError):
        parse_options(spec, ["--compile=yes"])


# -- Bounded commands: memory, CPU, wall clock, output; one budget for a run --------------------

GNU = pytest.mark.skipif(
    shutil.which("tail") is None or b"GNU" not in subprocess.run(["tail", "--version"], capture_output=True).stdout,
    reason="GNU coreutils (the 'memory exhausted' message)",
)
MiB = 1 << 20


def maxrss_kib(who: int) -> int:
    """Peak resident memory in KiB (Linux): of this process, or of its largest reaped child."""
    return resource.getrusage(who).ru_maxrss


@GNU
def test_tail_of_dev_zero_stops_at_the_memory_limit(tree: Path) -> None:
    """`tail -n 1 /dev/zero` keeps a line that never ends: 64 MiB of address space stops it."""
    policy = ToolPolicy(cwd=tree, bash_memory_bytes=64 * MiB, bash_timeout_s=3.0)
    children, own = maxrss_kib(resource.RUSAGE_CHILDREN), maxrss_kib(resource.RUSAGE_SELF)
    started = time.monotonic()
    out = run(policy, "Bash", command="tail -n 1 /dev/zero")
    took = time.monotonic() - started
    assert (out.is_error, out.code) == (True, "bash-limit"), out.content  # type: ignore[attr-defined]
    assert out.content.endswith("\n[stopped: tail used more than 64 MiB of memory (the limit of one command)]")  # type: ignore[attr-defined]
    assert took < 3.0  # before the wall clock
    # the command never held more than its limit; this process grew by less than 16 MiB
    assert maxrss_kib(resource.RUSAGE_CHILDREN) <= max(children, 64 * 1024)
    assert maxrss_kib(resource.RUSAGE_SELF) - own < 16 * 1024
    print(f"faults: agent bash 'tail -n 1 /dev/zero': stopped at 64 MiB after {took:.2f} s")


@GNU
@pytest.mark.parametrize("command", ["tail -n 1 /dev/zero | cat", "cat /dev/zero | tail -n 1"])
def test_the_memory_limit_holds_for_each_stage_of_a_pipeline(tree: Path, command: str) -> None:
    out = run(ToolPolicy(cwd=tree, bash_memory_bytes=64 * MiB, bash_timeout_s=3.0), "Bash", command=command)
    assert (out.is_error, out.code) == (True, "bash-limit"), out.content  # type: ignore[attr-defined]
    assert out.content.endswith("[stopped: tail used more than 64 MiB of memory (the limit of one command)]")  # type: ignore[attr-defined]


def test_a_command_spinning_on_the_cpu_stops_at_the_cpu_limit(tree: Path) -> None:
    """`wc -l /dev/zero` reads and counts for ever: 1 s of CPU time, well before 5 s of wall time."""
    before = sorted(p.name for p in tree.iterdir())
    started = time.monotonic()
    out = run(ToolPolicy(cwd=tree, bash_cpu_s=1, bash_timeout_s=5.0), "Bash", command="wc -l /dev/zero")
    assert (out.is_error, out.code) == (True, "bash-limit"), out.content  # type: ignore[attr-defined]
    assert out.content == "[stopped: wc used more than 1 s of CPU time (the limit of one command)]"  # type: ignore[attr-defined]
    assert time.monotonic() - started < 5.0
    assert sorted(p.name for p in tree.iterdir()) == before  # SIGXCPU dumps core by default: no core file in cwd


def test_a_command_printing_forever_is_cut(tree: Path) -> None:
    """1,000 characters are kept: 500 `^@` (cat -v's NUL), then the note; both stages stopped."""
    own = maxrss_kib(resource.RUSAGE_SELF)
    started = time.monotonic()
    out = run(ToolPolicy(cwd=tree, max_output_chars=1_000, bash_timeout_s=5.0), "Bash", command="cat /dev/zero | cat -v")
    assert (out.is_error, out.code) == (False, None)  # type: ignore[attr-defined]
    assert out.content == "^@" * 500 + "\n[output truncated at 1,000 characters]"  # type: ignore[attr-defined]
    assert time.monotonic() - started < 5.0
    assert maxrss_kib(resource.RUSAGE_SELF) - own < 16 * 1024


def test_a_command_writing_its_errors_forever_is_cut(tree: Path) -> None:
    """stderr goes to a file, capped at the output cap in bytes (RLIMIT_FSIZE): 50 characters
    → 200 bytes; `ls` with 100 missing names writes some 6 KB of errors and is stopped."""
    names = " ".join(f"missing-{i:03}" for i in range(100))
    out = run(ToolPolicy(cwd=tree, max_output_chars=50), "Bash", command=f"ls {names}")
    assert out.code is None, out.content  # type: ignore[attr-defined]
    assert out.content.endswith("\n[output truncated at 50 characters]\n[stderr cut at 200 bytes; ls was stopped]")  # type: ignore[attr-defined]


def test_the_whole_process_group_is_killed_at_the_time_limit(tree: Path) -> None:
    os.mkfifo(tree / "pipe")  # cat blocks on a FIFO with no writer
    fifo = str(tree / "pipe")
    out = run(ToolPolicy(cwd=tree, bash_timeout_s=0.3), "Bash", command=f"cat {fifo} | grep x | wc -l")
    assert (out.code, out.content) == ("bash-timeout", "[timed out after 0.3 s; the command was stopped]")  # type: ignore[attr-defined]
    for pid in os.listdir("/proc") if os.path.isdir("/proc") else ():
        if pid.isdigit():
            with contextlib.suppress(OSError):
                assert f"\0{fifo}\0".encode() not in Path(f"/proc/{pid}/cmdline").read_bytes(), pid


def slow_calls(n: int) -> list[dict[str, object]]:
    return [use(f"b{i}", "Bash", command="cat pipe") for i in range(1, n + 1)]


def test_twelve_slow_calls_stop_at_the_runs_budget(tree: Path) -> None:
    """Per command 0.4 s, the run 1.6 s. Calls 1–3 start with at least 1.6 - 2 × 0.4 = 0.8 s
    left and stop at their own 0.4 s; call 4 starts with 1.6 - 3 × 0.4 = 0.4 s less the three
    calls' overhead, so the budget stops it; calls 5–12 are refused; the run ends there."""
    os.mkfifo(tree / "pipe")
    api = scripted(reply(*slow_calls(12)), reply(text("never sent"), stop="end_turn"))
    policy = ToolPolicy(cwd=tree, bash_timeout_s=0.4, bash_budget_s=1.6)
    started = time.monotonic()
    run_ = run_agent(client(api), model=MODEL, system="s", messages=[{"role": "user", "content": "go"}], policy=policy, max_turns=5)
    took = time.monotonic() - started
    assert [c.code for c in run_.tool_calls] == ["bash-timeout"] * 3 + ["bash-budget"] * 9
    assert re.fullmatch(
        r"\[stopped after 0\.\d s: the Bash commands of this run used up their time budget \(1\.6 s for all of them together, "
        r"4 commands\); no more Bash commands run in this run\]",
        run_.tool_calls[3].content,
    ), run_.tool_calls[3].content
    refused = "Refused: the Bash commands of this run used up their time budget (1.6 s for all of them together, 4 commands); no more Bash commands run in this run."
    assert [c.content for c in run_.tool_calls[4:]] == [refused] * 8
    assert (run_.stop_reason, run_.ok, len(api.bodies)) == ("bash-budget", False, 1)
    assert run_.error == "the run was stopped: the Bash commands of this run used up their time budget (1.6 s for all of them together, 4 commands)"
    assert [b["tool_use_id"] for b in run_.messages[-1]["content"]] == [f"b{i}" for i in range(1, 13)]  # every call answered
    assert 1.6 <= took < 3.0
    assert not any("Traceback" in c.content for c in run_.tool_calls)
    print(f"faults: agent 12 slow Bash calls: 3 timed out, the 4th stopped at the 1.6 s budget, 8 refused, run ended in {took:.1f} s")


def test_the_default_budget_is_six_commands_at_the_per_command_limit(tree: Path) -> None:
    """60 s for a run, 10 s a command: with a clock on which every command takes 10 s, calls 1–6
    run (the 6th with exactly 10 s left, so its own limit applies) and calls 7–12 are refused."""
    ticks = iter(float(t) for t in range(0, 1_000, 10))  # read once before and once after each command
    budget = ShellBudget(BASH_BUDGET_S, clock=lambda: next(ticks))
    policy = ToolPolicy(cwd=tree)
    assert (policy.bash_budget_s, policy.bash_timeout_s, policy.bash_memory_bytes, policy.bash_cpu_s) == (60.0, 10.0, 512 * MiB, 10)
    api = scripted(reply(*[use(f"b{i}", "Bash", command="echo hi") for i in range(1, 13)]), reply(text("never"), stop="end_turn"))
    run_ = run_agent(client(api), model=MODEL, system="s", messages=[{"role": "user", "content": "go"}], policy=policy, max_turns=5,
                     shell_budget=budget)
    assert [c.code for c in run_.tool_calls] == [None] * 6 + ["bash-budget"] * 6
    assert (budget.spent_s, budget.calls, run_.stop_reason) == (60.0, 6, "bash-budget")


def test_the_run_stops_at_its_deadline(tree: Path) -> None:
    """A 1,800 s run on a clock each reply moves by 700 s: requests at 0, 700 and 1,400 s; the
    third reply arrives at 2,100 s, so its tools do not run."""
    now = [0.0]

    def script(n: int, _body: dict[str, object]) -> httpx2.Response:
        now[0] += 700.0
        return httpx2.Response(200, json=reply(use(f"p{n}", "Bash", command="pwd")))

    run_ = run_agent(client(Api(script)), model=MODEL, system="s", messages=[{"role": "user", "content": "go"}], policy=ToolPolicy(cwd=tree),
                     max_turns=30, clock=lambda: now[0])
    assert (run_.turns, len(run_.tool_calls), run_.stop_reason) == (3, 2, "deadline")
    assert run_.error == "the run was stopped at its time limit (1800 s for the whole run) after 3 request(s)"


@pytest.fixture
def small_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every agent run gets 0.6 s for its Bash commands (the extractor and the dream build their
    own policies)."""
    import memtui.core.agent as agent

    real = agent.run_agent
    monkeypatch.setattr(agent, "run_agent", lambda *a, **kw: real(*a, shell_budget=ShellBudget(0.6), **kw))


@pytest.mark.usefixtures("small_budget")
def test_a_dream_stopped_by_the_budget_applies_nothing_and_says_why(tmp_path: Path) -> None:
    from support.dream import context, snapshot

    from memtui.core.dream import DreamError, read_lock, run_dream

    ctx = context(tmp_path)
    (ctx.memory_dir / "user_role.md").write_text("---\nname: Role\ndescription: role\ntype: user\n---\n\nData.\n", encoding="utf-8")
    os.mkfifo(tmp_path / "pipe")
    before = snapshot(ctx.memory_dir)
    new = use("w", "Write", file_path="user_new.md", content="---\nname: New\ndescription: new\ntype: user\n---\n\nHalf done.\n")
    api = scripted(reply(new, *[use(f"b{i}", "Bash", command=f"cat {tmp_path / 'pipe'}") for i in range(1, 13)]))
    with pytest.raises(DreamError) as caught:
        run_dream(ctx, NOW, "claude", force=True, client=client(api))
    assert str(caught.value) == (
        "the claude consolidator failed: the run was stopped: the Bash commands of this run used up their time budget "
        "(0.6 s for all of them together, 1 command)"
    )
    assert snapshot(ctx.memory_dir) == before  # the write the agent made before stays in its staging copy, now gone
    assert read_lock(ctx.memory_dir).exists is False
    assert not list((ctx.dream_state_dir / "staging").iterdir())


@pytest.mark.usefixtures("small_budget")
def test_an_extraction_stopped_by_the_budget_proposes_nothing(tmp_path: Path) -> None:
    from support.extract import SESSION, Talk

    from memtui.core.extract import CursorStore, ExtractorError, extract
    from memtui.core.extract.inbox import Inbox

    memory = tmp_path / "memory"
    memory.mkdir()
    talk = Talk(cwd=str(tmp_path))
    talk.human("I'm a data scientist.")
    talk.say("Noted.")
    transcript = talk.write(tmp_path / f"{SESSION}.jsonl")
    os.mkfifo(tmp_path / "pipe")

    def script(n: int, body: dict[str, object]) -> httpx2.Response:
        staging = re.search(r"Write and Edit work only inside (\S+?)\. ", json.dumps(body["system"])).group(1)  # type: ignore[union-attr]
        new = use("w", "Write", file_path=f"{staging}/user_role.md", content="---\nname: Role\ndescription: role\ntype: user\n---\n\nData scientist.\n")
        return httpx2.Response(200, json=reply(new, *[use(f"b{i}", "Bash", command=f"cat {tmp_path / 'pipe'}") for i in range(1, 13)]))

    with pytest.raises(ExtractorError, match=r"^the run was stopped: the Bash commands of this run used up their time budget \(0\.6 s"):
        extract(transcript, memory, tmp_path / "state", NOW, extractor="claude", client=client(Api(script)), apply=True)
    assert list(memory.iterdir()) == []
    assert Inbox(tmp_path / "state", memory).pending() == []
    assert CursorStore(tmp_path / "state", memory).get(SESSION) is None  # the session is read again next time
