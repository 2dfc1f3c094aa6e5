"""The dream's gates, cheapest first (docs/behaviour.md §8, seed chapter §17.8 "三道门，按成本递增排列").

1. **time**: hours since the last consolidation (the lock's mtime, one ``stat``) ≥ ``minHours``
   (default 24; never consolidated → open);
2. **scan throttle**: at most one session scan per ``SCAN_INTERVAL_S`` (10 minutes, the
   reference's throttle); the time of the last scan is kept in memtui's state dir;
3. **sessions**: transcripts in the sessions dir touched (mtime) since the last consolidation,
   ``agent-*.jsonl`` and the current session excluded, ≥ ``minSessions`` (default 5);
4. **lock**: not held by a live process for under 60 minutes (``memtui.core.dream.lock``).

Settings ``autoDreamEnabled`` (default true — the reference takes its default from a feature
flag memtui cannot see), ``minHours`` and ``minSessions`` come from the settings layers (policy,
local, project, user); a value of the wrong type is ignored with a diagnostic.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from memtui.core.base.clock import EPOCH_MAX, EPOCH_MIN
from memtui.core.base.jsontext import json_number, loads_checked
from memtui.core.base.safe_read import MAX_STATE_BYTES, read_text_regular
from memtui.core.writes.atomic import atomic_write_bytes
from memtui.core.memory.catalog import iso_utc
from memtui.core.base.diagnostics import Diagnostic
from memtui.core.dream.lock import STALE_AFTER_S, LockInfo, read_lock
from memtui.core.places.flavor import AGENT, Flavor
from memtui.core.places.locations import Locations
from memtui.core.places.settings import SettingsLayers
from memtui.core.places.statedir import memdir_state
from memtui.core.sessions.transcripts import list_sessions

# docs/behaviour.md §8 defaults (the reference's).
DEFAULT_MIN_HOURS = 24.0
DEFAULT_MIN_SESSIONS = 5
# The reference scans the sessions dir at most once per 10 minutes.
SCAN_INTERVAL_S = 10 * 60
GateName = Literal["enabled", "time", "scan", "sessions", "lock"]


@dataclass(frozen=True, slots=True)
class DreamContext:
    """Where a dream reads and writes: the memory dir, the sessions dir (transcripts), memtui's
    state dir, the settings layers, and the current session's id (excluded from the sessions
    gate; ``None`` when memtui runs outside a session)."""

    memory_dir: Path
    sessions_dir: Path
    state_dir: Path
    settings: SettingsLayers | None = None
    current_session: str | None = None
    auto_memory_enabled: bool = True
    # Which rule decided ``auto_memory_enabled`` ("env", a settings layer, "default").
    auto_memory_source: str = "default"
    # The flavor: its release (if any) decides the gates, the prompt and the permissions.
    flavor: Flavor = AGENT
    project_root: Path | None = None
    # The resolved project (the claude consolidator renders its instructions); None in tests
    # that build a context by hand.
    locations: Locations | None = field(default=None, compare=False, repr=False)

    @classmethod
    def from_locations(cls, loc: Locations, current_session: str | None = None) -> DreamContext:
        """The context of a resolved project."""
        return cls(loc.memory_dir, loc.sessions_dir, loc.state_dir, loc.settings, current_session, loc.auto_memory_enabled,
                   loc.auto_memory_source, loc.flavor, loc.project_root, loc)

    @property
    def dream_state_dir(self) -> Path:
        """``<state>/memdirs/<slug of the memory dir>/dream`` (next to the edit journal)."""
        return memdir_state(self.state_dir, self.memory_dir) / "dream"


@dataclass(frozen=True, slots=True)
class DreamSettings:
    """``enabled`` (``autoDreamEnabled`` and auto memory on), ``min_hours``, ``min_sessions``,
    where each came from (a settings layer or ``"default"``), and diagnostics for bad values."""

    enabled: bool
    min_hours: float
    min_sessions: int
    sources: dict[str, str]
    diagnostics: tuple[Diagnostic, ...] = ()


def read_dream_settings(ctx: DreamContext) -> DreamSettings:
    """The three dream settings (see the module doc). Never raises."""
    diags: list[Diagnostic] = []
    sources: dict[str, str] = {}

    def get(key: str, ok: type | tuple[type, ...], default: Any, valid: Any = lambda v: True) -> Any:
        if ctx.settings is None:
            sources[key] = "default"
            return default
        value, source = ctx.settings.get(key)
        if source is None:
            sources[key] = "default"
            return default
        if isinstance(value, bool) and ok is not bool or not isinstance(value, ok) or not valid(value):
            diags.append(Diagnostic("dream-setting-invalid", "warning", f"{key}: {value!r} is not valid; using {default}", str(ctx.settings.paths.get(source, ""))))
            sources[key] = "default"
            return default
        sources[key] = source
        return value

    enabled = bool(get("autoDreamEnabled", bool, True))
    # a finite number ≥ 0: 1e999 (infinite) or a 400-digit integer (no float) is not an hour count
    min_hours = float(get("minHours", (int, float), DEFAULT_MIN_HOURS, lambda v: json_number(v, 0) is not None))
    min_sessions = int(get("minSessions", int, DEFAULT_MIN_SESSIONS, lambda v: v >= 0))
    if not ctx.auto_memory_enabled:
        enabled = False
        sources["autoDreamEnabled"] = "auto memory is off"
    return DreamSettings(enabled, min_hours, min_sessions, sources, tuple(diags))


@dataclass(frozen=True, slots=True)
class TimeGate:
    """``hours_since``: since the last consolidation (``None`` = never); open when ``None`` or
    ≥ ``min_hours``; ``opens_at``: epoch s when it opens (``None`` when open)."""

    ok: bool
    hours_since: float | None
    min_hours: float
    last_consolidated_at: float | None
    opens_at: float | None


@dataclass(frozen=True, slots=True)
class ScanGate:
    """``last_scan_at`` / ``next_scan_at``: epoch s or ``None``; closed within 10 minutes of
    the last scan."""

    ok: bool
    last_scan_at: float | None
    next_scan_at: float | None


@dataclass(frozen=True, slots=True)
class SessionsGate:
    """Sessions touched since the last consolidation: ``count``, their ``ids`` (newest first),
    ``min_sessions``; ``excluded``: the current session when it was among them."""

    ok: bool
    count: int
    min_sessions: int
    ids: tuple[str, ...]
    excluded: str | None = None


@dataclass(frozen=True, slots=True)
class LockGate:
    """The lock: ``holder_pid`` / ``holder_alive``, ``last_consolidated_at`` (epoch s),
    ``crashed`` (a memtui run died holding it: recognised, reclaimable), ``age_s``."""

    ok: bool
    holder_pid: int | None
    holder_alive: bool
    last_consolidated_at: float | None
    crashed: bool
    age_s: float | None
    exists: bool


@dataclass(frozen=True, slots=True)
class GateStatus:
    """Every gate, ``would_run`` (enabled and all gates open) and ``blocking``: the first
    closed gate in the order the reference checks them, or ``None``."""

    enabled: bool
    time: TimeGate
    scan: ScanGate
    sessions: SessionsGate
    lock: LockGate
    settings: DreamSettings
    now: datetime
    blocking: GateName | None = None
    reasons: tuple[str, ...] = field(default=())

    @property
    def would_run(self) -> bool:
        """Whether the agent's auto-dream would start now."""
        return self.blocking is None

    @property
    def lock_stale_at(self) -> float | None:
        """Epoch s when the held lock goes stale, so that the next dream may take it over even
        while its holder runs: taken ``lock.age_s`` ago, plus ``STALE_AFTER_S``. ``None`` when
        nobody holds it."""
        if self.lock.age_s is None:
            return None
        return self.now.timestamp() - self.lock.age_s + STALE_AFTER_S


