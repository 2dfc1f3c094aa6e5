"""The read-only ``Bash`` tool (docs/behaviour.md §7): an allow-list, no shell.

A command line is checked in two passes. A quote-aware scan of the raw text refuses every
shell construct that could write, chain or substitute — redirection (``>``, ``>>``, ``<``,
``2>``, ``&>``), ``;``, ``&&``, ``||``, ``&``, ``|&``, subshells, newlines, backticks,
``$(...)`` and ``${...}`` — and splits the line at plain ``|``. Each stage is then split with
:func:`shlex.split`; its command must be a bare name on the allow-list, and its options are
parsed as the command itself parses them (``memtui.core.agent.options``: GNU ``getopt_long``,
so ``--comp`` is ``--compile`` and ``--fol`` is ``--follow``) and checked against the
command's rule (``RULES``): only the options it lists, minus those that write, never end or
leave the read-only sandbox (``find -exec/-delete/-fprint…``, ``tail -f/--follow``,
``file -C/-p/-s/-S``, ``grep -R``); every file it names (operands, ``grep -f``, ``file -m``,
``wc --files0-from``, ``find -files0-from``) must not be what the tools never read
(``memtui.core.agent.deny``), and ``grep -r`` may not walk ``/`` or ``/proc``. The stages run
with ``subprocess.Popen`` (``shell=False``) joined by OS pipes, each in a session of its own
under memory, CPU-time and file-size limits (``setrlimit`` between fork and exec), with a
wall-clock limit for the pipeline and a cap on the output kept; a run's commands share one time
budget (:class:`ShellBudget`). Nothing expands ``*`` or ``$VAR``.
"""

from __future__ import annotations

import contextlib
import functools
import io
import os
import re
import resource
import shlex
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import IO

from memtui.core.agent.alias import PathAlias
from memtui.core.agent.deny import denied, tree_holds_denied
from memtui.core.agent.options import Arg, CommandSpec, OptionError, parse_options
from memtui.core.agent.policy import ToolOutcome, ToolPolicy

__all__ = ["RULES", "BashRefusal", "CommandRule", "PathSlot", "ShellBudget", "cap_text", "parse_command", "run_bash", "stage_paths"]

# `find` primaries that run a program, delete, or write a file (GNU findutils manual).
_FIND_FORBIDDEN = ("-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0", "-fprintf", "-fls")
# Variables passed to the commands: enough to find them and decode text, nothing else.
_ENV_KEEP = ("PATH", "HOME", "TZ")


@dataclass(frozen=True, slots=True)
class BashRefusal:
    """Why a command line is refused: ``code`` (stable) and ``reason`` (a sentence)."""

    code: str
    reason: str


def parse_command(
    command: str, allow: frozenset[str], cwd: str | os.PathLike[str] | None = None, alias: PathAlias | None = None
) -> list[list[str]] | BashRefusal:
    """Split ``command`` into pipeline stages (each an argv list) or say why it is refused.

    Codes: ``bash-empty``, ``bash-syntax`` (unbalanced quotes, an empty pipeline stage),
    ``bash-substitution`` (backticks, ``$(``, ``${`` outside single quotes), ``bash-redirection``,
    ``bash-chaining`` (``;``, ``&&``, ``||``, ``&``, ``|&``, newline, ``(``/``)``),
    ``bash-not-allowed`` (a command not on ``allow``, or given as a path),
    ``bash-forbidden-option`` (an option the command's rule refuses, or one the command itself
    would refuse — parsed as GNU ``getopt_long`` does: ``--comp`` is ``--compile``) and
    ``bash-denied-path`` (a file the tools never read: ``memtui.core.agent.deny``; ``cwd``:
    where relative paths start, default the current directory).

    ``alias``: the file arguments of each stage (operands, path options, ``find``'s starting
    points and reference files: :func:`stage_paths`) are rewritten by
    :meth:`PathAlias.shell_arg` for a process started in ``cwd`` (as the model sees it), and the
    read check runs on the rewritten paths from ``alias.cwd(cwd)``; patterns stay as written.
    """
    where = os.fspath(cwd) if cwd is not None else os.getcwd()
    runs_in = alias.cwd(where) if alias is not None else where
    if not command.strip():
        return BashRefusal("bash-empty", "the command is empty")
    stages_text = _scan(command)
    if isinstance(stages_text, BashRefusal):
        return stages_text
    stages: list[list[str]] = []
    for index, text in enumerate(stages_text):
        try:
            argv = shlex.split(text)
        except ValueError as exc:
            return BashRefusal("bash-syntax", f"the command cannot be parsed: {exc}")
        if not argv:
            return BashRefusal("bash-syntax", "a pipeline stage is empty")
        slots = _check_stage(argv, allow, piped=index > 0, cwd=where)
        if isinstance(slots, BashRefusal):
            return slots
        if alias is not None:
            for slot in sorted(slots, key=lambda sl: (sl.index, -sl.start)):
                arg = argv[slot.index]
                argv[slot.index] = arg[: slot.start] + alias.shell_arg(arg[slot.start : slot.end], where) + arg[slot.end :]
        refusal = _check_paths([argv[sl.index][sl.start : sl.end] for sl in slots if sl.read], runs_in)
        if refusal is not None:
            return refusal
        stages.append(argv)
    return stages


