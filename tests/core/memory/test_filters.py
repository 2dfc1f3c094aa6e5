"""The type filter and the search shared by ``memtui ls`` and the Memories pane."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from memtui.core.memory.catalog import load_catalog
from memtui.core.memory.filters import TYPE_FILTERS, MemoryFilter, type_filter

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)

FILES = {
    "user_role.md": "---\nname: Role\ndescription: Backend engineer\ntype: user\n---\nWrites Go daily.\n",
    "feedback_terse.md": "---\nname: Terse replies\ndescription: No recaps\ntype: feedback\n---\nSkip the summary.\n",
    "nested.md": "---\nname: Squash\ndescription: One commit per PR\nmetadata:\n  type: feedback\n---\nSquash merges.\n",
    "capital.md": "---\nname: Deploys\ndescription: Friday freeze\ntype: Feedback\n---\nNo deploys on Friday.\n",
    "notes/grafana.md": "---\nname: Board\ndescription: Latency board\ntype: reference\n---\nPanel p95.\n",
}


@pytest.fixture
def entries(tmp_path: Path) -> tuple:  # type: ignore[type-arg]
    for rel, text in FILES.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text, encoding="utf-8")
    return load_catalog(tmp_path, NOW).entries


def names(found: list) -> list[str]:  # type: ignore[type-arg]
    return sorted(e.relpath for e in found)


def test_type_filter_names_and_the_untyped_alias() -> None:
    assert TYPE_FILTERS == ("all", "user", "feedback", "project", "reference", "none")
    assert type_filter(None) == "all" and type_filter("untyped") == "none" and type_filter("user") == "user"
    with pytest.raises(ValueError, match="unknown type filter"):
        type_filter("Feedback")


def test_none_keeps_every_type_the_agent_does_not_recognise(entries: tuple) -> None:  # type: ignore[type-arg]
    # nested under metadata, and "Feedback" with a capital: the agent reads neither as a type
    assert names(MemoryFilter.of("none").apply(entries)) == ["capital.md", "nested.md"]
    assert names(MemoryFilter.of("feedback").apply(entries)) == ["feedback_terse.md"]
    assert len(MemoryFilter.of().apply(entries)) == 5


def test_search_needs_every_word_in_name_description_path_or_body(entries: tuple) -> None:  # type: ignore[type-arg]
    assert names(MemoryFilter.of(search="GRAFANA").apply(entries)) == ["notes/grafana.md"]  # the path, any case
    assert names(MemoryFilter.of(search="latency p95").apply(entries)) == ["notes/grafana.md"]  # description + body
    assert names(MemoryFilter.of(search="latency go").apply(entries)) == []  # not both in one memory
    assert names(MemoryFilter.of("user", "daily").apply(entries)) == ["user_role.md"]
    assert names(MemoryFilter.of("feedback", "daily").apply(entries)) == []
