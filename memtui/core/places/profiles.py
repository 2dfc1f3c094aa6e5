"""Which release profile of a flavor memtui models, and why.

A flavor may ship as several releases, each a profile (``memtui.core.places.flavor.PROFILES``:
Claude Code 2.1.328 and 2.1.332 for the ``claude`` flavor; the seed design alone for
``agent``). The profile is the one named with ``--release`` (or ``$MEMTUI_RELEASE``), else the
one matching the version the user runs — asked of ``claude --version`` when it is on ``PATH``,
else read from the newest transcript — else the newest profile. A version with no profile of
its own gets the newest profile not newer than it (the behaviour it has is that release's,
plus changes memtui does not know yet), or the oldest profile when it is older than all.

Detecting the version reads files and runs a program; that lives in
``memtui.core.sessions.version.choose_release``, which calls :func:`pick_profile` here.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Literal

from memtui.core.places.flavor import PROFILES, Flavor

ReleaseSource = Literal["flag", "env", "command", "transcript", "newest", "only"]

# The variable that names a release profile, as ``--release`` does.
RELEASE_ENV = "MEMTUI_RELEASE"
# ``--release`` accepts a profile's version, its folder name (``claude-2.1.328``) or this.
AUTO = "auto"

# Each number at most 9 digits: a longer run is no version (and would cost int() its time).
_VERSION = re.compile(r"(?<!\d)(\d{1,9})\.(\d{1,9})\.(\d{1,9})(?!\d)")


class UnknownReleaseError(ValueError):
    """``--release`` (or ``$MEMTUI_RELEASE``) names no profile of the flavor."""


@dataclass(frozen=True, slots=True)
class Detected:
    """A version of the agent found on this machine: ``version`` (``2.1.332``), ``source``
    (``"command"``: what ``claude --version`` printed; ``"transcript"``: the newest transcript
    line's ``version``) and ``where`` (the command run, or the transcript's path)."""

    version: str
    source: Literal["command", "transcript"]
    where: str


@dataclass(frozen=True, slots=True)
class ReleaseChoice:
    """The profile chosen and why: ``version`` of the profile (``None`` for a flavor with no
    releases), ``source`` (``flag``, ``env``, ``command``, ``transcript``, ``newest`` when nothing
    said, ``only`` when the flavor has a single profile), ``reason`` (one short line for a
    person), ``detected``: the version found on this machine when one was looked for and found."""

    version: str | None
    source: ReleaseSource
    reason: str
    detected: Detected | None = None

    def to_json(self) -> dict[str, str | None]:
        """``{profile, source, reason, detected, detected_source, detected_where}``."""
        found = self.detected
        return {
            "profile": self.version,
            "source": self.source,
            "reason": self.reason,
            "detected": found.version if found else None,
            "detected_source": found.source if found else None,
            "detected_where": found.where if found else None,
        }


def version_key(version: str) -> tuple[int, int, int] | None:
    """``(major, minor, patch)`` of a version string (``2.1.332 (Claude Code)`` reads as
    ``(2, 1, 332)``), ``None`` when it holds no such triple."""
    m = _VERSION.search(version)
    return None if m is None else (int(m.group(1)), int(m.group(2)), int(m.group(3)))


def profiles(flavor: Flavor) -> tuple[Flavor, ...]:
    """The flavor's release profiles, oldest first (``(flavor,)`` when it has no others)."""
    return PROFILES.get(flavor.name, (flavor,))


def profile_versions(flavor: Flavor) -> tuple[str, ...]:
    """The versions that have a profile, oldest first (empty for the seed design)."""
    return tuple(p.behaviour.version for p in profiles(flavor) if p.behaviour.version)


def profile_named(flavor: Flavor, name: str, source: str = "--release") -> Flavor:
    """The profile called ``name``: its version (``2.1.328``) or its release folder
    (``claude-2.1.328``). Raises ``UnknownReleaseError`` naming ``source`` (where the name came
    from) and the known ones."""
    wanted = name.strip().lower()
    for profile in profiles(flavor):
        if wanted in {profile.behaviour.version, profile.release}:
            return profile
    known = ", ".join(profile_versions(flavor)) or "none"
    raise UnknownReleaseError(f"{source} {name!r}: no such release profile for the {flavor.name} flavor (known: {known}, or auto)")


def profile_for_version(flavor: Flavor, version: str) -> Flavor:
    """The profile that models ``version``: its own, else the newest one older than it, else
    the oldest (a version with no ``x.y.z`` gets the newest profile)."""
    ordered = profiles(flavor)
    key = version_key(version)
    if key is None:
        return ordered[-1]
    chosen = ordered[0]
    for profile in ordered:
        own = version_key(profile.behaviour.version or "")
        if own is not None and own <= key:
            chosen = profile
    return chosen


def pick_profile(
    flavor: Flavor,
    *,
    given: str | None = None,
    environ: Mapping[str, str] | None = None,
    detect: Callable[[], Detected | None] = lambda: None,
) -> tuple[Flavor, ReleaseChoice]:
    """The profile of ``flavor`` to model and why: ``given`` (``--release``), else
    ``$MEMTUI_RELEASE``, else the version ``detect`` finds, else the newest. ``auto`` (or
    empty) in either means "detect". ``detect`` is called at most once, and only when the
    flavor has more than one profile. Raises ``UnknownReleaseError`` for a name that is no
    profile."""
    env = os.environ if environ is None else environ
    ordered = profiles(flavor)
    if len(ordered) == 1:
        only = ordered[0]
        return only, ReleaseChoice(only.behaviour.version, "only", "")
    for value, source, label in ((given, "flag", "--release "), (env.get(RELEASE_ENV), "env", f"{RELEASE_ENV}=")):
        name = (value or "").strip()
        if not name or name.lower() == AUTO:
            continue
        profile = profile_named(flavor, name, label.rstrip(" ="))
        return profile, ReleaseChoice(profile.behaviour.version, source, f"{label}{name}")  # type: ignore[arg-type]
    found = detect()
    newest = ordered[-1]
    if found is None:
        command = newest.behaviour.version_command
        asked = f"no `{command[0]}` on PATH and " if command else ""
        return newest, ReleaseChoice(newest.behaviour.version, "newest", f"{asked}no transcript names a version: the newest profile")
    profile = profile_for_version(flavor, found.version)
    said = f"`{found.where}` says {found.version}" if found.source == "command" else f"the newest transcript says {found.version}"
    own = profile.behaviour.version
    if own == found.version:
        reason = said
    elif profile is newest and (version_key(found.version) or (0, 0, 0)) > (version_key(own or "") or (0, 0, 0)):
        reason = f"{said}; the newest profile is {own}"
    elif profile is ordered[0] and (version_key(found.version) or (0, 0, 0)) < (version_key(own or "") or (0, 0, 0)):
        reason = f"{said}; the oldest profile is {own}"
    else:
        reason = f"{said}; the newest profile not newer than it is {own}"
    return profile, ReleaseChoice(own, found.source, reason, found)