@dataclass(frozen=True, slots=True)
class PathSlot:
    """Where a stage's argv names a file: ``argv[index][start:end]`` (a path option's value may
    be part of an argument: ``--files0-from=x``, ``-fx``, one of ``file -m a:b``). ``read``: the
    command reads the file (checked against what the tools never read); else a reference only
    (``find -newer x``, ``find -path 'dir/*'``), mapped through a path alias all the same."""

    index: int
    start: int
    end: int
    read: bool = True


def stage_paths(argv: list[str], allow: frozenset[str]) -> list[PathSlot] | BashRefusal:
    """The file arguments of one pipeline stage (see :class:`PathSlot`), or why the stage is
    refused (the allow-list and the command's option rules; not the read check, which needs a
    cwd). Patterns (``grep``'s, ``find -name``'s) are not file arguments."""
    return _check_stage(argv, allow, piped=False, cwd=None)


def _scan(command: str) -> list[str] | BashRefusal:
    """Walk ``command`` as a POSIX shell would quote it; refuse operators, split at ``|``."""
    allowed = "pipes between allowed commands only"
    pieces: list[str] = []
    start = 0
    quote: str | None = None
    i = 0
    n = len(command)
    while i < n:
        c = command[i]
        nxt = command[i + 1] if i + 1 < n else ""
        if quote == "'":
            if c == "'":
                quote = None
            i += 1
            continue
        if c == "\\":
            i += 2
            continue
        if c == "`":
            return BashRefusal("bash-substitution", "backticks (command substitution) are not allowed")
        if c == "$" and nxt and nxt in "({":
            what = "command substitution $(...)" if nxt == "(" else "parameter expansion ${...}"
            return BashRefusal("bash-substitution", f"{what} is not allowed")
        if quote == '"':
            if c == '"':
                quote = None
            i += 1
            continue
        if c in "'\"":
            quote = c
        elif c in "<>":
            return BashRefusal(
                "bash-redirection", f"redirection ({c!r}) is not allowed: the Bash tool is read-only and prints to its output only"
            )
        elif c == "&":
            if nxt == ">":
                return BashRefusal("bash-redirection", "redirection ('&>') is not allowed: the Bash tool is read-only")
            op = "&&" if nxt == "&" else "&"
            return BashRefusal("bash-chaining", f"{op!r} is not allowed: run one command (or a pipeline of {allowed})")
        elif c == "|":
            if nxt and nxt in "|&":
                return BashRefusal("bash-chaining", f"{'|' + nxt!r} is not allowed: run one command (or a pipeline of {allowed})")
            pieces.append(command[start:i])
            start = i + 1
        elif c in ";\n\r":
            shown = "a newline" if c in "\n\r" else "';'"
            return BashRefusal("bash-chaining", f"{shown} is not allowed: run one command (or a pipeline of {allowed})")
        elif c in "()":
            return BashRefusal("bash-chaining", "subshells and grouping ('(', ')') are not allowed")
        i += 1
    if quote is not None:
        return BashRefusal("bash-syntax", f"the command has an unclosed {quote} quote")
    pieces.append(command[start:])
    return pieces


def _gnu(short: str, longs: str) -> CommandSpec:
    """A ``CommandSpec`` from ``getopt`` notation: ``short`` as in C (``c:`` takes an argument,
    ``c::`` an optional one); ``longs`` space-separated ``name[:|::][/canonical]`` — without
    ``/``, the option is its own name; with ``/x``, it is short option ``x`` (``lines:/n``)."""
    shorts: dict[str, Arg] = {}
    i = 0
    while i < len(short):
        letter = short[i]
        kind: Arg = "none"
        if short[i + 1 : i + 3] == "::":
            kind, i = "optional", i + 3
        elif short[i + 1 : i + 2] == ":":
            kind, i = "required", i + 2
        else:
            i += 1
        shorts[letter] = kind
    longs_: dict[str, tuple[Arg, str]] = {}
    for item in longs.split():
        name, _, canonical = item.partition("/")
        kind = "optional" if name.endswith("::") else "required" if name.endswith(":") else "none"
        name = name.rstrip(":")
        longs_[name] = (kind, canonical or name)
    return CommandSpec(shorts, longs_)


