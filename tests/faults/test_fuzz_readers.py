"""Every reader of a file memtui did not write (or that someone edited by hand) turns odd values
into a diagnostic, a skipped line or an absent value — never a crash (issue 29, item 4).

Two crashes were found by attack: a consolidation lock whose PID has 26 digits (``os.kill``
raised ``OverflowError``) and a transcript line nested 5,000 levels deep (``json.loads`` raised
``RecursionError``). They are pinned below, through the readers and through the ``memtui``
commands that read those files. Then hypothesis feeds every reader hostile bytes, JSON and YAML
— deep nesting, huge and negative integers, NaN and infinities, a list where an object belongs,
a string where a number belongs, control characters, NUL bytes, bytes that are not UTF-8 — and
checks that each call returns within ``BOUND_S`` with a usable value or the reader's own
diagnostic, and raises nothing but the error type its docstring names.

Deterministic (``derandomize=True``) and small: the whole file runs in about ten seconds.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import math
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

import pytest
import yaml
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memtui.cli import main
from memtui.core.base.clock import EPOCH_MAX, EPOCH_MIN
from memtui.core.base.jsontext import MAX_JSON_DEPTH, JSONInputError, json_number, loads_checked, nesting_depth
from memtui.core.base.process import MAX_PID, parse_pid, pid_alive
from memtui.core.dream.gates import DreamContext, check_gates, last_scan_at, read_dream_settings, status_to_json
from memtui.core.dream.history import before_image, remember_files
from memtui.core.dream.lock import LOCK_NAME, acquire_lock, read_lock
from memtui.core.extract.cursor import CursorStore
from memtui.core.extract.hook import HookInputError, parse_hook_input
from memtui.core.extract.inbox import Inbox
from memtui.core.memory import yaml12
from memtui.core.memory.frontmatter import parse_frontmatter
from memtui.core.places.claude_json import read_global_config
from memtui.core.places.flavor import AGENT
from memtui.core.places.locations import resolve_locations
from memtui.core.places.settings import load_settings
from memtui.core.places.slug import slugify
from memtui.core.places.statedir import memdir_state
from memtui.core.sessions.background import read_activity
from memtui.core.sessions.transcripts import attachments, parse_lines, read_relevant_memories, read_transcript, recently_used_tools, surfaced_memories
from memtui.core.sessions.uses import UsesReader
from memtui.core.sessions.version import transcript_version
from memtui.core.writes.journal import Journal

NOW = datetime(2026, 3, 10, 12, 0, tzinfo=UTC)
# The most one reader call may take on any input here (a 2-core CI machine under load; every
# call is milliseconds).
BOUND_S = 5.0
# The attack's depth: far past Python's recursion limit (1,000) and orjson's (1,024).
DEEP = 5_000
DEEP_ARRAY = "[" * DEEP + "]" * DEEP
DEEP_OBJECT = '{"a":' * DEEP + "1" + "}" * DEEP
SESSION = "0b5e6b7c-1111-2222-3333-444455556666"
FUZZ = settings(max_examples=150, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])

T = TypeVar("T")


def timed(call: Callable[[], T]) -> T:
    """``call()``; fails the test when it takes over ``BOUND_S``."""
    started = time.monotonic()
    result = call()
    took = time.monotonic() - started
    assert took < BOUND_S, f"took {took:.1f} s"
    return result


def in_epoch(value: float | None) -> bool:
    return value is None or (isinstance(value, float) and EPOCH_MIN <= value <= EPOCH_MAX)


# ----- hostile input -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Raw:
    """JSON text put as is where a value goes (``NaN``, ``1e999``, 5,000 brackets)."""

    text: str


def dump(value: object) -> str:
    """``value`` as JSON text; ``Raw`` leaves verbatim, non-finite floats as ``NaN``/``Infinity``
    (what Python's ``json.dumps`` writes and JavaScript's ``JSON.parse`` refuses)."""
    if isinstance(value, Raw):
        return value.text
    if isinstance(value, dict):
        return "{" + ",".join(f"{json.dumps(str(k))}:{dump(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ",".join(dump(v) for v in value) + "]"
    return json.dumps(value)


def nest(depth: int, kind: str) -> Raw:
    return Raw("[" * depth + "]" * depth if kind == "array" else '{"a":' * depth + "1" + "}" * depth)


odd_text = st.one_of(
    st.text(max_size=20),
    st.text(st.characters(codec="utf-8", categories=["Cc", "Cf", "Zl", "Zp"]), max_size=8),  # controls, NUL, bidi
    st.sampled_from(["", "\x00", "\udcff", "\ud800", "NaN", "1.2.3", "-1", "12345678901234567890123456", "user",
                     "9999-12-31T23:59:59-14:00", "0001-01-01T00:00:00+14:00", "0001-01-01T00:00:00", "2026-13-45", "..", "/etc/passwd"]),
)
odd_number = st.one_of(
    st.integers(),
    st.sampled_from([0, -1, 1, 2**31, 2**63, -(2**63) - 1, 10**25, -(10**30), 10**400, 10**4000]),  # 10**4000: 4,001 digits
    st.floats(allow_nan=True, allow_infinity=True),
)
odd_raw = st.one_of(
    st.sampled_from([Raw("NaN"), Raw("Infinity"), Raw("-Infinity"), Raw("1e999"), Raw("-1e999"), Raw("1" * 5000), Raw("1" + "0" * 400)]),
    st.builds(nest, st.sampled_from([MAX_JSON_DEPTH, MAX_JSON_DEPTH + 1, 1_500, DEEP]), st.sampled_from(["array", "object"])),
)
odd_scalar = st.one_of(st.none(), st.booleans(), odd_number, odd_text, odd_raw)
odd_value = st.recursive(odd_scalar, lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(odd_text, inner, max_size=3)), max_leaves=6)


def _paths(value: object, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    if isinstance(value, dict):
        for key, child in value.items():
            yield (*prefix, key)
            yield from _paths(child, (*prefix, key))
    elif isinstance(value, list):
        for i, child in enumerate(value):
            yield (*prefix, i)
            yield from _paths(child, (*prefix, i))


@st.composite
def mutated(draw: st.DrawFn, template: object) -> object:
    """``template`` (a valid JSON value) with one to three of its values (at any depth)
    replaced by odd ones."""
    value = copy.deepcopy(template)
    for _ in range(draw(st.integers(1, 3))):
        paths = list(_paths(value))
        if not paths:
            break
        path = draw(st.sampled_from(paths))
        parent = value
        for key in path[:-1]:
            parent = parent[key]
        parent[path[-1]] = draw(odd_value)
    return value


def _bad_utf8(text: str) -> bytes:
    return text.encode("utf-8", "surrogatepass")  # a lone surrogate becomes bytes no UTF-8 reader takes


def hostile_json(template: object) -> st.SearchStrategy[bytes]:
    """Bytes where a JSON file shaped like ``template`` belongs: the template with odd values,
    an odd value instead of it, the template cut short or with a byte that is not UTF-8, or
    random bytes."""
    good = dump(template)
    return st.one_of(
        mutated(template).map(lambda v: _bad_utf8(dump(v))),
        odd_value.map(lambda v: _bad_utf8(dump(v))),
        st.integers(0, len(good)).map(lambda n: good[:n].encode()),
        st.sampled_from([b"\xff", b"\x00", b"\xc3", b"\xed\xa0\x80"]).map(lambda b: good[:-2].encode() + b + good[-2:].encode()),
        st.binary(max_size=64),
    )


# ----- the two crashes the attack found --------------------------------------------------------


def _cli(tmp_path: Path, flavor: str, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["--flavor", flavor, "--project", str(tmp_path / "proj"), *args], env={"MEMTUI_NOW": "2026-03-10T12:00:00Z"})
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception  # what a person would have seen as a traceback
    return result.exit_code, result.output


def _project(tmp_path: Path, flavor: str) -> tuple[Path, Path]:
    """A project, its sessions dir and memory dir under the fake HOME (conftest); returns
    ``(sessions dir, memory dir)``."""
    proj = tmp_path / "proj"
    proj.mkdir(exist_ok=True)
    (proj / ("CLAUDE.md" if flavor == "claude" else "AGENT.md")).write_text("# Project\n")
    sessions = Path(os.environ["HOME"]) / (".claude" if flavor == "claude" else ".agent") / "projects" / slugify(str(proj))
    mem = sessions / "memory"
    mem.mkdir(parents=True, exist_ok=True)
    (mem / "user_tabs.md").write_text("---\nname: Tabs\ndescription: prefers tabs\ntype: user\n---\nTabs.\n")
    (mem / "MEMORY.md").write_text("- [Tabs](user_tabs.md) — prefers tabs\n")
    return sessions, mem


def _run_memtui(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "MEMTUI_NOW": "2026-03-10T12:00:00Z"}
    code = "import sys; from memtui.cli import main; main(sys.argv[1:], prog_name='memtui')"
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=60, env=env)


def test_a_26_digit_pid_names_no_holder(tmp_path: Path) -> None:
    assert pid_alive(12345678901234567890123456) is False  # os.kill raised OverflowError on it
    assert [pid_alive(p) for p in (0, -1, MAX_PID + 1, True, None)] == [False] * 5
    assert pid_alive(os.getpid()) is True
    assert [parse_pid(t) for t in ("0", "1", "2147483647", "2147483648", "12345678901234567890123456", "", "12a", "١٢")] == [
        None, 1, 2147483647, None, None, None, None, None,
    ]
    mem = tmp_path / "memory"
    mem.mkdir()
    lock = mem / LOCK_NAME
    lock.write_text("12345678901234567890123456\n")
    os.utime(lock, (NOW.timestamp() - 60, NOW.timestamp() - 60))  # taken a minute ago
    info = read_lock(mem)
    assert (info.exists, info.holder_pid, info.holder_alive, info.blocks(NOW)) == (True, None, False, False)
    assert info.last_consolidated_at == NOW.timestamp() - 60  # the mtime still dates the last dream
    handle = acquire_lock(mem, NOW)  # a body naming no process does not hold the lock
    assert handle.reclaimed == "empty" and read_lock(mem).holder_pid == os.getpid()


@pytest.mark.parametrize(
    ("body", "pid", "prior"),
    [
        ("0\n", None, None),
        ("-5\n", None, None),
        ("abc\n", None, None),
        ("1" * 5000 + "\n", None, None),  # past int()'s 4,300-digit limit
        ("\x00\x00", None, None),
        ("42\nprior-mtime: 1.2.3\n", 42, None),  # float() refused it
        ("42\nprior-mtime: " + "9" * 20 + "\n", 42, None),  # past year 9999
        ("42\nprior-mtime: 1773000000.5\n", 42, 1773000000.5),
        ("42\nprior-mtime: 0.000000\n", 42, 0.0),
    ],
    ids=["zero", "negative", "letters", "5000-digits", "nul", "bad-note", "note-past-9999", "note", "note-no-file"],
)
def test_odd_lock_bodies_read_as_no_holder_or_no_note(tmp_path: Path, body: str, pid: int | None, prior: float | None) -> None:
    mem = tmp_path / "memory"
    mem.mkdir()
    (mem / LOCK_NAME).write_text(body)
    info = read_lock(mem)
    assert (info.holder_pid, info.prior_mtime) == (pid, prior)


@pytest.mark.parametrize("flavor", ["agent", "claude"])
def test_the_26_digit_lock_through_dream_status_and_apply(tmp_path: Path, flavor: str) -> None:
    _, mem = _project(tmp_path, flavor)
    (mem / LOCK_NAME).write_text("12345678901234567890123456\n")
    os.utime(mem / LOCK_NAME, (NOW.timestamp() - 60, NOW.timestamp() - 60))
    code, out = _cli(tmp_path, flavor, "dream", "status", "--json")
    assert code == 0, out
    data = json.loads(out)
    if flavor == "agent":
        assert {k: data["gates"]["lock"][k] for k in ("ok", "holder_pid", "holder_alive")} == {"ok": True, "holder_pid": None, "holder_alive": False}
    else:
        lock = next(g for g in data["gates"] if g["id"] == "lock")
        assert (lock["ok"], lock["detail"], lock["data"]["holder_pid"]) == (True, "free: no PID, mtime 1 min ago", None)
    code, out = _cli(tmp_path, flavor, "dream", "status")
    assert code == 0 and "Traceback" not in out
    code, out = _cli(tmp_path, flavor, "dream", "apply", "--force", "--consolidator", "offline")
    assert code == 0, out


def test_the_26_digit_lock_in_a_real_memtui_process(tmp_path: Path) -> None:
    _, mem = _project(tmp_path, "agent")
    (mem / LOCK_NAME).write_text("12345678901234567890123456\n")
    proc = _run_memtui("--flavor", "agent", "--project", str(tmp_path / "proj"), "dream", "status", "--json")
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    assert json.loads(proc.stdout)["gates"]["lock"]["holder_pid"] is None


def _deep_transcript(sessions: Path) -> Path:
    """Line 1 and 2: the attack (5,000-deep array, 5,000-deep object); line 3 a person asking to
    remember something; line 4 a dream's ``memory_saved`` line whose paths nest 5,000 deep."""
    good = {"type": "user", "uuid": "u1", "sessionId": SESSION, "cwd": "/p", "timestamp": "2026-03-10T11:00:00Z", "version": "2.1.328",
            "entrypoint": "cli", "message": {"role": "user", "content": "remember that I always prefer tabs over spaces in every file"}}
    saved = '{"type":"system","subtype":"memory_saved","verb":"Improved","timestamp":"2026-03-10T11:00:01Z","writtenPaths":' + DEEP_ARRAY + "}"
    path = sessions / f"{SESSION}.jsonl"
    path.write_text("\n".join([DEEP_ARRAY, DEEP_OBJECT, json.dumps(good), saved]) + "\n")
    return path


