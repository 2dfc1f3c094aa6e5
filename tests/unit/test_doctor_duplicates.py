"""SPEC §4.3 duplicates: exact body duplicates; near-duplicates of the same type by
description + body similarity (rapidfuzz token_sort_ratio ≥ 85 after a Jaccard ≥ 0.5 word-set
prefilter); never across types; short bodies not judged."""

from __future__ import annotations

from pathlib import Path

from doctor_helpers import doctor, only, write

from memtui.core.doctor.duplicates import near_duplicate_pairs, tokens


def fb(description: str, body: str, kind: str = "feedback") -> str:
    return f"---\nname: n\ndescription: {description}\ntype: {kind}\n---\n\n{body}\n"


def setup(tmp_path: Path, files: dict[str, str]) -> Path:
    memory_dir = tmp_path / "memory"
    for rel, text in files.items():
        write(memory_dir, rel, text)
    write(memory_dir, "MEMORY.md", "".join(f"- [n]({rel}) — d\n" for rel in files))
    return memory_dir


BODY = "Answer in at most a few sentences unless asked for detail.\n\n**Why:** long recaps were skipped unread.\n\n**How to apply:** drop the closing summary."


def test_exact_duplicates(tmp_path: Path) -> None:
    memory_dir = setup(tmp_path, {"a.md": fb("terse answers", BODY), "b.md": fb("short replies", BODY.replace("\n\n", "\n\n  ")), "c.md": fb("other", "Something else entirely, long enough to count.")})
    report = doctor(memory_dir)
    assert [(f.path, f.data["others"]) for f in only(report, "duplicate")] == [("a.md", ["b.md"]), ("b.md", ["a.md"])]
    assert only(report, "near-duplicate") == []


def test_near_duplicates_same_type_only(tmp_path: Path) -> None:
    reworded = BODY.replace("unless asked for detail", "unless the user asks for detail")
    memory_dir = setup(
        tmp_path,
        {
            "a.md": fb("The user wants terse answers without recap paragraphs", BODY),
            "b.md": fb("The user wants terse answers, no recap paragraphs", reworded),
            "c.md": fb("The user wants terse answers without recap paragraphs", reworded, kind="user"),
        },
    )
    report = doctor(memory_dir)
    near = {(f.path, tuple(f.data["others"])) for f in only(report, "near-duplicate")}
    assert near == {("a.md", ("b.md",)), ("b.md", ("a.md",))}
    [a] = [f for f in only(report, "near-duplicate") if f.path == "a.md"]
    assert a.data["scores"][0] >= 85 and a.severity == "info" and a.fix is None


def test_different_memories_are_not_near_duplicates(tmp_path: Path) -> None:
    memory_dir = setup(
        tmp_path,
        {
            "a.md": fb("Squash merges", "Squash every PR into one commit.\n\n**Why:** bisect.\n\n**How to apply:** squash button."),
            "b.md": fb("Real database in tests", "Integration tests use the docker database.\n\n**Why:** mocks lied.\n\n**How to apply:** always."),
            "c.md": fb("x", "short"),
            "d.md": fb("x", "short"),
        },
    )
    report = doctor(memory_dir)
    assert only(report, "near-duplicate") == [] and only(report, "duplicate") == []


def test_cjk_text_is_tokenised_in_bigrams() -> None:
    assert tokens("回复用中文") == {"回复", "复用", "用中", "中文"}
    texts = ["用户喜欢简洁的中文回复，不要总结段落", "用户喜欢简洁的中文回复，不要总结的段落", "部署流程在周五冻结，只合并修复"]
    pairs = near_duplicate_pairs(texts, ["user", "user", "user"])
    assert [(p.a, p.b) for p in pairs] == [(0, 1)]


def test_large_blocks_use_minhash_and_find_the_same_pairs(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import memtui.core.doctor.duplicates as dup

    texts = [
        "the user wants terse answers without recap paragraphs answer in at most a few sentences unless asked for detail",
        "the user wants terse answers, no recap paragraphs answer in at most a few sentences unless the user asks for detail",
        "integration tests use the docker database because mocks hid a broken migration last quarter",
        "squash every pull request into a single commit so the history stays bisectable",
    ]
    exact = [(p.a, p.b) for p in near_duplicate_pairs(texts, ["feedback"] * 4)]
    monkeypatch.setattr(dup, "EXACT_BLOCK_MAX", 1)
    approx = [(p.a, p.b) for p in near_duplicate_pairs(texts, ["feedback"] * 4)]
    assert exact == approx == [(0, 1)]
