"""The claude extractor: a restricted agent that reads the recent conversation and writes
memories (docs/behaviour.md §7), run with the shared tool policy of :mod:`memtui.core.agent`.

- **Tools**: Read/Grep/Glob anywhere, Bash read-only by allow-list, Write/Edit only inside a
  *staging copy* of the memory dir (``<state>/memdirs/<slug>/extract/staging/<run>/``, checked
  by :func:`memtui.core.writes.safepath.validate_inside`). The model is never told about the
  copy: the prompt, the system text and the refusals name the live memory dir, as the CLI's
  do, and the tools map that dir to the copy and back
  (:class:`memtui.core.agent.alias.PathAlias` on the policy). memtui then turns what changed in
  the copy into proposals (new file → ``create``, changed file → ``update``), which go to the
  inbox or, with ``apply``, through the normal write path; the live dir is not written before
  that. Changes to ``MEMORY.md`` are ignored: memtui writes the index entry itself.
- **The request** (:class:`ExtractionAgentRequest`, :attr:`ClaudeExtractor.last_request`): what
  the model was sent, the memory dir it was shown and, separately, where the writes were staged.
- **At most 5 turns** (docs/behaviour.md §7). Reaching the limit is not a failure: what was written counts.
- **Instructions**: the four types with their body shapes and the "do not save" list of
  docs/behaviour.md §4.1, and the existing manifest (docs/behaviour.md §6 lines) pre-injected so the agent updates a memory
  rather than duplicating it.
- **Errors** (no credentials, API or network failure, refusal, cancel) raise ``ExtractorError``;
  the cursor then stays where it was.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memtui.core.agent import request_text
from memtui.core.base.safe_read import read_regular
from memtui.core.extract.autoextract import extraction_messages, extraction_prompt
from memtui.core.memory.memories import MAX_MEMORY_BYTES
from memtui.core.extract.base import (
    Draft,
    ExtractionRequest,
    ExtractorError,
    ExtractorName,
)
from memtui.core.memory.frontmatter import parse_frontmatter
from memtui.core.memory.index import INDEX_NAME
from memtui.core.writes.journal import sha256_hex
from memtui.core.memory.memories import MEMORY_TYPES, iter_memory_paths, parse_memory_type
from memtui.core.recall.manifest import build_manifest
from memtui.core.places.release import Release, dir_text
from memtui.core.places.slug import slugify
from memtui.core.places.statedir import memdir_state
from memtui.core.sessions.transcripts import Entry, is_human_turn

if TYPE_CHECKING:
    import anthropic

# docs/behaviour.md §7: the extractor runs at most 5 turns.
MAX_TURNS = 5
# memtui's choices: characters of conversation put into the prompt (the newest are kept), and
# of one tool result within it.
CONVERSATION_MAX_CHARS = 60_000
TOOL_RESULT_MAX_CHARS = 1_000

SYSTEM_PROMPT = """\
You are the memory extraction subagent of a coding agent. Read the recent conversation you are \
given and save what is worth remembering in future conversations to the memory directory \
{memory_dir}. You are a background helper: you never talk to the user, you only read and write \
memory files.

Tools: Read, Grep and Glob work anywhere; Bash runs read-only commands only (ls, find, grep, \
cat, head, tail, wc, stat, file — no redirection, no writers); Write and Edit work only inside \
{memory_dir}. You have at most {max_turns} turns, so be efficient: in your first turn Read every \
existing memory file you might update (in parallel); in your second turn Write or Edit every \
file at once (in parallel). Do not check your work afterwards.

Each memory is one Markdown file inside {memory_dir}, named <type>_<short_topic>.md, starting \
with this frontmatter:

---
name: <a short title>
description: <one line: what this memory is about; it is how the memory is found later>
type: <user | feedback | project | reference>
---

There are exactly four types:
- user: who the user is, their role, goals, knowledge and preferences. Body: free text.
- feedback: corrections the user made to your approach, and confirmations of approaches that \
worked (save both: only saving corrections makes you drift away from what the user already \
validated). Body: the rule, then a line starting **Why:** (the reason the user gave or the \
incident behind it), then a line starting **How to apply:** (when and where it applies).
- project: facts and decisions about the ongoing work that cannot be derived from the code or \
the git history (who does what, why, deadlines, incidents). Body: the fact, **Why:**, **How to \
apply:**. Convert relative dates to absolute dates (YYYY-MM-DD); today is {today}.
- reference: pointers to information in outside systems (issue trackers, dashboards, docs, \
channels) and what they are for. Body: free text.

Do NOT save:
- code patterns, conventions, architecture or file layout (they can be read from the code);
- git history or who changed what (git log has it);
- debugging recipes or fixes (the fix is in the code, the context in the commit message);
- anything already written in the project's instruction files (AGENT.md / CLAUDE.md);
- ephemeral task state: the current task, work in progress, temporary notes.

