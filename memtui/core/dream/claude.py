"""The Claude consolidator: the dream as an agent run (docs/behaviour.md §8, seed chapter §17.8 "Dream
Agent 的 Bash 被限制为只读命令，Write 只能写记忆目录").

The agent (``memtui.core.agent.run_agent``) gets the docs/behaviour.md §7 tool policy — Read/Grep/Glob
anywhere, read-only Bash by allow-list, Write/Edit only inside one root through
``memtui.core.writes.safepath`` — but that root is a **staging copy** of the memory dir in memtui's
state dir, never the memory dir itself. The model is never told about the copy: every text it
reads names the live memory dir, and the tools map that dir to the copy and back
(``memtui.core.agent.alias.PathAlias`` on the policy). When the run ends, the difference
staging → real becomes the plan, previewed and applied like the offline one (and undone the
same way).

- The agent cannot delete; it merges a duplicate by writing the merged text into the older
  file and **emptying** the newer one: an emptied file becomes a delete in the plan (its
  before-image goes to the journal, i.e. the trash). At most ``max_deletions`` (the rest stay,
  as a finding). Changes below ``team/`` are dropped (shared memory; the offline rule too).
- Its reasons: the final message's ``- <relpath>: <reason>`` lines; else the tool calls that
  wrote the file.
- Phases: the agent starts each with a line ``Phase: <name>``; they become events.
- An API error raises ``DreamError`` (nothing is planned); cancel raises ``DreamCancelled``;
  the turn limit keeps what was written, with a finding.
"""

from __future__ import annotations

import os
import re
import secrets
import shutil
import threading
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memtui.core.base.safe_read import FileTooLargeError, read_regular
from memtui.core.memory.catalog import iso_utc
from memtui.core.dream.events import (
    PHASES,
    DreamCancelled,
    DreamError,
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
)
from memtui.core.dream.autodream import counted_sessions
from memtui.core.dream.gates import DreamContext, sessions_since
from memtui.core.dream.lock import LOCK_NAME, read_lock
from memtui.core.dream.plan import DEFAULT_MAX_DELETIONS, DreamPlan, Workspace
from memtui.core.dream.prompt import DreamRequest, build_dream_request, instructions_block
from memtui.core.memory.index import MAX_INDEX_LINES, MAX_INDEX_UNITS, format_file_size
from memtui.core.writes.index_edit import MAX_ENTRY_CHARS
from memtui.core.memory.memories import MAX_MEMORY_BYTES, TEAM_DIR
from memtui.core.places.release import release_of

if TYPE_CHECKING:
    import anthropic

    from memtui.core.agent import AgentEvent, PathAlias

# memtui's choice: enough requests to orient, gather, merge a few files and rewrite the index.
# (The extractor's limit is 5, docs/behaviour.md §7; a dream does more.)
DEFAULT_MAX_TURNS = 30
_PHASE_LINE = re.compile(r"^\W*phase\W*(orient|gather|consolidate|prune)\b", re.IGNORECASE | re.MULTILINE)
_REASON_LINE = re.compile(r"^\s*[-*]\s+`?([^`:\s][^`:]*?\.md)`?\s*[:—–-]\s+(.+?)\s*$", re.MULTILINE)

SYSTEM_PROMPT = f"""You are consolidating a coding agent's memory: a directory of Markdown memory files \
(one memory per file, YAML frontmatter with name, description, type — user, feedback, project or \
reference) and an index MEMORY.md (no frontmatter; one line per memory, `- [Title](file.md) — hook`, \
under ~{MAX_ENTRY_CHARS} characters).

Work in four phases. Start each with a line `Phase: <name>`.
1. Orient: list the memory directory, read MEMORY.md, skim the memory files.
2. Gather: look for recent signal — the session transcripts named below (JSONL) and memories that \
have drifted from what the transcripts show. Grep them for facts worth keeping; do not read whole \
transcripts.
3. Consolidate: merge duplicate memories into the existing, older file (keep every distinct fact); \
rewrite relative dates ("yesterday", "next Thursday") as absolute YYYY-MM-DD dates, reading them \
against the file's modification time; correct or remove facts that newer evidence contradicts.
4. Prune: keep MEMORY.md under {MAX_INDEX_LINES} lines and {MAX_INDEX_UNITS:,} characters, one short \
line per memory; remove links to files that do not exist; shorten long lines (move detail into the \
memory file).

Rules:
- Write and Edit work only inside the memory directory given below. Bash runs only read-only commands \
(ls, find, grep, cat, head, tail, wc, stat, file) with no redirection or pipes to writers.
- You cannot delete a file. To remove a memory you merged into another, Write it with empty content; \
it will be moved to the trash. Never empty a file whose facts are not kept elsewhere.
- Never touch a file you have no reason to change. Leave the team/ directory alone.
- Finish with a short summary that lists every file you changed, one per line: `- <file>: <why>`."""