def test_a_5000_deep_line_is_skipped_by_every_transcript_reader(tmp_path: Path) -> None:
    sessions = tmp_path / "sessions"
    sessions.mkdir()
    path = _deep_transcript(sessions)
    for text in (DEEP_ARRAY, DEEP_OBJECT):
        with pytest.raises(JSONInputError, match="nested deeper than 200"):
            loads_checked(text)
    read = timed(lambda: read_transcript(path))
    assert [(e.line, e.type) for e in read.entries] == [(3, "user")]  # the person's line survives
    assert read.skipped_lines == (1, 2, 4) and read.truncated_tail is False
    activity = timed(lambda: read_activity(path))
    assert activity.records == ()  # the memory_saved line is too deep to read: no record, no crash
    assert (activity.entrypoint, activity.first_time) == ("cli", datetime(2026, 3, 10, 11, tzinfo=UTC).timestamp())
    state = timed(lambda: UsesReader(tmp_path / "memory").read(path))
    assert state.uses == [] and state.session_id == SESSION


@pytest.mark.parametrize("flavor", ["agent", "claude"])
def test_a_5000_deep_transcript_through_every_command_that_reads_one(tmp_path: Path, flavor: str) -> None:
    sessions, _ = _project(tmp_path, flavor)
    path = _deep_transcript(sessions)
    commands = [["usage"], ["usage", "--json"], ["dream", "status"], ["dream", "status", "--json"], ["dream", "history"],
                ["recall", "tabs", "--transcript", str(path)], ["cascade", "--session", "latest"], ["where"]]
    if flavor == "claude":
        commands += [["extract", SESSION, "--explain"], ["dream", "reset-lock"]]
    for command in commands:
        code, out = _cli(tmp_path, flavor, *command)
        assert code in (0, 1, 2) and "Traceback" not in out, (command, out)
        assert code != 2 or "nested" not in out, (command, out)
    code, out = _cli(tmp_path, flavor, "extract", SESSION, "--extractor", "offline")
    assert code == 0, out
    code, out = _cli(tmp_path, flavor, "inbox", "--json")
    assert [p["type"] for p in json.loads(out)] == ["feedback"]  # line 3's request, read past the attack


