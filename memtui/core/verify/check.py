"""Checking every memory's claims against the project (``verify_memories``).

Each claim (``memtui.core.verify.claims``) ends ``verified``, ``stale`` or ``unchecked``:

- a **path** is verified when the project lists it (or a path ending in it: a memory often
  writes ``acme/pipeline.py`` for ``src/acme/pipeline.py``), or it exists on disk; a path that
  an ignore rule hides is ``unchecked`` (``.env`` is not in a fresh clone, and that says nothing
  about the memory). Else ``stale-path``, with the same file name elsewhere or the closest name
  (rapidfuzz) as what was found instead;
- a **line** (``:42``) is stale when every file the path names has fewer lines
  (``stale-line``); an **anchor** (``#part``) when no heading of the file has it (``stale-line``,
  with the closest heading);
- a **symbol** is verified when every part of it occurs as a whole word in the project
  (``memtui.core.verify.grep``: one bounded read of the project for all symbols); else ``stale-symbol``, with
  the project's identifier closest to the missing part; ``unchecked`` when the search did not
  finish in time;
- a **command**'s task-runner target (``just vendor``, ``make build``, ``npm run lint``) is
  verified when the justfile / Makefile / ``package.json`` at the project root has it; else
  ``stale-command``. A runner whose file is not at the root is not checked.

Nothing is written anywhere.
"""

from __future__ import annotations

import os
import posixpath
import re
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from rapidfuzz import fuzz, process

from memtui.core.base.diagnostics import Severity
from memtui.core.base.jsontext import loads_checked
from memtui.core.base.safe_read import read_regular
from memtui.core.memory.memories import Memory
from memtui.core.verify.claims import Claim, memory_claims
from memtui.core.verify.history import CODE_EXTENSIONS, HISTORY_TIMEOUT_S, history_paths, history_problem, history_renames, removed_words
from memtui.core.verify.grep import DEFAULT_TIMEOUT_S, close_identifiers, find_words, read_vocabulary, word_parts
from memtui.core.verify.tree import ProjectTree, list_tree

ClaimStatus = Literal["verified", "stale", "unchecked"]
# rapidfuzz score (0–100) from which a name is offered as what a stale one became (memtui's choice).
CLOSE_MATCH_CUTOFF = 72.0

VERIFY_CODES: dict[str, tuple[Severity, str]] = {
    "stale-path": ("warning", "a file or directory the memory names is not in the project (moved, renamed or deleted?)"),
    "stale-line": ("warning", "a line number past the end of the file, or a `#anchor` no heading of the file has"),
    "stale-symbol": ("warning", "a function, class or identifier the memory names occurs nowhere in the project"),
    "stale-command": ("warning", "a task-runner target (`just X`, `make X`, `npm run X`) the project's justfile / Makefile / package.json does not define"),
    "verify-incomplete": ("info", "the symbol search stopped at its time limit or failed: some claims were not checked"),
    "claims-not-checked": ("info", "the project's code is not there (no files besides the agent's own): the memories' claims about the code were not checked"),
}
# The severity of a stale claim that only the project as it is now speaks against (no git
# history to tell "moved or deleted" from "never a file of this project"): advice, not a defect.
UNCONFIRMED_SEVERITY: Severity = "info"


@dataclass(frozen=True, slots=True)
class ClaimResult:
    """One claim's outcome: ``status``; ``code`` (``stale-*``) and ``message`` when stale,
    the reason when unchecked; ``instead``: what was found instead (a path, a heading anchor, an
    identifier) or ``None``."""

    claim: Claim
    status: ClaimStatus
    code: str | None = None
    message: str = ""
    instead: str | None = None
    # a stale claim the git history confirms (the path or name was in the project once)
    confirmed: bool = True

    def to_json(self) -> dict[str, Any]:
        """``{kind, text, line, status, code, message, instead}``."""
        c = self.claim
        return {"kind": c.kind, "text": c.text, "line": c.line, "status": self.status, "code": self.code, "message": self.message, "instead": self.instead}