@dataclass(frozen=True, slots=True)
class CommandRule:
    """What the Bash tool lets through for one command: its options as the command parses
    them (``spec``), the options refused (canonical name → why), the options whose value names
    a file it reads, and whether its operands are files (``grep``: after the pattern)."""

    spec: CommandSpec
    denied: dict[str, str] = field(default_factory=dict)
    path_options: frozenset[str] = frozenset()
    operands: str = "paths"  # paths | grep | none


_NEVER_ENDS = "following a file never ends"
# GNU coreutils 9.1, grep 3.8, file 5.44: every option each accepts (a prefix matches only when
# the real command would match it too), and the ones refused.
RULES: dict[str, CommandRule] = {
    "cat": CommandRule(_gnu("AbeEnstTuv", "show-all/A number-nonblank/b show-ends/E number/n squeeze-blank/s show-tabs/T show-nonprinting/v help version")),
    "head": CommandRule(_gnu("c:n:qvz", "bytes:/c lines:/n quiet/q silent/q verbose/v zero-terminated/z help version")),
    "tail": CommandRule(
        _gnu("c:fFn:qs:vz", "bytes:/c follow::/f lines:/n max-unchanged-stats: pid: quiet/q retry silent/q sleep-interval:/s verbose/v zero-terminated/z help version"),
        denied={"f": _NEVER_ENDS, "F": _NEVER_ENDS, "retry": _NEVER_ENDS, "pid": _NEVER_ENDS, "s": _NEVER_ENDS, "max-unchanged-stats": _NEVER_ENDS},
    ),
    "wc": CommandRule(_gnu("clLmw", "bytes/c chars/m lines/l files0-from: max-line-length/L words/w help version"), path_options=frozenset({"files0-from"})),
    "stat": CommandRule(_gnu("c:fLt", "dereference/L file-system/f cached: format:/c printf: terse/t help version")),
    "file": CommandRule(
        _gnu(
            "bcCde:Ef:F:hiklLm:nNpP:rsSvzZ0",
            "help version/v magic-file:/m uncompress/z uncompress-noreport/Z brief/b checking-printout/c exclude:/e exclude-quiet: "
            "files-from:/f separator:/F mime/i apple extension mime-type mime-encoding keep-going/k list/l dereference/L "
            "no-dereference/h no-buffer/n no-pad/N print0/0 preserve-date/p parameter:/P raw/r special-files/s no-sandbox/S "
            "compile/C debug/d",
        ),
        denied={
            "C": "it writes a compiled magic file",
            "p": "it changes the files' access times",
            "s": "it reads block and character devices",
            "S": "it turns off file's own sandbox",
        },
        path_options=frozenset({"m", "f"}),
    ),
    "ls": CommandRule(
        _gnu(
            "abcdfghiklmnopqrstuvw:xABCDFGHI:LNQRST:UXZ1",
            "all/a almost-all/A author escape/b block-size: ignore-backups/B directory/d dired/D classify::/F file-type format: "
            "full-time group-directories-first no-group/G human-readable/h si dereference-command-line/H "
            "dereference-command-line-symlink-to-dir hide: hyperlink:: indicator-style: inode/i ignore:/I kibibytes/k "
            "dereference/L numeric-uid-gid/n literal/N hide-control-chars/q show-control-chars quote-name/Q quoting-style: "
            "reverse/r recursive/R size/s sort: time: time-style: tabsize:/T width:/w context/Z zero color:: help version",
        )
    ),
    "grep": CommandRule(
        _gnu(
            "0123456789A:B:C:D:EFGHIPTUVX:abcd:e:f:hiLlm:noqRrsuvwxyZz",
            "basic-regexp/G extended-regexp/E fixed-regexp/F fixed-strings/F perl-regexp/P after-context:/A before-context:/B "
            "binary-files: byte-offset/b context:/C color:: colour::/color count/c devices:/D directories:/d exclude: "
            "exclude-from: exclude-dir: file:/f files-with-matches/l files-without-match/L group-separator: help include: "
            "ignore-case/i no-ignore-case initial-tab/T label: line-buffered line-number/n line-regexp/x max-count:/m "
            "no-filename/h no-group-separator no-messages/s null/Z null-data/z only-matching/o quiet/q recursive/r "
            "dereference-recursive/R regexp:/e invert-match/v silent/q text/a binary/U unix-byte-offsets/u version/V "
            "with-filename/H word-regexp/w",
        ),
        denied={"R": "it follows every symlink while it recurses, into /proc too (use -r)"},
        path_options=frozenset({"f", "exclude-from"}),
        operands="grep",
    ),
    "pwd": CommandRule(_gnu("LP", "help version"), operands="none"),
}

