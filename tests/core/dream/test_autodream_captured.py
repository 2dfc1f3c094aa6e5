"""The claude flavor's auto-dream gates against Claude Code 2.1.328 itself: each captured run's
state is laid out again (flag cache, settings, lock, session transcripts with their mtimes) and
memtui's verdict at the moment the CLI decided is compared with what the CLI did — fired a
dream or not, and the numbers of its debug line ("firing — 25.0h since last, 6 sessions to
review", "skip — 3 sessions since last consolidation, need 5", "lock held by live PID …",
"scan throttle — … last scan was 4s ago")."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import pytest
from support.cli_captures import Scene, build, runs

from memtui.core.dream.autodream import AutoDreamStatus, check_autodream, headline
from memtui.core.dream.gates import DreamContext
from memtui.core.places.flavor import CLAUDE
from memtui.core.places.locations import resolve_locations
from memtui.core.places.release import load_release

RELEASE = load_release("claude-2.1.328")
DREAM_RUNS = [name for name, r in runs().items() if r["scenario"] not in ("extract_p", "x_p_noslate", "x_p_prose", "x_p_three", "x_p_direct", "x_tmux")]
# A run with no debug line and no request stopped at a gate the CLI passes silently. Which one
# follows from the state the run was given (the oracle README's table): print mode, the
# flag/setting combination, or a lock one minute old.
SILENT = {
    "dream2_again": "time",
    "v_p_mode": "entrypoint",
    "v_setting_false": "flag",
    "v_available_only_setting_unset": "flag",
    "v_no_flag_setting_true": "flag",
}


def scene_ctx(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, run: str, state: str = "before", **kw: Any) -> tuple[Scene, DreamContext]:
    scene = build(tmp_path, run, state, **kw)
    monkeypatch.setenv("HOME", str(scene.home))
    loc = resolve_locations(CLAUDE, scene.project)
    assert loc.memory_dir == scene.memory_dir and loc.sessions_dir == scene.project_dir
    return scene, DreamContext.from_locations(loc)


def decisions(record: dict[str, Any]) -> list[tuple[float, str | None]]:
    """When the CLI decided at the end of each turn (offset from the snapshot) and its
    ``[autoDream]`` line, if any: the debug line's time, else just after the turn's answer."""
    lines = [d for d in record["debug"] if d["text"].startswith("[autoDream]") and "completed" not in d["text"]]
    if lines:
        return [(d["offset_s"], d["text"]) for d in lines]
    mains = [k[2] for k in record["kinds"] if k[0] == "main"]
    return [(mains[0] + 0.5, None)]


def status_at(ctx: DreamContext, scene: Scene, offset: float, record: dict[str, Any], last_scan: float | None = None) -> AutoDreamStatus:
    entrypoint = "sdk-cli" if record["mode"] == "print" else "cli"
    return check_autodream(ctx, scene.now(offset), RELEASE, entrypoint=entrypoint, last_scan_at=last_scan)


@pytest.mark.parametrize("run", DREAM_RUNS)
def test_the_verdict_matches_the_cli(run: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    record = runs()[run]
    live = str(os.getpid()) if run == "lock_live" else None  # the capture's live holder, re-made
    scene, ctx = scene_ctx(tmp_path, monkeypatch, run, lock_content=live)
    fired = any(k[0] == "dream" for k in record["kinds"])
    (offset, line), *later = decisions(record)
    status = status_at(ctx, scene, offset, record)
    assert status.would_fire == fired, status.verdict
    if line is None:
        if not fired:
            assert status.blocking is not None and status.blocking.id == SILENT[run]
        return
    if m := re.match(r"\[autoDream\] firing — ([\d.]+)h since last, (\d+) sessions to review", line):
        assert f"{status.gate('time').data['hours_since']:.1f}" == m.group(1)
        assert len(status.session_ids) == int(m.group(2))
        assert "will dream at the end of its next interactive turn" in status.verdict
    elif m := re.match(r"\[autoDream\] skip — (\d+) sessions since last consolidation, need (\d+)", line):
        gate = status.gate("sessions")
        assert status.blocking is gate
        assert (gate.data["count"], gate.data["min_sessions"]) == (int(m.group(1)), int(m.group(2)))
    elif line.startswith("[autoDream] lock held by live PID"):
        assert status.blocking is not None and status.blocking.id == "lock"
        assert status.gate("lock").data["held"]
    else:
        raise AssertionError(f"unexpected first line {line!r}")
    for when, later_line in later:  # gate_4of5's second turn: the same process, one scan ago
        assert later_line is not None
        m = re.match(r"\[autoDream\] scan throttle — time-gate passed but last scan was (\d+)s ago", later_line)
        assert m, later_line
        again = status_at(ctx, scene, when, record, last_scan=scene.at + offset)
        assert again.blocking is not None and again.blocking.id == "throttle"
        assert again.gate("time").ok
        assert round(when - offset) == int(m.group(1))


def test_the_six_flag_and_setting_combinations_read_from_their_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each combination of the README's table, as captured: the gate names both sources and,
    when it stays shut, says the CLI never dreams and what would change it — in plain words, the
    flag's name and cached value only in its details."""
    off = "the dream is off for your account, and autoDreamEnabled cannot turn it on"
    not_default = "the dream is available for your account but not on by default, and autoDreamEnabled is not set"
    both = '{"enabled": true, "available": true}'
    expected = {
        "v_setting_false": (False, "the dream is available for your account, and autoDreamEnabled: false turns it off",
                            "never dreams here: the dream is available for your account, and autoDreamEnabled: false turns it off", f"{both} in"),
        "v_available_only_setting_true": (True, "the dream is available for your account, and autoDreamEnabled: true turns it on", None, None),
        "v_available_only_setting_unset": (False, not_default, f"never dreams here: {not_default}", '{"available": true} in'),
        "v_enabled_setting_unset": (True, "the dream is on for your account (autoDreamEnabled is not set)", None, '{"enabled": true} in'),
        "v_no_flag_setting_true": (False, off, f"never dreams here: {off}", "not cached in"),
    }
    for i, (run, (ok, detail, short, cached)) in enumerate(expected.items()):
        scene, ctx = scene_ctx(tmp_path / str(i), monkeypatch, run)
        status = status_at(ctx, scene, decisions(runs()[run])[0][0], runs()[run])
        gate = status.gate("flag")
        assert gate.ok is ok and gate.detail == detail, gate.detail
        assert gate.sources[0] == "~/.claude.json cachedGrowthBookFeatures.tengu_onyx_plover"
        if cached is not None:  # the flag's name and cached value are in the details only
            assert gate.details == f"flag tengu_onyx_plover: {cached} ~/.claude.json (cachedGrowthBookFeatures)"
        if not ok:
            assert status.verdict.startswith(f"Your Claude Code never dreams here: {detail}.")
            assert [t.code for t in status.traps][:1] == ["never-dreams"]
            assert status.traps[0].details == gate.details and "tengu_" not in status.traps[0].title + status.traps[0].message
            assert headline(status) == short  # the gates panel's line says what shuts it
            assert "tengu_" not in status.verdict + (gate.opens or "")


