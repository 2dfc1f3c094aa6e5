"""What the Dream pane draws: the gates and the lock holder as text, one row per phase with its
progress bar, a change of the plan as a list option, an event as a log line.

Nothing here runs a dream; ``memtui.tui.dream`` drives the core and hands these the results.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import PurePath

from rich.text import Text
from textual.app import ComposeResult
from textual.reactive import reactive
from textual.widget import Widget
from textual.widgets import Label, ProgressBar, Static

from memtui.core.base.terminal import visible, visible_block
from memtui.core.base.wording import details_line, with_sources
from memtui.core.dream import (
    SCAN_INTERVAL_S,
    STALE_AFTER_S,
    DreamEvent,
    FileRead,
    Finding,
    GateStatus,
    LogLine,
    Phase,
    PhaseFinished,
    PhaseStarted,
    Progress,
    ProposedChange,
)
from memtui.core.dream.autodream import AutoDreamStatus, Gate, headline
from memtui.core.dream.history import FileDiff, HistoryItem
from memtui.core.writes.journal import JournalEntry
from memtui.tui.theme import assemble, styled, tone

MUTED = "$muted"
OK_STYLE = "bold $success"
CLOSED_STYLE = "bold $error"
PHASE_COLORS: dict[str, str] = {"orient": "$note", "gather": "$special", "consolidate": "$warning", "prune": "$info"}
ACTION_STYLES: dict[str, str] = {
    "create": "bold $chip-text on $success",
    "modify": "bold $chip-text on $warning",
    "delete": "bold $on-danger on $danger",
}
LEVEL_STYLES: dict[str, str] = {"debug": MUTED, "info": "", "warning": "$warning", "error": "bold $error"}


def when(epoch: float | None, now: datetime) -> str:
    """``2026-11-29 12:00 UTC (1.0 d ago)`` / ``… (in 3.5 h)``; ``never`` for ``None``. Shown in
    the clock's zone (UTC: ``system_now`` is UTC), so screenshots do not depend on the host."""
    if epoch is None:
        return "never"
    tz = now.tzinfo or UTC
    stamp = datetime.fromtimestamp(epoch, tz).strftime("%Y-%m-%d %H:%M %Z").strip()
    delta = epoch - now.timestamp()
    return f"{stamp} ({'in ' + span(delta) if delta > 0 else span(delta) + ' ago'})"


def span(seconds: float) -> str:
    """A duration, either sign, as ``42 min``, ``3.5 h`` or ``1.2 d``."""
    s = abs(seconds)
    return f"{s / 86_400:.1f} d" if s >= 86_400 else f"{s / 3600:.1f} h" if s >= 3600 else f"{s / 60:.0f} min"


def minutes(seconds: float) -> str:
    """A constant duration in whole minutes: ``10 min``."""
    return f"{seconds / 60:.0f} min"


def _mark(ok: bool) -> Text:
    return styled("✔ ", style=OK_STYLE) if ok else styled("✘ ", style=CLOSED_STYLE)


def lock_holder(status: GateStatus, own_pid: int) -> Text:
    """Who holds the lock: ``free``, or the PID, whether it runs (or is this memtui, with a
    plan open) and how long ago it took the lock; a crashed run is named as such."""
    k = status.lock
    if not k.exists or k.holder_pid is None:
        return styled("free", style="bold")
    who = "this memtui, plan open" if k.holder_pid == own_pid else "alive" if k.holder_alive else "not running"
    age = "" if k.age_s is None else f", took it {span(k.age_s)} ago"
    holder = assemble(("PID ", ""), (str(k.holder_pid), "bold"), (f" ({who}){age}", "" if k.holder_alive else MUTED))
    if k.crashed:
        holder.append(" — a crashed run: the next dream rolls it back", style=tone("$warning"))
    return holder


def _opens(status: GateStatus) -> str:
    """When the first closed gate opens, in words."""
    t, s, c, k = status.time, status.sessions, status.scan, status.lock
    match status.blocking:
        case "enabled":
            return "it opens when autoDreamEnabled is true (settings) and auto memory is on"
        case "time":
            # the sessions gate comes after time: when it is shut too, the time alone opens nothing
            too = "" if s.ok else f"; {s.min_sessions - s.count} more session{'s' if s.min_sessions - s.count != 1 else ''} needed too"
            return f"opens {when(t.opens_at, status.now)}{too}"
        case "scan":
            return f"opens {when(c.next_scan_at, status.now)}"
        case "sessions":
            more = s.min_sessions - s.count
            return f"opens after {more} more session{'s' if more != 1 else ''}"
        case "lock":
            return f"opens when PID {k.holder_pid} exits, or {when(status.lock_stale_at, status.now)} (stale after {minutes(STALE_AFTER_S)})"
    return ""


