"""A session id as typed: the whole id, or a unique prefix of 8 hex digits or more."""

from __future__ import annotations

from pathlib import Path

import pytest

from memtui.core.sessions.sessionid import (
    AmbiguousSessionIdError,
    find_session_transcript,
    is_id_prefix,
    match_session_id,
)

A = "45b86495-095d-42b2-9dd5-25ef4e2e682c"
B = "45b86495-ffff-4000-8000-000000000000"
C = "0fbf947b-f5e6-4b91-aa3c-54ebdc14f29a"


def test_prefixes_need_eight_hex_digits() -> None:
    assert is_id_prefix("0fbf947b") and is_id_prefix("0fbf947b-f") and is_id_prefix("0FBF947B")
    assert not is_id_prefix("0fbf947") and not is_id_prefix("0fbf-947") and not is_id_prefix("latest-xx")


def test_a_unique_prefix_names_its_session() -> None:
    assert match_session_id(C, [A, C]) == C
    assert match_session_id("0fbf947b", [A, B, C]) == C
    assert match_session_id("0FBF947B", [A, B, C]) == C
    assert match_session_id("45b86495-0", [A, B, C]) == A
    assert match_session_id("0fbf947", [C]) is None  # 7 digits: too short to stand for an id
    assert match_session_id("deadbeef", [A, C]) is None


def test_an_ambiguous_prefix_lists_the_candidates() -> None:
    with pytest.raises(AmbiguousSessionIdError) as info:
        match_session_id("45b86495", [A, B, C])
    assert info.value.candidates == (A, B)
    assert str(info.value) == f"'45b86495' is the start of 2 session ids: {A}, {B}; give more of the id"


def test_transcripts_are_found_by_prefix(tmp_path: Path) -> None:
    for sid in (A, B, C):
        (tmp_path / f"{sid}.jsonl").write_text("{}\n")
    assert find_session_transcript(tmp_path, "0fbf947b") == tmp_path / f"{C}.jsonl"
    assert find_session_transcript(tmp_path, A) == tmp_path / f"{A}.jsonl"
    assert find_session_transcript(tmp_path, "../0fbf947b") is None
    assert find_session_transcript(tmp_path / "missing", "0fbf947b") is None
    with pytest.raises(AmbiguousSessionIdError):
        find_session_transcript(tmp_path, "45b86495")
