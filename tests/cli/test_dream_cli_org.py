"""``memtui dream status|plan|apply`` on Claude Code 2.1.332's organization gate, over the
variants the real CLI ran (``tests/captures/claude-2.1.332/org_gate``, rebuilt under the test's
HOME, the clock frozen at the moment the CLI started): the gate after the lock with the marking
files and organizations, the CLI's reason in the JSON, the plan's line on the agent's own
dream, ``apply`` refusing without ``--force``, and no such gate for ``--release 2.1.328``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from support.org_gate import NOW, OrgScene, build_org

from memtui.cli import main

A = "6f1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d"


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    return result.exit_code, result.output


def scene(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str) -> OrgScene:
    s = build_org(tmp_path, name)
    monkeypatch.setenv("HOME", str(s.home))
    monkeypatch.setenv("MEMTUI_NOW", NOW.isoformat())
    return s


def dream(s: OrgScene, *args: str, release: str = "2.1.332") -> tuple[int, str]:
    return run("--flavor", "claude", "--release", release, "dream", *args, "--project", str(s.project))


def tilde(s: OrgScene, path: Path) -> str:
    return "~" + str(path)[len(str(s.home)):]


def test_status_json_names_the_reason_files_and_organizations(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    s = scene(tmp_path, monkeypatch, "org_sub")
    code, out = dream(s, "status", "--json")
    assert code == 0
    data = json.loads(out)
    assert (data["would_fire"], data["blocking"], data["reason"]) == (False, "organization", "other_hybrid_organization")
    assert [g["id"] for g in data["gates"]][-2:] == ["lock", "organization"]
    g = data["gates"][-1]
    (path, line, _text), = s.marked
    assert g["data"]["organizations"] == [A]
    assert g["data"]["marks"] == [{"path": str(path), "line": line, "organization": A}]
    assert path.parent.name == "subagents"
    assert g["data"]["lock_after"]["exists"] is True and g["data"]["lock_after"]["body"] == ""


def test_status_human(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    s = scene(tmp_path, monkeypatch, "org_main")
    code, out = dream(s, "status")
    assert code == 0
    (path, line, _text), = s.marked
    assert f"  organization      CLOSED a past session here was signed in to organization {A} (marked in {tilde(s, path)} line {line})" in out
    assert f"marked: {tilde(s, path)} line {line}: organization {A}\n" in out
    assert "then: Claude Code takes the lock before this search and gives it back without dreaming: the lock is emptied and its date put back to" in out
    assert out.rstrip().splitlines()[-1].startswith(f"No dream unless the session is signed in to organization {A} alone: a past session here was signed in to organization {A}")
    for row in out.splitlines():
        if "tengu_" in row or "other_hybrid_organization" in row:
            assert row.strip().startswith("details:"), row


def test_the_2_1_328_profile_shows_no_organization_gate(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    s = scene(tmp_path, monkeypatch, "org_main")
    code, out = dream(s, "status", "--json", release="2.1.328")
    data = json.loads(out)
    assert code == 0 and data["release"] == "claude-2.1.328" and data["would_fire"] is True and data["reason"] is None
    assert "organization" not in [g["id"] for g in data["gates"]]
    code, out = dream(s, "status", release="2.1.328")
    assert "organization" not in out


def test_status_of_a_search_that_fails(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    s = scene(tmp_path, monkeypatch, "org_none")
    (s.project_dir / "locked").mkdir()
    import os

    from memtui.core.dream import organization as org_mod

    real = os.scandir
    monkeypatch.setattr(org_mod.os, "scandir", lambda p: (_ for _ in ()).throw(PermissionError(13, "Permission denied", str(p))) if str(p).endswith("/locked") else real(p))
    code, out = dream(s, "status", "--json")
    data = json.loads(out)
    assert (data["would_fire"], data["reason"]) == (False, "hybrid_organization_check_failed")
    assert data["gates"][-1]["data"]["failure"].endswith("locked: Permission denied")


def test_plan_says_whether_the_agents_own_dream_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    s = scene(tmp_path, monkeypatch, "org_two")
    code, out = dream(s, "plan", "--consolidator", "offline")
    assert code == 0
    assert out.rstrip().splitlines()[-1] == ("Claude Code 2.1.332's own dream: never dreams here: past sessions were signed in to 2 organizations "
                                            "(`memtui dream status` says why)")
    code, out = dream(s, "plan", "--consolidator", "offline", "--json")
    assert json.loads(out)["agent_dream"] == {"release": "claude-2.1.332", "would_fire": False, "blocking": "organization",
                                               "reason": "other_hybrid_organization", "headline": json.loads(out)["agent_dream"]["headline"]}
    code, out = dream(s, "plan", "--consolidator", "offline", "--json", release="2.1.328")
    assert json.loads(out)["agent_dream"]["would_fire"] is True


def test_apply_refuses_without_force(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    s = scene(tmp_path, monkeypatch, "org_hidden")
    before = (s.lock.read_bytes(), s.lock.stat().st_mtime)
    code, out = dream(s, "apply", "--consolidator", "offline")
    assert code == 1
    assert f"the dream would not run: No dream unless the session is signed in to organization {A} alone" in out and "(--force skips the gates)" in out
    assert "Nothing was changed." in out
    assert (s.lock.read_bytes(), s.lock.stat().st_mtime) == before
    code, out = dream(s, "apply", "--consolidator", "offline", "--json")
    data = json.loads(out)
    assert code == 1 and data["blocked"] is True and data["blocking"] == "throttle"  # memtui scanned once already: its 10 min throttle
    t = scene(tmp_path / "again", monkeypatch, "org_hidden")
    code, out = dream(t, "apply", "--consolidator", "offline", "--json")
    data = json.loads(out)
    assert code == 1 and data["blocked"] is True and data["reason"] == "other_hybrid_organization"
    monkeypatch.setenv("HOME", str(s.home))
    code, out = dream(s, "apply", "--consolidator", "offline", "--force")
    assert code == 0, out
    code, out = dream(s, "apply", "--consolidator", "offline", release="2.1.328")
    assert code == 1 and "organization" not in out  # 2.1.328: the time gate now (memtui's forced run stamped the lock)
