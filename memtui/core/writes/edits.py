"""Every change memtui makes to memory files goes through here (docs/behaviour.md §4.4, §10).

An edit is first a ``Plan``: per file, the bytes before (as memtui loaded them) and after,
plus the index entries it would push past the agent's cap. ``apply_plan`` then

1. checks every file still has the bytes the plan was made from (else ``ConflictError``:
   nothing is written — someone, maybe the agent, changed it meanwhile);
2. records its intent and the before-images in the journal (memtui's state dir) — durable
   before anything moves;
3. swaps each file in atomically, deletes last, checking the version it displaced; if anything
   fails (or another process wrote a file meanwhile), restores what was done. A crash at any
   point is settled at the next start (``memtui.core.writes.transaction.recover``).

``undo`` applies the inverse of the last applied entry the same way. A deleted memory's
before-image is its copy in the trash; ``restore_plan`` brings it back with its index lines.
"""

from __future__ import annotations

import difflib
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from memtui.core.memory.index import INDEX_NAME, IndexEntry
from memtui.core.writes.index_edit import (
    add_entry,
    entry_line,
    memory_type_of,
    newly_dropped,
    remove_entries,
    restore_entry,
    retarget_entries,
)
from memtui.core.writes.journal import (
    Journal,
    JournalChange,
    JournalEntry,
    read_or_none,
    sha256_hex,
)
from memtui.core.memory.frontmatter import parse_frontmatter
from memtui.core.memory.memories import MEMORY_TYPES, SEED_FORMAT, TEAM_DIR, Memory, MemoryType, lost_fields, parse_memory_bytes, type_value
from memtui.core.places.behaviour import MemoryFormat
from memtui.core.writes.rewrite import set_nested_key, set_top_level_key
from memtui.core.writes.contained import ContainmentError, check_target
from memtui.core.writes.links import confirmed_links
from memtui.core.writes.transaction import OutsideWriteError, WriteStep, missing_dirs, rollback, rollback_note, write_step

ChangeKind = Literal["create", "modify", "delete"]

# Body templates for a new memory, one per type (docs/behaviour.md §4.1 "body shape").
BODY_TEMPLATES: dict[MemoryType, str] = {
    "user": "Who the user is, their role and preferences.\n",
    "feedback": "The rule, in one or two sentences.\n\n**Why:** what happened that made it a rule.\n\n**How to apply:** when and how to follow it.\n",
    "project": "The fact or decision (dates as YYYY-MM-DD).\n\n**Why:** the reason behind it.\n\n**How to apply:** what it changes in the work.\n",
    "reference": "Where it is (URL, board, project key) and what to look for there.\n",
}


# Every line of the templates: left unchanged in a new memory, it is a placeholder the agent
# would read as if it were what to remember.
TEMPLATE_LINES = frozenset(line.strip() for template in BODY_TEMPLATES.values() for line in template.splitlines() if line.strip())


class EditError(ValueError):
    """An edit that cannot be made as asked (bad name, target exists, nothing to change)."""


class ConflictError(RuntimeError):
    """A file changed on disk since memtui loaded it; nothing was written.

    ``relpath``: the file; ``expected_sha`` / ``actual_sha``: hashes (``None`` = absent).
    """

    def __init__(self, relpath: str, expected_sha: str | None, actual_sha: str | None, *, since: str = "it was loaded") -> None:
        self.relpath = relpath
        self.expected_sha = expected_sha
        self.actual_sha = actual_sha
        state = "was deleted" if actual_sha is None else "was created" if expected_sha is None else "changed"
        super().__init__(f"{relpath} {state} on disk since {since}; nothing was written")


class ApplyError(OSError):
    """A write failed midway; every file was restored to its state before the plan (or the
    message names those that could not be). ``relpath``: the file whose write failed, when it
    was a file's write (``None``: the journal, or an interrupt)."""

    relpath: str | None = None

    def __str__(self) -> str:
        return self.strerror or super().__str__()


