"""The gates of a CLI release's own auto-memory extraction (the claude flavor: Claude Code
2.1.328) for a range of a transcript, in the order its code checks them, and its prompt.

At the end of each main-thread turn:

1. ``flag`` — the hosted mode (``CLAUDE_CODE_POST_TURN_MEMORY`` / ``…_CONFIG``) is set, or the
   feature flag ``tengu_passport_quail`` (the flag cache in ``~/.claude.json``) is on;
2. ``print_mode`` — the session is interactive, or ``tengu_slate_thimble`` is on too (so
   ``claude -p`` extracts only with both flags);
3. ``auto_memory`` — auto memory is on; ``read_block`` — no read block; ``remote`` — a local
   session;
4. ``already_wrote`` — the conversation did not itself Write/Edit a file of the memory dir
   since the cursor ("skipping — conversation already wrote to memory in this range");
5. ``prose`` — some non-meta user message since the cursor has at least 3 words ("skipping —
   not enough user prose");
6. ``every_n_turns`` — it runs every N turns (``tengu_bramble_lintel``, default 1);
7. ``permission_rule`` — no deny or ask rule on Edit/Write covers the memory dir.

Then the fork runs (at most 5 turns) with :func:`extraction_prompt`: "You are now acting as
the memory extraction subagent. Analyze the most recent ~N messages above…", with
``## Existing memory files`` in the recall manifest's format.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from memtui.core.base.wording import ON_FOR_YOUR_ACCOUNT, flag_details, off_for, tilde
from memtui.core.places.claude_json import GlobalConfig, read_global_config
from memtui.core.places.permissions import memory_write_rule, setting_value
from memtui.core.places.release import Release, fill
from memtui.core.places.settings import SettingsLayers
from memtui.core.sessions.transcripts import Entry, Transcript, is_human_turn, writes_inside

ExtractGateId = Literal["flag", "print_mode", "auto_memory", "read_block", "remote", "already_wrote", "prose", "every_n_turns", "permission_rule"]


@dataclass(frozen=True, slots=True)
class ExtractGate:
    """One gate: ``ok`` (open), ``detail`` (a plain sentence: no flag or cache-key name),
    ``sources``, ``log`` (the CLI's own debug line when it closes, if it writes one), ``data``
    (numbers, for JSON), ``details`` (the internal names behind ``detail`` — a flag and its
    cached value —, for a details line; ``""`` when none)."""

    id: ExtractGateId
    ok: bool
    detail: str
    sources: tuple[str, ...] = ()
    log: str | None = None
    data: Mapping[str, Any] = field(default_factory=dict)
    details: str = ""


@dataclass(frozen=True, slots=True)
class AutoExtractStatus:
    """The release's extraction for ``entries[start:end]``: ``gates`` in its order, ``blocking``
    (the first closed one, ``None`` when it would extract), ``messages`` (N of its prompt: the
    user and assistant messages of the range), ``interactive`` (as assumed), ``verdict``."""

    release: Release
    gates: tuple[ExtractGate, ...]
    blocking: ExtractGate | None
    messages: int
    interactive: bool
    verdict: str

    @property
    def would_extract(self) -> bool:
        """Whether the release would extract from this range."""
        return self.blocking is None

    def to_json(self) -> dict[str, Any]:
        """``{release, would_extract, blocking, verdict, messages, interactive, gates: [{id, ok,
        detail, sources, log, data}]}``."""
        return {
            "release": self.release.name, "would_extract": self.would_extract, "blocking": self.blocking.id if self.blocking else None,
            "verdict": self.verdict, "messages": self.messages, "interactive": self.interactive,
            "gates": [{"id": g.id, "ok": g.ok, "detail": g.detail, "sources": list(g.sources), "log": g.log, "data": dict(g.data)} for g in self.gates],
        }


def _truthy(value: object) -> bool:
    return bool(value) and value not in (0, "", [], {})


def prose_words(text: str) -> int:
    """Words of a user message as the prose gate counts them (runs of non-space)."""
    return len(text.split())


def has_prose(entries: Sequence[Entry], minimum: int) -> bool:
    """Some non-meta user message has ``minimum`` words or more: its string content, or one of
    its text blocks (a user entry holding only tool results has none)."""
    for e in entries:
        if e.type != "user" or e.is_meta:
            continue
        if e.content_is_string:
            if prose_words(e.text) >= minimum:
                return True
        elif any(b.type == "text" and prose_words(b.text) >= minimum for b in e.content):
            return True
    return False


def range_messages(transcript: Transcript, start: int, end: int | None) -> list[Entry]:
    """The user and assistant entries of the main chain in ``entries[start:end]``."""
    return [e for e in transcript.entries[start:end] if not e.is_sidechain and e.type in ("user", "assistant")]


def check_autoextract(
    transcript: Transcript,
    start: int,
    end: int | None,
    memory_dir: Path,
    release: Release,
    *,
    settings: SettingsLayers | None,
    auto_memory_enabled: bool = True,
    auto_memory_source: str = "default",
    project_root: Path | None = None,
    interactive: bool | None = None,
    remote: bool = False,
    config: GlobalConfig | None = None,
    environ: Mapping[str, str] | None = None,
) -> AutoExtractStatus:
    """Evaluate the release's extraction gates for ``transcript.entries[start:end]`` (the range
    since the cursor). ``interactive``: the session's kind (default: from the transcript's
    ``entrypoint``; an SDK entrypoint is not interactive). Reads the flag cache and the
    settings; writes nothing; never raises."""
    import os

    env = os.environ if environ is None else environ
    facts = release.extract
    cfg = config if config is not None else read_global_config(env)
    entries = range_messages(transcript, start, end)
    if interactive is None:
        point = next((e.raw.get("entrypoint") for e in transcript.entries if isinstance(e.raw.get("entrypoint"), str)), "cli")
        interactive = point not in release.dream.sdk_entrypoints
    gates: list[ExtractGate] = []
    cache = f"{cfg.path} {release.flag_cache_key}"
    has_cache = cfg.flag_cache is not None

    def flag_info(name: str) -> tuple[Any, str]:
        value, cached = cfg.flag(name)
        return value, flag_details(name, value, cached, tilde(cfg.path), release.flag_cache_key, has_cache=has_cache)

    hosted = [k for k in facts.hosted_env if env.get(k)]
    quail, quail_info = flag_info(facts.flag)
    if hosted:
        gates.append(ExtractGate("flag", True, f"hosted mode ({', '.join(hosted)} set)", tuple(hosted)))
    else:
        on = _truthy(quail)
        gates.append(ExtractGate("flag", on, f"memory extraction is {ON_FOR_YOUR_ACCOUNT}" if on else f"memory extraction is {off_for(has_cache)}",
                                 (f"{cache}.{facts.flag}",), data={"flag": facts.flag, "value": quail}, details=quail_info))
    slate, slate_info = flag_info(facts.noninteractive_flag)
    print_ok = bool(hosted) or interactive or _truthy(slate)
    if interactive:
        print_detail = "an interactive session"
    elif _truthy(slate):
        print_detail = f"a `claude -p` or SDK session: extraction there is {ON_FOR_YOUR_ACCOUNT}"
    else:
        print_detail = f"a `claude -p` or SDK session: extraction there is {off_for(has_cache)}"
    gates.append(ExtractGate("print_mode", print_ok, print_detail, (f"{cache}.{facts.noninteractive_flag}",),
                             data={"interactive": interactive, "value": slate}, details="" if interactive else slate_info))
    gates.append(ExtractGate("auto_memory", auto_memory_enabled, "auto memory is on" if auto_memory_enabled else "auto memory is off", (auto_memory_source,)))
    block, _src = setting_value(settings, release.dream.read_block_setting)
    gates.append(ExtractGate("read_block", block is not True, "no read block" if block is not True else f"{'.'.join(release.dream.read_block_setting)} is on"))
    gates.append(ExtractGate("remote", not remote, "a local session" if not remote else "a remote session"))
    wrote = writes_inside(transcript, memory_dir, start, end)
    paths = list(dict.fromkeys(str(c.input.get("file_path")) for c in wrote))
    gates.append(ExtractGate("already_wrote", not wrote,
                             "the conversation wrote no memory file since the cursor" if not wrote else f"the conversation itself wrote {len(paths)} memory file(s) since the cursor",
                             log=None if not wrote else "[extractMemories] skipping — conversation already wrote to memory in this range", data={"paths": paths}))
    prose = has_prose(entries, facts.min_prose_words)
    gates.append(ExtractGate("prose", prose,
                             f"a user message since the cursor has {facts.min_prose_words}+ words" if prose else f"no user message since the cursor has {facts.min_prose_words} words or more",
                             log=None if prose else "[extractMemories] skipping — not enough user prose", data={"min_words": facts.min_prose_words}))
    every, every_info = flag_info(facts.every_n_turns_flag)
    n_turns = int(every) if isinstance(every, (int, float)) and not isinstance(every, bool) and every >= 1 else facts.every_n_turns_default
    turns = sum(1 for e in entries if is_human_turn(e))
    gates.append(ExtractGate("every_n_turns", turns >= n_turns, f"every {n_turns} turn(s); {turns} since the cursor",
                             (f"{cache}.{facts.every_n_turns_flag}" if every is not None else f"{release.cli} {release.version} default",),
                             data={"every": n_turns, "turns": turns}, details=every_info if every is not None else ""))
    rule = memory_write_rule(settings, memory_dir, project_root)
    gates.append(ExtractGate("permission_rule", rule is None,
                             "no deny or ask rule on Edit/Write covers the memory dir" if rule is None else f"the {rule[1]} rule {rule[0]!r} covers the memory dir",
                             data={} if rule is None else {"rule": rule[0], "behavior": rule[1], "source": rule[2]}))
    blocking = next((g for g in gates if not g.ok), None)
    n = len(entries)
    if blocking is None:
        text = f"{release.cli} would extract from these {n} message(s) (its prompt: \"the most recent ~{n} messages\")."
    else:
        text = f"{release.cli} would not extract: {blocking.detail}."
    return AutoExtractStatus(release, tuple(gates), blocking, n, interactive, text)


def extraction_prompt(release: Release, messages: int, manifest: str, *, scope_guidance: bool = False) -> str:
    """The release's extraction prompt for ``messages`` (N) new messages and the manifest text
    of the existing memories (newest first, no ``MEMORY.md``; empty: no ``## Existing memory
    files`` block)."""
    existing = release.extract.existing_memories_block.format(manifest=manifest) if manifest else ""
    return fill(release.template("extract_prompt.txt"), messages=str(messages), existing_memories=existing,
                scope_guidance="scope guidance, " if scope_guidance else "")


def conversation_messages(entries: Sequence[Entry]) -> list[dict[str, Any]]:
    """The range as Messages API messages, the way the CLI's fork carries the conversation:
    text and tool blocks of user and assistant entries (thinking left out), consecutive
    entries of one role merged (the transcript writes one line per block), a tool call kept
    only with its result in the range (and the result only with its call), and the leading
    assistant messages dropped (a conversation starts with the user)."""
    calls = {b.id for e in entries if e.type == "assistant" for b in e.content if b.type == "tool_use" and b.id}
    results = {b.tool_use_id for e in entries if e.type == "user" for b in e.content if b.type == "tool_result" and b.tool_use_id}
    paired = calls & results
    messages: list[dict[str, Any]] = []
    for e in entries:
        role = "assistant" if e.type == "assistant" else "user"
        blocks: list[dict[str, Any]] = []
        for b in e.content:
            if b.type == "text" and b.text.strip():
                blocks.append({"type": "text", "text": b.text})
            elif b.type == "tool_use" and role == "assistant" and b.id in paired:
                blocks.append({"type": "tool_use", "id": b.id, "name": b.name or "", "input": dict(b.input)})
            elif b.type == "tool_result" and role == "user" and b.tool_use_id in paired:
                blocks.append({"type": "tool_result", "tool_use_id": b.tool_use_id, "content": b.text, "is_error": b.is_error})
        if not blocks:
            continue
        if messages and messages[-1]["role"] == role:
            messages[-1]["content"].extend(blocks)
        elif messages or role == "user":
            messages.append({"role": role, "content": blocks})
    return messages


def extraction_messages(entries: Sequence[Entry], prompt: str) -> list[dict[str, Any]]:
    """:func:`conversation_messages` with the extraction prompt as the last user message."""
    messages = conversation_messages(entries)
    if messages and messages[-1]["role"] == "user":
        messages[-1]["content"].append({"type": "text", "text": prompt})
    else:
        messages.append({"role": "user", "content": [{"type": "text", "text": prompt}]})
    return messages
