"""The six agent tools and :func:`execute`, the one entry point that enforces a
:class:`~memtui.core.agent.policy.ToolPolicy` (SPEC §7, §9).

``Read``/``Grep``/``Glob`` read anywhere (or below ``policy.read_roots``); ``Bash`` runs the
read-only allow-list (:mod:`memtui.core.agent.bash`); ``Write``/``Edit`` change files only
inside ``policy.write_root``, at the path :func:`memtui.core.safepath.validate_inside` returns,
through :func:`memtui.core.atomic.atomic_write_bytes`. Any other name is refused.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import regex  # type: ignore[import-untyped]  # dateparser's own dependency; has match timeouts

from memtui.core.agent.bash import cap_text, run_bash
from memtui.core.agent.policy import ALL_TOOLS, ToolCall, ToolOutcome, ToolPolicy
from memtui.core.atomic import atomic_write_bytes
from memtui.core.safepath import UnsafePathError, validate_inside

__all__ = ["execute", "summarize", "tool_definitions"]

# Bytes looked at to tell a binary file from text (a NUL byte among them: binary), as git does.
_SNIFF_BYTES = 8_000
# Directories a search never descends into: version-control internals.
_SKIP_DIRS = frozenset({".git", ".hg", ".svn"})

_DEFINITIONS: dict[str, dict[str, Any]] = {
    "Read": {
        "description": (
            "Read a text file. Returns its lines numbered from 1, as `cat -n` prints them "
            "(number, tab, line). Without offset/limit, files over 256 KB are refused: read them "
            "in parts. A relative path is relative to the working directory."
        ),
        "input_schema": {
            "type": "object",
            "properties": {
                "file_path": {"type": "string", "description": "Path of the file (absolute preferred)."},
                "offset": {"type": "integer", "minimum": 1, "description": "First line to read (1-based)."},
                "limit": {"type": "integer", "minimum": 1, "description": "Number of lines to read (default 2000)."},
            },
            "required": ["file_path"],
        },
    },
    "Grep": {
        "description": (
            "Search file contents with a regular expression (Python syntax) in a file or in every "
            "text file below a directory. Returns matching lines as path:line:text, at most 200."
        ),
        "input_schema": {
            "type": "object",
            "properties": {
                "pattern": {"type": "string", "description": "Regular expression to search for."},
                "path": {"type": "string", "description": "File or directory to search (default: the working directory)."},
                "glob": {"type": "string", "description": "Only files whose name (or relative path, if it has a '/') matches, e.g. '*.md'."},
                "ignore_case": {"type": "boolean", "description": "Case-insensitive search."},
            },
            "required": ["pattern"],
        },
    },
    "Glob": {
        "description": (
            "Find files by name pattern ('*', '?', '[abc]', '{a,b}', '**' for any depth) below a "
            "directory. Returns absolute paths, newest first, at most 100."
        ),
        "input_schema": {
            "type": "object",
            "properties": {
                "pattern": {"type": "string", "description": "Pattern relative to path, e.g. '**/*.md'."},
                "path": {"type": "string", "description": "Directory to search (default: the working directory)."},
            },
            "required": ["pattern"],
        },
    },
    "Bash": {
        "description": (
            "Run one read-only command, or a pipeline of them joined by '|': {allow}. There is no "
            "shell: no redirection, no ';', '&&', '||' or '&', no $(...), ${...} or backticks, no "
            "globbing or variables (use the Glob tool for patterns). find -exec/-delete and the "
            "like are refused."
        ),
        "input_schema": {
            "type": "object",
            "properties": {"command": {"type": "string", "description": "The command line."}},
            "required": ["command"],
        },
    },
    "Write": {
        "description": (
            "Create or replace a file with the given content (UTF-8). Only files inside {root} "
            "may be written; a relative path is relative to it."
        ),
        "input_schema": {
            "type": "object",
            "properties": {
                "file_path": {"type": "string", "description": "Path of the file to write."},
                "content": {"type": "string", "description": "The whole new content of the file."},
            },
            "required": ["file_path", "content"],
        },
    },
    "Edit": {
        "description": (
            "Replace text in an existing file inside {root}: old_string must occur exactly once "
            "(give more context to make it unique) unless replace_all is true. Copy old_string "
            "from the file itself, without Read's line-number prefix."
        ),
        "input_schema": {
            "type": "object",
            "properties": {
                "file_path": {"type": "string", "description": "Path of the file to change."},
                "old_string": {"type": "string", "description": "The exact text to replace."},
                "new_string": {"type": "string", "description": "The text to put in its place."},
                "replace_all": {"type": "boolean", "description": "Replace every occurrence (default false)."},
            },
            "required": ["file_path", "old_string", "new_string"],
        },
    },
}


def tool_definitions(policy: ToolPolicy) -> list[dict[str, Any]]:
    """The ``tools`` parameter of a Messages API request for ``policy``: one
    ``{"name", "description", "input_schema"}`` dict per tool in ``policy.offered()``, with the
    allow-list and the writable root written into the descriptions."""
    allow = ", ".join(sorted(policy.bash_allow))
    root = str(policy.write_root) if policy.write_root is not None else "the writable directory"
    result = []
    for name in policy.offered():
        spec = _DEFINITIONS[name]
        result.append(
            {
                "name": name,
                "description": spec["description"].replace("{allow}", allow).replace("{root}", root),
                "input_schema": spec["input_schema"],
            }
        )
    return result


def execute(
    policy: ToolPolicy,
    name: str,
    tool_input: object,
    *,
    log: list[ToolCall] | None = None,
    tool_use_id: str = "",
    turn: int = 0,
) -> ToolOutcome:
    """Run the tool ``name`` with the model's ``tool_input`` (a JSON object) under ``policy``.

    Returns a :class:`ToolOutcome`; a refusal or failure has ``is_error=True``, a ``code`` and
    a reason in ``content`` — this function never raises for anything the model sends (an
    unexpected ``Exception`` inside a tool comes back as ``internal-error``). When ``log`` is
    given, a :class:`ToolCall` (with ``tool_use_id`` and ``turn``) is appended to it.
    """
    try:
        outcome = _dispatch(policy, name, tool_input)
    except Exception as exc:  # noqa: BLE001 - the model must get an answer; the log keeps it
        outcome = ToolOutcome(f"Internal error in {name}: {type(exc).__name__}: {exc}", is_error=True, code="internal-error")
    if log is not None:
        log.append(
            ToolCall(
                id=tool_use_id,
                turn=turn,
                name=name,
                input=tool_input,
                summary=summarize(name, tool_input),
                is_error=outcome.is_error,
                code=outcome.code,
                wrote=outcome.wrote,
                content=outcome.content,
            )
        )
    return outcome


def summarize(name: str, tool_input: object) -> str:
    """One line describing a call, for logs: ``Read /x/y.md``, ``Bash ls -la``,
    ``Write notes.md (120 chars)``, ``Edit notes.md``; at most 200 characters."""
    data = tool_input if isinstance(tool_input, Mapping) else {}
    if name == "Bash":
        detail = str(data.get("command", ""))
    elif name in ("Grep", "Glob"):
        detail = f"{data.get('pattern', '')!r} in {data.get('path') or '.'}"
        if data.get("glob"):
            detail += f" ({data['glob']})"
    elif name == "Write":
        content = data.get("content")
        size = f" ({len(content)} chars)" if isinstance(content, str) else ""
        detail = f"{data.get('file_path', '')}{size}"
    else:
        detail = str(data.get("file_path", "")) if data else repr(tool_input)
    line = f"{name} {detail}".replace("\n", "\\n")
    return line if len(line) <= 200 else line[:199] + "…"


def _error(code: str, message: str) -> ToolOutcome:
    return ToolOutcome(message, is_error=True, code=code)


def _dispatch(policy: ToolPolicy, name: str, tool_input: object) -> ToolOutcome:
    if name not in ALL_TOOLS:
        offered = ", ".join(policy.offered())
        return _error("unknown-tool", f"Refused: there is no tool {name!r}. The tools are: {offered}.")
    if name not in policy.offered():
        if name in ("Write", "Edit") and policy.write_root is None:
            why = "no writable directory was given"
        elif name == "Bash" and policy.read_roots is not None:
            why = "reads are confined to some directories, and a command's arguments could name any path"
        else:
            why = "it is turned off"
        return _error("tool-disabled", f"Refused: {name} is not available in this run ({why}).")
    if not isinstance(tool_input, Mapping):
        return _error("bad-input", f"Refused: the input of {name} must be a JSON object.")
    args: Mapping[str, Any] = tool_input
    if name == "Read":
        return _read(policy, args)
    if name == "Grep":
        return _grep(policy, args)
    if name == "Glob":
        return _glob(policy, args)
    if name == "Bash":
        command = args.get("command")
        if not isinstance(command, str):
            return _error("bad-input", "Refused: Bash needs 'command' (a string).")
        return run_bash(policy, command)
    if name == "Write":
        return _write(policy, args)
    return _edit(policy, args)


# -- reading ---------------------------------------------------------------------------------


def _str_arg(args: Mapping[str, Any], key: str, tool: str, *, required: bool = True) -> str | ToolOutcome | None:
    value = args.get(key)
    if value is None and not required:
        return None
    if not isinstance(value, str) or (required and not value):
        return _error("bad-input", f"Refused: {tool} needs {key!r} (a non-empty string).")
    return value


def _int_arg(args: Mapping[str, Any], key: str, tool: str) -> int | ToolOutcome | None:
    value = args.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        return _error("bad-input", f"Refused: {tool}'s {key!r} must be a whole number ≥ 1.")
    return value


def _read_path(policy: ToolPolicy, raw: str) -> Path | ToolOutcome:
    """``raw`` made absolute (``~`` expanded, relative to ``policy.cwd``); with
    ``policy.read_roots``, its ``realpath``, checked to lie inside one of them (the checked path
    is the one read: ``link/../x`` means another file to the kernel than to ``normpath``)."""
    if "\0" in raw:
        return _error("bad-input", "Refused: the path contains a NUL byte.")
    path = Path(os.path.join(policy.cwd, os.path.expanduser(raw)))
    if policy.read_roots is not None:
        real = os.path.realpath(path)
        roots = [os.path.realpath(root) for root in policy.read_roots]
        if not any(real == root or real.startswith(root.rstrip(os.sep) + os.sep) for root in roots):
            shown = ", ".join(roots)
            return _error("outside-read-roots", f"Refused: {raw} resolves to {real}, outside the readable directories ({shown}).")
        return Path(real)
    return Path(os.path.normpath(path))


def _read(policy: ToolPolicy, args: Mapping[str, Any]) -> ToolOutcome:
    raw = _str_arg(args, "file_path", "Read")
    offset = _int_arg(args, "offset", "Read")
    limit = _int_arg(args, "limit", "Read")
    for value in (raw, offset, limit):
        if isinstance(value, ToolOutcome):
            return value
    assert isinstance(raw, str)
    path = _read_path(policy, raw)
    if isinstance(path, ToolOutcome):
        return path
    try:
        st = path.stat()
    except FileNotFoundError:
        return _error("not-found", f"File not found: {path}.")
    except OSError as exc:
        return _error("unreadable", f"Cannot read {path}: {exc.strerror or exc}.")
    if path.is_dir():
        return _error("is-directory", f"{path} is a directory: list it with Glob or Bash ls.")
    if not path.is_file():
        return _error("not-a-file", f"Refused: {path} is not a regular file.")
    if offset is None and limit is None and st.st_size > policy.read_max_bytes:
        return _error(
            "too-large",
            f"Refused: {path} is {st.st_size:,} bytes, over the {policy.read_max_bytes:,}-byte limit for a whole file; "
            "read it in parts with offset and limit.",
        )
    first = offset if isinstance(offset, int) else 1
    count = limit if isinstance(limit, int) else policy.read_default_lines
    try:
        with path.open("rb") as fh:
            if b"\0" in fh.read(_SNIFF_BYTES):
                return _error("binary-file", f"Refused: {path} is a binary file; only text files can be read.")
            fh.seek(0)
            lines: list[str] = []
            more = False
            for number, line in enumerate(fh, start=1):
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
        return _error("unreadable", f"Cannot read {path}: {exc.strerror or exc}.")
    if not lines:
        if st.st_size == 0:
            return ToolOutcome(f"({path} is empty)")
        return ToolOutcome(f"({path} has fewer than {first} lines)")
    body = "\n".join(lines)
    if more:
        body += f"\n[more lines follow; continue with offset={first + len(lines)}]"
    return ToolOutcome(cap_text(body, policy.max_output_chars))


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
        dirnames[:] = sorted(d for d in dirnames if d not in _SKIP_DIRS)
        rel_dir = os.path.relpath(dirpath, top)
        for name in sorted(filenames):
            rel = name if rel_dir == "." else f"{rel_dir}/{name}".replace(os.sep, "/")
            yield Path(dirpath, name), rel


def _search_root(policy: ToolPolicy, args: Mapping[str, Any], tool: str) -> Path | ToolOutcome:
    raw = _str_arg(args, "path", tool, required=False)
    if isinstance(raw, ToolOutcome):
        return raw
    path = _read_path(policy, raw or ".")
    if isinstance(path, ToolOutcome):
        return path
    if not path.exists():
        return _error("not-found", f"Path not found: {path}.")
    return path


def _glob(policy: ToolPolicy, args: Mapping[str, Any]) -> ToolOutcome:
    pattern = _str_arg(args, "pattern", "Glob")
    if isinstance(pattern, ToolOutcome):
        return pattern
    assert isinstance(pattern, str)
    if pattern.startswith("/") or ".." in pattern.split("/"):
        return _error("bad-pattern", "Refused: the pattern must be relative to 'path' and contain no '..'; set 'path' instead.")
    top = _search_root(policy, args, "Glob")
    if isinstance(top, ToolOutcome):
        return top
    if not top.is_dir():
        return _error("not-a-directory", f"{top} is not a directory.")
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
    return ToolOutcome(cap_text(text, policy.max_output_chars))


def _grep(policy: ToolPolicy, args: Mapping[str, Any]) -> ToolOutcome:
    pattern = _str_arg(args, "pattern", "Grep")
    glob = _str_arg(args, "glob", "Grep", required=False)
    for value in (pattern, glob):
        if isinstance(value, ToolOutcome):
            return value
    assert isinstance(pattern, str)
    assert glob is None or isinstance(glob, str)
    flags = regex.IGNORECASE if args.get("ignore_case") is True else 0
    try:
        compiled = regex.compile(pattern, flags=flags)
    except regex.error as exc:
        return _error("bad-regex", f"Refused: {pattern!r} is not a valid regular expression: {exc}.")
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
            try:
                if path.is_symlink() or not path.is_file() or path.stat().st_size > policy.grep_max_file_bytes:
                    continue
                data = path.read_bytes()
            except OSError:
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
    return ToolOutcome(cap_text(text, policy.max_output_chars))


# -- writing ---------------------------------------------------------------------------------


def _write_path(policy: ToolPolicy, raw: str, tool: str) -> Path | ToolOutcome:
    """The real path a write of ``raw`` must go to, or the refusal (safepath's code)."""
    assert policy.write_root is not None
    try:
        target = validate_inside(raw, policy.write_root)
    except UnsafePathError as exc:
        return _error(exc.code, f"Refused: {tool} may only change files inside {policy.write_root}; {raw!r}: {exc.reason}.")
    if target.is_dir():
        return _error("is-directory", f"Refused: {target} is a directory, not a file.")
    return target


def _write(policy: ToolPolicy, args: Mapping[str, Any]) -> ToolOutcome:
    raw = _str_arg(args, "file_path", "Write")
    if isinstance(raw, ToolOutcome):
        return raw
    content = args.get("content")
    if not isinstance(content, str):
        return _error("bad-input", "Refused: Write needs 'content' (a string).")
    assert isinstance(raw, str)
    target = _write_path(policy, raw, "Write")
    if isinstance(target, ToolOutcome):
        return target
    try:
        data = content.encode("utf-8")
    except UnicodeEncodeError:
        return _error("bad-input", "Refused: the content holds a lone surrogate (\\ud800-\\udfff), which is not text.")
    if len(data) > policy.write_max_bytes:
        return _error("too-large", f"Refused: {len(data):,} bytes is over the {policy.write_max_bytes:,}-byte limit for one file.")
    existed = target.exists()
    try:
        atomic_write_bytes(target, data)
    except OSError as exc:
        return _error("write-failed", f"Could not write {target}: {exc.strerror or exc}.")
    verb = "Updated" if existed else "Created"
    return ToolOutcome(f"{verb} {target} ({len(data):,} bytes).", wrote=target)


def _edit(policy: ToolPolicy, args: Mapping[str, Any]) -> ToolOutcome:
    raw = _str_arg(args, "file_path", "Edit")
    if isinstance(raw, ToolOutcome):
        return raw
    old, new = args.get("old_string"), args.get("new_string")
    if not isinstance(old, str) or not isinstance(new, str):
        return _error("bad-input", "Refused: Edit needs 'old_string' and 'new_string' (strings).")
    replace_all = args.get("replace_all", False) is True
    assert isinstance(raw, str)
    target = _write_path(policy, raw, "Edit")
    if isinstance(target, ToolOutcome):
        return target
    if not old:
        return _error("bad-input", "Refused: old_string is empty; use Write to create a file.")
    if old == new:
        return _error("no-change", "Refused: old_string and new_string are the same.")
    try:
        before = target.read_bytes()
    except FileNotFoundError:
        return _error("not-found", f"File not found: {target} (use Write to create it).")
    except OSError as exc:
        return _error("unreadable", f"Cannot read {target}: {exc.strerror or exc}.")
    try:
        text = before.decode("utf-8")
    except UnicodeDecodeError:
        return _error("not-utf8", f"Refused: {target} is not UTF-8 text.")
    count = text.count(old)
    if count == 0:
        return _error("no-match", f"old_string was not found in {target}: copy it exactly from the file (without line numbers).")
    if count > 1 and not replace_all:
        return _error(
            "ambiguous-match",
            f"old_string occurs {count} times in {target}: add surrounding text to make it unique, or set replace_all.",
        )
    try:
        after = (text.replace(old, new) if replace_all else text.replace(old, new, 1)).encode("utf-8")
    except UnicodeEncodeError:
        return _error("bad-input", "Refused: new_string holds a lone surrogate (\\ud800-\\udfff), which is not text.")
    if len(after) > policy.write_max_bytes:
        return _error("too-large", f"Refused: the result, {len(after):,} bytes, is over the {policy.write_max_bytes:,}-byte limit.")
    try:
        atomic_write_bytes(target, after)
    except OSError as exc:
        return _error("write-failed", f"Could not write {target}: {exc.strerror or exc}.")
    times = f"{count} occurrences" if replace_all and count > 1 else "1 occurrence"
    return ToolOutcome(f"Edited {target}: replaced {times}.", wrote=target)
