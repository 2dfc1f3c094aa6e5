"""The dream's in-memory workspace (``memtui.core.dream.plan.Workspace``): a file loaded from its
UTF-8 text keeps one copy and gives its exact bytes back; a file that is not UTF-8 keeps its
bytes; only files whose bytes change are in the plan, with the bytes they had as before-image."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from support.dream import NOW, context, memory, write

from memtui.core.dream import plan_dream
from memtui.core.dream.plan import Workspace

TEXT = "---\nname: n\ndescription: d\ntype: user\n---\n\nNaïve café – 日本語.\n"


def test_text_seeded_file_gives_its_bytes_back(tmp_path: Path) -> None:
    ws = Workspace(tmp_path)
    ws.seed_text("a.md", TEXT)
    assert ws.get("a.md") is TEXT  # the caller's string, not a copy
    assert ws.original("a.md") == TEXT.encode("utf-8")
    assert ws.changed() == []
    ws.set("a.md", "".join(list(TEXT)), "same text, another string")  # equal, not identical
    assert ws.changed() == []
    ws.set("a.md", TEXT + "More.\n", "appended")
    dp = ws.to_plan("t", [], [], "offline")
    [change] = dp.plan.changes
    assert (change.relpath, change.before, change.after) == ("a.md", TEXT.encode("utf-8"), (TEXT + "More.\n").encode("utf-8"))


def test_bytes_seeded_file_keeps_bytes_that_are_not_utf8(tmp_path: Path) -> None:
    raw = b"---\nname: n\n---\n\nbad \xff byte\n"
    ws = Workspace(tmp_path)
    ws.seed("b.md", raw)
    assert ws.get("b.md") == "---\nname: n\n---\n\nbad \udcff byte\n"  # surrogateescape
    assert ws.original("b.md") == raw and ws.changed() == []
    ws.set("b.md", (ws.get("b.md") or "") + "x\n", "appended")
    [change] = ws.to_plan("t", [], [], "offline").plan.changes
    assert change.before == raw and change.after == raw + b"x\n"


def test_unknown_file_is_read_on_first_use_and_deleting_it_is_a_change(tmp_path: Path) -> None:
    write(tmp_path / "c.md", "hello\n")
    ws = Workspace(tmp_path)
    assert not ws.known("c.md") and ws.exists("c.md") and not ws.known("c.md")  # a stat answers: not read
    assert ws.get("c.md") == "hello\n" and ws.known("c.md")
    assert not ws.exists("missing.md") and ws.original("missing.md") is None
    ws.delete("c.md", "gone")
    [change] = ws.to_plan("t", [], [], "offline").plan.changes
    assert (change.kind, change.before, change.after) == ("delete", b"hello\n", None)



def test_a_file_not_loaded_is_looked_at_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The phases ask whether each memory exists several times (the conflict pool, the
    index's links, the prune): a file not loaded is looked at on disk once, and an edit of the
    workspace still answers for itself."""
    write(tmp_path / "c.md", "hello\n")
    looked: list[str] = []
    real = os.stat

    def spy(path: object, *args: object, **kwargs: object) -> os.stat_result:
        looked.append(os.path.basename(os.fsdecode(path)))  # type: ignore[arg-type]
        return real(path, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "stat", spy)
    ws = Workspace(tmp_path)
    assert ws.exists("c.md") and ws.exists("c.md") and ws.exists("c.md")
    assert looked == ["c.md"] and not ws.known("c.md")
    assert ws.found("c.md") and not ws.found("missing.md")  # what the index's link check asks
    ws.delete("c.md", "merged")
    assert not ws.exists("c.md")
    ws.set("c.md", "again\n", "written back")
    assert ws.exists("c.md")

def test_offline_plan_keeps_the_exact_bytes_of_a_bom_file_and_a_non_utf8_file(tmp_path: Path) -> None:
    """Prune moves an over-long index hook into its memory: the plan's before-image of each
    memory is its bytes on disk, whether the dream loaded it as text (UTF-8 with a BOM) or as
    bytes (not UTF-8), and the new bytes start with the old ones."""
    ctx = context(tmp_path)
    bom = b"\xef\xbb\xbf" + memory("Bom", "with a byte order mark", "user", "Body one.\n").encode("utf-8")
    latin = memory("Latin", "latin-1 bytes", "user", "Caf").encode("utf-8") + b"\xe9 body.\n"
    write(ctx.memory_dir / "bom.md", bom, NOW.timestamp() - 3600)
    write(ctx.memory_dir / "latin.md", latin, NOW.timestamp() - 3600)
    hook = "a hook that is far too long for the index " * 4
    write(ctx.memory_dir / "MEMORY.md", f"- [Bom](bom.md) — {hook}\n- [Latin](latin.md) — {hook}\n")
    dp = plan_dream(ctx, NOW)
    changes = {c.relpath: c for c in dp.plan.changes}
    assert set(changes) == {"MEMORY.md", "bom.md", "latin.md"}
    for rel, raw in (("bom.md", bom), ("latin.md", latin)):
        after = changes[rel].after or b""
        assert changes[rel].before == raw
        assert after.startswith(raw) and hook.strip().encode() in after
