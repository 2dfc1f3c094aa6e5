"""Team memory import: a bundle ``{key: content}`` into ``<memory dir>/team/``
— accepted, rejected, unchanged; the 250,000-byte limit; secrets; one journaled change through the
write path (nothing partial on a failed write, undoable, the team index updated); the CLI.

Expected values are worked out by hand from docs/behaviour.md §9/§10 and the reference's limits."""

from __future__ import annotations

import errno
import json
import os
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from memtui.cli import main
from support.faults import failing_step, target_of
from memtui.core.writes.journal import Journal
from memtui.core.places.locations import state_dir
from memtui.core.memory.secretscan import find_secrets
from memtui.core.team.bundle import (
    MAX_TEAM_FILE_BYTES,
    BundleError,
    ImportReport,
    TeamImportError,
    TeamWriteError,
    import_bundle,
    load_bundle,
)

# The AWS documentation's example access key id, assembled here so no secret-shaped literal sits
# in the repository for a scanner to trip on.
FAKE_AWS_KEY = "AKIA" + "IOSFODNN7" + "EXAMPLE"
OLD_NS = 1_700_000_000_123_456_789  # a fixed, distinctive mtime for "before" files
NOW = datetime(2026, 3, 14, 9, 30, tzinfo=UTC)


@pytest.fixture
def mem(tmp_path: Path) -> Path:
    memory_dir = tmp_path.resolve() / "memory"
    memory_dir.mkdir()
    return memory_dir


def state_of(mem: Path) -> Path:
    """memtui's state dir for these tests: next to the memory dir, never inside it."""
    return mem.parent / "state"


def imp(bundle: dict[str, Any], mem: Path, *, dry_run: bool = False) -> ImportReport:
    return import_bundle(bundle, mem, state_dir=state_of(mem), now=NOW, dry_run=dry_run)


def journal_of(mem: Path) -> Journal:
    return Journal(state_of(mem), mem)


def put(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode("utf-8"))
    os.utime(path, ns=(OLD_NS, OLD_NS))
    return path


def snapshot(root: Path) -> dict[str, Any]:
    """Every entry below ``root``: folders, file bytes + mode + mtime, link targets."""
    out: dict[str, Any] = {}
    if not root.exists():
        return out
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            path = Path(dirpath) / name
            rel = path.relative_to(root).as_posix()
            st = path.lstat()
            if path.is_symlink():
                out[rel] = ("link", os.readlink(path))
            elif path.is_dir():
                out[rel] = ("dir", st.st_mode)
            else:
                out[rel] = ("file", path.read_bytes(), st.st_mode, st.st_mtime_ns)
    return out


# --- accepted / rejected / unchanged -------------------------------------------------------


def test_accepted_rejected_unchanged(mem: Path) -> None:
    team = mem / "team"
    put(team / "old.md", "v1")
    put(team / "same.md", "same")
    report = imp(
        {
            "new.md": "hello",
            "old.md": "v2",
            "same.md": "same",
            "../escape.md": "x",
            "n.md": 3,
            "notes/2026-03.md": "笔记",
        },
        mem,
    )
    assert report.to_json() == {
        "team_dir": str(team),
        "dry_run": False,
        "accepted": [
            {"key": "new.md", "path": str(team / "new.md"), "bytes": 5, "status": "created"},
            {"key": "old.md", "path": str(team / "old.md"), "bytes": 2, "status": "updated"},
            {"key": "same.md", "path": str(team / "same.md"), "bytes": 4, "status": "unchanged"},
            # two CJK characters, three UTF-8 bytes each
            {"key": "notes/2026-03.md", "path": str(team / "notes/2026-03.md"), "bytes": 6, "status": "created"},
        ],
        "rejected": [
            {"key": "../escape.md", "code": "outside-dir", "reason": report.rejected[0].reason},
            {"key": "n.md", "code": "not-a-string", "reason": "its content is a number, not a string"},
        ],
    }
    assert (team / "new.md").read_text() == "hello"
    assert (team / "old.md").read_text() == "v2"
    assert (team / "notes/2026-03.md").read_text(encoding="utf-8") == "笔记"
    assert (team / "same.md").stat().st_mtime_ns == OLD_NS  # unchanged: not rewritten
    assert not (mem / "escape.md").exists()
    assert not (team / "n.md").exists()
    assert not [p for p in team.rglob("*") if p.name.endswith(".tmp")]