# find's expression (findutils 4.9): options, tests and actions that only read names and
# metadata and print; the number of arguments each takes. Anything else is refused.
_FIND_PRIMARIES: dict[str, int] = {
    **dict.fromkeys(("-daystart", "-depth", "-mount", "-xdev", "-ignore_readdir_race", "-noignore_readdir_race", "-warn",
                     "-nowarn", "-follow", "-empty", "-executable", "-false", "-nogroup", "-nouser", "-readable", "-true",
                     "-writable", "-print", "-print0", "-ls", "-prune", "-quit", "-not", "-a", "-and", "-o", "-or", "!",
                     "(", ")", ","), 0),
    **dict.fromkeys(("-maxdepth", "-mindepth", "-regextype", "-amin", "-anewer", "-atime", "-cmin", "-cnewer", "-ctime",
                     "-fstype", "-gid", "-group", "-ilname", "-iname", "-inum", "-ipath", "-iregex", "-iwholename",
                     "-links", "-lname", "-mmin", "-mtime", "-name", "-newer", "-path", "-perm", "-regex", "-samefile",
                     "-size", "-type", "-uid", "-used", "-user", "-wholename", "-xtype", "-context", "-printf",
                     "-files0-from"), 1),
}
_FIND_PATH_PRIMARIES = frozenset({"-files0-from"})
# Primaries whose argument names a file only compared with (its times, its inode) or a path
# pattern matched against the walked paths.
_FIND_REFERENCES = frozenset({"-newer", "-anewer", "-cnewer", "-samefile", "-path", "-ipath", "-wholename", "-iwholename"})


def _check_stage(argv: list[str], allow: frozenset[str], *, piped: bool, cwd: str | None) -> list[PathSlot] | BashRefusal:
    """The allow-list and the per-command option rules for one stage: options parsed as the
    command parses them, each on its command's allow-list; ``grep -r`` not over ``/`` or
    ``/proc`` (from ``cwd``; ``None``: not checked). Returns where the stage names files
    (operands, path options), for the caller's read check."""
    name = argv[0]
    listed = " ".join(sorted(allow))
    if "/" in name or name not in allow:
        where = "piping into" if piped else "running"
        return BashRefusal(
            "bash-not-allowed", f"{where} {name!r} is not allowed: the Bash tool runs only these read-only commands: {listed}"
        )
    args = argv[1:]
    if name == "echo":
        return []  # prints its arguments; reads nothing
    if name == "find":
        return _check_find(args)
    rule = RULES.get(name)
    if rule is None:  # a command added to the allow-list without a rule: operands only
        if any(a.startswith("-") and a != "-" for a in args):
            return BashRefusal("bash-forbidden-option", f"{name} takes no options here (memtui has no rule for its options)")
        return [PathSlot(i + 1, 0, len(a)) for i, a in enumerate(args)]
    rewritten = _obsolete_count(name, args)
    if isinstance(rewritten, BashRefusal):
        return rewritten
    shift = len(rewritten) - len(args)  # 1 when `-5` became `-n 5`: later arguments moved one on

    def argv_index(at: int) -> int:
        """``argv``'s index of ``rewritten[at]`` (the count's two words both came from ``args[0]``)."""
        if shift and at < 2:
            return 1
        return at - shift + 1

    try:
        parsed = parse_options(rule.spec, rewritten)
    except OptionError as exc:
        return BashRefusal("bash-forbidden-option", f"{name} would refuse this: {exc}")
    recursive = False
    explicit_pattern = False
    slots: list[PathSlot] = []
    for (option, value, written), at in zip(parsed.options, parsed.value_at, strict=True):
        why = rule.denied.get(option)
        if why is not None:
            return BashRefusal("bash-forbidden-option", f"{name} {written} is not allowed: {why}")
        if option in rule.path_options and value is not None and at is not None:
            index, start = argv_index(at[0]), at[1]
            parts = value.split(":") if (name, option) == ("file", "m") else [value]
            for part in parts:
                slots.append(PathSlot(index, start, start + len(part)))
                start += len(part) + 1
        if name == "grep":
            explicit_pattern = explicit_pattern or option in ("e", "f")
            recursive = recursive or option == "r" or (option == "d" and value is not None and len(value) >= 3 and "recurse".startswith(value))
    operands = list(zip(parsed.operands, parsed.operand_at, strict=True))
    if rule.operands == "grep":
        if not explicit_pattern and operands:
            operands = operands[1:]
        if recursive and cwd is not None:
            for top in [o for o, _ in operands] or ["."]:
                if tree_holds_denied(top, cwd=cwd):
                    return BashRefusal(
                        "bash-denied-path", f"grep -r over {top} would read other processes' state under /proc; search the directories you need"
                    )
    if rule.operands != "none":
        slots.extend(PathSlot(argv_index(at), 0, len(operand)) for operand, at in operands)
    return slots


