"""Claude Code as it ships: the ``claude`` flavor's releases, 2.1.332 (the newest) and 2.1.328.

Every value was read from the requests the real CLI sent to a local mock of the Messages API
(captured under ``tests/captures/``; ``scripts/capture_claude_code.py`` makes them again) and
from the JavaScript bundled in its binary. A new release is an edit of this module (a
``Behaviour`` built from the previous one with what changed) plus new captures.

2.1.332 (2026-11-24) loads instructions as 2.1.328 does, sends the same prompts and reads the
same memory format (SPEC §13.1); it adds the personal cloud configuration layer.
"""

from __future__ import annotations

from dataclasses import replace
from importlib import resources
from string import Template

from memtui.core.places.behaviour import (
    AgentsMd,
    Behaviour,
    CloudLayer,
    IndexWarning,
    InjectionFormat,
    Instructions,
    MemoryFormat,
    MemoryPrompt,
    RecallGate,
    RecallRequest,
)

VERSION = "2.1.332"
VERSION_2_1_328 = "2.1.328"

# The per-layer labels of `Contents of <path> (<label>):` (Managed has its own since 2.1.x).
LABELS = {
    "project": "project instructions, checked into the codebase",
    "local": "user's private project instructions, not checked in",
    "user": "user's private global instructions for all projects",
    "managed": "organization-managed policy instructions",
    "automem": "user's auto-memory, persists across conversations",
    "teammem": "shared team memory, synced across the organization",
}

def _text(name: str) -> str:
    """A text of these releases under ``release_data/claude-2.1.328/`` (2.1.332 sends the same
    texts; the file's final newline is not part of it; ``{{memory_dir}}`` becomes the
    template's ``$memory_dir``)."""
    text = resources.files("memtui.core.places").joinpath("release_data", "claude-2.1.328", name).read_text(encoding="utf-8")
    return (text[:-1] if text.endswith("\n") else text).replace("{{memory_dir}}", "$memory_dir")


# The recall selector's system prompt, verbatim (its final newline is part of it: the file
# holds it, then the file's own).
SELECTOR_SYSTEM = _text("recall_selector.txt")

# The `# Memory` section of the system prompt with recall off (MEMORY.md is in the context:
# the same text the dream and the extraction prompts refer to) and on (no MEMORY.md; the 4KB
# advice joins the link paragraph).
MEMORY_PROMPT_RECALL_OFF = Template(_text("memory_section.txt"))
MEMORY_PROMPT_RECALL_ON = Template(_text("memory_section_recall.txt"))

# The models whose API accepts `thinking: {type: disabled}`: the selector then asks for 512
# tokens alone; any other model gets the 2,048-token thinking allowance on top.
NO_THINKING_MODELS = (
    "claude-opus-4-0", "claude-opus-4-1", "claude-opus-4-5", "claude-opus-4-6", "claude-opus-4-7",
    "claude-opus-4-8", "claude-opus-5", "claude-sonnet-4-0", "claude-sonnet-4-5", "claude-sonnet-4-6",
    "claude-sonnet-5", "claude-haiku-4-5",
)

# JSONL line types 2.1.328 and 2.1.332 write to a session transcript.
TRANSCRIPT_TYPES = frozenset({
    "user", "assistant", "attachment", "system", "summary", "queue-operation", "last-prompt",
    "atis-latch", "api-request", "api-request-shape", "api-request-blob", "tools-used",
    "cost-state", "file-history-snapshot", "custom-title", "tag", "progress",
})
# Attachment kinds memtui reads from those transcripts (the rest are skipped).
ATTACHMENT_TYPES = frozenset({
    "instructions", "nested_memory", "relevant_memories", "memory_saved", "memory_update",
})

AGENTS_MD = AgentsMd(
    names=("AGENTS.md", ".claude/AGENTS.md"),
    claude_names=("CLAUDE.md", ".claude/CLAUDE.md", "CLAUDE.local.md"),
    settings_path=("pluginConfigs", "agents-md@builtin", "options"),
    mode_key="instructionFiles",
    legacy_key="projectInstructions",
    modes=("claude-md", "claude-md-or-agents-md", "claude-md-and-agents-md", "managed-only"),
    default_mode="claude-md-or-agents-md",
    legacy_modes={
        "none": "managed-only",
        "claude": "claude-md",
        "agents-fallback": "claude-md-or-agents-md",
        "both": "claude-md-and-agents-md",
    },
    legacy_fallback="claude-md",
    lazy_message="tool.call hook additional context: $messages",
)

