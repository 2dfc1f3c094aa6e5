"""The file-system steps of memtui's write path, one function each.

Every change memtui makes on disk is a sequence of these steps: create a file and write it,
fsync it, rename, swap, link, unlink, fsync a directory, make a directory. Each function does
exactly one such step and then calls the fault hook (``set_fault_hook``) with the step's name
and path — the one place a test can stop the process after any single step (a crash after the
k-th write, for every k) or act between two steps (another writer racing memtui).

``swap`` exchanges two names atomically: ``renameat2(RENAME_EXCHANGE)`` on Linux (3.15+,
glibc 2.28+; ext4, xfs, btrfs, tmpfs…) and ``renamex_np(RENAME_SWAP)`` on macOS. Called
through ``ctypes`` (the standard library has no binding); where the system or the file system
lacks it, ``swap`` raises :class:`SwapUnsupported` and callers fall back.

Every step that acts on a name takes an optional ``dir_fd``: an open descriptor of the folder
the name is in. Then only the last component of the path is used, relative to that folder
(``openat``, ``renameat``, ``linkat``, ``unlinkat``…), and the full path is what the fault hook
is told. A write that resolved and checked its folder once (``memtui.core.writes.contained``)
thus lands in that folder even if a name on the way to it is swapped for a symlink afterwards.
"""

from __future__ import annotations

import ctypes
import errno
import os
import sys
from collections.abc import Callable
from pathlib import Path

__all__ = [
    "FaultHook",
    "SwapUnsupported",
    "create_file",
    "fsync_dir",
    "link",
    "make_dirs",
    "mkdir",
    "rename",
    "set_fault_hook",
    "swap",
    "unlink",
]

FaultHook = Callable[[str, str], None]
"""Called after each step with the step's name (``write``, ``fsync``, ``rename``, ``swap``,
``link``, ``unlink``, ``fsync-dir``, ``mkdir``) and the path it acted on."""

_hook: FaultHook | None = None


def set_fault_hook(hook: FaultHook | None) -> FaultHook | None:
    """Install ``hook`` (``None`` removes it); returns the previous one. For tests: the hook
    may raise, ``os._exit``, or write files itself (a racing writer)."""
    global _hook
    previous, _hook = _hook, hook
    return previous


def _after(step: str, path: str | os.PathLike[str]) -> None:
    hook = _hook
    if hook is not None:
        hook(step, os.fspath(path))


class SwapUnsupported(OSError):
    """The system or the file system cannot exchange two names atomically."""


def _name(path: str | os.PathLike[str], dir_fd: int | None) -> str | os.PathLike[str]:
    """What a system call is given: ``path`` itself, or its last component when relative to
    ``dir_fd``."""
    return path if dir_fd is None else os.path.basename(os.fspath(path))


