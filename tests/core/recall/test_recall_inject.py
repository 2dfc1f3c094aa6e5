"""The injected text (docs/behaviour.md §6 "Injection"), worked out by hand for a tiny memory dir."""

from __future__ import annotations

import os
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

from memtui.core.recall import RecallCorpus, RecallDoc, Selection, load_corpus, recall
from memtui.core.recall.inject import memory_header, read_for_injection

NOW = datetime(2026, 3, 10, 12, 0, tzinfo=UTC)
DAY = 86_400
STALE_9 = (
    "This memory is 9 days old. Memories are point-in-time observations, not live state"
    " — claims about code behavior or file:line citations may be outdated."
    " Verify against current code before asserting as fact."
)


class Fixed:
    """A selector that picks the given relpaths, in that order."""

    name = "fixed"

    def __init__(self, *rels: str) -> None:
        self.rels = rels

    def select(self, query: str, candidates: Sequence[RecallDoc], corpus: RecallCorpus, recent_tools: Sequence[str]) -> Selection:
        by = {d.relpath: d for d in candidates}
        return Selection(tuple((by[r], "fixed") for r in self.rels))


def mem(d: Path, rel: str, text: str | bytes, age_s: float) -> Path:
    path = d / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode() if isinstance(text, str) else text)
    t = NOW.timestamp() - age_s
    os.utime(path, (t, t))
    return path


def test_headers_fresh_yesterday_stale(tmp_path: Path) -> None:
    p = tmp_path / "a.md"
    now = NOW.timestamp()
    assert memory_header(p, now - 3600, NOW) == f"Memory (saved today): {p}:"
    assert memory_header(p, now - DAY - 1, NOW) == f"Memory (saved yesterday): {p}:"
    assert memory_header(p, now - 9 * DAY - 5, NOW) == f"{STALE_9}\n\nMemory: {p}:"


def test_exact_injected_text_for_two_picks(tmp_path: Path) -> None:
    d = tmp_path / "memory"
    fresh = mem(d, "feedback_kafka_retries.md",
                "---\ndescription: Kafka consumer retries must be idempotent\ntype: feedback\n---\nUse the dedupe key.\n", 3600)
    stale = mem(d, "project_kafka_cutover.md",
                "---\r\ndescription: Kafka cutover plan and dates\r\ntype: project\r\n---\r\nCutover on 2026-03-05.", 9 * DAY + 60)
    mem(d, "user_editor.md", "---\ndescription: Uses neovim\ntype: user\n---\n", 60)
    result = recall("kafka retries and cutover", load_corpus(d), now=NOW,
                    selector=Fixed("feedback_kafka_retries.md", "project_kafka_cutover.md"))
    assert result.injected_text == (
        "<system-reminder>\n"
        f"Memory (saved today): {fresh}:\n"
        "\n"
        "---\ndescription: Kafka consumer retries must be idempotent\ntype: feedback\n---\nUse the dedupe key.\n"
        "\n</system-reminder>"
        "\n\n"
        "<system-reminder>\n"
        f"{STALE_9}\n\nMemory: {stale}:\n"
        "\n"
        "---\ndescription: Kafka cutover plan and dates\ntype: project\n---\nCutover on 2026-03-05."
        "\n</system-reminder>"
    )
    data = result.to_json()
    assert [(p["age_label"], p["stale_caveat"]) for p in data["picks"]] == [("today", None), ("9 days ago", STALE_9)]
    assert data["injected"] == result.injected_text


def test_cut_at_200_lines(tmp_path: Path) -> None:
    p = mem(tmp_path, "long.md", "".join(f"l{i}\n" for i in range(1, 251)), 0)
    content, by = read_for_injection(p)
    assert by == "lines"
    assert content == "\n".join(f"l{i}" for i in range(1, 201)) + (
        f"\n\n> This memory file was truncated (first 200 lines). Use the Read tool to view the complete file at: {p}"
    )


def test_cut_at_4096_bytes_on_a_line_boundary(tmp_path: Path) -> None:
    line = "é" * 99 + "x"  # 199 bytes, 100 characters
    p = mem(tmp_path, "wide.md", "\n".join([line] * 30), 0)
    content, by = read_for_injection(p)
    # 20 lines = 20 * 199 + 19 newlines = 3999 bytes; a 21st would make 4199 > 4096.
    assert by == "bytes"
    assert content == "\n".join([line] * 20) + (
        f"\n\n> This memory file was truncated (4096 byte limit). Use the Read tool to view the complete file at: {p}"
    )


def test_exactly_4096_bytes_is_not_cut_and_bom_is_stripped(tmp_path: Path) -> None:
    body = "a" * 4096
    p = mem(tmp_path, "edge.md", b"\xef\xbb\xbf" + body.encode(), 0)
    assert read_for_injection(p) == (body, None)


def test_single_huge_line_gives_only_the_note(tmp_path: Path) -> None:
    p = mem(tmp_path, "one.md", "z" * 50_000, 0)
    content, by = read_for_injection(p)
    assert by == "bytes"
    assert content.startswith("\n\n> This memory file was truncated (4096 byte limit).")


def test_unreadable_pick_is_dropped_from_the_text(tmp_path: Path) -> None:
    d = tmp_path / "memory"
    p = mem(d, "gone_soon.md", "---\ndescription: deploy checklist for fridays\n---\n", 0)
    corpus = load_corpus(d)
    p.unlink()
    result = recall("deploy checklist please", corpus, now=NOW, selector=Fixed("gone_soon.md"))
    assert [x.relpath for x in result.picks] == ["gone_soon.md"]
    assert result.injected[0].error is not None
    assert result.injected_text == ""
