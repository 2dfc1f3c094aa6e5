"""The search behind Claude Code 2.1.332's organization dream gate (SPEC §13.1), worked by hand
from the CLI's ripgrep command (``--no-config --no-ignore --hidden --text --fixed-strings
--glob '*.jsonl*'``, the needle ``"type":"hybrid-organization"``) and its mark parser: which
files are searched, which lines are marks, line numbers, encodings, and the failures (an
unreadable or missing dir, the time limit, a line too long to parse) — without ever hanging on a
FIFO."""

from __future__ import annotations

import codecs
import os
import threading
from pathlib import Path

import pytest

from memtui.core.dream import organization as org_mod
from memtui.core.dream.organization import parse_mark, search_marks
from memtui.core.places.release import load_release

GATE = load_release("claude-2.1.332").dream.organization_gate
assert GATE is not None
A = "6f1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d"
B = "0a9b8c7d-6e5f-4d3c-9b2a-1f0e9d8c7b6a"
MARK_A = '{"type":"hybrid-organization","organizationUuid":"%s","sessionId":"s"}' % A
MARK_B = '{"type":"hybrid-organization","organizationUuid":"%s","sessionId":"s"}' % B


def write(path: Path, *lines: str, end: str = "\n") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(line + end for line in lines))
    return path


def found(root: Path) -> set[tuple[str, int]]:
    """(path under root, line) of every mark."""
    s = search_marks(root, GATE)
    assert s.failure is None, s.failure
    return {(str(m.path.relative_to(root)), m.line) for m in s.marks}


def test_every_jsonl_star_file_at_any_depth_hidden_included(tmp_path: Path) -> None:
    write(tmp_path / "s1.jsonl", '{"type":"user"}', MARK_A)
    write(tmp_path / "s1" / "subagents" / "agent-a.jsonl", MARK_A)
    write(tmp_path / ".stash" / "old.jsonl", MARK_A)
    write(tmp_path / ".h.jsonl", MARK_A)
    write(tmp_path / "s2.jsonl.bak", MARK_A)
    write(tmp_path / "s2.jsonl.1", MARK_A)
    write(tmp_path / "notes" / "archive" / "x.jsonl", MARK_A)
    write(tmp_path / ".jsonl", MARK_A)  # "*" matches the empty name
    # no match of the glob: not searched
    write(tmp_path / "UP.JSONL", MARK_A)
    write(tmp_path / "x.json", MARK_A)
    write(tmp_path / "jsonl", MARK_A)
    write(tmp_path / "d.jsonl.d" / "in.txt", MARK_A)  # a dir matching the glob holds no matching file
    # ignore files are not read
    write(tmp_path / ".gitignore", "*")
    write(tmp_path / ".ignore", "*")
    write(tmp_path / ".rgignore", "*")
    assert found(tmp_path) == {
        ("s1.jsonl", 2), ("s1/subagents/agent-a.jsonl", 1), (".stash/old.jsonl", 1), (".h.jsonl", 1),
        ("s2.jsonl.bak", 1), ("s2.jsonl.1", 1), ("notes/archive/x.jsonl", 1), (".jsonl", 1),
    }


def test_links_are_not_followed_but_the_root_link_is(tmp_path: Path) -> None:
    outside = write(tmp_path / "outside" / "o.jsonl", MARK_A)
    root = tmp_path / "root"
    root.mkdir()
    (root / "link.jsonl").symlink_to(outside)
    (root / "dirlink").symlink_to(outside.parent)
    (root / "broken.jsonl").symlink_to(tmp_path / "nowhere")
    (root / "loop").symlink_to(root / "loop")
    assert found(root) == set()
    (tmp_path / "rootlink").symlink_to(outside.parent)
    assert found(tmp_path / "rootlink") == {("o.jsonl", 1)}


