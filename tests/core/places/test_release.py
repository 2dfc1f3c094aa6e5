"""A release's facts as data: the claude flavor names Claude Code 2.1.332's (its 2.1.328
profile 2.1.328's, which 2.1.332 extends), the agent flavor none; a template is filled in one pass and refuses a missing or unknown slot; the global config
is read once per version of the file and a broken one is a diagnostic."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from memtui.core.places.claude_json import read_global_config
from memtui.core.places.flavor import AGENT, CLAUDE, CLAUDE_2_1_328
from memtui.core.places.release import ReleaseDataError, fill, load_release, release_of


def test_flavors_and_releases() -> None:
    assert release_of(AGENT) is None
    r = release_of(CLAUDE)
    assert r is not None and (r.version, r.dream.flag, r.dream.min_hours, r.dream.min_sessions) == ("2.1.332", "tengu_onyx_plover", 24.0, 5)
    assert r is load_release("claude-2.1.332")
    old = release_of(CLAUDE_2_1_328)
    assert old is not None and (old.version, old.dream.flag, old.dream.min_hours) == ("2.1.328", "tengu_onyx_plover", 24.0)


def test_2_1_332_adds_the_organization_gate_and_keeps_the_rest() -> None:
    """SPEC §13.1: the gate is new in 2.1.332; its other gates, flags and prompts are 2.1.328's
    (the dream prompt is a byte-identical template)."""
    old, new = load_release("claude-2.1.328"), load_release("claude-2.1.332")
    assert old.dream.organization_gate is None
    gate = new.dream.organization_gate
    assert gate is not None
    assert (gate.needle, gate.glob, gate.organization_key, gate.timeout_s) == ('"type":"hybrid-organization"', "*.jsonl*", "organizationUuid", 60.0)
    assert (gate.skip_other, gate.skip_failed) == ("other_hybrid_organization", "hybrid_organization_check_failed")
    for name in ("dream_prompt.txt", "extract_prompt.txt", "memory_section.txt", "recall_selector.txt"):
        assert new.template(name) == old.template(name)
    same = lambda r: (r.dream.flag, r.dream.setting, r.dream.lock_file, r.extract.flag, r.main_model_default, r.memory_update)  # noqa: E731
    assert same(new) == same(old)


def test_a_release_that_extends_itself_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from memtui.core.places import release

    (tmp_path / "loop").mkdir()
    (tmp_path / "loop" / "background.json").write_text(json.dumps({"extends": "loop"}))
    monkeypatch.setattr(release, "_root", lambda name: tmp_path / name)
    release._facts.cache_clear()
    try:
        with pytest.raises(ReleaseDataError, match="extends itself"):
            release._facts("loop")
    finally:
        release._facts.cache_clear()


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