def create_file(
    path: str | os.PathLike[str], data: bytes, *, mode: int, mtime: float | None = None, mtime_ns: int | None = None, dir_fd: int | None = None
) -> None:
    """Create ``path`` (it must not exist: ``FileExistsError``; never through a symlink),
    write ``data``, set permission bits ``mode`` and, when given, the mtime (``mtime`` epoch s,
    or exactly: ``mtime_ns`` epoch ns), then fsync. Steps: ``write``,
    ``fsync``. On an error the partial file is removed and the error raised."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(_name(path, dir_fd), flags, 0o600, dir_fd=dir_fd)
    try:
        view = memoryview(data)
        while view:
            written = os.write(fd, view)
            view = view[written:]
        os.fchmod(fd, mode)
        if mtime_ns is not None:
            os.utime(fd, ns=(mtime_ns, mtime_ns))
        elif mtime is not None:
            os.utime(fd, (mtime, mtime))
        _after("write", path)
        os.fsync(fd)
    except BaseException:
        os.close(fd)
        try:
            os.unlink(_name(path, dir_fd), dir_fd=dir_fd)
        except OSError:
            pass
        raise
    os.close(fd)
    _after("fsync", path)


def rename(src: str | os.PathLike[str], dst: str | os.PathLike[str], *, dir_fd: int | None = None) -> None:
    """``os.replace(src, dst)`` (both in the folder ``dir_fd`` when given). Step ``rename``."""
    os.replace(_name(src, dir_fd), _name(dst, dir_fd), src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    _after("rename", dst)


def link(src: str | os.PathLike[str], dst: str | os.PathLike[str], *, dir_fd: int | None = None) -> None:
    """A hard link ``dst`` to ``src`` (both in the folder ``dir_fd`` when given);
    ``FileExistsError`` when ``dst`` exists (an atomic "create unless present"). Step ``link``."""
    os.link(_name(src, dir_fd), _name(dst, dir_fd), src_dir_fd=dir_fd, dst_dir_fd=dir_fd, follow_symlinks=False)
    _after("link", dst)


def unlink(path: str | os.PathLike[str], *, dir_fd: int | None = None) -> None:
    """Remove ``path`` (absent is fine). Step ``unlink`` (only when something was removed)."""
    try:
        os.unlink(_name(path, dir_fd), dir_fd=dir_fd)
    except FileNotFoundError:
        return
    _after("unlink", path)


def fsync_dir(directory: str | os.PathLike[str], *, dir_fd: int | None = None) -> None:
    """Make the renames, links and unlinks in ``directory`` durable (POSIX); a no-op where a
    directory cannot be opened or synced. ``dir_fd``: that folder's open descriptor (then
    ``directory`` only names it for the fault hook). Step ``fsync-dir``."""
    if dir_fd is not None:
        try:
            os.fsync(dir_fd)
        except OSError:
            pass
        _after("fsync-dir", directory)
        return
    try:
        fd = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
    _after("fsync-dir", directory)


def mkdir(path: str | os.PathLike[str]) -> None:
    """Create the directory ``path`` (``FileExistsError`` when it exists) and fsync its
    parent. Step ``mkdir``."""
    os.mkdir(path)
    _after("mkdir", path)
    fsync_dir(os.path.dirname(os.path.abspath(path)))


def make_dirs(directory: Path) -> list[Path]:
    """Create ``directory`` and its missing parents, fsyncing each parent after its new child.
    Returns the directories created, outermost first. Step ``mkdir`` for each."""
    missing: list[Path] = []
    current = directory
    while not current.is_dir():
        missing.append(current)
        if current.parent == current:
            break
        current = current.parent
    created: list[Path] = []
    for path in reversed(missing):
        try:
            os.mkdir(path)
        except FileExistsError:
            if not path.is_dir():
                raise
            continue
        created.append(path)
        _after("mkdir", path)
        fsync_dir(path.parent)
    return created


# ----- swap -------------------------------------------------------------------------------------

_RENAME_EXCHANGE = 2  # linux/fs.h
_RENAME_SWAP = 2  # macOS sys/stdio.h
_AT_FDCWD = -100
_UNSUPPORTED_ERRNOS = {errno.EINVAL, errno.ENOSYS, getattr(errno, "ENOTSUP", errno.EINVAL), getattr(errno, "EOPNOTSUPP", errno.EINVAL)}


def _libc_swap() -> Callable[[int, bytes, bytes], int] | None:
    """``(dir_fd, a, b) -> status``: exchange two names of the folder ``dir_fd``
    (``_AT_FDCWD``: relative to the working directory)."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
    except OSError:  # pragma: no cover - no C library to load
        return None
    if sys.platform.startswith("linux") and hasattr(libc, "renameat2"):
        fn = libc.renameat2
        fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
        fn.restype = ctypes.c_int
        return lambda d, a, b: int(fn(d, a, d, b, _RENAME_EXCHANGE))
    if sys.platform == "darwin" and hasattr(libc, "renameatx_np"):  # pragma: no cover - macOS 10.12+
        fn = libc.renameatx_np
        fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
        fn.restype = ctypes.c_int
        return lambda d, a, b: int(fn(d, a, d, b, _RENAME_SWAP))
    return None  # pragma: no cover - other systems


_SWAP = _libc_swap()


def swap(a: str | os.PathLike[str], b: str | os.PathLike[str], *, dir_fd: int | None = None) -> None:
    """Exchange the names ``a`` and ``b`` atomically (both must exist; both in the folder
    ``dir_fd`` when given): after it, ``a`` holds what ``b`` held and the reverse, with no
    moment where either name is missing. Raises :class:`SwapUnsupported` where that cannot be
    done, else ``OSError``. Step ``swap``."""
    if _SWAP is None:
        raise SwapUnsupported(errno.ENOSYS, "atomic exchange is not available on this system", os.fspath(b))
    if _SWAP(_AT_FDCWD if dir_fd is None else dir_fd, os.fsencode(_name(a, dir_fd)), os.fsencode(_name(b, dir_fd))) != 0:
        code = ctypes.get_errno()
        if code in _UNSUPPORTED_ERRNOS:
            raise SwapUnsupported(code, "this file system cannot exchange two names atomically", os.fspath(b))
        raise OSError(code, os.strerror(code), os.fspath(a), None, os.fspath(b))
    _after("swap", b)
