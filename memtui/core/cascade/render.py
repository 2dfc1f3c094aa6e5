"""What the model receives (SPEC §3.6), byte for byte as the reference's ``getClaudeMds``.

``<preamble>\\n\\n`` + the loaded files joined by a blank line, each as
``Contents of <path> (<label>):\\n\\n<content>``; team memory's content is wrapped in a
``<team-memory-content source="shared">`` element. No loaded file: the empty string.
"""

from __future__ import annotations

from collections.abc import Iterable

from .model import CascadeFile, Layer

# The reference's MEMORY_INSTRUCTION_PROMPT.
PREAMBLE = (
    "Codebase and user instructions are shown below. Be sure to adhere to these instructions. "
    "IMPORTANT: These instructions OVERRIDE any default behavior and you MUST follow them exactly as written."
)

# The reference's per-type descriptions (Managed shares the User wording).
LABELS: dict[Layer, str] = {
    "project": "project instructions, checked into the codebase",
    "local": "user's private project instructions, not checked in",
    "user": "user's private global instructions for all projects",
    "managed": "user's private global instructions for all projects",
    "automem": "user's auto-memory, persists across conversations",
    "teammem": "shared team memory, synced across the organization",
}


def render_file(entry: CascadeFile) -> str:
    """One file's block: ``Contents of <path> (<label>):`` + blank line + content."""
    head = f"Contents of {entry.path} ({LABELS[entry.layer]}):\n\n"
    if entry.layer == "teammem":
        return f'{head}<team-memory-content source="shared">\n{entry.content}\n</team-memory-content>'
    return head + entry.content


def render_context(files: Iterable[CascadeFile]) -> str:
    """The full context for the loaded files of ``files`` (in the given order).

    ``CascadeFile.content`` is already trimmed the way the reference trims (JavaScript
    ``trim``), so nothing is trimmed here.
    """
    blocks = [render_file(f) for f in files if f.loaded and f.content]
    if not blocks:
        return ""
    return PREAMBLE + "\n\n" + "\n\n".join(blocks)
