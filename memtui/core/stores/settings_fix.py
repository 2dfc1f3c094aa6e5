"""One key of a settings file set or removed, as a plan to preview and apply (the fixes of the
stores audit that are a setting: ``autoMemoryDirectory``, ``env.CLAUDE_CODE_DISABLE_AUTO_MEMORY``,
``autoMemoryEnabled``).

A settings file is JSON; the file is written again with the key changed and every other key kept
in its order, indented as the file was (the width of its first indented line; 2 when it has
none), with its line ends (``\r\n`` kept), ending with a newline when it did. A file holding a
number JSON cannot write back as it was read (``1e400``) is left for a person to change. The
value set is always a string. The change goes through memtui's write path
(``apply_plan``: checked against the bytes read, journaled, atomic) in the journal of the file's
folder, which ``memtui undo`` consults (``settings_journals``).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from memtui.core.base.jsontext import JSONInputError, dumps_exact, loads_checked
from memtui.core.base.safe_read import read_regular
from memtui.core.places.settings import MAX_SETTINGS_BYTES
from memtui.core.writes.edits import FileChange, Plan, apply_plan
from memtui.core.writes.journal import Journal, JournalEntry
from memtui.core.writes.roots import register_root

_INDENT = re.compile(r"\n([ \t]+)\S")


class SettingEditError(ValueError):
    """The setting cannot be changed: the reason, in words."""


@dataclass(frozen=True, slots=True)
class SettingChange:
    """A planned change: ``path`` (the settings file), ``key`` (dotted: ``env.NAME``), ``value``
    (the new string, or ``None`` to remove the key), ``before``/``after`` (the file's bytes;
    ``before`` ``None`` when the file does not exist yet)."""

    path: Path
    key: str
    value: str | None
    before: bytes | None
    after: bytes

    @property
    def title(self) -> str:
        """The change in words, for the journal and the preview."""
        what = f"remove {self.key}" if self.value is None else f"set {self.key} to {self.value}"
        return f"Settings: {what} in {self.path}"


def _non_finite(value: Any, depth: int = 0) -> bool:
    """Whether ``value`` holds an infinite float (``1e400`` reads as one; written back it
    would be ``Infinity``, which no JSON reader accepts)."""
    if isinstance(value, float):
        return value != value or value in (float("inf"), float("-inf"))
    if depth > 200:
        return False
    if isinstance(value, dict):
        return any(_non_finite(v, depth + 1) for v in value.values())
    if isinstance(value, list):
        return any(_non_finite(v, depth + 1) for v in value)
    return False


def plan_setting(path: Path, key: str, value: str | None) -> SettingChange:
    """The change of ``key`` (dotted path of object keys) in the settings file ``path`` to the
    string ``value``, or its removal (``None``). Reads only. Raises ``SettingEditError`` (not a
    JSON object, a key path through something that is not an object, nothing to change, a link
    leading out of the file's folder — a dotfiles repository's) or
    ``OSError`` (the file could not be read, or is over ``MAX_SETTINGS_BYTES``)."""
    parts = key.split(".")
    if not all(parts):
        raise SettingEditError(f"{key!r} is not a key path (names separated by dots)")
    real = Path(os.path.realpath(path))
    if real.parent != Path(os.path.realpath(path.parent)):
        raise SettingEditError(f"{path} is a link to {real}: memtui does not write through it; make the change in {real}")
    try:
        raw, _ = read_regular(path, MAX_SETTINGS_BYTES)
    except FileNotFoundError:
        raw = None
    if raw is None:
        if value is None:
            raise SettingEditError(f"{path} does not exist: nothing to remove")
        data: Any = {}
        text = ""
    else:
        try:
            text = raw.decode("utf-8", errors="strict") if raw.strip() else ""
            data = loads_checked(raw) if text else {}
        except (JSONInputError, UnicodeDecodeError) as exc:
            raise SettingEditError(f"{path} is not valid JSON ({exc}); change it by hand") from exc
        if not isinstance(data, dict):
            raise SettingEditError(f"{path} is not a JSON object; change it by hand")
        if _non_finite(data):
            raise SettingEditError(f"{path} holds a number JSON cannot write back as it is (such as 1e400); change it by hand")
    node = data
    for name in parts[:-1]:
        child = node.get(name)
        if child is None and value is not None:
            child = node[name] = {}
        if not isinstance(child, dict):
            if value is None:
                raise SettingEditError(f"{key} is not set in {path}: nothing to remove")
            raise SettingEditError(f"{'.'.join(parts[: parts.index(name) + 1])} in {path} is not an object; change it by hand")
        node = child
    last = parts[-1]
    if value is None:
        if last not in node:
            raise SettingEditError(f"{key} is not set in {path}: nothing to remove")
        del node[last]
    else:
        if node.get(last) == value:
            raise SettingEditError(f"{key} is already {value} in {path}")
        node[last] = value
    m = _INDENT.search(text)
    indent: Any = m.group(1) if m else 2
    after = dumps_exact(data, indent=indent) + ("\n" if not text or text.endswith("\n") else "")
    if "\r\n" in text:  # the file's line ends kept
        after = after.replace("\n", "\r\n")
    return SettingChange(path, key, value, raw, after.encode("utf-8"))


def setting_plan(change: SettingChange) -> Plan:
    """``change`` as a plan relative to the file's folder (for the preview and ``apply_setting``)."""
    return Plan(change.title, (FileChange(change.path.name, change.before, change.after),), action="setting")


def apply_setting(change: SettingChange, state_dir: Path, now: datetime) -> JournalEntry:
    """Write ``change`` through ``apply_plan`` in the journal of the file's folder; returns the
    journal entry (``apply_plan``'s errors: ``ConflictError``, ``ApplyError`` — the file is a
    link leading out of its folder, say —, ``OSError``)."""
    folder = change.path.parent
    register_root(state_dir, folder)  # every start settles it, `memtui undo` finds it
    return apply_plan(folder, setting_plan(change), Journal(state_dir, folder), now, meta={"file": str(change.path), "key": change.key})


def settings_journals(state_dir: Path, files: list[Path]) -> list[tuple[Path, Journal]]:
    """The journals of the folders of ``files`` (settings files) that hold an entry, each with
    its folder: where a setting changed by ``apply_setting`` is recorded."""
    out: list[tuple[Path, Journal]] = []
    for folder in dict.fromkeys(Path(os.path.realpath(f.parent)) for f in files):
        try:
            journal = Journal(state_dir, folder)
        except OSError:
            continue
        if journal.base.is_dir():
            out.append((folder, journal))
    return out
