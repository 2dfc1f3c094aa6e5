"""Recall's corpus through the catalog database: a warm scan (nothing changed since the last one,
the database kept) opens no memory file and gives exactly the corpus a scan without the database
gives — in each agent's memory format; a changed file is read again; a file modified within the
racy window is never trusted; a damaged database is rebuilt."""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path

import pytest

from memtui.core.memory import catalogdb
from memtui.core.memory.catalogdb import CatalogDB
from memtui.core.places.behaviour import MemoryFormat
from memtui.core.places.flavor import AGENT, CLAUDE
from memtui.core.recall import load_corpus
from memtui.core.recall.corpus import BODY_HEAD_CHARS, RecallCorpus
from memtui.demo import materialize
from support.opens import memory_files_opened

NOW = datetime(2026, 3, 10, 12, tzinfo=UTC)
FORMATS = [AGENT.behaviour.memory_format, CLAUDE.behaviour.memory_format]

# Read differently by the two formats: a numeric description is text for the seed agent and
# ignored by Claude Code; `metadata.type` decides the type for Claude Code only; a BOM before
# the frontmatter is dropped by Claude Code only.
FORMAT_TRAPS = {
    "numeric_description.md": "---\nname: 42\ndescription: 1999\ntype: project\n---\nA body.\n",
    "metadata_type.md": "---\nname: nested\ndescription: typed below\ntype: project\nmetadata:\n  type: user\n---\nBody.\n",
    "bom.md": "\ufeff---\nname: bom\ndescription: behind a BOM\ntype: feedback\n---\nBody after a BOM.\n",
}


def _workspace(tmp_path: Path) -> Path:
    memory = materialize(tmp_path / "demo", NOW).memory_dir
    stamp = NOW.timestamp() - 3600
    for name, text in FORMAT_TRAPS.items():
        path = memory / name
        path.write_text(text, encoding="utf-8")
        os.utime(path, (stamp, stamp))  # the same mtime for all: ties keep path order
    long_body = memory / "sub" / "long_body.md"
    long_body.parent.mkdir(exist_ok=True)
    long_body.write_text("---\nname: long\ndescription: a long body\ntype: reference\n---\n" + "word " * 600 + "\n", encoding="utf-8")
    os.utime(long_body, (stamp, stamp))
    return memory


def _cache(state: Path, memory: Path, fmt: MemoryFormat) -> CatalogDB:
    return CatalogDB.for_memory_dir(state, memory, fmt=fmt)


def _docs(corpus: RecallCorpus) -> list[tuple[object, ...]]:
    return [(d.header.file, d.relpath, d.header.mtime, d.header.description, d.header.type, d.name, d.body_head, d.key) for d in corpus.docs]


@pytest.fixture
def no_racy_window(monkeypatch: pytest.MonkeyPatch) -> None:
    """The files were written just now (their ctime cannot be set back): without this each
    would be 'racy' and never kept in the database."""
    monkeypatch.setattr(catalogdb, "RACY_SECONDS", -10)


@pytest.mark.usefixtures("no_racy_window")
@pytest.mark.parametrize("fmt", FORMATS, ids=lambda f: f.key)
def test_a_warm_corpus_reads_no_memory_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fmt: MemoryFormat) -> None:
    memory = _workspace(tmp_path)
    state = tmp_path / "state"
    expected = load_corpus(memory, fmt)
    # what the traps are read as, worked out from each format's rules
    by_rel = {d.relpath: d for d in expected.docs}
    claude = fmt.strings_only
    assert by_rel["numeric_description.md"].header.description == (None if claude else "1999")
    assert by_rel["metadata_type.md"].header.type == ("user" if claude else "project")
    assert by_rel["bom.md"].header.description == ("behind a BOM" if claude else None)
    assert len(by_rel["sub/long_body.md"].body_head) == BODY_HEAD_CHARS
    tied = [d.relpath for d in expected.docs if d.relpath in FORMAT_TRAPS or d.relpath == "sub/long_body.md"]
    assert tied == ["bom.md", "metadata_type.md", "numeric_description.md", "sub/long_body.md"]

    assert _docs(load_corpus(memory, fmt, cache=_cache(state, memory, fmt))) == _docs(expected)  # fills it
    with memory_files_opened(monkeypatch, memory) as opened:
        warm = load_corpus(memory, fmt, cache=_cache(state, memory, fmt))
    assert opened == []
    assert _docs(warm) == _docs(expected)
    assert warm.docs == expected.docs


