"""The Prune phase of the offline consolidator (docs/behaviour.md §8, §4.4): the index ``MEMORY.md`` back
under the agent's cap, one line per memory, no dangling pointers.

In order, each step only where it has a reason:

1. a line whose links all point at files that no longer exist is dropped — or, when its file
   was merged into another that has no line yet, pointed at that file;
2. every memory no index line reaches gets ``- [name](file.md) — description``, under the
   heading of its type when the index has one, else at the end (``index_edit.add_entries``);
3. an entry line over 150 characters (the reference's guidance) gets its hook cut; when the
   cut text is not already in the memory, it is appended to the memory first;
4. while the index is over 200 lines / 25,000 UTF-16 units (the reference's load cap), the
   entry lines of the largest memory type move, whole, into a **hub** file
   ``index-<type>.md`` (a memory of that type listing them), and the index links the hub (under
   that type's heading, when it has one):
   detail moves into a topic file, no memory is deleted to make room.

Hub files carry ``generated-by: memtui dream`` in their frontmatter; their links count as
indexed. Team memory (``team/``) and its index are never touched.
"""

from __future__ import annotations

import os
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from memtui.core.base.wording import counted
from memtui.core.doctor.content import normalize_prose
from memtui.core.doctor.index_checks import ENTRY_LINE, shorten_line
from memtui.core.dream.events import Emit, Finding, Phase, ProposedChange
from memtui.core.dream.merge import append_block
from memtui.core.dream.plan import Workspace
from memtui.core.memory.frontmatter import parse_frontmatter
from memtui.core.memory.index import (
    INDEX_NAME,
    MAX_INDEX_LINES,
    MAX_INDEX_UNITS,
    markdown_chars,
    parse_entries,
    truncate_index,
)
from memtui.core.writes.index_edit import (
    MAX_ENTRY_CHARS,
    add_entries,
    add_entry,
    entry_line,
    link_target,
)
from memtui.core.memory.memories import MEMORY_TYPES
from memtui.core.writes.rewrite import newline_of

HUB_PREFIX = "index-"
HUB_MARK = "generated-by: memtui dream"
PHASE: Phase = "prune"
MAX_MARKDOWN_CHARS = 2 * 1024 * 1024
"""The most characters of index lines (``MEMORY.md`` and the hubs) that are not plain
``- [Title](file.md) — hook`` entries the Prune phase parses (2 Mi, memtui's choice: about 3 s
of markdown-it; see ``markdown_chars``). Past it the phase leaves the index and the hubs as they
are, with an ``index-over-cap`` finding (a one-line index of 20 MB is 15 s of parsing)."""
MAX_PRUNE_CHARS = 16 * 1024 * 1024
"""The most characters of ``MEMORY.md`` and the hubs together the Prune phase edits (16 Mi,
memtui's choice: 200,000 entry lines of 80 characters, twice the index of the 100,000-memory
benchmark; a plan over 20 MB of one-line entries needs about 7 s and 570 MB). Past it the phase
leaves them as they are, with an ``index-over-cap`` finding."""


def hub_relpath(block: str) -> str:
    """``index-<block>.md`` (``block``: a memory type or ``untyped``/a declared type)."""
    return f"{HUB_PREFIX}{block}.md"


def is_hub(relpath: str, text: str | None) -> bool:
    """A hub written by a dream: ``index-*.md`` at the top of the memory dir with the mark."""
    return "/" not in relpath and relpath.startswith(HUB_PREFIX) and text is not None and HUB_MARK in text.split("\n---", 1)[0]


def _hub_text(block: str) -> str:
    kind = block if block in MEMORY_TYPES else "reference"
    return (
        f"---\nname: {block.capitalize()} memories (index)\n"
        f"description: One line per {block} memory that MEMORY.md has no room for (the agent loads only its first 200 lines / 25,000 characters)\n"
        f"type: {kind}\n{HUB_MARK}\n---\n\n"
        f"Index entries moved here by a dream so that MEMORY.md stays under the agent's cap.\n\n"
    )


def _hub_hook(block: str) -> str:
    return f"one line per {block} memory that MEMORY.md has no room for"


