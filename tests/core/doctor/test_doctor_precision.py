"""The doctor's judgements on the patterns real users' memory files hold, in our own words:
each trap that drew a false alarm is no finding, each real defect of the same kind still is
(issue 28: a warning means something is wrong)."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.doctor import clean_dir, doctor, only, write

from memtui.core.doctor.index_checks import superseded_marker
from memtui.core.memory.lint import missing_sections


def _memory(kind: str, body: str, description: str = "d") -> str:
    return f"---\nname: M\ndescription: {description}\ntype: {kind}\n---\n\n{body}\n"


# ----- index lines that retire their memory -------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "marker"),
    [
        ("- [Driving plan](plan.md) — plan 17; arcade steering — SUPERSEDED by plan 18 (real physics)", "SUPERSEDED"),
        ("- [Letters](letters.md) — superseded by the unified rules below", "superseded"),
        ("- [Pins](pins.md) — obsolete since 2024-05; kept for audit", "obsolete"),
        ("- [Vault](vault.md) — no longer valid; see vault-v2.md", "no longer valid"),
        ("- [Notes](notes.md) — the Heroku notes (obsolete)", "(obsolete)"),
        ("- [Old deploy](deploy.md) — (obsolete) the Heroku steps", "(obsolete)"),
        ("- [Auth v1](auth.md) — DEPRECATED: see auth-v2", "DEPRECATED"),
        ("- [旧方案](old.md) — 旧的同步方案，已废弃", "已废弃"),
        ("- [APIs](apis.md) — deprecated APIs we must not call", None),  # about deprecated things
        ("- [Pipeline](pipeline.md) — the new pipeline, which superseded the cron jobs", None),
        ("- [Caches](caches.md) — Outdated caches cause the flaky test", None),
        ("- [Glass](glass.md) — windows no longer vanish at angles", None),
        ("- [Old](old-build.md) — how the build is wired", None),  # a title, not a mark
        ("- [Stale](stale-cache.md) — when the cache goes stale", None),
        ("- [API](api.md) — v1 endpoints superseded by v2 in March", None),  # about the code
        ("- [DB](db.md) — retired: db1, db2; live: db3", None),
        ("- [ADR](adr.md) — ADR-7 (superseded by ADR-12) still matters for the migration", None),
        ("- [Flags](flags.md) — flags marked SUPERSEDED in flags.yaml are safe to remove", None),
        ("- [接口](api.md) — 已废弃的接口列表及下线时间", None),  # a list of deprecated interfaces
    ],
)
def test_an_index_line_retires_its_memory_only_with_an_explicit_mark(line: str, marker: str | None) -> None:
    assert superseded_marker(line) == marker


def test_a_retired_memory_still_in_the_index_is_a_warning(tmp_path: Path) -> None:
    memory_dir = clean_dir(tmp_path)
    write(memory_dir, "project_plan.md", _memory("project", "Arcade steering.\n\n**Why:** w\n\n**How to apply:** h"))
    write(memory_dir, "MEMORY.md", "- [Squash merges](feedback_squash.md) — one commit per PR\n- [Plan](project_plan.md) — arcade steering — SUPERSEDED by plan 18\n")
    [f] = only(doctor(memory_dir), "index-superseded")
    assert (f.path, f.line, f.severity, f.fix) == ("MEMORY.md", 2, "warning", None)
    assert "recall still reads project_plan.md" in f.message


# ----- relative dates ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "body",
    [
        "None of them pay tomorrow, but all have a path to revenue.",  # an idiom: not at once
        "We build the tools of tomorrow.",
        "Standup is every Monday; deploys run Monday to Friday.",
        "Today the renderer batches its draw calls.",  # "today" as "currently"
        'The partner wrote "we go live tomorrow" in the thread.',
        "> Reminder: the review is tomorrow.",
        "```\nHOST: See you tomorrow!\n```",
        "The job takes a week; it sped up over the past week.",
        "We deploy on Friday.",  # this Friday, or every one?
        "Analytics is handled by Tomorrow Labs; charts use Yesterday.js.",  # names
        "# Today vs Tomorrow",  # a title
        "| Yesterday | errors for the previous UTC day |",  # a table's label
        "Cutover scheduled for next Tuesday (2024-03-12).",  # the day is written
        "## 2024-03-04\nWill finish the index rebuild tomorrow.",  # a dated entry
        "Test case: parse 'the day after tomorrow' as +2 days.",  # single-quoted
        "担当は明日香さん。",  # a given name
        "Wir treffen uns jeden Montag; por la mañana hay standup.",  # a rule, "in the morning"
    ],
)
def test_phrases_that_are_no_relative_date(tmp_path: Path, body: str) -> None:
    memory_dir = clean_dir(tmp_path)
    write(memory_dir, "feedback_f.md", _memory("feedback", body))
    assert only(doctor(memory_dir), "relative-date") == []


@pytest.mark.parametrize(
    ("body", "phrase"),
    [
        ("Die Abgabe ist nächsten Freitag.", "nächsten Freitag"),
        ("Das Deployment lief gestern schief.", "gestern"),
        ("Ayer se cayó el servidor de pagos.", "Ayer"),
        ("Hace tres semanas cambiamos el proveedor.", "Hace tres semanas"),
    ],
)
def test_relative_dates_in_german_and_spanish(tmp_path: Path, body: str, phrase: str) -> None:
    memory_dir = clean_dir(tmp_path)
    write(memory_dir, "project_p.md", _memory("project", body))
    assert [f.data["phrase"] for f in only(doctor(memory_dir), "relative-date")] == [phrase]


def test_a_relative_date_is_reported_in_every_type_with_the_precision_it_has(tmp_path: Path) -> None:
    memory_dir = clean_dir(tmp_path)  # files dated Monday 2026-03-02
    write(memory_dir, "user_u.md", _memory("user", "Starts the new job next week."))
    write(memory_dir, "feedback_f.md", _memory("feedback", "明天哥哥自己写一版。"))
    write(memory_dir, "reference_r.md", _memory("reference", "The dashboard moved last month."))
    found = {f.path: f for f in only(doctor(memory_dir), "relative-date")}
    assert set(found) == {"user_u.md", "feedback_f.md", "reference_r.md"}
    assert "meant the week of 2026-03-09" in found["user_u.md"].message  # a week names no day
    assert "meant 2026-03-03" in found["feedback_f.md"].message
    assert "meant 2026-02" in found["reference_r.md"].message and "2026-02-" not in found["reference_r.md"].message
    assert all(f.fix is None for f in found.values())  # never rewritten for the user


# ----- the body shape: labels in any form count ------------------------------------------------------


@pytest.mark.parametrize(
    "body",
    [
        "Rule.\n\n**Why：** 全角冒号。\n\n**How to apply：** 照做。",
        "Rule.\n\n## Why\n\nBecause.\n\n## How to apply\n\nDo it.",
        "Rule.\n\nReason: the tests are slow.\nUsage: run it first.",
        "规则。\n\n## 背景\n\n原因。\n\n## 做法\n\n照做。",
        "Regel.\n\n**Warum:** weil.\n\n**Wie anwenden:** so.",
    ],
)
def test_a_reason_and_an_instruction_in_any_labelled_form_count(body: str) -> None:
    assert missing_sections(body) == []


def test_the_body_shape_is_advice(tmp_path: Path) -> None:
    memory_dir = clean_dir(tmp_path)
    write(memory_dir, "feedback_bare.md", _memory("feedback", "Always run the linter first."))
    found = [f for f in doctor(memory_dir).findings if f.path == "feedback_bare.md" and f.code.startswith("missing-")]
    assert sorted((f.code, f.severity) for f in found) == [("missing-how-to-apply", "info"), ("missing-why", "info")]


def test_no_second_block_without_a_first(tmp_path: Path) -> None:
    memory_dir = clean_dir(tmp_path)
    write(memory_dir, "user_blank.md", "\n---\nname: U\ndescription: d\ntype: user\n---\n\nbody\n")
    codes = {f.code for f in doctor(memory_dir).findings if f.path == "user_blank.md"}
    assert "frontmatter-after-blank" in codes and "frontmatter-second-block" not in codes


def test_stale_paths_that_agree_name_the_folder_the_code_moved_out_of() -> None:
    from memtui.core.doctor.model import Finding, folder_moves, move_of

    def stale(path: str, claim: str, instead: str | None) -> Finding:
        return Finding("stale-path", "warning", path, 1, "m", None, {"claim": claim, "instead": instead})

    findings = [
        stale("a.md", "game/physics/rapier.ts", "packages/game/src/physics/rapier.ts"),
        stale("a.md", "game/ecs/", "packages/game/src/ecs"),
        stale("b.md", "game/core/camera.ts", "packages/game/src/core/camera.ts"),
        stale("b.md", "src/x/one.ts", "lib/x/one.ts"),  # one move of its own: not named
        stale("c.md", "load-player.ts", None),  # deleted: no move
        stale("c.md", "engine.ts", "packages/engine.ts"),  # a bare name: no folder moved
    ]
    [move] = folder_moves(findings)
    assert (move.old, move.new, move.count, move.files) == ("game", "packages/game/src", 3, 2)
    assert [move_of(f, [move]) is move for f in findings] == [True, True, True, False, False, False]
