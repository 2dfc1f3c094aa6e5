"""The tool policy shared by every agent memtui runs (docs/behaviour.md §7 "Extractor tools", §8 dream).

A :class:`ToolPolicy` says what the model may touch: ``Read``/``Grep``/``Glob`` anywhere (or
below ``read_roots``), ``Bash`` only for the read-only commands of ``bash_allow``, ``Write`` and
``Edit`` only inside ``write_root`` (checked by :func:`memtui.core.writes.safepath.validate_inside`),
nothing else. Every call produces a :class:`ToolOutcome`; a refusal is an outcome with
``is_error=True``, a ``code`` and a sentence — never an exception — so the model can read why.
Each call can also be recorded as a :class:`ToolCall` for the UI's event stream.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from memtui.core.agent.alias import PathAlias

__all__ = [
    "ALL_TOOLS",
    "BASH_BUDGET_S",
    "BASH_CPU_S",
    "BASH_MEMORY_BYTES",
    "BASH_TIMEOUT_S",
    "DEFAULT_BASH_ALLOW",
    "ToolCall",
    "ToolOutcome",
    "ToolPolicy",
]

# docs/behaviour.md §7: the extractor's (and the dream agent's) whole tool set.
ALL_TOOLS: tuple[str, ...] = ("Read", "Grep", "Glob", "Bash", "Write", "Edit")

# docs/behaviour.md §7's read-only allow-list (`ls find grep cat head tail wc stat file`), plus `pwd` and
# `echo`: neither reads nor writes a file, and without a shell `echo` expands nothing.
DEFAULT_BASH_ALLOW: frozenset[str] = frozenset(
    {"ls", "find", "grep", "cat", "head", "tail", "wc", "stat", "file", "pwd", "echo"}
)

# Limits of one Bash command, each stage of a pipeline on its own (memtui's choices).
# Memory: RLIMIT_AS, address space rather than resident memory, so it also counts what a command
# maps without touching (its libraries; `file` needs some 20 MiB for its compiled magic database).
# 512 MiB leaves the read-only commands room for a file with lines of hundreds of MB (grep and
# tail keep a line whole) and stops one that buffers without end (`tail -n 1 /dev/zero` holds a
# line that never ends) at a fraction of a laptop's memory.
BASH_MEMORY_BYTES = 512 * 1024 * 1024
# Wall clock: docs/behaviour.md §11 "never a hang".
BASH_TIMEOUT_S = 10.0
# CPU time (RLIMIT_CPU, whole seconds): the same as the wall clock, so inside memtui the wall
# clock stops a command first; this one ends a command still running after memtui itself was
# killed (each stage runs in a session of its own, out of reach of the terminal's signals).
BASH_CPU_S = 10
# All the Bash commands of one agent run together, in wall-clock seconds: six commands at the
# per-command limit. The agent reads mostly through Read/Grep/Glob; a run that spends a minute
# in shell commands is looping, and a dozen slow calls would otherwise add up to two minutes.
BASH_BUDGET_S = 60.0


@dataclass(frozen=True, slots=True)
class ToolPolicy:
    """What an agent's tools may do.

    - ``write_root``: the only directory ``Write``/``Edit`` may change (the memory dir, or the
      dream's staging copy of it); ``None`` turns both tools off. A relative ``file_path`` is
      taken relative to it.
    - ``read_roots``: directories ``Read``/``Grep``/``Glob`` are confined to (compared after
      ``realpath``); ``None`` means anywhere (docs/behaviour.md §7). ``Bash`` cannot be confined by path,
      so it is not offered when ``read_roots`` is set.
    - ``cwd``: where relative read paths and ``Bash`` commands start.
    - ``bash_allow``: command names ``Bash`` may run (bare names, looked up on ``PATH``).
    - ``tools``: the tool names offered at all (a subset of :data:`ALL_TOOLS`).

    Caps (each a memtui choice unless a source is named):

    - ``max_output_chars`` 30,000: the reference agent's cap on a Bash result; also the cap
      on any tool result here.
    - ``read_max_bytes`` 262,144: the reference agent's Read refuses a whole file over 256 KB
      and asks for ``offset``/``limit``; with them, any size is read line by line.
    - ``read_default_lines`` 2,000 and ``read_max_line_chars`` 2,000: the reference agent's
      Read defaults (lines from ``offset``; longer lines cut).
    - ``grep_max_matches`` 200 lines, ``grep_max_file_bytes`` 1 MiB (larger files skipped),
      ``glob_max_results`` 100 (the reference agent's Glob returns at most 100 paths),
      ``search_timeout_s`` 10 s of wall time for one ``Grep``/``Glob``.
    - ``bash_timeout_s`` 10 s of wall time per command (pipeline) — docs/behaviour.md §11 "never
      a hang"; ``bash_memory_bytes`` 512 MiB of address space (``RLIMIT_AS``) and ``bash_cpu_s``
      10 s of CPU time (``RLIMIT_CPU``) for each stage; ``bash_budget_s`` 60 s of wall time for
      all the Bash commands of one agent run together (:class:`memtui.core.agent.bash.ShellBudget`).
      The reasons are beside the constants :data:`BASH_MEMORY_BYTES`, :data:`BASH_TIMEOUT_S`,
      :data:`BASH_CPU_S` and :data:`BASH_BUDGET_S`.
    - ``write_max_bytes`` 250,000: the same limit as a team-memory entry (``memtui team
      import``).

    A CLI release's rules for its memory agents (the claude flavor: Claude Code 2.1.328's
    dream and extraction) add:

    - ``write_suffixes``: ``Write``/``Edit`` only on files with one of these endings (``.md``),
      and never on a path with ``:`` below ``write_root``; ``None``: any file.
    - ``remove_md``: ``Bash`` may also run ``rm`` (no option but ``-f``) of ``.md`` files inside
      ``write_root``, outside ``protected_dirs`` (``.git``, ``agents``).
    - ``denials``: the release's own refusal texts, ``{"shell": …, "tool": …}``: a refused
      shell command, and a refused tool or path, are answered with them.

    ``alias``: the model is shown ``alias.shown`` where the tools work in ``alias.actual``
    (:class:`~memtui.core.agent.alias.PathAlias`: the live memory dir and memtui's staging copy
    of it). ``write_root`` is then ``alias.actual`` (the directory writes really stay in),
    ``cwd`` is as the model sees it, every path the model gives is mapped in, and every text
    it receives (results, errors, tool descriptions) is mapped back (:meth:`show`).
    """

    write_root: Path | None = None
    read_roots: tuple[Path, ...] | None = None
    cwd: Path = field(default_factory=Path.cwd)
    bash_allow: frozenset[str] = DEFAULT_BASH_ALLOW
    tools: tuple[str, ...] = ALL_TOOLS
    max_output_chars: int = 30_000
    read_max_bytes: int = 262_144
    read_default_lines: int = 2_000
    read_max_line_chars: int = 2_000
    grep_max_matches: int = 200
    grep_max_file_bytes: int = 1_048_576
    glob_max_results: int = 100
    search_timeout_s: float = 10.0
    bash_timeout_s: float = BASH_TIMEOUT_S
    bash_memory_bytes: int = BASH_MEMORY_BYTES
    bash_cpu_s: int = BASH_CPU_S
    bash_budget_s: float = BASH_BUDGET_S
    write_max_bytes: int = 250_000
    write_suffixes: tuple[str, ...] | None = None
    remove_md: bool = False
    protected_dirs: tuple[str, ...] = ()
    denials: Mapping[str, str] | None = None
    alias: PathAlias | None = None

    def show(self, text: str) -> str:
        """``text`` as the model may read it: ``alias.actual`` named as ``alias.shown``."""
        return text if self.alias is None else self.alias.show(text)

    def read_target(self, raw: str) -> str:
        """A path a reading tool was given (``~`` expanded, relative to ``cwd``), absolute and
        mapped through ``alias`` (unnormalised when no alias applies)."""
        absolute = os.path.join(self.cwd, os.path.expanduser(raw))
        if self.alias is not None:
            mapped = self.alias.to_actual(absolute, "/", expand_user=False)
            if mapped is not None:
                return mapped
        return absolute

    def write_target(self, raw: str) -> str:
        """A path a writing tool (``Write``, ``Edit``, ``rm``) was given, as ``validate_inside``
        takes it against ``write_root``: ``~`` expanded; relative to the write root the model
        knows (``alias.shown``, else ``write_root``); mapped through ``alias`` — a path that does
        not lead to ``alias.shown`` is returned absolute, so the containment check refuses it."""
        text = os.path.expanduser(raw)
        if self.alias is None:
            return text
        mapped = self.alias.to_actual(text, self.alias.shown, expand_user=False)
        return mapped if mapped is not None else os.path.normpath(os.path.join(self.alias.shown, text))

    def offered(self) -> tuple[str, ...]:
        """The tool names a model is told about: ``tools`` minus ``Write``/``Edit`` without a
        ``write_root`` and minus ``Bash`` with an empty ``bash_allow`` or with ``read_roots``
        set (its arguments could name any path); in :data:`ALL_TOOLS` order."""
        names = []
        for name in ALL_TOOLS:
            if name not in self.tools:
                continue
            if name in ("Write", "Edit") and self.write_root is None:
                continue
            if name == "Bash" and (not self.bash_allow or self.read_roots is not None):
                continue
            names.append(name)
        return tuple(names)


@dataclass(frozen=True, slots=True)
class ToolOutcome:
    """The result of one tool call, as the model will see it.

    ``content``: the text of the ``tool_result`` block; ``is_error``: sent as ``is_error``;
    ``wrote``: the real path a ``Write``/``Edit`` changed (``None`` otherwise); ``removed``:
    the real paths an allowed ``rm`` deleted; ``code``: a
    stable identifier of a refusal or failure (``None`` on success) — see
    :mod:`memtui.core.agent` for the list.
    """

    content: str
    is_error: bool = False
    wrote: Path | None = None
    code: str | None = None
    removed: tuple[Path, ...] = ()


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One logged tool call, for the UI's event stream and for ``AgentRun.tool_calls``.

    ``id``: the model's ``tool_use`` id (``""`` when called directly); ``turn``: 1-based
    request number (0 when called directly); ``name`` and ``input`` as the model sent them;
    ``summary``: one line such as ``Write notes/x.md (120 bytes)``; then the outcome's
    ``is_error``, ``code``, ``wrote``, ``content`` and ``removed``.
    """

    id: str
    turn: int
    name: str
    input: object
    summary: str
    is_error: bool
    code: str | None
    wrote: Path | None
    content: str
    removed: tuple[Path, ...] = ()