@dataclass
class PruneInput:
    """``memories``: relpath → type block of every memory this index covers that exists after
    the consolidation (hubs included); ``merged_into``: deleted relpath → the file it was
    merged into; ``hubs``: relpaths of existing hubs."""

    memories: dict[str, str]
    merged_into: dict[str, str] = field(default_factory=dict)
    hubs: set[str] = field(default_factory=set)


class _IndexLinks:
    """The links of the index's (and the hubs') lines during one prune: each distinct line is
    parsed once (``parse_entries`` of the line alone: entries are found line by line, so this
    is the same result) and a text read again unchanged is not walked again. The steps below
    re-read the index after every edit; with a bounded cache an index of 90,000 lines was
    parsed again on every one of them."""

    def __init__(self) -> None:
        self._lines: dict[str, tuple[tuple[str, str | None], ...]] = {}
        self._texts: dict[int, tuple[str, dict[int, tuple[tuple[str, str | None], ...]]]] = {}
        self._names: dict[str, frozenset[str] | None] = {}  # folder (relative) -> the names in it, None: not listable

    def may_exist(self, memory_dir: Path, rel: str) -> bool:
        """Whether a name ``rel`` (below ``memory_dir``) is in its folder's listing (each
        folder listed once): ``False`` means it does not exist; ``True`` that it may (a link
        may lead nowhere). A ``stat`` per dead link is left for the names that are listed."""
        folder, _, name = rel.rpartition("/")
        if folder not in self._names:
            try:
                self._names[folder] = frozenset(os.listdir(memory_dir / folder if folder else memory_dir))
            except FileNotFoundError:
                self._names[folder] = frozenset()
            except OSError:  # not a folder, not readable: the stat tells
                self._names[folder] = None
        names = self._names[folder]
        return names is None or name in names

    def by_line(self, text: str) -> dict[int, tuple[tuple[str, str | None], ...]]:
        """Line number (1-based) → ``(target, relpath)`` of each link on it, for lines that
        have any."""
        held = self._texts.get(id(text))
        if held is not None and held[0] is text:
            return held[1]
        memo = self._lines
        out: dict[int, tuple[tuple[str, str | None], ...]] = {}
        for number, line in enumerate(text.split("\n"), start=1):
            if "](" not in line:
                continue
            links = memo.get(line)
            if links is None:
                links = memo[line] = tuple((e.target, e.relpath) for e in parse_entries(line, ""))
            if links:
                out[number] = links
        self._texts[id(text)] = (text, out)
        return out


def _title_hook(ws: Workspace, rel: str) -> tuple[str, str | None]:
    data = parse_frontmatter(ws.get(rel) or "").data
    name, desc = data.get("name"), data.get("description")
    title = str(name) if isinstance(name, (str, int, float)) and str(name).strip() else rel.rsplit("/", 1)[-1].removesuffix(".md")
    return title, (str(desc) if isinstance(desc, (str, int, float)) else None)


def _exists(ws: Workspace, rel: str, memo: _IndexLinks | None = None) -> bool:
    if ws.known(rel):
        return ws.get(rel) is not None
    if ws.found(rel):
        return True
    if memo is not None and not memo.may_exist(ws.memory_dir, rel):
        return False
    return os.path.exists(ws.memory_dir / rel)


def _fix_links(ws: Workspace, rel: str, pi: PruneInput, linked: set[str], emit: Emit, memo: _IndexLinks) -> None:
    """Step 1 on file ``rel`` (the index or a hub)."""
    text = ws.get(rel)
    if text is None:
        return
    by_line = memo.by_line(text)
    lines = text.split("\n")
    dropped: list[str] = []
    moved: list[str] = []
    gone: set[int] = set()  # line numbers dropped
    for number in sorted(by_line, reverse=True):
        links = by_line[number]
        if any(r is None for _, r in links) or any(_exists(ws, r, memo) for _, r in links if r is not None):
            continue
        targets = {pi.merged_into.get(r or "") for _, r in links}
        target = next(iter(targets)) if len(targets) == 1 else None
        if target is not None and target not in linked:
            line = lines[number - 1]
            for old, _ in links:
                line = line.replace(f"]({old})", f"]({link_target(target, '')})")
            lines[number - 1] = line
            linked.add(target)
            moved.append(f"{links[0][0]} → {target}")
        else:
            gone.add(number)
            dropped.append(links[0][0])
    if gone:  # one pass over the lines (a `del` per line would move the rest of the list each time)
        lines = [line for number, line in enumerate(lines, start=1) if number not in gone]
    if dropped or moved:
        parts = []
        if dropped:
            parts.append(f"dropped {len(dropped)} line(s) linking to files that do not exist ({', '.join(sorted(dropped)[:5])}{'…' if len(dropped) > 5 else ''})")
        if moved:
            parts.append(f"pointed {len(moved)} link(s) at the file they were merged into ({', '.join(sorted(moved)[:5])})")
        reason = "; ".join(parts)
        ws.set(rel, "\n".join(lines), reason)
        emit(ProposedChange(PHASE, rel, "modify", reason))


