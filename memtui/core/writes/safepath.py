"""Path safety for team keys and every agent-driven write (docs/behaviour.md §9).

Two layers, as in the reference agent's team memory (chapter 17.9): a **string layer** that
rejects a key before it touches the filesystem (NUL byte, URL-encoded traversal, traversal that
appears after Unicode NFKC normalisation, backslash, absolute path), and a **filesystem layer**
that resolves symlinks (``realpath`` of the deepest existing ancestor) so that
``team/sprint.md -> ~/.ssh/authorized_keys`` is caught even though the string looks harmless.

- :func:`validate_team_key` — a key chosen by a sync server (``{key: content}`` bundles).
- :func:`validate_inside` — any path an agent chose to write (dream, extractor): the same
  containment checks, without the key-only string rules.

Both return the path a write must go to — symlinks expanded, ``..`` collapsed — never
``team_dir / key``: a key such as ``alias/../x.md`` means one file lexically and another to the
kernel when ``alias`` is a symlink, and only the returned path is the one that was checked.
"""

from __future__ import annotations

import errno
import os
import stat
import unicodedata
from pathlib import Path
from typing import NoReturn
from urllib.parse import unquote

__all__ = ["UnsafePathError", "validate_inside", "validate_team_key"]


class UnsafePathError(ValueError):
    """A key or path that must not be read or written.

    ``key`` is the key (or path string) as given; ``code`` a stable identifier (the CLI's
    ``--json`` output and tests match on it); ``reason`` a sentence for a person. Codes:
    ``nul-byte``, ``url-encoded-traversal``, ``unicode-traversal``, ``backslash``,
    ``absolute-path``, ``outside-dir``, ``dir-itself``, ``dangling-symlink``, ``symlink-loop``,
    ``symlink-escape``, ``unresolvable``.
    """

    def __init__(self, key: str, code: str, reason: str) -> None:
        super().__init__(f"unsafe key {key!r}: {reason}")
        self.key = key
        self.code = code
        self.reason = reason


def validate_team_key(key: str, team_dir: Path) -> Path:
    """Check a team-memory key and return the absolute path a write of it must go to.

    ``key`` is a relative POSIX-style path as a sync server sends it (``notes/2026-03.md``);
    ``team_dir`` is ``<memory dir>/team`` (it need not exist yet). The result is absolute,
    normalised, with every existing symlink expanded and the not-yet-existing tail re-joined;
    it lies strictly inside ``realpath(team_dir)``.

    String rules, in the reference agent's order (docs/behaviour.md §9, chapter 17.9 "layer one"): reject a
    key that contains NUL (a syscall truncates there); that URL-decodes once (bad escapes left
    as they are, ``urllib.parse.unquote``) to something *different* containing ``..`` or ``/``
    (``%2e%2e%2f``); that NFKC-normalises to something *different* containing ``..``, ``/``,
    ``\\`` or NUL (fullwidth ``．．／``); that contains ``\\``; that starts with ``/``.
    Legitimate names pass: ``笔记.md``, ``notes/2026-03.md``, ``a..b.md``.

    Then containment ("layer two"), see :func:`validate_inside`.

    Raises :class:`UnsafePathError` (a ``ValueError``) with a ``code`` and a ``reason``.
    """
    if "\0" in key:
        raise UnsafePathError(key, "nul-byte", "it contains a NUL byte (a system call would cut the path there)")
    decoded = unquote(key)
    if decoded != key and (".." in decoded or "/" in decoded):
        raise UnsafePathError(
            key,
            "url-encoded-traversal",
            f"it URL-decodes to {decoded!r}, which contains '..' or '/' (encoded traversal such as %2e%2e%2f)",
        )
    normalised = unicodedata.normalize("NFKC", key)
    if normalised != key and any(bad in normalised for bad in ("..", "/", "\\", "\0")):
        raise UnsafePathError(
            key,
            "unicode-traversal",
            f"it NFKC-normalises to {normalised!r}, which contains '..', '/', '\\' or NUL "
            "(look-alike characters such as fullwidth ．．／)",
        )
    if "\\" in key:
        raise UnsafePathError(key, "backslash", "it contains a backslash (a path separator on Windows)")
    if key.startswith("/"):
        raise UnsafePathError(key, "absolute-path", "it starts with '/' (an absolute path, not a key)")
    return _contained(key, Path(os.path.join(os.path.abspath(team_dir), key)), team_dir, "the team dir")