def test_a_5000_deep_transcript_in_a_real_memtui_process(tmp_path: Path) -> None:
    sessions, _ = _project(tmp_path, "agent")
    _deep_transcript(sessions)
    proc = _run_memtui("--flavor", "agent", "--project", str(tmp_path / "proj"), "usage", "--json")
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    assert json.loads(proc.stdout)["sessions"] == 1


def test_a_5000_deep_stop_hook_payload_is_logged_not_raised(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["hook", "stop"], input=DEEP_OBJECT)
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert result.exit_code == 0  # a hook never fails the agent's turn
    log = Path(os.environ["MEMTUI_STATE_DIR"]) / "logs" / "hook.log"
    assert json.loads(log.read_text().splitlines()[-1])["message"] == "bad hook input: input is not JSON (nested deeper than 200 levels)"


# ----- odd values the fuzzing below found, pinned -----------------------------------------------


@pytest.mark.parametrize("value", ["1e999", "1" + "0" * 400, "-1", '"24"', "true", "NaN"], ids=["infinite", "400-digits", "negative", "text", "bool", "nan"])
def test_a_dream_setting_out_of_range_falls_back_to_its_default(tmp_path: Path, value: str) -> None:
    proj = tmp_path / "proj"
    (proj / ".agent").mkdir(parents=True)
    (proj / ".agent" / "settings.json").write_text('{"minHours": ' + value + ', "minSessions": 2}')
    layers = load_settings(AGENT, proj, {"HOME": str(tmp_path)})
    dream = read_dream_settings(DreamContext(tmp_path / "memory", tmp_path / "sessions", tmp_path / "state", settings=layers))
    assert (dream.min_hours, dream.min_sessions, dream.sources["minHours"]) == (24.0, 2 if value != "NaN" else 5, "default")
    # NaN makes the whole file invalid JSON (JavaScript's JSON.parse refuses it): one diagnostic
    codes = [d.code for d in (*layers.diagnostics, *dream.diagnostics)]
    assert codes == (["settings-invalid-json"] if value == "NaN" else ["dream-setting-invalid"])


