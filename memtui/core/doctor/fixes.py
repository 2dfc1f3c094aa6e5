"""Safe fixes for doctor findings, each a ``Plan`` of ``memtui.core.writes.edits`` (``action="fix"``):
previewed as a diff, applied by ``apply_plan`` (conflict check, journal, atomic writes) and
undone by ``undo``. No fix deletes a memory, rewrites its prose or adds text to it: the only line
ever removed is an index line that links to a file that does not exist (offered, never part of
``--fix all``: ``CERTAIN_FIXES``).

Fixes read the files as they are on disk *now* and check that what the finding describes is
still there (else ``FixError``: run the doctor again). Several findings fixed together make one
plan — one undo — with edits applied bottom-up so line numbers stay valid.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path

from memtui.core.doctor.index_checks import HEADING_ENTRY
from memtui.core.doctor.model import FIXES, Finding
from memtui.core.writes.edits import EditError, FileChange, Plan
from memtui.core.memory.frontmatter import parse_frontmatter
from memtui.core.memory.index import IndexEntry, linked_relpaths, parse_entries, pushed_past_cap
from memtui.core.writes.index_edit import add_entries, entry_line, memory_type_of
from memtui.core.writes.contained import ContainmentError, check_target
from memtui.core.writes.journal import read_or_none
from memtui.core.memory.memories import MEMORY_TYPES, TEAM_DIR, declared_type_of
from memtui.core.writes.rewrite import set_top_level_key

_LEADING_TRAP = re.compile(r"^(?:\ufeff|[ \t]*\r?\n)+(?=---)")


class FixError(EditError):
    """A finding has no safe fix, or the file no longer looks as the finding describes."""


class _NotWritable(FixError):
    """The file a fix would change is a link leading outside the memory dir."""


def _mtime(path: Path) -> float | None:
    try:
        return path.stat().st_mtime
    except OSError:
        return None


class _Files:
    """The files a plan touches: loaded from disk once, edited as text (surrogateescape keeps
    non-UTF-8 bytes), turned into ``FileChange``s at the end.

    Line fixes edit a file's lines in place, by their number in the file as loaded (a removed
    line is ``None``): the text is split once, not once per fix. New index lines are gathered
    per index and added in one ``add_entries`` edit at the end; the relpaths an index links
    (its text's and the gathered lines') are parsed once."""

    def __init__(self, memory_dir: Path, confirmed: Mapping[str, str] | None = None, adding: frozenset[str] = frozenset()) -> None:
        self.memory_dir = memory_dir
        self.confirmed = confirmed
        self.adding = adding  # the relpaths fixes may add an index line for
        self.before: dict[str, bytes | None] = {}
        self.text: dict[str, str | None] = {}
        self._lines: dict[str, list[str | None]] = {}  # line-edited files: line i+1 of the file as loaded
        self._appends: dict[str, list[tuple[str | None, str]]] = {}  # index -> (memory type, line) to add
        self._linked: dict[str, set[str | None]] = {}  # index -> relpaths its entries point at
        self._writable: set[str] = set()

    def get(self, relpath: str) -> str | None:
        if relpath in self._lines:  # the line edits become the text again
            self.text[relpath] = "\n".join(line for line in self._lines.pop(relpath) if line is not None)
        if relpath not in self.text:
            data = read_or_none(self.memory_dir / relpath)
            self.before[relpath] = data
            self.text[relpath] = None if data is None else data.decode("utf-8", errors="surrogateescape")
        return self.text[relpath]

    def need(self, relpath: str) -> str:
        text = self.get(relpath)
        if text is None:
            path = self.memory_dir / relpath
            if os.path.islink(path):
                raise FixError(f"{relpath} is a link to {os.readlink(path)}, which does not exist: nothing to fix there")
            raise FixError(f"{relpath} no longer exists; run the doctor again")
        return text

    def _check_writable(self, relpath: str) -> None:
        """Raises ``_NotWritable`` when the name ``relpath`` leads outside the memory dir (a
        link): the doctor never writes through such a link."""
        if relpath in self._writable:
            return
        try:
            check_target(self.memory_dir, relpath, confirmed=self.confirmed)
        except ContainmentError as exc:
            raise _NotWritable(f"{relpath}: {exc.reason}") from exc
        self._writable.add(relpath)

    def set(self, relpath: str, text: str) -> None:
        """Change the text of ``relpath``. Raises ``_NotWritable`` (see ``_check_writable``)."""
        self._check_writable(relpath)
        self.get(relpath)
        self.text[relpath] = text

    def _line_list(self, relpath: str) -> list[str | None]:
        if relpath not in self._lines:
            self._lines[relpath] = list(self.need(relpath).split("\n"))
        return self._lines[relpath]

    def raw_line(self, relpath: str, number: int | None) -> str | None:
        """Line ``number`` (1-based, of the file as loaded, split at ``\n``, its ``\r`` kept), or
        ``None`` when there is none or a fix removed it."""
        lines = self._line_list(relpath)
        if number is None or not 1 <= number <= len(lines):
            return None
        return lines[number - 1]

    def replace_line(self, relpath: str, number: int, new: str | None) -> None:
        """Replace line ``number`` (of the file as loaded) by ``new`` (its ``\r`` kept), or remove
        it with its line end when ``new`` is ``None``. Raises ``_NotWritable``."""
        self._check_writable(relpath)
        lines = self._line_list(relpath)
        old = lines[number - 1]
        lines[number - 1] = None if new is None else new + ("\r" if old is not None and old.endswith("\r") else "")

    def linked(self, index_rel: str, index_dir: str) -> set[str | None]:
        """The relpaths the index ``index_rel`` links: its entries' (of an index over the cap, as
        ``linked_relpaths`` finds them for ``adding``) and the lines gathered for it."""
        if index_rel not in self._linked:
            self._linked[index_rel] = linked_relpaths(self.get(index_rel) or "", self.adding, index_dir)
        return self._linked[index_rel]

    def add_entry(self, index_rel: str, index_dir: str, relpath: str, mem_type: str | None, line: str) -> None:
        """Gather ``line`` (linking ``relpath``) for the index ``index_rel``, under the heading
        of ``mem_type`` when it has one. Raises ``_NotWritable``."""
        self._check_writable(index_rel)
        self.linked(index_rel, index_dir).add(relpath)
        self._appends.setdefault(index_rel, []).append((mem_type, line))

    def added_lines(self) -> dict[str, list[str]]:
        """Index relpath → the lines gathered to add to it."""
        return {rel: [line for _, line in items] for rel, items in self._appends.items()}

    def changes(self) -> list[FileChange]:
        for rel in list(self._lines):
            self.get(rel)
        for rel, items in self._appends.items():
            self.text[rel] = add_entries(self.get(rel) or "", items)  # under their types' headings
        self._appends.clear()
        out: list[FileChange] = []
        for rel, text in self.text.items():
            after = None if text is None else text.encode("utf-8", errors="surrogateescape")
            if after != self.before[rel]:
                # a fix changes a memory's form, not its age: keep its mtime (the base of its
                # relative dates, its age caveat, its recall order); an index's mtime means nothing
                keep = None if rel.endswith("MEMORY.md") else _mtime(self.memory_dir / rel)
                out.append(FileChange(rel, self.before[rel], after, keep))
        return out


def _stale(f: Finding) -> FixError:
    where = f"{f.path}:{f.line}" if f.line else f"{f.path}"
    return FixError(f"{where} changed since the doctor ran ({f.code}); run it again")


# ----- one function per fix id: (files, finding) -> note ----------------------------------------


def _lift_type(files: _Files, f: Finding) -> str:
    assert f.path is not None
    text = files.need(f.path)
    declared = str(f.data.get("declared", ""))
    fm = parse_frontmatter(text)
    if not fm.present or fm.data.get("type") is not None or declared_type_of(fm.data) != declared or declared.lower() not in MEMORY_TYPES:
        raise _stale(f)
    files.set(f.path, set_top_level_key(text, "type", declared.lower(), drop_nested=("metadata", "type")).text)
    return f"{f.path}: `metadata.type: {declared}` → top-level `type: {declared.lower()}`"


def _lower_case_type(files: _Files, f: Finding) -> str:
    assert f.path is not None
    text = files.need(f.path)
    declared = str(f.data.get("declared", ""))
    fm = parse_frontmatter(text)
    if not fm.present or fm.data.get("type") != declared or declared.lower() not in MEMORY_TYPES:
        raise _stale(f)
    files.set(f.path, set_top_level_key(text, "type", declared.lower()).text)
    return f"{f.path}: `type: {declared}` → `type: {declared.lower()}`"


def _remove_leading(files: _Files, f: Finding) -> str:
    assert f.path is not None
    text = files.need(f.path)
    m = _LEADING_TRAP.match(text)
    if not m:
        raise _stale(f)
    files.set(f.path, text[m.end() :])
    what = "the BOM" if "\ufeff" in m.group(0) else "the blank lines"
    return f"{f.path}: removed {what} in front of `---` (the agent now sees the frontmatter)"


def _entries_on(files: _Files, index_rel: str, number: int) -> list[IndexEntry]:
    """The entries of line ``number`` of the index ``index_rel`` as the fixes left it (entries
    are found line by line: the line is parsed alone)."""
    raw = files.raw_line(index_rel, number)
    if raw is None:
        return []
    index_dir = index_rel.rsplit("/", 1)[0] if "/" in index_rel else ""
    return [replace(e, line=number) for e in parse_entries(raw, index_dir)]


def _drop_index_line(files: _Files, f: Finding) -> str:
    assert f.path is not None and f.line is not None
    entries = _entries_on(files, f.path, f.line)
    target = f.data.get("target")
    relpath = f.data.get("relpath")
    if not entries or any(e.target != target for e in entries) or relpath is None or (files.memory_dir / str(relpath)).exists():
        raise _stale(f)
    files.replace_line(f.path, f.line, None)
    return f"{f.path}: removed line {f.line} (link to missing {target})"


def _entry_from_heading(files: _Files, f: Finding) -> str:
    assert f.path is not None and f.line is not None
    raw = files.raw_line(f.path, f.line)
    line = None if raw is None else raw.removesuffix("\r")
    entries = _entries_on(files, f.path, f.line)
    if line is None or len(entries) != 1 or entries[0].target != f.data.get("target") or not HEADING_ENTRY.match(line):
        raise _stale(f)
    files.replace_line(f.path, f.line, HEADING_ENTRY.sub("- ", line, count=1))
    return f"{f.path}:{f.line}: heading → `- ` entry line"


def _add_index_entry(files: _Files, f: Finding) -> str:
    assert f.path is not None
    memory_text = files.need(f.path)
    index_dir = TEAM_DIR if f.path.startswith(f"{TEAM_DIR}/") else ""
    index_rel = f"{index_dir}/MEMORY.md" if index_dir else "MEMORY.md"
    if f.path in files.linked(index_rel, index_dir):
        raise _stale(f)
    data = parse_frontmatter(memory_text).data
    name = data.get("name")
    description = data.get("description")
    title = str(name) if isinstance(name, (str, int, float)) and str(name).strip() else Path(f.path).stem
    hook = str(description) if isinstance(description, (str, int, float)) else None
    line = entry_line(title, f.path, hook, index_dir)
    files.add_entry(index_rel, index_dir, f.path, memory_type_of(memory_text), line)
    return f"{index_rel}: added `{line}`"


_FIXERS: dict[str, Callable[[_Files, Finding], str]] = {
    "lift-type": _lift_type,
    "lower-case-type": _lower_case_type,
    "remove-bom": _remove_leading,
    "remove-leading-blank": _remove_leading,
    "drop-index-line": _drop_index_line,
    "entry-from-heading": _entry_from_heading,
    "add-index-entry": _add_index_entry,
}
assert set(_FIXERS) == set(FIXES)

# In-place edits first, bottom-up within a file; then the appends (new index entries).
_APPEND_FIXES = frozenset({"add-index-entry"})


def _order(f: Finding) -> tuple[int, str, int, int]:
    column = f.data.get("column")
    return (1 if f.fix in _APPEND_FIXES else 0, f.path or "", -(f.line or 0), -(column if isinstance(column, int) else 0))


def combined_fix_plan(memory_dir: Path, findings: Sequence[Finding], *, title: str | None = None, confirmed_links: Mapping[str, str] | None = None) -> Plan:
    """One plan fixing every finding of ``findings`` (each must have a ``fix``).

    Raises ``FixError`` when a finding has no fix, when a file no longer matches its finding,
    or when nothing would change. A finding whose file is a link leading outside the memory
    dir is left out, with why, in the plan's ``skipped`` (``FixError`` when that leaves nothing),
    unless ``confirmed_links`` (``memtui.core.writes.links.confirmed_links``) holds that link; so
    is a finding that no longer matches its file, when there are others. The plan's ``index_overflow`` lists index entries the change
    would push past the agent's cap (ask before applying).
    """
    if not findings:
        raise FixError("no findings to fix")
    files = _Files(memory_dir, confirmed_links, frozenset(f.path for f in findings if f.fix == "add-index-entry" and f.path is not None))
    notes: list[str] = []
    skipped: dict[str, None] = {}
    for f in sorted(findings, key=_order):
        if f.fix is None or f.fix not in _FIXERS:
            raise FixError(f"{f.code} on {f.path} has no safe fix")
        try:
            notes.append(_FIXERS[f.fix](files, f))
        except _NotWritable as exc:
            skipped[str(exc)] = None
        except FixError as exc:  # this finding is stale (its file gone or changed): the others still apply
            if len(findings) == 1:
                raise
            skipped[str(exc)] = None
    added = files.added_lines()
    changes = files.changes()
    if not changes:
        raise FixError("; ".join(f"not fixed: {why}" for why in skipped) if skipped else "the fixes change nothing")
    overflow: list[IndexEntry] = []
    for change in changes:
        # only added lines push entries past the cap (a removed line or a heading made an entry does not)
        if change.relpath in added and change.after is not None:
            index_dir = change.relpath.rsplit("/", 1)[0] if "/" in change.relpath else ""
            overflow.extend(pushed_past_cap(change.before, change.after, added[change.relpath], index_dir))
    if title is None:
        fixes = sorted({f.fix for f in findings if f.fix})
        title = f"Doctor fix: {', '.join(fixes)} ({len(findings)} finding{'s' if len(findings) != 1 else ''})"
    return Plan(title, tuple(changes), tuple(overflow), tuple(notes), action="fix", skipped=tuple(skipped))


def fix_plan(memory_dir: Path, finding: Finding, *, confirmed_links: Mapping[str, str] | None = None) -> Plan:
    """The plan fixing one finding (see ``combined_fix_plan``). Raises ``FixError``."""
    where = f"{finding.path}:{finding.line}" if finding.line else str(finding.path)
    return combined_fix_plan(memory_dir, [finding], title=f"Doctor fix: {finding.fix} — {where}", confirmed_links=confirmed_links)
