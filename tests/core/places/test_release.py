"""A release's facts as data: the claude flavor names Claude Code 2.1.328's, the agent flavor
none; a template is filled in one pass and refuses a missing or unknown slot; the global config
is read once per version of the file and a broken one is a diagnostic."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from memtui.core.places.claude_json import read_global_config
from memtui.core.places.flavor import AGENT, CLAUDE
from memtui.core.places.release import ReleaseDataError, fill, load_release, release_of


def test_flavors_and_releases() -> None:
    assert release_of(AGENT) is None
    r = release_of(CLAUDE)
    assert r is not None and (r.version, r.dream.flag, r.dream.min_hours, r.dream.min_sessions) == ("2.1.328", "tengu_onyx_plover", 24.0, 5)
    assert r is load_release("claude-2.1.328")


def test_fill_is_one_pass_and_strict() -> None:
    assert fill("a {{x}} b {{y}}", x="{{y}}", y="2") == "a {{y}} b 2"
    with pytest.raises(ReleaseDataError):
        fill("{{x}}")
    with pytest.raises(ReleaseDataError):
        fill("{{x}}", x="1", z="2")


def test_global_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    assert not read_global_config().exists
    cfg = tmp_path / ".claude.json"
    cfg.write_text(json.dumps({"cachedGrowthBookFeatures": {"tengu_onyx_plover": {"enabled": True}}}))
    read = read_global_config()
    assert read.flag("tengu_onyx_plover") == ({"enabled": True}, True) and read.flag("x") == (None, False)
    cfg.write_text("[1, 2")
    os.utime(cfg, (1, 1))
    broken = read_global_config()
    assert broken.flag_cache is None and broken.diagnostic is not None and broken.diagnostic.code == "claude-json-unreadable"
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "cfg"))
    assert read_global_config().path == tmp_path / "cfg" / ".claude.json"
