"""The writing tools: ``Write`` and ``Edit``, only inside ``policy.write_root``, at the path
:func:`memtui.core.writes.safepath.validate_inside` returns (docs/behaviour.md §9), through
:func:`memtui.core.writes.atomic.atomic_write_bytes` (docs/behaviour.md §10)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from memtui.core.base.safe_read import FileTooLargeError, NotRegularFileError, read_regular
from memtui.core.agent.args import error, str_arg
from memtui.core.agent.policy import ToolOutcome, ToolPolicy
from memtui.core.writes.atomic import atomic_write_bytes
from memtui.core.writes.safepath import UnsafePathError, validate_inside

__all__ = ["edit_tool", "write_tool"]


def _write_path(policy: ToolPolicy, raw: str, tool: str) -> Path | ToolOutcome:
    """The real path a write of ``raw`` (see :meth:`ToolPolicy.write_target`) must go to, or the
    refusal (safepath's code)."""
    assert policy.write_root is not None
    try:
        target = validate_inside(policy.write_target(raw), policy.write_root)
    except UnsafePathError as exc:
        return error(exc.code, f"Refused: {tool} may only change files inside {policy.write_root}; {raw!r}: {exc.reason}.")
    if target.is_dir():
        return error("is-directory", f"Refused: {target} is a directory, not a file.")
    if policy.write_suffixes is not None:
        rel = target.relative_to(Path(policy.write_root).resolve()).as_posix()
        if ":" in rel or not target.name.endswith(policy.write_suffixes):
            allowed = " or ".join(policy.write_suffixes)
            return error("not-memory-file", f"Refused: {tool} may only change {allowed} files inside {policy.write_root} ({raw!r}).")
    return target


def write_tool(policy: ToolPolicy, args: Mapping[str, Any]) -> ToolOutcome:
    """``Write``: ``file_path`` (absolute, ``~``-relative, or relative to the write root) and ``content``
    (UTF-8, at most ``policy.write_max_bytes``); creates parent dirs. ``wrote`` is the real path
    written. Refusals carry safepath's codes. Never raises."""
    raw = str_arg(args, "file_path", "Write")
    if isinstance(raw, ToolOutcome):
        return raw
    content = args.get("content")
    if not isinstance(content, str):
        return error("bad-input", "Refused: Write needs 'content' (a string).")
    assert isinstance(raw, str)
    target = _write_path(policy, raw, "Write")
    if isinstance(target, ToolOutcome):
        return target
    try:
        data = content.encode("utf-8")
    except UnicodeEncodeError:
        return error("bad-input", "Refused: the content holds a lone surrogate (\\ud800-\\udfff), which is not text.")
    if len(data) > policy.write_max_bytes:
        return error("too-large", f"Refused: {len(data):,} bytes is over the {policy.write_max_bytes:,}-byte limit for one file.")
    existed = target.exists()
    try:
        atomic_write_bytes(target, data)
    except OSError as exc:
        return error("write-failed", f"Could not write {target}: {exc.strerror or exc}.")
    verb = "Updated" if existed else "Created"
    return ToolOutcome(f"{verb} {target} ({len(data):,} bytes).", wrote=target)


def edit_tool(policy: ToolPolicy, args: Mapping[str, Any]) -> ToolOutcome:
    """``Edit``: replace ``old_string`` (exactly once, or every time with ``replace_all``) by
    ``new_string`` in an existing UTF-8 file inside ``policy.write_root``; every other byte (CRLF
    included) kept. Never raises."""
    raw = str_arg(args, "file_path", "Edit")
    if isinstance(raw, ToolOutcome):
        return raw
    old, new = args.get("old_string"), args.get("new_string")
    if not isinstance(old, str) or not isinstance(new, str):
        return error("bad-input", "Refused: Edit needs 'old_string' and 'new_string' (strings).")
    replace_all = args.get("replace_all", False) is True
    assert isinstance(raw, str)
    target = _write_path(policy, raw, "Edit")
    if isinstance(target, ToolOutcome):
        return target
    if not old:
        return error("bad-input", "Refused: old_string is empty; use Write to create a file.")
    if old == new:
        return error("no-change", "Refused: old_string and new_string are the same.")
    try:
        before = read_regular(target, max(policy.write_max_bytes * 4, 1 << 20))[0]
    except FileNotFoundError:
        return error("not-found", f"File not found: {target} (use Write to create it).")
    except NotRegularFileError:
        return error("not-a-file", f"Refused: {target} is not a regular file (a FIFO, a device or a socket).")
    except FileTooLargeError:
        return error("too-large", f"Refused: {target} is over the {policy.write_max_bytes:,}-byte limit for one file.")
    except OSError as exc:
        return error("unreadable", f"Cannot read {target}: {exc.strerror or exc}.")
    try:
        text = before.decode("utf-8")
    except UnicodeDecodeError:
        return error("not-utf8", f"Refused: {target} is not UTF-8 text.")
    count = text.count(old)
    if count == 0:
        return error("no-match", f"old_string was not found in {target}: copy it exactly from the file (without line numbers).")
    if count > 1 and not replace_all:
        return error(
            "ambiguous-match",
            f"old_string occurs {count} times in {target}: add surrounding text to make it unique, or set replace_all.",
        )
    try:
        after = (text.replace(old, new) if replace_all else text.replace(old, new, 1)).encode("utf-8")
    except UnicodeEncodeError:
        return error("bad-input", "Refused: new_string holds a lone surrogate (\\ud800-\\udfff), which is not text.")
    if len(after) > policy.write_max_bytes:
        return error("too-large", f"Refused: the result, {len(after):,} bytes, is over the {policy.write_max_bytes:,}-byte limit.")
    try:
        atomic_write_bytes(target, after)
    except OSError as exc:
        return error("write-failed", f"Could not write {target}: {exc.strerror or exc}.")
    times = f"{count} occurrences" if replace_all and count > 1 else "1 occurrence"
    return ToolOutcome(f"Edited {target}: replaced {times}.", wrote=target)
