"""The rendered context (docs/behaviour.md §3.6), byte for byte, against hand-written expected strings."""

from __future__ import annotations

import os
from datetime import datetime, timezone
from pathlib import Path

import pytest
from support.cascade import cascade, write

from memtui.core.places.flavor import AGENT
from memtui.core.places.locations import resolve_locations

PREAMBLE = (
    "Codebase and user instructions are shown below. Be sure to adhere to these instructions. "
    "IMPORTANT: These instructions OVERRIDE any default behavior and you MUST follow them exactly as written."
)


def test_rendered_context_every_layer(tmp_path: Path, isolated_env: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    managed = Path(os.environ["MEMTUI_MANAGED_DIR"])
    mem = tmp_path / "mem"
    monkeypatch.setenv("AGENT_MEMORY_DIR", str(mem))
    write(managed, "AGENT.md", "Managed policy.\n")
    write(isolated_env, ".agent/AGENT.md", "\n\nUser prefs.\n\n")
    p = tmp_path / "p"
    write(p, "AGENT.md", "---\ntitle: x\n---\n\nProject body.\n\n<!-- hidden note -->\n\nKeep this.\n")
    write(p, ".agent/rules/style.md", "Rule body.")
    write(p, "AGENT.local.md", "Local.\r\n")
    write(mem, "MEMORY.md", "- [A](a.md) — hook\n")
    write(mem, "team/MEMORY.md", "- [T](t.md) — team hook\n")
    c = cascade(p)
    expected = (
        PREAMBLE
        + "\n\n"
        + f"Contents of {managed}/AGENT.md (user's private global instructions for all projects):\n\nManaged policy.\n\n"
        + f"Contents of {isolated_env}/.agent/AGENT.md (user's private global instructions for all projects):\n\nUser prefs.\n\n"
        + f"Contents of {p}/AGENT.md (project instructions, checked into the codebase):\n\nProject body.\n\nKeep this.\n\n"
        + f"Contents of {p}/.agent/rules/style.md (project instructions, checked into the codebase):\n\nRule body.\n\n"
        + f"Contents of {p}/AGENT.local.md (user's private project instructions, not checked in):\n\nLocal.\n\n"
        + f"Contents of {mem}/MEMORY.md (user's auto-memory, persists across conversations):\n\n- [A](a.md) — hook\n\n"
        + f"Contents of {mem}/team/MEMORY.md (shared team memory, synced across the organization):\n\n"
        + '<team-memory-content source="shared">\n- [T](t.md) — team hook\n</team-memory-content>'
    )
    assert c.rendered == expected
    assert c.total_chars == len(expected)
    assert c.total_tokens_est == (len(expected) + 3) // 4


def test_nothing_loaded_renders_empty(tmp_path: Path) -> None:
    assert cascade(tmp_path).rendered == ""


demo = pytest.importorskip("memtui.demo")


def test_rendered_context_of_the_demo_workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    if not hasattr(demo, "materialize"):
        pytest.skip("memtui.demo.materialize is not available")
    ws = demo.materialize(tmp_path / "demo", datetime(2026, 3, 2, 12, 0, tzinfo=timezone.utc))
    monkeypatch.setenv("HOME", str(ws.home))
    home, proj = ws.home, ws.project
    locations = resolve_locations(AGENT, proj)
    assert locations.memory_dir == ws.memory_dir
    from memtui.core.cascade import compute_cascade

    c = compute_cascade(locations, proj)
    # The personal notes are imported by AGENT.local.md from outside the cwd: pending.
    assert [p.path for p in c.pending_external_imports] == [f"{home}/.agent/acme-ingest-personal.md"]
    expected = f"""{PREAMBLE}

Contents of {home}/.agent/AGENT.md (user's private global instructions for all projects):

# Personal instructions (all projects)

- I work mostly in Python and SQL. When you use a TypeScript or Go idiom, explain it in one line.
- Before a change that touches more than three files, list the files and wait for a go-ahead.
- Prefer the standard library to a new dependency; say so explicitly when you add one.
- Never run `git push`, `git rebase` or anything else that rewrites shared history.
- British spelling in prose, American spelling in code identifiers.

Contents of {home}/.agent/rules/writing.md (user's private global instructions for all projects):

# Writing docs and commit messages

- Sentence-case headings.
- Commit subject at most 72 characters, imperative mood ("Add", not "Added").
- Wrap prose at 100 columns; never hard-wrap code blocks.

Contents of {proj}/AGENT.md (project instructions, checked into the codebase):

# acme-ingest

Ingest service that pulls partner events (S3 drops, the Parcelly REST API, Kafka topics),
normalises them and writes them to the `events` schema in Postgres. Python 3.12 with uv, FastAPI
for the admin API, a small React dashboard under `dashboard/`.

## Always

- Run `just check` (ruff, mypy, unit tests) before saying a change is done.
- Public functions are fully typed; CI runs `mypy --strict`.
- New configuration goes through `src/acme_ingest/settings.py`, never `os.environ` directly.
- Timestamps are timezone-aware UTC everywhere; naive datetimes are a bug.

## Read these

@docs/conventions.md
@docs/runbook.md

The skeleton for a new service lives in `@templates/service` (a folder, not an import). Route
handlers look like this:

```python
@router.get("/healthz")
async def healthz() -> dict[str, str]:
    return {{"status": "ok"}}
```

Questions about partner contracts go to ingest-team@acme.example.

Contents of {proj}/docs/conventions.md (project instructions, checked into the codebase):

# Conventions

- Event names are `snake_case` nouns in the past tense: `batch_written`, `payload_rejected`.
- Every partner has a module in `src/acme_ingest/sources/` with a `normalize()` function.
- Money is integer minor units plus an ISO 4217 code; never floats.
- Partner payloads keep their original field names in `raw`; normalised fields are ours.

Contents of {proj}/docs/runbook.md (project instructions, checked into the codebase):

# Runbook

- Deploys: `just deploy <service>` from a green `main`; watch the ingest dashboard for 15 minutes.
- Rollback: `just rollback <service>` redeploys the previous image tag.
- Replaying a partner drop: `uv run acme-ingest replay --source s3 --date YYYY-MM-DD`.
- The consumer lag alert fires at 50,000 messages for 10 minutes.

Contents of {proj}/.agent/AGENT.md (project instructions, checked into the codebase):

# Agent notes for this repo

- `src/acme_ingest/vendor/` is generated by `just vendor`; never edit it by hand.
- Files under `tests/data/` are real, anonymised partner payloads; keep them byte-exact
  (no re-formatting, no trailing-newline fixes).

Contents of {proj}/.agent/rules/python-style.md (project instructions, checked into the codebase):

# Python style

- Ruff defaults plus `I` (import sorting); line length 100.
- `from __future__ import annotations` at the top of every module.
- Value objects are `@dataclass(frozen=True, slots=True)`; no bare dicts across module boundaries.
- Raise specific exceptions from `acme_ingest.errors`; never `raise Exception(...)`.

Contents of {proj}/.agent/rules/secrets.md (project instructions, checked into the codebase):

# Secrets

- Never print, copy or commit values from `.env` files or `config/secrets*.yaml`.
- Refer to a secret by its 1Password item name only.

Contents of {proj}/AGENT.local.md (user's private project instructions, not checked in):

# Local notes (not checked in)

@~/.agent/acme-ingest-personal.md

- I'm on the `kafka-consumer` branch most of this month; rebase onto main only when I ask.
- Skip the dashboard lint step locally, my Node version is too old for it; CI runs it.

Contents of {ws.memory_dir}/MEMORY.md (user's auto-memory, persists across conversations):

# Memory index

## User
- [Role and ownership](user_role.md) — owns S3/Kafka sources and the worker; new to React
- [How the user reviews changes](user_review_style.md) — list files and reasons first, small diffs
- [Working hours and on-call](user_timezone.md) — Lisbon, on-call one week in six, times in UTC
- [沟通偏好](用户_沟通偏好.md) — 设计讨论用中文，代码与提交信息用英文

## Feedback
- [Parametrize test cases](feedback_pytest_parametrize.md) — parametrize with ids, no loops in tests
- [No database mocks in integration tests](feedback_no_mock_db.md) — real Postgres via docker compose
- [Short answers](feedback_terse_replies.md) — no closing recap
- [Commit message format](feedback_commit_messages.md) — ticket key first, imperative summary
- [Expand/contract migrations confirmed](feedback_expand_contract_migrations.md) — three migrations for big tables
- [Structured log calls](feedback_logging_fields.md) — structlog key-values, no f-strings in logs
- [Don't edit vendored code](feedback_vendored_code.md) — fix upstream, then `just vendor`

## Project
- [SQS to Kafka cutover](project_kafka_migration.md) — cutover date, SQS readable 30 days after
- [Kafka migration plan](project_sqs_to_kafka.md) — why we leave SQS
- [Staging DB read-only on Fridays](project_staging_readonly_fridays.md) — weekly snapshot window
- [2025 backfill window](project_backfill_window.md) — no schema changes to events meanwhile
- [Parcelly v1 shutdown](project_vendor_api_cutover.md) — v2 client must ship first
- [Event de-duplication key](project_dedupe_key.md) — (source, external_id, occurred_at)
- [Raw payload retention](project_retention_policy.md) — 30 days in S3, legal requirement
- [Ingest v3 plan](project_ingest_v3_plan.md) — partitions, quotas, replay API; decisions taken
- [Worker ownership handover](project_owner_handover.md) — Tomasz reviews worker PRs until then
- [Q3 load test results](project_loadtest_q3.md) — peak 42k events/s, brokers were the limit

## Reference
- [Ingest dashboards](reference_grafana.md) — overview, lag and partner error boards
- [Issue tracker](reference_tracker.md) — INGEST project, partner labels
- [Runbooks](reference_runbooks.md) — platform wiki pages for lag, replays, credentials
- [Schema registry](reference_schema_registry.md) — Avro subjects, BACKWARD compatibility
- [Parcelly API v2 docs](reference_vendor_docs.md) — reference, sandbox, credentials

Contents of {ws.memory_dir}/team/MEMORY.md (shared team memory, synced across the organization):

<team-memory-content source="shared">
- [Ingest on-call](reference_oncall.md) — who is on call, paging, escalation path
- [Alert changes need on-call review](feedback_alert_changes.md) — thresholds and routing need the on-call's OK
</team-memory-content>"""
    assert c.rendered == expected
