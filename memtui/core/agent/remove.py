"""``rm`` of memory files, the one writing shell command a CLI release lets its memory agents
run (Claude Code 2.1.328: "rm (no flags except -f) of .md files under <memory dir> (not
protected subdirectories like .git or agents)").

Allowed only when ``policy.remove_md`` is set: ``rm [-f] [--] <path>...`` where every path is a
``.md`` file inside ``policy.write_root`` (named as :meth:`ToolPolicy.write_target` reads it, checked by
:func:`memtui.core.writes.safepath.validate_inside`, symlinks resolved) and below none of
``policy.protected_dirs``. Everything else is not an ``rm`` this tool runs (the caller refuses
it like any other shell command). ``write_root`` is memtui's staging copy, so a removal there
is a planned deletion of the memory, applied (to the trash) only with the plan.
"""

from __future__ import annotations

import shlex
from pathlib import Path

from memtui.core.agent.args import error
from memtui.core.agent.policy import ToolOutcome, ToolPolicy
from memtui.core.writes.safepath import UnsafePathError, validate_inside

__all__ = ["is_rm", "remove_tool"]


def is_rm(command: str) -> bool:
    """Whether ``command`` is a single ``rm`` invocation (no shell operators around it)."""
    try:
        argv = shlex.split(command)
    except ValueError:
        return False
    return bool(argv) and argv[0] == "rm" and not any(c in command for c in ";&|<>`$()\n")


def remove_tool(policy: ToolPolicy, command: str) -> ToolOutcome:
    """Run ``command`` (an ``rm``, see :func:`is_rm`) under ``policy``: delete the named ``.md``
    files of ``write_root``. A refusal (an option other than ``-f``, a path outside, not
    ``.md``, under a protected dir, a directory) deletes nothing and carries code
    ``bash-not-allowed``; a missing file without ``-f`` is ``not-found`` (nothing deleted).
    Never raises."""
    assert policy.write_root is not None
    argv = shlex.split(command)[1:]
    force = False
    paths: list[str] = []
    options = True
    for arg in argv:
        if options and arg == "--":
            options = False
        elif options and arg.startswith("-") and arg != "-":
            if arg != "-f":
                return error("bash-not-allowed", f"Refused: rm takes no option but -f ({arg!r}).")
            force = True
        else:
            paths.append(arg)
    if not paths:
        return error("bash-not-allowed", "Refused: rm needs the .md files to remove.")
    root = Path(policy.write_root).resolve()
    targets: list[Path] = []
    for raw in paths:
        try:
            target = validate_inside(policy.write_target(raw), policy.write_root)
        except UnsafePathError as exc:
            return error("bash-not-allowed", f"Refused: rm may only remove .md files inside {policy.write_root}; {raw!r}: {exc.reason}.")
        rel = target.relative_to(root).parts
        if not target.name.endswith(".md"):
            return error("bash-not-allowed", f"Refused: rm may only remove .md files ({raw!r}).")
        if any(part in policy.protected_dirs for part in rel[:-1]):
            return error("bash-not-allowed", f"Refused: {raw!r} is below a protected directory ({', '.join(policy.protected_dirs)}).")
        if target.is_dir():
            return error("bash-not-allowed", f"Refused: {raw!r} is a directory.")
        if not target.exists() and not force:
            return error("not-found", f"rm: cannot remove {raw!r}: No such file or directory")
        targets.append(target)
    removed: list[Path] = []
    for target in targets:
        try:
            target.unlink()
        except FileNotFoundError:
            continue
        except OSError as exc:
            return ToolOutcome(f"rm: cannot remove {str(target)!r}: {exc.strerror or exc}", is_error=True, code="write-failed", removed=tuple(removed))
        removed.append(target)
    return ToolOutcome("(Bash completed with no output)", removed=tuple(removed))
