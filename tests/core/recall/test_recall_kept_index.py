"""The lexical index kept in memtui's state dir: a kept index answers exactly as a fresh build
does; a changed, new or deleted memory, or changed code, gives another fingerprint (a build);
a missing, truncated, damaged, foreign or planted file costs a build, never a crash or a wrong
score; the files are written whole."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from memtui.core.memory.headers import MemoryHeader
from memtui.core.recall import RecallDoc, keptlexical
from memtui.core.recall.keptlexical import index_fingerprint, keep_index, lexical_index, load_index
from memtui.core.recall.lexical import LexicalIndex

QUERIES = [
    "kafka migration plan",
    "how do we deploy the ingest service",
    "迁移到Kafka",
    "模型训练好了放到哪里",
    "when will the vendor deliver?",
    "redis redis cache",
    "nothing here matches",
]


def doc(relpath: str, description: str | None = None, body: str = "", name: str | None = None) -> RecallDoc:
    return RecallDoc(MemoryHeader(Path("/m") / relpath, relpath, 0.0, description, "project"), name, body)


def corpus() -> list[RecallDoc]:
    return [
        doc("kafka_migration.md", "Kafka migration plan for the ingest service", "We migrate to Kafka in March.", "kafka plan"),
        doc("deploy.md", "How to deploy the ingest service", "Run the deploy script from CI, never by hand."),
        doc("模型/训练.md", "训练好的模型放到MLflow注册", "模型训练完成后注册到MLflow。"),
        doc("vendor.md", "图片标注外包每周五交付", "供应商每周五交付一批。"),
        doc("redis.md", "Redis cache eviction", "LRU eviction with a 2 GB cap."),
        doc("empty.md"),
    ]


def answers(index: LexicalIndex) -> list[object]:
    out: list[object] = []
    for q in QUERIES:
        out.append((index.scores(q).tolist(), [(r.index, r.score) for r in index.rank(q)], index.term_share(q).tolist(),
                    [index.matched_terms(q, i) for i in range(len(index.docs))]))
    return out


def no_build(cls: type, docs: object) -> None:
    raise AssertionError("built again")


def kept_files(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


def test_a_kept_index_answers_as_a_fresh_build(tmp_path: Path) -> None:
    docs = corpus()
    folder = tmp_path / "lexical"
    built = lexical_index(docs, folder)  # nothing kept yet: built, then kept
    fp = index_fingerprint(docs)
    assert fp is not None
    assert kept_files(folder) == sorted([f"{fp}.json", *(f"{fp}.{n}.npy" for n in ("data", "indices", "indptr", "vocab"))])
    loaded = load_index(docs, folder, fp)
    assert loaded is not None
    assert answers(loaded) == answers(built) == answers(LexicalIndex.build(docs))
    # the loaded arrays are mapped from the files, not copied
    assert isinstance(loaded.matrix()[0]["data"], np.memmap)  # type: ignore[index]
    assert loaded.matrix()[1] == built.matrix()[1]


def test_a_warm_call_loads_and_does_not_build(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    docs = corpus()
    folder = tmp_path / "lexical"
    expected = answers(lexical_index(docs, folder))

    monkeypatch.setattr(LexicalIndex, "build", classmethod(no_build))
    assert answers(lexical_index(docs, folder)) == expected


def changed(docs: list[RecallDoc], i: int, **parts: str) -> list[RecallDoc]:
    d = docs[i]
    header = MemoryHeader(d.header.file, d.relpath, d.header.mtime, parts.get("description", d.header.description), d.header.type)
    return [*docs[:i], RecallDoc(header, parts.get("name", d.name), parts.get("body", d.body_head)), *docs[i + 1 :]]


@pytest.mark.parametrize(
    "change",
    [
        pytest.param(lambda ds: changed(ds, 1, description="How to roll back the ingest service"), id="description"),
        pytest.param(lambda ds: changed(ds, 4, body="LRU eviction with a 4 GB cap."), id="body"),
        pytest.param(lambda ds: changed(ds, 0, name="kafka plans"), id="name"),
        pytest.param(lambda ds: [doc("new.md", "Deploy checklist for Kafka"), *ds], id="new memory"),
        pytest.param(lambda ds: ds[:2] + ds[3:], id="deleted memory"),
        pytest.param(lambda ds: [ds[1], ds[0], *ds[2:]], id="order"),
        pytest.param(lambda ds: [doc("renamed.md", ds[0].header.description, ds[0].body_head, ds[0].name), *ds[1:]], id="renamed"),
    ],
)
def test_any_change_of_the_documents_gives_a_rebuild(tmp_path: Path, change: object) -> None:
    docs = corpus()
    folder = tmp_path / "lexical"
    lexical_index(docs, folder)
    after = change(docs)  # type: ignore[operator]
    old, new = index_fingerprint(docs), index_fingerprint(after)
    assert old != new
    assert load_index(after, folder, new) is None  # type: ignore[arg-type]
    got = lexical_index(after, folder)
    assert answers(got) == answers(LexicalIndex.build(after))
    # the old set is gone, the new one kept
    assert {n.split(".", 1)[0] for n in kept_files(folder)} == {new}


def test_the_code_and_the_gloss_table_are_in_the_fingerprint(monkeypatch: pytest.MonkeyPatch) -> None:
    docs = corpus()
    fp = index_fingerprint(docs)
    monkeypatch.setattr(keptlexical, "RECIPE", "lexical-index/other")
    assert index_fingerprint(docs) != fp
    monkeypatch.undo()
    monkeypatch.setattr(keptlexical, "code_fingerprint", lambda modules: "other code")
    assert index_fingerprint(docs) != fp
    monkeypatch.undo()
    from memtui.core.recall import gloss

    monkeypatch.setattr(gloss, "table_fingerprint", lambda: "0" * 16)
    assert index_fingerprint(docs) != fp
    monkeypatch.setattr(gloss, "table_fingerprint", lambda: None)
    assert index_fingerprint(docs) is None  # nothing is kept without the table's version


def _kept(tmp_path: Path) -> tuple[list[RecallDoc], Path, str, list[object]]:
    docs = corpus()
    folder = tmp_path / "lexical"
    expected = answers(lexical_index(docs, folder))
    fp = index_fingerprint(docs)
    assert fp is not None
    return docs, folder, fp, expected


def _flip_last_byte(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[-1] ^= 0x01
    path.write_bytes(bytes(data))


@pytest.mark.parametrize("name", ["data", "indices", "indptr", "vocab", "json"])
@pytest.mark.parametrize(
    "damage",
    [
        pytest.param(lambda p: p.unlink(), id="missing"),
        pytest.param(lambda p: p.write_bytes(p.read_bytes()[:-3]), id="truncated"),
        pytest.param(lambda p: p.write_bytes(p.read_bytes() + b"\0" * 8), id="longer"),
        pytest.param(_flip_last_byte, id="one bit"),
        pytest.param(lambda p: p.write_bytes(b"not numpy at all"), id="foreign"),
        pytest.param(lambda p: p.write_bytes(b""), id="empty"),
    ],
)
def test_a_damaged_kept_file_costs_a_build(tmp_path: Path, name: str, damage: object) -> None:
    docs, folder, fp, expected = _kept(tmp_path)
    path = folder / (f"{fp}.json" if name == "json" else f"{fp}.{name}.npy")
    damage(path)  # type: ignore[operator]
    assert load_index(docs, folder, fp) is None
    assert answers(lexical_index(docs, folder)) == expected
    assert load_index(docs, folder, fp) is not None  # kept again


def test_an_array_of_another_dtype_or_shape_is_refused(tmp_path: Path) -> None:
    docs, folder, fp, expected = _kept(tmp_path)
    path = folder / f"{fp}.indices.npy"
    indices = np.load(path)
    np.save(path, indices.astype(np.int64))  # the same values, 8 bytes each
    assert load_index(docs, folder, fp) is None
    np.save(path, indices.reshape(1, -1))
    assert load_index(docs, folder, fp) is None


def test_a_consistent_set_with_an_out_of_range_document_is_refused(tmp_path: Path) -> None:
    # a set whose manifest was written for its arrays (checksums match) but whose document
    # indices point past the corpus: refused, never an IndexError at query time
    import orjson

    docs, folder, fp, expected = _kept(tmp_path)
    path = folder / f"{fp}.indices.npy"
    indices = np.load(path)
    indices[0] = len(docs)
    np.save(path, indices)
    manifest = orjson.loads((folder / f"{fp}.json").read_bytes())
    manifest["arrays"]["indices"][1] = keptlexical._crc(indices)
    (folder / f"{fp}.json").write_bytes(orjson.dumps(manifest))
    assert load_index(docs, folder, fp) is None
    assert answers(lexical_index(docs, folder)) == expected


def test_a_manifest_for_another_corpus_size_is_refused(tmp_path: Path) -> None:
    docs, folder, fp, _ = _kept(tmp_path)
    assert load_index(docs[:-1], folder, fp) is None


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs")
@pytest.mark.parametrize("name", ["data", "json"])
def test_a_fifo_in_place_of_a_kept_file_is_refused_without_blocking(tmp_path: Path, name: str) -> None:
    docs, folder, fp, expected = _kept(tmp_path)
    path = folder / (f"{fp}.json" if name == "json" else f"{fp}.{name}.npy")
    path.unlink()
    os.mkfifo(path)
    assert load_index(docs, folder, fp) is None  # (an open without O_NONBLOCK would hang here)
    assert answers(lexical_index(docs, folder)) == expected


def test_a_huge_array_file_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    docs, folder, fp, _ = _kept(tmp_path)
    monkeypatch.setattr(keptlexical, "MAX_ARRAY_BYTES", 64)
    assert load_index(docs, folder, fp) is None


def test_files_deleted_after_loading_still_answer(tmp_path: Path) -> None:
    docs, folder, fp, expected = _kept(tmp_path)
    loaded = load_index(docs, folder, fp)
    assert loaded is not None
    for path in folder.iterdir():
        path.unlink()
    assert answers(loaded) == expected


def test_the_files_are_written_whole_and_a_failed_write_leaves_no_set(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    docs = corpus()
    folder = tmp_path / "lexical"
    index = LexicalIndex.build(docs)
    fp = index_fingerprint(docs)
    assert fp is not None
    calls: list[str] = []
    real_save = np.save

    def failing_save(fh: object, array: np.ndarray, allow_pickle: bool = False) -> None:
        calls.append(str(array.dtype))
        if len(calls) == 3:  # the third array: the disk fills up
            raise OSError(28, "No space left on device")
        real_save(fh, array, allow_pickle=allow_pickle)  # type: ignore[arg-type]

    monkeypatch.setattr(np, "save", failing_save)
    assert keep_index(index, folder, fp) is False
    # no temp file left, no manifest: the two arrays written alone are no set
    assert kept_files(folder) == sorted([f"{fp}.data.npy", f"{fp}.indices.npy"])
    assert load_index(docs, folder, fp) is None
    monkeypatch.undo()
    assert keep_index(index, folder, fp) is True
    assert answers(load_index(docs, folder, fp)) == answers(index)  # type: ignore[arg-type]


def test_stale_sets_and_temp_files_are_removed(tmp_path: Path) -> None:
    docs, folder, fp, _ = _kept(tmp_path)
    old_temp = folder / ".lexical-abc.tmp"
    old_temp.write_bytes(b"x")
    os.utime(old_temp, (1, 1))
    young_temp = folder / ".lexical-def.tmp"
    young_temp.write_bytes(b"x")  # another writer's, still running
    (folder / ("f" * 64 + ".data.npy")).write_bytes(b"old")
    other = changed(docs, 0, description="something else")
    lexical_index(other, folder)
    new = index_fingerprint(other)
    assert kept_files(folder) == sorted([young_temp.name, f"{new}.json", *(f"{new}.{n}.npy" for n in ("data", "indices", "indptr", "vocab"))])


def test_an_unwritable_folder_only_costs_the_build(tmp_path: Path) -> None:
    docs = corpus()
    blocker = tmp_path / "file"
    blocker.write_text("a file where the folder's parent should be")
    index = lexical_index(docs, blocker / "lexical")
    assert answers(index) == answers(LexicalIndex.build(docs))


def test_no_docs_keeps_nothing(tmp_path: Path) -> None:
    folder = tmp_path / "lexical"
    index = lexical_index([], folder)
    assert index.rank("kafka") == []
    assert not folder.exists()


def test_text_moved_between_parts_changes_the_fingerprint() -> None:
    # the same characters, split differently between description and name, index differently
    # (the description counts twice): the fingerprint must tell them apart
    a = [doc("a.md", "kafka migra", name="tion plan")]
    b = [doc("a.md", "kafka", name=" migration plan")]
    assert index_fingerprint(a) != index_fingerprint(b)
    # a missing part and an empty one are the same document text: the same fingerprint
    assert index_fingerprint([doc("a.md", None)]) == index_fingerprint([doc("a.md", "")])


def test_a_warm_recall_of_the_demo_gives_the_same_result_without_a_build(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from datetime import UTC, datetime

    from memtui.core.recall import load_corpus, recall
    from memtui.demo import materialize

    now = datetime(2026, 3, 10, 12, tzinfo=UTC)
    memory = materialize(tmp_path / "demo", now).memory_dir
    state = tmp_path / "state"
    queries = ["kafka migration cutover", "how do we deploy the ingest service", "模型 训练 放到 哪里"]
    fresh = [recall(q, load_corpus(memory), now=now, selector="lexical").to_json() for q in queries]  # no state dir: built each time
    first = [recall(q, load_corpus(memory, state_dir=state), now=now, selector="lexical").to_json() for q in queries]
    assert list((state / "memdirs").glob("*/lexical/*.json"))  # kept
    monkeypatch.setattr(LexicalIndex, "build", classmethod(no_build))
    warm = [recall(q, load_corpus(memory, state_dir=state), now=now, selector="lexical").to_json() for q in queries]
    assert fresh == first == warm
    assert any(r["picks"] for r in warm)


def test_each_memory_format_keeps_its_own_index(tmp_path: Path) -> None:
    from memtui.core.places.flavor import AGENT, CLAUDE
    from memtui.core.recall import load_corpus

    memory = tmp_path / "memory"
    memory.mkdir()
    # a BOM before the frontmatter: Claude Code drops it and reads the description, the seed
    # agent reads no frontmatter at all: two different documents from one file
    (memory / "bom.md").write_text("\ufeff---\nname: bom\ndescription: kafka cutover\ntype: project\n---\nBody.\n", encoding="utf-8")
    state = tmp_path / "state"
    seed = load_corpus(memory, AGENT.behaviour.memory_format, state_dir=state)
    claude = load_corpus(memory, CLAUDE.behaviour.memory_format, state_dir=state)
    assert seed.index_folder is not None and claude.index_folder is not None
    assert seed.index_folder != claude.index_folder and seed.index_folder.name == "lexical"
    seed.lexical_index()
    claude.lexical_index()
    # each run keeps its own: loading the other format's corpus does not remove the first's set
    assert any(seed.index_folder.glob("*.json")) and any(claude.index_folder.glob("*.json"))
    assert seed.docs[0].header.description is None and claude.docs[0].header.description == "kafka cutover"