@dataclass(frozen=True, slots=True)
class FileChange:
    """One file of a plan. ``before`` / ``after``: bytes, ``None`` = absent; ``after_mtime``:
    epoch seconds to give the written file (``None``: now)."""

    relpath: str
    before: bytes | None
    after: bytes | None
    after_mtime: float | None = None  # set the file's mtime after writing (undo restores mtimes)

    @property
    def kind(self) -> ChangeKind:
        """``create``, ``modify`` or ``delete``."""
        if self.before is None:
            return "create"
        return "delete" if self.after is None else "modify"

    def diff(self, context: int = 3) -> str:
        """A unified diff of the change (bytes decoded as UTF-8 with replacement)."""
        a = (self.before or b"").decode("utf-8", errors="replace").splitlines(keepends=True)
        b = (self.after or b"").decode("utf-8", errors="replace").splitlines(keepends=True)
        name_a = "/dev/null" if self.before is None else f"a/{self.relpath}"
        name_b = "/dev/null" if self.after is None else f"b/{self.relpath}"
        return "".join(difflib.unified_diff(a, b, name_a, name_b, n=context))


@dataclass(frozen=True, slots=True)
class Plan:
    """A change set to preview, then apply. ``index_overflow``: entries the change would push
    past the index cap (ask before applying); ``losses``: what the agent would no longer see
    in the file (a name, a description, a type: ask before applying); ``notes``: other things
    the change does; ``skipped``: what was asked for but is left out of the change, with why
    (a memory that is a link leading outside the memory dir)."""

    title: str
    changes: tuple[FileChange, ...]
    index_overflow: tuple[IndexEntry, ...] = ()
    notes: tuple[str, ...] = field(default=())
    action: str = "edit"  # edit | retype | rename | create | delete | restore | undo | fix | dream
    undoes: str | None = None  # the journal entry an undo reverts
    restores: str | None = None  # the delete entry a restore brings back
    losses: tuple[str, ...] = ()
    skipped: tuple[str, ...] = ()

    def diff(self) -> str:
        """All file diffs, concatenated."""
        return "".join(c.diff() for c in self.changes)


# ----- helpers --------------------------------------------------------------------------------


def _index_rel(relpath: str) -> str:
    """The index dir (relative to the memory dir) that covers ``relpath``."""
    return TEAM_DIR if relpath.startswith(f"{TEAM_DIR}/") else ""


def _index_path_rel(index_dir_rel: str) -> str:
    return f"{index_dir_rel}/{INDEX_NAME}" if index_dir_rel else INDEX_NAME


def _current(memory_dir: Path, memory: Memory) -> bytes:
    """The bytes on disk, checked against what memtui loaded (``ConflictError`` if they differ).
    A name leading outside through a linked folder is refused (``EditError``); a memory that is
    itself a link is written at its target by ``apply_plan``, which refuses a target outside
    the memory dir unless the user confirmed that link (``memtui.core.writes.links``)."""
    if not os.path.islink(memory.path):  # a memory linked out waits for apply_plan, which knows the confirmed links
        try:
            check_target(memory_dir, memory.relpath)
        except ContainmentError as exc:
            raise EditError(f"{memory.relpath}: {exc.reason}") from exc
    if memory.sha256 == "":
        if any(d.code == "too-large" for d in memory.diagnostics):
            raise EditError(f"{memory.relpath} is over memtui's read cap: memtui read only its start, so it will not rewrite it")
        raise EditError(f"{memory.relpath} could not be read, so memtui will not rewrite it")
    data = read_or_none(memory.path)
    if sha256_hex(data) != memory.sha256:
        raise ConflictError(memory.relpath, memory.sha256, sha256_hex(data))
    assert data is not None
    return data


def _encode_like(original: bytes, text: str) -> bytes:
    """``text`` as bytes in the original's line-end style: an editor that hands back ``\n``
    must not turn a CRLF file into an LF one."""
    crlf = b"\r\n" in original and original.count(b"\r\n") == original.count(b"\n")
    if crlf:
        text = text.replace("\r\n", "\n").replace("\n", "\r\n")
    return text.encode("utf-8")


