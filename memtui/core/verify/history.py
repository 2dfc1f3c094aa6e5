"""What a project's git history says once existed: every path any commit had, the renames git
recorded, and which of a set of identifiers a line some commit removed defined.

A claim about the code that the project does not hold now is only *stale* when the project once
held it: a path a commit added and a later one deleted or renamed, a function whose lines a commit
removed. A name the history never had — a library's class, a game's data file, a path of another
repository, a word in backticks — is no claim about this project, and saying it "went stale"
would be a false alarm.

Each read is one ``git log`` over every ref (``--all``), bounded by the seconds its caller gives
(the claims check shares ``HISTORY_TIMEOUT_S`` among them) and ``MAX_HISTORY_BYTES`` bytes of
output (memtui's bounds); a read cut short is ``complete=False`` and its caller treats what it did
not see as unknown. A repository whose history is not all here — a shallow or a partial clone, or
one with no commit yet — is read not at all (``history_problem``): its history confirms nothing,
and reading a partial clone's old files would fetch them. Nothing is written; git runs with no
standard input and ``GIT_NO_LAZY_FETCH=1``.
"""

from __future__ import annotations

import re
import subprocess
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from memtui.core.verify.tree import git_env

# memtui's bounds on reading the history: seconds for all the reads of one check together,
# bytes of git's output per read.
HISTORY_TIMEOUT_S = 10.0
MAX_HISTORY_BYTES = 64 * 1024 * 1024
# At most this many identifiers go into one ``git log -G`` pattern (git compiles it once).
MAX_PATTERN_WORDS = 500
# A removed line longer than this is not read for definitions (a definition is one short line;
# a minified or generated line is none, and reading it would cost the most).
MAX_DEFINITION_CHARS = 2000
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# A line that defines a name (after the diff's ``-``): a function, class, type, method, constant
# or top-level binding in the languages memories speak of. A name the project only used (an
# import of a library's class, a call, a key in a list) is no symbol of its own.
_DEFINES = re.compile(
    r"^\s*(?:(?:export|default|declare|abstract|async|public|private|protected|static|final|inline|extern|unsafe|pub(?:\([^)]*\))?)\s+)*"
    r"(?:function\*?|class|interface|type|enum|def|fn|func|struct|trait|module|namespace|record|object|macro|typedef|#define)\s+"
    r"(?:\([^)]*\)\s*)?([A-Za-z_$][\w$]*)"
    r"|^(?:export\s+)?(?:const|let|var|val)\s+([A-Za-z_$][\w$]*)"
    r"|^\s+(?:(?:public|private|protected|static|async|readonly|override|get|set|abstract)\s+)*([A-Za-z_$][\w$]*)\s*(?:<[^>]*>)?\s*\([^;]*\)\s*(?::\s*[^;={]+)?\{\s*$"
    r"|^\s*(?:(?:export|static|public|private|readonly)\s+)*([A-Za-z_$][\w$]*)\s*[:=]\s*(?:async\s+)?(?:function\b|\([^)]*\)\s*(?::\s*[^=]+)?=>|[A-Za-z_$][\w$]*\s*=>)"
    r"|^([A-Za-z_][\w]*)\s*(?::\s*[^=]+)?=(?!=)"
)
_NOT_NAMES = frozenset({"if", "for", "while", "switch", "catch", "function", "return", "else", "do", "try", "with", "elif", "super", "this", "new"})


def defined_names(line: str) -> set[str]:
    """The names ``line`` (a line of code) defines (``_DEFINES``)."""
    out: set[str] = set()
    for m in _DEFINES.finditer(line):
        name = next((g for g in m.groups() if g), None)
        if name and name not in _NOT_NAMES:
            out.add(name)
    return out


# The files whose removed lines are searched for names: source code (a name in a data file, a
# binary or a document is no symbol of the code; reading binaries' blobs also costs the most).
CODE_EXTENSIONS = (
    "py pyi pyx ts tsx mts cts js jsx mjs cjs vue svelte astro go rs java kt kts scala groovy rb php swift m mm c h cc cpp "
    "cxx hpp hh cs fs fsx vb dart lua r jl ex exs erl hrl hs ml mli clj cljs elm nim zig sol sql prisma graphql gql proto "
    "thrift sh bash zsh fish ps1 tf hcl nix gradle cmake mk glsl wgsl hlsl frag vert"
).split()


@dataclass(frozen=True, slots=True)
class History:
    """What was read: ``found`` (paths, or identifiers), ``complete`` (the read saw the whole
    history), ``error`` (why not, or ``None``)."""

    found: frozenset[str]
    complete: bool
    error: str | None = None


def _stream(root: Path, args: list[str], timeout: float, max_bytes: int, on_line) -> tuple[bool, str | None]:
    """Run ``git -C root args`` and feed each output line (bytes, no line end) to ``on_line``
    until it returns ``True`` (enough), the output ends, ``timeout`` seconds pass or
    ``max_bytes`` were read. Returns ``(complete, error)``."""
    try:
        proc = subprocess.Popen(["git", "-C", str(root), *args], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                env={**git_env(), "GIT_NO_LAZY_FETCH": "1"})
    except OSError as exc:
        return False, f"git could not run ({exc.strerror or exc})"
    timer = threading.Timer(timeout, proc.kill)
    timer.start()
    started = time.monotonic()
    read = 0
    done = False
    try:
        assert proc.stdout is not None
        for n, raw in enumerate(proc.stdout):
            read += len(raw)
            if read > max_bytes:
                proc.kill()
                return False, f"the history is over {max_bytes // (1024 * 1024)} MB"
            if n % 256 == 0 and time.monotonic() - started >= timeout:
                proc.kill()  # the timer kills git; this stops the reading of what it wrote
                return False, f"reading the history took over {timeout:.0f} s"
            if on_line(raw.rstrip(b"\n")):
                done = True
                proc.kill()
                break
    finally:
        timer.cancel()
        if proc.stdout is not None:
            proc.stdout.close()
        rc = proc.wait()
    if done:
        return True, None
    if time.monotonic() - started >= timeout:
        return False, f"reading the history took over {timeout:.0f} s"
    if rc != 0:
        return False, "git could not read the history (not a repository, or no commits)"
    return True, None