@pytest.mark.usefixtures("no_racy_window")
def test_each_format_keeps_its_own_corpus(tmp_path: Path) -> None:
    memory = _workspace(tmp_path)
    state = tmp_path / "state"
    seed, claude = FORMATS
    load_corpus(memory, seed, cache=_cache(state, memory, seed))
    warm_claude = load_corpus(memory, claude, cache=_cache(state, memory, claude))
    assert _docs(warm_claude) == _docs(load_corpus(memory, claude))
    assert _docs(warm_claude) != _docs(load_corpus(memory, seed))


@pytest.mark.usefixtures("no_racy_window")
def test_a_changed_file_is_read_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    memory = _workspace(tmp_path)
    state = tmp_path / "state"
    fmt = FORMATS[0]
    load_corpus(memory, fmt, cache=_cache(state, memory, fmt))
    changed = memory / "metadata_type.md"
    stamp = changed.stat().st_mtime
    changed.write_text("---\nname: nested\ndescription: rewritten\ntype: user\n---\nBody.\n", encoding="utf-8")
    os.utime(changed, (stamp, stamp))  # the same mtime: the ctime and the size tell
    (memory / "bom.md").unlink()
    with memory_files_opened(monkeypatch, memory) as opened:
        warm = load_corpus(memory, fmt, cache=_cache(state, memory, fmt))
    assert opened == ["metadata_type.md"]
    by_rel = {d.relpath: d for d in warm.docs}
    assert (by_rel["metadata_type.md"].header.description, by_rel["metadata_type.md"].header.type) == ("rewritten", "user")
    assert "bom.md" not in by_rel
    assert _docs(warm) == _docs(load_corpus(memory, fmt))


def test_a_racy_file_is_not_trusted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    memory = tmp_path / "memory"
    memory.mkdir()
    (memory / "fresh.md").write_text("---\nname: fresh\ndescription: just written\ntype: user\n---\nBody.\n", encoding="utf-8")
    state = tmp_path / "state"
    fmt = FORMATS[0]
    first = load_corpus(memory, fmt, cache=_cache(state, memory, fmt))
    assert [d.header.description for d in first.docs] == ["just written"]
    # written within the racy window: its bytes may still change under the same stat key
    with memory_files_opened(monkeypatch, memory) as opened:
        again = load_corpus(memory, fmt, cache=_cache(state, memory, fmt))
    assert opened == ["fresh.md"]
    assert again.docs == first.docs


@pytest.mark.usefixtures("no_racy_window")
def test_a_damaged_database_is_rebuilt(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    memory = _workspace(tmp_path)
    state = tmp_path / "state"
    fmt = FORMATS[0]
    expected = load_corpus(memory, fmt)
    cache = _cache(state, memory, fmt)
    load_corpus(memory, fmt, cache=cache)
    assert cache.path is not None
    path = cache.path
    cache.close()
    path.write_bytes(b"not a database at all" * 100)
    for suffix in ("-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    rebuilt = _cache(state, memory, fmt)
    assert rebuilt.rebuilt
    assert _docs(load_corpus(memory, fmt, cache=rebuilt)) == _docs(expected)
    with memory_files_opened(monkeypatch, memory) as opened:
        assert _docs(load_corpus(memory, fmt, cache=_cache(state, memory, fmt))) == _docs(expected)
    assert opened == []


@pytest.mark.usefixtures("no_racy_window")
def test_a_garbled_stored_value_is_read_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    memory = _workspace(tmp_path)
    state = tmp_path / "state"
    fmt = FORMATS[0]
    expected = load_corpus(memory, fmt)
    load_corpus(memory, fmt, cache=_cache(state, memory, fmt))
    import sqlite3

    cache = _cache(state, memory, fmt)
    assert cache.path is not None
    cache.close()
    with sqlite3.connect(cache.path) as conn:
        conn.execute("UPDATE derived SET value = ? WHERE relpath = 'bom.md'", (b'[1, 2]',))
        conn.execute("UPDATE derived SET value = ? WHERE relpath = 'metadata_type.md'", (b'{not json',))
    with memory_files_opened(monkeypatch, memory) as opened:
        assert _docs(load_corpus(memory, fmt, cache=_cache(state, memory, fmt))) == _docs(expected)
    assert opened == ["bom.md", "metadata_type.md"]