def _index_change(memory_dir: Path, index_dir_rel: str, edit: str, *args: str) -> tuple[FileChange | None, list[IndexEntry], list[str]]:
    rel = _index_path_rel(index_dir_rel)
    before = read_or_none(memory_dir / rel)
    text = (before or b"").decode("utf-8", errors="surrogateescape")
    notes: list[str] = []
    if edit == "add":
        after_text = add_entry(text, args[0], args[1] if len(args) > 1 and args[1] else None)  # under its type's heading
    elif edit == "remove":
        after_text, n = remove_entries(text, args[0], index_dir_rel)
        if n == 0:
            return None, [], []
        notes.append(f"removed {n} line(s) from {rel}")
    else:
        after_text, n = retarget_entries(text, args[0], args[1], index_dir_rel)
        if n == 0:
            return None, [], []
        notes.append(f"pointed {n} link(s) in {rel} at the new name")
    after = after_text.encode("utf-8", errors="surrogateescape")
    if after == before:
        return None, [], []
    overflow = newly_dropped(text if before is not None else None, after_text, index_dir_rel)
    return FileChange(rel, before, after), overflow, notes


def validate_relpath(memory_dir: Path, relpath: str) -> str:
    """Check a memory file name chosen by the user: a relative POSIX path ending in ``.md``,
    not ``MEMORY.md``, staying inside the memory dir. Returns it normalised; raises ``EditError``."""
    rel = relpath.strip().replace("\\", "/")
    if not rel or "\0" in rel:
        raise EditError("a file name is required")
    norm = os.path.normpath(rel).replace(os.sep, "/")
    if norm.startswith("/") or norm == ".." or norm.startswith("../"):
        raise EditError(f"{relpath!r} leaves the memory dir")
    if not norm.endswith(".md"):
        raise EditError(f"{relpath!r} must end in .md (the agent reads only .md files)")
    if Path(norm).name == INDEX_NAME:
        raise EditError(f"{INDEX_NAME} is the index, not a memory")
    root = memory_dir.resolve()
    target = (root / norm).resolve()
    if root != target and root not in target.parents:
        raise EditError(f"{relpath!r} resolves outside the memory dir")
    return norm


def suggest_filename(mem_type: MemoryType, name: str) -> str:
    """``<type>_<words of name>.md`` (letters of any script kept, other runs → ``_``)."""
    words = re.sub(r"[^\w]+", "_", name.casefold()).strip("_")[:60] or "memory"
    return f"{mem_type}_{words}.md"


# ----- plan builders --------------------------------------------------------------------------


def plan_save(memory_dir: Path, memory: Memory, new_text: str, fmt: MemoryFormat = SEED_FORMAT) -> Plan:
    """Replace a memory's whole text (a hand edit), in the file's line-end style. A file with
    bytes that are not UTF-8 is refused (a text editor would replace them). ``Plan.losses``:
    the name, description or type the agent of memory format ``fmt`` would no longer see
    after the edit (``lost_fields``). Raises ``ConflictError``, ``EditError``."""
    before = _current(memory_dir, memory)
    try:
        before.decode("utf-8")
    except UnicodeDecodeError:
        raise EditError(f"{memory.relpath} has bytes that are not UTF-8; an editor would replace them — fix the encoding first") from None
    after = _encode_like(before, new_text)
    if after == before:
        raise EditError("no change to save")
    path = memory_dir / memory.relpath
    losses = lost_fields(
        parse_memory_bytes(path, memory.relpath, before, memory.mtime, fmt),
        parse_memory_bytes(path, memory.relpath, after, memory.mtime, fmt),
    )
    return Plan(f"Edit {memory.relpath}", (FileChange(memory.relpath, before, after),), action="edit", losses=losses)


