"""Claude Code 2.1.332's organization dream gate against the CLI itself: each variant
``scripts/oracle_org.sh`` ran (a mark in a past transcript, a subagent file, a hidden dir, a
``.jsonl.bak``, two organizations, a spaced or an array line, no lock, an unreadable dir…) is
laid out again, and memtui's verdict is compared with what the CLI logged (``[autoDream] skip —
<reason>`` or ``firing``) and did to the lock (given back: emptied with its old mtime, or
deleted when there was none). The organizations and the lines memtui names come from the
lines the variant placed; the 2.1.328 profile has no such gate."""

from __future__ import annotations

import os
from datetime import timedelta
from pathlib import Path

import pytest
from support.org_gate import NOW, OrgScene, build_org, variants

from memtui.core.dream import organization as org_mod
from memtui.core.dream.autodream import AutoDreamStatus, check_autodream, headline, status_to_json
from memtui.core.dream.gates import DreamContext
from memtui.core.dream.lock import cli_rollback, read_lock
from memtui.core.memory.catalog import iso_utc
from memtui.core.places.flavor import CLAUDE, CLAUDE_2_1_328
from memtui.core.places.locations import resolve_locations
from memtui.core.places.release import load_release, release_of

RELEASE = load_release("claude-2.1.332")
A = "6f1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d"
B = "0a9b8c7d-6e5f-4d3c-9b2a-1f0e9d8c7b6a"
# The organizations each variant's placed lines mark, worked out from the lines by the rules of
# SPEC §13.1 (byte-literal needle, a JSON object, a UUID compared lowercased).
ORGANIZATIONS: dict[str, list[str]] = {
    "org_main": [A], "org_sub": [A], "org_hidden": [A], "org_bak": [A], "org_rotated": [A], "org_two": [A, B],
    "org_upper": [A], "org_nonsession": [A], "org_extra": [A], "org_nolock": [A],
    "org_bad": [], "org_none": [], "org_spaced": [], "org_array": [], "org_keyspace": [], "org_unreadable": [],
}
# Lines that hold the needle but are no mark, and why.
NO_MARK = {
    "org_bad": "organizationUuid is not a UUID",
    "org_array": "not a JSON object of type hybrid-organization",
    "org_keyspace": 'no "organizationUuid": in the line',
}


def ctx_of(scene: OrgScene, monkeypatch: pytest.MonkeyPatch, flavor=CLAUDE) -> DreamContext:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("HOME", str(scene.home))
    loc = resolve_locations(flavor, scene.project)
    assert loc.memory_dir == scene.memory_dir and loc.sessions_dir == scene.project_dir
    return DreamContext.from_locations(loc)


def lock_unreadable_dirs(scene: OrgScene, monkeypatch: pytest.MonkeyPatch) -> None:
    """The variant's locked dirs refuse to be listed (mode 000 stops no root process)."""
    locked = {scene.project_dir / d for d in scene.record["locked_dirs"]}
    if not locked:
        return
    real = os.scandir

    def scandir(path):  # type: ignore[no-untyped-def]
        if Path(path) in locked:
            raise PermissionError(13, "Permission denied", str(path))
        return real(path)

    monkeypatch.setattr(org_mod.os, "scandir", scandir)


def status_of(scene: OrgScene, monkeypatch: pytest.MonkeyPatch) -> AutoDreamStatus:
    ctx = ctx_of(scene, monkeypatch)
    lock_unreadable_dirs(scene, monkeypatch)
    return check_autodream(ctx, NOW, RELEASE)


def test_release_data() -> None:
    gate = RELEASE.dream.organization_gate
    assert gate is not None and release_of(CLAUDE) is RELEASE
    assert (gate.needle, gate.glob, gate.timeout_s) == ('"type":"hybrid-organization"', "*.jsonl*", 60.0)
    assert release_of(CLAUDE_2_1_328).dream.organization_gate is None  # type: ignore[union-attr]


