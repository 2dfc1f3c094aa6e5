"""Whether the agent recalls, said plainly: ``RecallState.reason`` is a sentence for a person
with no flag or cache-key name; the flag's name, its cached value, the file and the variable
are in ``RecallState.details``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from memtui.core.places.agentconfig import recall_state
from memtui.core.places.claude_json import GlobalConfig
from memtui.core.places.flavor import AGENT, CLAUDE

GATE = CLAUDE.behaviour.recall_gate
HOME = "/home/u"
ENV = {"HOME": HOME}


def config(data: dict[str, Any]) -> GlobalConfig:
    return GlobalConfig(Path(HOME) / ".claude.json", True, data)


@pytest.mark.parametrize(("data", "environ", "expected"), [
    ({"cachedGrowthBookFeatures": {"tengu_moth_copse": True}}, ENV,
     (True, "flag", "this feature is on for your account", "flag tengu_moth_copse: true in ~/.claude.json (cachedGrowthBookFeatures)")),
    ({"cachedGrowthBookFeatures": {"tengu_moth_copse": True}}, {**ENV, "DISABLE_TELEMETRY": "1"},
     (True, "flag", "this feature is on for your account, but with DISABLE_TELEMETRY set the agent reads that only when "
      "CLAUDE_CODE_GB_DISK_CACHE_WHEN_TELEMETRY_OFF is set too", "flag tengu_moth_copse: true in ~/.claude.json (cachedGrowthBookFeatures)")),
    ({"cachedGrowthBookFeatures": {"tengu_moth_copse": True}}, {**ENV, "DISABLE_TELEMETRY": "1", "CLAUDE_CODE_GB_DISK_CACHE_WHEN_TELEMETRY_OFF": "1"},
     (True, "flag", "this feature is on for your account", "flag tengu_moth_copse: true in ~/.claude.json (cachedGrowthBookFeatures)")),
    ({"cachedGrowthBookFeatures": {"tengu_moth_copse": False}}, ENV,
     (False, "off", "this feature is off for your account",
      "flag tengu_moth_copse: false in ~/.claude.json (cachedGrowthBookFeatures); CLAUDE_MEMORY_STORES is not set")),
    ({"cachedGrowthBookFeatures": {}}, ENV,
     (False, "off", "this feature is off for your account",
      "flag tengu_moth_copse: not cached in ~/.claude.json (cachedGrowthBookFeatures); CLAUDE_MEMORY_STORES is not set")),
    ({}, ENV,  # no flag cache: nothing is known about the account, only that this machine has no saved flags
     (False, "off", "this feature is off on this machine: Claude Code has not saved your account's feature settings here, "
      "and without them it treats the feature as off",
      "flag tengu_moth_copse: ~/.claude.json holds no flag cache (cachedGrowthBookFeatures); CLAUDE_MEMORY_STORES is not set")),
    ({}, {**ENV, "CLAUDE_MEMORY_STORES": "[{}]"},
     (True, "env", "CLAUDE_MEMORY_STORES is set", "flag tengu_moth_copse: ~/.claude.json holds no flag cache (cachedGrowthBookFeatures)")),
], ids=["on", "on-telemetry-off", "on-telemetry-off-kept", "off", "not-cached", "no-cache", "env"])
def test_the_reason_is_plain_and_the_flag_is_in_the_details(
    monkeypatch: pytest.MonkeyPatch, data: dict[str, Any], environ: dict[str, str], expected: tuple[bool, str, str, str]
) -> None:
    monkeypatch.setenv("HOME", HOME)  # the config file is shown as ~/.claude.json
    state = recall_state(GATE, config(data), environ)
    assert (state.on, state.source, state.reason, state.details) == expected
    assert "tengu_" not in state.reason and "cachedGrowthBookFeatures" not in state.reason


def test_an_agent_that_always_recalls_has_no_details() -> None:
    state = recall_state(AGENT.behaviour.recall_gate, config({}), ENV)
    assert (state.on, state.source, state.reason, state.details) == (True, "always", "this release always recalls", "")