def test_a_flag_cache_min_hours_of_400_digits_is_no_override(tmp_path: Path) -> None:
    _project(tmp_path, "claude")
    flags = '{"cachedGrowthBookFeatures": {"tengu_onyx_plover": {"enabled": true, "minHours": 1' + "0" * 400 + ', "minSessions": 1e999}}}'
    (Path(os.environ["HOME"]) / ".claude.json").write_text(flags)
    code, out = _cli(tmp_path, "claude", "dream", "status", "--json")
    assert code == 0, out
    data = json.loads(out)
    assert (data["min_hours"], data["min_sessions"]) == (24, 5)  # claude-2.1.328's defaults


def test_a_timestamp_in_year_0_utc_is_no_time(tmp_path: Path) -> None:
    from memtui.core.sessions.background import parse_time

    assert parse_time("2026-03-10T11:00:00Z") == 1773140400.0
    assert [parse_time(v) for v in ("0001-01-01T00:00:00+14:00", "9999-12-31T23:59:59-14:00", "2026-13-45", 1773140400)] == [None] * 4
    sessions, mem = _project(tmp_path, "agent")
    line = {"type": "assistant", "sessionId": SESSION, "cwd": "/p", "timestamp": "0001-01-01T00:00:00+14:00", "message": {"role": "assistant", "content": [
        {"type": "tool_use", "id": "t1", "name": "Read", "input": {"file_path": str(mem / "user_tabs.md")}}]}}
    (sessions / f"{SESSION}.jsonl").write_text(json.dumps(line) + "\n")
    code, out = _cli(tmp_path, "agent", "usage", "--json")  # was: "memtui: year 0 is out of range", exit 2
    assert code == 0, out
    tabs = next(m for m in json.loads(out)["memories"] if m["path"] == "user_tabs.md")
    assert (tabs["read"], tabs["last_used"]) == (1, None)