def _obsolete_count(name: str, args: list[str]) -> list[str] | BashRefusal:
    """``head -5`` / ``tail -5`` (and ``tail -5f``, ``tail +5``): the obsolete first-argument
    form GNU head and tail still accept, as the options it stands for."""
    if name not in ("head", "tail") or not args:
        return args
    m = re.fullmatch(r"([-+])(\d*)([bcl]?)(f?)", args[0]) if name == "tail" else re.fullmatch(r"-(\d+)([bcklmKLM]?)()", args[0])
    if m is None or args[0] in ("-", "+") or (name == "tail" and not (m.group(2) or m.group(4))):
        return args
    if name == "tail" and m.group(4):
        return BashRefusal("bash-forbidden-option", f"tail {args[0]} is not allowed: {_NEVER_ENDS}")
    count = m.group(2) if name == "head" else (m.group(1) if m.group(1) == "+" else "") + (m.group(2) or "10")
    unit = m.group(3) if name == "tail" else m.group(2)
    flag = "-c" if unit in ("b", "c", "k", "m", "K", "M") else "-n"
    return [flag, count, *args[1:]]


def _check_find(args: list[str]) -> list[PathSlot] | BashRefusal:
    """``find``'s own options, its starting points and its expression (only the primaries of
    ``_FIND_PRIMARIES``). File arguments: the starting points and ``-files0-from`` (read); the
    reference files of ``-newer``/``-anewer``/``-cnewer``/``-samefile``/``-newerXY`` and the
    path patterns of ``-path``/``-wholename`` (matched against paths that begin with a starting
    point) as references."""
    i = 0
    while i < len(args):  # find's own options: -H -L -P, -D debugopts, -Olevel
        if args[i] in ("-H", "-L", "-P") or (args[i].startswith("-O") and args[i][2:].isdigit()):
            i += 1
        elif args[i] == "-D":
            i += 2
        else:
            break
    slots: list[PathSlot] = []
    while i < len(args) and not (args[i].startswith("-") or args[i] in ("(", "!", ")", ",")):
        slots.append(PathSlot(i + 1, 0, len(args[i])))
        i += 1
    while i < len(args):
        token = args[i]
        if token in _FORBIDDEN_FIND:
            return BashRefusal("bash-forbidden-option", f"find {token} is not allowed: it runs a program, deletes or writes files")
        newer_xy = token.startswith("-newer") and len(token) == 8
        takes = 1 if newer_xy else _FIND_PRIMARIES.get(token)
        if takes is None:
            return BashRefusal("bash-forbidden-option", f"find {token} is not allowed (not one of the expressions that only read and print)")
        if takes and i + 1 < len(args):
            if token in _FIND_PATH_PRIMARIES:
                slots.append(PathSlot(i + 2, 0, len(args[i + 1])))
            elif token in _FIND_REFERENCES or (newer_xy and token[-1] != "t"):
                slots.append(PathSlot(i + 2, 0, len(args[i + 1]), read=False))
        i += 1 + (1 if takes else 0)
    return slots


_FORBIDDEN_FIND = frozenset(_FIND_FORBIDDEN)


def _check_paths(paths: list[str], cwd: str) -> BashRefusal | None:
    """The first of ``paths`` (relative to ``cwd``) the tools never read, as a refusal."""
    for path in paths:
        if path == "-":
            continue
        why = denied(path, cwd=cwd)
        if why is not None:
            return BashRefusal("bash-denied-path", f"{why}")
    return None


@dataclass(slots=True)
class ShellBudget:
    """The wall time left to the Bash commands of one agent run, all of them together.

    ``total_s``: the budget in seconds (``ToolPolicy.bash_budget_s``, default
    :data:`~memtui.core.agent.policy.BASH_BUDGET_S`, 60 s); ``clock``: seconds from any origin,
    read before and after each command (``time.monotonic``; tests pass a fake one).
    ``spent_s``: seconds charged so far; ``calls``: commands started. A command is given at
    most what is left (:meth:`remaining`); once nothing is left, :func:`run_bash` refuses every
    further command (code ``bash-budget``) and :func:`memtui.core.agent.runner.run_agent` ends
    the run after the tool calls of that reply.
    """

    total_s: float
    clock: Callable[[], float] = time.monotonic
    spent_s: float = 0.0
    calls: int = 0

    def remaining(self) -> float:
        """Seconds left (never below 0)."""
        return max(0.0, self.total_s - self.spent_s)

    @property
    def exhausted(self) -> bool:
        """True when nothing is left."""
        return self.spent_s >= self.total_s

    def describe(self) -> str:
        """``"the Bash commands of this run used up their time budget (60 s for all of them
        together, 7 commands)"``."""
        return (
            f"the Bash commands of this run used up their time budget ({self.total_s:g} s for all of them together, "
            f"{self.calls} command{'s' if self.calls != 1 else ''})"
        )