def history_problem(root: Path, *, timeout: float = HISTORY_TIMEOUT_S) -> str | None:
    """Why the repository at ``root`` has no whole history to read, or ``None`` when it has one:
    no commit yet (a fresh ``git init``), a shallow clone (its older commits are not there: a
    path it lacks may still have existed), a partial clone (reading old file contents would
    fetch them from its remote), or git failing."""
    lines: list[bytes] = []

    def take(line: bytes) -> bool:
        lines.append(line)
        return False

    ok, error = _stream(root, ["rev-parse", "--is-shallow-repository"], timeout, 1024, take)
    if not ok:
        return error or "git could not read the repository"
    if lines and lines[0].strip() == b"true":
        return "a shallow clone: its older commits are not here"
    lines.clear()
    _stream(root, ["config", "--get-regexp", r"^(remote\..*\.promisor|extensions\.partialclone)$"], timeout, 64 * 1024, take)
    if any(line.strip().endswith(b"true") or line.startswith(b"extensions.partialclone") for line in lines):
        return "a partial clone: reading its history would fetch from its remote"
    lines.clear()
    ok, _ = _stream(root, ["rev-list", "--all", "--max-count=1"], timeout, 1024, take)
    if not ok or not lines:
        return "no commits yet"
    return None


def history_paths(root: Path, *, timeout: float = HISTORY_TIMEOUT_S, max_bytes: int = MAX_HISTORY_BYTES) -> History:
    """Every path (POSIX, relative to the repository's top) that any commit of any ref touched:
    ``git log --all --format= --name-only --no-renames`` (a renamed file counts under both
    names)."""
    paths: set[str] = set()

    def take(line: bytes) -> bool:
        if line:
            paths.add(line.decode("utf-8", errors="surrogateescape"))
        return False

    complete, error = _stream(root, ["-c", "core.quotepath=off", "log", "--all", "--format=", "--name-only", "--no-renames"], timeout, max_bytes, take)
    return History(frozenset(paths), complete, error)


def history_renames(root: Path, *, timeout: float = HISTORY_TIMEOUT_S, max_bytes: int = MAX_HISTORY_BYTES) -> dict[str, str]:
    """Old path → the path git's rename detection says it became (``git log --all -M
    --diff-filter=R --name-status``; the newest rename of a path wins). ``{}`` when the history
    cannot be read whole."""
    renames: dict[str, str] = {}

    def take(line: bytes) -> bool:
        parts = line.decode("utf-8", errors="surrogateescape").split("\t")
        if len(parts) == 3 and parts[0].startswith("R") and parts[1] not in renames:
            renames[parts[1]] = parts[2]  # newest first: an older rename of the same path does not win
        return False

    complete, _ = _stream(root, ["-c", "core.quotepath=off", "log", "--all", "--format=", "-M", "--diff-filter=R", "--name-status"], timeout, max_bytes, take)
    return renames if complete else {}


def removed_words(root: Path, words: Iterable[str], *, timeout: float = HISTORY_TIMEOUT_S, max_bytes: int = MAX_HISTORY_BYTES) -> History:
    """Which of ``words`` (identifiers) a line some commit removed defined (``defined_names``),
    all the reads together within ``timeout`` seconds:
    ``git log --all -p -U0 -G(word|…) -- *.py *.ts …`` shows only the changes to source files
    (``CODE_EXTENSIONS``) that add or remove a line holding one of them; the removed lines
    (``-…``) are searched. Words that are not plain identifiers are left out."""
    wanted = sorted({w for w in words if _IDENT.fullmatch(w)})
    found: set[str] = set()
    if not wanted:
        return History(frozenset(), True)
    complete = True
    error: str | None = None
    deadline = time.monotonic() + timeout
    for at in range(0, len(wanted), MAX_PATTERN_WORDS):
        budget = deadline - time.monotonic()
        if budget <= 0:
            return History(frozenset(found), False, f"reading the history took over {timeout:.0f} s")
        chunk = wanted[at : at + MAX_PATTERN_WORDS]
        chunk_set = set(chunk)
        left = set(chunk)

        def take(line: bytes) -> bool:
            if line.startswith(b"-") and not line.startswith(b"---") and len(line) <= MAX_DEFINITION_CHARS:
                for word in defined_names(line[1:].decode("utf-8", errors="replace")) & chunk_set:
                    found.add(word)
                    left.discard(word)
            return not left

        pattern = "(" + "|".join(chunk) + ")"
        ok, why = _stream(root, ["log", "--all", "--format=", "-p", "-U0", "--no-renames", "--no-ext-diff", "--no-color", "--no-textconv", f"-G{pattern}", "--", *(f"*.{ext}" for ext in CODE_EXTENSIONS)], budget, max_bytes, take)
        if not ok:
            complete, error = False, why
    return History(frozenset(found), complete, error)