def test_a_nul_byte_in_a_recorded_instruction_path_is_a_file_that_is_gone(tmp_path: Path) -> None:
    sessions, _ = _project(tmp_path, "claude")
    lines = [{"type": "user", "sessionId": SESSION, "cwd": str(tmp_path / "proj"), "timestamp": "2026-03-10T11:00:00Z", "message": {"role": "user", "content": "hi"}},
             {"type": "attachment", "sessionId": SESSION, "attachment": {"type": "instructions", "files": [{"path": "/p/\x00/CLAUDE.md", "type": "Project", "content": "# P\n"}]}}]
    (sessions / f"{SESSION}.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    code, out = _cli(tmp_path, "claude", "cascade", "--session", "latest")  # was: "memtui: embedded null byte", exit 2
    assert code == 0 and "the file is gone since the session" in out, out


@pytest.mark.parametrize(
    "edit",
    [
        lambda r: r["lock_before"].update(mtime=10**30),  # os.utime overflowed
        lambda r: r.update(lock_acquired_at="soon"),  # float() refused it
        lambda r: r.update(lock_before=["exists"]),  # .get() on a list
    ],
    ids=["huge-mtime", "text-time", "list"],
)
def test_dream_undo_with_a_run_record_edited_by_hand(tmp_path: Path, edit: Callable[[dict[str, Any]], None]) -> None:
    _, mem = _project(tmp_path, "agent")
    (mem / "MEMORY.md").unlink()
    (mem / LOCK_NAME).write_text("")
    os.utime(mem / LOCK_NAME, (1773000000, 1773000000))  # the last dream, before this one
    assert _cli(tmp_path, "agent", "dream", "apply", "--force", "--consolidator", "offline")[0] == 0  # writes MEMORY.md
    after_dream = read_lock(mem).mtime
    (run,) = Path(os.environ["MEMTUI_STATE_DIR"]).glob("memdirs/*/dream/runs/*.json")
    record = json.loads(run.read_text())
    assert record["lock_before"] == {"exists": True, "body": "", "mtime": 1773000000.0}
    edit(record)
    run.write_text(dump(record))
    code, out = _cli(tmp_path, "agent", "dream", "undo")
    assert code == 0, out
    assert not (mem / "MEMORY.md").exists()  # the dream's file is undone all the same
    lock = read_lock(mem)
    assert (lock.body, lock.mtime) == ("", after_dream)  # a record it cannot use leaves the lock as the dream left it


def test_dream_undo_puts_the_lock_back_from_its_run_record(tmp_path: Path) -> None:
    _, mem = _project(tmp_path, "agent")
    (mem / LOCK_NAME).write_text("")
    os.utime(mem / LOCK_NAME, (1773000000, 1773000000))
    (mem / "MEMORY.md").unlink()
    assert _cli(tmp_path, "agent", "dream", "apply", "--force", "--consolidator", "offline")[0] == 0
    assert _cli(tmp_path, "agent", "dream", "undo")[0] == 0
    assert (read_lock(mem).body, read_lock(mem).mtime) == ("", 1773000000.0)


# ----- the JSON reader every other reader uses --------------------------------------------------


def _depth(value: object) -> int:
    """How deep lists and dicts nest in ``value`` (walked without recursion)."""
    deepest, stack = 0, [(value, 0)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, (dict, list)):
            deepest = max(deepest, level + 1)
            stack.extend((child, level + 1) for child in (item.values() if isinstance(item, dict) else item))
    return deepest


plain_json = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False, allow_infinity=False), st.text(alphabet='[]{}"\\ab\n\x00', max_size=6)),
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.text(alphabet='[]{}"\\a', max_size=3), inner, max_size=3)),
    max_leaves=30,
)


@FUZZ
@given(value=plain_json)
def test_nesting_depth_counts_brackets_outside_strings(value: object) -> None:
    assert nesting_depth(json.dumps(value)) == _depth(value)


@FUZZ
@given(data=st.one_of(odd_value.map(dump), odd_value.map(lambda v: _bad_utf8(dump(v))), st.binary(max_size=64), st.text(max_size=64)))
def test_loads_checked_gives_a_bounded_value_or_its_error(data: str | bytes) -> None:
    try:
        value = timed(lambda: loads_checked(data))
    except JSONInputError:
        return
    assert _depth(value) <= MAX_JSON_DEPTH