def _user_message(ctx: DreamContext, now: datetime, sessions: list[Path], last: float | None) -> str:
    listed = "\n".join(f"- {p}" for p in sessions[:50]) or "- (none)"
    more = f"\n- … and {len(sessions) - 50} more" if len(sessions) > 50 else ""
    return (
        f"Today is {now.date().isoformat()}.\n"
        f"The memory directory is {ctx.memory_dir}\n"
        f"Last consolidated: {'never' if last is None else iso_utc(last)}.\n"
        f"Session transcripts since then:\n{listed}{more}\n\n"
        "Consolidate the memory now."
    )


# The staging copy's caps: a memory over 1 MiB is pasted material (memtui reads no more of one,
# ``MAX_MEMORY_BYTES``); 64 MiB in all bounds the copy's disk use
# (a sparse 20 GB file, or one that grows while it is copied, never fills the disk).
MAX_STAGED_FILE_BYTES = 1024 * 1024
MAX_STAGED_BYTES = 64 * 1024 * 1024


def _snapshot(memory_dir: Path, staging: Path) -> tuple[dict[str, bytes], list[tuple[str, str]]]:
    """Copy the memory dir into ``staging`` and return every copied regular file's bytes by
    relpath, and what was left out as ``(relpath, why)``.

    Copied: folders, symlinks (as links, never followed), regular files of at most
    ``MAX_STAGED_FILE_BYTES`` each while the total stays within ``MAX_STAGED_BYTES``, with
    their mode and mtime. Left out: the lock, FIFOs, devices and sockets, files over a cap,
    unreadable files — the agent never sees them and the plan never changes them.
    Raises ``OSError`` when the copy itself cannot be written.
    """
    staged: dict[str, bytes] = {}
    left: list[tuple[str, str]] = []
    total = 0
    staging.mkdir(parents=True)
    for dirpath, dirnames, filenames in os.walk(memory_dir):  # a linked folder is listed, not walked
        dirnames.sort()
        here = Path(dirpath)
        into = staging / here.relative_to(memory_dir)
        for name in [*dirnames, *sorted(filenames)]:
            src, dst = here / name, into / name
            rel = src.relative_to(memory_dir).as_posix()
            if src.is_symlink():
                os.symlink(os.readlink(src), dst)
                continue
            if name in dirnames:
                dst.mkdir()
                continue
            if rel == LOCK_NAME:
                continue
            try:
                data, st = read_regular(src, MAX_STAGED_FILE_BYTES)
            except FileTooLargeError:
                size = src.stat().st_size if src.exists() else 0
                left.append((rel, f"{format_file_size(size)}, over the {format_file_size(MAX_STAGED_FILE_BYTES)} cap of the dream's copy"))
                continue
            except OSError as exc:  # a FIFO, a device, a socket, no permission
                left.append((rel, exc.strerror or str(exc)))
                continue
            if total + len(data) > MAX_STAGED_BYTES:
                left.append((rel, f"the dream's copy reached its {format_file_size(MAX_STAGED_BYTES)} cap"))
                continue
            fd = os.open(dst, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0), st.st_mode & 0o777)
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
            os.utime(dst, ns=(st.st_atime_ns, st.st_mtime_ns))
            staged[rel] = data
            total += len(data)
    return staged, left


