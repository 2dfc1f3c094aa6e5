"""The agent tools' sandbox under the attacks that got through: getopt abbreviations of refused
options, reads of other processes' state, FIFOs and /dev/zero in the read and edit tools — and
"read anywhere" still holds for everything else."""

from __future__ import annotations

import os
import shutil
import subprocess
import threading
from pathlib import Path

import pytest

from memtui.core.agent import ToolPolicy, execute
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