def test_json_number_takes_only_finite_numbers_in_range() -> None:
    assert [json_number(v) for v in (1, 2.5, True, "1", None, math.nan, math.inf, 10**400, [])] == [1.0, 2.5, None, None, None, None, None, None, None]
    assert (json_number(-1, 0), json_number(5, 0, 10), json_number(11, 0, 10)) == (None, 5.0, None)


# ----- each reader, fuzzed ------------------------------------------------------------------------


@FUZZ
@given(lines=st.lists(st.one_of(hostile_json({"type": "user", "uuid": "u", "timestamp": "2026-03-10T11:00:00Z", "message": {"role": "user", "content": [
    {"type": "tool_use", "id": "t", "name": "Write", "input": {"file_path": "/m/x.md"}},
    {"type": "tool_result", "tool_use_id": "t", "content": [{"type": "text", "text": "ok"}], "is_error": False}]}}),
    hostile_json({"type": "attachment", "attachment": {"type": "relevant_memories", "memories": [{"path": "/m/x.md", "content": "c", "mtimeMs": 1.5e12, "header": "h"}]}})), max_size=4))
def test_transcript_lines_become_entries_or_skipped_lines(lines: list[bytes]) -> None:
    joined = [b.replace(b"\n", b" ") + b"\n" for b in lines]
    transcript = timed(lambda: parse_lines(joined))
    counted = sorted([e.line for e in transcript.entries] + list(transcript.skipped_lines))
    assert counted == [n for n, b in enumerate(joined, start=1) if b.decode("utf-8", "replace").strip()]
    for entry in transcript.entries:
        assert isinstance(entry.type, str) and isinstance(entry.raw, dict) and _depth(entry.raw) <= MAX_JSON_DEPTH
    recently_used_tools(transcript)
    surfaced_memories(transcript)
    for att in attachments(transcript, "relevant_memories"):
        for mem in read_relevant_memories(att):
            assert mem.mtime_ms is None or math.isfinite(mem.mtime_ms)


@FUZZ
@given(lines=st.lists(st.one_of(
    hostile_json({"type": "system", "subtype": "memory_saved", "timestamp": "2026-03-10T11:00:00Z", "entrypoint": "cli", "writtenPaths": ["/m/x.md"], "verb": "Improved", "teamCount": 0}),
    hostile_json({"type": "attachment", "timestamp": "2026-03-10T11:00:00Z", "attachment": {"type": "memory_update", "source": "dream", "summary": "s", "paths": ["/m/x.md"]}, "rendered": [{"content": "<system-reminder>x</system-reminder>"}]}),
    hostile_json({"type": "assistant", "timestamp": "2026-03-10T11:00:00Z", "cwd": "/", "version": "2.1.328", "message": {"role": "assistant", "usage": {"input_tokens": 5}, "content": [{"type": "tool_use", "id": "t", "name": "Read", "input": {"file_path": "/m/x.md"}}]}}),
), max_size=4))
def test_background_uses_and_version_readers_never_fail_on_content(tmp_path: Path, lines: list[bytes]) -> None:
    sessions = tmp_path / "projects" / "p"
    sessions.mkdir(parents=True, exist_ok=True)
    path = sessions / f"{SESSION}.jsonl"
    path.write_bytes(b"".join(b.replace(b"\n", b" ") + b"\n" for b in lines))
    os.utime(path, ns=(time.time_ns(), time.time_ns()))  # a new key: read afresh, not from the cache
    activity = timed(lambda: read_activity(path))
    assert in_epoch(activity.first_time) and in_epoch(activity.last_time)
    assert all(in_epoch(r.time) and all(isinstance(p, str) for p in r.paths) for r in activity.records)
    state = timed(lambda: UsesReader(Path("/m")).read(path))
    assert in_epoch(state.first_time) and in_epoch(state.last_time) and all(in_epoch(u.time) for u in state.uses)
    locations = resolve_locations(AGENT, tmp_path, memory_dir=tmp_path / "memory", environ={"HOME": str(tmp_path)})
    found = timed(lambda: transcript_version(dataclasses.replace(locations, sessions_dir=sessions)))
    assert found is None or isinstance(found[0], str)


@FUZZ
@given(body=st.one_of(
    st.binary(max_size=64),
    st.tuples(st.one_of(odd_text, odd_number.map(str)), st.one_of(odd_text, odd_number.map(str), st.just("1773000000.5"))).map(
        lambda t: _bad_utf8(f"{t[0]}\nprior-mtime: {t[1]}\nrun: x\n")),
), mtime=st.sampled_from([None, 0.0, -1e9, NOW.timestamp() - 60, 2e11]))
def test_the_lock_reader_gives_a_pid_or_none_and_a_time_or_none(tmp_path: Path, body: bytes, mtime: float | None) -> None:
    ctx = DreamContext(tmp_path / "memory", tmp_path / "sessions", tmp_path / "state")
    ctx.memory_dir.mkdir(exist_ok=True)
    lock = ctx.memory_dir / LOCK_NAME
    lock.write_bytes(body)
    if mtime is not None:
        os.utime(lock, (mtime, mtime))
    info = timed(lambda: read_lock(ctx.memory_dir))
    assert info.holder_pid is None or 0 < info.holder_pid <= MAX_PID
    assert info.prior_mtime is None or 0 <= info.prior_mtime <= EPOCH_MAX
    status = timed(lambda: check_gates(ctx, NOW))
    assert isinstance(status_to_json(status)["gates"]["lock"]["ok"], bool)