def _files(root: Path) -> dict[str, bytes]:
    out: dict[str, bytes] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for name in filenames:
            path = Path(dirpath) / name
            if path.is_symlink() or not path.is_file():
                continue
            rel = path.relative_to(root).as_posix()
            if rel == LOCK_NAME:
                continue
            try:
                out[rel] = read_regular(path, MAX_MEMORY_BYTES)[0]
            except OSError:  # a FIFO, a device, over the cap: never read
                continue
    return out


class ClaudeConsolidator:
    """A ``Consolidator`` (see ``memtui.core.dream.run``) backed by the Messages API.

    ``client``: an ``anthropic.Anthropic`` (default: ``memtui.core.recall.make_client()`` from
    the standard credential variables); ``model``: default the settings ``model``, else
    ``claude-sonnet-5-5`` (docs/behaviour.md §6); ``max_turns``: ``DEFAULT_MAX_TURNS``.
    """

    def __init__(
        self,
        *,
        client: anthropic.Anthropic | None = None,
        model: str | None = None,
        max_turns: int = DEFAULT_MAX_TURNS,
        max_deletions: int = DEFAULT_MAX_DELETIONS,
        client_factory: Callable[[], anthropic.Anthropic] | None = None,
    ) -> None:
        self.client = client
        self.model = model
        self.max_turns = max_turns
        self.max_deletions = max_deletions
        self.client_factory = client_factory
        # The last request a release's dream sent (the claude flavor), for display.
        self.last_request: DreamRequest | None = None

    def _model(self, ctx: DreamContext) -> str:
        from memtui.core.recall.claude import DEFAULT_MODEL

        if self.model:
            return self.model
        if ctx.settings is not None:
            value, _ = ctx.settings.get("model")
            if isinstance(value, str) and value.strip():
                return value.strip()
        return DEFAULT_MODEL

    def __call__(self, ctx: DreamContext, now: datetime, emit: Emit, cancel: threading.Event | None) -> DreamPlan:
        """Run the agent on a staging copy and return the plan. Raises ``DreamError`` (API
        error, no credentials), ``DreamCancelled``, ``OSError`` (the staging copy failed)."""
        from memtui.core.agent import DEFAULT_MAX_TOKENS, PathAlias, ToolPolicy, run_agent

        log = emit if isinstance(emit, EventLog) else EventLog(emit)
        client = self.client
        if client is None:
            import anthropic

            from memtui.core.recall.claude import (
                CREDENTIAL_ENV,
                has_credentials,
                make_client,
            )

            if self.client_factory is None and not has_credentials():
                raise DreamError(f"the claude consolidator needs an API credential ({', '.join(CREDENTIAL_ENV)}); the offline one needs none")
            try:
                client = (self.client_factory or make_client)()
            except anthropic.AnthropicError as exc:
                raise DreamError(f"the claude consolidator cannot start: {exc}") from exc
        root = ctx.dream_state_dir / "staging" / f"{now.strftime('%Y%m%dT%H%M%S')}-{secrets.token_hex(4)}"
        staging = root / "memory"
        release = release_of(ctx.flavor)
        try:
            before, left_out = _snapshot(ctx.memory_dir, staging)
            not_staged = [Finding("orient", "file-unreadable", rel, f"left out of the dream's copy ({why}): the agent does not see it and it stays as it is") for rel, why in left_out]
            for finding in not_staged:
                log(finding)
            alias = PathAlias(shown=ctx.memory_dir, actual=staging)
            tracker = _PhaseTracker(log, self.max_turns, alias, transcripts_dir=ctx.sessions_dir if release is not None else None)
            tracker.start("orient")
            if release is not None:
                request = build_dream_request(ctx, release, counted_sessions(ctx), staging_dir=staging, model=self.model,
                                              max_tokens=DEFAULT_MAX_TOKENS, instructions=instructions_block(ctx))
                self.last_request = request
                facts = release.dream
                cwd = ctx.project_root if ctx.project_root is not None and ctx.project_root.is_dir() else ctx.memory_dir
                policy = ToolPolicy(write_root=staging, alias=alias, cwd=cwd, write_suffixes=(".md",), remove_md=True,
                                    protected_dirs=facts.protected_subdirs, denials=release.denials(request.memory_dir))
                model, system, messages = request.model, request.system, [dict(m) for m in request.messages]
                log(LogLine("orient", "info", f"{release.cli} {release.version}'s dream prompt, {len(request.session_ids)} session(s), model {model} ({request.model_source})"))
            else:
                last = read_lock(ctx.memory_dir).last_consolidated_at
                ids, _ = sessions_since(ctx, last)
                sessions = [ctx.sessions_dir / f"{sid}.jsonl" for sid in ids]
                policy = ToolPolicy(write_root=staging, alias=alias, cwd=ctx.memory_dir)
                model, system = self._model(ctx), SYSTEM_PROMPT
                messages = [{"role": "user", "content": _user_message(ctx, now, sessions, last)}]
            run = run_agent(
                client,
                model=model,
                system=system,
                messages=messages,
                policy=policy,
                max_turns=self.max_turns,
                on_event=tracker.on_agent_event,
                cancel=cancel,
            )
            if run.stop_reason == "cancelled":
                raise DreamCancelled("the dream was cancelled")
            if run.error is not None:
                log(Finding(tracker.phase, "agent-error", None, run.error))
                raise DreamError(f"the claude consolidator failed: {run.error}")
            findings = [*not_staged, *tracker.findings]
            if run.stop_reason == "max_turns":
                findings.append(Finding(tracker.phase, "agent-error", None, f"the agent stopped at the turn limit ({self.max_turns}); the plan holds what it wrote until then"))
            after = _files(staging)
            dp = self._plan(ctx, before, after, run.final_text, tracker, findings, log)
            tracker.finish_all()
            return DreamPlan(dp.plan, dp.reasons, dp.findings, tuple(log.events), "claude", request=self.last_request if release is not None else None)
        finally:
            shutil.rmtree(root, ignore_errors=True)

    def _plan(self, ctx: DreamContext, before: dict[str, bytes], after: dict[str, bytes], final_text: str, tracker: _PhaseTracker, findings: list[Finding], log: EventLog) -> DreamPlan:
        reasons = {m.group(1).strip(): m.group(2).strip() for m in _REASON_LINE.finditer(final_text)}
        ws = Workspace(ctx.memory_dir)
        for rel, data in before.items():
            ws.seed(rel, data)
        deletions = 0
        for rel in sorted(set(before) | set(after)):
            old, new = before.get(rel), after.get(rel)
            if old == new:
                continue
            if rel.startswith(f"{TEAM_DIR}/"):
                findings.append(Finding("prune", "team-untouched", rel, "the agent changed a team/ file: dropped (team memory is shared with others)"))
                continue
            why = reasons.get(rel) or reasons.get(Path(rel).name) or "; ".join(tracker.writes.get(rel, [])) or "changed by the agent"
            if new is not None and not new.strip() and old is not None:
                if deletions >= self.max_deletions:
                    findings.append(Finding("consolidate", "duplicate-deferred", rel, f"the agent emptied it, but this run reached its cap of {self.max_deletions} deletions: kept"))
                    continue
                deletions += 1
                ws.delete(rel, f"claude: {why} (emptied by the agent: moved to memtui's trash)")
                log(ProposedChange("consolidate", rel, "delete", why))
                continue
            if new is None:
                if rel not in tracker.removed or old is None:
                    continue  # only an allowed `rm` deletes; a file gone otherwise is not the agent's doing
                if deletions >= self.max_deletions:
                    findings.append(Finding("consolidate", "duplicate-deferred", rel, f"the agent removed it, but this run reached its cap of {self.max_deletions} deletions: kept"))
                    continue
                deletions += 1
                ws.delete(rel, f"claude: {why} (rm by the agent: moved to memtui's trash on apply)")
                log(ProposedChange("consolidate", rel, "delete", why))
                continue
            ws.set(rel, new.decode("utf-8", errors="surrogateescape"), f"claude: {why}")
            log(ProposedChange("consolidate", rel, "create" if old is None else "modify", why))
        n = len(ws.changed())
        title = f"Dream (claude): {n} file{'s' if n != 1 else ''}" if n else "Dream (claude): nothing to change"
        return ws.to_plan(title, findings, [], "claude")


