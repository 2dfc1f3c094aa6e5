"""The Prune phase parses at most ``MAX_MARKDOWN_CHARS`` of index lines that are not plain
entries (a one-line index of 20 MB took 15 s of markdown-it); past it the index is left as it
is, with a finding. Under it, many dead lines go in one pass. Expected texts by hand."""

from __future__ import annotations

from pathlib import Path

import pytest

from memtui.core.dream import prune
from memtui.core.dream.events import Finding
from memtui.core.dream.plan import Workspace
from memtui.core.dream.prune import PruneInput, prune_index
from memtui.core.memory.index import markdown_chars


def _prune(tmp_path: Path, memories: dict[str, str]) -> tuple[Workspace, list[Finding]]:
    ws = Workspace(tmp_path)
    findings: list[Finding] = []
    prune_index(ws, PruneInput(dict(memories)), lambda event: None, findings, lambda done, total: None)
    return ws, findings


def test_markdown_chars_counts_the_lines_markdown_it_would_parse() -> None:
    plain = "- [A](a.md) — hook"
    odd = "- [*A*](a.md) and [B](b.md)"
    assert markdown_chars(f"# Memory\n{plain}\n{odd}\nno link here\n") == len(odd)


def test_an_index_of_heavy_lines_over_the_budget_is_left_as_it_is(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(prune, "MAX_MARKDOWN_CHARS", 1_000)
    # one line: "- [*E0*](gone_0.md) " is 20 characters, with two digits 22: 10 × 20 + 90 × 22 = 2,180
    text = "".join(f"- [*E{i}*](gone_{i}.md) " for i in range(100)) + "\n"
    (tmp_path / "MEMORY.md").write_text(text)
    (tmp_path / "user_a.md").write_text("---\nname: A\ndescription: a\ntype: user\n---\n\nA.\n")
    ws, findings = _prune(tmp_path, {"user_a.md": "user"})
    assert ws.changed() == []
    [f] = findings
    assert (f.code, f.path) == ("index-over-cap", "MEMORY.md")
    assert f.message == (
        "MEMORY.md and its hubs hold 2,180 characters of lines that are not `- [Title](file.md) — hook` entries, over the 1,000 "
        "the dream parses: left as they are; edit MEMORY.md by hand (one short line per memory)"
    )


def test_an_index_over_the_size_the_dream_edits_is_left_as_it_is(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(prune, "MAX_PRUNE_CHARS", 10_000)
    (tmp_path / "MEMORY.md").write_text("".join(f"- [Gone {i:04d}](gone_{i:04d}.md) — no file\n" for i in range(1_000)))  # 38 each
    ws, findings = _prune(tmp_path, {})
    assert ws.changed() == []
    assert [(f.code, f.message) for f in findings] == [("index-over-cap", (
        "MEMORY.md and its hubs hold 38,000 characters, over the 10,000 the dream edits: left as they are; "
        "edit MEMORY.md by hand (one short line per memory)"))]


def test_under_the_budget_3000_dead_lines_are_dropped_in_one_pass(tmp_path: Path) -> None:
    lines = ["# Memory", "- [A](user_a.md) — a"] + [f"- [Gone {i}](gone_{i}.md) — no file" for i in range(3_000)] + ["- [A again](user_a.md) — a"]
    (tmp_path / "MEMORY.md").write_text("\n".join(lines) + "\n")
    (tmp_path / "user_a.md").write_text("---\nname: A\ndescription: a\ntype: user\n---\n\nA.\n")
    ws, findings = _prune(tmp_path, {"user_a.md": "user"})
    assert ws.get("MEMORY.md") == "# Memory\n- [A](user_a.md) — a\n- [A again](user_a.md) — a\n"
    assert findings == []