def _plain_object(data: bytes) -> dict[str, Any] | None:
    """What a settings file holds when it is usable: UTF-8 (a BOM allowed) JSON of an object,
    nested at most ``MAX_JSON_DEPTH`` deep, with no NaN/Infinity; else ``None``."""

    def refuse(name: str) -> Any:
        raise ValueError(name)

    try:
        value = json.loads(data.decode("utf-8-sig"), parse_constant=refuse)
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) and _depth(value) <= MAX_JSON_DEPTH else None


SETTINGS = {"autoDreamEnabled": True, "minHours": 2, "minSessions": 1, "autoMemoryEnabled": True, "model": "m",
            "permissions": {"allow": ["Read"], "deny": ["Edit(/x)"]}, "env": {"A": "b"}}


@FUZZ
@given(data=hostile_json(SETTINGS))
def test_a_settings_file_is_used_or_reported_and_its_dream_values_checked(tmp_path: Path, data: bytes) -> None:
    proj = tmp_path / "proj"
    (proj / ".agent").mkdir(parents=True, exist_ok=True)
    (proj / ".agent" / "settings.json").write_bytes(data)
    layers = timed(lambda: load_settings(AGENT, proj, {"HOME": str(tmp_path)}))
    usable = _plain_object(data)
    assert layers.layers["project"] == (usable if usable is not None else {})
    assert [d.code for d in layers.diagnostics] == ([] if usable is not None else ["settings-invalid-json"])
    ctx = DreamContext(tmp_path / "memory", tmp_path / "sessions", tmp_path / "state", settings=layers)
    dream = timed(lambda: read_dream_settings(ctx))
    assert math.isfinite(dream.min_hours) and dream.min_hours >= 0 and dream.min_sessions >= 0 and isinstance(dream.enabled, bool)


@FUZZ
@given(data=hostile_json({"cachedGrowthBookFeatures": {"tengu_onyx_plover": {"enabled": True, "minHours": 1}}, "projects": {"/p": {"allowedTools": []}}}))
def test_claude_json_is_an_object_or_a_diagnostic(tmp_path: Path, data: bytes) -> None:
    (tmp_path / ".claude.json").write_bytes(data)
    os.utime(tmp_path / ".claude.json", ns=(time.time_ns(), time.time_ns()))
    config = timed(lambda: read_global_config({"HOME": str(tmp_path)}))
    assert isinstance(config.data, dict)
    assert config.diagnostic is None or config.diagnostic.code == "claude-json-unreadable"
    assert config.flag_cache is None or isinstance(config.flag_cache, dict)


def _state(tmp_path: Path) -> tuple[Path, Path, Path]:
    mem = tmp_path / "memory"
    mem.mkdir(exist_ok=True)
    state = tmp_path / "state"
    return mem, state, memdir_state(state, mem)


CURSOR = {"session_id": SESSION, "message_uuid": "u1", "entry_index": 3, "updated": "2026-03-10T11:00:00Z", "transcript_path": "/t.jsonl"}


@FUZZ
@given(data=hostile_json(CURSOR))
def test_an_extraction_cursor_is_a_cursor_or_none(tmp_path: Path, data: bytes) -> None:
    mem, state, base = _state(tmp_path)
    path = base / "extract" / "cursors" / f"{slugify(SESSION)}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    cursor = timed(lambda: CursorStore(state, mem).get(SESSION))
    if cursor is not None:
        assert isinstance(cursor.entry_index, int) and cursor.entry_index >= 0
        cursor.start_in(parse_lines([json.dumps({"type": "user", "uuid": "u1"})]))


PROPOSAL = {"id": "6e9ba130cde4", "kind": "create", "path": "feedback_tabs.md", "type": "feedback", "name": "Tabs", "description": "tabs",
            "body": "Tabs.\n", "source": {"session_id": SESSION, "message_uuid": "u1", "transcript_path": "/t", "quote": "q"},
            "extractor": "offline", "heuristic": True, "status": "pending", "created": "2026-03-10T11:00:00Z", "decided": None,
            "written": None, "edited": False, "text": None, "before_sha256": None, "notes": ["n"], "entry": None, "accepting": 123}


