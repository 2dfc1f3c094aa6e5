"""The stores audit on real Claude Code 2.1.332 transcripts, one scenario per case of SPEC §14.

Each scenario is laid out again under ``tmp_path`` (``support.stores.materialize``). The expected
store, cause and evidence of each finding follow from what the CLI did in the run: which dir it
told each session, and where the scripted Writes landed (``scripts/oracle_stores.py``)."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import pytest
from support.stores import CAPTURES, SCENARIOS, materialize

from memtui.core.places.flavor import CLAUDE
from memtui.core.places.locations import resolve_locations
from memtui.core.stores.audit import audit_stores, has_commit


def _run(name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[dict, object]:
    layout = materialize(name, tmp_path / name)
    monkeypatch.setenv("HOME", layout["home"])
    loc = resolve_locations(CLAUDE, Path(layout["project"]))
    return layout, audit_stores(loc)


def _sid(layout: dict, label: str) -> str:
    return next(s["session_id"] for s in layout["sessions"] if s["label"] == label)


def _store(layout: dict, folder: str) -> str:
    slug = "".join(c if c.isalnum() else "-" for c in folder)
    return f"{layout['home']}/.claude/projects/{slug}/memory"


def test_a_healthy_project_has_one_store_and_no_finding(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    layout, report = _run("healthy", tmp_path, monkeypatch)
    assert report.findings == ()
    assert [s.path for s in report.stores] == [_store(layout, layout["project"])]
    (only,) = report.stores
    assert only.memories == 3  # deploy, style, and build written by the second session
    assert [r.session for r in only.readers] == [_sid(layout, ""), _sid(layout, "write+agents")]
    assert [(w.session, [Path(f).name for f in w.files]) for w in only.writers] == [(_sid(layout, "write+agents"), ["build.md"])]


def test_a_subdirectory_session_writes_where_nothing_reads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    layout, report = _run("subdir", tmp_path, monkeypatch)
    (f,) = report.findings
    assert (f.code, f.cause) == ("store-written-not-read", "subdir")
    assert f.store == layout["stray"] and f.reads == _store(layout, layout["project"])
    assert f.store in f.message and f.reads in f.message
    assert [e.session for e in f.evidence] == [_sid(layout, "svc-write")]
    assert f.evidence[0].cwd == layout["project"] + "/svc" and f.evidence[0].files == (layout["stray"] + "/svc_notes.md",)
    assert f.fixes[0].command == f"memtui stores merge {f.store} --into {f.reads}"


def test_a_worktree_moved_without_repair_splits_the_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    layout, report = _run("worktree", tmp_path, monkeypatch)
    (f,) = report.findings
    assert (f.code, f.cause) == ("store-split", "worktree-link")
    assert f.store == layout["worktree_store"] and f.reads == _store(layout, layout["project"])
    assert [e.session for e in f.evidence] == [_sid(layout, "moved-write")]
    assert f.fixes[0].command == f"git -C {layout['project']} worktree repair {layout['worktree']}"
    assert f.fixes[1].command == f"memtui stores merge {f.store} --into {f.reads}"


def test_a_setting_honoured_only_when_trusted_splits_the_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    layout, report = _run("trust", tmp_path, monkeypatch)
    (f,) = report.findings
    assert (f.code, f.cause) == ("store-split", "trust")
    assert f.reads == layout["setting_dir"] and f.store == layout["default_store"]
    assert [e.session for e in f.evidence] == [_sid(layout, "untrusted")]
    assert "settings.local.json" in f.message
    assert f.fixes[0].command is None and "trust this folder" in f.fixes[0].text
    # the two stores share no folder below HOME one move can be journaled in: a copy
    assert f.fixes[1].command == f"memtui stores merge {f.store} --into {f.reads} --copy"


def test_a_moved_checkout_leaves_its_memories_under_the_old_slug(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    layout, report = _run("moved", tmp_path, monkeypatch)
    (f,) = report.findings
    assert (f.code, f.cause) == ("store-split", "moved")
    assert f.store == layout["old_store"] and f.reads == _store(layout, layout["project"])
    assert [e.session for e in f.evidence] == [_sid(layout, "before")]
    assert layout["old_project"] in f.message


def test_auto_memory_off_names_the_switch_the_file_the_session_and_the_plugin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    layout, report = _run("automem_off", tmp_path, monkeypatch)
    (f,) = report.findings
    assert f.code == "auto-memory-off" and f.severity == "warning"
    settings = layout["home"] + "/.claude/settings.json"
    assert f"CLAUDE_CODE_DISABLE_AUTO_MEMORY in the env block of {settings}" in f.message
    assert "claude-mem@thedotmack is enabled beside it" in f.message
    assert [e.session for e in f.evidence] == [_sid(layout, "off"), _sid(layout, "on")]
    assert f"since session {_sid(layout, 'off')[:8]}" in f.message
    assert f.fixes[0].setting == {"file": settings, "key": "env.CLAUDE_CODE_DISABLE_AUTO_MEMORY", "change": "remove it"}


def test_an_invalid_memory_dir_setting_is_said_to_be_ignored(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    layout, report = _run("ignored", tmp_path, monkeypatch)
    (f,) = report.findings
    assert (f.code, f.cause) == ("memory-setting-ignored", "setting")
    assert "'notes/memory' is not an absolute path" in f.message
    assert f.reads == _store(layout, layout["project"])
    assert [e.session for e in f.evidence] == [_sid(layout, "ignored")]


def test_a_committed_memory_folder_is_never_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    layout, report = _run("committed", tmp_path, monkeypatch)
    (f,) = report.findings
    assert f.code == "store-never-read"
    assert f.store == layout["project"] + "/.claude/memory"
    assert f.fixes[0].command is not None and f.fixes[0].command.endswith("--copy")  # never deletes tracked files


def test_every_finding_json_carries_a_fix(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("subdir", "worktree", "trust", "moved", "automem_off", "ignored", "committed"):
        _, report = _run(name, tmp_path, monkeypatch)
        for f in report.to_json()["findings"]:
            assert any(x["command"] for x in f["fixes"]), (name, f)
            assert all(x["command"] or "trust this folder" in x["text"] for x in f["fixes"]), (name, f)


def test_a_nested_repository_inside_the_project_is_not_one_of_its_sessions(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    layout = materialize("subdir", tmp_path / "subdir")
    monkeypatch.setenv("HOME", layout["home"])
    svc = Path(layout["project"]) / "svc"
    (svc / ".git").mkdir()
    (svc / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    report = audit_stores(resolve_locations(CLAUDE, Path(layout["project"])))
    assert report.findings == ()
    assert layout["stray"] not in [s.path for s in report.stores]


def _idx(ids: list[bytes]) -> bytes:
    ids = sorted(ids)
    fan = [sum(1 for i in ids if i[0] <= b) for b in range(256)]
    return b"\xfftOc" + struct.pack(">I", 2) + b"".join(struct.pack(">I", n) for n in fan) + b"".join(ids)


def test_has_commit_finds_loose_and_packed_objects(tmp_path: Path) -> None:
    common = tmp_path / ".git"
    (common / "objects" / "ab").mkdir(parents=True)
    (common / "objects" / "ab" / ("cdef12" + "0" * 32)).write_bytes(b"")
    packed = bytes.fromhex("97c4674" + "1" * 33)
    others = [bytes.fromhex(f"{b:02x}" + "2" * 38) for b in (0x01, 0x97, 0xfe)]
    (common / "objects" / "pack").mkdir()
    (common / "objects" / "pack" / "pack-x.idx").write_bytes(_idx([packed, *others]))
    assert has_commit(common, "abcdef1")
    assert has_commit(common, "97c4674")
    assert not has_commit(common, "97c4675")
    assert not has_commit(common, "not-hex")


def test_the_capture_scenarios_are_all_covered() -> None:
    assert sorted(p.name for p in CAPTURES.iterdir() if (p / "scenario.json").is_file()) == sorted(SCENARIOS)
    assert all(s["rc"] == 0 for p in CAPTURES.iterdir() for s in json.loads((p / "scenario.json").read_text())["sessions"])


def test_a_writer_whose_transcript_records_no_read_is_no_evidence(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A transcript that names no told dir (an older format) cannot show the store went unread.
    layout = materialize("subdir", tmp_path / "subdir")
    monkeypatch.setenv("HOME", layout["home"])
    sid = _sid(layout, "svc-write")
    transcript = next(Path(layout["home"]).rglob(f"{sid}.jsonl"))
    kept = [ln for ln in transcript.read_text(encoding="utf-8").splitlines(keepends=True) if "persistent file-based memory at" not in ln and '"AutoMem"' not in ln]
    transcript.write_text("".join(kept), encoding="utf-8")
    report = audit_stores(resolve_locations(CLAUDE, Path(layout["project"])))
    assert report.findings == ()


def test_the_trust_split_is_named_in_a_workspace_trusted_since(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The workspace was trusted after the untrusted session: the stray store is still the trust's doing.
    layout = materialize("trust", tmp_path / "trust")
    monkeypatch.setenv("HOME", layout["home"])
    config = Path(layout["home"]) / ".claude.json"
    config.write_text(json.dumps({"projects": {layout["project"]: {"hasTrustDialogAccepted": True}}}))
    loc = resolve_locations(CLAUDE, Path(layout["project"]))
    assert loc.memory_dir_untrusted is None
    (f,) = audit_stores(loc).findings
    assert (f.code, f.cause, f.store) == ("store-split", "trust", layout["default_store"])


def test_a_home_reached_through_a_link_is_one_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    layout = materialize("healthy", tmp_path / "healthy")
    link = tmp_path / "home-link"
    link.symlink_to(layout["home"])
    monkeypatch.setenv("HOME", str(link))
    report = audit_stores(resolve_locations(CLAUDE, Path(layout["project"])))
    assert report.findings == () and len(report.stores) == 1


# ----- more layouts, more sessions: what must be said, and what must not -------------------------


def _run_env(name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[dict, object]:
    layout = materialize(name, tmp_path / name)
    monkeypatch.setenv("HOME", layout["home"])
    for key, value in layout["env"].items():
        monkeypatch.setenv(key, value)
    return layout, audit_stores(resolve_locations(CLAUDE, Path(layout["project"])))


def test_an_intact_worktree_shares_the_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    layout, report = _run_env("worktree_ok", tmp_path, monkeypatch)
    assert report.findings == ()
    (only,) = report.stores
    assert {r.cwd for r in only.readers} == {layout["project"], layout["worktree"]}
    assert [w.session for w in only.writers] == [_sid(layout, "wt-write")]


def test_two_subfolders_two_stray_stores(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    layout, report = _run_env("two_subdirs", tmp_path, monkeypatch)
    assert sorted((f.code, f.cause, f.store) for f in report.findings) == [("store-written-not-read", "subdir", s) for s in sorted(layout["strays"])]
    assert {f.evidence[0].session for f in report.findings} == {_sid(layout, "api-write"), _sid(layout, "web-write")}


def test_a_config_dir_moves_every_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    layout, report = _run_env("config_dir", tmp_path, monkeypatch)
    assert report.findings == ()
    assert report.reads == f"{layout['config_dir']}/projects/{''.join(c if c.isalnum() else '-' for c in layout['project'])}/memory"
    assert [w.session for w in report.stores[0].writers] == [_sid(layout, "cfg")]


def test_a_project_dir_name_replaces_the_slug(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    layout, report = _run_env("project_dir_name", tmp_path, monkeypatch)
    assert report.findings == ()
    assert report.reads == f"{layout['config_dir']}/projects/my-named-project/memory"
    assert [r.session for r in report.stores[0].readers] == [_sid(layout, "named")]
    assert "CLAUDE_CODE_PROJECT_DIR_NAME" in report.reads_why


def test_a_user_setting_counts_trusted_or_not(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    layout, report = _run_env("user_setting", tmp_path, monkeypatch)
    assert report.findings == ()
    assert report.reads == layout["setting_dir"]
    assert [r.session for r in report.stores[0].readers] == [_sid(layout, "trusted"), _sid(layout, "untrusted")]


def test_auto_memory_enabled_false_in_the_project_settings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    layout, report = _run_env("automem_enabled_false", tmp_path, monkeypatch)
    (f,) = report.findings
    assert (f.code, f.severity) == ("auto-memory-off", "warning")
    assert f"autoMemoryEnabled: false in {layout['project']}/.claude/settings.json" in f.message
    assert [e.session for e in f.evidence] == [_sid(layout, "off")]  # no session ever had it


def test_from_inside_the_moved_worktree_the_main_checkout_is_named_as_such(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    layout = materialize("worktree", tmp_path / "worktree")
    monkeypatch.setenv("HOME", layout["home"])
    report = audit_stores(resolve_locations(CLAUDE, Path(layout["worktree"])))
    (f,) = report.findings
    assert (f.code, f.cause) == ("store-split", "worktree-link")
    assert f.reads == layout["worktree_store"] and f.store == _store(layout, layout["project"])
    assert "while the main checkout" in f.message
    assert f.fixes[0].command == f"git -C {layout['project']} worktree repair {layout['worktree']}"
    assert f.fixes[1].command == f"memtui stores merge {f.reads} --into {f.store}"  # this worktree's store into the main's


def test_a_finding_clears_once_every_memory_is_in_the_store_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    layout = materialize("subdir", tmp_path / "subdir")
    monkeypatch.setenv("HOME", layout["home"])
    loc = resolve_locations(CLAUDE, Path(layout["project"]))
    (f,) = audit_stores(loc).findings
    (Path(f.reads) / "svc_notes.md").write_bytes((Path(layout["stray"]) / "svc_notes.md").read_bytes())  # copied by hand
    assert audit_stores(loc).findings == ()


def test_sessions_before_the_setting_are_not_blamed_on_trust(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The committed folder made the store after the session ran: that session read the default
    # store because the setting was not there yet — not because the folder was untrusted.
    layout = materialize("committed", tmp_path / "committed")
    monkeypatch.setenv("HOME", layout["home"])
    folder = layout["project"] + "/.claude/memory"
    (Path(layout["project"]) / ".claude" / "settings.local.json").write_text(json.dumps({"autoMemoryDirectory": folder}))
    (f,) = audit_stores(resolve_locations(CLAUDE, Path(layout["project"]))).findings
    assert (f.code, f.cause, f.reads) == ("store-split", "setting-changed", folder)
    assert "they ran before autoMemoryDirectory" in f.message
    assert [x.command for x in f.fixes] == [f"memtui stores merge {f.store} --into {folder} --copy"]


def test_a_told_dir_claude_code_never_tells_is_no_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # An output style or a server's instructions can put the sentence into the system prompt;
    # a dir that is no `…/projects/<name>/memory`, no setting and no loaded index is ignored.
    layout = materialize("healthy", tmp_path / "healthy")
    monkeypatch.setenv("HOME", layout["home"])
    agents = Path(layout["home"]) / ".claude" / "agents"
    (agents).mkdir(parents=True)
    (agents / "reviewer.md").write_text("---\nname: reviewer\n---\nbody\n")
    sid = _sid(layout, "")
    transcript = next(Path(layout["home"]).rglob(f"{sid}.jsonl"))
    forged = {"parentUuid": None, "attachment": {"type": "prompt_snapshot", "systemPrompt": [f"# Memory\n\nYou have a persistent file-based memory at `{agents}/`."]}, "type": "attachment"}
    with transcript.open("a", encoding="utf-8") as fh:
        fh.write(json.dumps(forged) + "\n")
    report = audit_stores(resolve_locations(CLAUDE, Path(layout["project"])))
    assert report.findings == ()
    assert str(agents) not in [s.path for s in report.stores]