@dataclass(frozen=True, slots=True)
class MemoryVerification:
    """The claims of one memory (``relpath``) and their results, in order."""

    relpath: str
    results: tuple[ClaimResult, ...]

    @property
    def checked(self) -> int:
        """Claims decided (verified or stale)."""
        return sum(1 for r in self.results if r.status != "unchecked")

    @property
    def verified(self) -> int:
        """Claims that hold."""
        return sum(1 for r in self.results if r.status == "verified")

    @property
    def stale(self) -> list[ClaimResult]:
        """Claims that no longer hold."""
        return [r for r in self.results if r.status == "stale"]

    def summary(self) -> str:
        """``verified 3/3``, ``2/3 verified · 1 stale``, ``no claims about the code``."""
        if not self.results:
            return "no claims about the code"
        if not self.checked:
            return f"{len(self.results)} claim{'s' if len(self.results) != 1 else ''}, none checked"
        stale = len(self.stale)
        text = f"verified {self.verified}/{self.checked}" if not stale else f"{self.verified}/{self.checked} verified · {stale} stale"
        unchecked = len(self.results) - self.checked
        return text + (f" · {unchecked} unchecked" if unchecked else "")

    def to_json(self) -> dict[str, Any]:
        """``{relpath, verified, checked, summary, claims: [...]}``."""
        return {"relpath": self.relpath, "verified": self.verified, "checked": self.checked, "summary": self.summary(), "claims": [r.to_json() for r in self.results]}


@dataclass(frozen=True, slots=True)
class VerifyFinding:
    """A stale claim (or the search's note) as a finding: ``code`` (``VERIFY_CODES``),
    ``relpath`` of the memory (``None`` for the run), ``line`` in it, ``message``, ``data``
    (``claim``, ``instead``)."""

    code: str
    relpath: str | None
    line: int | None
    message: str
    data: dict[str, Any] = field(default_factory=dict)
    level: Severity | None = None

    @property
    def severity(self) -> Severity:
        """``level`` when given (``UNCONFIRMED_SEVERITY`` for a stale claim no history
        confirms), else ``VERIFY_CODES[code]``'s severity."""
        return self.level or VERIFY_CODES[self.code][0]


@dataclass(frozen=True, slots=True)
class VerifyReport:
    """Every memory's claims checked against ``root``.

    ``memories``: relpath → ``MemoryVerification`` (every memory given, claims or not);
    ``source``: how the files were listed (``git`` / ``walk``); ``notes``: what limited the
    run; ``complete``: every claim could be decided or was left out for a stated reason;
    ``seconds``: wall time."""

    root: Path
    memories: dict[str, MemoryVerification]
    source: str
    files: int
    notes: tuple[str, ...] = ()
    complete: bool = True
    seconds: float = 0.0
    # the project holds no file besides the agent's own (CLAUDE.md, .claude/…): nothing checked
    missing: bool = False

    def findings(self) -> list[VerifyFinding]:
        """One finding per stale claim (``UNCONFIRMED_SEVERITY`` when no git history confirms
        it), plus ``verify-incomplete`` when the search stopped; for a missing project, one
        ``claims-not-checked`` finding instead of any."""
        out: list[VerifyFinding] = []
        if self.missing:
            claims = sum(len(mv.results) for mv in self.memories.values())
            if claims:
                holders = sum(1 for mv in self.memories.values() if mv.results)
                out.append(VerifyFinding("claims-not-checked", None, None, f"project not found at {self.root} (no files besides the agent's own): {claims:,} claim{'s' if claims != 1 else ''} about the code in {holders} memor{'ies' if holders != 1 else 'y'} not checked", {"claims": claims, "memories": holders}))
            return out
        for rel, mv in self.memories.items():
            for r in mv.stale:
                assert r.code is not None
                level = None if r.confirmed else UNCONFIRMED_SEVERITY
                out.append(VerifyFinding(r.code, rel, r.claim.line, r.message, {"claim": r.claim.text, "instead": r.instead, "confirmed": r.confirmed}, level))
        if not self.complete:
            out.append(VerifyFinding("verify-incomplete", None, None, "; ".join(self.notes) or VERIFY_CODES["verify-incomplete"][1]))
        return out

    def counts(self) -> dict[str, int]:
        """``{memories, with_claims, claims, verified, stale, unchecked}``."""
        results = [r for mv in self.memories.values() for r in mv.results]
        return {
            "memories": len(self.memories),
            "with_claims": sum(1 for mv in self.memories.values() if mv.results),
            "claims": len(results),
            "verified": sum(1 for r in results if r.status == "verified"),
            "stale": sum(1 for r in results if r.status == "stale"),
            "unchecked": sum(1 for r in results if r.status == "unchecked"),
        }

    def to_json(self) -> dict[str, Any]:
        """``{root, source, files, complete, notes, seconds, counts, memories: [...]}`` (only
        memories with claims)."""
        return {
            "root": str(self.root),
            "source": self.source,
            "files": self.files,
            "complete": self.complete,
            "notes": list(self.notes),
            "seconds": round(self.seconds, 3),
            "counts": self.counts(),
            "memories": [mv.to_json() for mv in self.memories.values() if mv.results],
        }