def plan_retype(memory_dir: Path, memory: Memory, new_type: MemoryType, fmt: MemoryFormat = SEED_FORMAT) -> Plan:
    """Set the type where the agent of memory format ``fmt`` reads it, in the form the file
    already uses: the key the agent takes the type from now, else the form the agent itself
    writes (``fmt.written_type_key``). With the seed design that is the top-level ``type``
    (a ``metadata.type`` it cannot read is lifted); only frontmatter lines change."""
    if new_type not in MEMORY_TYPES:
        raise EditError(f"{new_type!r} is not one of {', '.join(MEMORY_TYPES)}")
    before = _current(memory_dir, memory)
    text = before.decode("utf-8", errors="surrogateescape")
    _value, source = type_value(parse_frontmatter(text, strip_bom=fmt.strip_bom).data, fmt)
    key = source or fmt.written_type_key
    if len(key) == 2:
        rewrite = set_nested_key(text, key[0], key[1], new_type)
    else:
        nested_read = ("metadata", "type") in fmt.type_keys
        rewrite = set_top_level_key(text, key[0], new_type, drop_nested=None if nested_read else ("metadata", "type"))
    after = rewrite.text.encode("utf-8", errors="surrogateescape")
    if after == before:
        raise EditError(f"{memory.relpath} is already of type {new_type}")
    old = memory.type or (memory.declared_type and f"{memory.declared_type} (not recognised)") or "untyped"
    # the content's age is unchanged: keep the mtime (the agent's age caveats and recall order)
    change = FileChange(memory.relpath, before, after, memory.mtime)
    return Plan(f"Re-type {memory.relpath}: {old} → {new_type}", (change,), notes=rewrite.notes, action="retype")


def plan_rename(memory_dir: Path, memory: Memory, new_relpath: str) -> Plan:
    """Rename a memory file; its index links follow. Raises ``EditError``, ``ConflictError``."""
    new_rel = validate_relpath(memory_dir, new_relpath)
    if new_rel == memory.relpath:
        raise EditError("the new name is the same as the old one")
    if os.path.lexists(memory_dir / new_rel):
        raise EditError(f"{new_rel} already exists")
    data = _current(memory_dir, memory)
    changes = [FileChange(new_rel, None, data, memory.mtime), FileChange(memory.relpath, data, None)]
    overflow: list[IndexEntry] = []
    notes: list[str] = []
    old_index, new_index = _index_rel(memory.relpath), _index_rel(new_rel)
    if old_index == new_index:
        change, overflow, notes = _index_change(memory_dir, old_index, "retarget", memory.relpath, new_rel)
        if change:
            changes.insert(0, change)
    else:  # moving between the main and the team memory: the entry moves between indexes
        removed, _, notes_a = _index_change(memory_dir, old_index, "remove", memory.relpath)
        line = entry_line(memory.name or Path(new_rel).stem, new_rel, memory.description, new_index)
        added, overflow, notes_b = _index_change(memory_dir, new_index, "add", line, memory.type or "")
        changes[:0] = [c for c in (removed, added) if c]
        notes = notes_a + notes_b
    return Plan(f"Rename {memory.relpath} → {new_rel}", tuple(changes), tuple(overflow), tuple(notes), action="rename")


def plan_create(
    memory_dir: Path,
    mem_type: MemoryType,
    name: str,
    description: str,
    *,
    relpath: str | None = None,
    body: str | None = None,
    extra: Mapping[str, str] | None = None,
) -> Plan:
    """A new memory with frontmatter and the type's body template (or ``body``), and its
    index entry.

    ``extra``: more frontmatter keys written after ``type``, in order (e.g. extraction's
    ``originSessionId``); each key must be a plain YAML key and not one of ``name``,
    ``description``, ``type`` (``EditError`` otherwise)."""
    text = new_memory_text(mem_type, name, description, body=body, extra=extra)
    name, description = _frontmatter_value(name), _frontmatter_value(description)
    return _plan_new(memory_dir, relpath or suggest_filename(mem_type, name), text, mem_type, name, description)


