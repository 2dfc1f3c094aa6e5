"""Past the 200 wall: the hybrid selector finds an old memory the reference never shows."""

from __future__ import annotations

import json
import os
import re
from datetime import UTC, datetime
from pathlib import Path

import httpx2
import pytest

from memtui.core.recall import (
    HybridSelector,
    LexicalSelector,
    load_corpus,
    make_client,
    recall,
)
from memtui.core.recall.corpus import RecallCorpus
from memtui.core.recall.embedding import ModelUnavailableError
from memtui.core.recall.engine import Candidates

NOW = datetime(2026, 3, 10, 12, 0, tzinfo=UTC)
TOPICS = ["billing export", "ui colours", "docs build", "release cadence", "api pagination", "ci cache", "logging levels", "feature flags"]


def store(d: Path, n: int = 1000) -> None:
    d.mkdir()
    for i in range(n):
        topic = TOPICS[i % len(TOPICS)]
        p = d / f"note_{i:04d}.md"
        p.write_text(f"---\ndescription: Notes about {topic} number {i}\ntype: project\n---\nbody {i}\n", encoding="utf-8")
        t = NOW.timestamp() - (i + 1) * 3600  # note_0000 newest
        os.utime(p, (t, t))
    old = d / "feedback_tachyon_lock.md"
    old.write_text("---\ndescription: Never release the tachyon lock before the flush completes\ntype: feedback\n---\n", encoding="utf-8")
    t = NOW.timestamp() - 900 * 86400
    os.utime(old, (t, t))


def fake_model(request: httpx2.Request) -> httpx2.Response:
    """Picks every manifest entry whose description mentions 'tachyon' (a stand-in for Sonnet)."""
    user = json.loads(request.content)["messages"][0]["content"]
    names = re.findall(r"^- (?:\[\w+\] )?(\S+) \(.*tachyon", user, flags=re.MULTILINE)
    text = json.dumps({"selected_memories": names})
    return httpx2.Response(200, json={"id": "m", "type": "message", "role": "assistant", "model": "x",
                                      "content": [{"type": "text", "text": text}], "stop_reason": "end_turn",
                                      "stop_sequence": None, "usage": {"input_tokens": 1, "output_tokens": 1}})


def client(seen: list[str]) -> object:
    def handler(request: httpx2.Request) -> httpx2.Response:
        seen.append(json.loads(request.content)["messages"][0]["content"])
        return fake_model(request)

    return make_client(api_key="test", http_client=httpx2.Client(transport=httpx2.MockTransport(handler)), max_retries=0)


def test_hybrid_finds_a_memory_older_than_the_200_newest(tmp_path: Path) -> None:
    d = tmp_path / "memory"
    store(d)
    corpus = load_corpus(d)
    query = "can I release the tachyon lock early?"

    seen: list[str] = []
    ref = recall(query, corpus, now=NOW, selector="claude", client=client(seen))  # type: ignore[arg-type]
    assert ref.picks == ()  # the reference's manifest never contains it
    assert "feedback_tachyon_lock.md" not in seen[0]
    assert (ref.manifest.count, ref.manifest.total) == (200, 1001)

    seen.clear()
    hyb = recall(query, corpus, now=NOW, selector="hybrid", client=client(seen))  # type: ignore[arg-type]
    assert [p.relpath for p in hyb.picks] == ["feedback_tachyon_lock.md"]
    assert hyb.reference_window_misses == ("feedback_tachyon_lock.md",)
    assert hyb.to_json()["reference_window_misses"] == ["feedback_tachyon_lock.md"]
    assert hyb.picks[0].age_label == "900 days ago" and hyb.picks[0].stale_caveat is not None
    # what the reference would send versus what was sent
    assert hyb.sent is not None and hyb.sent.count == 200
    assert "feedback_tachyon_lock.md" in hyb.sent.text and "feedback_tachyon_lock.md" not in hyb.manifest.text
    assert hyb.manifest.lines[0].startswith("- [project] note_0000.md ")
    # the sent manifest is still newest first, and the prefilter favoured "release" notes
    mtimes = [h.mtime for h in hyb.sent.headers]
    assert mtimes == sorted(mtimes, reverse=True)
    assert sum("release cadence" in line for line in hyb.sent.lines) >= 100


def test_hybrid_equals_claude_below_the_cap(tmp_path: Path) -> None:
    d = tmp_path / "memory"
    store(d, n=50)
    corpus = load_corpus(d)
    seen: list[str] = []
    hyb = recall("tachyon lock question", corpus, now=NOW, selector="hybrid", client=client(seen))  # type: ignore[arg-type]
    ref = recall("tachyon lock question", corpus, now=NOW, selector="claude", client=client(seen))  # type: ignore[arg-type]
    assert seen[0] == seen[1]
    assert [p.relpath for p in hyb.picks] == [p.relpath for p in ref.picks] == ["feedback_tachyon_lock.md"]
    assert hyb.reference_window_misses == ()


