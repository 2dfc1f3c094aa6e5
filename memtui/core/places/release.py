"""What one release of an agent CLI does in the background, as data (the claude flavor's
Claude Code 2.1.332 and 2.1.328): the flags and settings that gate its dream and its extraction,
their defaults, the lock, the prompts it sends and the notices it writes.

The facts live in ``release_data/<name>/`` inside the package (``background.json`` and the
prompt templates), each read from the CLI's own requests and the JavaScript of its binary (the
captures the tests compare against are under ``tests/captures/<name>/``). A release may name the
one it ``extends`` in its ``background.json``: its facts are then that release's with its own
merged over them (key by key, objects recursively), and a template it does not hold is the
older release's. A template's ``{{slot}}`` is filled by :func:`fill`; the file's final newline is
not part of the template.

A flavor names its release (``Flavor.release``); the seed's ``agent`` flavor has none and keeps
its own design.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

from memtui.core.places.flavor import Flavor

_SLOT = re.compile(r"\{\{([a-z_]+)\}\}")


class ReleaseDataError(LookupError):
    """A release's data is missing or a template slot was left unfilled."""


@dataclass(frozen=True, slots=True)
class OrganizationGate:
    """The auto-dream's organization gate (Claude Code 2.1.332, SPEC §13.1), checked after the
    lock is taken: the CLI's bundled ripgrep searches every file matching ``glob`` under the
    project's transcripts dir (recursively, hidden files too, no ignore files, bytes as text)
    for the byte-literal ``needle``, within ``timeout_s`` seconds. A matching line is a mark when
    it parses as a JSON object whose ``type`` is ``mark_type`` and whose ``organization_key``
    is a UUID (compared lowercased). Any mark the session cannot claim skips the dream with
    ``skip_other``; a failed search skips it with ``skip_failed`` after ``failed_log``
    (``{why}``); either skip logs ``skip_log`` (``{reason}``) and the event ``skip_event``, and
    the lock is rolled back (the prior mtime restored, the body emptied; a lock that was new is
    deleted)."""

    needle: str
    glob: str
    mark_type: str
    organization_key: str
    timeout_s: float
    skip_other: str
    skip_failed: str
    failed_log: str
    skip_log: str
    skip_event: str


@dataclass(frozen=True, slots=True)
class DreamFacts:
    """The auto-dream of one release. ``flag``: the feature flag (``enabled`` / ``available``,
    ``minHours`` / ``minSessions`` overrides); ``setting``: the settings key that decides when
    set; ``min_hours`` / ``min_sessions``: the defaults; ``scan_interval_s``: the per-process
    scan throttle; ``lock_stale_s``: the lock's holder-alive window; ``sdk_entrypoints``: the
    ``CLAUDE_CODE_ENTRYPOINT`` values that never dream (``-p`` is ``sdk-cli``);
    ``read_block_setting``: the settings key path of the read block; ``max_tokens`` of its
    request; ``denial_shell`` / ``denial_tool``: its permission refusals (``{memory_dir}``);
    ``protected_subdirs``: where ``rm`` is refused; ``saved_verb``: of its ``memory_saved``;
    ``organization_gate``: the gate on other organizations' marks (``None``: the release has
    none)."""

    flag: str
    setting: str
    min_hours: float
    min_sessions: int
    scan_interval_s: float
    lock_stale_s: float
    lock_file: str
    sdk_entrypoints: tuple[str, ...]
    read_block_setting: tuple[str, ...]
    max_tokens: int
    sessions_heading: str
    denial_shell: str
    denial_tool: str
    protected_subdirs: tuple[str, ...]
    saved_verb: str
    organization_gate: OrganizationGate | None = None


@dataclass(frozen=True, slots=True)
class ExtractFacts:
    """The auto-memory extraction of one release: ``flag`` (on at all), ``noninteractive_flag``
    (also under ``-p``), ``every_n_turns_flag`` (default ``every_n_turns_default``),
    ``min_prose_words`` (the prose gate), ``max_turns`` of the fork, ``hosted_env`` (variables
    of the hosted mode), ``existing_memories_block`` (``{manifest}``)."""

    flag: str
    noninteractive_flag: str
    every_n_turns_flag: str
    every_n_turns_default: int
    min_prose_words: int
    max_turns: int
    hosted_env: tuple[str, ...]
    existing_memories_block: str