Before creating a memory, check the existing memories listed below: if one already covers the \
topic, update that file (Read it, then Edit it) instead of creating a duplicate. Never create \
or edit {index}: the index is maintained for you. If nothing in the conversation is worth \
remembering, write nothing and say so in one sentence."""


def _render_entry(entry: Entry) -> list[str]:
    lines: list[str] = []
    if entry.type == "user" and is_human_turn(entry):
        return [f"User: {entry.text.strip()}"]
    for block in entry.content:
        if block.type == "text" and block.text.strip() and entry.type == "assistant":
            lines.append(f"Assistant: {block.text.strip()}")
        elif block.type == "tool_use" and block.name:
            from memtui.core.agent import summarize

            lines.append(f"Assistant called {summarize(block.name, block.input)}")
        elif block.type == "tool_result":
            text = block.text.strip()
            if len(text) > TOOL_RESULT_MAX_CHARS:
                text = text[:TOOL_RESULT_MAX_CHARS] + f"… [{len(text) - TOOL_RESULT_MAX_CHARS} more characters]"
            lines.append(f"Tool result{' (error)' if block.is_error else ''}: {text}")
    return lines


def render_conversation(request: ExtractionRequest) -> str:
    """The unread range as plain text (``User:`` / ``Assistant:`` / ``Assistant called …`` /
    ``Tool result: …`` lines), tool results cut to 1,000 characters, and only the newest
    60,000 characters kept (``[… earlier messages left out]`` marks a cut)."""
    lines: list[str] = []
    for entry in request.entries:
        lines.extend(_render_entry(entry))
    text = "\n\n".join(lines)
    if len(text) > CONVERSATION_MAX_CHARS:
        text = "[… earlier messages left out]\n\n" + text[-CONVERSATION_MAX_CHARS:]
    return text


def user_message(request: ExtractionRequest, memory_dir_shown: Path) -> str:
    """The opening user message: the recent conversation, the transcript's path (for more
    context), and the manifest of existing memories (paths shown inside ``memory_dir_shown``)."""
    manifest = build_manifest(list(request.headers))
    existing = manifest.text if manifest.count else "(none yet)"
    path = request.transcript.path
    where = f"\n\nThe full transcript is {path} (JSON lines) if you need more context." if path else ""
    return (
        f"Here are the most recent messages of the conversation (session {request.session_id}):\n\n"
        f"<conversation>\n{render_conversation(request)}\n</conversation>{where}\n\n"
        f"Existing memory files in {memory_dir_shown} (type, path, modified, description):\n{existing}\n\n"
        "Save what is worth remembering from these recent messages, following your instructions."
    )


@dataclass(frozen=True, slots=True)
class ExtractionAgentRequest:
    """The claude extractor's opening request: ``model``, ``system`` (text), ``messages`` (API
    param dicts), ``prompt_source`` (``"Claude Code 2.1.328"``: the release's extraction
    prompt and ``# Memory`` section; ``"memtui"``: memtui's own prompt), ``memory_dir``: the
    live memory dir as the model reads it (absolute, one final ``/``), ``staging_dir``: where
    the extractor's tools really wrote for it (memtui's staging copy, same form, never shown to
    the model; ``None`` for a request not sent)."""

    model: str
    system: str
    messages: tuple[dict[str, Any], ...]
    prompt_source: str
    memory_dir: str
    staging_dir: str | None = None

    @property
    def prompt(self) -> str:
        """The text of the last block of the last message: the extraction prompt (the release's)
        or the opening message (memtui's)."""
        content = self.messages[-1]["content"]
        return content if isinstance(content, str) else str(content[-1]["text"])

    def to_json(self) -> dict[str, Any]:
        """``{model, system, messages, prompt_source, memory_dir, staging_dir}``
        (``staging_dir``: a string or ``null``)."""
        return {
            "model": self.model,
            "system": self.system,
            "messages": [dict(m) for m in self.messages],
            "prompt_source": self.prompt_source,
            "memory_dir": self.memory_dir,
            "staging_dir": self.staging_dir,
        }

    def render(self) -> str:
        """The request as text for a person: model, the memory dir the model was given (and,
        for a request sent, where memtui staged its writes), system, then each message's
        blocks."""
        return request_text(f"model: {self.model}  ·  prompt: {self.prompt_source}", self.memory_dir, self.staging_dir, self.system, self.messages)


def build_extraction_request(
    request: ExtractionRequest,
    *,
    release: Release | None,
    model: str,
    max_turns: int = MAX_TURNS,
    staging_dir: Path | None = None,
) -> ExtractionAgentRequest:
    """The opening request for ``request``, over the live memory dir ``request.memory_dir``
    (made absolute and normalised, as :class:`memtui.core.agent.alias.PathAlias` names it).

    - ``release``: its ``# Memory`` section over ``dir_text(<live dir>)`` as the system text,
      and the conversation of the range (:func:`extraction_messages`) ending with its
      extraction prompt for N user/assistant messages and the manifest of ``request.headers``;
    - ``None``: :data:`SYSTEM_PROMPT` over the live dir (no final ``/``), ``max_turns`` and
      ``request.now``'s date, and :func:`user_message`.

    ``model``: as chosen by the caller; ``staging_dir``: recorded only. Reads no file."""
    live = Path(os.path.normpath(os.path.abspath(request.memory_dir)))
    staged = None if staging_dir is None else dir_text(os.path.normpath(os.path.abspath(staging_dir)))
    if release is not None:
        entries = [e for e in request.entries if e.type in ("user", "assistant")]
        prompt = extraction_prompt(release, len(entries), build_manifest(list(request.headers)).text)
        return ExtractionAgentRequest(model, release.memory_section(dir_text(live)), tuple(extraction_messages(entries, prompt)),
                                      f"{release.cli} {release.version}", dir_text(live), staged)
    system = SYSTEM_PROMPT.format(memory_dir=live, max_turns=max_turns, today=request.now.date().isoformat(), index=INDEX_NAME)
    return ExtractionAgentRequest(model, system, ({"role": "user", "content": user_message(request, live)},), "memtui",
                                  dir_text(live), staged)


def _copy_memory_dir(memory_dir: Path, staging: Path) -> dict[str, bytes]:
    """Copy every memory file and index into ``staging``; returns relpath → original bytes."""
    originals: dict[str, bytes] = {}
    staging.mkdir(parents=True, exist_ok=True)
    if not memory_dir.is_dir():
        return originals
    paths = list(iter_memory_paths(memory_dir))
    for index_rel in (INDEX_NAME, f"team/{INDEX_NAME}"):
        if (memory_dir / index_rel).is_file():
            paths.append((memory_dir / index_rel, index_rel))
    for path, rel in paths:
        try:
            data = read_regular(path, MAX_MEMORY_BYTES)[0]
        except OSError:  # a FIFO, a device, a file over the cap: not copied, never read
            continue
        target = staging / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        originals[rel] = data
    return originals


def _draft(rel: str, data: bytes, before: bytes | None, message_uuid: str | None, *, nested_type: bool = False) -> Draft | str:
    """A draft for a staged file, or a note saying why it was left out. ``nested_type``: a
    ``type`` under ``metadata:`` counts (a CLI release's own memory instructions write it
    there)."""
    text = data.decode("utf-8", errors="replace")
    fm = parse_frontmatter(text)
    mem_type = parse_memory_type(fm.data.get("type"))
    meta = fm.data.get("metadata")
    if mem_type is None and nested_type and isinstance(meta, dict):
        mem_type = parse_memory_type(meta.get("type"))
    name = fm.data.get("name")
    description = fm.data.get("description")
    body = fm.body.lstrip("\n") if fm.present else text
    if before is not None:
        return Draft("update", mem_type or "feedback", str(name or Path(rel).stem), " ".join(str(description or "").split()),
                     body, message_uuid, path=rel, text=text, before_sha256=sha256_hex(before),
                     notes=() if mem_type else ("the updated file has no type the agent recognises",))
    if mem_type is None:
        return f"{rel}: left out — no type among {', '.join(MEMORY_TYPES)}"
    if not isinstance(description, str) or not description.strip():
        return f"{rel}: left out — no one-line description"
    extra = sorted(k for k in fm.data if k not in ("name", "description", "type") and not (nested_type and k == "metadata"))
    notes = (f"frontmatter keys not kept: {', '.join(extra)}",) if extra else ()
    return Draft("create", mem_type, " ".join(str(name or Path(rel).stem).split()), " ".join(description.split()),
                 body, message_uuid, path=rel, notes=notes)


class ClaudeExtractor:
    """The agent extractor (see the module docstring). ``client``: an ``anthropic.Anthropic``
    (default: ``recall.make_client()`` from the environment's key); ``model`` (default: the
    recall default model; with ``release``, the release's main-loop default); ``cwd``: where the
    agent's Bash and relative reads start, as the model sees it (default: the session's cwd,
    else the live memory dir, which the tools map to the staging copy); ``on_event``: each
    ``agent.AgentEvent``."""

    name: ExtractorName = "claude"
    heuristic = False

    def __init__(
        self,
        *,
        state_dir: Path,
        client: anthropic.Anthropic | None = None,
        model: str | None = None,
        cwd: Path | None = None,
        on_event: Callable[[Any], None] | None = None,
        max_turns: int = MAX_TURNS,
        release: Release | None = None,
    ) -> None:
        self.state_dir = state_dir
        self.client = client
        self.model = model
        self.cwd = cwd
        self.on_event = on_event
        self.max_turns = max_turns if release is None else release.extract.max_turns
        self.release = release
        self.last_run: Any = None  # the agent.AgentRun of the last run, for display and tests
        self.last_request: ExtractionAgentRequest | None = None  # the opening request of the last run

    def _client(self) -> anthropic.Anthropic:
        if self.client is not None:
            return self.client
        import anthropic

        from memtui.core.recall.claude import (
            CREDENTIAL_ENV,
            has_credentials,
            make_client,
        )

        if not has_credentials():
            raise ExtractorError(f"no API key: set one of {', '.join(CREDENTIAL_ENV)} (or use --extractor offline)")
        try:
            return make_client()
        except anthropic.AnthropicError as exc:
            raise ExtractorError(f"no Anthropic client: {exc}") from exc

    def staging_dir(self, request: ExtractionRequest, now: datetime) -> Path:
        """Where this run's staging copy lives (inside memtui's state dir, never the memory dir)."""
        root = memdir_state(self.state_dir, request.memory_dir) / "extract" / "staging"
        return root / f"{slugify(request.session_id or 'session')}-{now.strftime('%Y%m%dT%H%M%S')}-{os.getpid()}"

    def run(self, request: ExtractionRequest) -> tuple[list[Draft], list[str]]:
        """Run the agent over ``request``; returns drafts for what it wrote and notes. Raises
        ``ExtractorError`` on API failure, refusal or cancel (nothing is proposed then)."""
        from memtui.core.agent import PathAlias, ToolPolicy, run_agent
        from memtui.core.recall.engine import choose_model

        client = self._client()
        staging = self.staging_dir(request, request.now)
        try:
            alias = PathAlias(shown=request.memory_dir, actual=staging)
        except ValueError as exc:
            raise ExtractorError(f"no staging copy apart from the memory dir: {exc}") from exc
        try:
            originals = _copy_memory_dir(request.memory_dir, staging)
            cwd = self.cwd if self.cwd is not None and self.cwd.is_dir() else alias.shown
            release = self.release
            model = (self.model or release.main_model_default) if release is not None else choose_model(self.model)
            sent = build_extraction_request(request, release=release, model=model, max_turns=self.max_turns, staging_dir=alias.actual)
            self.last_request = sent
            if release is not None:
                policy = ToolPolicy(write_root=alias.actual, alias=alias, cwd=cwd, write_suffixes=(".md",), remove_md=True,
                                    protected_dirs=release.dream.protected_subdirs, denials=release.denials(sent.memory_dir))
            else:
                policy = ToolPolicy(write_root=alias.actual, alias=alias, cwd=cwd)
            run = run_agent(client, model=sent.model, system=sent.system, messages=[dict(m) for m in sent.messages],
                            policy=policy, max_turns=self.max_turns, on_event=self.on_event, cancel=request.cancel)
            self.last_run = run
            if run.stop_reason == "cancelled":
                raise ExtractorError("cancelled")
            if run.error is not None:
                raise ExtractorError(run.error)
            notes: list[str] = []
            refused = [c for c in run.tool_calls if c.is_error]
            removed = [p.relative_to(staging.resolve()).as_posix() for c in run.tool_calls for p in c.removed if p.is_relative_to(staging.resolve())]
            if removed:
                notes.append(f"the agent removed {', '.join(removed)}: not proposed (the inbox proposes new and updated memories; delete one in the Memories pane)")
            if refused:
                notes.append(f"{len(refused)} tool call(s) refused: " + "; ".join(f"{c.summary} ({c.code})" for c in refused[:5]))
            if run.stop_reason == "max_turns":
                notes.append(f"the agent reached the turn limit ({self.max_turns}); what it wrote by then is kept")
            message_uuid = next((e.uuid for e in reversed(request.transcript.entries[request.start : request.end]) if e.uuid), None)
            drafts: list[Draft] = []
            for path in sorted(staging.rglob("*")):
                if not path.is_file() or path.is_symlink():
                    continue
                rel = path.relative_to(staging).as_posix()
                try:
                    data = read_regular(path, MAX_MEMORY_BYTES)[0]
                except OSError:
                    continue
                before = originals.get(rel)
                if data == before:
                    continue
                if path.name == INDEX_NAME:
                    notes.append(f"ignored the agent's change to {rel} (memtui writes index entries itself)")
                    continue
                if not rel.endswith(".md"):
                    notes.append(f"ignored {rel}: not a memory file (.md)")
                    continue
                made = _draft(rel, data, before, message_uuid, nested_type=self.release is not None)
                if isinstance(made, str):
                    notes.append(made)
                else:
                    drafts.append(made)
            if not drafts and run.final_text:
                notes.append(f"the agent wrote nothing: {run.final_text.strip()[:200]}")
            return drafts, notes
        finally:
            shutil.rmtree(staging, ignore_errors=True)