@FUZZ
@given(data=hostile_json(PROPOSAL))
def test_an_inbox_proposal_is_read_or_skipped(tmp_path: Path, data: bytes) -> None:
    mem, state, base = _state(tmp_path)
    (base / "inbox").mkdir(parents=True, exist_ok=True)
    (base / "inbox" / "6e9ba130cde4.json").write_bytes(data)
    for proposal in timed(lambda: Inbox(state, mem).all()):
        assert proposal.status in ("pending", "accepted", "rejected") and all(isinstance(n, str) for n in proposal.notes)
        assert proposal.accepting is None or 0 < proposal.accepting <= MAX_PID


ENTRY = {"id": "0000001-20260310T120000", "title": "Create x.md", "time": "2026-03-10T12:00:00+00:00", "status": "applied",
         "changes": [{"relpath": "x.md", "kind": "create", "before_sha": None, "after_sha": "ab", "before_mtime": 1773140000.5, "before_mtime_ns": 1773140000500000000}],
         "action": "dream", "undoes": None, "restores": None, "format": 2, "meta": {"inbox": "abc"}, "dirs": [], "note": None}


@FUZZ
@given(data=hostile_json(ENTRY))
def test_a_journal_entry_is_loaded_or_listed_as_damaged(tmp_path: Path, data: bytes) -> None:
    mem, state, base = _state(tmp_path)
    path = base / "journal" / ENTRY["id"] / "entry.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    journal = Journal(state, mem)
    entries = timed(journal.entries)
    assert [e.id for e in entries] + journal.damaged() == [ENTRY["id"]]
    for e in entries:
        datetime.fromisoformat(e.time).timestamp()
        assert {type(e.undoes), type(e.restores)} <= {str, type(None)}
        assert all(c.before_mtime is None or EPOCH_MIN <= c.before_mtime <= EPOCH_MAX for c in e.changes)
    ctx = DreamContext(mem, tmp_path / "sessions", state)
    assert timed(lambda: before_image(ctx, "x.md", NOW.timestamp())) is None  # no before-image was kept


@FUZZ
@given(scan=hostile_json({"at": 1773140000.0, "iso": "2026-03-10T11:00:00.000Z"}),
       seen=hostile_json({"x.md": [{"sha": "a" * 64, "mtime": 1773140000.0, "size": 5, "seen_at": 1773140000.0}]}))
def test_the_dream_state_files_give_a_time_or_none(tmp_path: Path, scan: bytes, seen: bytes) -> None:
    mem, state, base = _state(tmp_path)
    (mem / "x.md").write_text("now\n")
    (base / "dream" / "seen" / "objects").mkdir(parents=True, exist_ok=True)
    (base / "dream" / "last-scan.json").write_bytes(scan)
    (base / "dream" / "seen" / "index.json").write_bytes(seen)
    (base / "dream" / "seen" / "objects" / ("a" * 64)).write_text("before\n")
    ctx = DreamContext(mem, tmp_path / "sessions", state)
    assert in_epoch(timed(lambda: last_scan_at(ctx)))
    timed(lambda: status_to_json(check_gates(ctx, NOW)))
    found = timed(lambda: before_image(ctx, "x.md", NOW.timestamp()))
    assert found is None or found[0] == b"before\n"
    assert timed(lambda: remember_files(ctx, NOW)) in (0, 1)


frontmatter_yaml = st.one_of(
    st.text(max_size=80),
    st.sampled_from(["name: " + "[" * 3000 + "]" * 3000, "name: " + "{a: " * 500 + "1" + "}" * 500, "n: " + "9" * 5000, "type: .nan",
                     "modified: 1e400", "a: &a [*a]", "name: !!binary AAAA", "name: !!int abc", "- a\n- b", "description: \x00",
                     "type: [user]", "name: x\nname: y"]),
    st.dictionaries(st.sampled_from(["name", "description", "type", "modified"]), odd_value, max_size=3).map(lambda d: "\n".join(f"{k}: {dump(v)}" for k, v in d.items())),
)


@FUZZ
@given(yaml_text=frontmatter_yaml)
def test_frontmatter_is_a_mapping_or_an_error(yaml_text: str) -> None:
    fm = timed(lambda: parse_frontmatter(f"---\n{yaml_text}\n---\nbody\n"))
    assert isinstance(fm.data, dict) and all(isinstance(k, str) for k in fm.data)
    assert fm.error is None or isinstance(fm.error, str)
    try:
        timed(lambda: yaml12.load(yaml_text))
    except (yaml.YAMLError, ValueError, RecursionError):  # yaml12.load's documented errors
        pass


@FUZZ
@given(data=hostile_json({"session_id": SESSION, "transcript_path": "/s/t.jsonl", "cwd": "/p", "hook_event_name": "Stop"}))
def test_a_stop_hook_payload_is_read_or_refused(data: bytes) -> None:
    try:
        parsed = timed(lambda: parse_hook_input(data))
    except HookInputError:  # parse_hook_input's documented error
        return
    assert parsed.transcript_path.is_absolute() and parsed.cwd.is_absolute() and isinstance(parsed.session_id, str)
