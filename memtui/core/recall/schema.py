"""The Claude selector's structured output as a pydantic model (``client.messages.parse`` reads
it; its JSON schema is ``memtui.core.recall.claude.SEED_SCHEMA``). A module of its own so that
pydantic is imported only when a request is sent or its reply parsed."""

from __future__ import annotations

import pydantic


# The structured output asked of the model. An object rather than a bare list, so that "no
# memory" is an explicit empty list. Its docstring becomes the schema's description, which
# the model reads.
class SelectedMemories(pydantic.BaseModel):
    """File names chosen from the manifest, at most 5; an empty list when none is clearly useful."""

    selected_memories: list[str]
