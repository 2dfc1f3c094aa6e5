"""The text recall injects into the conversation (docs/behaviour.md §6 "Injection").

For each picked memory the reference (``readMemoriesForSurfacing`` + the ``relevant_memories``
attachment renderer) does:

1. read the file like ``readFileInRange(path, 0, 200, 4096, {truncateOnByteLimit: true})``:
   strip a UTF-8 BOM and ``\\r``, split on ``\\n`` (a final newline yields a last empty line,
   as JavaScript's ``split`` does), keep at most **200 lines** and stop at the last complete
   line that keeps the selected text within **4,096 bytes** (UTF-8);
2. when cut, append ``\\n\\n> This memory file was truncated (4096 byte limit). Use the Read
   tool to view the complete file at: <path>`` (``first 200 lines`` when cut by lines);
3. head it with ``memoryHeader``: for a memory older than one day the staleness caveat
   (``memtui.core.memory.age.stale_caveat``) + ``\\n\\nMemory: <path>:``, else
   ``Memory (saved today|yesterday): <path>:``;
4. make one hidden user message ``<header>\\n\\n<content>`` and wrap it as a system reminder:
   ``<system-reminder>\\n…\\n</system-reminder>``.

``<path>`` is the absolute path of the file. memtui shows the messages one after the other,
separated by a blank line (in the agent they are separate messages of one attachment).

That is the seed design's text. A release words it its own way (``Behaviour.injection``):
Claude Code heads every memory ``Memory: <path>:`` (after the age caveat when older than a
day), cleans the text (``agent_sanitize``), wraps nothing, and sends all of them as one
system-role message that starts ``Retrieved for possible relevance — …``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from string import Template

from memtui.core.base.safe_read import read_head_regular, read_regular
from memtui.core.memory.age import age_days, age_label, stale_caveat
from memtui.core.memory.headers import MemoryHeader
from memtui.core.memory.memories import MAX_MEMORY_BYTES, RECALL_MAX_BYTES, RECALL_MAX_LINES
from memtui.core.base.units import agent_sanitize, utf16_len
from memtui.core.places.behaviour import InjectionFormat
from memtui.core.places.releases.seed import SEED

# The seed design's injection text.
SEED_INJECTION: InjectionFormat = SEED.injection

# The reference's FILE_READ_TOOL_NAME, named in the truncation note.
READ_TOOL_NAME = "Read"


@dataclass(frozen=True, slots=True)
class InjectedMemory:
    """One surfaced memory: ``path`` (absolute), ``header`` (step 3), ``content`` (steps 1–2),
    ``message`` (step 4, the exact text the model sees), ``truncated_by``: ``"bytes"``,
    ``"lines"`` or ``None``, ``error``: why the file could not be read (then ``message`` is
    ``""`` and the reference drops the memory)."""

    path: Path
    header: str
    content: str
    message: str
    truncated_by: str | None
    error: str | None = None

    @property
    def units(self) -> int:
        """``content`` length in UTF-16 units: what counts against the session budget."""
        return utf16_len(self.content)


def read_for_injection(
    path: Path, max_lines: int = RECALL_MAX_LINES, max_bytes: int = RECALL_MAX_BYTES, *, sanitize: bool = False
) -> tuple[str, str | None]:
    """Steps 1–2 for one file: ``(content, truncated_by)``. 200 lines / 4,096 bytes: the
    reference's ``MAX_MEMORY_LINES`` / ``MAX_MEMORY_BYTES``; ``sanitize``: the kept text goes
    through ``agent_sanitize`` before the truncation note. Raises ``OSError``."""
    text = read_head_regular(path, MAX_MEMORY_BYTES)[0].decode("utf-8", errors="replace")  # far past 4,096 bytes / 200 lines
    text = text.removeprefix("\ufeff")
    lines = text.replace("\r", "").split("\n")
    selected: list[str] = []
    size = 0
    by: str | None = None
    for i, line in enumerate(lines):
        if i >= max_lines:
            by = "lines"
            break
        add = len(line.encode("utf-8")) + (1 if selected else 0)
        if size + add > max_bytes:
            by = "bytes"
            break
        selected.append(line)
        size += add
    content = "\n".join(selected)
    if sanitize:
        content = agent_sanitize(content)
    if by is not None:
        limit = f"{max_bytes} byte limit" if by == "bytes" else f"first {max_lines} lines"
        content += (
            f"\n\n> This memory file was truncated ({limit}). Use the {READ_TOOL_NAME} tool"
            f" to view the complete file at: {path}"
        )
    return content, by


def memory_header(path: Path, mtime: float, now: datetime, injection: InjectionFormat = SEED_INJECTION) -> str:
    """Step 3: the release's ``memoryHeader`` for a file of mtime ``mtime`` (epoch s)."""
    days = age_days(mtime, now)
    caveat = stale_caveat(days)
    if caveat:
        return Template(injection.stale_header).substitute(caveat=caveat, path=path, label=age_label(days))
    return Template(injection.fresh_header).substitute(path=path, label=age_label(days), caveat="")


def system_reminder(text: str) -> str:
    """The reference's ``wrapInSystemReminder``."""
    return f"<system-reminder>\n{text}\n</system-reminder>"


def inject_one(header: MemoryHeader, now: datetime, injection: InjectionFormat = SEED_INJECTION) -> InjectedMemory:
    """Steps 1–4 for one memory; an unreadable file gives an ``InjectedMemory`` with
    ``error`` set (the reference silently drops it)."""
    path = Path(header.path)
    head = memory_header(path, header.mtime, now, injection)
    try:
        content, by = read_for_injection(path, sanitize=injection.sanitize)
    except OSError as exc:
        return InjectedMemory(path, head, "", "", None, f"{exc.strerror or exc}")
    return InjectedMemory(path, head, content, Template(injection.wrap).substitute(text=f"{head}\n\n{content}"), by)


def inject(headers: Sequence[MemoryHeader], now: datetime, injection: InjectionFormat = SEED_INJECTION) -> list[InjectedMemory]:
    """``inject_one`` for each picked memory, in pick order."""
    return [inject_one(h, now, injection) for h in headers]


def injected_text(memories: Sequence[InjectedMemory], injection: InjectionFormat = SEED_INJECTION) -> str:
    """The messages of the readable memories as the release sends them: its prefix, then the
    messages joined by its joiner (the seed: separate messages, shown a blank line apart);
    ``""`` for none."""
    messages = [m.message for m in memories if m.error is None]
    if not messages:
        return ""
    return injection.prefix + injection.joiner.join(messages)