def new_memory_text(mem_type: MemoryType, name: str, description: str, *, body: str | None = None, extra: Mapping[str, str] | None = None) -> str:
    """The text of a new memory: frontmatter (``name``, ``description``, ``type``, then
    ``extra``) and ``body`` (default: the type's template, ``BODY_TEMPLATES``). Raises
    ``EditError`` for an unknown type, a blank name or description, or a bad extra key."""
    if mem_type not in MEMORY_TYPES:
        raise EditError(f"{mem_type!r} is not one of {', '.join(MEMORY_TYPES)}")
    name, description = _frontmatter_value(name), _frontmatter_value(description)
    if not name:
        raise EditError("a name is required")
    if not description:
        raise EditError("a one-line description is required: it is what recall matches on")
    more = ""
    for key, value in (extra or {}).items():
        if key in ("name", "description", "type") or not re.fullmatch(r"[A-Za-z_][\w-]*", key):
            raise EditError(f"{key!r} cannot be an extra frontmatter key")
        more += f"{key}: {_yaml_scalar(_frontmatter_value(value))}\n"
    return (
        f"---\nname: {_yaml_scalar(name)}\ndescription: {_yaml_scalar(description)}\ntype: {mem_type}\n{more}---\n\n"
        f"{body if body is not None else BODY_TEMPLATES[mem_type]}"
    )


def plan_create_text(memory_dir: Path, relpath: str, text: str, fmt: MemoryFormat = SEED_FORMAT) -> Plan:
    """A new memory written as ``text`` (a draft from ``new_memory_text``, edited by hand) at
    ``relpath``, with its index entry made from the name and description the agent of memory
    format ``fmt`` reads in it. Raises ``EditError`` when the agent would see no name,
    description or type, or when the body is empty or still a type's template (nothing to
    remember yet: such a memory would be recalled and say nothing)."""
    draft = parse_memory_bytes(memory_dir / relpath, relpath, text.encode("utf-8", errors="surrogateescape"), 0, fmt)
    missing = [what for what, value in (("name", draft.name), ("description", draft.description), ("type", draft.type)) if not value]
    if missing or draft.type is None or draft.name is None or draft.description is None:
        raise EditError(f"the agent would see no {' and no '.join(missing)} in this text: keep the frontmatter between the two --- lines")
    body = draft.body.strip()
    if not body:
        raise EditError("the body is empty: write what the agent should remember")
    if any(body == template.strip() for template in BODY_TEMPLATES.values()):
        raise EditError("the body is still the template: replace it with what the agent should remember")
    left = [line.strip() for line in body.splitlines() if line.strip() in TEMPLATE_LINES]
    if left:
        quoted = "; ".join(f"“{line}”" for line in dict.fromkeys(left))
        one = len(dict.fromkeys(left)) == 1
        raise EditError(f"the body still has the template's placeholder {'line' if one else 'lines'} {quoted}: write {'it' if one else 'them'} or delete {'it' if one else 'them'}")
    return _plan_new(memory_dir, relpath, text, draft.type, _frontmatter_value(draft.name), _frontmatter_value(draft.description))


def _plan_new(memory_dir: Path, relpath: str, text: str, mem_type: MemoryType, name: str, description: str) -> Plan:
    """Create ``relpath`` holding ``text``, and add its index entry."""
    rel = validate_relpath(memory_dir, relpath)
    if os.path.lexists(memory_dir / rel):
        raise EditError(f"{rel} already exists")
    changes = [FileChange(rel, None, text.encode("utf-8", errors="surrogateescape"))]
    index_dir = _index_rel(rel)
    change, overflow, notes = _index_change(memory_dir, index_dir, "add", entry_line(name, rel, description, index_dir), mem_type)
    if change:
        changes.append(change)
    return Plan(f"Create {rel}", tuple(changes), tuple(overflow), tuple(notes), action="create")


def _frontmatter_value(value: str) -> str:
    """One line the agent's frontmatter reader reads back as written: whitespace runs and
    control characters become one space, and ``---`` (which ends the reference's frontmatter
    match even mid-line) becomes an em dash."""
    flat = " ".join("".join(ch if ch.isprintable() else " " for ch in value).split())
    while "---" in flat:
        flat = flat.replace("---", "—")
    return flat


def _yaml_scalar(value: str) -> str:
    """``value`` as a YAML plain scalar when the reference's parser (YAML 1.2) reads it back as
    that same string, else double-quoted (``1e3``, ``true``, ``a: b`` are quoted)."""
    import yaml

    from memtui.core.memory import yaml12

    try:
        if yaml12.load(f"k: {value}") == {"k": value} and not value.startswith(("'", '"')):
            return value
    except (yaml.YAMLError, ValueError, TypeError, RecursionError):
        pass
    escaped = value.replace("\\", "\\\\").replace('"', '\\"')
    return f'"{escaped}"'