# ----- task runners --------------------------------------------------------------------------

_JUST_RECIPE = re.compile(r"^@?([A-Za-z_][\w-]*)(?:\s[^:=]*)?:(?!=)", re.MULTILINE)
_JUST_ALIAS = re.compile(r"^alias\s+([A-Za-z_][\w-]*)\s*:=", re.MULTILINE)
_MAKE_TARGET = re.compile(r"^([A-Za-z0-9_./%-][^:=#\s]*(?:[ \t]+[^:=#\s]+)*)[ \t]*::?(?!=)", re.MULTILINE)
_RUNNER_FILES = {
    "just": ("justfile", "Justfile", ".justfile"),
    "make": ("GNUmakefile", "makefile", "Makefile"),
    "npm": ("package.json",),
    "pnpm": ("package.json",),
    "yarn": ("package.json",),
    "bun": ("package.json",),
}


def _runner_targets(root: Path, runner: str) -> tuple[str, set[str]] | None:
    """The runner's file at the root and its targets, or ``None`` when there is none."""
    for name in _RUNNER_FILES.get(runner, ()):
        try:
            data, _ = read_regular(root / name, 4 * 1024 * 1024)
        except OSError:
            continue
        text = data.decode("utf-8", errors="replace")
        if runner == "just":
            return name, set(_JUST_RECIPE.findall(text)) | set(_JUST_ALIAS.findall(text))
        if runner == "make":
            return name, {t for m in _MAKE_TARGET.findall(text) for t in m.split()}
        try:
            scripts = loads_checked(text).get("scripts") or {}
        except (ValueError, AttributeError):  # not JSON (or nested past MAX_JSON_DEPTH), not an object
            return None
        return name, {str(k) for k in scripts} if isinstance(scripts, dict) else set()
    return None


# ----- one claim -----------------------------------------------------------------------------


def _closest(query: str, choices: Iterable[str]) -> str | None:
    best = process.extractOne(query, list(choices), scorer=fuzz.ratio, score_cutoff=CLOSE_MATCH_CUTOFF)
    return best[0] if best else None


