"""docs/behaviour.md §4.3: each doctor check fires on a hand-made file and stays silent on a
clean one. Expected values are written by hand from the spec."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from support.doctor import (
    CLEAN_FEEDBACK,
    CLEAN_INDEX,
    clean_dir,
    codes_of,
    doctor,
    only,
    write,
)

from memtui.core.doctor import DOCTOR_CODES, FIX_OF_CODE, FIXES


def test_clean_dir_has_no_findings(tmp_path: Path) -> None:
    report = doctor(clean_dir(tmp_path))
    assert report.findings == ()
    assert report.memories == 1
    assert not report.has_errors


def test_code_table_is_kebab_case_with_severity_and_meaning() -> None:
    for code, (severity, meaning) in DOCTOR_CODES.items():
        assert re.fullmatch(r"[a-z0-9]+(?:-[a-z0-9]+)*", code), code
        assert severity in ("error", "warning", "info")
        assert meaning and "\n" not in meaning
    assert set(FIX_OF_CODE) <= set(DOCTOR_CODES)
    assert set(FIX_OF_CODE.values()) == set(FIXES)


# ----- per-file diagnostics from the parser, mapped with their fixes ---------------------------


@pytest.mark.parametrize(
    ("content", "code", "severity", "line", "fix"),
    [
        ("---\nname: A\ndescription: d\ntype: Feedback\n---\n\nx\n\n**Why:** y\n\n**How to apply:** z\n", "type-case", "warning", 4, "lower-case-type"),
        ("---\nname: A\ndescription: d\nmetadata:\n  type: feedback\n---\n\nx\n\n**Why:** y\n\n**How to apply:** z\n", "type-nested", "warning", 4, "lift-type"),
        ("---\nname: A\ndescription: d\ntype: note\n---\n\nx\n", "type-unknown", "warning", 4, None),
        ("---\nname: A\ndescription: d\n---\n\nx\n", "type-missing", "warning", None, None),
        ("\ufeff---\nname: A\ndescription: d\ntype: user\n---\n\nx\n", "frontmatter-after-bom", "error", 1, "remove-bom"),
        ("\n\n---\nname: A\ndescription: d\ntype: user\n---\n\nx\n", "frontmatter-after-blank", "error", 1, "remove-leading-blank"),
        ("---\nname: A\ndescription: d\ntype: user\n\nx\n", "frontmatter-unclosed", "error", 1, None),
        ("---\nname: A\n" + "".join(f"k{i}: v\n" for i in range(30)) + "type: user\n---\n\nx\n", "frontmatter-beyond-header", "error", 34, None),
        ("---\nname: A\ndescription: |\n  one\n  two\ntype: user\n---\n\nx\n", "description-multiline", "warning", 3, None),
        ("---\nname: A\ntype: user\n---\n\nx\n", "description-missing", "warning", None, None),
        ("# Notes\n\nplain text\n", "no-frontmatter", "warning", None, None),
    ],
)
def test_parser_diagnostics_become_findings(tmp_path: Path, content: str, code: str, severity: str, line: int | None, fix: str | None) -> None:
    memory_dir = tmp_path / "memory"
    write(memory_dir, "m.md", content)
    write(memory_dir, "MEMORY.md", "- [A](m.md) — d\n")
    [f] = only(doctor(memory_dir), code, "m.md")
    assert (f.severity, f.line, f.fix) == (severity, line, fix)


def test_feedback_without_why_and_how(tmp_path: Path) -> None:
    memory_dir = clean_dir(tmp_path)
    write(memory_dir, "feedback_squash.md", "---\nname: S\ndescription: squash PRs\ntype: feedback\n---\n\nSquash every PR.\n")
    assert codes_of(doctor(memory_dir), "feedback_squash.md") == ["missing-how-to-apply", "missing-why"]


def test_file_over_4096_bytes(tmp_path: Path) -> None:
    memory_dir = clean_dir(tmp_path)
    big = CLEAN_FEEDBACK + "More detail here.\n" * 240  # 4,320 bytes of padding alone
    write(memory_dir, "feedback_squash.md", big)
    [f] = only(doctor(memory_dir), "over-recall-limit")
    assert f.path == "feedback_squash.md" and f.severity == "info"
    assert f"{len(big.encode()):,} bytes" in f.message


def test_stray_files_reported_with_relpaths(tmp_path: Path) -> None:
    memory_dir = clean_dir(tmp_path)
    write(memory_dir, "notes.txt", "x")
    write(memory_dir, "sub/Upper.MD", "x")
    report = doctor(memory_dir)
    assert [(f.code, f.path) for f in only(report, "not-a-memory")] == [("not-a-memory", "notes.txt")]
    assert [(f.code, f.path) for f in only(report, "md-extension-case")] == [("md-extension-case", "sub/Upper.MD")]


# ----- relative dates ----------------------------------------------------------------------------


def project(body: str, description: str = "Deploy window") -> str:
    return f"---\nname: P\ndescription: {description}\ntype: project\n---\n\n{body}\n\n**Why:** w\n\n**How to apply:** h\n"


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        # mtime Monday 2026-03-02: phrase -> (resolved, fixable)
        ("The migration runs on Thursday.", []),  # "on Thursday": this one, or every one? not a date to report
        ("The backup finishes tomorrow.", [("tomorrow", "2026-03-03", "on 2026-03-03")]),
        ("We agreed yesterday.", [("yesterday", "2026-03-01", "on 2026-03-01")]),
        ("Ship it by tomorrow.", [("tomorrow", "2026-03-03", "2026-03-03")]),
        ("Decided last Friday.", [("last Friday", "2026-02-27", "on 2026-02-27")]),
        ("It broke 2 days ago.", [("2 days ago", "2026-02-28", "on 2026-02-28")]),
        ("Review next Thursday.", [("next Thursday", "2026-03-05", None)]),  # this week's or next week's?
        ("Ship next week.", [("next week", "2026-03-09", None)]),  # a week, not a day
        ("上周四决定了，明天发布。", [("上周四", "2026-02-26", "2026-02-26"), ("明天", "2026-03-03", "2026-03-03")]),
        ("明日リリース。先週の金曜日に決めた。", [("明日", "2026-03-03", "2026-03-03"), ("先週の金曜日", "2026-02-27", "2026-02-27")]),
        ("내일 배포. 모레 확인. 지난주 금요일 결정.", [("내일", "2026-03-03", "2026-03-03"), ("모레", "2026-03-04", "2026-03-04"), ("지난주 금요일", "2026-02-27", "2026-02-27")]),
        ("Standup every Friday.", []),  # a recurring rule, not a date
        ("Deploys run Monday to Friday.", []),  # a schedule
        ("Today the renderer batches draws.", []),  # "today" as "currently"
        ('The user wrote "ship it tomorrow" in chat.', []),  # quoted: someone else's words
        ("Frozen since 2026-03-05.", []),
    ],
)
def test_relative_dates_resolved_from_mtime(tmp_path: Path, body: str, expected: list[tuple[str, str, str | None]]) -> None:
    memory_dir = tmp_path / "memory"
    write(memory_dir, "project_p.md", project(body))
    write(memory_dir, "MEMORY.md", "- [P](project_p.md) — deploy window\n")
    found = only(doctor(memory_dir), "relative-date")
    assert [(f.data["phrase"], f.data["resolved"], f.data["replacement"]) for f in found] == expected
    for f, (_, _, replacement) in zip(found, expected, strict=True):
        assert f.line == 7 and f.severity == "warning"
        assert f.fix is None  # a prose date is never rewritten: the user writes the date they meant


def test_relative_date_in_description_and_in_every_type_of_memory(tmp_path: Path) -> None:
    memory_dir = tmp_path / "memory"
    write(memory_dir, "project_p.md", project("Fixed facts only.", description="Deploy runs tomorrow"))
    write(memory_dir, "user_u.md", "---\nname: U\ndescription: starts tomorrow\ntype: user\n---\n\nJoins tomorrow.\n")
    write(memory_dir, "MEMORY.md", "- [P](project_p.md) — p\n- [U](user_u.md) — u\n")
    found = only(doctor(memory_dir), "relative-date")
    assert [(f.path, f.line, f.data["where"]) for f in found] == [("project_p.md", 3, "description"), ("user_u.md", 3, "description"), ("user_u.md", 7, "body")]
    assert "in the description" in found[0].message and "2026-03-02" in found[0].message
    # a screenplay or log in a fenced block is quoted text, not the memory's own date
    write(memory_dir, "feedback_f.md", "---\nname: F\ndescription: d\ntype: feedback\n---\n\n```\nA: see you tomorrow\n```\n")
    assert [f.path for f in only(doctor(memory_dir), "relative-date") if f.path == "feedback_f.md"] == []


# ----- content that must not be saved --------------------------------------------------------------


def user(body: str) -> str:
    return f"---\nname: U\ndescription: d\ntype: reference\n---\n\n{body}\n"


CODE_12 = "Use this helper:\n\n```python\n" + "".join(f"x{i} = {i}\n" for i in range(12)) + "```\n"
TRACEBACK = 'It failed with:\n\nTraceback (most recent call last):\n  File "app.py", line 3, in <module>\n    main()\nValueError: bad\n'
JS_FRAMES = "Error: boom\n    at run (src/app.js:10:5)\n    at main (src/main.js:3:1)\n    at Object.<anonymous> (index.js:1:1)\n"
GIT_LOG = "Recent work:\n\ncommit 0123456789abcdef0123456789abcdef01234567\nAuthor: A <a@b.c>\n\n    fix it\n"
HASH_LINES = "Relevant commits:\n- a1b2c3d fix the parser\n- 9f8e7d6 add the cache\n- 0c0ffee5 bump deps\n"
RECIPE = (
    "How to debug the sync stall:\n\n1. Reproduce with `make sync`.\n2. Attach pdb at the retry loop.\n"
    "3. Set a breakpoint in flush().\n4. Read the stack trace.\n"
)
TREE = "Layout:\n\nsrc/\n├── api/\n├── core/\n└── cli.py\n"


@pytest.mark.parametrize(
    ("body", "code", "line"),
    [
        (CODE_12, "content-code", 9),  # the fence opens on body line 3 = file line 9
        (TRACEBACK, "content-stack-trace", 9),
        (JS_FRAMES, "content-stack-trace", 8),
        (GIT_LOG, "content-git-history", 9),
        (HASH_LINES, "content-git-history", 8),
        (RECIPE, "content-debug-recipe", 9),
        (TREE, "content-architecture", 10),
    ],
)
def test_content_heuristics_fire(tmp_path: Path, body: str, code: str, line: int) -> None:
    memory_dir = tmp_path / "memory"
    write(memory_dir, "reference_r.md", user(body))
    write(memory_dir, "MEMORY.md", "- [U](reference_r.md) — d\n")
    found = [f for f in doctor(memory_dir).findings if f.code.startswith("content-")]
    assert [(f.code, f.line) for f in found] == [(code, line)]
    assert found[0].fix is None and found[0].severity in ("info", "warning")


def test_content_heuristics_stay_quiet_on_prose(tmp_path: Path) -> None:
    prose = (
        "Short snippet:\n\n```sh\nmake test\n```\n\nSee commit a1b2c3d for the reason.\n\n"
        "1. Open the board.\n2. Pick a ticket.\n3. Move it to doing.\n4. Ping the reviewer.\n\n"
        "The api/ folder holds the handlers."
    )
    memory_dir = tmp_path / "memory"
    write(memory_dir, "reference_r.md", user(prose))
    write(memory_dir, "MEMORY.md", "- [U](reference_r.md) — d\n")
    assert [f for f in doctor(memory_dir).findings if f.code.startswith("content-")] == []


def test_likely_secret_is_an_error_without_the_secret(tmp_path: Path) -> None:
    token = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    memory_dir = clean_dir(tmp_path)
    write(memory_dir, "reference_ci.md", user(f"CI uses the token {token} for pushes."))
    write(memory_dir, "MEMORY.md", CLEAN_INDEX + "- [CI](reference_ci.md) — ci\n")
    report = doctor(memory_dir)
    [f] = only(report, "likely-secret")
    assert (f.path, f.line, f.severity) == ("reference_ci.md", 7, "error")
    assert token not in f.message and token not in str(f.data)
    assert report.has_errors


def test_in_instructions(tmp_path: Path) -> None:
    memory_dir = clean_dir(tmp_path)
    agent_md = "# Project\n\n- Squash every PR into a **single** commit.\n- Run the linter.\n"
    [f] = only(doctor(memory_dir, instruction_texts=[agent_md]), "in-instructions")
    assert f.path == "feedback_squash.md" and "first paragraph" in f.message
    assert only(doctor(memory_dir, instruction_texts=["# Project\n\nRun the linter.\n"]), "in-instructions") == []
    assert only(doctor(memory_dir), "in-instructions") == []


# ----- the index ----------------------------------------------------------------------------------


def test_index_problems(tmp_path: Path) -> None:
    memory_dir = clean_dir(tmp_path)
    write(memory_dir, "user_role.md", "---\nname: Role\ndescription: Backend engineer\ntype: user\n---\n\nGo.\n")
    long_line = "- [Squash merges](feedback_squash.md) — " + "why and how " * 12
    index = (
        "---\ntitle: index\n---\n"  # 1-3: frontmatter
        "## Feedback\n"  # 4
        f"{long_line}\n"  # 5
        "### [Squash again](feedback_squash.md)\n"  # 6
        "- [Gone](project_gone.md) — deleted\n"  # 7
        "- [Prose](https://example.com) and " + "more words " * 12 + "\n"  # 8: long, not an entry
    )
    write(memory_dir, "MEMORY.md", index)
    report = doctor(memory_dir)
    got = [(f.code, f.line, f.fix) for f in report.findings if f.path == "MEMORY.md"]
    assert got == [
        ("index-frontmatter", 1, None),
        ("index-line-too-long", 5, None),
        ("index-heading-entry", 6, "entry-from-heading"),
        ("index-dangling", 7, "drop-index-line"),
        ("index-line-too-long", 8, None),
    ]
    [f] = only(report, "not-indexed")
    assert (f.path, f.fix) == ("user_role.md", "add-index-entry")
    [too_long] = [f for f in report.findings if f.code == "index-line-too-long" and f.line == 5]
    assert too_long.data["chars"] == len(long_line)


def test_index_past_cap_and_truncated(tmp_path: Path) -> None:
    memory_dir = clean_dir(tmp_path)
    lines = [f"- [Entry {i}](feedback_squash.md) — entry {i}" for i in range(1, 222)]
    write(memory_dir, "MEMORY.md", "\n".join(lines) + "\n")
    report = doctor(memory_dir)
    [trunc] = only(report, "index-truncated")
    assert trunc.message.startswith("MEMORY.md is 221 lines (limit: 200). Only part of it was loaded.")
    assert [f.line for f in only(report, "index-past-cap")] == list(range(201, 222))


def test_missing_index(tmp_path: Path) -> None:
    memory_dir = clean_dir(tmp_path)
    (memory_dir / "MEMORY.md").unlink()
    report = doctor(memory_dir)
    assert [(f.code, f.path) for f in report.findings] == [("index-missing", "MEMORY.md"), ("not-indexed", "feedback_squash.md")]