def plan_delete(memory_dir: Path, memory: Memory) -> Plan:
    """Move a memory to memtui's trash (its journal before-image) and drop its index lines."""
    data = _current(memory_dir, memory)
    changes = [FileChange(memory.relpath, data, None)]
    change, _, notes = _index_change(memory_dir, _index_rel(memory.relpath), "remove", memory.relpath)
    if change:
        changes.insert(0, change)
    return Plan(f"Delete {memory.relpath}", tuple(changes), (), tuple(notes), action="delete")


# ----- apply / undo / trash -------------------------------------------------------------------


def _check(memory_dir: Path, changes: tuple[FileChange, ...]) -> None:
    for change in changes:
        actual = read_or_none(memory_dir / change.relpath)
        if actual != change.before:
            raise ConflictError(change.relpath, sha256_hex(change.before), sha256_hex(actual))


def _mtimes(path: Path) -> tuple[float | None, int | None]:
    """The mtime of ``path`` in epoch s and ns (``None``: absent)."""
    try:
        st = path.stat()
    except OSError:
        return None, None
    return st.st_mtime, st.st_mtime_ns


def apply_plan(memory_dir: Path, plan: Plan, journal: Journal, now: datetime, *, meta: Mapping[str, Any] | None = None) -> JournalEntry:
    """Apply ``plan`` as one transaction and record it. Returns the journal entry.

    Under the memory dir's write lock (other memtui processes wait), every file is checked
    against the plan's ``before`` bytes, the intent and the before-images are journaled
    durably, then the files are written, deletes last, each swapped in atomically with the
    version it displaced checked (see :mod:`memtui.core.writes.transaction` for the order of
    steps and what a crash at any point leaves). ``meta``: JSON-able facts stored with the
    entry (e.g. the inbox proposal it accepts) for consumers that settle their own state from
    the journal.

    Raises ``ConflictError`` (a file is not as planned, or another process wrote it while
    memtui was writing: nothing written, the other version kept in place), ``ApplyError`` (a
    file's name leads outside the memory dir through a link — ``memtui.core.writes.contained``
    — so nothing was written; or a write failed or the run was interrupted: every file was restored — or the message names
    those that could not be, which the next memtui start retries), ``OSError`` (the journal
    could not be written; nothing was touched).
    """
    if not plan.changes:
        raise EditError("nothing to apply")
    ordered = sorted(plan.changes, key=lambda c: c.kind == "delete")  # deletes last
    with journal.write_lock():
        _check(memory_dir, plan.changes)
        confirmed = confirmed_links(journal.base)
        ordered = _contained(memory_dir, plan.title, ordered, confirmed)
        records = [
            JournalChange(c.relpath, c.kind, sha256_hex(c.before), sha256_hex(c.after), *_mtimes(memory_dir / c.relpath)) for c in ordered
        ]
        before = {c.relpath: c.before for c in ordered if c.before is not None}
        dirs = missing_dirs(memory_dir, [c.relpath for c in ordered if c.after is not None])
        try:
            entry = journal.begin(
                plan.title, now, records, before, action=plan.action, undoes=plan.undoes, restores=plan.restores, meta=dict(meta or {}), dirs=dirs
            )
        except BaseException:
            _discard_intent(journal)
            raise
        current: str | None = None
        try:
            for index, change in enumerate(ordered):
                current = change.relpath
                write_step(memory_dir, journal, entry, index, WriteStep(change.relpath, change.before, change.after, change.after_mtime), confirmed)
        except BaseException as exc:  # OSError, an outside write, and Ctrl-C / kill mid-way too
            result = rollback(memory_dir, journal, entry)
            entry.note = rollback_note(result)
            try:
                if result.complete:
                    entry.status = "failed"
                    journal.settle(entry)
                else:  # stays pending with its marker: the next start tries again
                    journal.save(entry)
            except OSError:
                pass
            if isinstance(exc, OutsideWriteError):
                raise ConflictError(exc.relpath, exc.expected_sha, exc.actual_sha, since="memtui checked it (that version is kept)") from exc
            if not isinstance(exc, OSError):
                raise
            cause = exc.strerror or str(exc)
            if result.failed:
                where = journal.entry_dir(entry.id) / "before"
                outcome = f"could not restore {', '.join(result.failed)} — their previous bytes are in {where}"
            else:
                outcome = "every file was restored"
            error = ApplyError(exc.errno or 0, f"{plan.title} failed ({cause}); {outcome}")
            error.relpath = current
            raise error from exc
        entry.status = "applied"
        journal.settle(entry)
        journal.prune()
    return entry