def _scan_file(ctx: DreamContext) -> Path:
    return ctx.dream_state_dir / "last-scan.json"


def last_scan_at(ctx: DreamContext) -> float | None:
    """When the sessions were last scanned by a gated dream (epoch s), or ``None``: never, or
    a file that is unreadable, not a JSON object, or whose ``at`` is not a number of seconds a
    ``datetime`` can hold (``EPOCH_MIN … EPOCH_MAX``)."""
    try:
        data = loads_checked(read_text_regular(_scan_file(ctx), MAX_STATE_BYTES, errors="strict"))
    except (OSError, ValueError):
        return None
    return json_number(data.get("at"), EPOCH_MIN, EPOCH_MAX) if isinstance(data, dict) else None


def record_scan(ctx: DreamContext, now: datetime) -> None:
    """Persist ``now`` as the last scan time. Raises ``OSError``."""
    atomic_write_bytes(_scan_file(ctx), json.dumps({"at": now.timestamp(), "iso": iso_utc(now.timestamp())}).encode("utf-8"))


def sessions_since(ctx: DreamContext, since: float | None) -> tuple[list[str], str | None]:
    """Ids of the sessions touched after ``since`` (all when ``None``), newest first, minus the
    current session; and the current session's id when it was dropped."""
    ids: list[str] = []
    excluded: str | None = None
    for s in list_sessions(ctx.sessions_dir):
        if since is not None and s.mtime <= since:
            continue
        if ctx.current_session is not None and s.session_id == ctx.current_session:
            excluded = s.session_id
            continue
        ids.append(s.session_id)
    return ids, excluded


