"""The conflict rule on a memory of thousands of values: each value's line counted forward
once, at most ``MAX_VALUES`` values read per memory, at most ``MAX_DIFFERING`` reported per
pair, and a sentence's terms narrowed to the memory's subject. The prose paths of the claims
check keep their lines on a long text. Expected values by hand from the texts' shapes."""

from __future__ import annotations

import os
from pathlib import Path

from memtui.core.memory.memories import read_memory
from memtui.core.verify.claims import claims_in_text
from memtui.core.verify.conflicts import (
    MAX_DIFFERING,
    MAX_VALUES,
    find_conflicts,
    memory_subject,
    memory_values,
    values_capped,
    values_of,
)


def test_a_paragraph_of_5000_lines_with_no_sentence_break_yields_the_first_values_on_their_lines() -> None:
    # one "sentence" of 5,000 lines (no . ; ! ? and no blank line): line j states "j ms"
    text = "".join(f"wait {j} ms then retry\n" for j in range(5_000))
    values = values_of(text, 10)
    assert len(values) == MAX_VALUES == 500
    assert [(v.kind, v.value, v.line) for v in values[:3]] == [("number:ms", "0", 10), ("number:ms", "1", 11), ("number:ms", "2", 12)]
    assert [(v.value, v.line) for v in values[-1:]] == [("499", 509)]
    assert values_of(text, 10, limit=5_000)[-1].line == 10 + 4_999


def test_the_limit_keeps_the_order_of_kinds_within_a_sentence() -> None:
    sentence = "Set 30 days and v2 and 2026-03-05 on the owner: Tomasz\n"
    every = values_of(sentence, 1, limit=100)
    assert [v.kind for v in every] == ["date", "version", "number:day", "name:owner"]
    assert [v.kind for v in values_of(sentence, 1, limit=2)] == ["date", "version"]
    assert values_of(sentence, 1, limit=0) == []


def _write(memory_dir: Path, name: str, text: str, mtime: float) -> Path:
    memory_dir.mkdir(parents=True, exist_ok=True)
    path = memory_dir / name
    path.write_text(text)
    os.utime(path, (mtime, mtime))
    return path


def _deploy_memory(title: str, numbers: range) -> str:
    body = "".join(f"The deploy window of step {n} is {n} minutes.\n" for n in numbers)
    return f"---\nname: {title}\ndescription: the deploy window of the release train\ntype: project\n---\n\n{body}"


def test_a_memory_of_5000_values_is_read_to_the_cap_and_a_pair_reports_at_most_the_cap(tmp_path: Path) -> None:
    _write(tmp_path, "project_deploy_window_old.md", _deploy_memory("Deploy window (old)", range(0, 5_000)), 1_000.0)
    _write(tmp_path, "project_deploy_window_new.md", _deploy_memory("Deploy window (new)", range(10_000, 10_600)), 2_000.0)
    old, new = (read_memory(tmp_path / n, tmp_path) for n in ("project_deploy_window_old.md", "project_deploy_window_new.md"))
    values = memory_values(old)
    assert len(values) == MAX_VALUES and values_capped(values)
    assert [(v.value, v.line) for v in (values[0], values[-1])] == [("0", 7), ("499", 506)]  # body from line 7
    # a value keeps the terms of its sentence that are subject terms of its memory
    assert all(v.terms <= memory_subject(old) for v in values) and "deploy" in values[0].terms and "step" not in values[0].terms
    assert len(memory_values(new)) == MAX_VALUES
    [c] = find_conflicts([old, new])
    assert (c.older, c.newer) == ("project_deploy_window_old.md", "project_deploy_window_new.md")
    assert len(c.values) == MAX_DIFFERING == 50
    assert [(v.older, v.newer) for v in c.values[:2]] == [("0 minutes", "10000 minutes"), ("0 minutes", "10001 minutes")]


def test_the_doctor_says_when_a_pair_was_compared_on_the_first_values_only(tmp_path: Path) -> None:
    from datetime import UTC, datetime

    from memtui.core.doctor import run_doctor

    _write(tmp_path, "project_deploy_window_old.md", _deploy_memory("Deploy window (old)", range(0, 600)), 1_000.0)
    _write(tmp_path, "project_deploy_window_new.md", _deploy_memory("Deploy window (new)", range(10_000, 10_003)), 2_000.0)
    report = run_doctor(tmp_path, datetime(2026, 3, 10, tzinfo=UTC))
    [f] = [f for f in report.findings if f.code == "possible-conflict"]
    assert f.message.endswith(f"(only the first {MAX_VALUES} values of project_deploy_window_old.md were compared: it states more)")
    # each of the older's first 500 values differs from each of the newer's 3: the first 50 pairs
    assert len(f.data["conflict"]["values"]) == MAX_DIFFERING


def test_prose_paths_keep_their_lines_on_a_long_text() -> None:
    text = "".join(f"see src/mod_{i}/file_{i}.py for step {i}\n" for i in range(3_000))
    claims = list(claims_in_text(text, 5))
    assert len(claims) == 3_000
    assert [(c.path, c.line) for c in (claims[0], claims[2_999])] == [("src/mod_0/file_0.py", 5), ("src/mod_2999/file_2999.py", 3_004)]
