"""A directory the model is shown under one path while the tools work in another.

memtui's memory agents never write the live memory dir: the dream (and any agent given a
:class:`PathAlias`) works in a staging copy, and the difference becomes a plan. The model must
still read the CLI's own text, which names the live dir, so the tools translate at their
boundary:

- **in**: a path the model gives (absolute, ``~``-relative where the tool expands ``~``, or
  relative to a base directory) that leads, after lexical normalisation, to ``shown`` or below
  it is rewritten to the same place below ``actual``; any other path is left alone. A path
  like ``<shown>/../x`` normalises to outside ``shown`` and is not mapped. Normalisation is
  lexical (``os.path.normpath``), as the tools already treat ``..``; where a mapped path really
  leads (symlinks) is checked afterwards by the tool, against ``actual`` (for writes,
  :func:`memtui.core.writes.safepath.validate_inside`).
- **out**: every text the model receives has ``actual`` (and its ``realpath``) replaced by
  ``shown``, so no result, listing or error names the staging copy.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

__all__ = ["PathAlias"]


def _norm(path: str | os.PathLike[str]) -> str:
    return os.path.normpath(os.path.abspath(os.fspath(path)))


def _below(path: str, root: str) -> str | None:
    """``path`` relative to ``root`` (both normalised, absolute): ``"."`` for ``root`` itself,
    ``None`` when ``path`` is not ``root`` or below it (compared on a separator boundary)."""
    if path == root:
        return "."
    prefix = root if root.endswith(os.sep) else root + os.sep
    return path[len(prefix):] if path.startswith(prefix) else None


@dataclass(frozen=True, slots=True)
class PathAlias:
    """``shown``: the directory the model is told about (the live memory dir); ``actual``: the
    directory the tools really read and write for it (memtui's staging copy). Both are made
    absolute and normalised. Raises ``ValueError`` when one lies inside the other (a mapped path
    would then be mapped again)."""

    shown: Path
    actual: Path

    def __post_init__(self) -> None:
        shown, actual = _norm(self.shown), _norm(self.actual)
        if _below(shown, actual) is not None or _below(actual, shown) is not None:
            raise ValueError(f"a path alias needs two separate directories: {shown} and {actual}")
        object.__setattr__(self, "shown", Path(shown))
        object.__setattr__(self, "actual", Path(actual))

    def _shown_roots(self) -> tuple[str, ...]:
        """``shown`` and, when it differs, its ``realpath`` (a path the model read back from a
        resolved listing means the same directory)."""
        shown = str(self.shown)
        real = os.path.realpath(shown)
        return (shown,) if real == shown else (shown, real)

    def inside(self, path: str | os.PathLike[str]) -> str | None:
        """``path`` (absolute) relative to ``shown`` after lexical normalisation (``"."`` for
        ``shown`` itself), or ``None`` when it does not lead there."""
        norm = _norm(path)
        for root in self._shown_roots():
            rel = _below(norm, root)
            if rel is not None:
                return rel
        return None

    def to_actual(self, path: str, base: str | os.PathLike[str], *, expand_user: bool = True) -> str | None:
        """The path below ``actual`` that ``path`` names, or ``None`` when it does not lead to
        ``shown``. ``path``: as the model wrote it; relative to ``base`` (a directory, as the
        model sees it); a leading ``~`` is the home directory when ``expand_user``."""
        if "\0" in path:
            return None
        text = os.path.expanduser(path) if expand_user else path
        rel = self.inside(os.path.join(os.fspath(base), text))
        if rel is None:
            return None
        return str(self.actual) if rel == "." else os.path.join(str(self.actual), rel)

    def cwd(self, cwd: str | os.PathLike[str]) -> str:
        """The directory a process started in ``cwd`` (as the model sees it) really runs in."""
        mapped = self.to_actual(os.fspath(cwd), "/", expand_user=False)
        return mapped if mapped is not None else os.fspath(cwd)

    def shell_arg(self, token: str, cwd: str | os.PathLike[str]) -> str:
        """A path argument of a shell command run in ``cwd`` (as the model sees it; the process
        runs in :meth:`cwd`), rewritten so that it names what the model meant. The shell tool
        expands no ``~``, so neither does this.

        - absolute, leading to ``shown``: the path below ``actual``; other absolute paths as
          they are;
        - relative, with ``cwd`` at or below ``shown``: as it is when it stays there (the
          process's own cwd is then below ``actual``), else made absolute from ``cwd`` (so
          ``../x`` means the live parent's ``x``, not the staging copy's);
        - relative, with ``cwd`` elsewhere: the path below ``actual`` when it leads to
          ``shown``, else as it is.
        """
        if not token or token == "-" or "\0" in token:
            return token
        base = os.fspath(cwd)
        target = self.to_actual(token, base, expand_user=False)
        if os.path.isabs(token):
            return target if target is not None else token
        if self.inside(base) is not None:
            return token if target is not None else _norm(os.path.join(base, token))
        return target if target is not None else token

    def show(self, text: str) -> str:
        """``text`` with every mention of ``actual`` (and of its ``realpath``) replaced by
        ``shown``: what the model may read."""
        actual = str(self.actual)
        real = os.path.realpath(actual)
        shown = str(self.shown)
        # Each name as written, and as ``ls -b`` / ``--quoting-style=escape`` writes it (a space
        # or a shell character after a backslash), so an escaped listing hides the copy too.
        forms = {name: shown for name in (actual, real)}
        forms.update({_escaped(name): _escaped(shown) for name in (actual, real) if _escaped(name) != name})
        for name in sorted(forms, key=len, reverse=True):
            if name in text:
                text = text.replace(name, forms[name])
        return text


_SHELL_SPECIAL = set(" \t'\"()[]{}$&;|<>*?!#~`\\")


def _escaped(path: str) -> str:
    """``path`` with every space and shell character after a backslash (``ls -b``'s form)."""
    return "".join(f"\\{c}" if c in _SHELL_SPECIAL else c for c in path)