class _Checker:
    def __init__(self, tree: ProjectTree) -> None:
        self.tree = tree
        self._targets: dict[str, tuple[str, set[str]] | None] = {}

    def instead_of_path(self, claim: Claim) -> str | None:
        assert claim.path is not None
        name = claim.path.rsplit("/", 1)[-1]
        same = [p for p in self.tree.by_name.get(name, ()) if not claim.directory or p in self.tree.dirs]
        if same:
            return min(same, key=lambda p: (-fuzz.ratio(p, claim.path or ""), len(p), p))
        # a renamed file mostly stays where it was: rank the names of its directory (or of the
        # directories of that name), else the names that start like it
        parent = posixpath.dirname(claim.path)
        dirs = self.tree.find(parent, directory=True) if parent else [""]
        pool = [p for d in dirs for p in self.tree.children.get(d, ())]
        if not pool:
            pool = [p for n in self.tree.by_prefix.get(name[:3].lower(), ()) for p in self.tree.by_name[n]]
        close = _closest(name, {p.rsplit("/", 1)[-1] for p in pool})
        if close is None:
            return None
        return min((p for p in pool if p.rsplit("/", 1)[-1] == close), key=lambda p: (-fuzz.ratio(p, claim.path or ""), len(p), p))

    def path(self, claim: Claim) -> ClaimResult | None:
        """The result of a path claim; ``None`` when it is not a claim after all (an
        unanchored ``owner/name``) or needs the ignore check (left to the caller)."""
        tree = self.tree
        assert claim.path is not None
        if claim.anchored and claim.path.split("/", 1)[0] not in tree.top_dirs:
            return None
        hits = tree.find(claim.path, directory=True if claim.directory else None)
        if not hits:
            if tree.exists_on_disk(claim.path):
                return ClaimResult(claim, "verified")
            return ClaimResult(claim, "stale", "stale-path")  # message filled in later
        files = [h for h in hits if h not in tree.dirs]
        if claim.line_no is not None and files:
            counts = [(h, tree.line_count(h)) for h in files]
            known = [(h, n) for h, n in counts if n is not None]
            if known and all(n < claim.line_no for _, n in known):
                h, n = max(known, key=lambda t: t[1])
                return ClaimResult(claim, "stale", "stale-line", f"`{claim.text}`: {h} has {n} line{'s' if n != 1 else ''}; line {claim.line_no} is past its end", h)
        if claim.anchor is not None and files:
            md = [h for h in files if h.lower().endswith((".md", ".mdx", ".markdown", ".rst"))]
            if md:
                anchors = set().union(*(tree.anchors(h) for h in md))
                if claim.anchor.lower() not in {a.lower() for a in anchors}:
                    close = _closest(claim.anchor.lower(), anchors)
                    also = f"; closest heading: `#{close}`" if close else ""
                    return ClaimResult(claim, "stale", "stale-line", f"`{claim.text}`: no heading of {md[0]} has the anchor `#{claim.anchor}`{also}", f"{md[0]}#{close}" if close else None)
        return ClaimResult(claim, "verified")

    def command(self, claim: Claim) -> ClaimResult:
        assert claim.runner is not None and claim.target is not None
        if claim.runner not in self._targets:
            self._targets[claim.runner] = _runner_targets(self.tree.root, claim.runner)
        found = self._targets[claim.runner]
        if found is None:
            return ClaimResult(claim, "unchecked", None, f"no {'/'.join(_RUNNER_FILES[claim.runner])} at the project root")
        name, targets = found
        if claim.target in targets:
            return ClaimResult(claim, "verified")
        close = _closest(claim.target, targets)
        also = f"; closest: `{claim.runner} {close}`" if close else ""
        what = "script" if name == "package.json" else "recipe" if claim.runner == "just" else "target"
        return ClaimResult(claim, "stale", "stale-command", f"`{claim.text}`: {name} has no {what} `{claim.target}`{also}", close)