def test_dry_run_writes_nothing(mem: Path) -> None:
    team = mem / "team"
    put(team / "old.md", "v1")
    before = snapshot(mem)
    report = imp({"new.md": "x", "old.md": "v2", "old2/../old.md": "v3"}, mem, dry_run=True)
    assert snapshot(mem) == before
    assert report.dry_run is True
    # 'old.md' and 'old2/../old.md' name one file: both refused, whichever came first
    assert [(a.key, a.status) for a in report.accepted] == [("new.md", "created")]
    assert [(r.key, r.code) for r in report.rejected] == [("old.md", "duplicate-target"), ("old2/../old.md", "duplicate-target")]


def test_content_shapes_rejected(mem: Path) -> None:
    (mem / "team" / "folder").mkdir(parents=True)
    report = imp(
        {
            "null.md": None,
            "list.md": ["a"],
            "obj.md": {"a": 1},
            "bool.md": True,
            "surrogate.md": "ok \ud800",
            "folder": "text",
            "trailing/": "text",
        },
        mem,
    )
    assert report.accepted == ()
    assert [(r.key, r.code) for r in report.rejected] == [
        ("null.md", "not-a-string"),
        ("list.md", "not-a-string"),
        ("obj.md", "not-a-string"),
        ("bool.md", "not-a-string"),
        ("surrogate.md", "invalid-unicode"),
        ("folder", "is-directory"),
        ("trailing/", "is-directory"),
    ]
    assert [r.reason for r in report.rejected[:4]] == [
        "its content is null, not a string",
        "its content is an array, not a string",
        "its content is an object, not a string",
        "its content is a boolean, not a string",
    ]


def test_file_and_folder_in_one_bundle(mem: Path) -> None:
    report = imp({"x": "1", "x/y.md": "2", "z.md": "3"}, mem)
    assert [a.key for a in report.accepted] == ["z.md"]
    assert [(r.key, r.code) for r in report.rejected] == [("x", "file-and-folder"), ("x/y.md", "file-and-folder")]


def test_unsafe_keys_are_rejected_with_the_safepath_code(mem: Path) -> None:
    bundle = {
        "a\0.md": "x",
        "%2e%2e%2fescape.md": "x",
        "．．／escape.md": "x",
        "..\\escape.md": "x",
        "/etc/passwd": "x",
        "笔记.md": "ok",
        "a..b.md": "ok",
    }
    report = imp(bundle, mem)
    assert [a.key for a in report.accepted] == ["笔记.md", "a..b.md"]
    assert [r.code for r in report.rejected] == [
        "nul-byte",
        "url-encoded-traversal",
        "unicode-traversal",
        "backslash",
        "absolute-path",
    ]
    assert sorted(p.name for p in mem.rglob("*")) == ["MEMORY.md", "a..b.md", "team", "笔记.md"]
    assert (mem / "team" / "MEMORY.md").read_text(encoding="utf-8") == "- [笔记](笔记.md)\n- [a..b](a..b.md)\n"


def test_symlink_out_of_team_is_rejected_and_target_untouched(mem: Path, tmp_path: Path) -> None:
    outside = tmp_path.resolve() / "ssh"
    outside.mkdir()
    keys = put(outside / "authorized_keys", "ssh-ed25519 AAAA me")
    (mem / "team").mkdir()
    os.symlink(keys, mem / "team" / "sprint.md")  # the chapter's example
    report = imp({"sprint.md": "attacker key"}, mem)
    assert [(r.key, r.code) for r in report.rejected] == [("sprint.md", "symlink-escape")]
    assert keys.read_text() == "ssh-ed25519 AAAA me"


