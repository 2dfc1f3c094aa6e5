"""The read-only ``Bash`` tool (SPEC §7): an allow-list, no shell.

A command line is checked in two passes. A quote-aware scan of the raw text refuses every
shell construct that could write, chain or substitute — redirection (``>``, ``>>``, ``<``,
``2>``, ``&>``), ``;``, ``&&``, ``||``, ``&``, ``|&``, subshells, newlines, backticks,
``$(...)`` and ``${...}`` — and splits the line at plain ``|``. Each stage is then split with
:func:`shlex.split`; its command must be a bare name on the allow-list, and a few options that
write or never end are refused (``find -exec/-execdir/-ok/-okdir/-delete/-fprint*/-fls``,
``tail -f``, ``file -C``). The stages run with ``subprocess.Popen`` (``shell=False``) joined by
OS pipes, with a timeout and a cap on the output kept; nothing expands ``*`` or ``$VAR``.
"""

from __future__ import annotations

import contextlib
import io
import os
import shlex
import shutil
import subprocess
import tempfile
import threading
from dataclasses import dataclass
from typing import IO

from memtui.core.agent.policy import ToolOutcome, ToolPolicy

__all__ = ["BashRefusal", "cap_text", "parse_command", "run_bash"]

# `find` primaries that run a program, delete, or write a file (GNU findutils manual).
_FIND_FORBIDDEN = ("-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0", "-fprintf", "-fls")
# Variables passed to the commands: enough to find them and decode text, nothing else.
_ENV_KEEP = ("PATH", "HOME", "TZ")


@dataclass(frozen=True, slots=True)
class BashRefusal:
    """Why a command line is refused: ``code`` (stable) and ``reason`` (a sentence)."""

    code: str
    reason: str


def parse_command(command: str, allow: frozenset[str]) -> list[list[str]] | BashRefusal:
    """Split ``command`` into pipeline stages (each an argv list) or say why it is refused.

    Codes: ``bash-empty``, ``bash-syntax`` (unbalanced quotes, an empty pipeline stage),
    ``bash-substitution`` (backticks, ``$(``, ``${`` outside single quotes), ``bash-redirection``,
    ``bash-chaining`` (``;``, ``&&``, ``||``, ``&``, ``|&``, newline, ``(``/``)``),
    ``bash-not-allowed`` (a command not on ``allow``, or given as a path), and
    ``bash-forbidden-option``.
    """
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
        refusal = _check_stage(argv, allow, piped=index > 0)
        if refusal is not None:
            return refusal
        stages.append(argv)
    return stages


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


def _check_stage(argv: list[str], allow: frozenset[str], *, piped: bool) -> BashRefusal | None:
    """The allow-list and the per-command option rules for one stage."""
    name = argv[0]
    listed = " ".join(sorted(allow))
    if "/" in name or name not in allow:
        where = "piping into" if piped else "running"
        return BashRefusal(
            "bash-not-allowed", f"{where} {name!r} is not allowed: the Bash tool runs only these read-only commands: {listed}"
        )
    args = argv[1:]
    if name == "find":
        for arg in args:
            if arg in _FIND_FORBIDDEN:
                return BashRefusal("bash-forbidden-option", f"find {arg} is not allowed: it runs a program, deletes or writes files")
    elif name == "tail":
        for arg in args:
            if arg.startswith("--follow") or arg == "--retry" or (_short_flags(arg) and ("f" in arg or "F" in arg)):
                return BashRefusal("bash-forbidden-option", f"tail {arg} is not allowed: following a file never ends")
    elif name == "file":
        for arg in args:
            if arg == "--compile" or (_short_flags(arg) and "C" in arg):
                return BashRefusal("bash-forbidden-option", f"file {arg} is not allowed: it writes a compiled magic file")
    return None


def _short_flags(arg: str) -> bool:
    """``-abc``-style cluster of short options, digits included (``tail -5f``); not ``--long``."""
    return len(arg) > 1 and arg[0] == "-" and arg[1] != "-" and arg[1:].isalnum()


