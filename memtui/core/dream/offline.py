"""The offline consolidator: deterministic, always available (docs/behaviour.md §8).

- **Orient**: read every memory (``team/`` excluded: it is shared with others) and the index.
- **Gather**: the sessions touched since the last consolidation and the memories changed
  since (counted and named; reading transcripts for new facts is the Claude consolidator's job).
- **Consolidate**:
  - relative dates in ``project`` memories (the type whose body must carry absolute dates,
    docs/behaviour.md §4.1) become absolute where the phrase names one exact day, against the file's mtime
    (the doctor's rule, ``memtui.core.doctor.dates``; CJK included); the rest are findings.
    The file keeps its mtime: a date written out does not make a memory newer.
  - exact and near duplicates (the doctor's definitions: same normalised body, or rapidfuzz
    ``token_sort_ratio`` ≥ 85 on description + body within one type) are merged into the
    **oldest** file of each group, keeping every distinct sentence (``merge``); the others are
    deleted (their journal before-image is the trash). The kept file takes the newest mtime of
    the group. At most ``max_deletions`` deletions per run; whole groups beyond it wait.
  - contradicted facts are not judged offline (that needs a model). With a CLI release (the
    claude flavor), its "Reconcile memories against CLAUDE.md": a feedback/project memory naming
    a command differently from an instruction line is a finding (``reconcile``); CLAUDE.md is
    never edited.
- **Prune**: the index (``prune``).

A file is only in the plan when a step above changed it, each change with its reason; running
the consolidator again on its own result changes nothing.
"""

from __future__ import annotations

import threading
from collections import defaultdict
from collections.abc import Callable
from datetime import date, datetime
from typing import Any

import orjson

from memtui.core.base.gcpause import gc_paused
from memtui.core.base.wording import counted
from memtui.core.memory.catalog import iso_utc
from memtui.core.doctor.dates import DatedPhrase, memory_date_base, relative_dates
from memtui.core.doctor.duplicates import (
    NEAR_DUPLICATE_THRESHOLD,
    NearPair,
    NearTexts,
    block_of,
    body_key,
    near_duplicate_pairs,
    near_pairs_fingerprint,
    near_text,
    store_near_pairs,
    stored_near_pairs,
    SketchBook,
)
from memtui.core.dream.events import (
    Emit,
    EventLog,
    FileRead,
    Finding,
    LogLine,
    Phase,
    PhaseFinished,
    PhaseStarted,
    Progress,
    ProposedChange,
    check_cancel,
)
from memtui.core.dream.autodream import counted_sessions
from memtui.core.dream.gates import DreamContext, sessions_since
from memtui.core.dream.lock import read_lock
from memtui.core.dream.merge import append_block, missing_lines
from memtui.core.dream.plan import DEFAULT_MAX_DELETIONS, DreamPlan, Workspace
from memtui.core.dream.prune import HUB_PREFIX, PruneInput, is_hub, prune_index
from memtui.core.dream.reconcile import RECONCILED_TYPES, instruction_files, reconcile_findings
from memtui.core.places.release import release_of
from memtui.core.memory.frontmatter import parse_frontmatter
from memtui.core.memory.index import INDEX_NAME
from memtui.core.memory.catalogdb import CatalogDB, code_fingerprint, pack
from memtui.core.memory.memories import (
    Memory,
    iter_memory_files,
    scan_memories,
    unreadable_memory,
    with_text,
)

PROGRESS_EVERY = 250  # memories between progress events (memtui's choice: ~80 events at 20,000)
VERIFY_TIMEOUT_S = 5.0  # the Gather phase's bound on the symbol search (memtui's choice)


# What the offline dream keeps per memory in the catalog database (``CatalogDB.derived``): its
# relative dates and its body key, under a fingerprint of the code that makes them; and the
# near-duplicate pairs of its pool (``CatalogDB.result``).
FACTS_KIND = "dream-offline"
NEAR_KIND = "dream-near-duplicates"
_FACTS_MODULES = ("dream/offline", "doctor/dates", "doctor/duplicates", "memory/lint", "memory/memories", "memory/frontmatter")