def run_bash(policy: ToolPolicy, command: str, budget: ShellBudget | None = None) -> ToolOutcome:
    """Check ``command`` against ``policy.bash_allow`` and run it in ``policy.cwd`` (with
    ``policy.alias``: its file arguments and the cwd mapped, see :func:`parse_command`; the
    caller, :func:`memtui.core.agent.tools.execute`, maps the output back).

    Each stage runs in a session of its own under ``RLIMIT_AS`` = ``policy.bash_memory_bytes``,
    ``RLIMIT_CPU`` = ``policy.bash_cpu_s`` (``SIGXCPU``; ``SIGKILL`` a second later),
    ``RLIMIT_FSIZE`` = the output cap in bytes (its stderr goes to a temporary file) and
    ``RLIMIT_CORE`` = 0 (a crash writes no core file into ``cwd``); the whole pipeline gets
    ``policy.bash_timeout_s`` of wall time, or what is left of ``budget`` when that is less, and
    is then stopped by killing each stage's process group.

    Result: stdout (UTF-8, bad bytes replaced), then any stderr under ``[stderr]``, cut at
    ``policy.max_output_chars`` (the command stopped when its stdout passes 4 bytes a
    character); then, when a limit stopped it, a line naming the limit. ``is_error`` with code
    ``bash-exit`` when the last stage exits non-zero (``grep`` finding nothing exits 1) or a stage
    is killed by a signal memtui did not send, ``bash-limit`` when a stage ran out of memory (it
    exited non-zero with a last stderr line ending in ``memory exhausted`` or ``Cannot allocate
    memory``, which the allowed commands print under ``LC_ALL=C.UTF-8`` when an allocation
    fails) or of CPU time (killed by ``SIGXCPU``, or by ``SIGKILL`` memtui did not send after
    using the whole CPU limit), ``bash-timeout`` at the wall-clock limit, ``bash-budget`` when
    ``budget`` ran out during the command or before it (then nothing runs), a refusal (see
    :func:`parse_command`), ``bash-failed`` (the command could not start). Never raises.
    """
    if budget is not None and budget.exhausted:
        return ToolOutcome(f"Refused: {budget.describe()}; no more Bash commands run in this run.", is_error=True, code="bash-budget")
    parsed = parse_command(command, policy.bash_allow, policy.cwd, policy.alias)
    if isinstance(parsed, BashRefusal):
        return ToolOutcome(f"Refused: {parsed.reason}.", is_error=True, code=parsed.code)
    env = {key: os.environ[key] for key in _ENV_KEEP if key in os.environ}
    env["LC_ALL"] = "C.UTF-8"
    resolved: list[list[str]] = []
    for argv in parsed:
        exe = shutil.which(argv[0], path=env.get("PATH", os.defpath))
        if exe is None:
            return ToolOutcome(f"Command not found: {argv[0]}.", is_error=True, code="bash-failed")
        resolved.append([exe, *argv[1:]])
    limit = policy.bash_timeout_s
    started = 0.0
    if budget is not None:
        limit = min(limit, budget.remaining())
        started = budget.clock()
        budget.calls += 1
    try:
        cwd = policy.alias.cwd(policy.cwd) if policy.alias is not None else os.fspath(policy.cwd)
        return _run_pipeline(resolved, policy, cwd, env, limit, budget if budget is not None and limit < policy.bash_timeout_s else None)
    except (OSError, subprocess.SubprocessError) as exc:
        return ToolOutcome(f"The command could not run: {exc}.", is_error=True, code="bash-failed")
    finally:
        if budget is not None:
            budget.spent_s += max(0.0, budget.clock() - started)


@dataclass(slots=True)
class _Stage:
    """One running stage: its process, its stderr file, and once reaped its status and usage."""

    proc: subprocess.Popen[bytes]
    errfile: IO[bytes]
    usage: resource.struct_rusage | None = None
    reaped: bool = False
    stderr: bytes = b""

    @property
    def name(self) -> str:
        return os.path.basename(str(self.proc.args[0]))  # type: ignore[index]

    def settle(self, status: int, usage: resource.struct_rusage | None) -> None:
        self.proc.returncode = os.waitstatus_to_exitcode(status)
        self.usage = usage
        self.reaped = True

    def poll(self) -> bool:
        """Reap the stage if it has ended (no wait); True once it is reaped."""
        if not self.reaped:
            try:
                pid, status, usage = os.wait4(self.proc.pid, os.WNOHANG)
            except ChildProcessError:  # reaped elsewhere: its status is lost
                self.reaped = True
                return True
            if pid:
                self.settle(status, usage)
        return self.reaped

    def kill(self) -> None:
        """SIGKILL the stage's process group (its session: the command and anything it forked).
        Only before the stage is reaped: until then its process ID cannot be reused."""
        if not self.reaped:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.proc.pid, signal.SIGKILL)

    def reap(self) -> None:
        """Wait for the stage to end (after :meth:`kill`, at once)."""
        if not self.reaped:
            try:
                _, status, usage = os.wait4(self.proc.pid, 0)
            except ChildProcessError:
                self.poll()
                return
            self.settle(status, usage)