def _linked(ws: Workspace, rels: list[str], memo: _IndexLinks) -> set[str]:
    out: set[str] = set()
    for rel in rels:
        text = ws.get(rel)
        if text is not None:
            out.update(r for links in memo.by_line(text).values() for _, r in links if r is not None)
    return out


def _append_lines(text: str, new_lines: list[str]) -> str:
    nl = newline_of(text) if text else "\n"
    if text and not text.endswith("\n"):
        text += nl
    return text + "".join(f"{line}{nl}" for line in new_lines)


def prune_index(ws: Workspace, pi: PruneInput, emit: Emit, findings: list[Finding], progress: Callable[[int, int], None]) -> None:
    """Run steps 1–4 (module doc) on ``MEMORY.md`` and the hubs, editing ``ws``; none when they
    are over ``MAX_PRUNE_CHARS``, or their lines that are not plain entries over
    ``MAX_MARKDOWN_CHARS``."""
    index = INDEX_NAME
    hubs = sorted(pi.hubs)
    texts = [text for text in (ws.get(rel) for rel in (index, *hubs)) if text is not None]
    size = sum(len(text) for text in texts)
    heavy = sum(markdown_chars(text) for text in texts) if size <= MAX_PRUNE_CHARS else 0
    if size > MAX_PRUNE_CHARS or heavy > MAX_MARKDOWN_CHARS:
        held = (f"{size:,} characters, over the {MAX_PRUNE_CHARS:,} the dream edits" if size > MAX_PRUNE_CHARS else
                f"{heavy:,} characters of lines that are not `- [Title](file.md) — hook` entries, over the {MAX_MARKDOWN_CHARS:,} the dream parses")
        findings.append(Finding(PHASE, "index-over-cap", index, f"{INDEX_NAME} and its hubs hold {held}: left as they are; edit {INDEX_NAME} by hand (one short line per memory)"))
        progress(4, 4)
        return
    memo = _IndexLinks()
    if ws.get(index) is None and pi.memories:
        findings.append(Finding(PHASE, "index-missing", index, "there is no MEMORY.md: the dream writes one"))
    # 1. dangling lines (index first, so a merged file's line is retargeted there, not in a hub)
    linked = _linked(ws, [index, *hubs], memo)
    for rel in (index, *hubs):
        _fix_links(ws, rel, pi, linked, emit, memo)
    progress(1, 4)
    # 2. missing entries
    linked = _linked(ws, [index, *hubs], memo)
    missing = sorted(rel for rel in pi.memories if rel not in linked)
    if missing:
        new_lines: list[tuple[str, str]] = []
        for rel in missing:
            title, hook = _title_hook(ws, rel)
            if rel in pi.hubs:
                hook = _hub_hook(pi.memories[rel])
            new_lines.append((pi.memories[rel], entry_line(title, rel, hook, "")))
        reason = f"added {len(missing)} entr{'y' if len(missing) == 1 else 'ies'} for memories no index line reached ({', '.join(missing[:3])}{'…' if len(missing) > 3 else ''})"
        ws.set(index, add_entries(ws.get(index) or "", new_lines), reason)
        emit(ProposedChange(PHASE, index, "modify" if ws.original(index) is not None else "create", reason))
    progress(2, 4)
    # 3. long lines
    _shorten_lines(ws, index, emit, findings, memo)
    progress(3, 4)
    # 4. the cap
    _fold_into_hubs(ws, pi, emit, findings, memo)
    progress(4, 4)


