"""Search of the catalog (memtui.core.memory.search): the indexed search lists exactly what the
definition — every term a case-folded substring of name, description, path or body — lists,
whatever the state of the index (empty, partly filled, full, stale after a change, gone)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from memtui.core.memory import catalogdb
from memtui.core.memory.catalogdb import CatalogDB
from memtui.core.memory.memories import Memory, scan_memories
from memtui.core.memory.search import CatalogSearch, haystack, terms_of

OLD = 1_700_000_000


@pytest.fixture(autouse=True)
def no_racy_window(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(catalogdb, "RACY_SECONDS", -10)


def write(path: Path, text: str, mtime: float = OLD) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    os.utime(path, (mtime, mtime))


def memory_dir(root: Path) -> Path:
    mem = root / "memory"
    write(mem / "kafka.md", "---\nname: Kafka topics\ndescription: How we migrate Kafka topics\ntype: project\n---\nUse MirrorMaker 2. Straße closed.\n")
    write(mem / "tabs.md", "---\nname: Tabs\ndescription: Prefers tabs\ntype: user\n---\nAlways tabs, never spaces.\n")
    write(mem / "zh.md", "---\nname: 数据库迁移\ndescription: 迁移计划\ntype: project\n---\n先备份数据库，再迁移。\n")
    write(mem / "deep" / "grafana.md", "---\nname: Grafana\ndescription: dashboards\ntype: reference\n---\nThe latency board is at grafana/d/abc.\n")
    write(mem / "odd.md", '---\nname: "\\ud800 lone"\ndescription: a surrogate in the name\ntype: user\n---\nbody text\n')
    write(mem / "plain.md", "no frontmatter, just kafka words\n")
    return mem


QUERIES = ["kafka", "KAFKA topics", "migrate", "strasse", "ss", "ß", "tabs never", "数据库", "迁", "grafana/d", "deep/", "d", "ab", "x", "zzz", "lone", "\ud800", "body", "kafka nothing", '"quoted"', "a", "re"]


def expected(memories: list[Memory], query: str) -> list[int]:
    terms = terms_of(query)
    out = []
    for i, m in enumerate(memories):
        hay = "\n".join(filter(None, (m.name, m.description, m.relpath, Path(m.file).read_text(encoding="utf-8")[m.body_start :]))).casefold()
        if all(t in hay for t in terms):
            out.append(i)
    return out


def found(search: CatalogSearch, query: str) -> list[int]:
    return [p for chunk in search.search(query) for p in chunk.positions]


def fill(search: CatalogSearch, limit: int = 2) -> None:
    while search.index_pending(limit):
        pass


def test_the_same_matches_with_no_index_a_partial_one_and_a_full_one(tmp_path: Path) -> None:
    mem = memory_dir(tmp_path)
    db = CatalogDB.for_memory_dir(tmp_path / "state", mem)
    memories = list(scan_memories(mem, cache=db).memories)
    search = CatalogSearch(memories, db)
    for query in QUERIES:
        assert found(search, query) == expected(memories, query), query  # nothing indexed yet
    assert search.index_pending(2) == 2  # two of six in the index
    for query in QUERIES:
        assert found(search, query) == expected(memories, query), query
    fill(search)
    assert search.index_pending() == 0
    for query in QUERIES:
        assert found(search, query) == expected(memories, query), query
    assert found(search, "kafka") == [i for i, m in enumerate(memories) if m.relpath in ("kafka.md", "plain.md")]
    # the index narrows the candidates down: a term no memory holds has none
    assert search.candidates(["zzzz"]) == []


def test_a_changed_file_is_found_by_what_it_says_now(tmp_path: Path) -> None:
    mem = memory_dir(tmp_path)
    state = tmp_path / "state"
    db = CatalogDB.for_memory_dir(state, mem)
    fill(CatalogSearch(list(scan_memories(mem, cache=db).memories), db))
    write(mem / "tabs.md", "---\nname: Tabs\ndescription: Prefers spaces now\ntype: user\n---\nfour spaces\n", mtime=OLD + 60)
    db = CatalogDB.for_memory_dir(state, mem)
    memories = list(scan_memories(mem, cache=db).memories)
    search = CatalogSearch(memories, db)
    for query in ("tabs never", "four spaces", "prefers"):
        assert found(search, query) == expected(memories, query), query
    fill(search)
    for query in ("tabs never", "four spaces", "prefers", "always"):
        assert found(search, query) == expected(memories, query), query


def test_without_a_database_every_memory_is_read(tmp_path: Path) -> None:
    mem = memory_dir(tmp_path)
    memories = list(scan_memories(mem).memories)
    search = CatalogSearch(memories, None)
    assert search.index_pending() == 0
    for query in QUERIES:
        assert found(search, query) == expected(memories, query), query


def test_matches_come_in_chunks_in_catalog_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from memtui.core.memory import search as search_mod

    mem = tmp_path / "memory"
    for i in range(7):
        write(mem / f"m{i}.md", f"---\nname: note {i}\ndescription: shared words\n---\nbody {i}\n", mtime=OLD + i)
    monkeypatch.setattr(search_mod, "FIRST_CHUNK", 2)
    monkeypatch.setattr(search_mod, "CHUNK", 3)
    memories = list(scan_memories(mem).memories)
    chunks = list(CatalogSearch(memories, None).search("shared"))
    assert [len(c.positions) for c in chunks] == [2, 3, 2]
    assert [c.done for c in chunks] == [False, False, True]
    assert [p for c in chunks for p in c.positions] == list(range(7))
    assert [p for c in CatalogSearch(memories, None).search("shared", allowed=[1, 4]) for p in c.positions] == [1, 4]


def test_the_haystack_is_name_description_path_and_body(tmp_path: Path) -> None:
    mem = memory_dir(tmp_path)
    kafka = next(m for m in scan_memories(mem).memories if m.relpath == "kafka.md")
    assert haystack(kafka) == "kafka topics\nhow we migrate kafka topics\nkafka.md\nuse mirrormaker 2. strasse closed.\n"


def test_an_index_emptied_of_its_stale_entries_fills_up_and_stays(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each change of a file leaves its old entry in the index; past twice the memories (plus
    ``STALE_SLACK``) the index is emptied and filled again — once: the fill then ends, with
    every memory indexed, and the next fills add nothing."""
    from memtui.core.memory import search as search_module

    monkeypatch.setattr(search_module, "STALE_SLACK", 0)
    mem = memory_dir(tmp_path)
    state = tmp_path / "state"
    for round_ in range(4):  # every file changed each round: six stale entries more each time
        for path in sorted(mem.rglob("*.md")):
            text = path.read_text(encoding="utf-8")
            write(path, text + ("\n" if round_ else ""), mtime=OLD + 60 * round_)
        db = CatalogDB.for_memory_dir(state, mem)
        memories = list(scan_memories(mem, cache=db).memories)
        search = CatalogSearch(memories, db)
        for _ in range(20):
            if not search.index_pending(2):
                break
        else:
            raise AssertionError(f"round {round_}: the index never filled up")
        assert db.search_size() <= 2 * len(memories)
        assert search.index_pending() == 0
        for query in QUERIES:
            assert found(search, query) == expected(memories, query), (round_, query)


def test_a_database_of_older_code_starts_its_index_afresh(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A database written by another version of the parser is emptied — its search index with
    it, entry count included — and filled again from zero."""
    mem = memory_dir(tmp_path)
    state = tmp_path / "state"
    db = CatalogDB.for_memory_dir(state, mem)
    fill(CatalogSearch(list(scan_memories(mem, cache=db).memories), db))
    assert db.search_size() == 6
    db.close()
    monkeypatch.setattr(catalogdb, "code_fingerprint", lambda *a: "another parser")
    db = CatalogDB.for_memory_dir(state, mem)
    assert db.search_size() == 0
    memories = list(scan_memories(mem, cache=db).memories)
    search = CatalogSearch(memories, db)
    fill(search)
    assert db.search_size() == 6
    for query in QUERIES:
        assert found(search, query) == expected(memories, query), query
