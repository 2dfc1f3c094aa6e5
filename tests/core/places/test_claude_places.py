"""Where Claude Code 2.1.328 keeps memory, whether it recalls, and which version the user runs
(the claude flavor's release data; the precedence and the gate were checked against the CLI)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from support.cascade import write

from memtui.core.places.agentconfig import recall_state, workspace_trust
from memtui.core.places.claude_json import read_global_config
from memtui.core.places.flavor import AGENT, CLAUDE
from memtui.core.places.locations import resolve_locations
from memtui.core.sessions.version import check_version


@pytest.fixture
def proj(tmp_path: Path) -> Path:
    p = tmp_path / "proj"
    (p / ".git").mkdir(parents=True)
    (p / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    return p


def home() -> Path:
    return Path(os.environ["HOME"])


def config(data: dict) -> None:  # type: ignore[type-arg]
    write(home(), ".claude.json", json.dumps(data))


def settings(where: Path, rel: str, value: str) -> None:
    write(where, rel, json.dumps({"autoMemoryDirectory": value}))


def test_trusted_order_is_policy_flag_local_project_user(proj: Path, tmp_path: Path) -> None:
    settings(home(), ".claude/settings.json", str(tmp_path / "user"))
    settings(proj, ".claude/settings.json", str(tmp_path / "project"))
    assert resolve_locations(CLAUDE, proj).memory_dir == tmp_path / "project"
    settings(proj, ".claude/settings.local.json", str(tmp_path / "local"))
    assert resolve_locations(CLAUDE, proj).memory_dir == tmp_path / "local"
    flag = json.dumps({"autoMemoryDirectory": str(tmp_path / "flag")})
    loc = resolve_locations(CLAUDE, proj, flag_settings=flag)
    assert (loc.memory_dir, loc.memory_dir_source) == (tmp_path / "flag", "flag")
    # the agent flavor keeps the seed's rule: never the checked-in project settings
    assert resolve_locations(AGENT, proj).memory_dir_source != "project"


def test_without_a_trust_record_an_interactive_session_skips_local_and_project(proj: Path, tmp_path: Path) -> None:
    settings(home(), ".claude/settings.json", str(tmp_path / "user"))
    settings(proj, ".claude/settings.json", str(tmp_path / "project"))
    loc = resolve_locations(CLAUDE, proj)
    assert loc.trust is not None and not loc.trust.trusted
    assert (loc.memory_dir_untrusted, loc.memory_dir_untrusted_source) == (tmp_path / "user", "user")
    config({"projects": {str(proj): {"hasTrustDialogAccepted": True}}})
    loc = resolve_locations(CLAUDE, proj)
    assert loc.trust is not None and loc.trust.trusted and loc.memory_dir_untrusted is None


def test_trust_of_a_folder_above_counts_up_to_the_git_root(proj: Path, tmp_path: Path) -> None:
    sub = proj / "a" / "b"
    sub.mkdir(parents=True)
    config({"projects": {str(proj): {"hasTrustDialogAccepted": True}}})
    assert workspace_trust(read_global_config(), sub, proj).key == str(proj)
    config({"projects": {str(tmp_path): {"hasTrustDialogAccepted": True}}})
    assert not workspace_trust(read_global_config(), sub, proj).trusted  # above the git root: no


def test_the_first_layer_that_sets_the_key_decides_even_when_invalid(proj: Path, tmp_path: Path) -> None:
    settings(home(), ".claude/settings.json", str(tmp_path / "user"))
    settings(proj, ".claude/settings.json", "relative/path")
    loc = resolve_locations(CLAUDE, proj)
    assert loc.memory_dir_source == "default"
    assert "memory-dir-override-invalid" in {d.code for d in loc.diagnostics}


def test_recall_gate_reads_the_cached_flag_or_the_stores_variable() -> None:
    gate = CLAUDE.behaviour.recall_gate
    config({})
    assert not recall_state(gate, read_global_config(), {}).on
    config({"cachedGrowthBookFeatures": {"tengu_moth_copse": True}})
    state = recall_state(gate, read_global_config(), {})
    assert state.on and state.source == "flag"
    config({"cachedGrowthBookFeatures": {"tengu_moth_copse": False}})
    assert recall_state(gate, read_global_config(), {"CLAUDE_MEMORY_STORES": "[{}]"}).source == "env"
    assert recall_state(AGENT.behaviour.recall_gate, read_global_config(), {}).on  # the seed always recalls


def test_the_users_version_comes_from_the_newest_transcript_line(proj: Path) -> None:
    loc = resolve_locations(CLAUDE, proj)
    session = loc.sessions_dir / "s1.jsonl"
    write(session.parent, session.name, json.dumps({"type": "user", "version": "2.1.300"}) + "\n" + json.dumps({"type": "cost-state"}) + "\n")
    check = check_version(loc, ask_command=False)
    assert (check.modelled, check.installed, check.differs) == ("2.1.332", "2.1.300", True)
    assert check.notice is not None and "2.1.300" in check.notice and "2.1.332" in check.notice
    write(session.parent, session.name, json.dumps({"type": "user", "version": "2.1.332"}) + "\n")
    assert check_version(loc, ask_command=False).notice is None
    assert check_version(resolve_locations(AGENT, proj), ask_command=False).modelled is None


def test_a_settings_env_block_turns_auto_memory_off_over_the_shell(proj: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Confirmed with Claude Code 2.1.332 (own oracle scenarios o_automem_settings_env and
    o_automem_project_env): CLAUDE_CODE_DISABLE_AUTO_MEMORY=1 in a settings file's env block
    (as a memory plugin's installer writes it) turns auto memory off, even when the shell sets it
    to 0; in the project's settings too (a -p run is trusted)."""
    write(home(), ".claude/settings.json", json.dumps({"env": {"CLAUDE_CODE_DISABLE_AUTO_MEMORY": "1"}}))
    loc = resolve_locations(CLAUDE, proj)
    assert (loc.auto_memory_enabled, loc.auto_memory_source) == (False, "CLAUDE_CODE_DISABLE_AUTO_MEMORY in the env block of the user settings")
    monkeypatch.setenv("CLAUDE_CODE_DISABLE_AUTO_MEMORY", "0")
    assert resolve_locations(CLAUDE, proj).auto_memory_enabled is False
    write(home(), ".claude/settings.json", json.dumps({}))
    assert resolve_locations(CLAUDE, proj).auto_memory_enabled is True  # the shell's 0 alone: on
    write(proj, ".claude/settings.json", json.dumps({"env": {"CLAUDE_CODE_DISABLE_AUTO_MEMORY": "1"}}))
    assert resolve_locations(CLAUDE, proj).auto_memory_source == "CLAUDE_CODE_DISABLE_AUTO_MEMORY in the env block of the project settings"