def check_gates(ctx: DreamContext, now: datetime, *, record: bool = False) -> GateStatus:
    """Evaluate the gates at ``now``.

    ``record=False`` (``memtui dream status``, the pane): every gate is computed and nothing
    is written — the sessions are counted even inside the throttle window, to show them.
    ``record=True`` (a gated run): the reference's order, cheapest first; the sessions are
    scanned only when the time and scan gates are open, and that scan's time is persisted.
    Raises ``OSError`` only when ``record`` and the scan time cannot be saved.
    """
    settings = read_dream_settings(ctx)
    info: LockInfo = read_lock(ctx.memory_dir)
    ts = now.timestamp()
    last = info.last_consolidated_at
    hours = None if last is None else max(0.0, (ts - last) / 3600)
    time_ok = hours is None or hours >= settings.min_hours
    time_gate = TimeGate(time_ok, hours, settings.min_hours, last, None if time_ok or last is None else last + settings.min_hours * 3600)

    scanned_at = last_scan_at(ctx)
    scan_ok = scanned_at is None or ts - scanned_at >= SCAN_INTERVAL_S or ts < scanned_at
    scan_gate = ScanGate(scan_ok, scanned_at, None if scan_ok or scanned_at is None else scanned_at + SCAN_INTERVAL_S)

    if record and not (settings.enabled and time_ok and scan_ok):
        sessions_gate = SessionsGate(False, 0, settings.min_sessions, ())
    else:
        ids, excluded = sessions_since(ctx, last)
        sessions_gate = SessionsGate(len(ids) >= settings.min_sessions, len(ids), settings.min_sessions, tuple(ids), excluded)
        if record:
            record_scan(ctx, now)

    blocked = info.blocks(now)
    lock_gate = LockGate(not blocked, info.holder_pid, info.holder_alive, last, info.crashed, info.age_s(now), info.exists)

    reasons: list[str] = []
    blocking: GateName | None = None
    checks: list[tuple[GateName, bool, str]] = [
        ("enabled", settings.enabled, "auto-dream is off (autoDreamEnabled: false, or auto memory is off)"),
        ("time", time_ok, f"last consolidated {hours or 0:.1f} h ago; the gate opens at {settings.min_hours:g} h"),
        ("scan", scan_ok, "the sessions were scanned under 10 minutes ago"),
        ("sessions", sessions_gate.ok, f"{sessions_gate.count} session(s) since the last consolidation; {settings.min_sessions} needed"),
        ("lock", lock_gate.ok, f"process {info.holder_pid} holds the lock"),
    ]
    for name, ok, why in checks:
        if not ok:
            reasons.append(why)
            if blocking is None:
                blocking = name
    return GateStatus(settings.enabled, time_gate, scan_gate, sessions_gate, lock_gate, settings, now, blocking, tuple(reasons))


def status_to_json(status: GateStatus) -> dict[str, Any]:
    """The ``memtui dream status --json`` shape: ``{enabled, gates: {time: {ok, hours_since,
    min_hours}, sessions: {ok, count, min_sessions, ids}, lock: {ok, holder_pid, holder_alive,
    last_consolidated_at}, scan: {...}}, would_run, blocking, reasons}`` (times ISO-8601 UTC,
    ``hours_since`` rounded to 0.01 h)."""

    def iso(epoch: float | None) -> str | None:
        return None if epoch is None else iso_utc(epoch)

    t, s, k, c = status.time, status.sessions, status.lock, status.scan
    return {
        "enabled": status.enabled,
        "gates": {
            "time": {"ok": t.ok, "hours_since": None if t.hours_since is None else round(t.hours_since, 2), "min_hours": t.min_hours, "opens_at": iso(t.opens_at)},
            "scan": {"ok": c.ok, "last_scan_at": iso(c.last_scan_at), "next_scan_at": iso(c.next_scan_at)},
            "sessions": {"ok": s.ok, "count": s.count, "min_sessions": s.min_sessions, "ids": list(s.ids), "excluded": s.excluded},
            "lock": {
                "ok": k.ok,
                "holder_pid": k.holder_pid,
                "holder_alive": k.holder_alive,
                "last_consolidated_at": iso(k.last_consolidated_at),
                "crashed": k.crashed,
                "exists": k.exists,
            },
        },
        "would_run": status.would_run,
        "blocking": status.blocking,
        "reasons": list(status.reasons),
        "settings_sources": dict(status.settings.sources),
    }