def test_lexical_also_reports_window_misses(tmp_path: Path) -> None:
    d = tmp_path / "memory"
    store(d)
    res = recall("tachyon lock flush", load_corpus(d), now=NOW, selector="lexical")
    assert res.picks[0].relpath == "feedback_tachyon_lock.md"
    assert res.reference_window_misses == ("feedback_tachyon_lock.md",)


def test_already_surfaced_are_dropped_before_selection(tmp_path: Path) -> None:
    d = tmp_path / "memory"
    store(d, n=20)
    corpus = load_corpus(d)
    seen: list[str] = []
    res = recall("tachyon lock question", corpus, now=NOW, selector="claude", client=client(seen),  # type: ignore[arg-type]
                 surfaced=[str(d / "feedback_tachyon_lock.md"), "note_0001.md"], surfaced_units=0)
    assert res.picks == ()
    assert "feedback_tachyon_lock.md" not in seen[0] and "note_0001.md" not in seen[0]
    assert res.manifest.total == 19


def test_the_prefilter_takes_the_best_200_by_the_fused_ranking(tmp_path: Path) -> None:
    d = tmp_path / "memory"
    store(d)
    corpus = load_corpus(d)
    window = HybridSelector().window("tachyon flush", corpus.docs, corpus)
    # The one memory that shares the query's words is in; 200 in all, newest first.
    assert len(window) == 200 and "feedback_tachyon_lock.md" in [w.relpath for w in window]
    assert [w.header.mtime for w in window] == sorted((w.header.mtime for w in window), reverse=True)


def test_the_prefilter_pads_with_the_newest_unmatched(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Without the embedding model the prefilter is BM25's alone.
    def unavailable(self: object) -> None:
        raise ModelUnavailableError("not installed")

    monkeypatch.setattr(RecallCorpus, "dense_index", unavailable)
    d = tmp_path / "memory"
    store(d)
    corpus = load_corpus(d)
    # Only the tachyon memory (the oldest) has "tachyon" or "flush": the other 199 places go
    # to the newest notes, and the window stays newest first.
    window = HybridSelector().window("tachyon flush", corpus.docs, corpus)
    assert [w.relpath for w in window] == [f"note_{i:04d}.md" for i in range(199)] + ["feedback_tachyon_lock.md"]
    # Without note_0000 and note_0002 (already surfaced): the next newest fill in, whether the
    # candidates come as a plain list or as recall's Candidates (positions left out).
    expected = [f"note_{i:04d}.md" for i in [1, *range(3, 201)]] + ["feedback_tachyon_lock.md"]
    rest = [doc for doc in corpus.docs if doc.relpath not in {"note_0000.md", "note_0002.md"}]
    assert [w.relpath for w in HybridSelector().window("tachyon flush", rest, corpus)] == expected
    candidates = Candidates(corpus.docs, [2, 0])
    assert candidates == rest and candidates.dropped == (0, 2)
    assert [w.relpath for w in HybridSelector().window("tachyon flush", candidates, corpus)] == expected
    # The lexical ranking is the same either way.
    for query in ("release cadence tachyon", "billing export number 7"):
        assert LexicalSelector().select(query, candidates, corpus, ()) == LexicalSelector().select(query, rest, corpus, ())


def test_surfaced_memories_are_dropped_counted_and_reported(tmp_path: Path) -> None:
    d = tmp_path / "memory"
    store(d, n=300)
    corpus = load_corpus(d)
    res = recall("release cadence notes", corpus, now=NOW, selector="lexical",
                 surfaced=["note_0003.md", str(d / "note_0001.md"), "missing.md"])
    assert res.dropped_surfaced == ("note_0001.md", "note_0003.md")
    assert res.manifest.total == 299 and res.manifest.count == 200
    assert [h.relpath for h in res.manifest.headers[:3]] == ["note_0000.md", "note_0002.md", "note_0004.md"]
    # Both files hold "---\ndescription: Notes about <topic> number <i>\ntype: project\n---\nbody <i>\n"
    # (ASCII: one UTF-16 unit per character); "missing.md" counts 0.
    sizes = [len(f"---\ndescription: Notes about {TOPICS[i % 8]} number {i}\ntype: project\n---\nbody {i}\n") for i in (1, 3)]
    assert res.surfaced_units == sum(sizes)
    assert {p.relpath for p in res.picks} & {"note_0001.md", "note_0003.md"} == set()
    assert res.picks and all(n.relpath not in {"note_0001.md", "note_0003.md"} for n in res.near_misses)