def _rlimits(policy: ToolPolicy, file_cap: int) -> tuple[tuple[int, int, int], ...]:
    """``(resource, soft, hard)`` for each limit a stage gets, each hard limit no higher than
    memtui's own (a process may always lower its limits, so the child's ``setrlimit`` cannot
    fail)."""
    wanted = (
        (resource.RLIMIT_AS, policy.bash_memory_bytes, policy.bash_memory_bytes),
        (resource.RLIMIT_CPU, policy.bash_cpu_s, policy.bash_cpu_s + 1),
        (resource.RLIMIT_FSIZE, file_cap, file_cap),
        (resource.RLIMIT_CORE, 0, 0),
    )
    result = []
    for which, soft, hard in wanted:
        _, own_hard = resource.getrlimit(which)
        if own_hard != resource.RLIM_INFINITY:
            hard = min(hard, own_hard)
        result.append((which, min(soft, hard), hard))
    return tuple(result)


def _set_rlimits(limits: tuple[tuple[int, int, int], ...]) -> None:
    """Run in the child between fork and exec (``preexec_fn``): set each limit. It takes no
    lock another thread could hold at the fork (no import, no I/O, no logging), the case for
    which the ``subprocess`` docs call ``preexec_fn`` unsafe with threads."""
    for which, soft, hard in limits:
        resource.setrlimit(which, (soft, hard))


def _run_pipeline(stages: list[list[str]], policy: ToolPolicy, cwd: str, env: dict[str, str], limit: float, budget: ShellBudget | None) -> ToolOutcome:
    """Start the stages joined by pipes in ``cwd`` under the limits of :func:`_rlimits`; keep at most
    ``max_output_chars`` * 4 bytes of the last stage's stdout (then stop everything); stop
    everything ``limit`` seconds after the start. ``budget``: the run's budget when ``limit``
    is what was left of it (the messages name it then)."""
    cap = policy.max_output_chars * 4  # UTF-8: at most 4 bytes a character
    preexec = functools.partial(_set_rlimits, _rlimits(policy, cap))
    started = time.monotonic()
    deadline = started + limit
    running: list[_Stage] = []
    stdin: IO[bytes] | int = subprocess.DEVNULL
    with contextlib.ExitStack() as stack:
        stack.callback(_stop, running)
        for argv in stages:
            errfile = stack.enter_context(tempfile.TemporaryFile())
            proc = subprocess.Popen(
                argv, stdin=stdin, stdout=subprocess.PIPE, stderr=errfile, cwd=cwd, env=env, shell=False,
                start_new_session=True, preexec_fn=preexec,
            )
            if running and running[-1].proc.stdout is not None:
                running[-1].proc.stdout.close()  # the next stage owns it now: SIGPIPE reaches the writer
            running.append(_Stage(proc, errfile))
            assert proc.stdout is not None
            stdin = proc.stdout
        out = running[-1].proc.stdout
        assert isinstance(out, io.BufferedReader)
        stack.callback(out.close)
        buf = bytearray()

        def read() -> None:
            while len(buf) <= cap:
                chunk = out.read1(65_536)
                if not chunk:
                    return
                buf.extend(chunk)

        reader = threading.Thread(target=read, name="memtui-agent-bash", daemon=True)
        reader.start()
        reader.join(max(0.0, deadline - time.monotonic()))
        timed_out = reader.is_alive()
        truncated = len(buf) > cap
        if not (timed_out or truncated):
            timed_out = not _wait_all(running, deadline)  # a stage still running after the last one ended
        if timed_out or truncated:
            for stage in reversed(running):  # the last first: no stage sees EOF and prints once stopped
                stage.kill()
        _stop(running)
        elapsed = time.monotonic() - started
        reader.join(1.0)
        for stage in running:
            stage.errfile.seek(0)
            stage.stderr = stage.errfile.read(cap)
    text = _text(bytes(buf), b"".join(stage.stderr for stage in running), policy.max_output_chars, policy.show)
    return _outcome(text, running, policy, timed_out=timed_out, truncated=truncated, killed=timed_out or truncated,
                    elapsed=elapsed, budget=budget)