def test_symlink_inside_team_is_written_through(mem: Path) -> None:
    team = mem / "team"
    put(team / "real.md", "old")
    os.symlink("real.md", team / "alias.md")
    report = imp({"alias.md": "new"}, mem)
    assert [(a.key, a.path, a.status) for a in report.accepted] == [("alias.md", team / "real.md", "updated")]
    assert (team / "alias.md").is_symlink()
    assert (team / "real.md").read_text() == "new"


def test_new_files_get_the_umask_mode_and_updates_keep_theirs(mem: Path) -> None:
    team = mem / "team"
    put(team / "private.md", "v1").chmod(0o600)
    old_umask = os.umask(0o022)
    try:
        imp({"private.md": "v2", "fresh.md": "x"}, mem)
    finally:
        os.umask(old_umask)
    assert (team / "private.md").stat().st_mode & 0o777 == 0o600
    assert (team / "fresh.md").stat().st_mode & 0o777 == 0o644


# --- the 250,000-byte limit (UTF-8 bytes, not characters) ----------------------------------


def test_size_limit_is_exactly_250000_utf8_bytes(mem: Path) -> None:
    assert MAX_TEAM_FILE_BYTES == 250_000
    bundle = {
        "ascii-at-limit.md": "a" * 250_000,
        "ascii-over.md": "a" * 250_001,
        "two-byte-at-limit.md": "é" * 125_000,  # 2 bytes each: 250,000
        "two-byte-over.md": "é" * 125_000 + "a",  # 250,001
        "three-byte-over.md": "笔" * 83_334,  # only 83,334 characters, but 250,002 bytes
    }
    report = imp(bundle, mem)
    assert [(a.key, a.bytes) for a in report.accepted] == [("ascii-at-limit.md", 250_000), ("two-byte-at-limit.md", 250_000)]
    assert [(r.key, r.code) for r in report.rejected] == [
        ("ascii-over.md", "too-large"),
        ("two-byte-over.md", "too-large"),
        ("three-byte-over.md", "too-large"),
    ]
    assert report.rejected[2].reason == (
        "its content is 250,002 bytes (UTF-8); the reference agent's limit for a team file is 250,000"
    )
    assert (mem / "team" / "ascii-at-limit.md").stat().st_size == 250_000


# --- secrets -------------------------------------------------------------------------------


def test_a_likely_secret_is_rejected_without_echoing_it(mem: Path) -> None:
    content = f"# Deploy\nuse the key {FAKE_AWS_KEY} for the bucket\n"
    report = imp({"deploy.md": content, "fine.md": "no secrets here, the password is in the vault"}, mem)
    assert [a.key for a in report.accepted] == ["fine.md"]
    [rejection] = report.rejected
    assert (rejection.key, rejection.code) == ("deploy.md", "likely-secret")
    assert "AWS Access Key on line 2" in rejection.reason
    assert FAKE_AWS_KEY not in rejection.reason
    assert not (mem / "team" / "deploy.md").exists()


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("-----BEGIN RSA " + "PRIVATE KEY-----", "Private Key"),
        ("token ghp_" + "A1b2C3d4E5f6G7h8I9j0" * 2 + "Kl", "GitHub Token"),
        ("ANTHROPIC_API_KEY=sk-ant-" + "api03-" + "Xy_9" * 20, "Anthropic API Key"),
        ("db at postgres://app:" + "s3cretpw@db.internal/app", "Basic Auth Credentials"),
    ],
)
def test_scanner_kinds(text: str, kind: str) -> None:
    assert [(f.kind, f.line) for f in find_secrets("intro\n" + text)] == [(kind, 2)]


@pytest.mark.parametrize(
    "text",
    [
        "fixed in commit 3f2a9c1d8e7b6a5f4e3d2c1b0a9f8e7d6c5b4a39",  # a hash is not a secret
        "session 123e4567-e89b-12d3-a456-426614174000 crashed",
        "the password is in 1Password under 'staging db'",
        "the API runs on 10.0.0.12 and 8.8.8.8 is the resolver",
    ],
)
def test_scanner_leaves_ordinary_memories_alone(text: str) -> None:
    assert find_secrets(text) == []


