"""``memtui usage`` and ``memtui cascade --session`` on real Claude Code 2.1.328 transcripts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from memtui.cli import main
from support.usage import rebuild_usage


def _run(ws_proj: Path, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["--flavor", "claude", "--project", str(ws_proj), *args])
    return result.exit_code, result.output


def test_usage_json_has_its_documented_shape_and_the_hand_counts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ws = rebuild_usage(tmp_path, monkeypatch)
    monkeypatch.setenv("MEMTUI_NOW", "2026-12-02T00:00:00Z")
    code, out = _run(ws.proj, "usage", "--json")
    assert code == 0, out
    data = json.loads(out)
    assert {"sessions", "from", "to", "memories", "missing"} <= set(data)
    assert data["sessions"] == 4
    dash = next(m for m in data["memories"] if m["path"] == "reference_dash.md")
    assert {k: dash[k] for k in ("recalled", "read", "written", "sessions")} == {"recalled": 1, "read": 1, "written": 0, "sessions": 2}
    assert [m["path"] for m in data["missing"]] == ["old_notes.md"]
    cost = data["cost"]
    # no API key: estimated; the recorded first request of the latest session (hello) is the
    # transcript's own usage figure
    assert cost["exact"] is False and cost["estimated_because"]
    assert cost["recorded"]["latest_first_request_input_tokens"] == 12899


def test_usage_text_names_the_never_used_as_candidates(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ws = rebuild_usage(tmp_path, monkeypatch)
    code, out = _run(ws.proj, "usage")
    assert code == 0, out
    assert "never used (2 of 8): candidates for review, not for deletion" in out
    assert "old_notes.md" in out and "memory at session start: ~" in out


def test_usage_since_narrows_the_window(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ws = rebuild_usage(tmp_path, monkeypatch)
    monkeypatch.setenv("MEMTUI_NOW", "2027-01-01T00:00:00Z")  # a month after the sessions
    code, out = _run(ws.proj, "usage", "--since", "7", "--json")
    assert code == 0, out
    data = json.loads(out)
    assert data["sessions"] == 0 and data["never_used"] == 8


def test_cascade_session_latest_and_a_missing_session(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ws = rebuild_usage(tmp_path, monkeypatch)
    code, out = _run(ws.proj, "cascade", "--session", "latest", "--json")
    assert code == 0, out
    data = json.loads(out)
    assert data["session"] == ws.transcript("hello").stem and data["fidelity_bugs"] == 0
    assert [Path(f["path"]).name for f in data["startup"]] == ["CLAUDE.md", "MEMORY.md"]
    code, out = _run(ws.proj, "cascade", "--session", "latest")
    assert code == 0 and "MEMORY.md" in out
    code, out = _run(ws.proj, "cascade", "--session", "nope")
    assert code == 1 and "no session 'nope'" in out


def test_cascade_session_takes_the_8_characters_the_app_shows(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ws = rebuild_usage(tmp_path, monkeypatch)
    hello = ws.transcript("hello").stem
    code, out = _run(ws.proj, "cascade", "--session", hello[:8], "--json")
    assert code == 0, out
    assert json.loads(out)["session"] == hello
    code, out = _run(ws.proj, "cascade", "--session", hello[:7])
    assert code == 1 and f"no session '{hello[:7]}'" in out


def test_recall_eval_transcripts_beside_recall_query(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ws = rebuild_usage(tmp_path, monkeypatch)
    code, out = _run(ws.proj, "recall", "eval", "--transcripts", "--json")
    assert code == 0, out
    data = json.loads(out)
    assert (data["prompts"], data["sessions_with_recall"], data["k"]) == (1, 1, 5)
    assert data["recall_at_5"]["hybrid"] is None and "API key" in data["skipped"]["hybrid"]
    assert data["details"][0]["claude"] == ["user_role.md", "reference_dash.md", "feedback_tests.md", "project_kafka.md"]
    # the agent's recalls and a labelled set are two different yardsticks: never both at once
    code, out = _run(ws.proj, "recall", "eval", "--transcripts", "--selector", "lexical")
    assert code == 2 and "--transcripts" in out
    # the query form is unchanged, and `query` names it explicitly (for a prompt called "eval")
    code, out = _run(ws.proj, "recall", "staging dashboard grafana", "--selector", "lexical", "--preview", "--json")
    assert code == 0, out
    assert json.loads(out)["picks"][0]["path"] == "reference_dash.md"
    code, out = _run(ws.proj, "recall", "query", "eval", "--selector", "lexical", "--json")
    assert code == 0 and json.loads(out)["skipped"]  # one word: the agent skips recall


@pytest.mark.parametrize(("flavor", "note", "details"), [
    ("agent", None, None),
    ("claude", "the agent's recall is off by default: it runs only when the feature is on for your account",
     "flag tengu_moth_copse (off by default), or CLAUDE_MEMORY_STORES set"),
])
def test_no_recall_on_record_names_the_gate_only_of_an_agent_that_has_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, flavor: str, note: str | None, details: str | None
) -> None:
    """The seed design's agent always recalls: its sessions without a recall get no word about
    Claude Code's feature flag; Claude Code 2.1.328 recalls only behind ``tengu_moth_copse``,
    which its note names only in the details."""
    from datetime import UTC, datetime

    from memtui.core.places.flavor import get_flavor
    from memtui.demo import materialize

    gate = get_flavor(flavor).behaviour.recall_gate
    assert (gate.off_by_default_note(), gate.off_by_default_details()) == (note, details)
    ws = materialize(tmp_path / "demo", datetime(2026, 11, 30, 12, tzinfo=UTC))
    monkeypatch.setenv("HOME", str(ws.home))
    result = CliRunner().invoke(main, ["--flavor", "agent", "--project", str(ws.project), "recall", "eval", "--transcripts"])
    assert result.exit_code == 0, result.output
    assert "no session recorded a recall" in result.output and "tengu" not in result.output
