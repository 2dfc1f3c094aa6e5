"""Per-memory results kept in the catalog database: computed from a memory's text once, then
read back (``CatalogDB.derived``) for as long as the file's bytes do not change and the code
that computes them is the same."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from memtui.core.memory.memories import Memory, with_text

if TYPE_CHECKING:
    from memtui.core.memory.catalogdb import CatalogDB

T = TypeVar("T")


def per_memory(
    memories: Sequence[Memory],
    db: CatalogDB | None,
    kind: str,
    modules: tuple[str, ...],
    compute: Callable[[Memory], T],
    to_json: Callable[[T], Any],
    from_json: Callable[[Any], T],
    *,
    skip: Callable[[Memory], bool] | None = None,
) -> dict[str, T]:
    """relpath → ``compute(memory)`` for each of ``memories`` but those ``skip`` leaves out:
    from ``db`` (the memory dir's catalog database, or ``None``) for a file whose row key is the
    one stored under ``kind`` with the fingerprint of ``modules`` (the code ``compute`` runs),
    else computed from its text (read now, and stored when that text is the bytes the row
    describes). A stored value ``from_json`` refuses (``ValueError``) is computed again."""
    import orjson

    from memtui.core.memory.catalogdb import code_fingerprint, pack

    fp = code_fingerprint(modules) if db is not None else ""
    stored = db.derived(kind, fp) if db is not None else {}
    out: dict[str, T] = {}
    new: dict[str, tuple[str, bytes]] = {}
    for mem in memories:
        if skip is not None and skip(mem):
            continue
        key = db.stored_key(mem.relpath) if db is not None else None
        if key is not None and (hit := stored.get(mem.relpath)) is not None and hit[0] == key:
            try:
                out[mem.relpath] = from_json(orjson.loads(hit[1]))
                continue
            except ValueError:  # orjson.JSONDecodeError is one
                pass
        full, same = with_text(mem)
        value = out[mem.relpath] = compute(full)
        if same and key is not None:
            new[mem.relpath] = (key, pack(to_json(value)))
    if db is not None and new:
        db.put_derived(kind, fp, new)
    return out
