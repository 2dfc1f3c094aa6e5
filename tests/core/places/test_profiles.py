"""Release profiles: which Claude Code release memtui models, and why.

The rule (issue 31, SPEC §13.1): ``--release`` (or ``$MEMTUI_RELEASE``) names a profile; else
the version ``claude --version`` prints when it is on PATH; else the newest transcript line's
``version``; else the newest profile. A version with no profile of its own gets the newest
profile not newer than it, or the oldest when it is older than all. The agent flavor has one
profile and never looks.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
from pathlib import Path

import pytest
from click.testing import CliRunner

from memtui.cli import main
from memtui.core.places.autoflavor import choose_flavor
from memtui.core.places.flavor import AGENT, CLAUDE, CLAUDE_2_1_328
from memtui.core.places.profiles import Detected, UnknownReleaseError, pick_profile, profile_for_version, version_key
from memtui.core.sessions.version import choose_release


def _never() -> Detected | None:
    raise AssertionError("the version was looked for")


@pytest.mark.parametrize("name", ["2.1.328", "claude-2.1.328", " 2.1.328 "])
def test_a_named_profile_is_taken_without_looking(name: str) -> None:
    flavor, why = pick_profile(CLAUDE, given=name, environ={}, detect=_never)
    assert flavor == CLAUDE_2_1_328 and flavor.behaviour.version == "2.1.328" and flavor.release == "claude-2.1.328"
    assert (why.version, why.source) == ("2.1.328", "flag")


def test_flag_beats_environment_beats_detection() -> None:
    env = {"MEMTUI_RELEASE": "2.1.328"}
    assert pick_profile(CLAUDE, given="2.1.332", environ=env, detect=_never)[0] == CLAUDE
    flavor, why = pick_profile(CLAUDE, environ=env, detect=_never)
    assert flavor == CLAUDE_2_1_328 and why.source == "env" and why.reason == "MEMTUI_RELEASE=2.1.328"
    # "auto" in either means: detect.
    flavor, why = pick_profile(CLAUDE, given="auto", environ={"MEMTUI_RELEASE": "auto"}, detect=lambda: Detected("2.1.328", "command", "claude --version"))
    assert flavor == CLAUDE_2_1_328 and why.source == "command"


def test_an_unknown_profile_names_the_known_ones() -> None:
    with pytest.raises(UnknownReleaseError, match=r"^--release '2\.1\.9': .*known: 2\.1\.328, 2\.1\.332"):
        pick_profile(CLAUDE, given="2.1.9", environ={})
    with pytest.raises(UnknownReleaseError, match=r"^MEMTUI_RELEASE 'banana': no such release profile"):
        pick_profile(CLAUDE, environ={"MEMTUI_RELEASE": "banana"})


@pytest.mark.parametrize(
    ("found", "profile", "reason"),
    [
        ("2.1.332", "2.1.332", "`claude --version` says 2.1.332"),
        ("2.1.328", "2.1.328", "`claude --version` says 2.1.328"),
        ("2.1.330", "2.1.328", "`claude --version` says 2.1.330; the newest profile not newer than it is 2.1.328"),
        ("2.1.340", "2.1.332", "`claude --version` says 2.1.340; the newest profile is 2.1.332"),
        ("2.0.9", "2.1.328", "`claude --version` says 2.0.9; the oldest profile is 2.1.328"),
    ],
)
def test_a_detected_version_picks_the_newest_profile_not_newer_than_it(found: str, profile: str, reason: str) -> None:
    flavor, why = pick_profile(CLAUDE, environ={}, detect=lambda: Detected(found, "command", "claude --version"))
    assert (flavor.behaviour.version, why.source, why.reason, why.detected) == (profile, "command", reason, Detected(found, "command", "claude --version"))


def test_nothing_found_means_the_newest_profile() -> None:
    flavor, why = pick_profile(CLAUDE, environ={}, detect=lambda: None)
    assert flavor == CLAUDE and why.source == "newest"
    assert why.reason == "no `claude` on PATH and no transcript names a version: the newest profile"


def test_the_agent_flavor_has_one_profile_and_never_looks() -> None:
    flavor, why = pick_profile(AGENT, given="2.1.328", environ={"MEMTUI_RELEASE": "x"}, detect=_never)
    assert flavor == AGENT and (why.version, why.source) == (None, "only")


def test_version_key_and_profile_for_version() -> None:
    assert version_key("2.1.332 (Claude Code)") == (2, 1, 332) and version_key("dev") is None
    assert profile_for_version(CLAUDE, "dev") == CLAUDE  # no x.y.z: the newest


def _fake_claude(bin_dir: Path, prints: str) -> None:
    bin_dir.mkdir(parents=True, exist_ok=True)
    exe = bin_dir / "claude"
    exe.write_text(f"#!/bin/sh\necho '{prints}'\n")
    exe.chmod(exe.stat().st_mode | stat.S_IXUSR)


def _project(tmp_path: Path) -> Path:
    project = tmp_path / "proj"
    (project / ".git").mkdir(parents=True)
    (project / "CLAUDE.md").write_text("# p\n")
    return project


def _transcript(project: Path, version: str) -> None:
    slug = "".join(c if c.isalnum() else "-" for c in str(project))
    sessions = Path(os.environ["HOME"]) / ".claude" / "projects" / slug
    sessions.mkdir(parents=True)
    (sessions / "s1.jsonl").write_text(json.dumps({"type": "user", "version": version, "sessionId": "s1"}) + "\n")


def test_the_installed_command_is_asked_first(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    project = _project(tmp_path)
    _transcript(project, "2.1.332")
    _fake_claude(tmp_path / "bin", "2.1.328 (Claude Code)")
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}")
    choice = choose_release(choose_flavor("claude", project), project)
    assert choice.flavor == CLAUDE_2_1_328
    assert choice.release is not None and choice.release.detected == Detected("2.1.328", "command", "claude --version")


def test_without_the_command_the_newest_transcript_says(tmp_path: Path) -> None:
    project = _project(tmp_path)
    _transcript(project, "2.1.328")
    choice = choose_release(choose_flavor("claude", project), project)
    assert choice.flavor == CLAUDE_2_1_328 and choice.release is not None and choice.release.source == "transcript"
    assert choice.release.reason == "the newest transcript says 2.1.328"


def test_where_shows_the_profile_and_takes_the_flag(tmp_path: Path) -> None:
    project = _project(tmp_path)
    runner = CliRunner()
    out = runner.invoke(main, ["--project", str(project), "--flavor", "claude", "where"])
    assert out.exit_code == 0, out.output
    lines = {line.split("  ", 1)[0].strip(): line.split("  ", 1)[1].strip() for line in out.output.splitlines() if "  " in line}
    assert lines["models"] == "Claude Code 2.1.332  (no `claude` on PATH and no transcript names a version: the newest profile)"
    assert lines["profiles"] == "2.1.328, 2.1.332  (--release VERSION picks one)"
    data = json.loads(runner.invoke(main, ["where", "--json", "--project", str(project), "--flavor", "claude", "--release", "2.1.328"]).stdout)
    assert data["release"] == {
        "product": "Claude Code", "version": "2.1.328", "profiles": ["2.1.328", "2.1.332"], "source": "flag",
        "reason": "--release 2.1.328", "detected": None, "detected_source": None, "detected_where": None,
    }
    status = json.loads(runner.invoke(main, ["--release", "2.1.328", "dream", "status", "--json", "--project", str(project), "--flavor", "claude"]).stdout)
    assert status["release"] == "claude-2.1.328"
    bad = runner.invoke(main, ["--project", str(project), "--flavor", "claude", "where", "--release", "3.0.0"])
    assert bad.exit_code == 2 and "--release '3.0.0': no such release profile for the claude flavor (known: 2.1.328, 2.1.332, or auto)" in bad.output


@pytest.mark.parametrize(
    ("script", "expected"),
    [
        (f"exec {shutil.which('yes')} 2.1.328", "2.1.328"),  # never stops printing: read 4 KB, then stopped
        (r"printf '\377\3762.1.328 (Claude Code)\n'", "2.1.328"),  # not UTF-8 before the version
        ("printf '%05000d.1.1\\n' 9", None),  # a 5,000-digit number is no version
        ("echo garbage", None),
    ],
    ids=["endless", "not-utf8", "huge-number", "garbage"],
)
def test_the_version_command_is_read_within_bounds(tmp_path: Path, script: str, expected: str | None) -> None:
    from memtui.core.sessions.version import command_version

    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    exe = bin_dir / "claude"
    exe.write_text(f"#!/bin/sh\n{script}\n")
    exe.chmod(exe.stat().st_mode | stat.S_IXUSR)
    assert command_version(("claude", "--version"), {"PATH": str(bin_dir)}) == expected


def test_a_transcript_version_too_long_to_be_one_picks_the_newest(tmp_path: Path) -> None:
    project = _project(tmp_path)
    _transcript(project, "9" * 5000 + ".1.1")
    choice = choose_release(choose_flavor("claude", project), project)
    assert choice.flavor == CLAUDE and choice.release is not None and choice.release.source == "newest"


def test_a_memory_dir_in_a_symlink_loop_is_no_crash(tmp_path: Path) -> None:
    from memtui.core.places.statedir import memdir_state

    loop = tmp_path / "loop"
    loop.symlink_to(loop)
    assert memdir_state(tmp_path / "state", loop / "memory").parent == tmp_path / "state" / "memdirs"
