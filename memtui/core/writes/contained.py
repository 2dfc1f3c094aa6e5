"""Where a write into the memory dir really lands, decided at the moment of writing.

A name inside the memory dir can lead outside it: a folder that is a symlink to ``~/.ssh``, a
memory that is a link into a dotfiles repository. The check is therefore made on where the
name leads, not on the name, and it is made by opening: :func:`open_target` walks from the
memory dir's real folder one component at a time with ``O_NOFOLLOW | O_DIRECTORY`` and returns
an open descriptor of the folder the file is in. Every step of the write then acts on a name
relative to that descriptor (``memtui.core.writes.steps``, ``dir_fd``), so a folder swapped for
a link after the check cannot redirect the write: there is no window between check and open.

Links the walk meets:

- a **folder** link whose real target is inside the memory dir is followed (the walk restarts
  from the memory dir along the target's real path, again refusing links); one whose target is
  outside, dangling or looping is refused;
- a **file** link (``follow_final=True``): a target inside the memory dir is where the write
  goes — the link stays a link, the target gets the new bytes; a target outside is refused:
  memtui shows such a memory but does not write through its link. With ``follow_final=False``
  (a delete) the link itself is acted on.

Refusals raise :class:`ContainmentError`, an ``OSError`` (so every caller that handles a failed
write handles it) with a ``code`` and a sentence naming the link and its real target.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from memtui.core.writes import steps

__all__ = ["ContainmentError", "Target", "check_target", "open_target"]

# Links followed in one walk before it is refused as a loop (Linux's MAXSYMLINKS is 40).
MAX_LINKS = 40

_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)


class ContainmentError(OSError):
    """A write that would land outside the memory dir, refused before any byte was written.

    ``relpath``: the file as the change names it; ``code``: ``symlink-escape`` (a link leads
    outside), ``dangling-symlink``, ``symlink-loop``, ``not-a-folder`` (a component is a file),
    ``not-a-file`` (the name is a folder), ``bad-name`` (an empty, ``.`` or ``..`` component); ``reason``: a sentence for a person.
    """

    def __init__(self, relpath: str, code: str, reason: str) -> None:
        super().__init__(errno.EPERM, f"{relpath}: {reason}; nothing was written")
        self.relpath = relpath
        self.code = code
        self.reason = reason


@dataclass(slots=True)
class Target:
    """An open folder inside the memory dir and the name to act on in it.

    ``dir_fd``: the folder's descriptor (closed by ``close`` or the ``with`` block);
    ``folder``: its real path; ``name``: one path component; ``relpath``: the file's path
    relative to the real memory dir (differs from the change's when a link was followed);
    ``created``: folders the walk made, relative to the real memory dir, outermost first.
    """

    dir_fd: int
    folder: Path
    name: str
    relpath: str
    created: list[str]

    @property
    def path(self) -> Path:
        """The real path of the file (for messages and the fault hook)."""
        return self.folder / self.name

    def close(self) -> None:
        """Close the folder's descriptor (twice is fine)."""
        if self.dir_fd >= 0:
            os.close(self.dir_fd)
            self.dir_fd = -1

    def __enter__(self) -> Target:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def open_target(
    memory_dir: Path, relpath: str, *, follow_final: bool = True, create_dirs: bool = False, confirmed: Mapping[str, str] | None = None
) -> Target:
    """Open the folder of ``relpath`` (POSIX, relative to ``memory_dir``) and return it with
    the name to write, following only links that stay inside ``realpath(memory_dir)``.

    ``follow_final``: a last component that is a symlink leads to its target (which must be a
    file inside the memory dir); else the link itself is the name. ``create_dirs``: missing
    folders are made (``mkdir`` relative to their open parent, fsynced; step ``mkdir``), else
    ``FileNotFoundError``. ``confirmed``: memory links the user confirmed
    (``memtui.core.writes.links``: relpath → real target): such a link leading outside is
    followed while it still leads to that target, its folder opened from ``/`` refusing every
    link on the way. Raises :class:`ContainmentError`, ``FileNotFoundError``, ``OSError``.
    """
    parts = relpath.split("/")
    if any(p in ("", ".", "..") for p in parts):
        raise ContainmentError(relpath, "bad-name", "the path has an empty, '.' or '..' part")
    if create_dirs and not os.path.isdir(memory_dir):
        steps.make_dirs(Path(memory_dir))
    root = Path(os.path.realpath(memory_dir))
    links = 0
    created: list[str] = []
    while True:
        fd, folder, walked = _open_folder(root, parts[:-1], relpath, created, create_dirs)
        parts = [*walked, parts[-1]]
        name = parts[-1]
        try:
            st = os.stat(name, dir_fd=fd, follow_symlinks=False)
        except FileNotFoundError:
            return Target(fd, folder, name, "/".join(parts), created)
        except BaseException:
            os.close(fd)
            raise
        if stat.S_ISDIR(st.st_mode):
            os.close(fd)
            raise ContainmentError(relpath, "not-a-file", f"{folder / name} is a folder, not a file")
        if not stat.S_ISLNK(st.st_mode) or not follow_final:
            return Target(fd, folder, name, "/".join(parts), created)
        try:
            real = confirmed.get("/".join(parts)) if confirmed else None
            if real is not None and os.path.realpath(folder / name) == real and os.path.isfile(real):
                outside_fd = _open_real_folder(Path(real).parent, relpath)
                return Target(outside_fd, Path(real).parent, Path(real).name, "/".join(parts), created)
            target = _resolve_link(root, folder, name, fd, relpath, "file")
        finally:
            os.close(fd)
        links += 1
        if links > MAX_LINKS:
            raise ContainmentError(relpath, "symlink-loop", f"it goes through more than {MAX_LINKS} links")
        parts = target


def _open_folder(root: Path, parts: list[str], relpath: str, created: list[str], create: bool) -> tuple[int, Path, list[str]]:
    """Walk ``parts`` from ``root`` refusing links outside it; returns the open folder, its
    real path and its parts relative to ``root``. A folder link inside ``root`` restarts the
    walk along its target."""
    links = 0
    while True:
        fd = os.open(root, _DIR_FLAGS)
        folder = root
        restart: list[str] | None = None
        try:
            for i, part in enumerate(parts):
                try:
                    child = os.open(part, _DIR_FLAGS, dir_fd=fd)
                except FileNotFoundError:
                    if not create:
                        raise
                    try:
                        os.mkdir(part, 0o777, dir_fd=fd)
                    except FileExistsError:
                        pass
                    else:
                        steps._after("mkdir", folder / part)
                        steps.fsync_dir(folder, dir_fd=fd)
                        created.append(os.path.relpath(folder / part, root).replace(os.sep, "/"))
                    child = os.open(part, _DIR_FLAGS, dir_fd=fd)
                except OSError as exc:
                    if exc.errno not in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK):
                        raise
                    st = os.stat(part, dir_fd=fd, follow_symlinks=False)
                    if not stat.S_ISLNK(st.st_mode):
                        raise ContainmentError(relpath, "not-a-folder", f"{folder / part} is a file, not a folder") from exc
                    target = _resolve_link(root, folder, part, fd, relpath, "folder")
                    restart = target + parts[i + 1 :]
                    break
                os.close(fd)
                fd, folder = child, folder / part
        except BaseException:
            os.close(fd)
            raise
        if restart is None:
            return fd, folder, parts
        os.close(fd)
        links += 1
        if links > MAX_LINKS:
            raise ContainmentError(relpath, "symlink-loop", f"it goes through more than {MAX_LINKS} links")
        parts = restart