def verify_memories(
    memories: Sequence[Memory],
    root: Path,
    *,
    exclude: Iterable[Path] = (),
    timeout: float = DEFAULT_TIMEOUT_S,
    tree: ProjectTree | None = None,
    claims: Mapping[str, Sequence[Claim]] | None = None,
) -> VerifyReport:
    """Check the claims of ``memories`` against the project at ``root`` (the canonical git
    root, else the project dir). ``exclude``: paths left out of the project (the memory dir
    when it lies inside it; a Markdown path that names an existing file in one of them, from
    the memory's own folder, is a link between memories and no claim); ``timeout``: seconds the read of the project for identifiers may take; ``tree``: a
    listing made earlier; ``claims``: relpath → that memory's ``memory_claims``, made earlier (e.g. kept
    in the catalog database; a memory it has need not hold its text). Never raises for a bad
    file or a failing git; reads only."""
    started = time.monotonic()
    exclude = tuple(exclude)
    tree = tree if tree is not None else list_tree(root, exclude=exclude)
    checker = _Checker(tree)
    notes: list[str] = []
    if not tree.complete:
        notes.append(f"the listing of the project stopped at {len(tree.files):,} files (a size or time limit): paths outside it may show as stale")
    given = claims if claims is not None else {}
    claims_of = {mem.relpath: list(c) if (c := given.get(mem.relpath)) is not None else memory_claims(mem) for mem in memories}
    # a link to another memory (the doctor's "superseded by" line) speaks of the memory, not the code
    excluded = [Path(os.path.abspath(p)) for p in exclude]
    for mem in memories if excluded else ():
        claims_of[mem.relpath] = [c for c in claims_of[mem.relpath] if not _links_a_memory(mem, c, excluded)]
    if tree.complete and not _has_code(tree):
        unchecked = {rel: MemoryVerification(rel, tuple(ClaimResult(c, "unchecked", None, "the project's code is not there") for c in claims)) for rel, claims in claims_of.items()}
        return VerifyReport(tree.root, unchecked, tree.source, len(tree.files), (f"project not found at {tree.root}: claims about the code not checked",), True, time.monotonic() - started, missing=True)
    symbols = dict.fromkeys(w for claims in claims_of.values() for c in claims if c.kind == "symbol" for w in c.words)
    # one read of the project's files: its identifiers, and each file's line count on the way
    vocabulary = read_vocabulary(tree, timeout=timeout) if symbols else None
    per_memory: dict[str, list[ClaimResult | Claim]] = {}
    for rel, claims in claims_of.items():
        items: list[ClaimResult | Claim] = []
        for claim in claims:
            if claim.kind == "path":
                result = checker.path(claim)
                if result is not None:
                    items.append(result)
            elif claim.kind == "command":
                items.append(checker.command(claim))
            else:
                items.append(claim)
        per_memory[rel] = items
    # stale paths: an ignore rule may hide them (then they are not the memory's fault)
    # a directory claim is asked with its slash too: `static/` matches the rule `/static/` only so
    stale_paths = sorted({p for items in per_memory.values() for r in items if isinstance(r, ClaimResult) and r.code == "stale-path" and r.claim.path
                          for p in ((r.claim.path, r.claim.path + "/") if r.claim.directory else (r.claim.path,))})
    ignored = tree.ignored(stale_paths)
    search = find_words(tree, symbols, timeout=timeout, vocabulary=vocabulary)
    if not search.complete:
        notes.append(f"the symbol search {search.error or 'stopped early'}: symbols not found by then are unchecked")
    missing = {w for w in symbols if w not in search.found} if search.complete else set()
    candidates = _CloseIndex(close_identifiers(vocabulary, missing) - missing if missing and vocabulary is not None else ())
    out: dict[str, MemoryVerification] = {}
    for rel, items in per_memory.items():
        results: list[ClaimResult] = []
        for item in items:
            if isinstance(item, Claim):
                results.append(_symbol_result(item, search.found, search.complete, candidates))
            elif item.code == "stale-path" and not item.message:
                results.append(_stale_path(checker, item.claim, ignored))
            else:
                results.append(item)
        out[rel] = MemoryVerification(rel, tuple(results))
    _confirm(out, tree, notes, search.found, timeout=HISTORY_TIMEOUT_S)
    return VerifyReport(tree.root, out, tree.source, len(tree.files), tuple(notes), search.complete and tree.complete, time.monotonic() - started)


# Files of the agent's own in a project (its instructions and settings): a project holding
# nothing else has no code to check claims against.
_AGENT_DIRS = frozenset({".claude", ".agent", ".git"})
_AGENT_FILES = frozenset({"CLAUDE.md", "CLAUDE.local.md", "AGENT.md", "AGENT.local.md", "AGENTS.md", ".mcp.json"})


def _has_code(tree: ProjectTree) -> bool:
    """Whether the project lists a file that is not the agent's own."""
    for rel in tree.files:
        top = rel.split("/", 1)[0]
        if top not in _AGENT_DIRS and rel.rsplit("/", 1)[-1] not in _AGENT_FILES:
            return True
    return False


