"""``memtui hook stop``: extraction wired into an agent's Stop hook (docs/behaviour.md §7).

The agent runs the hook after every turn with a JSON object on stdin; Claude Code sends
``{"session_id", "transcript_path", "cwd", "hook_event_name": "Stop", "stop_hook_active", …}``
(only the first three are read). For the claude flavor each line also says what Claude Code's own extraction would do with the same
range (``cli``: its verdict and each gate, see ``memtui.core.extract.autoextract``). A Stop
hook must never block or fail the agent, so
:func:`run_stop_hook` never raises: every outcome, error included, becomes one JSON line in
memtui's hook log (``<state>/logs/hook.log``, rotated to ``hook.log.1`` past 1 MiB — memtui's
choice) and the command exits 0. Garbage input or a missing transcript writes nothing but that
log line: no cursor, no proposal, no memory.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from memtui.core.base.clock import system_now_or_wall
from memtui.core.base.jsontext import loads_checked
from memtui.core.writes.transaction import recover_at_start
from memtui.core.places.flavor import Flavor

# memtui's choices: the hook log's size before rotation, and the largest stdin accepted
# (hook input is a few hundred bytes; anything near this is not a hook payload).
LOG_MAX_BYTES = 1_048_576
MAX_INPUT_BYTES = 1_048_576


class HookInputError(ValueError):
    """The hook's stdin is not the JSON object an agent's Stop hook sends."""


@dataclass(frozen=True, slots=True)
class HookInput:
    """What the Stop hook says: ``session_id``, ``transcript_path`` and ``cwd`` (absolute;
    ``~`` expanded in ``transcript_path`` as Claude Code may send it)."""

    session_id: str
    transcript_path: Path
    cwd: Path


def parse_hook_input(data: bytes | str) -> HookInput:
    """Parse the hook's stdin. Raises ``HookInputError``: not UTF-8 JSON (or nested past
    ``MAX_JSON_DEPTH``), not an object, ``session_id``/``transcript_path``/``cwd`` missing, not
    non-empty strings, or relative paths."""
    if len(data) > MAX_INPUT_BYTES:
        raise HookInputError(f"input is {len(data):,} bytes; a hook payload is a small JSON object")
    try:
        obj = loads_checked(data)  # NaN or nesting past MAX_JSON_DEPTH: JSONInputError, never RecursionError
    except ValueError as exc:
        raise HookInputError(f"input is not JSON ({exc})") from None
    if not isinstance(obj, dict):
        raise HookInputError(f"input is a JSON {type(obj).__name__}, not an object")
    values: dict[str, str] = {}
    for key in ("session_id", "transcript_path", "cwd"):
        value = obj.get(key)
        if not isinstance(value, str) or not value.strip() or "\0" in value:
            raise HookInputError(f"`{key}` is missing or not a non-empty string")
        values[key] = value
    transcript = Path(os.path.expanduser(values["transcript_path"]))
    cwd = Path(values["cwd"])
    if not transcript.is_absolute() or not cwd.is_absolute():
        raise HookInputError("`transcript_path` and `cwd` must be absolute paths")
    return HookInput(values["session_id"], transcript, cwd)


def hook_log_path(state_dir: Path) -> Path:
    """``<state>/logs/hook.log``."""
    return state_dir / "logs" / "hook.log"


def log_hook(state_dir: Path, now: datetime, level: str, message: str, **fields: Any) -> None:
    """Append one JSON line ``{"time", "level", "message", **fields}`` to the hook log, rotating
    it past ``LOG_MAX_BYTES``. Never raises (a hook with no writable state dir stays silent)."""
    path = hook_log_path(state_dir)
    line = json.dumps({"time": now.isoformat(), "level": level, "message": message, **fields}, ensure_ascii=False, default=str)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.exists() and path.stat().st_size > LOG_MAX_BYTES:
            os.replace(path, path.with_name(path.name + ".1"))
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(line + "\n")
    except OSError:
        pass


@dataclass(frozen=True, slots=True)
class HookOutcome:
    """What the hook did: ``status`` (``bad-input``, ``no-transcript``, ``disabled``,
    ``skipped``, ``extracted``, ``detached``, ``error``) and the logged ``message``."""

    status: str
    message: str


def check_hook_input(data: bytes, state_dir: Path, now: datetime) -> HookInput | HookOutcome:
    """The parsed input, or the outcome (already logged) when it is garbage or names a
    transcript that is not a file. Never raises."""
    try:
        hook = parse_hook_input(data)
    except HookInputError as exc:
        log_hook(state_dir, now, "error", f"bad hook input: {exc}", input_head=data[:200].decode("utf-8", "replace"))
        return HookOutcome("bad-input", str(exc))
    if not hook.transcript_path.is_file():
        message = f"transcript {hook.transcript_path} does not exist"
        log_hook(state_dir, now, "error", message, session_id=hook.session_id)
        return HookOutcome("no-transcript", message)
    return hook


def run_stop_hook(
    data: bytes,
    *,
    flavor: Flavor,
    state_dir: Path,
    now: datetime,
    extractor: str = "auto",
    apply: bool = False,
    memory_dir: Path | None = None,
    environ: Mapping[str, str] | None = None,
) -> HookOutcome:
    """Run one extraction for the Stop hook payload ``data`` and log the outcome. The memory
    dir is resolved for the payload's ``cwd`` (``memory_dir`` overrides). Skips (logged) when
    auto memory is off for that project. Never raises."""
    checked = check_hook_input(data, state_dir, now)
    if isinstance(checked, HookOutcome):
        return checked
    hook = checked
    ctx = {"session_id": hook.session_id, "transcript": str(hook.transcript_path)}
    try:
        from memtui.core.extract.engine import explain_extraction, extract
        from memtui.core.places.locations import resolve_locations
        from memtui.core.places.release import release_of

        project = hook.cwd if hook.cwd.is_dir() else None
        if project is None and memory_dir is None:
            message = f"cwd {hook.cwd} is not a directory; cannot tell which memory dir to use"
            log_hook(state_dir, now, "error", message, **ctx)
            return HookOutcome("error", message)
        loc = resolve_locations(flavor, project, memory_dir=memory_dir, environ=environ)
        for recovered in recover_at_start(state_dir, loc.memory_dir):  # a memtui start like any other
            log_hook(state_dir, now, "warning", recovered, **ctx)
        if not loc.auto_memory_enabled:
            message = f"auto memory is off for {loc.project_root} ({loc.auto_memory_source}); nothing extracted"
            log_hook(state_dir, now, "info", message, **ctx)
            return HookOutcome("disabled", message)
        release = release_of(loc.flavor)
        if release is not None:
            explained = explain_extraction(hook.transcript_path, loc, state_dir)
            if explained is not None:
                ctx = {**ctx, "cli": {"would_extract": explained.would_extract, "verdict": explained.verdict,
                                      "gates": {g.id: g.ok for g in explained.gates}}}
        result = extract(hook.transcript_path, loc.memory_dir, state_dir, now,
                         extractor=extractor, apply=apply, environ=environ, release=release)  # type: ignore[arg-type]
    except Exception as exc:  # noqa: BLE001 - the hook contract: log every failure, never raise
        message = f"{type(exc).__name__}: {exc}"
        log_hook(state_dir, now, "error", message, **ctx)
        return HookOutcome("error", message)
    if result.skipped:
        log_hook(state_dir, now, "info", f"skipped: {result.skipped}", **ctx, cursor=result.cursor)
        return HookOutcome("skipped", result.skipped)
    message = (f"{result.extractor}: {len(result.added)} new proposal(s) in the inbox" if not apply
               else f"{result.extractor}: wrote {len(result.written)} memory file(s)")
    log_hook(state_dir, now, "info", message, **ctx, cursor=result.cursor, proposals=list(result.added),
             written=list(result.written), notes=list(result.notes))
    return HookOutcome("extracted", message)


def stop_hook(
    read_input: Callable[[], bytes],
    *,
    flavor: Flavor,
    state_dir: Path,
    wait: bool,
    detach: Callable[[bytes], None],
    extractor: str = "auto",
    apply: bool = False,
    memory_dir: Path | None = None,
    environ: Mapping[str, str] | None = None,
) -> HookOutcome:
    """The Stop hook from its stdin to its outcome. Never raises; every outcome is logged.

    ``read_input`` returns the hook's stdin (a failure to read it is logged); ``wait``: extract
    now (``run_stop_hook``); else the input is checked here (garbage and missing transcripts end
    the hook) and ``detach(data)`` hands it to a background process, so the agent never waits
    (an ``OSError`` from it is logged). The time is ``MEMTUI_NOW`` when set and usable, else
    the wall clock (an unusable ``MEMTUI_NOW`` is logged)."""
    now, clock_error = system_now_or_wall(environ)
    if clock_error is not None:
        log_hook(state_dir, now, "warning", f"MEMTUI_NOW: {clock_error}; the wall clock is used")
    try:
        data = read_input()
    except (OSError, ValueError) as exc:
        message = f"cannot read stdin: {exc}"
        log_hook(state_dir, now, "error", message)
        return HookOutcome("error", message)
    if wait:
        return run_stop_hook(data, flavor=flavor, state_dir=state_dir, now=now, extractor=extractor, apply=apply,
                             memory_dir=memory_dir, environ=environ)
    checked = check_hook_input(data, state_dir, now)
    if isinstance(checked, HookOutcome):
        return checked
    try:
        detach(data)
    except OSError as exc:
        message = f"cannot start the background extraction: {exc}"
        log_hook(state_dir, now, "error", message)
        return HookOutcome("error", message)
    return HookOutcome("detached", f"extracting {checked.session_id} in the background")