def _encode_facts(dates: list[DatedPhrase], key: str | None) -> bytes:
    return pack([[[p.phrase, p.line, p.column, p.resolved.isoformat() if p.resolved else None, p.replacement, p.where] for p in dates], key])


def _decode_facts(blob: bytes) -> tuple[list[DatedPhrase], str | None] | None:
    try:
        raw, key = orjson.loads(blob)
        dates = [DatedPhrase(phrase, line, column, date.fromisoformat(resolved) if resolved else None, replacement, where) for phrase, line, column, resolved, replacement, where in raw]
        if not (key is None or isinstance(key, str)) or not all(isinstance(p.phrase, str) and isinstance(p.line, int) and isinstance(p.column, int) for p in dates):
            return None
    except (orjson.JSONDecodeError, TypeError, ValueError):
        return None
    return dates, key


class _Run:
    def __init__(self, ctx: DreamContext, now: datetime, emit: Emit, cancel: threading.Event | None, max_deletions: int) -> None:
        self.ctx = ctx
        self.now = now
        self.log = EventLog(emit)
        self.cancel = cancel
        self.max_deletions = max_deletions
        self.ws = Workspace(ctx.memory_dir)
        self.findings: list[Finding] = []
        self.memories: list[Memory] = []
        self.hubs: set[str] = set()
        self.merged_into: dict[str, str] = {}
        self.deletions = 0
        self.db = CatalogDB.for_memory_dir(ctx.state_dir, ctx.memory_dir)

    def emit(self, event: object) -> None:
        self.log(event)  # type: ignore[arg-type]

    def say(self, phase: Phase | None, text: str, level: str = "info") -> None:
        self.log(LogLine(phase, level, text))  # type: ignore[arg-type]

    def finding(self, f: Finding) -> None:
        self.findings.append(f)
        self.log(f)

    def progress(self, phase: Phase) -> Callable[[int, int], None]:
        return lambda done, total: self.log(Progress(phase, done, max(total, 1)))

    # ----- phases -------------------------------------------------------------------------

    def orient(self) -> None:
        self.log(PhaseStarted("orient", "list the memory dir, read the index, skim the memories"))
        # what parsing found comes from the catalog database for files unchanged since it was
        # made (their text is read only where a later step needs it)
        scan = {m.relpath: m for m in scan_memories(self.ctx.memory_dir, cache=self.db).memories}
        self.db.release_records()  # the scan holds what they said
        paths = list(iter_memory_files(self.ctx.memory_dir))
        total = len(paths)
        team = 0
        for i, (path, rel) in enumerate(paths, start=1):
            if i % 50 == 0:
                check_cancel(self.cancel)
            if rel.startswith("team/"):
                team += 1
                continue
            mem = scan.get(rel)
            if mem is None:  # gone since the listing
                mem = unreadable_memory(path, rel, FileNotFoundError(2, "No such file or directory"))
            self.memories.append(mem)
            if not mem.sha256:
                continue
            if "/" not in rel and rel.startswith(HUB_PREFIX) and is_hub(rel, with_text(mem)[0].text):
                self.hubs.add(rel)
            self.log(FileRead("orient", rel, mem.size))
            if i % PROGRESS_EVERY == 0 or i == total:
                self.log(Progress("orient", i, total))
        index = self.ws.original(INDEX_NAME) if self.ws.get(INDEX_NAME) is not None and INDEX_NAME not in self.ws.unreadable else None
        if index is not None:
            self.log(FileRead("orient", INDEX_NAME, len(index)))
        if team:
            self.finding(Finding("orient", "team-untouched", "team/", f"{team} team memor{'y' if team == 1 else 'ies'} shared with others: the dream leaves team/ alone"))
        if not total:
            self.log(Progress("orient", 1, 1))
        kinds: dict[str, int] = defaultdict(int)
        for m in self.memories:
            kinds[block_of(m)] += 1
        mix = ", ".join(f"{n} {k}" for k, n in sorted(kinds.items())) or "none"
        lines = 0 if index is None else index.count(b"\n") + (0 if index.endswith(b"\n") else 1)
        self.log(PhaseFinished("orient", f"{counted(len(self.memories), 'memory', 'memories')} ({mix}); MEMORY.md {'absent' if index is None else counted(lines, 'line')}"))

    def facts(self, pool: list[Memory], book: SketchBook | None) -> list[tuple[list[DatedPhrase], str | None]]:
        """Per memory of ``pool``: its relative dates and its body key — from the catalog
        database when its bytes did not change, else from its text (read for the occasion and
        stored); with ``book``, each memory's near-duplicate sketch is added to it (kept, or
        made from its text)."""
        db = self.db if self.db.enabled else None
        fp = code_fingerprint(_FACTS_MODULES)
        stored = db.derived(FACTS_KIND, fp) if db is not None else {}
        out: list[tuple[list[DatedPhrase], str | None]] = []
        new: dict[str, tuple[str, bytes]] = {}
        for i, m in enumerate(pool, start=1):
            if i % 200 == 0:
                check_cancel(self.cancel)
            key = db.stored_key(m.relpath) if db is not None else None
            got = None
            if (hit := stored.get(m.relpath)) is not None and hit[0] == key:
                got = _decode_facts(hit[1])
            sketch_text = book is not None and book.needs_text(m.relpath, key)
            same = False
            if got is None or sketch_text:
                full, same = with_text(m)
                if got is None:
                    got = (relative_dates(full), body_key(full.body))
                    if same and key is not None:
                        new[m.relpath] = (key, _encode_facts(*got))
            if book is not None:
                book.add(m.relpath, key, near_text(full) if sketch_text else None, keep=same)
            out.append(got)
        if db is not None and new:
            db.put_derived(FACTS_KIND, fp, new)
        return out

    def gather(self) -> None:
        self.log(PhaseStarted("gather", "recent signal: sessions and memories changed since the last consolidation"))
        last = read_lock(self.ctx.memory_dir).last_consolidated_at
        since = "never consolidated" if last is None else f"since {iso_utc(last)}"
        ids = counted_sessions(self.ctx) if release_of(self.ctx.flavor) is not None else sessions_since(self.ctx, last)[0]
        for sid in ids[:20]:
            self.say("gather", f"session {sid}")
        if len(ids) > 20:
            self.say("gather", f"… and {len(ids) - 20} more sessions")
        drifted = [m for m in self.memories if last is None or m.mtime > last]
        if last is not None:
            for m in drifted:
                self.finding(Finding("gather", "memory-drifted", m.relpath, "changed since the last consolidation"))
        self.drifted_from_code()
        self.say("gather", "offline: transcripts are counted, not read; the claude consolidator reads them for facts worth keeping")
        self.log(Progress("gather", 1, 1))
        self.log(PhaseFinished("gather", f"{len(ids)} session(s) and {len(drifted)} changed memor{'y' if len(drifted) == 1 else 'ies'} {since}"))

    def drifted_from_code(self) -> None:
        """Memories whose claims about the code no longer hold (``memtui.core.verify``): one
        finding per stale claim, with what was found instead. Nothing is changed for them —
        the code moved, and only the user can say whether the memory should follow."""
        if self.ctx.locations is None:
            self.say("gather", "no project: the memories' claims about the code are not checked")
            return
        from memtui.core.verify import verify_memories, verify_root
        from memtui.core.verify.claims import stated_claims

        check_cancel(self.cancel)
        claims = stated_claims(self.memories, self.db if self.db.enabled else None)  # unchanged files: from the catalog database
        report = verify_memories(self.memories, verify_root(self.ctx.locations), exclude=[self.ctx.memory_dir], timeout=VERIFY_TIMEOUT_S, claims=claims)
        for f in report.findings():
            if f.relpath is not None:
                self.finding(Finding("gather", "memory-stale-claim", f.relpath, f"drifted from the code: {f.message}", f.line))
        counts = report.counts()
        self.say("gather", f"claims about the code: {counts['verified']} verified, {counts['stale']} stale, {counts['unchecked']} unchecked ({report.source}, {report.root})")
        for note in report.notes:
            self.say("gather", note, "warning")

    def superseded(self) -> int:
        """Pairs of memories that disagree (``memtui.core.verify.conflicts``): the older one is
        marked ``superseded_by`` the newer, with a note of what differs — an edit for the user
        to review in the plan; nothing is deleted."""
        from memtui.core.doctor.supersede import mark_superseded
        from memtui.core.verify.conflicts import conflict_inputs, find_conflicts

        pool = [m for m in self.memories if self._editable(m) and self.ws.exists(m.relpath) and m.relpath not in self.merged_into]
        marked = 0
        # the values each memory states and its subject terms: from the catalog database for
        # unchanged files
        values, subjects = conflict_inputs(pool, self.db if self.db.enabled else None)
        for conflict in find_conflicts(pool, values, subjects):
            text = self.ws.get(conflict.older)
            if text is None or not self.ws.exists(conflict.newer):
                continue
            new = mark_superseded(text, conflict)
            if new is None:
                continue
            reason = f"possible conflict with the newer {conflict.newer} ({conflict.describe()}): marked superseded for you to review — nothing deleted"
            self.ws.set(conflict.older, new, reason, mtime=self.ws.mtimes.get(conflict.older, next((m.mtime for m in pool if m.relpath == conflict.older), None)))
            self.log(ProposedChange("consolidate", conflict.older, "modify", reason))
            marked += 1
        return marked

    def _editable(self, m: Memory) -> bool:
        return m.relpath not in self.hubs and m.sha256 != "" and not any(d.code in ("not-utf8", "unreadable") for d in m.diagnostics)

    def dates(self, dated: dict[str, list[DatedPhrase]]) -> int:
        changed = 0
        for i, m in enumerate(self.memories, start=1):
            if i % 200 == 0:
                check_cancel(self.cancel)
            if not self._editable(m):
                continue
            phrases = dated.get(m.relpath)
            if not phrases:
                continue
            text = self.ws.get(m.relpath) or ""
            lines = text.split("\n")
            done: list[str] = []
            for p in sorted(phrases, key=lambda p: (p.line, p.column), reverse=True):
                line = lines[p.line - 1] if p.line - 1 < len(lines) else ""
                if p.replacement is None or line[p.column : p.column + len(p.phrase)] != p.phrase:
                    meant = f"dateparser reads {p.resolved.isoformat()}" if p.resolved else "no date can be read from it"
                    self.finding(Finding("consolidate", "relative-date-kept", m.relpath, f"“{p.phrase}” names no exact day ({meant}, from {memory_date_base(m).describe()}): left as written", p.line))
                    continue
                lines[p.line - 1] = line[: p.column] + p.replacement + line[p.column + len(p.phrase) :]
                done.append(f"“{p.phrase}” → “{p.replacement}”")
            if done:
                based = memory_date_base(m)
                reason = f"relative dates made absolute against {based.what} ({based.moment.date().isoformat()}): {', '.join(reversed(done))}"
                self.ws.set(m.relpath, "\n".join(lines), reason, mtime=m.mtime)
                self.log(ProposedChange("consolidate", m.relpath, "modify", reason))
                changed += 1
        return changed

    def duplicates(self, pool: list[Memory], keys: list[str | None], pairs: list[NearPair]) -> int:
        blocks = [block_of(m) for m in pool]
        parent = list(range(len(pool)))

        def find(x: int) -> int:
            while parent[x] != x:
                parent[x] = parent[parent[x]]
                x = parent[x]
            return x

        how: dict[tuple[int, int], str] = {}
        by_body: dict[str, list[int]] = defaultdict(list)
        for i, key in enumerate(keys):
            if key is not None:
                by_body[key].append(i)
        for members in by_body.values():
            if len(members) < 2:
                continue
            if len({blocks[i] for i in members}) > 1:
                names = ", ".join(sorted(pool[i].relpath for i in members))
                self.finding(Finding("consolidate", "duplicate-across-types", pool[members[0]].relpath, f"the same body in memories of different types ({names}): not merged, choose the type by hand"))
            for j in members[1:]:
                if blocks[j] == blocks[members[0]]:
                    parent[find(j)] = find(members[0])
                    how[(min(members[0], j), max(members[0], j))] = "exact duplicate"
        check_cancel(self.cancel)
        for pair in pairs:
            parent[find(pair.b)] = find(pair.a)
            how.setdefault((pair.a, pair.b), f"near duplicate, {pair.score:.0f}% similar")
        check_cancel(self.cancel)
        groups: dict[int, list[int]] = defaultdict(list)
        for i in range(len(pool)):
            groups[find(i)].append(i)
        merged = 0
        comps = [sorted(g, key=lambda i: (pool[i].mtime, pool[i].relpath)) for g in groups.values() if len(g) > 1]
        comps.sort(key=lambda g: pool[g[0]].relpath)
        for comp in comps:
            keeper, others = pool[comp[0]], [pool[i] for i in comp[1:]]
            if self.deletions + len(others) > self.max_deletions:
                names = ", ".join(o.relpath for o in others)
                self.finding(Finding("consolidate", "duplicate-deferred", keeper.relpath, f"duplicates of this memory ({names}) wait for the next dream: this run reached its cap of {self.max_deletions} deletions"))
                continue
            text = self.ws.get(keeper.relpath) or ""
            added: list[str] = []
            for idx, o in zip(comp[1:], others, strict=True):
                o_text = self.ws.get(o.relpath) or ""
                fm = parse_frontmatter(o_text)
                desc = fm.data.get("description")
                parts = [str(desc) if isinstance(desc, (str, int, float)) else "", fm.body]
                lines = missing_lines(text, parts)
                text = append_block(text, lines)
                kind = how.get((min(comp[0], idx), max(comp[0], idx)), "duplicate of the group")
                reason = f"merged into {keeper.relpath} ({kind}); {len(lines)} distinct line(s) of it kept there, this file goes to memtui's trash"
                self.ws.delete(o.relpath, reason)
                self.log(ProposedChange("consolidate", o.relpath, "delete", reason))
                self.merged_into[o.relpath] = keeper.relpath
                self.deletions += 1
                added.append(f"{o.relpath} (+{len(lines)} line{'s' if len(lines) != 1 else ''})")
            newest = max(m.mtime for m in (keeper, *others))
            reason = f"kept as the oldest of its duplicates; merged in {', '.join(added)}"
            self.ws.set(keeper.relpath, text, reason, mtime=newest if text != (self.ws.get(keeper.relpath) or "") else self.ws.mtimes.get(keeper.relpath))
            self.log(ProposedChange("consolidate", keeper.relpath, "modify", reason))
            merged += 1
        return merged

    def consolidate(self) -> None:
        self.log(PhaseStarted("consolidate", "relative → absolute dates, merge duplicates"))
        prog = self.progress("consolidate")
        prog(0, 2)
        # the dates of every editable memory, the body keys and words of the pool: one pass
        pool = [m for m in self.memories if self._editable(m)]
        blocks = [block_of(m) for m in pool]
        db = self.db if self.db.enabled else None
        near_fp = near_pairs_fingerprint(pool, blocks, NEAR_DUPLICATE_THRESHOLD)
        pairs = stored_near_pairs(db, NEAR_KIND, near_fp)
        book = SketchBook(db) if pairs is None else None
        facts = self.facts(pool, book)
        dated = self.dates({m.relpath: f[0] for m, f in zip(pool, facts, strict=True) if f[0]})
        prog(1, 2)
        check_cancel(self.cancel)
        if pairs is None:
            pairs = near_duplicate_pairs(NearTexts(pool), blocks, sketches=book.finish() if book is not None else None)
            store_near_pairs(db, NEAR_KIND, near_fp, pairs)
        merged = self.duplicates(pool, [f[1] for f in facts], pairs)
        check_cancel(self.cancel)
        superseded = self.superseded()
        prog(2, 2)
        if release_of(self.ctx.flavor) is not None:
            self.reconcile()
        self.say("consolidate", "offline: contradictions are found by the conflict rule (different dates, numbers, versions, names, yes/no on one subject); the older memory is marked, never deleted")
        self.log(PhaseFinished("consolidate", f"dates fixed in {dated} file(s); {merged} duplicate group(s) merged, {self.deletions} file(s) to delete; {superseded} marked superseded"))

    def reconcile(self) -> None:
        """The release's "Reconcile memories against CLAUDE.md": findings only, CLAUDE.md is
        never edited (``memtui.core.dream.reconcile``)."""
        files = instruction_files(self.ctx)
        # (bodies read for the occasion, and only of the types reconciled)
        memories = [(m.relpath, m.type, with_text(m)[0].body if m.type in RECONCILED_TYPES else "") for m in self.memories if self.ws.exists(m.relpath) and m.sha256 != ""]
        for f in reconcile_findings(memories, files):
            self.finding(f)
        self.say("consolidate", f"reconciled {sum(1 for m in memories if m[1] in RECONCILED_TYPES)} feedback/project memories against {len(files)} instruction file(s); CLAUDE.md is never edited")

    def prune(self) -> None:
        self.log(PhaseStarted("prune", "index under 200 lines / 25,000 characters, one-line entries, no dangling links"))
        check_cancel(self.cancel)
        memories = {m.relpath: block_of(m) for m in self.memories if self.ws.exists(m.relpath) and m.sha256 != ""}
        # The last phase: what parsing found of each memory is no longer needed, and at 100,000
        # memories it is ~150 MB that the index edits below would add to.
        self.memories = []
        pi = PruneInput(memories, dict(self.merged_into), set(self.hubs))
        before = set(self.ws.changed())
        prune_index(self.ws, pi, self.log, self.findings, self.progress("prune"))
        touched = [r for r in self.ws.changed() if r not in before or r == INDEX_NAME]
        self.log(PhaseFinished("prune", f"{len(touched)} file(s) changed for the index"))