@dataclass(frozen=True, slots=True)
class Release:
    """One CLI release: ``name`` (``claude-2.1.332``), ``cli`` and ``version`` for people,
    ``main_model_default`` (the main loop's model when settings name none; the dream and the
    extraction are forks of it), ``global_config`` (file name below the home, the flag cache's
    home) and ``flag_cache_key``, the dream and extraction facts, and the ``memory_update``
    notice's parts."""

    name: str
    cli: str
    version: str
    main_model_default: str
    global_config: str
    flag_cache_key: str
    dream: DreamFacts
    extract: ExtractFacts
    memory_update: dict[str, Any]

    def template(self, name: str) -> str:
        """The text of ``release_data/<release>/<name>`` without its final newline. Raises
        ``ReleaseDataError`` when absent."""
        return _text(self.name, name)

    def memory_section(self, memory_dir: str) -> str:
        """The ``# Memory`` section of the release's system prompt (auto memory on, recall
        off) for ``memory_dir`` as the CLI writes it (see :func:`dir_text`): what its dream
        and extraction prompts call "the Memory section of your system prompt"."""
        return fill(self.template("memory_section.txt"), memory_dir=memory_dir)

    def denials(self, memory_dir: str) -> dict[str, str]:
        """The refusal texts of its memory agents for ``memory_dir`` (``{"shell", "tool"}``)."""
        return {"shell": self.dream.denial_shell.format(memory_dir=memory_dir), "tool": self.dream.denial_tool.format(memory_dir=memory_dir)}


def _root(name: str) -> Any:
    return resources.files("memtui.core.places").joinpath("release_data", name)


def _own_text(release: str, name: str) -> str | None:
    try:
        text = _root(release).joinpath(name).read_text(encoding="utf-8")
    except (FileNotFoundError, OSError):
        return None
    return text[:-1] if text.endswith("\n") else text


@cache
def _text(release: str, name: str) -> str:
    """The release's own ``name``, else the one of the release it extends (and so on)."""
    seen: list[str] = []
    current: str | None = release
    while current is not None and current not in seen:
        seen.append(current)
        text = _own_text(current, name)
        if text is not None:
            return text
        current = _facts(current).get("extends")
    raise ReleaseDataError(f"release {release}: no {name}")


def _merged(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in over.items():
        out[key] = _merged(out[key], value) if isinstance(value, dict) and isinstance(out.get(key), dict) else value
    return out


@cache
def _facts(name: str, _within: tuple[str, ...] = ()) -> dict[str, Any]:
    """The release's ``background.json``, merged over the one of the release it extends."""
    raw = _own_text(name, "background.json")
    if raw is None:
        raise ReleaseDataError(f"release {name}: no background.json")
    try:
        data = json.loads(raw)
    except ValueError as exc:
        raise ReleaseDataError(f"release {name}: background.json is not JSON: {exc}") from exc
    base = data.get("extends")
    if base is None:
        return data
    if base in _within or base == name:
        raise ReleaseDataError(f"release {name}: extends itself through {base}")
    return _merged(_facts(base, (*_within, name)), data)


@cache
def load_release(name: str) -> Release:
    """The release called ``name`` (a folder of ``release_data``). Raises ``ReleaseDataError``."""
    data = _facts(name)
    d, x = data["dream"], data["extract"]
    org = d.get("organization_gate")
    dream = DreamFacts(
        d["flag"], d["setting"], float(d["min_hours"]), int(d["min_sessions"]), float(d["scan_interval_s"]),
        float(d["lock_stale_s"]), d["lock_file"], tuple(d["sdk_entrypoints"]), tuple(d["read_block_setting"]),
        int(d["max_tokens"]), d["sessions_heading"], d["denial_shell"], d["denial_tool"], tuple(d["protected_subdirs"]),
        d["saved_verb"],
        None if org is None else OrganizationGate(
            org["needle"], org["glob"], org["mark_type"], org["organization_key"], float(org["timeout_s"]),
            org["skip_other"], org["skip_failed"], org["failed_log"], org["skip_log"], org["skip_event"],
        ),
    )
    extract = ExtractFacts(
        x["flag"], x["noninteractive_flag"], x["every_n_turns_flag"], int(x["every_n_turns_default"]),
        int(x["min_prose_words"]), int(x["max_turns"]), tuple(x["hosted_env"]), x["existing_memories_block"],
    )
    return Release(name, data["cli"], data["version"], data["main_model_default"], data["global_config"],
                   data["flag_cache_key"], dream, extract, data["memory_update"])


def dir_text(path: object) -> str:
    """A directory as the CLI writes its memory dir in prompts: absolute, one final ``/``."""
    return str(path).rstrip("/") + "/"


def release_of(flavor: Flavor) -> Release | None:
    """The release ``flavor`` follows, or ``None`` (the seed design's flavor)."""
    return None if flavor.release is None else load_release(flavor.release)


def fill(template: str, **slots: str) -> str:
    """``template`` with every ``{{name}}`` replaced by ``slots[name]``, in one pass (a value
    holding ``{{`` is text, not a slot). Raises ``ReleaseDataError`` when a slot has no value or
    a value is given for no slot."""
    found = set(_SLOT.findall(template))
    if missing := sorted(found - slots.keys()):
        raise ReleaseDataError(f"unfilled slot(s): {', '.join(missing)}")
    if extra := sorted(slots.keys() - found):
        raise ReleaseDataError(f"the template has no slot(s): {', '.join(extra)}")
    return _SLOT.sub(lambda m: slots[m.group(1)], template)