def _wait_all(stages: list[_Stage], deadline: float) -> bool:
    """Reap every stage by ``deadline`` (monotonic seconds); False when one still runs then.
    Polls as ``subprocess.Popen.wait`` does with a timeout: sleeps doubling up to 50 ms."""
    delay = 0.0005
    while not all(stage.poll() for stage in stages):
        left = deadline - time.monotonic()
        if left <= 0:
            return False
        time.sleep(min(delay, left))
        delay = min(delay * 2, 0.05)
    return True


def _stop(stages: list[_Stage]) -> None:
    """Kill every stage still running, the last first, and reap them all (a no-op for those
    reaped)."""
    for stage in reversed(stages):
        if not stage.poll():
            stage.kill()
    for stage in stages:
        stage.reap()


def _outcome(text: str, stages: list[_Stage], policy: ToolPolicy, *, timed_out: bool, truncated: bool, killed: bool,
             elapsed: float, budget: ShellBudget | None) -> ToolOutcome:
    """The result of a pipeline that ran: the first limit a stage hit, else the time limit,
    else the output cap, else the last stage's status."""
    for stage in stages:
        why = _limit_hit(stage, policy, killed=killed)
        if why is not None:
            return ToolOutcome(f"{text}\n[stopped: {why}]".lstrip("\n"), is_error=True, code="bash-limit")
    if timed_out and budget is not None:
        return ToolOutcome(
            f"{text}\n[stopped after {elapsed:.1f} s: {budget.describe()}; no more Bash commands run in this run]".lstrip("\n"),
            is_error=True,
            code="bash-budget",
        )
    if timed_out:
        return ToolOutcome(
            f"{text}\n[timed out after {policy.bash_timeout_s:g} s; the command was stopped]".lstrip("\n"),
            is_error=True,
            code="bash-timeout",
        )
    cut = [stage for stage in stages if stage.proc.returncode == -signal.SIGXFSZ]
    if cut:
        return ToolOutcome(f"{text}\n[stderr cut at {_size(policy.max_output_chars * 4)}; {cut[0].name} was stopped]".lstrip("\n"))
    if truncated:
        return ToolOutcome(text)
    code = stages[-1].proc.returncode
    if code is not None and code < 0:
        return ToolOutcome(f"{text}\n[killed by signal {_signal_name(-code)}]".lstrip("\n"), is_error=True, code="bash-exit")
    if code:
        return ToolOutcome(f"{text}\n[exit code {code}]".lstrip("\n"), is_error=True, code="bash-exit")
    return ToolOutcome(text or "(no output)")


# What the allowed commands print when an allocation fails: gnulib's xalloc_die ("tail: memory
# exhausted"), and strerror(ENOMEM) after a file name ("grep: x: Cannot allocate memory"), in
# the C locale every stage runs under.
_OUT_OF_MEMORY = (b": memory exhausted", b": Cannot allocate memory")


def _limit_hit(stage: _Stage, policy: ToolPolicy, *, killed: bool) -> str | None:
    """Which of its limits ``stage`` ran into, in words; ``None`` when none did. ``killed``:
    memtui sent SIGKILL to the pipeline (a SIGKILL is then not the CPU limit's)."""
    code = stage.proc.returncode
    if not code:
        return None
    usage = stage.usage
    cpu = (usage.ru_utime + usage.ru_stime) if usage is not None else 0.0
    if code == -signal.SIGXCPU or (code == -signal.SIGKILL and not killed and cpu >= policy.bash_cpu_s):
        return f"{stage.name} used more than {policy.bash_cpu_s} s of CPU time (the limit of one command)"
    last = stage.stderr.rstrip(b"\n").rpartition(b"\n")[2]
    if code > 0 and last.endswith(_OUT_OF_MEMORY):
        return f"{stage.name} used more than {_size(policy.bash_memory_bytes)} of memory (the limit of one command)"
    return None


def _size(n: int) -> str:
    """``512 MiB``, ``64 KiB``, ``300 bytes``."""
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size:
            return f"{n / size:.4g} {unit}"
    return f"{n} bytes"


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return str(number)


def _text(stdout: bytes, stderr: bytes, max_chars: int, show: Callable[[str], str]) -> str:
    """stdout, then stderr under a marker, each passed through ``show`` (``ToolPolicy.show``:
    before the cut, so no path is cut half-mapped), cut at ``max_chars`` with a note."""
    text = show(stdout.decode("utf-8", errors="replace"))
    err = show(stderr.decode("utf-8", errors="replace"))
    if err:
        text = f"{text}{'' if not text or text.endswith(chr(10)) else chr(10)}[stderr]\n{err}"
    return cap_text(text, max_chars)


def cap_text(text: str, max_chars: int) -> str:
    """``text`` cut at ``max_chars`` characters, with a note saying how much was left out."""
    if len(text) <= max_chars:
        return text.rstrip("\n")
    return f"{text[:max_chars]}\n[output truncated at {max_chars:,} characters]"