def test_secret_deep_inside_a_long_line_is_found_in_linear_time() -> None:
    for offset in (0, 1_023, 1_024, 2_047, 2_048, 100_000):
        line = "x" * offset + " " + FAKE_AWS_KEY + " " + "y" * 1_000
        assert [f.kind for f in find_secrets(line)] == ["AWS Access Key"], offset
    # 'sk-' repeated makes one detect-secrets pattern backtrack quadratically (148 s on one
    # 240 KB line when scanned whole); windows keep it to seconds
    started = time.monotonic()
    find_secrets("sk-" * 83_333)
    assert time.monotonic() - started < 30


# --- one change through the write path: nothing partial, undoable ---------------------------


def _fail_on_call(failing_call: int, root: Path) -> Any:
    """Make the ``failing_call``-th file write (1-based) below ``root`` fail with ENOSPC; the
    writes of memtui's journal in the state dir are not counted. Yields the temp paths written."""
    return failing_step("write", root, failing_call, OSError(errno.ENOSPC, "No space left on device"))


def test_failed_second_write_leaves_team_dir_as_it_was(mem: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    team = mem / "team"
    put(team / "a.md", "old a")
    put(team / "keep.md", "untouched")
    (team / "a.md").chmod(0o640)
    before = snapshot(team)
    with _fail_on_call(2, mem) as calls, pytest.raises(TeamWriteError) as caught:
        imp({"a.md": "new a", "sub/b.md": "new b", "c.md": "new c"}, mem)
    # a.md was replaced, sub/b.md failed (its temp file was removed); the write path's rollback
    # put a.md back (a third write); c.md and team/MEMORY.md were never reached
    assert [target_of(c) for c in calls] == [(str(team), 0), (str(team / "sub"), 1), (str(team), 0)]
    assert caught.value.key == "sub/b.md"
    assert caught.value.restore_failures == []
    assert caught.value.code == "write-failed"
    assert caught.value.reason == (
        "writing team key 'sub/b.md' failed (No space left on device); the team dir was restored; nothing was imported"
    )
    # bytes, modes, mtimes (to the microsecond: the journal keeps them as float seconds); no
    # 'sub', no MEMORY.md, no temp files
    assert _to_us(snapshot(team)) == _to_us(before)
    [entry] = journal_of(mem).entries()
    assert (entry.status, entry.action, entry.title) == ("failed", "team-import", "Team import: 3 files")
    assert [(c.relpath, c.kind) for c in entry.changes] == [
        ("team/a.md", "modify"),
        ("team/sub/b.md", "create"),
        ("team/c.md", "create"),
        ("team/MEMORY.md", "create"),
    ]


def test_a_failed_write_of_the_team_index_names_no_key(mem: Path) -> None:
    team = mem / "team"
    put(team / "MEMORY.md", "- [Old](old.md) — kept\n")
    put(team / "old.md", "v1")
    before = snapshot(team)
    # old.md, new.md, then the team index (not a key) fails
    with failing_step("write", mem, 3, OSError(errno.EIO, "Input/output error")) as written, pytest.raises(TeamWriteError) as caught:
        imp({"old.md": "v2", "new.md": "fresh"}, mem)
    # no file name in the error: the index is not a key, the message says what happened
    assert caught.value.key is None
    assert caught.value.reason == "the team import failed (Input/output error); the team dir was restored; nothing was imported"
    assert [target_of(w) for w in written] == [(str(team), 0), (str(team), 1), (str(team), 2), (str(team), 0)]
    assert _to_us(snapshot(team)) == _to_us(before)
    assert [e.status for e in journal_of(mem).entries()] == ["failed"]


def test_failed_first_write_in_a_new_team_dir_leaves_no_team_dir(mem: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with _fail_on_call(1, mem), pytest.raises(TeamWriteError):
        imp({"deep/er/x.md": "x", "y.md": "y"}, mem)
    assert list(mem.iterdir()) == []


def test_journal_that_cannot_be_written_touches_nothing(mem: Path) -> None:
    state_of(mem).write_text("a file where memtui's state dir should be")
    put(mem / "team" / "a.md", "old")
    before = snapshot(mem)
    with pytest.raises(TeamImportError) as caught:
        imp({"a.md": "new", "b.md": "b"}, mem)
    assert caught.value.code == "journal-failed"
    assert caught.value.reason.endswith("; nothing was imported")
    assert snapshot(mem) == before


def test_import_is_one_change_that_undo_reverts_byte_for_byte(mem: Path, tmp_path: Path) -> None:
    team = mem / "team"
    put(team / "MEMORY.md", "- [Release train](release.md) — ships on Tuesdays\n")
    put(team / "release.md", "---\nname: Release train\n---\nTuesdays\n")
    put(team / "keep.md", "untouched")
    put(team / "notes" / "old.md", "old note")
    before = snapshot(team)
    bundle = {
        "release.md": "---\nname: Release train\n---\nWednesdays now\n",
        "freeze.md": "---\nname: Deploy freeze\ndescription: no deploys on Fridays\n---\nbody\n",
        "notes/new.md": "a note",
        "keep.md": "untouched",
    }
    result = run(mem, write_bundle(tmp_path, bundle))
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[-1] == f"2 new, 1 updated, 1 unchanged, 0 rejected -> {team}"
    assert (team / "MEMORY.md").read_bytes() == (
        b"- [Release train](release.md) \xe2\x80\x94 ships on Tuesdays\n"
        b"- [Deploy freeze](freeze.md) \xe2\x80\x94 no deploys on Fridays\n"
        b"- [new](notes/new.md)\n"
    )
    [entry] = Journal(state_dir(), mem).entries()
    assert (entry.status, entry.action, entry.title) == ("applied", "team-import", "Team import: 3 files")

    undone = CliRunner().invoke(main, ["--memory-dir", str(mem), "undo"])
    assert undone.exit_code == 0, undone.output
    assert undone.output.splitlines()[0] == "Undo: Team import: 3 files"
    assert _to_us(snapshot(team)) == _to_us(before)  # bytes, modes, mtimes (to the µs), no new files
    assert (team / "MEMORY.md").read_bytes() == b"- [Release train](release.md) \xe2\x80\x94 ships on Tuesdays\n"


def _to_us(snap: dict[str, Any]) -> dict[str, Any]:
    """A snapshot with file mtimes in microseconds: the journal keeps mtimes as float seconds,
    so a restored mtime matches to the microsecond, not the nanosecond."""
    return {k: (*v[:3], v[3] // 1000) if v[0] == "file" else v for k, v in snap.items()}


def test_undo_of_an_import_that_created_the_team_index_removes_it(mem: Path, tmp_path: Path) -> None:
    # (team/ exists already: undo deletes the files a change created, not the folders)
    (mem / "team").mkdir()
    assert run(mem, write_bundle(tmp_path, {"a.md": "x"})).exit_code == 0
    assert (mem / "team" / "MEMORY.md").read_bytes() == b"- [a](a.md)\n"
    undone = CliRunner().invoke(main, ["--memory-dir", str(mem), "undo"])
    assert undone.exit_code == 0, undone.output
    assert list((mem / "team").iterdir()) == []


def test_undo_reverts_the_import_not_an_older_change(mem: Path, tmp_path: Path) -> None:
    """The tester's report: ``memtui undo`` after an import silently reverted the change
    before it, since the import was not journaled."""
    from memtui.core.writes.edits import FileChange, Plan, apply_plan

    put(mem / "user_me.md", "---\nname: Me\ndescription: who I am\ntype: user\n---\nv1\n")
    data = (mem / "user_me.md").read_bytes()
    edit = Plan("Edit user_me.md", (FileChange("user_me.md", data, data.replace(b"v1", b"v2")),))
    apply_plan(mem, edit, Journal(state_dir(), mem), NOW)  # an older hand edit, journaled
    assert run(mem, write_bundle(tmp_path, {"a.md": "x"})).exit_code == 0
    undone = CliRunner().invoke(main, ["--memory-dir", str(mem), "undo"])
    assert undone.output.splitlines()[0] == "Undo: Team import: 1 file"
    assert (mem / "user_me.md").read_bytes().endswith(b"v2\n")  # the older edit stays
    assert not (mem / "team" / "a.md").exists()


# --- the team index ------------------------------------------------------------------------


def test_new_files_get_their_team_index_line(mem: Path) -> None:
    team = mem / "team"
    put(team / "MEMORY.md", "# Team\r\n\r\n- [Linked already](later.md)\r\n- [Old](old.md) \u2014 kept\r\n")
    put(team / "old.md", "v1")
    imp(
        {
            "old.md": "---\nname: Old renamed\ndescription: changed\n---\n",  # updated: no new line
            "oncall.md": "---\nname: On-call [rota]\ndescription: who is paged, week by week\ntype: reference\n---\n",
            "later.md": "---\nname: Later\n---\n",  # new, but the index already links it
            "笔记.md": "no frontmatter",
            "data.json": "{}",  # not a memory: no line
            "sub/MEMORY.md": "an index is not a memory",
            "list.md": "---\n- just\n- a list\n---\n",  # frontmatter that is not a mapping: the stem
            "odd.md": "---\nname:\n  nested: x\ndescription: [a, b]\n---\n",  # no usable name or hook
        },
        mem,
    )
    assert (team / "MEMORY.md").read_bytes() == (
        "# Team\r\n\r\n- [Linked already](later.md)\r\n- [Old](old.md) \u2014 kept\r\n"
        "- [On-call (rota)](oncall.md) \u2014 who is paged, week by week\r\n"
        "- [笔记](笔记.md)\r\n"
        "- [list](list.md)\r\n"
        "- [odd](odd.md)\r\n"
    ).encode("utf-8")


def test_new_file_with_no_index_yet(mem: Path) -> None:
    imp({"notes/2026-03.md": "---\ndescription: March notes\n---\n"}, mem)
    assert (mem / "team" / "MEMORY.md").read_bytes() == "- [2026-03](notes/2026-03.md) \u2014 March notes\n".encode()


def test_a_bundle_that_brings_the_team_index_keeps_it_as_sent(mem: Path) -> None:
    imp({"MEMORY.md": "- [A](a.md)\n", "a.md": "a", "b.md": "b"}, mem)
    assert (mem / "team" / "MEMORY.md").read_bytes() == b"- [A](a.md)\n"


def test_unchanged_bundle_writes_nothing_and_journals_nothing(mem: Path) -> None:
    put(mem / "team" / "a.md", "a")
    report = imp({"a.md": "a"}, mem)
    assert report.journal_entry is None
    assert journal_of(mem).entries() == []
    assert not (mem / "team" / "MEMORY.md").exists()


def test_cannot_create_team_dir(mem: Path) -> None:
    mem.chmod(0o500)
    try:
        if os.access(mem, os.W_OK):  # root ignores modes
            pytest.skip("running as root: the dir stays writable")
        with pytest.raises(TeamWriteError) as caught:
            imp({"x.md": "x"}, mem)
        assert "Permission denied" in caught.value.reason
    finally:
        mem.chmod(0o700)
    assert list(mem.iterdir()) == []


def test_missing_memory_dir(tmp_path: Path) -> None:
    with pytest.raises(TeamImportError) as caught:
        imp({"x.md": "x"}, tmp_path / "nowhere")
    assert caught.value.code == "no-memory-dir"


# --- the bundle file -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "code"),
    [
        (b"[1, 2]", "not-an-object"),
        (b'"text"', "not-an-object"),
        (b"3", "not-an-object"),
        (b"null", "not-an-object"),
        (b"{x", "bad-json"),
        (b"", "bad-json"),
        (b'{"a.md": "1", "a.md": "2"}', "bad-json"),  # JSON would silently keep the last
        (b"\xff\xfe{", "bad-json"),
    ],
)
def test_bad_bundles(tmp_path: Path, raw: bytes, code: str) -> None:
    path = tmp_path / "bundle.json"
    path.write_bytes(raw)
    with pytest.raises(BundleError) as caught:
        load_bundle(path)
    assert caught.value.code == code
    assert isinstance(caught.value, ValueError)


def test_bundle_with_bom_and_nested_duplicates(tmp_path: Path) -> None:
    path = tmp_path / "bundle.json"
    path.write_bytes(b'\xef\xbb\xbf{"a.md": "1", "b.md": {"k": 1, "k": 2}}')
    bundle = load_bundle(path)
    assert list(bundle) == ["a.md", "b.md"] and bundle["a.md"] == "1"
    assert not isinstance(bundle["b.md"], str)  # left for import_bundle to reject


# --- the CLI -------------------------------------------------------------------------------


def run(mem: Path, *args: str) -> Any:
    return CliRunner().invoke(main, ["--memory-dir", str(mem), "team", "import", *args])


def write_bundle(tmp_path: Path, data: Any) -> str:
    path = tmp_path / "bundle.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return str(path)


def test_cli_all_accepted_exits_0(mem: Path, tmp_path: Path) -> None:
    result = run(mem, write_bundle(tmp_path, {"a.md": "x", "b/c.md": "yz"}))
    assert result.exit_code == 0, result.output
    assert result.output.splitlines() == [
        "created      a.md (1 byte)",
        "created      b/c.md (2 bytes)",
        f"2 new, 0 updated, 0 unchanged, 0 rejected -> {mem / 'team'}",
    ]
    again = run(mem, write_bundle(tmp_path, {"a.md": "x"}), "--json")
    assert again.exit_code == 0
    assert json.loads(again.output)["accepted"][0]["status"] == "unchanged"


def test_cli_any_rejection_exits_1(mem: Path, tmp_path: Path) -> None:
    result = run(mem, write_bundle(tmp_path, {"a.md": "x", "../b.md": "y"}), "--json")
    assert result.exit_code == 1
    data = json.loads(result.output)
    assert [a["key"] for a in data["accepted"]] == ["a.md"]
    assert [(r["key"], r["code"]) for r in data["rejected"]] == [("../b.md", "outside-dir")]
    assert (mem / "team" / "a.md").exists()


def test_cli_dry_run(mem: Path, tmp_path: Path) -> None:
    result = run(mem, write_bundle(tmp_path, {"a.md": "x", "b\\c.md": "y"}), "--dry-run")
    assert result.exit_code == 1
    assert result.output.splitlines()[0] == "would create a.md (1 byte)"
    assert result.output.splitlines()[-1].startswith("dry run, nothing written: 1 new, 0 updated, 0 unchanged, 1 rejected")
    assert not (mem / "team").exists()


def test_cli_control_characters_in_keys_are_escaped(mem: Path, tmp_path: Path) -> None:
    result = run(mem, write_bundle(tmp_path, {"a\u0000b\n.md": "x"}))
    assert result.exit_code == 1
    assert "rejected     'a\\x00b\\n.md' [nul-byte]" in result.output


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (None, "cannot read"),
        ("{not json", "is not valid JSON"),
        ("[1]", "holds an array, not a JSON object"),
    ],
)
def test_cli_bad_input_exits_2_with_one_line(mem: Path, tmp_path: Path, raw: str | None, message: str) -> None:
    path = tmp_path / "bundle.json"
    if raw is not None:
        path.write_text(raw)
    result = run(mem, str(path))
    assert result.exit_code == 2
    assert "Traceback" not in result.output
    [line] = result.output.splitlines()
    assert line.startswith("memtui: ") and message in line
    assert not (mem / "team").exists()


def test_cli_write_failure_exits_2(mem: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with _fail_on_call(1, mem):
        result = run(mem, write_bundle(tmp_path, {"a.md": "x"}))
    assert result.exit_code == 2
    assert result.output.strip() == "memtui: writing team key 'a.md' failed (No space left on device); the team dir was restored; nothing was imported"


def test_cli_missing_memory_dir_exits_2(tmp_path: Path) -> None:
    result = run(tmp_path / "nowhere", write_bundle(tmp_path, {"a.md": "x"}))
    assert result.exit_code == 2
    assert result.output.startswith("memtui: no memory dir at ")