def validate_inside(path: str | os.PathLike[str], root: Path) -> Path:
    """Check a path an agent chose to write and return the absolute path the write must go to.

    ``path`` is absolute, or relative to ``root``; ``root`` is the directory the write must stay
    in (the memory dir for the extractor and dream agents; it need not exist yet). The result is
    absolute, normalised, with every existing symlink expanded and the missing tail re-joined.

    Checks (docs/behaviour.md §9 containment, shared with :func:`validate_team_key`): no NUL byte; the path,
    made absolute and normalised lexically, lies strictly inside ``root`` on a separator
    boundary (``team-evil`` is not inside ``team``; ``root`` itself is refused); then the
    ``realpath`` of its deepest existing ancestor — a dangling symlink, a symlink loop (ELOOP)
    or any other resolution error is refused — with the missing tail re-joined lies strictly
    inside ``realpath(root)``.

    Raises :class:`UnsafePathError` (a ``ValueError``) with a ``code`` and a ``reason``.
    """
    text = os.fspath(path)
    if "\0" in text:
        raise UnsafePathError(text, "nul-byte", "it contains a NUL byte (a system call would cut the path there)")
    return _contained(text, Path(os.path.join(os.path.abspath(root), text)), root, "the target dir")


def _contained(key: str, joined: Path, root: Path, root_name: str) -> Path:
    """The two containment checks of docs/behaviour.md §9 for ``joined`` (``root`` joined with ``key``);
    returns the real path a write must use."""
    lexical_root = os.path.normpath(os.path.abspath(root))
    lexical = os.path.normpath(joined)
    if lexical == lexical_root:
        raise UnsafePathError(key, "dir-itself", f"it names {root_name} itself, not a file inside it")
    if not _strictly_inside(lexical, lexical_root):
        raise UnsafePathError(key, "outside-dir", f"it resolves to {lexical}, outside {root_name} {lexical_root}")
    real_root = _real_path(key, lexical_root, is_root=True)
    real = _real_path(key, lexical)
    if real == real_root:
        raise UnsafePathError(key, "dir-itself", f"it is a symlink to {root_name} itself, not a file inside it")
    if not _strictly_inside(real, real_root):
        raise UnsafePathError(
            key,
            "symlink-escape",
            f"it goes through a symlink and really lands on {real}, outside {root_name} {real_root}",
        )
    return Path(real)


def _strictly_inside(path: str, root: str) -> bool:
    """``path`` below ``root``, compared on a separator boundary (both normalised, absolute)."""
    prefix = root if root.endswith(os.sep) else root + os.sep
    return path.startswith(prefix)


def _real_path(key: str, path: str, *, is_root: bool = False) -> str:
    """``realpath`` of the deepest existing ancestor of ``path`` with the missing tail re-joined.

    Walks up from ``path``: a component that exists resolves with ``realpath(strict=True)``; one
    that does not is remembered as tail, unless it is a symlink (``lstat`` sees it, ``stat``
    does not): a dangling symlink is refused, since a write would create its target wherever it
    points. ELOOP and every other ``OSError`` are refused too.
    """
    whose = "the dir it must stay in" if is_root else "it"
    tail: list[str] = []
    current = path
    while True:
        try:
            real = os.path.realpath(current, strict=True)
            break
        except FileNotFoundError:
            pass
        except OSError as exc:
            _refuse(key, current, exc, whose)
        try:
            st = os.lstat(current)
        except FileNotFoundError:
            parent, name = os.path.split(current)
            if parent == current or not name:  # the filesystem root is missing: cannot happen
                raise UnsafePathError(key, "unresolvable", f"{whose}: no existing ancestor of {path}") from None
            tail.append(name)
            current = parent
            continue
        except OSError as exc:
            _refuse(key, current, exc, whose)
        if stat.S_ISLNK(st.st_mode):
            target = _readlink(current)
            raise UnsafePathError(
                key,
                "dangling-symlink",
                f"{whose} goes through the dangling symlink {current} -> {target} (a write would create its target)",
            )
        # lstat sees a non-link whose realpath is missing: something changed under us.
        raise UnsafePathError(key, "unresolvable", f"{whose}: {current} changed while it was being resolved")
    return os.path.join(real, *reversed(tail)) if tail else real


def _refuse(key: str, where: str, exc: OSError, whose: str) -> NoReturn:
    """Turn a resolution error into an :class:`UnsafePathError` (ELOOP gets its own code)."""
    if exc.errno == errno.ELOOP:
        raise UnsafePathError(key, "symlink-loop", f"{whose} goes through a symlink loop at {where}") from exc
    reason = exc.strerror or type(exc).__name__
    raise UnsafePathError(key, "unresolvable", f"{whose} could not be resolved at {where}: {reason}") from exc


def _readlink(path: str) -> str:
    """The target of a symlink, or ``?`` when it cannot be read."""
    try:
        return os.readlink(path)
    except OSError:
        return "?"
