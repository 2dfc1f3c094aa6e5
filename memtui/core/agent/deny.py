"""What the agent tools never read, though they read anywhere else (docs/behaviour.md §7 "Read/Grep/Glob
anywhere").

Other processes' state — and memtui's own — lives under ``/proc/<pid>/``: ``environ`` holds
the environment (``ANTHROPIC_API_KEY`` among it), ``mem`` the memory, ``cmdline`` the
arguments, ``fd/`` and ``cwd``/``root`` reach every file a process has open. So the tools
refuse any path that is, lexically or after following symlinks, below

- ``/proc/<pid>``, ``/proc/self``, ``/proc/thread-self`` (every process, this one included);
- ``/proc/kcore`` (physical memory);

and a search (Grep, Glob, ``grep -r``, ``find``) never descends into them. Everything else
stays readable.
"""

from __future__ import annotations

import os

__all__ = ["DENIED_SUMMARY", "denied", "tree_holds_denied"]

DENIED_SUMMARY = "other processes' state (/proc/<pid>, /proc/self, /proc/thread-self) and /proc/kcore"

_PROC = "/proc"
_PROCESS_DIRS = ("self", "thread-self")
_FILES = ("/proc/kcore",)


def _lexically_denied(path: str) -> bool:
    norm = os.path.normpath(path)
    if norm in _FILES:
        return True
    parts = norm.split(os.sep)
    # ['', 'proc', '<pid>', ...]
    return len(parts) >= 3 and parts[0] == "" and parts[1] == "proc" and (parts[2].isdigit() or parts[2] in _PROCESS_DIRS)


def denied(path: str | os.PathLike[str], *, cwd: str | os.PathLike[str] | None = None) -> str | None:
    """Why ``path`` (absolute, or relative to ``cwd``) must not be read, or ``None``. Checked
    on the normalised path and on its ``realpath`` (a symlink to ``/proc/self/environ`` is
    refused too)."""
    text = os.fspath(path)
    absolute = os.path.join(os.fspath(cwd) if cwd is not None else os.getcwd(), os.path.expanduser(text))
    if _lexically_denied(absolute):
        what = "physical memory" if os.path.normpath(absolute) in _FILES else "a process's state"
        return f"{text} is {what}; the tools never read {DENIED_SUMMARY}"
    try:
        real = os.path.realpath(absolute)
    except (OSError, ValueError):
        return None
    if _lexically_denied(real):
        return f"{text} leads to {real}; the tools never read {DENIED_SUMMARY}"
    return None


def tree_holds_denied(path: str | os.PathLike[str], *, cwd: str | os.PathLike[str] | None = None) -> bool:
    """Whether a recursive walk from ``path`` (following no symlinks) would enter a denied
    directory: ``path`` is ``/`` or ``/proc`` (after ``realpath``)."""
    absolute = os.path.join(os.fspath(cwd) if cwd is not None else os.getcwd(), os.path.expanduser(os.fspath(path)))
    try:
        real = os.path.realpath(absolute)
    except (OSError, ValueError):
        return False
    return real in ("/", _PROC)