def consolidate_offline(
    ctx: DreamContext,
    now: datetime,
    emit: Emit | None = None,
    cancel: threading.Event | None = None,
    *,
    max_deletions: int = DEFAULT_MAX_DELETIONS,
) -> DreamPlan:
    """Run the four phases over ``ctx.memory_dir`` and return the plan (nothing is written).

    ``emit`` receives each event as it happens (from the calling thread); ``cancel`` is checked
    between steps. Raises ``DreamCancelled``, ``MemoryDirError`` (no memory dir).
    """
    from memtui.core.memory.memories import MemoryDirError

    if not ctx.memory_dir.is_dir():
        raise MemoryDirError(2, "memory dir does not exist", str(ctx.memory_dir))
    with gc_paused():  # 20,000 memories' facts, events and findings: no cyclic collection walking them meanwhile
        return _consolidate(ctx, now, emit, cancel, max_deletions)


def _consolidate(ctx: DreamContext, now: datetime, emit: Emit | None, cancel: threading.Event | None, max_deletions: int) -> DreamPlan:
    run = _Run(ctx, now, emit or (lambda e: None), cancel, max_deletions)
    run.orient()
    check_cancel(cancel)
    run.gather()
    check_cancel(cancel)
    run.consolidate()
    check_cancel(cancel)
    run.prune()
    n = len(run.ws.changed())
    title = f"Dream (offline): {n} file{'s' if n != 1 else ''}" if n else "Dream (offline): nothing to change"
    return run.ws.to_plan(title, run.findings, run.log.events, "offline")