def gate_text(status: GateStatus, own_pid: int, *, compact: bool = False) -> Text:
    """The gates, cheapest first, each open (✔) or closed (✘) with its numbers; the lock
    holder; and the verdict: would a dream run now, and if not, what blocks it and when that
    opens. ``compact``: one short line per gate, for small terminals."""
    if compact:
        return _compact_gates(status)
    t, c, s = status.time, status.scan, status.sessions
    since = "never consolidated" if t.hours_since is None else f"{t.hours_since:.1f} h since the last dream"
    lines: list[Text] = []
    if not status.enabled:
        lines.append(assemble(_mark(False), ("auto-dream off", "bold"), ("  autoDreamEnabled: false, or auto memory is off", MUTED)))
    lines.append(assemble(_mark(t.ok), ("time     ", "bold"), since, (f"  (min {t.min_hours:g} h)", MUTED)))
    scan = "no scan yet" if c.last_scan_at is None else f"last scan {when(c.last_scan_at, status.now)}"
    lines.append(assemble(_mark(c.ok), ("scan     ", "bold"), scan, (f"  (one per {minutes(SCAN_INTERVAL_S)})", MUTED)))
    excluded = f", {s.excluded} excluded (current)" if s.excluded else ""
    lines.append(assemble(_mark(s.ok), ("sessions ", "bold"), f"{s.count} since the last dream", (f"  (min {s.min_sessions}{excluded})", MUTED)))
    k = status.lock
    lines.append(assemble(_mark(k.ok), ("lock     ", "bold"), lock_holder(status, own_pid)))
    lines.append(assemble(("           last consolidated ", MUTED), when(k.last_consolidated_at, status.now)))
    lines.append(_verdict(status))
    return Text("\n").join(lines)


def _verdict(status: GateStatus) -> Text:
    if status.would_run:
        return styled("▶ a dream would run now", style=OK_STYLE)
    return assemble(("■ blocked by ", CLOSED_STYLE), (status.blocking or "?", CLOSED_STYLE), (f" — {_opens(status)}", ""))


def _compact_gates(status: GateStatus) -> Text:
    """Four short lines: time, sessions, lock (the scan throttle only when it blocks), verdict."""
    t, c, s, k = status.time, status.scan, status.sessions, status.lock
    lines: list[Text] = []
    if not status.enabled:
        lines.append(assemble(_mark(False), ("auto-dream off", "bold")))
    since = "never consolidated" if t.hours_since is None else f"{t.hours_since:.1f} h of {t.min_hours:g}"
    lines.append(assemble(_mark(t.ok), ("time     ", "bold"), since))
    if not c.ok:
        lines.append(assemble(_mark(False), ("scan     ", "bold"), f"scanned < {minutes(SCAN_INTERVAL_S)} ago"))
    lines.append(assemble(_mark(s.ok), ("sessions ", "bold"), f"{s.count} of {s.min_sessions}"))
    holder = "free" if k.ok and not k.holder_pid else f"PID {k.holder_pid} ({'alive' if k.holder_alive else 'gone'})"
    lines.append(assemble(_mark(k.ok), ("lock     ", "bold"), holder))
    lines.append(_verdict(status))
    return Text("\n").join(lines)


def last_dream_text(entry: JournalEntry | None) -> Text:
    """The applied dream ``u`` would undo, or that there is none."""
    if entry is None:
        return styled("no applied dream to undo", style=MUTED)
    stamp = entry.time[:16].replace("T", " ")
    return assemble(("last dream ", MUTED), (stamp, "bold"), (f" · {len(entry.changes)} file(s) · u undoes it", MUTED))


def action_badge(action: str) -> Text:
    """A coloured ``create`` / ``modify`` / ``delete`` chip, all the same width."""
    return styled(f" {action:<6} ", style=ACTION_STYLES.get(action, "bold reverse"))


# A reason in the plan list is cut here (the diff view shows it whole), so that a few changes
# fit the list at once.
REASON_CHARS = 80