CLAUDE_CODE_2_1_328 = Behaviour(
    product="Claude Code",
    version=VERSION_2_1_328,
    version_command=("claude", "--version"),
    memory_format=MemoryFormat(
        # The format as 2.1.328 reads it (2.1.332 reads it the same): caches are kept per key.
        key=f"claude-code-{VERSION_2_1_328}",
        strip_bom=True,
        # `metadata:` is merged over the top-level keys, so `metadata.type` wins when present.
        type_keys=(("metadata", "type"), ("type",)),
        strings_only=True,
        written_type_key=("metadata", "type"),
    ),
    instructions=Instructions(
        rule_order="directory",
        labels=LABELS,
        loads_team_index=False,
        lazy_message="<system-reminder>\nContents of $path:\n\n$content\n</system-reminder>",
        lazy_content_trimmed=False,
        index_warning=IndexWarning(names_cut=True, quote_units=80),
        agents_md=AGENTS_MD,
        sanitize_index=True,
        markdown="claude-code",
        keeps_link_definitions=False,
    ),
    recall_gate=RecallGate(
        always=False,
        flag="tengu_moth_copse",
        cache_keys=("cachedGrowthBookFeatures",),
        env="CLAUDE_MEMORY_STORES",
        hides_index=True,
        cache_off_env=("DISABLE_TELEMETRY", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "DO_NOT_TRACK"),
        cache_keep_env="CLAUDE_CODE_GB_DISK_CACHE_WHEN_TELEMETRY_OFF",
    ),
    recall_request=RecallRequest(
        style="conversation",
        system=SELECTOR_SYSTEM,
        max_tokens=512,
        thinking_budget=2048,
        no_thinking_models=NO_THINKING_MODELS,
        default_model="claude-sonnet-5-5",
        model_env="ANTHROPIC_DEFAULT_SONNET_MODEL",
        uses_settings_model=False,
        fallbacks="when the API refuses the request: up to 2 other Sonnet models priced no higher",
    ),
    injection=InjectionFormat(
        prefix="Retrieved for possible relevance — use only if it actually applies to what the user asked.\n\n",
        fresh_header="Memory: $path:",
        stale_header="$caveat\n\nMemory: $path:",
        wrap="$text",
        joiner="\n",
        sanitize=True,
    ),
    memory_dir_sources=(("policy", False), ("flag", False), ("local", True), ("project", True), ("user", False)),
    memory_dir_invalid_falls_through=False,
    memory_prompt=MemoryPrompt(recall_off=MEMORY_PROMPT_RECALL_OFF, recall_on=MEMORY_PROMPT_RECALL_ON),
    transcript_types=TRANSCRIPT_TYPES,
    attachment_types=ATTACHMENT_TYPES,
    # Confirmed for 2.1.328 and 2.1.332: own oracle scenarios o_automem_settings_env / _project_env.
    settings_env=True,
)

# The personal cloud configuration layer (SPEC §13.1): cloud sessions fetch a user CLAUDE.md
# and rules from `/worker/personal-cloud-configuration`, named under this virtual root.
CLOUD_LAYER = CloudLayer(
    env="CLAUDE_CODE_FETCH_PERSONAL_CLOUD_CONFIGURATION",
    virtual_root="<personal-cloud-configuration>",
    after_layer="user",
    needs="an --sdk-url on an Anthropic host, with user settings enabled",
    shadows=True,
    follows_imports=False,
    max_rules=200,
)

CLAUDE_CODE = replace(
    CLAUDE_CODE_2_1_328,
    version=VERSION,
    instructions=replace(CLAUDE_CODE_2_1_328.instructions, cloud_layer=CLOUD_LAYER, keeps_link_definitions=True),
)

# Every release profile of the claude flavor, oldest first.
RELEASES: tuple[Behaviour, ...] = (CLAUDE_CODE_2_1_328, CLAUDE_CODE)