def _open_real_folder(folder: Path, relpath: str) -> int:
    """Open the absolute, link-free ``folder`` from ``/`` one component at a time, refusing
    any link met on the way (it was resolved a moment ago: a link now means it changed)."""
    fd = os.open("/", _DIR_FLAGS)
    try:
        for part in folder.parts[1:]:
            try:
                child = os.open(part, _DIR_FLAGS, dir_fd=fd)
            except OSError as exc:
                if exc.errno in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK):
                    raise ContainmentError(relpath, "symlink-escape", f"the confirmed link's folder {folder} changed while it was being opened") from exc
                raise
            os.close(fd)
            fd = child
    except BaseException:
        os.close(fd)
        raise
    return fd


def _resolve_link(root: Path, folder: Path, name: str, fd: int, relpath: str, kind: str) -> list[str]:
    """The parts, relative to ``root``, of where the link ``folder/name`` leads; refuses a
    dangling link, a loop, and a target outside ``root`` (or ``root`` itself)."""
    link = folder / name
    try:
        written = os.readlink(name, dir_fd=fd)
    except OSError:
        written = "?"
    try:
        real = Path(os.path.realpath(link, strict=True))
    except FileNotFoundError:
        raise ContainmentError(
            relpath, "dangling-symlink", f"the {kind} {link} is a link to {written}, which does not exist (a write would create it wherever it points)"
        ) from None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise ContainmentError(relpath, "symlink-loop", f"the {kind} {link} is part of a symlink loop") from exc
        raise
    if real == root or root not in real.parents:
        raise ContainmentError(
            relpath,
            "symlink-escape",
            f"the {kind} {link} is a link to {real}, outside the memory dir {root}: memtui does not write through it"
            + (f" (unless you confirm this link: `memtui links confirm {relpath}`)" if kind == "file" else ""),
        )
    return list(real.relative_to(root).parts)


def check_target(memory_dir: Path, relpath: str, *, follow_final: bool = True, confirmed: Mapping[str, str] | None = None) -> str:
    """Raise :class:`ContainmentError` when a write of ``relpath`` would be refused by
    :func:`open_target`; a folder that does not exist yet is fine (it will be made inside a
    checked one). Makes nothing. Returns the real path the write would land on (``relpath``
    itself when a folder is still missing), to tell two names of one file apart. For refusing
    a whole change before its first write."""
    try:
        with open_target(memory_dir, relpath, follow_final=follow_final, confirmed=confirmed) as target:
            return target.path.as_posix()
    except FileNotFoundError:
        return relpath