class _PhaseTracker:
    """Turns the agent's events into dream events: ``Phase: x`` lines switch the phase, tool
    calls become file reads / findings, turns become progress. With ``transcripts_dir`` (a
    release's prompt, which asks for no phase lines) the phase follows the tool calls: a look
    at the transcripts is gather, a change of a memory file consolidate, of the index prune."""

    def __init__(self, log: EventLog, max_turns: int, alias: PathAlias, *, transcripts_dir: Path | None = None) -> None:
        self.log = log
        self.max_turns = max_turns
        # The model's inputs name the live dir (alias.shown); ``wrote``/``removed`` the staging copy.
        self.alias = alias
        self.phase: Phase = "orient"
        self.started: list[Phase] = []
        self.findings: list[Finding] = []
        self.writes: dict[str, list[str]] = {}
        self.removed: set[str] = set()
        self.transcripts_dir = transcripts_dir

    def start(self, phase: Phase) -> None:
        for p in PHASES[: PHASES.index(phase) + 1]:
            if p in self.started:
                continue
            if self.started:
                self.log(PhaseFinished(self.started[-1], "done"))
            self.started.append(p)
            self.log(PhaseStarted(p, {"orient": "the agent reads the memory dir", "gather": "the agent looks at recent sessions", "consolidate": "the agent merges and corrects", "prune": "the agent tidies the index"}[p]))
        self.phase = phase if PHASES.index(phase) >= PHASES.index(self.phase) else self.phase

    def finish_all(self) -> None:
        self.start("prune")
        self.log(PhaseFinished("prune", "done"))

    def on_agent_event(self, ev: AgentEvent) -> None:
        live, staging = self.alias.shown, self.alias.actual
        if ev.kind == "turn":
            self.log(Progress(self.phase, min(ev.turn, self.max_turns), self.max_turns))
            self.log(LogLine(self.phase, "debug", f"request {ev.turn}"))
        elif ev.kind == "text":
            for m in _PHASE_LINE.finditer(ev.text):
                self.start(m.group(1).lower())  # type: ignore[arg-type]
            for line in ev.text.strip().splitlines()[:20]:
                self.log(LogLine(self.phase, "info", line))
        elif ev.kind == "tool" and ev.tool_call is not None:
            call = ev.tool_call
            if call.is_error:
                f = Finding(self.phase, "agent-tool-refused", None, f"{call.summary}: {call.content.splitlines()[0] if call.content else call.code}")
                self.findings.append(f)
                self.log(f)
                return
            data: Any = call.input if isinstance(call.input, dict) else {}
            if self.transcripts_dir is not None:
                self._infer(call, data)
            self.log(LogLine(self.phase, "info", call.summary))
            for path in call.removed:
                rel = _rel(str(path), staging)
                self.removed.add(rel)
                self.writes.setdefault(rel, []).append(call.summary.replace(str(live) + "/", ""))
            if call.name == "Read":
                self.log(FileRead(self.phase, _rel(str(data.get("file_path", "")), live), len(call.content)))
            if call.wrote is not None:
                rel = _rel(str(call.wrote), staging)
                self.writes.setdefault(rel, []).append(call.summary.replace(str(live) + "/", ""))
        elif ev.kind == "done":
            self.log(LogLine(self.phase, "info", f"agent finished: {ev.text}"))

    def _infer(self, call: Any, data: dict[str, Any]) -> None:
        """The phase a tool call belongs to (see the class docstring)."""
        text = " ".join(str(v) for v in data.values())
        if call.wrote is not None:
            self.start("prune" if Path(str(call.wrote)).name == "MEMORY.md" else "consolidate")
        elif call.removed:
            self.start("consolidate")
        elif self.transcripts_dir is not None and str(self.transcripts_dir) in text and str(self.alias.shown) not in text:
            self.start("gather")


def _rel(path: str, root: Path) -> str:
    try:
        return Path(os.path.realpath(path)).relative_to(os.path.realpath(root)).as_posix()
    except ValueError:
        return path