class _PathIndex:
    """The paths a history had, looked up by what a memory may write for one of them: the path,
    a tail of it by segments (``a/b.ts`` for ``src/a/b.ts``), or a folder in it (``src/a``,
    ``a``). Built in one pass, a list per last segment and per folder name (linear in the
    history's paths)."""

    def __init__(self, paths: Iterable[str]) -> None:
        self.by_name: dict[str, list[str]] = {}
        self.by_dir: dict[str, list[str]] = {}
        for path in paths:
            parts = path.split("/")
            self.by_name.setdefault(parts[-1], []).append(path)
            for name in dict.fromkeys(parts[:-1]):
                self.by_dir.setdefault(name, []).append(path)

    def __contains__(self, claim: object) -> bool:
        if not isinstance(claim, str) or not claim:
            return False
        last = claim.rsplit("/", 1)[-1]
        tail = "/" + claim
        if any(p == claim or p.endswith(tail) for p in self.by_name.get(last, ())):
            return True
        inner = tail + "/"
        return any(p.startswith(claim + "/") or inner in p for p in self.by_dir.get(last, ()))


def _renamed(path: str, renames: dict[str, str], olds_by_name: dict[str, list[str]], tree: ProjectTree) -> str | None:
    """Where git's rename detection says ``path`` (or the one old path ending in it) went,
    following renames of the new name too, when that path exists now; else ``None``.
    ``olds_by_name``: the renamed paths by last segment (one lookup per claim, not a scan)."""
    olds = [old for old in olds_by_name.get(path.rsplit("/", 1)[-1], ()) if old == path or old.endswith("/" + path)]
    if len(olds) != 1:
        return None
    new = renames[olds[0]]
    for _ in range(32):  # a chain of renames, bounded
        if new not in renames:
            break
        new = renames[new]
    return new if tree.find(new) else None


def _specific(path: str) -> bool:
    """Whether a path the history had speaks of this project: one with a folder, or a bare
    name of a source file (``debug2-styles.ts``). A bare data or document name (``handling.cfg``,
    ``config.json``) is as often a program's or a game's own file as a copy the project once had."""
    if "/" in path:
        return True
    ext = path.rsplit(".", 1)[-1].lower() if "." in path else ""
    return ext in CODE_EXTENSIONS


def _confirm(out: dict[str, MemoryVerification], tree: ProjectTree, notes: list[str], present: frozenset[str], *, timeout: float) -> None:
    """Keep a stale path or symbol stale only when the git history shows the project once had
    it (a path some commit touched; an identifier in a line some commit removed); one the
    history never had is no claim about this project (``unchecked``); ``present``: the names the
    project has now (a stale symbol's other parts). Without a readable
    history every stale claim stays, unconfirmed (``UNCONFIRMED_SEVERITY``); a note in
    ``notes`` says why. The reads of the history share ``timeout`` seconds."""
    stale = [(rel, i, r) for rel, mv in out.items() for i, r in enumerate(mv.results) if r.code in ("stale-path", "stale-symbol")]
    if not stale:
        return
    paths: _PathIndex | None = None
    words: frozenset[str] | None = None
    renames: dict[str, str] = {}
    olds_by_name: dict[str, list[str]] = {}
    deadline = time.monotonic() + timeout

    def left() -> float:
        return max(0.1, deadline - time.monotonic())

    problem = history_problem(tree.root, timeout=left()) if tree.source == "git" else "no git history"
    if problem is not None and tree.source == "git":
        notes.append(f"the git history cannot confirm stale claims ({problem}): they are reported as notes")
    if problem is None:
        if any(r.code == "stale-path" for _, _, r in stale):
            found = history_paths(tree.root, timeout=left())
            paths = _PathIndex(found.found) if found.complete else None
            renames = history_renames(tree.root, timeout=left()) if paths is not None else {}
            for old in renames:
                olds_by_name.setdefault(old.rsplit("/", 1)[-1], []).append(old)
            if not found.complete:
                notes.append(f"the git history could not be read whole ({found.error}): stale paths are not confirmed")
        absent = {w for _, _, r in stale if r.code == "stale-symbol" for w in r.claim.words if w not in present}
        if absent:
            removed = removed_words(tree.root, absent, timeout=left())
            words = removed.found if removed.complete else None
            if not removed.complete:
                notes.append(f"the git history could not be read whole ({removed.error}): stale names are not confirmed")
    results = {rel: list(mv.results) for rel, mv in out.items()}
    for rel, i, r in stale:
        if r.code == "stale-path":
            assert r.claim.path is not None
            once = None if paths is None else r.claim.path in paths
            if once and not (r.claim.directory or _specific(r.claim.path)):
                results[rel][i] = ClaimResult(r.claim, "unchecked", None, "not in the project; a file of that name was in its history, but a bare data or document name is as often another program's file: not checked")
                continue
            what = "path"
            became = _renamed(r.claim.path, renames, olds_by_name, tree) if once else None
            if became is not None:
                results[rel][i] = replace(r, instead=became, message=f"`{r.claim.text}`: no such {'directory' if r.claim.directory else 'file'} in the project; git recorded its rename to `{became}`")
                continue
        else:
            once = None if words is None else any(w in words for w in r.claim.words if w not in present)
            what = "name"
        if once is None:
            results[rel][i] = replace(r, confirmed=False)
        elif not once:
            results[rel][i] = ClaimResult(r.claim, "unchecked", None, f"not in the project, and never in its git history: not a {what} of this project")
    for rel, items in results.items():
        out[rel] = MemoryVerification(rel, tuple(items))