def _contained(memory_dir: Path, title: str, ordered: list[FileChange], confirmed: Mapping[str, str]) -> list[FileChange]:
    """``ordered`` with each change checked to land inside the memory dir
    (``memtui.core.writes.contained``), and a change that lands on the same file as an earlier
    one with the same bytes (a memory and a link to it) dropped. Raises ``ApplyError`` (nothing
    written) when a name leads outside, or two changes land on one file differently."""
    seen: dict[str, FileChange] = {}
    out: list[FileChange] = []
    for change in ordered:
        try:
            lands = check_target(memory_dir, change.relpath, follow_final=change.after is not None, confirmed=confirmed)
        except ContainmentError as exc:
            error = ApplyError(exc.errno, f"{title} refused: {exc.strerror}")
            error.relpath = change.relpath
            raise error from exc
        first = seen.get(lands)
        if first is None:
            seen[lands] = change
            out.append(change)
        elif (first.before, first.after) != (change.before, change.after):
            error = ApplyError(0, f"{title} refused: {change.relpath} and {first.relpath} are one file (a link), changed in two ways; nothing was written")
            error.relpath = change.relpath
            raise error
    return out


def _discard_intent(journal: Journal) -> None:
    """After ``Journal.begin`` failed: settle what it left (no memory file was touched)."""
    for entry_id in journal.open_ids():
        if not (journal.entry_dir(entry_id) / "entry.json").exists():
            import shutil

            shutil.rmtree(journal.entry_dir(entry_id), ignore_errors=True)
            try:
                os.unlink(journal.open_dir / entry_id)
            except OSError:
                pass


def undoable_entries(journal: Journal) -> list[JournalEntry]:
    """Applied changes not yet undone (undo entries themselves excluded), newest first."""
    entries = journal.entries()
    undone = {e.undoes for e in entries if e.status == "applied" and e.undoes}
    return [e for e in reversed(entries) if e.status == "applied" and e.undoes is None and e.id not in undone]


def undo_plan(memory_dir: Path, journal: Journal, entry_id: str | None = None) -> Plan:
    """The plan that reverts an applied change: ``entry_id``, or by default the newest applied
    change not yet undone (undo entries themselves are skipped, so repeated undos walk back
    through history). Raises ``EditError`` when there is none, ``ConflictError`` when a file
    changed since that change."""
    candidates = undoable_entries(journal)
    if entry_id is not None:
        candidates = [e for e in candidates if e.id == entry_id]
    if not candidates:
        raise EditError("nothing to undo" if entry_id is None else f"no applied change {entry_id} left to undo")
    entry = candidates[0]
    changes: list[FileChange] = []
    for jc in entry.changes:
        current = read_or_none(memory_dir / jc.relpath)
        if sha256_hex(current) != jc.after_sha:  # the agent (or a person) changed it since
            raise ConflictError(
                jc.relpath, jc.after_sha, sha256_hex(current), since=f"“{entry.title}” (undoing would overwrite that; `memtui undo --list` shows the others)"
            )
        before = journal.before_image(entry.id, jc.relpath)
        if sha256_hex(before) != jc.before_sha:  # a lost or altered copy must never mean "delete"
            raise EditError(f"the journal's copy of {jc.relpath} for “{entry.title}” is missing or damaged; not undoing")
        changes.append(FileChange(jc.relpath, current, before, jc.before_mtime))
    return Plan(f"Undo: {entry.title}", tuple(changes), action="undo", undoes=entry.id)