def run_bash(policy: ToolPolicy, command: str) -> ToolOutcome:
    """Check ``command`` against ``policy.bash_allow`` and run it in ``policy.cwd``.

    Result: stdout (UTF-8, bad bytes replaced), then any stderr under ``[stderr]``, cut at
    ``policy.max_output_chars``; ``is_error`` when the last stage exits non-zero (code
    ``bash-exit``; ``grep`` finding nothing exits 1), on a refusal (see :func:`parse_command`),
    on ``bash-timeout`` (``policy.bash_timeout_s``) and ``bash-failed`` (the command could not
    start). Never raises.
    """
    parsed = parse_command(command, policy.bash_allow)
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
    try:
        return _run_pipeline(resolved, policy, env)
    except OSError as exc:
        return ToolOutcome(f"The command could not run: {exc}.", is_error=True, code="bash-failed")


def _run_pipeline(stages: list[list[str]], policy: ToolPolicy, env: dict[str, str]) -> ToolOutcome:
    """Start the stages joined by pipes, keep at most ``max_output_chars`` * 4 bytes of the last
    stage's stdout (then stop everything), kill everything at the timeout."""
    cap = policy.max_output_chars * 4  # UTF-8: at most 4 bytes a character
    procs: list[subprocess.Popen[bytes]] = []
    errs: list[IO[bytes]] = []
    stdin: IO[bytes] | int = subprocess.DEVNULL
    with contextlib.ExitStack() as stack:
        stack.callback(_kill_all, procs)
        for argv in stages:
            errfile = stack.enter_context(tempfile.TemporaryFile())
            errs.append(errfile)
            proc = subprocess.Popen(
                argv, stdin=stdin, stdout=subprocess.PIPE, stderr=errfile, cwd=policy.cwd, env=env, shell=False,
                start_new_session=True,
            )
            if procs and procs[-1].stdout is not None:
                procs[-1].stdout.close()  # the next stage owns it now: SIGPIPE reaches the writer
            procs.append(proc)
            assert proc.stdout is not None
            stdin = proc.stdout
        out = procs[-1].stdout
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
        reader.join(policy.bash_timeout_s)
        timed_out = reader.is_alive()
        truncated = len(buf) > cap
        if timed_out or truncated:
            _kill_all(procs)
        for proc in procs:
            try:
                proc.wait(timeout=max(0.5, policy.bash_timeout_s))
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        reader.join(1.0)
        stderr = b""
        for captured in errs:
            captured.seek(0)
            stderr += captured.read(cap)
    if timed_out:
        text = _text(bytes(buf), stderr, policy.max_output_chars)
        return ToolOutcome(
            f"{text}\n[timed out after {policy.bash_timeout_s:g} s; the command was stopped]".lstrip("\n"),
            is_error=True,
            code="bash-timeout",
        )
    text = _text(bytes(buf), stderr, policy.max_output_chars)
    code = procs[-1].returncode
    if truncated:
        return ToolOutcome(text)
    if code != 0:
        return ToolOutcome(f"{text}\n[exit code {code}]".lstrip("\n"), is_error=True, code="bash-exit")
    return ToolOutcome(text or "(no output)")


def _kill_all(procs: list[subprocess.Popen[bytes]]) -> None:
    """Kill every stage still running (a no-op for those that ended)."""
    for proc in procs:
        if proc.poll() is None:
            proc.kill()


def _text(stdout: bytes, stderr: bytes, max_chars: int) -> str:
    """stdout, then stderr under a marker, cut at ``max_chars`` with a note."""
    text = stdout.decode("utf-8", errors="replace")
    err = stderr.decode("utf-8", errors="replace")
    if err:
        text = f"{text}{'' if not text or text.endswith(chr(10)) else chr(10)}[stderr]\n{err}"
    return cap_text(text, max_chars)


def cap_text(text: str, max_chars: int) -> str:
    """``text`` cut at ``max_chars`` characters, with a note saying how much was left out."""
    if len(text) <= max_chars:
        return text.rstrip("\n")
    return f"{text[:max_chars]}\n[output truncated at {max_chars:,} characters]"