def _shorten_lines(ws: Workspace, index: str, emit: Emit, findings: list[Finding], memo: _IndexLinks) -> None:
    text = ws.get(index)
    if text is None:
        return
    lines = text.split("\n")
    by_line = {n: [r for _, r in links] for n, links in memo.by_line(text).items()}
    cut = 0
    for number, raw in enumerate(lines, start=1):
        line = raw.rstrip("\r")
        if len(line) <= MAX_ENTRY_CHARS:
            continue
        rels = by_line.get(number, [])
        short = shorten_line(line)
        m = ENTRY_LINE.match(line)
        target = rels[0] if len(rels) == 1 else None
        if short is None or m is None or target is None or not _exists(ws, target, memo) or not target.endswith(".md"):
            findings.append(Finding(PHASE, "index-line-long-kept", index, f"line {number} has {len(line)} characters but is not a `- [..](..) — hook` entry of one memory: left as written", number))
            continue
        hook = m.group("hook")
        memory_text = ws.get(target) or ""
        if normalize_prose(hook) not in normalize_prose(memory_text):
            reason = f"the detail of its {len(line)}-character index line moved here"
            ws.set(target, append_block(memory_text, [hook]), reason, mtime=ws.mtimes.get(target))
            emit(ProposedChange(PHASE, target, "modify", reason))
        lines[number - 1] = short + ("\r" if raw.endswith("\r") else "")
        cut += 1
    if cut:
        reason = f"shortened {cut} line(s) over {MAX_ENTRY_CHARS} characters (the reference's one-line guidance)"
        ws.set(index, "\n".join(lines), reason)
        emit(ProposedChange(PHASE, index, "modify", reason))


def _fold_into_hubs(ws: Workspace, pi: PruneInput, emit: Emit, findings: list[Finding], memo: _IndexLinks) -> None:
    index = INDEX_NAME
    text = ws.get(index)
    if text is None or not truncate_index(text).truncated_by:
        return
    while True:
        text = ws.get(index) or ""
        trunc = truncate_index(text)
        if not trunc.truncated_by:
            break
        groups: dict[str, list[int]] = defaultdict(list)
        by_line = {n: [r for _, r in links] for n, links in memo.by_line(text).items()}
        lines = text.split("\n")
        for number, rels in by_line.items():
            if len(rels) != 1 or rels[0] is None or rels[0] in pi.hubs or rels[0] not in pi.memories:
                continue
            if not ENTRY_LINE.match(lines[number - 1].rstrip("\r")) and not lines[number - 1].lstrip().startswith(("- [", "* [")):
                continue
            groups[pi.memories[rels[0]]].append(number)
        if not groups:
            findings.append(Finding(PHASE, "index-over-cap", index, f"MEMORY.md stays at {trunc.lines} lines / {trunc.units:,} characters: what is left are not entry lines of memories; edit it by hand"))
            break
        block = max(groups, key=lambda b: (len(groups[b]), b))
        numbers = set(groups[block])
        hub = hub_relpath(block)
        hub_text = ws.get(hub)
        created = hub_text is None
        moved = [lines[n - 1].rstrip("\r") for n in sorted(numbers)]
        ws.set(hub, _append_lines(hub_text if hub_text is not None else _hub_text(block), moved), f"holds the index lines of {counted(len(moved), f'{block} memory', f'{block} memories')} MEMORY.md has no room for")
        emit(ProposedChange(PHASE, hub, "create" if created else "modify", f"{counted(len(moved), f'{block} index line')} moved here"))
        kept = [line for n, line in enumerate(lines, start=1) if n not in numbers]
        new_text = "\n".join(kept)
        if hub not in {r for rs in by_line.values() for r in rs}:
            new_text = add_entry(new_text, entry_line(f"{block.capitalize()} memories (index)", hub, _hub_hook(block), ""), block)
            pi.hubs.add(hub)
            pi.memories[hub] = block
        ws.set(index, new_text, f"at {trunc.lines} lines / {trunc.units:,} characters it was over the agent's cap ({MAX_INDEX_LINES} / {MAX_INDEX_UNITS:,}): the {counted(len(moved), f'{block} entry line')} moved into {hub}")
        emit(ProposedChange(PHASE, index, "modify", f"{counted(len(moved), f'{block} entry', f'{block} entries')} moved to {hub}"))