def undo(memory_dir: Path, journal: Journal, now: datetime, entry_id: str | None = None) -> JournalEntry:
    """Revert the last applied change (or ``entry_id``) as a new journal entry."""
    return apply_plan(memory_dir, undo_plan(memory_dir, journal, entry_id), journal, now)


@dataclass(frozen=True, slots=True)
class TrashItem:
    """A deleted memory that can be restored: the entry that deleted it and its relpath."""

    entry_id: str
    relpath: str
    deleted_at: str
    size: int


def trash(journal: Journal) -> list[TrashItem]:
    """Deleted memories, newest first: every file a delete, a dream or any other change removed
    (a rename moves, it does not delete) — minus those brought back by an undo or a restore
    that is itself still in effect."""
    entries = journal.entries()
    applied = [e for e in entries if e.status == "applied"]
    undone = {e.undoes for e in applied if e.undoes}
    back = undone | {e.restores for e in applied if e.restores and e.id not in undone}
    items: list[TrashItem] = []
    for entry in reversed(applied):
        if entry.id in back or entry.action in ("rename", "undo", "restore"):
            continue
        for jc in entry.changes:
            if jc.kind == "delete" and not jc.relpath.endswith(INDEX_NAME):
                data = journal.before_image(entry.id, jc.relpath)
                if data is not None:
                    items.append(TrashItem(entry.id, jc.relpath, entry.time, len(data)))
    return items


def restore_plan(memory_dir: Path, journal: Journal, item: TrashItem) -> Plan:
    """Bring a deleted memory back (as a new change, so it is undoable too) with the index
    lines the delete removed. Raises ``EditError`` when the name is taken again."""
    data = journal.before_image(item.entry_id, item.relpath)
    if data is None:
        raise EditError(f"{item.relpath} is no longer in the trash")
    if os.path.lexists(memory_dir / item.relpath):
        raise EditError(f"{item.relpath} exists again; rename it first")
    deleted = next((e for e in journal.entries() if e.id == item.entry_id), None)
    mtime = next((c.before_mtime for c in deleted.changes if c.relpath == item.relpath), None) if deleted else None
    changes = [FileChange(item.relpath, None, data, mtime)]
    index_rel = _index_path_rel(_index_rel(item.relpath))
    old_index = journal.before_image(item.entry_id, index_rel)
    overflow: list[IndexEntry] = []
    if old_index is not None:
        current = read_or_none(memory_dir / index_rel) or b""
        old_lines = old_index.decode("utf-8", errors="surrogateescape").splitlines(keepends=True)
        cur_text = current.decode("utf-8", errors="surrogateescape")
        _, removed_lines = _removed_lines(old_lines, item.relpath, _index_rel(item.relpath))
        text = cur_text
        mem_type = memory_type_of(data.decode("utf-8", errors="replace"))
        present = {ln.strip() for ln in cur_text.splitlines()}
        for line in removed_lines:
            if line.strip() not in present:
                # back between its old neighbours if they are still there, else under its type
                text = restore_entry(text, line.rstrip("\r\n"), "".join(old_lines), mem_type)
        after = text.encode("utf-8", errors="surrogateescape")
        if after != current:
            changes.append(FileChange(index_rel, read_or_none(memory_dir / index_rel), after))
            overflow = newly_dropped(cur_text, text, _index_rel(item.relpath))
    return Plan(f"Restore {item.relpath}", tuple(changes), tuple(overflow), action="restore", restores=item.entry_id)


def _removed_lines(old_lines: list[str], relpath: str, index_dir_rel: str) -> tuple[str, list[str]]:
    text = "".join(old_lines)
    kept, _ = remove_entries(text, relpath, index_dir_rel)
    kept_lines = kept.splitlines(keepends=True)
    # the kept lines are the old ones, in order, less the removed: one walk over both
    removed: list[str] = []
    k = 0
    for ln in old_lines:
        if k < len(kept_lines) and kept_lines[k] == ln:
            k += 1
        else:
            removed.append(ln)
    return kept, removed