def test_a_fifo_is_skipped_without_blocking(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe.jsonl")
    write(tmp_path / "a.jsonl", MARK_A)
    result: list[object] = []
    t = threading.Thread(target=lambda: result.append(search_marks(tmp_path, GATE)), daemon=True)
    t.start()
    t.join(10)
    assert not t.is_alive(), "the search blocked on a FIFO"
    s = result[0]
    assert s.failure is None and s.files == 1 and [m.line for m in s.marks] == [1]  # type: ignore[attr-defined]


def test_a_fifo_swapped_in_after_the_walk_is_skipped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(tmp_path / "a.jsonl", MARK_A)
    fifo = tmp_path / "b.jsonl"
    os.mkfifo(fifo)
    real_walk = org_mod._walk

    def walk(root, gate, check):  # type: ignore[no-untyped-def]
        yield from real_walk(root, gate, check)
        yield fifo, None  # as if it had been a file when the walk listed it

    monkeypatch.setattr(org_mod, "_walk", walk)
    s = search_marks(tmp_path, GATE)
    assert s.failure is None and s.files == 1


def test_the_needle_is_byte_literal(tmp_path: Path) -> None:
    write(tmp_path / "a.jsonl", '{"type": "hybrid-organization", "organizationUuid": "%s"}' % A)
    write(tmp_path / "b.jsonl", '{"type":"user","text":"{\\"type\\":\\"hybrid-organization\\",\\"organizationUuid\\":\\"%s\\"}"}' % A)
    s = search_marks(tmp_path, GATE)
    assert s.state == "none" and s.marks == () and s.ignored == () and s.files == 2


@pytest.mark.parametrize(("line", "why"), [
    ('{"type":"hybrid-organization","organizationUuid":"not-a-uuid"}', "organizationUuid is not a UUID"),
    ('{"type":"hybrid-organization","organizationUuid":"%s\\n"}' % A, "organizationUuid is not a UUID"),
    ('{"type":"hybrid-organization","organizationUuid":"6f1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4ĸ"}', "organizationUuid is not a UUID"),
    ('{"type":"hybrid-organization","organizationUuid":12}', "organizationUuid is not a string"),
    ('[%s]' % MARK_A, "not a JSON object of type hybrid-organization"),
    ('{"type":"hybrid-organization","organizationUuid":"%s","type":"other"}' % A, "not a JSON object of type hybrid-organization"),
    ('{"type":"hybrid-organization","organizationUuid" : "%s"}' % A, 'no "organizationUuid": in the line'),
    ('{"type":"hybrid-organization","organizationUuid":"%s"} trailing' % A, "not JSON"),
    ('{"type":"hybrid-organization","organizationUuid":"%s","n":NaN}' % A, "not JSON"),
    ('\ufeff' + MARK_A, "not JSON"),  # a byte-order mark inside the file, not at its start
])
def test_lines_with_the_needle_that_are_no_mark(line: str, why: str) -> None:
    assert parse_mark(line.encode("utf-8"), GATE) == why


@pytest.mark.parametrize("line", [
    MARK_A,
    '{"organizationUuid":"%s","type":"hybrid-organization"}' % A,
    '{"type":"hybrid-organization","organizationUuid":"%s","sessionId":"s","extra":{"nested":[1,2]}}' % A,
    '  {"type":"hybrid-organization","organizationUuid":"%s"}\t' % A,
    MARK_A + "\r",
    '{"type":"hybrid-organization","organizationUuid":"nope","organizationUuid":"%s"}' % A,  # the last key wins
    '{"type":"hybrid-organization","organizationUuid":"\\u0036f1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d"}',
    '{"type":"hybrid-organization","organizationUuid":"%s","n":1e999}' % A,
])
def test_marks(line: str) -> None:
    assert parse_mark(line.encode("utf-8"), GATE)[0] == A


def test_the_organization_is_compared_lowercased(tmp_path: Path) -> None:
    write(tmp_path / "a.jsonl", MARK_A.replace(A, A.upper()))
    write(tmp_path / "b.jsonl", MARK_A)
    s = search_marks(tmp_path, GATE)
    assert s.organizations == (A,) and not s.mixed and s.marks_total == 2
    assert s.marks[0].raw == A.upper()


def test_two_organizations_are_mixed(tmp_path: Path) -> None:
    write(tmp_path / "a.jsonl", MARK_A)
    write(tmp_path / "b" / "subagents" / "agent-x.jsonl", MARK_B)
    s = search_marks(tmp_path, GATE)
    assert s.organizations == (A, B) and s.mixed and s.reason(GATE) == "other_hybrid_organization"


def test_byte_order_marks_and_line_ends(tmp_path: Path) -> None:
    (tmp_path / "bom8.jsonl").write_bytes(codecs.BOM_UTF8 + MARK_A.encode() + b"\n")
    (tmp_path / "bom16le.jsonl").write_bytes(codecs.BOM_UTF16_LE + ("x\n" + MARK_A + "\n").encode("utf-16-le"))
    (tmp_path / "bom16be.jsonl").write_bytes(codecs.BOM_UTF16_BE + (MARK_A + "\n").encode("utf-16-be"))
    (tmp_path / "crlf.jsonl").write_bytes(b"{}\r\n" + MARK_A.encode() + b"\r\n")
    (tmp_path / "noeol.jsonl").write_bytes(b"{}\n{}\n" + MARK_A.encode())
    (tmp_path / "nul.jsonl").write_bytes(b"\x00\x01\xff\n" + MARK_A.encode() + b"\n")
    assert found(tmp_path) == {("bom8.jsonl", 1), ("bom16le.jsonl", 2), ("bom16be.jsonl", 1), ("crlf.jsonl", 2), ("noeol.jsonl", 3), ("nul.jsonl", 2)}


@pytest.mark.parametrize("chunk", [1, 2, 5, 7, 29, 64])
def test_lines_and_needles_across_chunk_boundaries(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, chunk: int) -> None:
    monkeypatch.setattr(org_mod, "CHUNK", chunk)
    write(tmp_path / "a.jsonl", "", "{}", MARK_A, "x" * 50, MARK_B, MARK_B, "", '{"type":"hybrid-organization","organizationUuid":"bad"}', MARK_A)
    s = search_marks(tmp_path, GATE)
    assert [(m.line, m.organization) for m in s.marks] == [(3, A), (5, B), (6, B), (9, A)]
    assert [(i.line, i.why) for i in s.ignored] == [(8, "organizationUuid is not a UUID")]


def test_a_line_too_long_to_parse_fails_the_search(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(org_mod, "CHUNK", 16)
    monkeypatch.setattr(org_mod, "MAX_MARK_LINE", 200)
    write(tmp_path / "long.jsonl", "y" * 500, MARK_A)  # long but without the needle: fine
    assert found(tmp_path) == {("long.jsonl", 2)}
    write(tmp_path / "long.jsonl", '{"pad":"' + "y" * 500 + '",' + MARK_A[1:])
    s = search_marks(tmp_path, GATE)
    assert s.state == "failed" and s.failed_by == "memtui" and "line 1" in (s.failure or "")
    assert s.reason(GATE) == "hybrid_organization_check_failed"


def test_a_line_nested_too_deep_for_python_fails_the_search(tmp_path: Path) -> None:
    write(tmp_path / "deep.jsonl", '{"type":"hybrid-organization","organizationUuid":"%s","d":%s1%s}' % (A, "[" * 100_000, "]" * 100_000))
    s = search_marks(tmp_path, GATE)
    assert s.state == "failed" and s.failed_by == "memtui"


def test_an_unreadable_dir_fails_the_search(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(tmp_path / "a.jsonl", MARK_A)
    locked = tmp_path / "locked"
    locked.mkdir()
    real = os.scandir

    def scandir(path):  # type: ignore[no-untyped-def]
        if Path(path) == locked:  # tests run as root: chmod 000 would not stop a read
            raise PermissionError(13, "Permission denied", str(path))
        return real(path)

    monkeypatch.setattr(org_mod.os, "scandir", scandir)
    s = search_marks(tmp_path, GATE)
    assert s.state == "failed" and s.failed_by == "rg" and "Permission denied" in (s.failure or "")
    assert s.reason(GATE) == "hybrid_organization_check_failed"


def test_an_unreadable_matching_file_fails_the_search(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(tmp_path / "a.jsonl", "{}")
    bad = write(tmp_path / "b.jsonl", MARK_A)
    real = org_mod.open_regular

    def open_regular(path):  # type: ignore[no-untyped-def]
        if Path(path) == bad:
            raise PermissionError(13, "Permission denied", str(path))
        return real(path)

    monkeypatch.setattr(org_mod, "open_regular", open_regular)
    assert search_marks(tmp_path, GATE).state == "failed"


def test_a_missing_dir_has_nothing_to_search(tmp_path: Path) -> None:
    """ripgrep fails on a missing dir, but the CLI never searches one: the session ending its
    turn has written its transcript there by then."""
    s = search_marks(tmp_path / "nowhere", GATE)
    assert s.state == "none" and s.missing and s.files == 0
    write(tmp_path / "file", "x")
    assert search_marks(tmp_path / "file", GATE).state == "failed"


def test_an_unchanged_file_is_not_read_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    a = write(tmp_path / "a.jsonl", "{}", MARK_A)
    write(tmp_path / "b.jsonl", "{}")
    assert search_marks(tmp_path, GATE).marks_total == 1
    opened: list[Path] = []
    real = org_mod.open_regular
    monkeypatch.setattr(org_mod, "open_regular", lambda p: (opened.append(Path(p)), real(p))[1])
    again = search_marks(tmp_path, GATE)
    assert opened == [] and [(m.path, m.line) for m in again.marks] == [(a, 2)] and again.files == 2
    with a.open("a") as fh:
        fh.write(MARK_B + "\n")
    grown = search_marks(tmp_path, GATE)
    assert opened == [a] and grown.organizations == (A, B)


def test_the_time_limit(tmp_path: Path) -> None:
    for i in range(5):
        write(tmp_path / f"{i}.jsonl", "{}")
    ticks = iter(range(1000))
    s = search_marks(tmp_path, GATE, limit_s=3, clock=lambda: float(next(ticks)))
    assert s.state == "failed" and s.failed_by == "memtui" and s.failure == "the search took over 3 s"
    assert search_marks(tmp_path, GATE).state == "none"
