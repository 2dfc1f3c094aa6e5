"""``memtui stores``, ``stores merge`` + ``undo``, and the stores lines of ``where``, ``doctor`` and
``usage``, on the Claude Code 2.1.332 scenarios of ``tests/captures/claude-2.1.332/stores``."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner
from support.stores import materialize
from support.trees import file_bytes

from memtui.cli import main


def _setup(name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict:
    layout = materialize(name, tmp_path / name)
    monkeypatch.setenv("HOME", layout["home"])
    monkeypatch.chdir(layout["project"])
    return layout


def _invoke(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, [*args, "--flavor", "claude"])
    return result.exit_code, result.stdout


def test_stores_json_on_a_healthy_project_exits_0(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    layout = _setup("healthy", tmp_path, monkeypatch)
    code, out = _invoke("stores", "--json")
    assert code == 0
    data = json.loads(out)
    assert data["findings"] == [] and len(data["stores"]) == 1
    assert data["stores"][0]["roles"] == ["reads", "seen"]
    assert [r["entrypoint"] for r in data["stores"][0]["readers"]] == ["sdk-cli", "sdk-cli"]
    assert data["reads"].startswith(layout["home"])


def test_stores_then_merge_then_undo_is_byte_exact(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    layout = _setup("subdir", tmp_path, monkeypatch)
    code, out = _invoke("stores", "--json")
    assert code == 1
    (finding,) = json.loads(out)["findings"]
    command = finding["fixes"][0]["command"].split()
    assert command[:3] == ["memtui", "stores", "merge"]
    before = file_bytes(Path(layout["home"]))
    code, out = _invoke(*command[1:])  # a preview: nothing written
    assert code == 0 and "svc_notes.md moves to svc_notes.md" in out and "add --yes" in out
    assert file_bytes(Path(layout["home"])) == before
    code, out = _invoke(*command[1:], "--yes")
    assert code == 0, out
    reads = Path(finding["reads"])
    assert (reads / "svc_notes.md").is_file() and not Path(layout["stray"], "svc_notes.md").exists()
    code, out = _invoke("stores", "--json")
    assert code == 0 and json.loads(out)["findings"] == []
    code, out = _invoke("undo", "--list")
    assert "Move the memories of" in out
    code, out = _invoke("undo")
    assert code == 0, out
    assert file_bytes(Path(layout["home"])) == before


def test_where_counts_the_other_stores(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _setup("worktree", tmp_path, monkeypatch)
    code, out = _invoke("where")
    assert code == 0
    assert "1 other memory store in play, 1 finding  (`memtui stores` shows them)" in out
    code, out = _invoke("where", "--json")
    assert json.loads(out)["store_findings"] == ["store-split"]


def test_doctor_reports_the_store_findings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    layout = _setup("trust", tmp_path, monkeypatch)
    code, out = _invoke("doctor", "--json")
    data = json.loads(out)
    found = [f for f in data["findings"] if f["code"] == "store-split"]
    assert len(found) == 1 and found[0]["data"]["cause"] == "trust"
    assert found[0]["data"]["store"] == f"{layout['home']}/.claude/projects/{''.join(c if c.isalnum() else '-' for c in layout['project'])}/memory"


def test_doctor_on_a_healthy_project_has_no_store_finding(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _setup("healthy", tmp_path, monkeypatch)
    _, out = _invoke("doctor", "--json")
    assert not [f for f in json.loads(out)["findings"] if f["code"].startswith(("store-", "auto-memory", "memory-setting"))]


def test_usage_counts_the_index_each_sub_agent_loaded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    layout = _setup("healthy", tmp_path, monkeypatch)
    code, out = _invoke("usage", "--json")
    assert code == 0, out
    loads = json.loads(out)["index_loads"]
    sid = next(s["session_id"] for s in layout["sessions"] if s["label"] == "write+agents")
    (session,) = [s for s in loads if s["session"] == sid]
    by_type = {a["type"]: a for a in session["agents"]}
    assert set(by_type) == {None, "general-purpose", "Explore"}
    assert by_type["Explore"]["loads"] == 0 and by_type["Explore"]["tokens"] == 0
    assert by_type["general-purpose"]["loads"] == 1 and by_type[None]["loads"] == 1
    # the same index text, loaded twice: the session pays for it twice
    assert by_type["general-purpose"]["tokens"] == by_type[None]["tokens"] > 0
    assert session["total"] == {"tokens": 2 * by_type[None]["tokens"], "exact": False}


def test_merge_refuses_a_missing_source(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _setup("healthy", tmp_path, monkeypatch)
    result = CliRunner().invoke(main, ["stores", "merge", str(tmp_path / "nope"), "--flavor", "claude"])
    assert result.exit_code == 1
    assert "is not a folder" in result.output
    assert os.listdir(tmp_path) == ["healthy"]