def change_prompt(relpath: str, action: str, reason: str, *, pending: bool = False) -> Text:
    """A change of the plan as a list option: action and path, the reason (cut to
    ``REASON_CHARS``) under them."""
    if len(reason) > REASON_CHARS:
        reason = reason[: REASON_CHARS - 1].rstrip() + "…"
    head = assemble(action_badge(action), " ", (visible(relpath), "bold" if not pending else MUTED))
    # the reason in the default colour: a muted grey is unreadable on the highlighted row
    return assemble(head, "\n", (f"  {visible(reason)}", "" if not pending else "italic " + MUTED))


def finding_prompt(finding: Finding) -> Text:
    """A finding of the plan as a list option (the dream noticed it; it changes nothing)."""
    where = finding.path or ""
    if finding.path and finding.line:
        where += f":{finding.line}"
    return assemble((" note   ", "bold $chip-text on $note"), " ", (visible(where), "bold"), "\n", f"  {finding.code}: {visible(finding.message)}")


def _show_path(path: str) -> str:
    """A relpath as is; a transcript (absolute) by its file name, so the log does not carry
    the user's home directory."""
    p = PurePath(path)
    return f"transcript {p.name}" if p.is_absolute() else path


def event_line(event: DreamEvent) -> Text | None:
    """One line of the streaming log for ``event`` (``None`` for progress counts, which go to
    the bars)."""
    phase = getattr(event, "phase", None)
    tag = styled(f"{phase or 'dream':<11} ", style=PHASE_COLORS.get(phase or "", MUTED))
    match event:
        case PhaseStarted():
            return assemble(tag, ("▶ ", "bold"), (visible(event.title), "bold"))
        case PhaseFinished():
            return assemble(tag, (f"✔ {visible(event.summary)}", "$success"))
        case FileRead():
            return assemble(tag, (f"  read {visible(_show_path(event.path))} ({event.size:,} B)", MUTED))
        case Finding():
            where = f" {event.path}:{event.line}" if event.path and event.line else f" {event.path}" if event.path else ""
            return assemble(tag, ("  ● note", "$note"), (f"{visible(where)} ", "bold"), visible(event.message))
        case ProposedChange():
            return assemble(tag, "  ", action_badge(event.action), visible(f" {event.path} — {event.reason}"))
        case LogLine():
            return assemble(tag, (f"  {visible(event.text)}", LEVEL_STYLES.get(event.level, "")))
        case Progress():
            return None
    return assemble(tag, visible(str(event)))