def test_every_variant_was_captured() -> None:
    assert set(variants()) == set(ORGANIZATIONS)


@pytest.mark.parametrize("name", sorted(variants()))
def test_the_verdict_matches_the_cli(name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    scene = build_org(tmp_path, name)
    record = scene.record
    status = status_of(scene, monkeypatch)
    gate = status.gate("organization")
    assert [g.id for g in status.gates][-2:] == ["lock", "organization"]
    assert status.would_fire == (record["verdict"] == "fired"), status.verdict
    assert status.reason == record["reason"]
    assert all(g.ok for g in status.gates if g.id != "organization")  # every other gate was open for the CLI too
    assert list(gate.data["organizations"]) == ORGANIZATIONS[name]
    if record["verdict"] == "fired":
        assert gate.ok and gate.data["lock_after"] is None
        assert f"firing — {status.gate('time').data['hours_since']:.1f}h since last, {len(status.session_ids)} sessions" in record["debug"][0]
        if name in NO_MARK:
            placed = [(p, n) for p, n, _t in scene.marked]
            assert [(i["path"], i["line"], i["why"]) for i in gate.data["ignored"]] == [(str(p), n, NO_MARK[name]) for p, n in placed]
        else:
            assert gate.data["ignored"] == []
        return
    assert not gate.ok and status.blocking is gate
    assert record["debug"][-1] == f"[autoDream] skip — {record['reason']}"
    if record["reason"] == "other_hybrid_organization":
        assert sorted((m["path"], m["line"]) for m in gate.data["marks"]) == sorted((str(p), n) for p, n, _t in scene.marked)
        assert "a past session here was signed in to organization" in gate.detail or "different organizations" in gate.detail
        assert str(scene.marked[0][0]).replace(str(scene.home), "~") in gate.detail
    # the lock as the CLI left it: given back, not stamped
    before, after = record["lock_before"], record["lock_after"]
    lock_after = gate.data["lock_after"]
    assert lock_after["exists"] == after["exists"]
    if after["exists"]:
        assert (after["content"], after["mtime_moved_s"]) == ("", pytest.approx(0.0, abs=0.002))
        assert lock_after["body"] == "" and lock_after["mtime"] == iso_utc(NOW.timestamp() - before["age_h"] * 3600)
        assert "emptied and its date put back" in gate.effect
    else:
        assert not before["exists"] and "deleted again" in gate.effect
    assert "at most once every 10 min" in gate.effect


def test_mixed_organizations_never_dream(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    status = status_of(build_org(tmp_path, "org_two"), monkeypatch)
    g = status.gate("organization")
    assert g.never and status.verdict.startswith("Your Claude Code never dreams here: past sessions here were signed in to 2 different organizations")
    assert [t.code for t in status.traps] == ["never-dreams"]


def test_a_failed_search(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    status = status_of(build_org(tmp_path, "org_unreadable"), monkeypatch)
    g = status.gate("organization")
    assert g.data["state"] == "failed" and g.data["failed_by"] == "rg" and "Permission denied" in g.detail
    assert g.opens and "can be read" in g.opens
    assert headline(status) == "skipped: the search for organization sign-ins fails"


def test_the_wording_is_plain(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    status = status_of(build_org(tmp_path, "org_main"), monkeypatch)
    g = status.gate("organization")
    for text in (g.detail, g.opens or "", g.effect, status.verdict, headline(status)):
        assert "tengu_" not in text and "other_hybrid_organization" not in text
    assert g.details.startswith("reason other_hybrid_organization; event tengu_auto_dream_skipped")
    assert g.detail.startswith(f"a past session here was signed in to organization {A}")
    assert "Claude Code skips the dream unless the session is signed in to that organization alone" in g.detail
    # what a user can do: sign in to it, or move the marking transcripts out (never edit them)
    assert g.opens is not None and g.opens.startswith(f"in a session signed in to organization {A} and to no other since it started; or, if the marking sessions")
    assert "move those transcripts elsewhere" in g.opens
    assert headline(status) == f"skipped unless signed in to organization {A}"


def test_status_json(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    scene = build_org(tmp_path, "org_two")
    data = status_to_json(status_of(scene, monkeypatch))
    assert (data["would_fire"], data["blocking"], data["reason"]) == (False, "organization", "other_hybrid_organization")
    g = data["gates"][-1]
    assert g["data"]["organizations"] == [A, B] and g["data"]["marks_total"] == 2 and g["effect"]


def test_the_2_1_328_profile_has_no_organization_gate(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    scene = build_org(tmp_path, "org_main")
    ctx = ctx_of(scene, monkeypatch, CLAUDE_2_1_328)
    status = check_autodream(ctx, NOW, load_release("claude-2.1.328"))
    assert status.find_gate("organization") is None and status.organization is None
    assert status.would_fire and status.reason is None
    assert "organization" not in {g["id"] for g in status_to_json(status)["gates"]}


def test_the_search_is_made_while_other_gates_are_closed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every gate is evaluated: a closed time gate does not hide the marks (the CLI would not
    search yet; memtui says what it would find)."""
    scene = build_org(tmp_path, "org_main")
    os.utime(scene.lock, (NOW.timestamp() - 3600, NOW.timestamp() - 3600))
    status = check_autodream(ctx_of(scene, monkeypatch), NOW, RELEASE)
    assert status.blocking is status.gate("time")
    assert status.gate("organization").data["organizations"] == [A]
    # The verdict does not promise a dream the organization gate rules out.
    assert "Even then, no dream unless it is signed in to the marked organization: a past session here was signed in to organization " + A in status.verdict


def test_a_verdict_on_another_gate_says_the_mixed_marks_rule_the_dream_out(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    scene = build_org(tmp_path, "org_two")
    os.utime(scene.lock, (NOW.timestamp() - 3600, NOW.timestamp() - 3600))
    status = check_autodream(ctx_of(scene, monkeypatch), NOW, RELEASE)
    assert status.blocking is status.gate("time")
    assert status.verdict.startswith("No dream before ")
    assert "Even then it never dreams here: past sessions here were signed in to 2 different organizations" in status.verdict


def test_after_the_skip_the_next_turn_searches_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The rollback the CLI logged, applied to the lock: the time gate stays open, the sessions
    are the same, so 10 minutes later the same gate stops it again."""
    scene = build_org(tmp_path, "org_main")
    ctx = ctx_of(scene, monkeypatch)
    after = cli_rollback(read_lock(scene.memory_dir))
    assert after.exists and after.body == ""
    scene.lock.write_text(after.body)
    os.utime(scene.lock, (after.mtime, after.mtime))  # type: ignore[arg-type]
    later = NOW + timedelta(minutes=10)
    status = check_autodream(ctx, later, RELEASE, last_scan_at=NOW.timestamp())
    assert status.gate("time").ok and status.gate("throttle").ok and status.gate("sessions").ok
    assert status.blocking is status.gate("organization")
    early = check_autodream(ctx, NOW + timedelta(minutes=5), RELEASE, last_scan_at=NOW.timestamp())
    assert early.blocking is early.gate("throttle")


def test_cli_rollback() -> None:
    """The CLI's take-then-give-back (worked from its code): prior mtime 0 deletes the lock."""
    from memtui.core.dream.lock import LockInfo

    p = Path("/x/.consolidate-lock")
    assert cli_rollback(LockInfo(p, False, None, "", None, None, None)).exists is False
    assert cli_rollback(LockInfo(p, True, 0.0, "", None, None, None)).exists is False  # dated 1970: read as none
    assert cli_rollback(LockInfo(p, True, 5000.0, "", None, None, None, readable=False)).exists is False
    kept = cli_rollback(LockInfo(p, True, 1_796_000_000.25, "99999", 99999, None, None))
    assert (kept.exists, kept.body, kept.mtime, kept.prior_ms) == (True, "", 1_796_000_000.25, 1_796_000_000_250.0)

