"""Doctor findings and their code table (docs/behaviour.md §4.3, the lint catalog).

Every finding has a stable kebab-case ``code`` listed in ``DOCTOR_CODES`` with its severity and
one line of meaning. The per-file codes the parser already computes (``DIAGNOSTIC_CODES`` in
``memtui.core.memory.memories``) are reused under the same names; the doctor adds the checks that need
the whole directory (duplicates, the index), a scanner (secrets) or heuristics (content that
must not be saved as memory).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memtui.core.base.diagnostics import Severity
from memtui.core.memory.memories import DIAGNOSTIC_CODES, FORMAT_CODES
from memtui.core.verify.check import VERIFY_CODES

# Codes the doctor adds to the parser's. code -> (severity, meaning).
_DOCTOR_ONLY: dict[str, tuple[Severity, str]] = {
    "md-extension-case": ("warning", "a name ending in `.MD`/`.Md`: the agent only reads names ending in lower-case `.md`"),
    "not-a-memory": ("info", "a file that is not `.md`: the agent never reads it as a memory"),
    "likely-secret": ("error", "a likely credential (key, token, private key): memory is read by a model and, in team/, shared"),
    "content-code": ("info", "a long fenced code block: code patterns belong in the repo, not in memory (docs/behaviour.md §4.1)"),
    "content-stack-trace": ("warning", "a stack trace: debugging output is ephemeral and must not be saved (docs/behaviour.md §4.1)"),
    "content-git-history": ("warning", "a list of commits: git history is in git, not memory (docs/behaviour.md §4.1)"),
    "content-debug-recipe": ("info", "a step-by-step debugging recipe: ephemeral task state, not memory (docs/behaviour.md §4.1)"),
    "content-architecture": ("info", "a file tree or file-by-file layout: derivable from the code, not memory (docs/behaviour.md §4.1)"),
    "in-instructions": ("warning", "already said in an instruction file (AGENT.md, rules): the memory repeats it (docs/behaviour.md §4.1)"),
    "duplicate": ("warning", "the same body as another memory of the directory"),
    "near-duplicate": ("info", "description and body nearly the same as another memory of the same type"),
    "index-missing": ("info", "no MEMORY.md: the agent loads no index, every memory is unindexed"),
    "index-unreadable": ("error", "MEMORY.md exists but cannot be read"),
    "index-frontmatter": ("warning", "MEMORY.md starts with a frontmatter block; the index has none (docs/behaviour.md §4.4) and the agent loads it as text"),
    "index-truncated": ("warning", "MEMORY.md is over 200 lines or 25,000 characters (UTF-16): the agent loads only part of it"),
    "index-past-cap": ("warning", "an index entry past the 200-line / 25,000-unit cap: the agent never sees it"),
    "index-dangling": ("warning", "an index link to a file that does not exist"),
    "index-heading-entry": ("info", "an index entry written as a heading (`### [..](..)`) instead of a `- ` list line"),
    "index-line-too-long": ("info", "an index line over ~150 characters: detail belongs in the memory, the index is loaded every session"),
    "index-link-outside": ("warning", "an index link that leaves the memory dir (`../docs/x.md`): not a memory, recall never reads it"),
    "frontmatter-second-block": ("warning", "a second `---` frontmatter block later in the file: the agent reads only the first, the rest is body text"),
    "possible-conflict": ("info", "this memory and a newer one may speak of the same thing with different values (a date, number, version, name or yes/no): worth a look, often two different things"),
    "index-superseded": ("warning", "the index line calls this memory superseded or obsolete, yet the agent still loads the line and recall still reads the memory (and may rank it first)"),
    "unread-memory-folder": ("warning", "a folder of memories in the project that the agent never reads: Claude Code reads its memory from its own memory dir, not from the repository"),
    "store-written-not-read": ("warning", "sessions wrote memories into a store no session reads (a session started in a subdirectory writes into its own folder's store): `memtui stores` names both and the merge"),
    "store-split": ("warning", "sessions of this repository read different memory stores (a worktree whose link is broken, a setting honoured only in a trusted workspace, a moved checkout): `memtui stores` says which"),
    "auto-memory-off": ("warning", "auto memory is switched off (a settings env block, the environment, autoMemoryEnabled): sessions get neither the memory instructions nor the index"),
    "memory-setting-ignored": ("warning", "an autoMemoryDirectory value Claude Code skips without a word (not absolute, too short, a root): it reads the default store"),
    "unused": ("info", "not recalled, read or written in the agent's last 20 sessions (its transcripts): a candidate for review, never a deletion"),
    **VERIFY_CODES,
}

DOCTOR_CODES: dict[str, tuple[Severity, str]] = {**DIAGNOSTIC_CODES, **FORMAT_CODES, **_DOCTOR_ONLY}
DOCTOR_CODES["relative-date"] = (
    "warning",
    "a relative date (tomorrow, next Monday, 3 weeks ago, 明天) in a memory's body or description: read months later it points at the wrong day; shown with the date it meant",
)

# fix id -> what it does. Every fix is a ``Plan`` (preview + undo); none deletes a memory.
FIXES: dict[str, str] = {
    "lift-type": "move `metadata.type` to a top-level `type` (lower-cased when it is a known type in the wrong case)",
    "lower-case-type": "write the type in lower case (`Feedback` → `feedback`)",
    "remove-bom": "remove the BOM (and blank lines) in front of `---`",
    "remove-leading-blank": "remove the blank lines in front of `---`",
    "drop-index-line": "remove the index line that links to the missing file",
    "add-index-entry": "append `- [name](file.md) — description` to the index",
    "entry-from-heading": "turn the heading-style index entry into a `- [..](..)` list line",
}

# The fixes ``--fix all`` (and the app's "apply all") applies: the finding is certain (the agent
# demonstrably misreads the file) and the edit keeps every word of it. The others are offered
# one code at a time: removing a dead index link drops its hook text, and a new index line grows
# the text the agent loads every session; a user decides those.
CERTAIN_FIXES: frozenset[str] = frozenset({"lift-type", "lower-case-type", "remove-bom", "remove-leading-blank", "entry-from-heading"})

# code -> the fix its findings can carry (a finding may still have none, e.g. a relative date
# that does not name one exact day).
FIX_OF_CODE: dict[str, str] = {
    "type-nested": "lift-type",
    "type-case": "lower-case-type",
    "frontmatter-after-bom": "remove-bom",
    "frontmatter-after-blank": "remove-leading-blank",
    "index-dangling": "drop-index-line",
    "not-indexed": "add-index-entry",
    "index-heading-entry": "entry-from-heading",
}


@dataclass(frozen=True, slots=True)
class Finding:
    """One doctor finding.

    ``path``: POSIX relpath to the memory dir (``MEMORY.md`` for index findings), ``None`` for
    the directory as a whole; ``line``: 1-based or ``None``; ``fix``: a ``FIXES`` id when a safe
    fix exists, else ``None``; ``data``: machine-readable detail (e.g. ``phrase``/``resolved``
    for relative dates, ``others`` for duplicates, ``target`` for index links).
    """

    code: str
    severity: Severity
    path: str | None
    line: int | None
    message: str
    fix: str | None = None
    data: Mapping[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """``{code, severity, path, line, message, fix, data}``."""
        return {
            "code": self.code,
            "severity": self.severity,
            "path": self.path,
            "line": self.line,
            "message": self.message,
            "fix": self.fix,
            "data": dict(self.data),
        }


def finding(code: str, path: str | None, line: int | None = None, message: str | None = None, *, fix: str | None = None, **data: Any) -> Finding:
    """A ``Finding`` with the severity of ``code`` from ``DOCTOR_CODES`` (its meaning as default message)."""
    severity, meaning = DOCTOR_CODES[code]
    return Finding(code, severity, path, line, message or meaning, fix, data)


_SEVERITY_ORDER = {"error": 0, "warning": 1, "info": 2}


@dataclass(frozen=True, slots=True)
class DoctorReport:
    """Every finding of one memory dir, sorted by path (dir-level first), line, code."""

    memory_dir: Path
    # a tuple, or a kept report's findings (``memtui.core.doctor.kept.KeptFindings``: decoded
    # when first read)
    findings: Sequence[Finding]
    memories: int = 0
    # the claims check (``memtui.core.verify.VerifyReport``) when a project was given, else None
    verification: Any = None
    notes: tuple[str, ...] = ()
    # ``findings_json(findings)`` when it is known (a report kept in the catalog database)
    rendered: bytes | None = field(default=None, repr=False, compare=False)
    # ``counts()`` when it is known without reading the findings (a kept report)
    counted: Mapping[str, int] | None = field(default=None, repr=False, compare=False)

    @property
    def has_errors(self) -> bool:
        """Whether any finding has severity ``error`` (the CLI then exits 1)."""
        return self.counts()["error"] > 0

    def counts(self) -> dict[str, int]:
        """Number of findings per severity (``error``, ``warning``, ``info``)."""
        if self.counted is not None:
            return dict(self.counted)
        out = {"error": 0, "warning": 0, "info": 0}
        for f in self.findings:
            out[f.severity] += 1
        return out

    def by_path(self) -> dict[str | None, list[Finding]]:
        """Findings grouped by file, in report order."""
        groups: dict[str | None, list[Finding]] = {}
        for f in self.findings:
            groups.setdefault(f.path, []).append(f)
        return groups

    def fixable(self, codes: set[str] | None = None) -> list[Finding]:
        """Findings with a fix, optionally only those whose ``code`` (or fix id) is in ``codes``."""
        return [f for f in self.findings if f.fix and (codes is None or f.code in codes or f.fix in codes)]

    def certain(self) -> list[Finding]:
        """Findings whose fix is one of ``CERTAIN_FIXES`` (what ``--fix all`` applies)."""
        return [f for f in self.findings if f.fix in CERTAIN_FIXES]

    def to_json(self, *, fragment: bool = False) -> dict[str, Any]:
        """``{memory_dir, memories, counts, findings: [...], notes, verified}`` (``verified``:
        the claims check's counts, or ``None``). ``fragment``: for an indented ``orjson.dumps``
        (``memtui.commands.common.emit_json``): ``findings`` is the ``orjson.Fragment`` of their
        text when it is known (only then: it holds nothing orjson refuses)."""
        findings: Any
        if fragment and self.rendered is not None:
            import orjson

            findings = orjson.Fragment(self.rendered)
        else:
            findings = [f.to_json() for f in self.findings]
        return {
            "memory_dir": str(self.memory_dir),
            "memories": self.memories,
            "counts": self.counts(),
            "findings": findings,
            "notes": list(self.notes),
            "verified": self.verification.counts() if self.verification is not None else None,
        }


@dataclass(frozen=True, slots=True)
class FileGroup:
    """The findings of one file as a person reads them: ``path`` (``None``: the memory dir as a
    whole), ``worst`` severity, and ``lines``: each distinct finding (severity, code, message)
    once, most severe first, then by line, with how many times it occurs (``(finding, times)``);
    ``at``: the lines of each repeated one, in ``lines``' order."""

    path: str | None
    worst: Severity
    lines: tuple[tuple[Finding, int], ...]
    at: tuple[tuple[int, ...], ...] = ()


def file_groups(findings: Iterable[Finding]) -> list[FileGroup]:
    """``findings`` grouped by file for reading: the dir-level group first, then the files with
    the most severe findings (errors, then warnings; more of them first), then by path. A
    finding repeated word for word in one file is one line with a count."""
    groups: dict[str | None, list[Finding]] = {}
    for f in findings:
        groups.setdefault(f.path, []).append(f)
    out: list[FileGroup] = []
    for path, found in groups.items():
        counts: dict[tuple[str, str, str], list[Any]] = {}
        for f in sorted(found, key=lambda f: (_SEVERITY_ORDER[f.severity], f.line or 0, f.code)):
            key = (f.severity, f.code, f.message)
            if key in counts:
                counts[key][1] += 1
                counts[key][2].append(f.line)
            else:
                counts[key] = [f, 1, [f.line]]
        lines = tuple((f, n) for f, n, _ in counts.values())
        at = tuple(tuple(sorted({x for x in where if x})) for _, _, where in counts.values())
        worst = lines[0][0].severity
        out.append(FileGroup(path, worst, lines, at))
    rank = _SEVERITY_ORDER

    def order(g: FileGroup) -> tuple[int, int, int, str]:
        top = sum(n for f, n in g.lines if f.severity == g.worst)
        return (0 if g.path is None else 1, rank[g.worst], -top, g.path or "")

    return sorted(out, key=order)


@dataclass(frozen=True, slots=True)
class NoteKind:
    """The notes (info findings) of one ``code``: ``count`` findings in ``files`` files, and what
    the code means (``DOCTOR_CODES``)."""

    code: str
    count: int
    files: int
    meaning: str


def note_kinds(findings: Iterable[Finding]) -> list[NoteKind]:
    """The info findings about files, counted by code, most frequent first: the short form of
    the advice, for a report that lists only errors and warnings in full."""
    by_code: dict[str, list[Finding]] = {}
    for f in findings:
        if f.severity == "info" and f.path is not None:
            by_code.setdefault(f.code, []).append(f)
    kinds = [NoteKind(code, len(found), len({f.path for f in found}), DOCTOR_CODES[code][1] if code in DOCTOR_CODES else found[0].message) for code, found in by_code.items()]
    return sorted(kinds, key=lambda k: (-k.count, k.code))


@dataclass(frozen=True, slots=True)
class Move:
    """A folder the project's code moved out of: ``old`` → ``new`` (POSIX folder paths, ``""``
    for the root), read off ``count`` distinct stale paths, named in ``files`` memories, whose
    same-named file now lives under ``new``."""

    old: str
    new: str
    count: int
    files: int


MIN_MOVE_CLAIMS = 3  # stale paths that must agree before a folder move is named (memtui's choice)


def _move_of(f: Finding) -> tuple[str, str] | None:
    """``(old folder, new folder)`` of a ``stale-path`` finding whose claim and what was found
    instead share their last segments (``game/a/b.ts`` → ``packages/game/src/a/b.ts``: ``game``
    → ``packages/game/src``), else ``None``."""
    if f.code != "stale-path":
        return None
    claim, instead = f.data.get("claim"), f.data.get("instead")
    if not isinstance(claim, str) or not isinstance(instead, str):
        return None
    a, b = claim.strip("`").rstrip("/").split("/"), instead.rstrip("/").split("/")
    same = 0
    while same < min(len(a), len(b)) and a[-1 - same] == b[-1 - same]:
        same += 1
    if same == 0 or same == len(a):
        return None  # nothing in common, or a bare name: no folder moved
    return "/".join(a[: len(a) - same]), "/".join(b[: len(b) - same])


def folder_moves(findings: Iterable[Finding]) -> list[Move]:
    """The folder moves at least ``MIN_MOVE_CLAIMS`` distinct stale paths agree on, most claims first:
    "the code moved from `game/` to `packages/game/src/`" says in one line what dozens of
    stale paths say one by one."""
    found: dict[tuple[str, str], list[Finding]] = {}
    for f in findings:
        move = _move_of(f)
        if move is not None:
            found.setdefault(move, []).append(f)
    moves = []
    for (old, new), fs in found.items():
        paths = {str(f.data.get("claim")) for f in fs}  # distinct paths: one named in 3 memories is one
        if len(paths) >= MIN_MOVE_CLAIMS:
            moves.append(Move(old, new, len(paths), len({f.path for f in fs})))
    return sorted(moves, key=lambda m: (-m.count, m.old))


def move_of(f: Finding, moves: Sequence[Move]) -> Move | None:
    """The one of ``moves`` that explains ``f`` (a stale path under its old folder), or ``None``."""
    pair = _move_of(f)
    return next((m for m in moves if (m.old, m.new) == pair), None) if pair is not None else None


def findings_json(findings: Iterable[Finding]) -> bytes:
    """The text ``orjson.dumps(..., option=OPT_INDENT_2)`` writes for the ``findings`` of
    ``DoctorReport.to_json`` (a list one level deep in the report's object), each finding's
    values plain JSON (``memtui.core.memory.catalogdb.jsonable``). A JSON text holds no raw
    newline inside a string, so the list's own indented text moves one level in by an indent
    after each newline."""
    import orjson

    # the list's opening, each chunk's findings one level in (without their brackets) and a
    # separator after each, joined once at the end: the text is made once (83 MB for 228,000
    # findings), never copied by a concatenation
    parts: list[bytes] = [b"[\n  "]
    chunk: list[dict[str, Any]] = []

    def flush() -> None:
        parts.extend((orjson.dumps(chunk, option=orjson.OPT_INDENT_2)[2:-2].replace(b"\n", b"\n  "), b",\n  "))
        chunk.clear()

    for f in findings:
        chunk.append(f.to_json())
        if len(chunk) == _RENDER_CHUNK:
            flush()
    if chunk:
        flush()
    if len(parts) == 1:
        return b"[]"
    parts[-1] = b"\n  ]"
    return b"".join(parts)


_RENDER_CHUNK = 10_000  # findings rendered at a time (their dicts are not all held at once)


def sort_key(f: Finding) -> tuple[int, str, int, int, str]:
    """Report order: dir-level first, then by path, line, severity, code."""
    return (0 if f.path is None else 1, f.path or "", f.line or 0, _SEVERITY_ORDER[f.severity], f.code)
