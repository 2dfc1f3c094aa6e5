"""The seed design (the chapter memtui was built from): the ``agent`` flavor's release.

Every value here is what memtui did before it modelled Claude Code release by release; the
sources are the seed chapter and the older release it describes.
"""

from __future__ import annotations

from memtui.core.places.behaviour import (
    Behaviour,
    IndexWarning,
    InjectionFormat,
    Instructions,
    MemoryFormat,
    RecallGate,
    RecallRequest,
)

# The seed's per-layer header labels (Managed shares the User wording).
LABELS = {
    "project": "project instructions, checked into the codebase",
    "local": "user's private project instructions, not checked in",
    "user": "user's private global instructions for all projects",
    "managed": "user's private global instructions for all projects",
    "automem": "user's auto-memory, persists across conversations",
    "teammem": "shared team memory, synced across the organization",
}

# memtui's wording of the seed's selector prompt (the chapter describes it, it does not quote it).
SELECTOR_SYSTEM = (
    "You choose which of a coding agent's memory files it should read before it handles a"
    " user's query. You are given the query and a manifest of the available memory files, one"
    " per line: its type, its file name, when it was last modified, and its description.\n"
    "\n"
    "Return the file names of the memories that will clearly be useful for this query: at most"
    " 5. Choose a memory only when its name and description make you sure it will help; when in"
    " doubt, leave it out. If nothing in the manifest is clearly useful, return an empty list —"
    " that is a good answer.\n"
    "\n"
    "If a list of recently used tools is given, the agent is already working with those tools:"
    " do not choose memories that are only usage guides or API reference for them, but do choose"
    " memories that record warnings, gotchas or known issues about them, because that is exactly"
    " when those matter.\n"
    "\n"
    "Copy each file name exactly as it appears in the manifest."
)

SEED = Behaviour(
    product="seed design",
    version=None,
    version_command=None,
    memory_format=MemoryFormat(
        key="seed",
        strip_bom=False,
        type_keys=(("type",),),
        strings_only=False,
        written_type_key=("type",),
    ),
    instructions=Instructions(
        rule_order="sorted",
        labels=LABELS,
        loads_team_index=True,
        lazy_message=None,
        lazy_content_trimmed=True,
        index_warning=IndexWarning(names_cut=False),
    ),
    recall_gate=RecallGate(always=True),
    recall_request=RecallRequest(
        style="query-first",
        system=SELECTOR_SYSTEM,
        max_tokens=256,  # the seed chapter §17.6: the side query asks for at most 256 tokens
        default_model="claude-sonnet-5-5",
    ),
    injection=InjectionFormat(
        prefix="",
        fresh_header="Memory (saved $label): $path:",
        stale_header="$caveat\n\nMemory: $path:",
        wrap="<system-reminder>\n$text\n</system-reminder>",
        joiner="\n\n",
    ),
    memory_dir_sources=(("policy", False), ("user", False), ("local", False)),
)