class PhaseRow(Widget):
    """One phase: its name, a progress bar bound to ``done`` / ``total`` (``data_bind``, as
    Toolong binds its scan progress) and the phase's one-line state."""

    done: reactive[float] = reactive(0.0)
    total: reactive[float | None] = reactive(1.0)
    state: reactive[str] = reactive("waiting")

    def __init__(self, phase: Phase, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.phase = phase

    def compose(self) -> ComposeResult:
        yield Label(styled(self.phase, style=f"bold {PHASE_COLORS[self.phase]}"), classes="phase-name")
        yield ProgressBar(show_eta=False, classes="phase-bar").data_bind(progress=PhaseRow.done, total=PhaseRow.total)
        yield Static(styled(self.state, style=MUTED), classes="phase-state")

    def watch_state(self, state: str) -> None:
        if self.is_mounted:
            self.query_one(".phase-state", Static).update(styled(state, style=MUTED if state in ("waiting", "cancelled") else ""))

    def reset(self) -> None:
        """Back to waiting, bar empty."""
        self.total = 1.0
        self.done = 0.0
        self.state = "waiting"


# ----- a CLI release's own auto-dream (the claude flavor) ----------------------------------------

TRAP_STYLE = "bold $warning"
# Gates shown together on one line, by a short name (they rarely close; ``g`` details them).
_QUIET_GATES: dict[str, str] = {"remote": "local", "entrypoint": "interactive", "auto_memory": "auto memory", "read_block": "reads", "flag": "flag"}


def _gate_mark(gate: Gate) -> Text:
    return _mark(gate.ok)


def _lock_short(gate: Gate) -> str:
    d = gate.data
    if not d.get("exists"):
        return "free (no lock yet)"
    age = "" if d.get("age_s") is None else f", {span(float(d['age_s']))} old"
    if d.get("held"):
        return f"held by live PID {d.get('holder_pid')}{age}"
    return f"free (PID {d.get('holder_pid')} not running{age})" if d.get("holder_pid") is not None else f"free (no PID{age})"


def _org_short(gate: Gate) -> str:
    """The organization gate in a few words: nothing marked, the organization(s) marked (the
    details view says where), or a search that fails."""
    d = gate.data
    if d.get("state") == "failed":
        return "the search for organization sign-ins fails"
    orgs = d.get("organizations") or []
    if not orgs:
        return "no transcript marks an organization sign-in"
    if len(orgs) > 1:
        return f"past sessions of {len(orgs)} organizations (g)"
    return f"a past session signed in to {orgs[0][:8]}… (g)"


def _details(details: str, indent: str = "") -> Text:
    """The muted ``details:`` line under a plain sentence (internal names: a flag, a file)."""
    return styled(indent + visible(details_line(details)), style=MUTED)


def autodream_text(status: AutoDreamStatus, *, compact: bool = False) -> Text:
    """The release's gates in its order, one short line each: the quiet ones together (a
    closed one on its own line with its sentence and a ``details:`` line, unless the verdict
    line says that sentence), time, the throttle when closed, sessions, rules when closed, lock,
    the organization marks (a release with that gate);
    then the verdict in one line (with the ``details:`` line of the gate it names) and a line
    per trap the verdict does not already say (``g`` shows everything)."""
    lines: list[Text] = []
    row = Text()
    closed: list[Gate] = []
    blocking = status.blocking
    said = blocking if blocking is not None and blocking.never else None  # the verdict line says its sentence
    for g in status.gates:
        if g.id in _QUIET_GATES:
            if g.ok or g is said:
                row.append_text(assemble(_gate_mark(g), (_QUIET_GATES[g.id], MUTED if g.ok else CLOSED_STYLE), " "))
            else:
                closed.append(g)
    if row.plain:
        lines.append(row)
    for g in closed:
        lines.append(assemble(_gate_mark(g), (f"{_QUIET_GATES[g.id]:<9}", "bold"), visible(g.detail)))
        if g.details:
            lines.append(_details(g.details, " " * 11))
    t, c, s, r, k = (status.gate(i) for i in ("time", "throttle", "sessions", "permission_rule", "lock"))
    since = "never consolidated" if status.last_consolidated_at is None else f"{t.data['hours_since']:.1f} h since the last"
    lines.append(assemble(_gate_mark(t), ("time     ", "bold"), since, (f"  (min {status.min_hours:g} h)", MUTED)))
    if not c.ok:
        lines.append(assemble(_gate_mark(c), ("throttle ", "bold"), f"this process scanned < {minutes(c.data['interval_s'])} ago"))
    lines.append(assemble(_gate_mark(s), ("sessions ", "bold"), f"{s.data['count']} of {status.min_sessions:g} newer than the lock"))
    if not r.ok and r is not said:
        lines.append(assemble(_gate_mark(r), ("rules    ", "bold"), visible(r.detail)))
    lines.append(assemble(_gate_mark(k), ("lock     ", "bold"), _lock_short(k)))
    o = status.find_gate("organization")
    if o is not None:
        lines.append(assemble(_gate_mark(o), ("org      ", "bold"), visible(_org_short(o))))
    lines.append(styled(("▶ " if status.would_fire else "■ ") + visible(headline(status)), style=OK_STYLE if status.would_fire else "bold"))
    if said is not None and said.details:
        lines.append(_details(said.details, "  ").append(" — g for more", style=tone(MUTED)))
    for trap in status.traps:
        if said is not None and trap.data.get("gate") == said.id:
            continue  # the verdict line above says it
        hint = " — L resets the lock" if trap.code == "failed-dream" else " — g for details"
        lines.append(assemble(("⚠ ", TRAP_STYLE), (trap.title, TRAP_STYLE), (hint, MUTED)))
    return Text("\n").join(lines)


def _marks_text(gate: Gate) -> Text:
    """The organization gate's marks (file, line, organization) and the lines with the mark's
    type that are no mark, one a line."""
    out = Text()
    marks, total = gate.data.get("marks") or [], int(gate.data.get("marks_total") or 0)
    for m in marks:
        out.append(f"       marked: {visible(m['path'])} line {m['line']}: organization {visible(m['organization'])}\n", style=tone(MUTED))
    if total > len(marks):
        out.append(f"       and {total - len(marks)} more\n", style=tone(MUTED))
    for i in gate.data.get("ignored") or []:
        out.append(f"       no mark: {visible(i['path'])} line {i['line']} ({visible(i['why'])})\n", style=tone(MUTED))
    return out


def autodream_details(status: AutoDreamStatus) -> Text:
    """Every gate with its plain sentence, a ``details:`` line (its internal names and where its
    numbers came from), the organization gate's marks, when it opens and what the CLI does
    when it closes (the lock given back); the sessions the gate looked at (id, mtime, kind,
    counted or why not); the traps with their fix; the verdict."""
    r = status.release
    out = assemble((f"{r.cli} {r.version}'s auto-dream", "bold"), (" — the gates in the order it checks them, at the end of each interactive turn\n\n", MUTED))
    for i, g in enumerate(status.gates, 1):
        out.append_text(assemble(f"{i:>2}. ", _gate_mark(g), (g.title, "bold"), f"  {visible(g.detail)}\n"))
        if g.details or g.sources:
            out.append(f"       {visible(details_line(with_sources(g.details, g.sources)))}\n", style=tone(MUTED))
        if g.id == "organization":
            out.append_text(_marks_text(g))
        if not g.ok and g.opens:
            out.append(f"       opens: {visible(g.opens)}\n", style=tone("$warning"))
        if not g.ok and g.effect:
            out.append(f"       then: {visible(g.effect)}\n", style=tone(MUTED))
    counted = sum(1 for s in status.sessions if s.counted)
    out.append(f"\nSessions ({counted} counted of {len(status.sessions)}, directory order)\n", style=tone("bold"))
    for s in status.sessions:
        stamp = datetime.fromtimestamp(s.mtime, status.now.tzinfo or UTC).strftime("%Y-%m-%d %H:%M")
        kind = {"cli": "interactive", None: "?"}.get(s.entrypoint, s.entrypoint or "?")
        out.append_text(assemble(("  + " if s.counted else "  - ", OK_STYLE if s.counted else MUTED), visible(s.session_id), (f"  {stamp}  {visible(kind)}", MUTED),
                                      (f"  {visible(s.why)}" if s.why else "", MUTED), "\n"))
    for trap in status.traps:
        out.append_text(assemble(("\n⚠ " + visible(trap.title) + "\n", TRAP_STYLE), visible(trap.message) + "\n"))
        if trap.details:
            out.append(f"{visible(details_line(trap.details))}\n", style=tone(MUTED))
        if trap.fix:
            out.append(f"fix: {visible(trap.fix)}\n", style=tone("italic"))
    out.append_text(assemble("\n", (visible(status.verdict), "bold")))
    return out


def history_prompt(item: HistoryItem, now: datetime) -> Text:
    """One history item as a list option: when, who (memtui or the agent) and what, the files."""
    who = ("memtui", "bold $success") if item.who == "memtui" else ("agent", "bold $special")
    head = assemble(f" {item.kind:<10} ", who, f"  {when(item.time, now)}")
    files = ", ".join(visible(f) for f in item.files[:4]) + (f" +{len(item.files) - 4}" if len(item.files) > 4 else "")
    return assemble(head, "\n", f"  {visible(item.summary)}", (f" · {files}" if files else "", MUTED))


def history_detail(item: HistoryItem, diffs: list[FileDiff]) -> Text:
    """An item's lines, the notice its next turn carried, and each file's diff (or why none)."""
    out = assemble((visible(item.summary), "bold"), "\n")
    if item.session_id:
        out.append(f"session {visible(item.session_id)}\n", style=tone(MUTED))
    for rec in item.records:
        out.append(visible(f"{rec.line_type} at line {rec.line} of {PurePath(rec.transcript).name}") + "\n", style=tone(MUTED))
    if item.notice:
        out.append_text(assemble(("\nthe next turn was told:\n", "italic"), (visible_block(item.notice) + "\n", MUTED)))
    for d in diffs:
        if d.diff:
            out.append_text(assemble(("\n" + visible(d.relpath), "bold"), (f"  (from {visible(d.source)})\n", MUTED), visible_block(d.diff)))
        else:
            out.append_text(assemble(("\n" + visible(d.relpath), "bold"), (f"  {visible(d.note)}\n", MUTED)))
    return out