def test_print_mode_never_dreams_and_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    scene, ctx = scene_ctx(tmp_path, monkeypatch, "v_p_mode")
    status = check_autodream(ctx, scene.now(5), RELEASE, entrypoint="sdk-cli")
    assert status.blocking is not None and status.blocking.id == "entrypoint"
    assert "`claude -p` and the SDKs never dream" in status.blocking.detail
    interactive = check_autodream(ctx, scene.now(5), RELEASE)
    assert interactive.would_fire and "`claude -p` and SDK sessions never dream" in interactive.verdict


def test_sessions_counted_newer_than_the_lock_in_directory_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """gate_4of5: seven transcripts, four older than the 25 h old lock, three newer."""
    scene, ctx = scene_ctx(tmp_path, monkeypatch, "gate_4of5")
    status = status_at(ctx, scene, 5, runs()["gate_4of5"])
    newer = {s["name"][:-6] for s in runs()["gate_4of5"]["before"]["sessions"] if s["age_s"] < runs()["gate_4of5"]["before"]["lock"]["age_s"]}
    assert set(status.session_ids) == newer and len(newer) == 3
    assert [s.session_id for s in status.sessions] == [n[:-6] for n in os.listdir(scene.project_dir) if n.endswith(".jsonl")]
    assert status.gate("sessions").opens == "after 2 more sessions (each start of Claude Code, `-p` included, writes one)"
