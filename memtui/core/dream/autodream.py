"""The gates of a CLI release's own auto-dream (the claude flavor: Claude Code 2.1.332 and
2.1.328), in the order its code checks them, each with its numbers and where they come from, and the verdict in
a user's terms.

At the end of every main-thread turn of an **interactive** session the CLI asks, in order:

1. ``remote`` — the session is not a remote one;
2. ``entrypoint`` — ``CLAUDE_CODE_ENTRYPOINT`` is not an SDK's (``sdk-ts``, ``sdk-py``,
   ``sdk-cli``; ``claude -p`` is ``sdk-cli``): print mode never dreams;
3. ``auto_memory`` — auto memory is on;
4. ``read_block`` — no read block (``permissions.blockReadsOutsideWorkingDirectories``);
5. ``flag`` — the feature flag (``tengu_onyx_plover`` in the flag cache of ``~/.claude.json``)
   has ``enabled`` or ``available`` true; then the setting ``autoDreamEnabled`` decides when it
   is set, else the flag's ``enabled``;
6. ``time`` — hours since ``lastConsolidatedAt`` (the lock's mtime; absent = epoch 0) ≥
   ``minHours`` (24; a positive ``minHours`` in the flag overrides it). Closes silently;
7. ``throttle`` — at most one session scan per process per 10 minutes;
8. ``sessions`` — session transcripts of the project dir whose mtime is newer than
   ``lastConsolidatedAt``, the current session excluded, ≥ ``minSessions`` (5; the flag can
   override it). Contents do not matter; ``-p`` sessions count too;
9. ``permission_rule`` — no deny or ask rule on Edit/Write covers the memory dir;
10. ``lock`` — not held: a lock under 1 hour old whose content is a live PID (PID ≤ 1 counts as
    dead) stops it. Otherwise the CLI takes it (writes its PID; the mtime is now);
11. ``organization`` — only in a release with ``dream.organization_gate`` (2.1.332): no
    transcript of the project marks a sign-in to a hybrid organization the session cannot
    claim, and the search for those marks finishes (:mod:`memtui.core.dream.organization`).
    When it closes, the CLI gives the lock back without dreaming (:func:`cli_rollback`: the
    prior mtime restored and the body emptied, or the file deleted when there was none), so
    the time gate stays open and every later eligible turn searches again.

Then it fires. Its traps are diagnosed too (:func:`find_traps`): a flag/setting combination
that means it never dreams, a memory dir whose sessions all ran under ``-p``, and a lock
stamped by a dream that left no record — a dream the API refused is still recorded as done.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from memtui.core.base.jsontext import json_number
from memtui.core.base.process import MAX_PID
from memtui.core.base.wording import ON_FOR_YOUR_ACCOUNT, ONLY_ANTHROPIC, SAVE_BY_STARTING, counted, flag_details, json_value, off_for
from memtui.core.base.diagnostics import Diagnostic
from memtui.core.dream.gates import DreamContext
from memtui.core.dream.lock import LockInfo, cli_rollback, read_lock
from memtui.core.dream.organization import OrgSearch, search_marks, search_to_json
from memtui.core.memory.catalog import iso_utc
from memtui.core.places.claude_json import GlobalConfig, read_global_config
from memtui.core.places.release import OrganizationGate, Release
from memtui.core.places.permissions import memory_write_rule, setting_value
from memtui.core.places.settings import SettingsLayers
from memtui.core.sessions.background import SessionActivity, SessionFileInfo, list_cli_sessions, read_activity

GateId = Literal["remote", "entrypoint", "auto_memory", "read_block", "flag", "time", "throttle", "sessions", "permission_rule", "lock", "organization"]
# Every gate any release has, in the CLI's order (a release without an organization gate skips it).
GATE_ORDER: tuple[GateId, ...] = ("remote", "entrypoint", "auto_memory", "read_block", "flag", "time", "throttle", "sessions", "permission_rule", "lock",
                                  "organization")
GATE_TITLES: dict[GateId, str] = {
    "remote": "local session",
    "entrypoint": "interactive",
    "auto_memory": "auto memory",
    "read_block": "read block",
    "flag": "flag + setting",
    "time": "time",
    "throttle": "scan throttle",
    "sessions": "sessions",
    "permission_rule": "permission rules",
    "lock": "lock",
    "organization": "organization",
}


@dataclass(frozen=True, slots=True)
class Gate:
    """One gate: ``ok`` (open), ``detail`` (a plain sentence with its numbers: no flag or
    cache-key name), ``sources`` (where each number came from: a file and key, or the release's
    default), ``opens`` (closed: when or how it opens, in plain words), ``never`` (closed until
    the user changes a setting or the flag changes), ``silent`` (the CLI logs nothing when it
    closes), ``data`` (the numbers, for JSON), ``details`` (the internal names behind
    ``detail`` — a flag and its cached value, a variable's value —, for a details line; ``""``
    when none), ``effect`` (closed: what the CLI does on the way out, in plain words — the
    organization gate's lock rollback; ``""`` when nothing)."""

    id: GateId
    ok: bool
    detail: str
    sources: tuple[str, ...] = ()
    opens: str | None = None
    never: bool = False
    silent: bool = False
    data: Mapping[str, Any] = field(default_factory=dict)
    details: str = ""
    effect: str = ""

    @property
    def title(self) -> str:
        """Its short name."""
        return GATE_TITLES[self.id]


@dataclass(frozen=True, slots=True)
class SessionSeen:
    """A session transcript the sessions gate looked at: ``counted`` (newer than the last
    consolidation and not the current session), ``why`` it was left out, ``entrypoint``
    (``cli``, ``sdk-cli``…, ``None`` unknown)."""

    session_id: str
    mtime: float
    counted: bool
    why: str | None
    entrypoint: str | None


@dataclass(frozen=True, slots=True)
class Trap:
    """Something that silently keeps the dream from doing what a user expects: ``code``
    (``never-dreams``, ``print-sessions-only``, ``failed-dream``), one-line ``title``,
    ``message`` (what and when), ``fix`` (what to do; ``None`` when nothing helps), ``details``
    (internal names behind the message, for a details line; ``""`` when none)."""

    code: str
    title: str
    message: str
    fix: str | None = None
    data: Mapping[str, Any] = field(default_factory=dict)
    details: str = ""


@dataclass(frozen=True, slots=True)
class AutoDreamStatus:
    """The CLI's auto-dream as it stands at ``now``: ``gates`` in its order (every one
    evaluated, so a closed gate does not hide the others), ``blocking`` (the first closed
    one, ``None`` when it fires), ``verdict`` (one or two sentences for a person),
    ``sessions`` (every transcript looked at, directory order) and ``session_ids`` (the counted
    ones, in the order the dream prompt lists them), ``last_consolidated_at`` (the lock's mtime,
    ``None`` absent or 0), the effective ``min_hours`` / ``min_sessions``, ``traps``,
    ``diagnostics`` (an unreadable config), ``organization``: what the organization gate's
    search found (``None`` when the release has no such gate)."""

    release: Release
    now: datetime
    gates: tuple[Gate, ...]
    blocking: Gate | None
    verdict: str
    sessions: tuple[SessionSeen, ...]
    session_ids: tuple[str, ...]
    last_consolidated_at: float | None
    min_hours: float
    min_sessions: float
    traps: tuple[Trap, ...] = ()
    diagnostics: tuple[Diagnostic, ...] = ()
    organization: OrgSearch | None = None

    @property
    def would_fire(self) -> bool:
        """Whether the next interactive turn's end starts a dream."""
        return self.blocking is None

    def gate(self, gate_id: GateId) -> Gate:
        """The gate called ``gate_id``. Raises ``StopIteration`` when the release has none
        (see :meth:`find_gate`)."""
        return next(g for g in self.gates if g.id == gate_id)

    def find_gate(self, gate_id: GateId) -> Gate | None:
        """The gate called ``gate_id``, ``None`` when the release has none (the organization
        gate before 2.1.332)."""
        return next((g for g in self.gates if g.id == gate_id), None)

    @property
    def reason(self) -> str | None:
        """The CLI's skip reason of the blocking gate when it logs one by name (the organization
        gate's ``other_hybrid_organization`` / ``hybrid_organization_check_failed``), else
        ``None``."""
        return None if self.blocking is None else self.blocking.data.get("reason")


# ----- inputs -------------------------------------------------------------------------------


def _where(settings: SettingsLayers | None, source: str | None, key: str) -> str:
    """``<settings file> <key>`` for a value found in layer ``source``."""
    path = settings.paths.get(source) if settings is not None and source is not None else None  # type: ignore[call-overload]
    return f"{shorten(path)} {key}".strip() if path is not None else key


def shorten(path: Path | str) -> str:
    """``path`` with the home directory as ``~``."""
    text = str(path)
    home = os.environ.get("HOME")
    if home and (text == home or text.startswith(home.rstrip("/") + "/")):
        return "~" + text[len(home.rstrip("/")) :]
    return text


def _positive(value: Any) -> float | None:
    """The CLI's override rule: a finite number greater than 0 (a bool is not a number)."""
    number = json_number(value)  # an integer too big for a float is no number here
    return number if number is not None and number > 0 else None


def _when(epoch: float, now: datetime) -> str:
    delta = epoch - now.timestamp()
    return f"{iso_utc(epoch)[:16].replace('T', ' ')} UTC ({'in ' if delta > 0 else ''}{_span(abs(delta))}{'' if delta > 0 else ' ago'})"


def _span(seconds: float) -> str:
    return f"{seconds / 86_400:.1f} d" if seconds >= 86_400 else f"{seconds / 3600:.1f} h" if seconds >= 3600 else f"{seconds / 60:.0f} min"


def pid_alive_cli(pid: int | None) -> bool:
    """The CLI's liveness test of a lock holder: ``kill(pid, 0)`` succeeds; PID ≤ 1 is dead, and
    so is one over ``MAX_PID`` (no process has it). Never raises."""
    if pid is None or pid <= 1 or pid > MAX_PID:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    except (OSError, OverflowError):
        return False
    return True


# ----- the permission-rule gate ---------------------------------------------------------------


def _permission_gate(ctx: DreamContext, settings: SettingsLayers | None) -> Gate:
    found = memory_write_rule(settings, ctx.memory_dir, ctx.project_root)
    if found is None:
        return Gate("permission_rule", True, "no deny or ask rule on Edit/Write covers the memory dir")
    rule, behavior, source, path = found
    where = f"{shorten(path) if path else source} permissions.{behavior}"
    return Gate("permission_rule", False, f"the {behavior} rule {rule!r} covers the memory dir: the CLI skips the dream and warns", (where,),
                opens=f"remove {rule!r} from {where}", never=True, data={"rule": rule, "behavior": behavior, "source": source})


# ----- the organization gate (2.1.332) -----------------------------------------------------------


def _lock_given_back(info: LockInfo) -> tuple[str, dict[str, Any]]:
    """How the CLI's rollback leaves the lock ``info`` describes, in words and as JSON."""
    after = cli_rollback(info)
    as_json = {"exists": after.exists, "body": after.body, "mtime": iso_utc(after.mtime) if after.mtime is not None else None}
    if not info.exists:
        return "there is no lock, so the one it creates is deleted again", as_json
    if not after.exists:
        why = "it cannot read the lock" if not info.readable else "the lock is dated 1970-01-01, which it reads as no lock"
        return f"{why}, so it deletes the lock", as_json
    return f"the lock is emptied and its date put back to {iso_utc(after.mtime or 0)[:16].replace('T', ' ')} UTC, so its age keeps counting from then", as_json


def _organization_gate(ctx: DreamContext, release: Release, gate: OrganizationGate, search: OrgSearch, info: LockInfo) -> Gate:
    """The organization gate over ``search`` (see :mod:`memtui.core.dream.organization`): open
    when no mark was found and the search finished; else closed with the CLI's reason, the
    marking files and organizations, and the lock rollback as its ``effect``."""
    cli = release.cli
    where = (f"{shorten(ctx.sessions_dir)}/**/{gate.glob}, searched as {cli}'s own ripgrep searches it (rg --no-config --no-ignore --hidden "
             f"--text --fixed-strings --glob '{gate.glob}' --regexp '{gate.needle}', {gate.timeout_s:g} s limit)")
    data: dict[str, Any] = {"reason": search.reason(gate), **search_to_json(search), "lock_after": None}
    ignored = "; ".join(f"{shorten(i.path)}:{i.line} is no mark ({i.why})" for i in search.ignored[:3])
    if search.missing:
        return Gate("organization", True, "no transcripts here yet: nothing to search for organization sign-ins", (where,), data=data,
                    details=f"no line with {gate.needle}")
    if search.state == "none":
        also = f"; {counted(len(search.ignored), 'line')} with the mark's type {'is' if len(search.ignored) == 1 else 'are'} no mark" if search.ignored else ""
        return Gate("organization", True, f"no transcript here marks a sign-in to an organization ({counted(search.files, 'file')} searched){also}",
                    (where,), data=data, details="; ".join(p for p in (f"no line with {gate.needle}", ignored) if p))
    phrase, lock_after = _lock_given_back(info)
    data["lock_after"] = lock_after
    interval = release.dream.scan_interval_s / 60
    effect = (f"{cli} takes the lock before this search and gives it back without dreaming: {phrase}. "
              f"It searches again at the end of each interactive turn, at most once every {interval:g} min")
    reason = search.reason(gate) or ""
    if search.state == "failed":
        logged = gate.failed_log.format(why="…")
        details = f"reason {reason}; event {gate.skip_event}; logs {logged!r}"
        if search.failed_by == "memtui":
            detail = (f"memtui could not finish the search of the transcripts for organization sign-ins ({search.failure}); "
                      f"{cli} skips the dream when its own search fails")
            opens = "once the search can finish"
        else:
            detail = f"the search of the transcripts for organization sign-ins fails ({search.failure}), and {cli} then skips the dream"
            opens = f"once every folder and {gate.glob} file under {shorten(ctx.sessions_dir)} can be read"
        return Gate("organization", False, detail, (where,), opens=opens, data=data, details=details, effect=effect)
    first = search.marks[0] if search.marks else None
    at = f" (marked in {shorten(first.path)} line {first.line}" + (f", and {search.marks_total - 1} more" if search.marks_total > 1 else "") + ")" if first else ""
    details = f"reason {reason}; event {gate.skip_event}"
    # The only lever memtui can name: the marks live in the transcripts, which the search reads.
    lever = (f"if the marking sessions were an account you no longer use, the dream runs again once no file under "
             f"{shorten(ctx.sessions_dir)} holds a mark (move those transcripts elsewhere; they are {cli}'s session history, "
             "so keep them rather than delete them)")
    if search.mixed:
        orgs = ", ".join(search.organizations)
        detail = (f"past sessions here were signed in to {len(search.organizations)} different organizations ({orgs}){at}; "
                  f"{cli} skips the dream for every session while their marks are here")
        return Gate("organization", False, detail, (where,), opens=lever, never=True, data=data, details=details, effect=effect)
    org = search.organizations[0]
    detail = (f"a past session here was signed in to organization {org}{at}; {cli} skips the dream unless the session "
              f"is signed in to that organization alone (memtui cannot see which organization your sessions sign in to)")
    opens = f"in a session signed in to organization {org} and to no other since it started; or, {lever}"
    return Gate("organization", False, detail, (where,), opens=opens, data=data, details=details, effect=effect)


# ----- the evaluation ----------------------------------------------------------------------------


def check_autodream(
    ctx: DreamContext,
    now: datetime,
    release: Release,
    *,
    entrypoint: str = "cli",
    remote: bool = False,
    last_scan_at: float | None = None,
    config: GlobalConfig | None = None,
    activities: list[SessionActivity] | None = None,
    organization: OrgSearch | None = None,
    search_limit_s: float | None = None,
) -> AutoDreamStatus:
    """Evaluate every gate of ``release``'s auto-dream for the end of the next turn at ``now``.

    ``entrypoint``: of the session whose turn ends (``cli``: interactive; ``sdk-cli``: ``-p``);
    ``remote``: a remote session; ``last_scan_at``: epoch s of that process's last session scan
    (``None``: a process that has not scanned — a new session); ``config``: the CLI's global
    config (default: read ``~/.claude.json``); ``activities``: the project's session activity
    when already read; ``organization``: the organization gate's search when already made
    (else it is made here, over ``ctx.sessions_dir``, stopping after ``search_limit_s``
    seconds, default the release's limit). ``ctx.current_session`` is left out of the session
    count. Reads the lock, the transcripts' mtimes and entrypoints (and, with an organization
    gate, every ``*.jsonl*`` file under the transcripts dir), the settings and the flag cache;
    writes nothing. Never raises for bad input (an unreadable config becomes a diagnostic)."""
    facts = release.dream
    cfg = config if config is not None else read_global_config()
    settings = ctx.settings
    ts = now.timestamp()
    gates: list[Gate] = []
    cache_where = f"{shorten(cfg.path)} {release.flag_cache_key}.{facts.flag}"

    gates.append(Gate("remote", not remote, "a remote session never dreams" if remote else "a local session"))
    sdk = entrypoint in facts.sdk_entrypoints
    gates.append(Gate("entrypoint", not sdk,
                      "`claude -p` and the SDKs never dream" if sdk else "an interactive session (`claude -p` and the SDKs never dream)",
                      ("CLAUDE_CODE_ENTRYPOINT",), opens="run `claude` interactively" if sdk else None, never=sdk, data={"entrypoint": entrypoint},
                      details=f"entrypoint {entrypoint}"))
    gates.append(Gate("auto_memory", ctx.auto_memory_enabled, "auto memory is on" if ctx.auto_memory_enabled else "auto memory is off",
                      (ctx.auto_memory_source,), opens=None if ctx.auto_memory_enabled else "turn auto memory on (autoMemoryEnabled, CLAUDE_CODE_DISABLE_AUTO_MEMORY)",
                      never=not ctx.auto_memory_enabled))
    block, block_src = setting_value(settings, facts.read_block_setting)
    key = ".".join(facts.read_block_setting)
    gates.append(Gate("read_block", block is not True, f"{key} is on: {release.cli} does not dream" if block is True else f"{key} is not set",
                      (_where(settings, block_src, key),) if block_src else (), opens=f"unset {key}" if block is True else None, never=block is True))

    flag, cached = cfg.flag(facts.flag)
    flag_obj = flag if isinstance(flag, dict) else {}
    enabled, available = flag_obj.get("enabled") is True, flag_obj.get("available") is True
    setting, setting_src = setting_value(settings, (facts.setting,))
    setting_set = setting_src is not None
    has_cache = cfg.flag_cache is not None
    flag_info = flag_details(facts.flag, flag, cached, shorten(cfg.path), release.flag_cache_key, has_cache=has_cache)
    flag_sources = (cache_where, _where(settings, setting_src, facts.setting) if setting_set else f"{facts.setting} (not set)")
    flag_data = {"flag": facts.flag, "cached": cached, "value": flag, "setting": setting if setting_set else None, "setting_set": setting_set, "setting_source": setting_src}
    if not (enabled or available):
        opens = ONLY_ANTHROPIC
        if not has_cache:  # the CLI keeps the flags it fetched there; with none it takes each flag's default (off)
            opens = SAVE_BY_STARTING + " (with telemetry off, only when CLAUDE_CODE_GB_DISK_CACHE_WHEN_TELEMETRY_OFF is set)"
        elif cached:
            flag_info += ": neither enabled nor available"
        gates.append(Gate("flag", False, f"the dream is {off_for(has_cache)}, and {facts.setting} cannot turn it on", flag_sources,
                          opens=opens, never=True, data={**flag_data, "decides": "flag-off"}, details=flag_info))
    elif setting_set:
        on = bool(setting)
        gates.append(Gate("flag", on, f"the dream is available for your account, and {facts.setting}: {json_value(setting)} turns it {'on' if on else 'off'}",
                          flag_sources, opens=None if on else f"set {facts.setting}: true in {_where(settings, setting_src, '')}".rstrip(), never=not on,
                          data={**flag_data, "decides": "setting"}, details=flag_info))
    elif enabled:
        gates.append(Gate("flag", True, f"the dream is {ON_FOR_YOUR_ACCOUNT} ({facts.setting} is not set)", flag_sources,
                          data={**flag_data, "decides": "flag"}, details=flag_info))
    else:
        gates.append(Gate("flag", False, f"the dream is available for your account but not on by default, and {facts.setting} is not set",
                          flag_sources, opens=f"set {facts.setting}: true in ~/.claude/settings.json", never=True,
                          data={**flag_data, "decides": "flag"}, details=flag_info))

    over_hours, over_sessions = _positive(flag_obj.get("minHours")), _positive(flag_obj.get("minSessions"))
    min_hours = over_hours if over_hours is not None else facts.min_hours
    min_sessions = over_sessions if over_sessions is not None else facts.min_sessions
    hours_src = f"{cache_where}.minHours" if over_hours is not None else f"{release.cli} {release.version} default"
    sessions_src = f"{cache_where}.minSessions" if over_sessions is not None else f"{release.cli} {release.version} default"

    info = read_lock(ctx.memory_dir)
    last_ms = (info.mtime or 0.0) * 1000.0 if info.exists else 0.0
    last = last_ms / 1000.0 if last_ms > 0 else None
    hours = (ts * 1000.0 - last_ms) / 3_600_000
    time_ok = hours >= min_hours
    since = "never consolidated (no lock)" if not info.exists else f"{hours:.1f} h since the last consolidation (the lock's mtime {iso_utc(info.mtime or 0)})"
    gates.append(Gate("time", time_ok, f"{since}; {min_hours:g} h needed", (f"{shorten(info.path)} mtime", hours_src),
                      opens=None if time_ok else _when(last_ms / 1000.0 + min_hours * 3600, now), silent=True,
                      data={"hours_since": round(hours, 3), "min_hours": min_hours, "last_consolidated_at": iso_utc(last) if last else None}))

    interval = facts.scan_interval_s
    scan_ok = last_scan_at is None or ts - last_scan_at >= interval
    gates.append(Gate("throttle", scan_ok,
                      "a process scans the sessions at most once per 10 min: a new session scans at once" if last_scan_at is None
                      else f"this process scanned {_span(max(0.0, ts - last_scan_at))} ago",
                      (f"{release.cli} {release.version}: {interval / 60:g} min per process",),
                      opens=None if scan_ok or last_scan_at is None else _when(last_scan_at + interval, now),
                      data={"last_scan_at": iso_utc(last_scan_at) if last_scan_at else None, "interval_s": interval}))

    acts = activities if activities is not None else [read_activity(s.path) for s in list_cli_sessions(ctx.sessions_dir)]
    entry_of = {a.session_id: a.entrypoint for a in acts}
    seen = [SessionSeen(s.session_id, s.mtime, why is None, why, entry_of.get(s.session_id)) for s, why in session_gate(ctx, last_ms)]
    counted = [s.session_id for s in seen if s.counted]
    n = len(counted)
    sessions_ok = n >= min_sessions
    more = max(0, math.ceil(min_sessions - n))
    gates.append(Gate("sessions", sessions_ok, f"{n} session(s) since the last consolidation; {min_sessions:g} needed",
                      (f"{shorten(ctx.sessions_dir)}/*.jsonl mtimes", sessions_src),
                      opens=None if sessions_ok else f"after {more} more session{'s' if more != 1 else ''} (each start of Claude Code, `-p` included, writes one)",
                      data={"count": n, "min_sessions": min_sessions, "ids": counted}))

    gates.append(_permission_gate(ctx, settings))

    age_s = None if info.mtime is None else ts - info.mtime
    held = info.exists and age_s is not None and age_s * 1000 < facts.lock_stale_s * 1000 and pid_alive_cli(info.holder_pid)
    if held:
        lock_detail = f"held by live PID {info.holder_pid} (mtime {age_s:.0f}s ago)"
    elif not info.exists:
        lock_detail = "no lock: the dream creates it"
    else:
        alive = "alive" if pid_alive_cli(info.holder_pid) else "not running"
        lock_detail = f"free: PID {info.holder_pid} ({alive}), mtime {_span(age_s or 0)} ago" if info.holder_pid is not None else f"free: no PID, mtime {_span(age_s or 0)} ago"
    gates.append(Gate("lock", not held, lock_detail, (f"{shorten(info.path)} content and mtime",),
                      opens=None if not held else f"when PID {info.holder_pid} exits, or {_when((info.mtime or 0) + facts.lock_stale_s, now)}",
                      data={"exists": info.exists, "holder_pid": info.holder_pid, "age_s": None if age_s is None else round(age_s, 3), "held": held}))

    org_gate = facts.organization_gate
    search = None
    if org_gate is not None:
        search = organization if organization is not None else search_marks(ctx.sessions_dir, org_gate, limit_s=search_limit_s)
        gates.append(_organization_gate(ctx, release, org_gate, search, info))

    blocking = next((g for g in gates if not g.ok), None)
    status = AutoDreamStatus(release, now, tuple(gates), blocking, "", tuple(seen), tuple(counted), last, min_hours, float(min_sessions),
                             diagnostics=(cfg.diagnostic,) if cfg.diagnostic else (), organization=search)
    traps = find_traps(ctx, status, acts)
    return _with(status, verdict=verdict(status), traps=traps)


def session_gate(ctx: DreamContext, last_ms: float) -> list[tuple[SessionFileInfo, str | None]]:
    """Every session transcript of the project dir in directory order, each with why the
    session gate leaves it out (``None``: counted): not newer than ``last_ms`` (the lock's
    mtime in ms; 0 when absent), or the current session."""
    out: list[tuple[SessionFileInfo, str | None]] = []
    for s in list_cli_sessions(ctx.sessions_dir):
        why = None
        if not s.mtime_ms > last_ms:
            why = "not newer than the last consolidation"
        elif ctx.current_session is not None and s.session_id == ctx.current_session:
            why = "the current session"
        out.append((s, why))
    return out


def counted_sessions(ctx: DreamContext) -> list[str]:
    """The ids the session gate counts now, in its order (the dream prompt's list)."""
    info = read_lock(ctx.memory_dir)
    last_ms = (info.mtime or 0.0) * 1000.0 if info.exists else 0.0
    return [s.session_id for s, why in session_gate(ctx, last_ms) if why is None]


def _with(status: AutoDreamStatus, **changes: Any) -> AutoDreamStatus:
    from dataclasses import replace

    return replace(status, **changes)


def verdict(status: AutoDreamStatus) -> str:
    """The verdict in a user's terms: when the CLI dreams next, or which gate stops it and when
    (or how) that opens. Print-mode and SDK sessions never dream: said either way."""
    cli = status.release.cli
    g = status.blocking
    t = status.gate("time")
    org = status.find_gate("organization")
    # A later gate that stays closed once the blocking one opens: said too, so the verdict
    # never promises a dream it rules out.
    even = "" if org is None or org.ok or org is g else (
        f" Even then it never dreams here: {org.detail}." if org.never else f" Even then, no dream unless it is signed in to the marked organization: {org.detail}."
        if org.data.get("state") == "marks" else f" Even then: {org.detail}.")
    if g is None:
        since = "never consolidated" if status.last_consolidated_at is None else f"{t.data['hours_since']:.1f} h since the last consolidation"
        return (f"Your {cli} will dream at the end of its next interactive turn ({since}, {counted(len(status.session_ids), 'session')} to review). "
                "`claude -p` and SDK sessions never dream.")
    if g.never:
        then = f" {g.effect}." if g.effect else ""
        return f"Your {cli} never dreams here: {g.detail}. To change that: {g.opens}.{then}" if g.opens else f"Your {cli} never dreams here: {g.detail}.{then}"
    if g.id == "time":
        s = status.gate("sessions")
        also = "" if s.ok else f"; then {s.opens} as well"
        return f"No dream before {g.opens}: {g.detail}{also}.{even} (Only interactive sessions dream.)"
    if g.id == "sessions":
        return f"No dream yet: {g.detail}. It runs at the end of the first interactive turn {g.opens}.{even} (Only interactive sessions dream.)"
    if g.id == "throttle":
        return f"This process does not look again before {g.opens}: {g.detail}.{even}"
    if g.id == "lock":
        return f"A dream is running: the lock is {g.detail}; the next can run {g.opens}.{even}"
    if g.id == "organization":
        if g.data.get("state") == "failed":
            return f"No dream: {g.detail}. It dreams {g.opens}. {g.effect}."
        orgs = g.data.get("organizations") or ["?"]
        return f"No dream unless the session is signed in to organization {orgs[0]} alone: {g.detail}. It dreams {g.opens}. {g.effect}."
    return f"Blocked by {g.title}: {g.detail}.{even}"


def headline(status: AutoDreamStatus) -> str:
    """The verdict in one line (for a narrow panel; :func:`verdict` says it whole, and how it
    changes). A gate that closes for good is said by its plain ``detail`` (its internal names
    stay in ``Gate.details``)."""
    g = status.blocking
    if g is None:
        return "dreams at the end of the next interactive turn"
    if g.id == "organization":
        orgs = g.data.get("organizations") or []
        if g.data.get("state") == "failed":
            return "skipped: the search for organization sign-ins fails"
        if len(orgs) > 1:
            return f"never dreams here: past sessions were signed in to {len(orgs)} organizations"
        return f"skipped unless signed in to organization {orgs[0]}"
    if g.never:
        return f"never dreams here: {g.detail}"
    if g.id == "time":
        return f"no dream before {g.opens}"
    if g.id == "sessions":
        more = max(0, math.ceil(status.min_sessions - g.data["count"]))
        return f"no dream until {more} more session{'s' if more != 1 else ''}"
    if g.id == "throttle":
        return f"this process scans again {g.opens}"
    if g.id == "lock":
        return f"a dream is running (PID {status.gate('lock').data.get('holder_pid')})"
    return f"blocked by {g.title}"


# ----- traps -------------------------------------------------------------------------------------

# A dream's records follow its lock stamp by its run time (10 API attempts at most); this is
# how far before the stamp a session must reach, and how long after it a dream may still be
# running (memtui's choices).
SPAN_SLACK_S = 120.0
RUNNING_WINDOW_S = 15 * 60.0


def find_traps(ctx: DreamContext, status: AutoDreamStatus, activities: list[SessionActivity]) -> tuple[Trap, ...]:
    """The traps of ``status`` (see the module docstring): ``never-dreams`` when a closed gate
    means it never dreams; ``print-sessions-only`` when every session with a known entrypoint
    ran under ``-p``/an SDK; ``failed-dream`` (see :func:`failed_dream`)."""
    out: list[Trap] = []
    never = [g for g in status.gates if not g.ok and g.never and g.id != "entrypoint"]
    if never:
        g = never[0]
        out.append(Trap("never-dreams", f"{status.release.cli} never dreams here", g.detail, g.opens, {"gate": g.id}, g.details))
    facts = status.release.dream
    known = [a for a in activities if a.entrypoint is not None]
    if known and all(a.entrypoint in facts.sdk_entrypoints for a in known):
        out.append(Trap(
            "print-sessions-only",
            "every session here ran under `claude -p` or an SDK",
            f"all {len(known)} session transcript(s) of {shorten(ctx.sessions_dir)} have an SDK entrypoint "
            f"({', '.join(sorted({a.entrypoint or '' for a in known}))}): they count toward the session gate, but only the end of an "
            "interactive turn starts a dream, and none has run here",
            "run `claude` interactively in this project; its first turn dreams once the other gates are open",
            {"sessions": len(known)},
        ))
    failed = failed_dream(ctx, status, activities)
    if failed is not None:
        out.append(failed)
    return tuple(out)


def dream_stamp_session(stamp: float, activities: list[SessionActivity]) -> SessionActivity | None:
    """The session that was running when the lock was stamped at ``stamp`` (epoch s): the one
    whose lines reach from before the stamp to within ``SPAN_SLACK_S`` of it, the latest-ending
    first."""
    candidates = [a for a in activities if a.spans(stamp, SPAN_SLACK_S)]
    return max(candidates, key=lambda a: a.last_time or 0.0) if candidates else None


def failed_dream(ctx: DreamContext, status: AutoDreamStatus, activities: list[SessionActivity]) -> Trap | None:
    """A lock stamped by the CLI (its content is a bare PID) whose dream left no record: no
    ``memory_saved`` or ``memory_update`` line of a dream at or after the stamp in any session,
    while the session that stamped it is found. That dream failed (the API refused every
    attempt: the CLI still records it as done) or changed nothing; the next dream waits
    ``minHours`` from the stamp. ``None`` when there is no such lock, or its dream may still be
    running (a live holder within ``RUNNING_WINDOW_S``)."""
    info = read_lock(ctx.memory_dir)
    if not info.exists or info.mtime is None or info.mtime <= 0:
        return None
    body = info.body.strip()
    if not body.isdigit():
        return None  # memtui's own lock (notes, or emptied on success), or not the CLI's
    stamp = info.mtime
    age = status.now.timestamp() - stamp
    if age < RUNNING_WINDOW_S and pid_alive_cli(info.holder_pid):
        return None
    records = [r for a in activities for r in a.records if r.kind == "dream" and r.time is not None and r.time >= stamp - 1.0]
    if records:
        return None
    session = dream_stamp_session(stamp, activities)
    if session is None:
        return None
    facts = status.release.dream
    min_hours, min_sessions = status.min_hours, status.min_sessions
    prior = last_recorded_dream(activities, before=stamp)
    newer = sum(1 for s in status.sessions if s.mtime * 1000 > stamp * 1000)
    reset_to = "the previous recorded dream, " + _when(prior, status.now) if prior is not None else "never consolidated (an empty lock dated 1970: every session counts)"
    message = (
        f"The lock was stamped { _when(stamp, status.now)} by PID {info.holder_pid} in session {session.session_id}, "
        f"but no dream record (memory_saved / memory_update) followed: that dream failed (e.g. the API refused it) or changed nothing, "
        f"and {status.release.cli} counts it as done. The next dream can run {_when(stamp + min_hours * 3600, status.now)} "
        f"once {counted(min_sessions, 'session')} newer than the stamp exist ({newer} so far)."
    )
    fix = f"reset the lock to {reset_to} with `memtui dream reset-lock` (undo with `memtui undo`)"
    return Trap("failed-dream", "the last dream left no record", message, fix, {
        "stamp": iso_utc(stamp), "pid": info.holder_pid, "session": session.session_id,
        "next_at": iso_utc(stamp + min_hours * 3600), "sessions_newer": newer, "reset_to": iso_utc(prior) if prior else None,
        "lock_file": facts.lock_file,
    })


def last_recorded_dream(activities: list[SessionActivity], *, before: float | None = None) -> float | None:
    """Epoch s of the newest dream record (``memory_saved`` / ``memory_update`` of a dream) in
    the transcripts, before ``before`` when given."""
    times = [r.time for a in activities for r in a.records if r.kind == "dream" and r.time is not None and (before is None or r.time < before - 1.0)]
    return max(times) if times else None


def status_to_json(status: AutoDreamStatus) -> dict[str, Any]:
    """The claude flavor's ``memtui dream status --json``: ``{release, would_fire, verdict,
    blocking, reason, gates: [{id, title, ok, detail, sources, opens, never, silent, effect,
    data}] (the CLI's order), sessions: [{id, mtime, counted, why, entrypoint}], session_ids,
    last_consolidated_at, min_hours, min_sessions, traps: [{code, title, message, fix, data}],
    diagnostics}``. ``reason``: the CLI's skip reason (:attr:`AutoDreamStatus.reason`). The
    organization gate's ``data``: ``{reason, state (none|marks|failed), organizations,
    marks: [{path, line, organization}], marks_total, ignored: [{path, line, why}],
    files_searched, missing, failure, failed_by (rg|memtui), lock_after: {exists, body, mtime}
    | null}``."""
    return {
        "release": status.release.name,
        "would_fire": status.would_fire,
        "verdict": status.verdict,
        "blocking": status.blocking.id if status.blocking else None,
        "reason": status.reason,
        "gates": [
            {"id": g.id, "title": g.title, "ok": g.ok, "detail": g.detail, "sources": list(g.sources), "opens": g.opens,
             "never": g.never, "silent": g.silent, "effect": g.effect, "data": dict(g.data)}
            for g in status.gates
        ],
        "sessions": [{"id": s.session_id, "mtime": iso_utc(s.mtime), "counted": s.counted, "why": s.why, "entrypoint": s.entrypoint} for s in status.sessions],
        "session_ids": list(status.session_ids),
        "last_consolidated_at": iso_utc(status.last_consolidated_at) if status.last_consolidated_at else None,
        "min_hours": status.min_hours,
        "min_sessions": status.min_sessions,
        "traps": [{"code": t.code, "title": t.title, "message": t.message, "fix": t.fix, "data": dict(t.data)} for t in status.traps],
        "diagnostics": [{"code": d.code, "severity": d.severity, "message": d.message, "path": d.path} for d in status.diagnostics],
    }
