"""Which release of the agent the user runs, and the release profile memtui models for it.

The releases memtui models are data (``memtui.core.places.flavor.PROFILES``). The user's own
version is asked of the agent's command (``claude --version``) when it is on ``PATH`` — the
program the next session runs — else read from the newest transcript line that carries a
``version`` field (the agent writes it on every message line). :func:`choose_release` picks the
profile from it (``memtui.core.places.profiles``); :func:`check_version` says when the version
found has no profile of its own.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from memtui.core.base.jsontext import JSONInputError, loads_checked
from memtui.core.base.safe_read import open_regular
from memtui.core.places.autoflavor import FlavorChoice
from memtui.core.places.locations import Locations, resolve_locations
from memtui.core.places.profiles import Detected, pick_profile

from .transcripts import list_sessions

# How much of a transcript's end is read to find its newest `version` (lines are a few KB).
TAIL_BYTES = 256 * 1024
# memtui's bound on asking the agent's command for its version.
COMMAND_TIMEOUT_S = 5.0
# A version as the agent prints it: each number at most 9 digits (a longer one is no version).
_VERSION = re.compile(r"(?<!\d)\d{1,9}\.\d{1,9}\.\d{1,9}(?!\d)(?:[-+.][0-9A-Za-z.-]{1,64})?")
# The most of the version command's output memtui reads (a version line is ~25 bytes).
COMMAND_OUTPUT_BYTES = 4096


@dataclass(frozen=True, slots=True)
class VersionCheck:
    """``modelled``: the version memtui models (``None`` when the release has none);
    ``installed``: the user's version when found, with ``source`` (a transcript's path or the
    command run); ``differs``: both are known and not equal; ``notice``: a sentence for a person
    when they differ (else ``None``)."""

    modelled: str | None
    installed: str | None = None
    source: str | None = None

    @property
    def differs(self) -> bool:
        """Both versions are known and not the same."""
        return self.modelled is not None and self.installed is not None and self.installed != self.modelled

    @property
    def notice(self) -> str | None:
        """What to tell the user when the versions differ."""
        if not self.differs:
            return None
        return (
            f"you run version {self.installed} ({self.source}); memtui models {self.modelled}: "
            "what it computes may differ where the agent changed since"
        )

    def to_json(self) -> dict[str, str | bool | None]:
        """``{modelled, installed, source, differs}``."""
        return {"modelled": self.modelled, "installed": self.installed, "source": self.source, "differs": self.differs}


def _tail_version(path: Path) -> str | None:
    try:
        fh, _ = open_regular(path)  # a transcript that is a FIFO or a device: never read
        with fh:
            size = fh.seek(0, os.SEEK_END)
            fh.seek(max(0, size - TAIL_BYTES))
            data = fh.read()
    except OSError:
        return None
    for line in reversed(data.split(b"\n")):
        if b'"version"' not in line:
            continue
        try:
            obj = loads_checked(line)
        except JSONInputError:  # not JSON, not UTF-8, nested too deep: the line says nothing
            continue
        value = obj.get("version") if isinstance(obj, dict) else None
        if isinstance(value, str) and _VERSION.fullmatch(value):
            return value
    return None


def transcript_version(locations: Locations) -> tuple[str, Path] | None:
    """The ``version`` of the newest transcript line of this project's sessions, else of the
    newest session of any project; ``None`` when no transcript says."""
    for session in list_sessions(locations.sessions_dir):
        found = _tail_version(session.path)
        if found:
            return found, session.path
    projects = locations.user_base_dir / "projects"
    try:
        dirs = [Path(e.path) for e in os.scandir(projects) if e.is_dir()]
    except OSError:
        return None
    newest = sorted((s for d in dirs for s in list_sessions(d)), key=lambda s: -s.mtime)
    for session in newest[:20]:
        found = _tail_version(session.path)
        if found:
            return found, session.path
    return None


def command_version(command: tuple[str, ...], environ: Mapping[str, str] | None = None) -> str | None:
    """What ``command`` (e.g. ``claude --version``) prints as its version, when the program is
    on ``PATH``; ``None`` otherwise or on any failure. memtui waits at most ``COMMAND_TIMEOUT_S``
    and reads at most ``COMMAND_OUTPUT_BYTES`` of its output (undecodable bytes read as U+FFFD),
    then stops the program."""
    env = dict(os.environ if environ is None else environ)
    program = shutil.which(command[0], path=env.get("PATH"))
    if program is None:
        return None
    try:
        proc = subprocess.Popen([program, *command[1:]], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL, env=env)
    except (OSError, ValueError):
        return None
    out = bytearray()
    reader = threading.Thread(target=_read_some, args=(proc, out), daemon=True)
    reader.start()
    reader.join(COMMAND_TIMEOUT_S)
    if proc.poll() is None:  # still running: it printed too much, or hangs
        proc.kill()
    try:
        proc.wait(1.0)
    except subprocess.TimeoutExpired:
        pass
    reader.join(1.0)
    m = _VERSION.search(bytes(out[:COMMAND_OUTPUT_BYTES]).decode("utf-8", errors="replace"))
    return m.group(0) if m else None


def _read_some(proc: subprocess.Popen[bytes], out: bytearray) -> None:
    """Read ``proc``'s output until it ends or ``COMMAND_OUTPUT_BYTES`` are in ``out``, then
    stop the program (it has said all memtui reads)."""
    assert proc.stdout is not None
    try:
        while len(out) < COMMAND_OUTPUT_BYTES:
            chunk = proc.stdout.read1(COMMAND_OUTPUT_BYTES - len(out))
            if not chunk:
                return
            out += chunk
        proc.kill()
    except (OSError, ValueError):
        return
    finally:
        try:
            proc.stdout.close()
        except OSError:
            pass


def detect_version(locations: Locations, *, ask_command: bool = True, environ: Mapping[str, str] | None = None) -> Detected | None:
    """The version of the agent the user runs: what its command prints (when ``ask_command``
    and the release has one on ``PATH``), else the newest transcript's; ``None`` when neither
    says."""
    release = locations.flavor.behaviour
    if ask_command and release.version_command is not None:
        value = command_version(release.version_command, environ)
        if value is not None:
            return Detected(value, "command", " ".join(release.version_command))
    found = transcript_version(locations)
    if found is not None:
        return Detected(found[0], "transcript", str(found[1]))
    return None


def check_version(
    locations: Locations,
    *,
    ask_command: bool = True,
    environ: Mapping[str, str] | None = None,
    detected: Detected | None = None,
) -> VersionCheck:
    """The modelled release's version against the user's (``detected`` when already known,
    else :func:`detect_version`)."""
    release = locations.flavor.behaviour
    if release.version is None:
        return VersionCheck(None)
    found = detected if detected is not None else detect_version(locations, ask_command=ask_command, environ=environ)
    if found is None:
        return VersionCheck(release.version)
    source = f"transcript {found.where}" if found.source == "transcript" else found.where
    return VersionCheck(release.version, found.version, source)


def choose_release(
    choice: FlavorChoice,
    project: Path | None = None,
    *,
    given: str | None = None,
    environ: Mapping[str, str] | None = None,
    ask_command: bool = True,
) -> FlavorChoice:
    """``choice`` with its flavor at the release profile to model (``pick_profile``: ``given``
    as ``--release``, else ``$MEMTUI_RELEASE``, else the version detected for the project at
    ``project``, else the newest) and ``release`` saying why. Raises
    ``memtui.core.places.profiles.UnknownReleaseError`` for a name that is no profile."""

    def detect() -> Detected | None:
        return detect_version(resolve_locations(choice.flavor, project, environ=environ), ask_command=ask_command, environ=environ)

    flavor, release = pick_profile(choice.flavor, given=given, environ=environ, detect=detect)
    return choice.at_release(flavor, release)
