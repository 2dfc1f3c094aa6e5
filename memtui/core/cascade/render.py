"""What the model receives (docs/behaviour.md §3.6), byte for byte as the reference's ``getClaudeMds``.

``<preamble>\\n\\n`` + the loaded files joined by a blank line, each as
``Contents of <path> (<label>):\\n\\n<content>``; team memory's content is wrapped in a
``<team-memory-content source="shared">`` element. No loaded file: the empty string.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from string import Template

from memtui.core.places.releases.seed import LABELS as SEED_LABELS

from .model import CascadeFile

# The reference's MEMORY_INSTRUCTION_PROMPT.
PREAMBLE = (
    "Codebase and user instructions are shown below. Be sure to adhere to these instructions. "
    "IMPORTANT: These instructions OVERRIDE any default behavior and you MUST follow them exactly as written."
)

# The seed's per-type descriptions (Managed shares the User wording); a release gives its own
# (``Behaviour.instructions.labels``).
LABELS: Mapping[str, str] = SEED_LABELS


def render_file(entry: CascadeFile, labels: Mapping[str, str] = LABELS) -> str:
    """One file's block: ``Contents of <path> (<label>):`` + blank line + content."""
    head = f"Contents of {entry.path} ({labels[entry.layer]}):\n\n"
    if entry.layer == "teammem":
        return f'{head}<team-memory-content source="shared">\n{entry.content}\n</team-memory-content>'
    return head + entry.content


def render_context(files: Iterable[CascadeFile], labels: Mapping[str, str] = LABELS) -> str:
    """The full context for the loaded files of ``files`` (in the given order); ``labels``:
    the release's header labels per layer.

    ``CascadeFile.content`` is already trimmed the way the reference trims (JavaScript
    ``trim``), so nothing is trimmed here.
    """
    blocks = [render_file(f, labels) for f in files if f.loaded and f.content]
    if not blocks:
        return ""
    return PREAMBLE + "\n\n" + "\n\n".join(blocks)


def render_lazy(entry: CascadeFile, template: str | None, trimmed: bool) -> str | None:
    """The message one lazily loaded file reaches the model as: ``template`` (``$path``,
    ``$content``, from ``Behaviour.instructions.lazy_message``) filled with the file's text —
    trimmed like startup text when ``trimmed``, else as read. ``None`` without a template."""
    if template is None:
        return None
    return Template(template).substitute(path=entry.path, content=entry.content if trimmed else entry.body)