def _links_a_memory(memory: Memory, claim: Claim, excluded: Sequence[Path]) -> bool:
    """Whether ``claim`` names a Markdown file that exists, resolved from ``memory``'s own
    folder, inside one of ``excluded`` (the memory dir): a link between memories."""
    if claim.kind != "path" or claim.path is None or not claim.path.lower().endswith(".md"):
        return False
    target = Path(os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(memory.file)), claim.path)))
    return any(target.is_relative_to(d) for d in excluded) and target.is_file()


def _stale_path(checker: _Checker, claim: Claim, ignored: set[str]) -> ClaimResult:
    assert claim.path is not None
    if claim.path in ignored or (claim.directory and claim.path + "/" in ignored):
        return ClaimResult(claim, "unchecked", None, f"`{claim.path}` is ignored by the project (.gitignore): not checked")
    what = "directory" if claim.directory else "file" if "." in claim.path.rsplit("/", 1)[-1] else "path"
    instead = checker.instead_of_path(claim)
    same_name = instead is not None and posixpath.basename(instead) == posixpath.basename(claim.path)
    hint = f"; {'moved to' if same_name else 'closest'}: `{instead}`?" if instead else ""
    return ClaimResult(claim, "stale", "stale-path", f"`{claim.text}`: no such {what} in the project{hint}", instead)


MAX_POOL = 2_000  # close-match candidates ranked per missing identifier (memtui's bound)


class _CloseIndex:
    """Close-match candidates by part (``word_parts``), built once per run."""

    def __init__(self, candidates: Iterable[str]) -> None:
        self.by_part: dict[str, list[str]] = {}
        for c in candidates:
            for part in word_parts(c):
                self.by_part.setdefault(part, []).append(c)

    def closest(self, word: str) -> str | None:
        """What ``word`` may have become: an identifier containing it (same case first, then
        any case; the shortest), else the closest by rapidfuzz among those sharing its rarest
        part (at most ``MAX_POOL`` of them)."""
        lists = [self.by_part[p] for p in word_parts(word) if p in self.by_part]
        if not lists:
            return None
        pool = sorted(set(min(lists, key=len)[:MAX_POOL]))
        low = word.lower()
        for subset in ([c for c in pool if word in c], [c for c in pool if low in c.lower()]):
            if subset:
                return min(subset, key=lambda c: (len(c), c))
        return _closest(word, pool)


def _symbol_result(claim: Claim, found: frozenset[str], complete: bool, candidates: _CloseIndex) -> ClaimResult:
    absent = [w for w in claim.words if w not in found]
    if not absent:
        return ClaimResult(claim, "verified")
    if not complete:
        return ClaimResult(claim, "unchecked", None, "the symbol search stopped before finding it")
    word = absent[0]
    close = candidates.closest(word)
    also = f"; closest: `{close}`" if close else ""
    what = f"`{word}` (in `{claim.text}`)" if len(claim.words) > 1 else f"`{claim.text}`"
    return ClaimResult(claim, "stale", "stale-symbol", f"{what} occurs nowhere in the project{also}", close)
