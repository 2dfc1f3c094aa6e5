"""The reading tools: ``Read`` (numbered lines of a text file), ``Grep`` (a regex over the
text files below a path) and ``Glob`` (file names by pattern), anywhere or below
``policy.read_roots`` (docs/behaviour.md §7), each capped in size, count and time by the policy."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, BinaryIO

import regex  # type: ignore[import-untyped]  # dateparser's own dependency; has match timeouts

from memtui.core.base.safe_read import NotRegularFileError, open_regular, read_regular
from memtui.core.agent.deny import denied
from memtui.core.agent.args import error, int_arg, str_arg
from memtui.core.agent.bash import cap_text
from memtui.core.agent.policy import ToolOutcome, ToolPolicy

__all__ = ["glob_tool", "grep_tool", "read_tool"]

# Bytes looked at to tell a binary file from text (a NUL byte among them: binary), as git does.
_SNIFF_BYTES = 8_000
# Directories a search never descends into: version-control internals.
_SKIP_DIRS = frozenset({".git", ".hg", ".svn"})


def _read_path(policy: ToolPolicy, raw: str) -> Path | ToolOutcome:
    """``raw`` made absolute (``~`` expanded, relative to ``policy.cwd``, mapped through
    ``policy.alias``); with ``policy.read_roots``, its ``realpath``, checked to lie inside one of
    them (the checked path is the one read: ``link/../x`` means another file to the kernel than
    to ``normpath``)."""
    if "\0" in raw:
        return error("bad-input", "Refused: the path contains a NUL byte.")
    path = Path(policy.read_target(raw))
    why = denied(path)
    if why is not None:
        return error("denied", f"Refused: {why}.")
    if policy.read_roots is not None:
        real = os.path.realpath(path)
        roots = [os.path.realpath(root) for root in policy.read_roots]
        if not any(real == root or real.startswith(root.rstrip(os.sep) + os.sep) for root in roots):
            shown = ", ".join(roots)
            return error("outside-read-roots", f"Refused: {raw} resolves to {real}, outside the readable directories ({shown}).")
        return Path(real)
    return Path(os.path.normpath(path))


def read_tool(policy: ToolPolicy, args: Mapping[str, Any]) -> ToolOutcome:
    """``Read``: ``file_path`` (relative to ``policy.cwd``), optional 1-based ``offset`` and
    ``limit`` (default ``policy.read_default_lines``). Lines as ``cat -n`` prints them, each cut
    at ``policy.read_max_line_chars``; a whole file over ``policy.read_max_bytes`` is refused
    (``too-large``), as is a binary one (a NUL in the first 8,000 bytes). Never raises."""
    raw = str_arg(args, "file_path", "Read")
    offset = int_arg(args, "offset", "Read")
    limit = int_arg(args, "limit", "Read")
    for value in (raw, offset, limit):
        if isinstance(value, ToolOutcome):
            return value
    assert isinstance(raw, str)
    path = _read_path(policy, raw)
    if isinstance(path, ToolOutcome):
        return path
    try:
        fh, st = open_regular(path)
    except FileNotFoundError:
        return error("not-found", f"File not found: {path}.")
    except NotRegularFileError:
        if path.is_dir():
            return error("is-directory", f"{path} is a directory: list it with Glob or Bash ls.")
        return error("not-a-file", f"Refused: {path} is not a regular file (a FIFO, a device or a socket).")
    except OSError as exc:
        return error("unreadable", f"Cannot read {path}: {exc.strerror or exc}.")
    first = offset if isinstance(offset, int) else 1
    count = limit if isinstance(limit, int) else policy.read_default_lines
    try:
        with fh:
            if offset is None and limit is None and st.st_size > policy.read_max_bytes:
                return error(
                    "too-large",
                    f"Refused: {path} is {st.st_size:,} bytes, over the {policy.read_max_bytes:,}-byte limit for a whole file; "
                    "read it in parts with offset and limit.",
                )
            if b"\0" in fh.read(_SNIFF_BYTES):
                return error("binary-file", f"Refused: {path} is a binary file; only text files can be read.")
            fh.seek(0)
            lines: list[str] = []
            more = False
            for number, line in enumerate(_capped_lines(fh, policy.read_max_line_chars * 4 + 4), start=1):
                if number < first:
                    continue
                if len(lines) == count:
                    more = True
                    break
                text = line.decode("utf-8", errors="replace").rstrip("\r\n")
                if len(text) > policy.read_max_line_chars:
                    text = text[: policy.read_max_line_chars] + "… [line cut]"
                lines.append(f"{number:6}\t{text}")
    except OSError as exc:
        return error("unreadable", f"Cannot read {path}: {exc.strerror or exc}.")
    if not lines:
        if st.st_size == 0:
            return ToolOutcome(f"({path} is empty)")
        return ToolOutcome(f"({path} has fewer than {first} lines)")
    body = "\n".join(lines)
    if more:
        body += f"\n[more lines follow; continue with offset={first + len(lines)}]"
    return ToolOutcome(cap_text(policy.show(body), policy.max_output_chars))  # named as shown before the cut


def _capped_lines(fh: BinaryIO, cap: int) -> Iterator[bytes]:
    """The lines of ``fh``, each at most ``cap`` bytes kept (the rest of a longer line is read
    and dropped): a file that is one 10 GB line never fills memory."""
    while True:
        line = fh.readline(cap)
        if not line:
            return
        if not line.endswith(b"\n"):
            while True:
                rest = fh.readline(1 << 16)
                if not rest or rest.endswith(b"\n"):
                    break
        yield line


def _translate(pattern: str) -> str:
    """A glob (``*``, ``?``, ``[...]``, ``**``) as a regex over a relative POSIX path."""
    out: list[str] = []
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if pattern.startswith("**/", i) and (i == 0 or pattern[i - 1] == "/"):
            out.append("(?:.*/)?")
            i += 3
            continue
        if pattern.startswith("**", i) and (i == 0 or pattern[i - 1] == "/") and i + 2 == n:
            out.append(".*")
            i += 2
            continue
        if c == "*":
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[":
            end = pattern.find("]", i + 2 if pattern[i + 1 : i + 2] in ("!", "^", "]") else i + 1)
            if end == -1:
                out.append(regex.escape(c))
            else:
                body = pattern[i + 1 : end]
                if body.startswith(("!", "^")):
                    body = "^" + body[1:]
                out.append("[" + body.replace("\\", "\\\\") + "]")
                i = end
        else:
            out.append(regex.escape(c))
        i += 1
    return "".join(out)


def _compile_globs(pattern: str) -> Any:
    """``pattern`` with ``{a,b}`` expanded (bracex, a declared dependency), as one regex."""
    import bracex

    parts = [f"(?:{_translate(p)})" for p in bracex.expand(pattern)] or [_translate(pattern)]
    return regex.compile("|".join(parts), flags=regex.DOTALL)


def _walk(top: Path, deadline: float) -> Iterator[tuple[Path, str]]:
    """Every file below ``top`` as (absolute path, relative POSIX path): symlinks to
    directories not followed, version-control dirs skipped, sorted, until ``deadline``."""
    for dirpath, dirnames, filenames in os.walk(top, followlinks=False):
        if time.monotonic() > deadline:
            raise TimeoutError
        dirnames[:] = sorted(d for d in dirnames if d not in _SKIP_DIRS and denied(os.path.join(dirpath, d)) is None)
        rel_dir = os.path.relpath(dirpath, top)
        for name in sorted(filenames):
            rel = name if rel_dir == "." else f"{rel_dir}/{name}".replace(os.sep, "/")
            yield Path(dirpath, name), rel


def _search_root(policy: ToolPolicy, args: Mapping[str, Any], tool: str) -> Path | ToolOutcome:
    raw = str_arg(args, "path", tool, required=False)
    if isinstance(raw, ToolOutcome):
        return raw
    path = _read_path(policy, raw or ".")
    if isinstance(path, ToolOutcome):
        return path
    if not path.exists():
        return error("not-found", f"Path not found: {path}.")
    return path


def glob_tool(policy: ToolPolicy, args: Mapping[str, Any]) -> ToolOutcome:
    """``Glob``: ``pattern`` (``*``, ``?``, ``[...]``, ``{a,b}``, ``**``) matched against paths
    relative to ``path`` (default ``policy.cwd``); absolute paths, newest first, at most
    ``policy.glob_max_results``. Symlinked dirs not followed, VCS dirs skipped. Never raises."""
    pattern = str_arg(args, "pattern", "Glob")
    if isinstance(pattern, ToolOutcome):
        return pattern
    assert isinstance(pattern, str)
    if pattern.startswith("/") or ".." in pattern.split("/"):
        return error("bad-pattern", "Refused: the pattern must be relative to 'path' and contain no '..'; set 'path' instead.")
    top = _search_root(policy, args, "Glob")
    if isinstance(top, ToolOutcome):
        return top
    if not top.is_dir():
        return error("not-a-directory", f"{top} is not a directory.")
    matcher = _compile_globs(pattern)
    deadline = time.monotonic() + policy.search_timeout_s
    found: list[tuple[float, str]] = []
    stopped = False
    try:
        for path, rel in _walk(top, deadline):
            if matcher.fullmatch(rel):
                try:
                    mtime = path.lstat().st_mtime
                except OSError:
                    continue
                found.append((mtime, str(path)))
    except TimeoutError:
        stopped = True
    if not found:
        note = f" (search stopped after {policy.search_timeout_s:g} s)" if stopped else ""
        return ToolOutcome(f"No files match {pattern!r} in {top}{note}.")
    found.sort(key=lambda item: (-item[0], item[1]))
    shown = [p for _, p in found[: policy.glob_max_results]]
    text = "\n".join(shown)
    if len(found) > len(shown):
        text += f"\n[{len(found) - len(shown)} more not shown; narrow the pattern]"
    if stopped:
        text += f"\n[search stopped after {policy.search_timeout_s:g} s; results are incomplete]"
    return ToolOutcome(cap_text(policy.show(text), policy.max_output_chars))  # named as shown before the cut


def grep_tool(policy: ToolPolicy, args: Mapping[str, Any]) -> ToolOutcome:
    """``Grep``: ``pattern`` (Python/``regex`` syntax; ``ignore_case``) over ``path`` (a file, or
    every text file below a directory, optionally filtered by ``glob``); ``path:line:text``
    lines, at most ``policy.grep_max_matches``, within ``policy.search_timeout_s``. Never
    raises."""
    pattern = str_arg(args, "pattern", "Grep")
    glob = str_arg(args, "glob", "Grep", required=False)
    for value in (pattern, glob):
        if isinstance(value, ToolOutcome):
            return value
    assert isinstance(pattern, str)
    assert glob is None or isinstance(glob, str)
    flags = regex.IGNORECASE if args.get("ignore_case") is True else 0
    try:
        compiled = regex.compile(pattern, flags=flags)
    except regex.error as exc:
        return error("bad-regex", f"Refused: {pattern!r} is not a valid regular expression: {exc}.")
    top = _search_root(policy, args, "Grep")
    if isinstance(top, ToolOutcome):
        return top
    name_filter = _compile_globs(glob) if glob else None
    deadline = time.monotonic() + policy.search_timeout_s
    if top.is_file():
        files: Iterator[tuple[Path, str]] = iter([(top, top.name)])
    else:
        files = _walk(top, deadline)
    matches: list[str] = []
    more = False
    stopped = False
    try:
        for path, rel in files:
            if name_filter is not None and not name_filter.fullmatch(rel if glob and "/" in glob else path.name):
                continue
            if denied(path) is not None:
                continue
            try:
                if path.is_symlink() and path != top:
                    continue
                data = read_regular(path, policy.grep_max_file_bytes)[0]
            except OSError:  # not a regular file (FIFO, device), over the size cap, unreadable
                continue
            if b"\0" in data[:_SNIFF_BYTES]:
                continue
            for number, line in enumerate(data.decode("utf-8", errors="replace").splitlines(), start=1):
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise TimeoutError
                if compiled.search(line, timeout=remaining):
                    if len(matches) == policy.grep_max_matches:
                        more = True
                        break
                    if len(line) > policy.read_max_line_chars:
                        line = line[: policy.read_max_line_chars] + "… [line cut]"
                    matches.append(f"{path}:{number}:{line}")
            if more:
                break
    except TimeoutError:
        stopped = True
    if not matches:
        note = f" (search stopped after {policy.search_timeout_s:g} s)" if stopped else ""
        return ToolOutcome(f"No matches for {pattern!r} in {top}{note}.")
    text = "\n".join(matches)
    if more:
        text += f"\n[stopped at {policy.grep_max_matches} matching lines; narrow the search]"
    if stopped:
        text += f"\n[search stopped after {policy.search_timeout_s:g} s; results are incomplete]"
    return ToolOutcome(cap_text(policy.show(text), policy.max_output_chars))  # named as shown before the cut
