"""docs/behaviour.md §1 (flavor table) and §2 (settings files, auto-memory dir precedence, override
validation, sessions dir, state dir, auto-memory on/off).

Expected memory dirs are built by hand from the rule
`<base>/projects/<slug(canonical git root, else project root)>/memory/`, with the slug of the
(ASCII, short) tmp paths computed by `ascii_slug` below — the one-line spec rule, not memtui's.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import platformdirs
import pytest

from memtui.core.places.flavor import AGENT, CLAUDE, get_flavor
from memtui.core.places.locations import resolve_locations, state_dir, validate_memory_dir_override

INVALID = "memory-dir-override-invalid"


def ascii_slug(path: Path) -> str:
    text = str(path)
    assert text.isascii() and len(text) <= 200, "helper only covers short ASCII paths"
    return "".join(c if c.isalnum() else "-" for c in text)


@pytest.fixture
def home(isolated_env: Path) -> Path:
    return isolated_env


@pytest.fixture
def managed() -> Path:
    return Path(os.environ["MEMTUI_MANAGED_DIR"])


@pytest.fixture
def project(tmp_path: Path) -> Path:
    proj = Path(os.path.realpath(tmp_path)) / "proj"
    (proj / ".git").mkdir(parents=True)
    (proj / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    return proj


def write_json(path: Path, data: object) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))
    return path


def settings_file(layer: str, *, home: Path, managed: Path, project: Path, dot: str = ".agent", base: str = ".agent") -> Path:
    return {
        "policy": managed / "managed-settings.json",
        "user": home / base / "settings.json",
        "project": project / dot / "settings.json",
        "local": project / dot / "settings.local.json",
    }[layer]


def default_memory_dir(home: Path, root: Path, base: str = ".agent") -> Path:
    return home / base / "projects" / ascii_slug(root) / "memory"


def codes(loc) -> list[str]:  # type: ignore[no-untyped-def]
    return [d.code for d in loc.diagnostics]


# --- default ------------------------------------------------------------------------------


def test_default_memory_dir_is_keyed_on_the_git_root(home: Path, project: Path) -> None:
    loc = resolve_locations(AGENT, project)
    assert loc.memory_dir == default_memory_dir(home, project)
    assert loc.memory_dir_source == "default"
    assert loc.slug == ascii_slug(project)
    assert loc.git_root == project
    assert loc.canonical_git_root == project
    assert loc.user_base_dir == home / ".agent"
    assert loc.diagnostics == ()


def test_without_git_the_project_root_is_the_key(home: Path, tmp_path: Path) -> None:
    if any((p / ".git").exists() for p in Path(os.path.realpath(tmp_path)).parents):
        pytest.skip("tmp_path is inside a git repository")
    plain = Path(os.path.realpath(tmp_path)) / "plain"
    plain.mkdir()
    loc = resolve_locations(AGENT, plain)
    assert loc.git_root is None
    assert loc.memory_dir == default_memory_dir(home, plain)


def test_subdirectory_memory_dir_on_git_root_but_sessions_dir_on_cwd(home: Path, project: Path) -> None:
    sub = project / "src" / "pkg"
    sub.mkdir(parents=True)
    loc = resolve_locations(AGENT, sub)
    assert loc.project_root == sub
    assert loc.memory_dir == default_memory_dir(home, project)
    assert loc.sessions_dir == home / ".agent" / "projects" / ascii_slug(sub)
    assert loc.sessions_dir != loc.memory_dir.parent


def test_worktrees_share_the_main_repository_memory_dir(home: Path, tmp_path: Path) -> None:
    base = Path(os.path.realpath(tmp_path))
    main_git = base / "main" / ".git"
    (main_git / "worktrees" / "wt").mkdir(parents=True)
    (main_git / "HEAD").write_text("ref: refs/heads/main\n")
    (main_git / "worktrees" / "wt" / "commondir").write_text("../..\n")
    (main_git / "worktrees" / "wt" / "gitdir").write_text(str(base / "wt" / ".git") + "\n")
    (base / "wt").mkdir()
    (base / "wt" / ".git").write_text(f"gitdir: {main_git / 'worktrees' / 'wt'}\n")
    wt = resolve_locations(AGENT, base / "wt")
    main = resolve_locations(AGENT, base / "main")
    assert wt.memory_dir == main.memory_dir == default_memory_dir(home, base / "main")
    # ... while transcripts stay per-directory
    assert wt.sessions_dir == home / ".agent" / "projects" / ascii_slug(base / "wt")


def test_agent_config_dir_moves_the_base(home: Path, project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cfg = tmp_path / "cfg"
    monkeypatch.setenv("AGENT_CONFIG_DIR", str(cfg))
    loc = resolve_locations(AGENT, project)
    assert loc.user_base_dir == cfg
    assert loc.memory_dir == cfg / "projects" / ascii_slug(project) / "memory"
    assert loc.sessions_dir == cfg / "projects" / ascii_slug(project)


def test_memory_dir_option_skips_resolution(home: Path, project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENT_MEMORY_DIR", "/srv/elsewhere")
    loc = resolve_locations(AGENT, project, memory_dir=tmp_path / "copied")
    assert loc.memory_dir == tmp_path / "copied"
    assert loc.memory_dir_source == "option"


# --- precedence: env → policy → user → local, never project -------------------------------------


def test_env_override_is_used_as_given(home: Path, project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENT_MEMORY_DIR", "/srv/agent-mem/")
    loc = resolve_locations(AGENT, project)
    assert loc.memory_dir == Path("/srv/agent-mem")
    assert loc.memory_dir_source == "env"


def test_env_beats_all_settings(home: Path, managed: Path, project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for layer in ("policy", "user", "local"):
        write_json(settings_file(layer, home=home, managed=managed, project=project), {"autoMemoryDirectory": f"/srv/{layer}"})
    monkeypatch.setenv("AGENT_MEMORY_DIR", "/srv/env")
    loc = resolve_locations(AGENT, project)
    assert (loc.memory_dir, loc.memory_dir_source) == (Path("/srv/env"), "env")


@pytest.mark.parametrize(
    ("layers", "winner"),
    [
        (("policy", "user", "local"), "policy"),
        (("user", "local"), "user"),
        (("policy", "local"), "policy"),
        (("local",), "local"),
        (("user",), "user"),
    ],
)
def test_settings_precedence_policy_user_local(home: Path, managed: Path, project: Path, layers: tuple[str, ...], winner: str) -> None:
    for layer in layers:
        write_json(settings_file(layer, home=home, managed=managed, project=project), {"autoMemoryDirectory": f"/srv/{layer}"})
    loc = resolve_locations(AGENT, project)
    assert loc.memory_dir == Path(f"/srv/{winner}")
    assert loc.memory_dir_source == winner


def test_project_settings_never_choose_the_memory_dir(home: Path, managed: Path, project: Path) -> None:
    write_json(settings_file("project", home=home, managed=managed, project=project), {"autoMemoryDirectory": str(home / ".ssh")})
    loc = resolve_locations(AGENT, project)
    assert loc.memory_dir == default_memory_dir(home, project)
    assert loc.memory_dir_source == "default"
    info = [d for d in loc.diagnostics if d.code == "memory-dir-in-project-settings"]
    assert len(info) == 1
    assert info[0].severity == "info"
    assert info[0].path == str(project / ".agent" / "settings.json")


def test_project_settings_ignored_even_when_local_is_set(home: Path, managed: Path, project: Path) -> None:
    write_json(settings_file("project", home=home, managed=managed, project=project), {"autoMemoryDirectory": "/srv/project"})
    write_json(settings_file("local", home=home, managed=managed, project=project), {"autoMemoryDirectory": "/srv/local"})
    loc = resolve_locations(AGENT, project)
    assert (loc.memory_dir, loc.memory_dir_source) == (Path("/srv/local"), "local")
    assert "memory-dir-in-project-settings" in codes(loc)


def test_tilde_slash_in_settings_expands_to_home(home: Path, managed: Path, project: Path) -> None:
    write_json(settings_file("user", home=home, managed=managed, project=project), {"autoMemoryDirectory": "~/notes/mem"})
    loc = resolve_locations(AGENT, project)
    assert loc.memory_dir == home / "notes" / "mem"
    assert loc.memory_dir_source == "user"
    assert loc.diagnostics == ()


# --- invalid overrides: ignored, with a visible diagnostic ---------------------------------------

INVALID_ENV_VALUES = [
    "relative/mem",  # not absolute
    "~/mem",  # `~` is not expanded in the env var
    "~",
    "/",
    "//server/share",  # UNC
    "C:",  # drive root
    "C:\\",
    "/a",  # too short (< 3 chars)
    "//",
]


@pytest.mark.parametrize("value", INVALID_ENV_VALUES)
def test_invalid_env_override_is_ignored_with_diagnostic(home: Path, project: Path, monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    monkeypatch.setenv("AGENT_MEMORY_DIR", value)
    loc = resolve_locations(AGENT, project)
    assert loc.memory_dir == default_memory_dir(home, project)
    assert loc.memory_dir_source == "default"
    assert codes(loc) == [INVALID]
    assert "AGENT_MEMORY_DIR" in loc.diagnostics[0].message


def test_env_override_with_nul_is_invalid(home: Path, project: Path) -> None:
    # A real environment cannot hold NUL; pass the mapping directly.
    env = {**os.environ, "AGENT_MEMORY_DIR": "/srv/mem\0x"}
    loc = resolve_locations(AGENT, project, environ=env)
    assert loc.memory_dir_source == "default"
    assert codes(loc) == [INVALID]


def test_three_char_absolute_path_is_long_enough(home: Path, project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENT_MEMORY_DIR", "/ab")
    loc = resolve_locations(AGENT, project)
    assert (loc.memory_dir, loc.memory_dir_source) == (Path("/ab"), "env")


def test_invalid_env_falls_through_to_settings(home: Path, managed: Path, project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENT_MEMORY_DIR", "relative")
    write_json(settings_file("user", home=home, managed=managed, project=project), {"autoMemoryDirectory": "/srv/user"})
    loc = resolve_locations(AGENT, project)
    assert (loc.memory_dir, loc.memory_dir_source) == (Path("/srv/user"), "user")
    assert codes(loc) == [INVALID]


INVALID_SETTINGS_VALUES = [
    "~/",  # the home directory itself
    "~",
    "~/.",
    "~/..",
    "relative/mem",
    "/",
    "//server/share",
    "C:",
    "/a",
    "/srv/mem\u0000x",  # NUL (JSON escape)
    "",
    42,
]


@pytest.mark.parametrize("value", INVALID_SETTINGS_VALUES)
def test_invalid_settings_override_is_ignored_with_diagnostic(home: Path, managed: Path, project: Path, value: object) -> None:
    path = write_json(settings_file("user", home=home, managed=managed, project=project), {"autoMemoryDirectory": value})
    loc = resolve_locations(AGENT, project)
    assert loc.memory_dir == default_memory_dir(home, project)
    assert loc.memory_dir_source == "default"
    assert codes(loc) == [INVALID]
    assert loc.diagnostics[0].path == str(path)


def test_invalid_higher_layer_is_ignored_and_next_layer_applies(home: Path, managed: Path, project: Path) -> None:
    # docs/behaviour.md §2: an invalid value "is ignored with a visible diagnostic"; the next rule applies.
    write_json(settings_file("policy", home=home, managed=managed, project=project), {"autoMemoryDirectory": "~/"})
    write_json(settings_file("local", home=home, managed=managed, project=project), {"autoMemoryDirectory": "/srv/local"})
    loc = resolve_locations(AGENT, project)
    assert (loc.memory_dir, loc.memory_dir_source) == (Path("/srv/local"), "local")
    assert codes(loc) == [INVALID]


@pytest.mark.parametrize(
    ("raw", "expand", "ok"),
    [
        ("/srv/mem", False, True),
        ("/srv/mem/", False, True),
        ("~/mem", False, False),
        ("~/mem", True, True),
        ("~/", True, False),
        ("~", True, False),
        ("/", False, False),
        ("//server/share", False, False),
        ("C:", False, False),
        ("/ab", False, True),
        ("/a", False, False),
        ("/x\0y", False, False),
    ],
)
def test_validate_memory_dir_override_table(home: Path, raw: str, expand: bool, ok: bool) -> None:
    path, reason = validate_memory_dir_override(raw, expand_tilde=expand, home=home)
    assert (path is not None) is ok
    assert (reason is None) is ok


# --- settings files ------------------------------------------------------------------------------


def test_invalid_json_settings_are_reported_not_fatal(home: Path, managed: Path, project: Path) -> None:
    bad = settings_file("user", home=home, managed=managed, project=project)
    bad.parent.mkdir(parents=True)
    bad.write_text('{"autoMemoryDirectory": "/srv/user",}')  # trailing comma
    write_json(settings_file("local", home=home, managed=managed, project=project), {"autoMemoryDirectory": "/srv/local"})
    loc = resolve_locations(AGENT, project)
    assert (loc.memory_dir, loc.memory_dir_source) == (Path("/srv/local"), "local")
    bad_diags = [d for d in loc.diagnostics if d.path == str(bad)]
    assert len(bad_diags) == 1
    assert bad_diags[0].code == "settings-invalid-json"


def test_settings_that_are_not_an_object_are_reported(home: Path, managed: Path, project: Path) -> None:
    write_json(settings_file("local", home=home, managed=managed, project=project), ["autoMemoryDirectory"])
    loc = resolve_locations(AGENT, project)
    assert loc.memory_dir_source == "default"
    assert codes(loc) == ["settings-invalid-json"]


def test_managed_dir_env_locates_policy_settings(home: Path, project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    policy_dir = tmp_path / "policy-here"
    monkeypatch.setenv("MEMTUI_MANAGED_DIR", str(policy_dir))
    write_json(policy_dir / "managed-settings.json", {"autoMemoryDirectory": "/srv/policy"})
    loc = resolve_locations(AGENT, project)
    assert loc.managed_dir == policy_dir
    assert (loc.memory_dir, loc.memory_dir_source) == (Path("/srv/policy"), "policy")


@pytest.mark.parametrize(
    ("flavor", "platform", "expected"),
    [
        (AGENT, "linux", "/etc/agent"),
        (AGENT, "darwin", "/Library/Application Support/Agent"),
        (AGENT, "win32", "C:\\Program Files\\Agent"),
        (CLAUDE, "linux", "/etc/claude-code"),
        (CLAUDE, "darwin", "/Library/Application Support/ClaudeCode"),
        (CLAUDE, "win32", "C:\\Program Files\\ClaudeCode"),
    ],
)
def test_managed_dir_per_platform_without_override(flavor, platform: str, expected: str) -> None:  # type: ignore[no-untyped-def]
    assert str(flavor.managed_dir(environ={}, platform=platform)) == str(Path(expected))


# --- auto-memory on/off --------------------------------------------------------------------------


def test_auto_memory_enabled_by_default(project: Path) -> None:
    assert resolve_locations(AGENT, project).auto_memory_enabled is True


@pytest.mark.parametrize("value", ["1", "true", "TRUE", "yes", "on"])
def test_auto_memory_disabled_by_env(project: Path, monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    monkeypatch.setenv("AGENT_DISABLE_AUTO_MEMORY", value)
    loc = resolve_locations(AGENT, project)
    assert loc.auto_memory_enabled is False
    assert loc.auto_memory_source == "env"


@pytest.mark.parametrize("layer", ["user", "local", "project", "policy"])
def test_auto_memory_disabled_by_settings(home: Path, managed: Path, project: Path, layer: str) -> None:
    write_json(settings_file(layer, home=home, managed=managed, project=project), {"autoMemoryEnabled": False})
    assert resolve_locations(AGENT, project).auto_memory_enabled is False


def test_env_zero_reenables_auto_memory_over_settings(home: Path, managed: Path, project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_json(settings_file("user", home=home, managed=managed, project=project), {"autoMemoryEnabled": False})
    monkeypatch.setenv("AGENT_DISABLE_AUTO_MEMORY", "0")
    loc = resolve_locations(AGENT, project)
    assert loc.auto_memory_enabled is True
    assert loc.auto_memory_source == "env"


def test_claude_env_does_not_disable_agent_flavor(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CLAUDE_CODE_DISABLE_AUTO_MEMORY", "1")
    assert resolve_locations(AGENT, project).auto_memory_enabled is True
    assert resolve_locations(CLAUDE, project).auto_memory_enabled is False


# --- claude flavor -------------------------------------------------------------------------------


def test_claude_flavor_defaults_to_home_dot_claude(home: Path, project: Path) -> None:
    loc = resolve_locations(CLAUDE, project)
    assert loc.user_base_dir == home / ".claude"
    assert loc.memory_dir == default_memory_dir(home, project, base=".claude")


def test_claude_flavor_honours_claude_config_dir_not_agent(home: Path, project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "cc"))
    monkeypatch.setenv("AGENT_CONFIG_DIR", str(tmp_path / "ag"))
    loc = resolve_locations(CLAUDE, project)
    assert loc.user_base_dir == tmp_path / "cc"
    assert loc.memory_dir == tmp_path / "cc" / "projects" / ascii_slug(project) / "memory"
    assert loc.sessions_dir == tmp_path / "cc" / "projects" / ascii_slug(project)


def test_claude_flavor_override_env_and_settings_names(home: Path, managed: Path, project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENT_MEMORY_DIR", "/srv/agent")
    write_json(settings_file("local", home=home, managed=managed, project=project, dot=".claude"), {"autoMemoryDirectory": "/srv/claude-local"})
    loc = resolve_locations(CLAUDE, project)
    assert (loc.memory_dir, loc.memory_dir_source) == (Path("/srv/claude-local"), "local")
    monkeypatch.setenv("CLAUDE_COWORK_MEMORY_PATH_OVERRIDE", "/srv/claude-env")
    loc = resolve_locations(CLAUDE, project)
    assert (loc.memory_dir, loc.memory_dir_source) == (Path("/srv/claude-env"), "env")


def test_claude_user_settings_live_in_claude_base(home: Path, managed: Path, project: Path) -> None:
    write_json(home / ".claude" / "settings.json", {"autoMemoryDirectory": "~/cmem"})
    write_json(home / ".agent" / "settings.json", {"autoMemoryDirectory": "~/amem"})
    assert resolve_locations(CLAUDE, project).memory_dir == home / "cmem"
    assert resolve_locations(AGENT, project).memory_dir == home / "amem"


def test_flavor_from_env_and_default(monkeypatch: pytest.MonkeyPatch) -> None:
    assert get_flavor() is AGENT
    monkeypatch.setenv("MEMTUI_FLAVOR", "claude")
    assert get_flavor() is CLAUDE
    assert get_flavor("agent") is AGENT
    with pytest.raises(ValueError):
        get_flavor("cursor")


# --- memtui's state dir ----------------------------------------------------------------------------


def test_state_dir_env_override(project: Path) -> None:
    loc = resolve_locations(AGENT, project)
    assert loc.state_dir == Path(os.environ["MEMTUI_STATE_DIR"])


def test_state_dir_default_is_platform_state_dir(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MEMTUI_STATE_DIR")
    assert state_dir() == Path(platformdirs.user_state_dir("memtui"))


def test_state_dir_is_never_inside_memory_dir(home: Path, project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MEMTUI_STATE_DIR")
    loc = resolve_locations(AGENT, project)
    assert not loc.state_dir.is_relative_to(loc.memory_dir)


def test_unreadable_settings_are_reported_not_fatal(home: Path, managed: Path, project: Path) -> None:
    # a directory where the file should be: unreadable even for root
    settings_file("user", home=home, managed=managed, project=project).mkdir(parents=True)
    write_json(settings_file("local", home=home, managed=managed, project=project), {"autoMemoryDirectory": "/srv/local"})
    loc = resolve_locations(AGENT, project)
    assert (loc.memory_dir, loc.memory_dir_source) == (Path("/srv/local"), "local")
    assert codes(loc) == ["settings-unreadable"]


def test_memory_dir_problem_says_missing_or_not_a_directory(tmp_path: Path, home: Path) -> None:
    from memtui.core.places.locations import memory_dir_problem

    memory = tmp_path / "memory"
    loc = resolve_locations(AGENT, tmp_path, memory_dir=memory)
    problem = memory_dir_problem(loc)
    assert problem is not None and (problem.code, problem.memory_dir, problem.other_flavor) == ("missing", memory, None)
    memory.write_text("a file where the dir should be")
    problem = memory_dir_problem(loc)
    assert problem is not None and problem.code == "not-a-directory"
    memory.unlink()
    memory.mkdir()
    assert memory_dir_problem(loc) is None


def test_a_missing_memory_dir_names_the_other_flavors_when_that_one_exists(tmp_path: Path, home: Path) -> None:
    from memtui.core.places.locations import memory_dir_problem

    project = tmp_path / "proj"
    project.mkdir()
    claude_dir = home / ".claude" / "projects" / ascii_slug(project.resolve()) / "memory"
    claude_dir.mkdir(parents=True)
    problem = memory_dir_problem(resolve_locations(AGENT, project))
    assert problem is not None and problem.code == "missing"
    assert problem.other_flavor == ("claude", claude_dir)
