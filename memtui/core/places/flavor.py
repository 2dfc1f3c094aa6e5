"""Flavors: the names one memory system ships under (docs/behaviour.md §1).

The seed design names its files ``AGENT.md`` / ``.agent/``; Claude Code ships the same system
as ``CLAUDE.md`` / ``.claude/``. Every path memtui computes goes through a ``Flavor``.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path

from memtui.core.places.behaviour import Behaviour
from memtui.core.places.releases.claude_code import CLAUDE_CODE, CLAUDE_CODE_2_1_328
from memtui.core.places.releases.seed import SEED


class UnknownFlavorError(ValueError):
    """A flavor name other than ``agent`` or ``claude`` was asked for."""


@dataclass(frozen=True, slots=True)
class Flavor:
    """The file and variable names of one flavor (docs/behaviour.md §1 table), and how the agent it models
    behaves with its memory (``behaviour``, ``memtui.core.places.behaviour``): every difference
    between flavors in loading, reading and recalling memory is a field there, read as data."""

    name: str
    instruction_file: str  # AGENT.md
    local_file: str  # AGENT.local.md
    dot_dir: str  # .agent
    user_base_dirname: str  # .agent, below HOME
    config_dir_env: str  # AGENT_CONFIG_DIR
    managed_dirs: Mapping[str, str]  # sys.platform prefix -> managed (policy) dir
    memory_dir_env: str  # AGENT_MEMORY_DIR
    disable_auto_memory_env: str  # AGENT_DISABLE_AUTO_MEMORY
    excludes_key: str  # agentMdExcludes
    external_import_flag: str | None  # claude: key in ~/.claude.json
    behaviour: Behaviour  # what the modelled agent does with the files (data)
    # The CLI release whose background work (dream, extraction) this flavor follows: a folder
    # of memtui/core/places/release_data (None: the seed design's own rules).
    release: str | None = None
    # The variable that names the project dir instead of the slug while ``config_dir_env`` is
    # set (Claude Code 2.1.328 and 2.1.332, the same code in both bundles:
    # ``CLAUDE_CODE_PROJECT_DIR_NAME``, a name matching ``locations.PROJECT_DIR_NAME``; captured in
    # tests/captures/claude-2.1.332/stores/project_dir_name).
    project_dir_name_env: str | None = None

    def user_base_dir(self, environ: Mapping[str, str] | None = None) -> Path:
        """``<base>``: ``$AGENT_CONFIG_DIR`` (resp. ``$CLAUDE_CONFIG_DIR``) else ``$HOME/.agent``."""
        env = os.environ if environ is None else environ
        override = env.get(self.config_dir_env)
        if override:
            return Path(override).expanduser()
        return home_dir(env) / self.user_base_dirname

    def managed_dir(self, environ: Mapping[str, str] | None = None, platform: str | None = None) -> Path:
        """The managed (policy) dir for this OS; ``$MEMTUI_MANAGED_DIR`` overrides it.

        ``MEMTUI_MANAGED_DIR`` exists for tests and unusual installs (docs/behaviour.md §1 lists the OS paths).
        """
        env = os.environ if environ is None else environ
        override = env.get("MEMTUI_MANAGED_DIR")
        if override:
            return Path(override)
        plat = sys.platform if platform is None else platform
        for prefix in ("darwin", "win32"):
            if plat.startswith(prefix):
                return Path(self.managed_dirs[prefix])
        return Path(self.managed_dirs["linux"])


def home_dir(environ: Mapping[str, str] | None = None) -> Path:
    """The user's home: ``$HOME`` when set (tests point it at ``tmp_path``), else ``Path.home()``."""
    env = os.environ if environ is None else environ
    home = env.get("HOME") or env.get("USERPROFILE")
    return Path(home) if home else Path.home()


AGENT = Flavor(
    name="agent",
    instruction_file="AGENT.md",
    local_file="AGENT.local.md",
    dot_dir=".agent",
    user_base_dirname=".agent",
    config_dir_env="AGENT_CONFIG_DIR",
    managed_dirs={
        "linux": "/etc/agent",
        "darwin": "/Library/Application Support/Agent",
        "win32": "C:\\Program Files\\Agent",
    },
    memory_dir_env="AGENT_MEMORY_DIR",
    disable_auto_memory_env="AGENT_DISABLE_AUTO_MEMORY",
    excludes_key="agentMdExcludes",
    external_import_flag=None,
    behaviour=SEED,
)

CLAUDE = Flavor(
    name="claude",
    instruction_file="CLAUDE.md",
    local_file="CLAUDE.local.md",
    dot_dir=".claude",
    user_base_dirname=".claude",
    config_dir_env="CLAUDE_CONFIG_DIR",
    managed_dirs={
        "linux": "/etc/claude-code",
        "darwin": "/Library/Application Support/ClaudeCode",
        "win32": "C:\\Program Files\\ClaudeCode",
    },
    memory_dir_env="CLAUDE_COWORK_MEMORY_PATH_OVERRIDE",
    disable_auto_memory_env="CLAUDE_CODE_DISABLE_AUTO_MEMORY",
    excludes_key="claudeMdExcludes",
    external_import_flag="hasClaudeMdExternalIncludesApproved",
    behaviour=CLAUDE_CODE,
    release="claude-2.1.332",
    project_dir_name_env="CLAUDE_CODE_PROJECT_DIR_NAME",
)

# Claude Code 2.1.328, kept as a release profile for users who have not updated.
CLAUDE_2_1_328 = replace(CLAUDE, behaviour=CLAUDE_CODE_2_1_328, release="claude-2.1.328")

# Each flavor at its newest release profile: the default.
FLAVORS: dict[str, Flavor] = {"agent": AGENT, "claude": CLAUDE}

# Each flavor's release profiles, oldest first (``memtui.core.places.profiles`` picks one).
PROFILES: dict[str, tuple[Flavor, ...]] = {"agent": (AGENT,), "claude": (CLAUDE_2_1_328, CLAUDE)}


def get_flavor(name: str | None = None, environ: Mapping[str, str] | None = None) -> Flavor:
    """The flavor called ``name``, else ``$MEMTUI_FLAVOR``, else ``agent``.

    Raises ``UnknownFlavorError`` for any other name.
    """
    env = os.environ if environ is None else environ
    chosen = (name or env.get("MEMTUI_FLAVOR") or "agent").strip().lower()
    try:
        return FLAVORS[chosen]
    except KeyError:
        raise UnknownFlavorError(f"unknown flavor {chosen!r}: use 'agent' or 'claude'") from None
