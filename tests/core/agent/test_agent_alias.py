"""A path alias on the tool policy: the model names the live memory dir, the tools read and
write memtui's staging copy of it, and no text the model gets back names the copy. Containment
is still decided by where a path really leads (the copy's symlinks, ``<live>/../x``)."""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

import pytest

from support.trees import file_bytes

from memtui.core.agent import PathAlias, ToolPolicy, execute, tool_definitions
from memtui.core.agent.bash import stage_paths

DENY_TOOL = "only Read, Grep, Glob, read-only Bash, and Edit/Write within {d}/ are allowed"
DENY_SHELL = "Only read-only shell commands and rm of .md files under {d}/"




class Scene:
    """HOME with ``.claude/projects/p/memory`` (the live dir: ``a.md``, ``b.md``), its
    transcripts dir ``.claude/projects/p`` (``s1.jsonl`` naming the live ``a.md``), a project
    ``proj`` (the cwd), and a staging copy reached through a symlinked state dir (so the copy's
    ``realpath`` differs from the path the policy was given)."""

    def __init__(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        self.home = tmp_path / "home"
        monkeypatch.setenv("HOME", str(self.home))
        self.transcripts = self.home / ".claude" / "projects" / "p"
        self.live = self.transcripts / "memory"
        self.live.mkdir(parents=True)
        (self.live / "a.md").write_text("alpha from live\n")
        (self.live / "b.md").write_text("beta\n")
        (self.transcripts / "s1.jsonl").write_text(f'{{"text": "see {self.live}/a.md"}}\n')
        self.project = tmp_path / "proj"
        self.project.mkdir()
        (tmp_path / "real-state").mkdir()
        (tmp_path / "state").symlink_to(tmp_path / "real-state")
        self.staging = tmp_path / "state" / "staging" / "run" / "memory"
        self.staging.mkdir(parents=True)
        (self.staging / "a.md").write_text("alpha from staging\n")
        (self.staging / "b.md").write_text("beta\n")
        self.outside = tmp_path / "outside"
        self.outside.mkdir()
        self.live_before = file_bytes(self.live)
        self.real_staging = Path(os.path.realpath(self.staging))

    def policy(self, cwd: Path | None = None) -> ToolPolicy:
        d = f"{self.live}"
        return ToolPolicy(write_root=self.staging, alias=PathAlias(self.live, self.staging), cwd=cwd or self.project,
                          write_suffixes=(".md",), remove_md=True, protected_dirs=(".git", "agents"),
                          denials={"tool": DENY_TOOL.format(d=d), "shell": DENY_SHELL.format(d=d)})

    def unseen(self, text: str) -> None:
        """The staging copy is named nowhere in ``text``, by either of its paths."""
        assert str(self.staging) not in text and str(self.real_staging) not in text and "real-state" not in text, text


@pytest.fixture
def s(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Scene:
    return Scene(tmp_path, monkeypatch)


def test_reads_of_the_live_dir_read_the_copy_and_name_the_live_dir(s: Scene) -> None:
    p = s.policy()
    for path in (f"{s.live}/a.md", "~/.claude/projects/p/memory/a.md", os.path.relpath(s.live / "a.md", s.project)):
        out = execute(p, "Read", {"file_path": path})
        assert out.content == "     1\talpha from staging", path
    missing = execute(p, "Read", {"file_path": f"{s.live}/gone.md"})
    assert missing.code == "not-found" and missing.content == f"File not found: {s.live}/gone.md."
    glob = execute(p, "Glob", {"pattern": "*.md", "path": str(s.live)})
    assert sorted(glob.content.splitlines()) == [f"{s.live}/a.md", f"{s.live}/b.md"]
    grep = execute(p, "Grep", {"pattern": "alpha", "path": "~/.claude/projects/p/memory"})
    assert grep.content == f"{s.live}/a.md:1:alpha from staging"
    # the transcripts dir holds the live dir: it is not mapped, and its text names the live path
    grep = execute(p, "Grep", {"pattern": "see", "path": str(s.transcripts), "glob": "*.jsonl"})
    assert grep.content == f'{s.transcripts}/s1.jsonl:1:{{"text": "see {s.live}/a.md"}}'
    for out in (missing, glob, grep):
        s.unseen(out.content)


def test_writes_land_in_the_copy_and_their_results_name_the_live_dir(s: Scene) -> None:
    p = s.policy()
    out = execute(p, "Write", {"file_path": f"{s.live}/new.md", "content": "new\n"})
    assert not out.is_error and out.content == f"Created {s.live}/new.md (4 bytes)." and out.wrote == s.real_staging / "new.md"
    out = execute(p, "Write", {"file_path": "~/.claude/projects/p/memory/home.md", "content": "h\n"})
    assert not out.is_error and (s.staging / "home.md").read_text() == "h\n"
    out = execute(p, "Edit", {"file_path": "b.md", "old_string": "beta", "new_string": "gamma"})  # relative to the write root
    assert out.content == f"Edited {s.live}/b.md: replaced 1 occurrence." and (s.staging / "b.md").read_text() == "gamma\n"
    miss = execute(p, "Edit", {"file_path": f"{s.live}/a.md", "old_string": "zzz", "new_string": "y"})
    assert miss.code == "no-match" and str(s.live / "a.md") in miss.content
    assert file_bytes(s.live) == s.live_before
    for text in (out.content, miss.content, str(tool_definitions(p))):
        s.unseen(text)
    assert f"Only files inside {s.live} may be written" in str(tool_definitions(p))


def test_a_path_out_of_the_live_dir_is_not_mapped_into_the_copy(s: Scene) -> None:
    p = s.policy()
    for path in (f"{s.live}/../x.md", f"{s.live}/sub/../../x.md", "../x.md", f"{s.live}", str(s.outside / "o.md")):
        out = execute(p, "Write", {"file_path": path, "content": "x\n"})
        assert out.is_error and out.content == DENY_TOOL.format(d=s.live), path
    assert not (s.transcripts / "x.md").exists() and not (s.staging.parent / "x.md").exists() and not list(s.outside.iterdir())
    # a read of the live dir's parent reads the real parent, not the copy's
    assert execute(p, "Read", {"file_path": f"{s.live}/../s1.jsonl"}).content.startswith("     1\t{")
    listing = execute(s.policy(cwd=s.live), "Bash", {"command": "ls .."})
    assert listing.content.split() == ["memory", "s1.jsonl"]


def test_a_link_in_the_copy_that_leads_out_lets_no_write_escape(s: Scene) -> None:
    (s.staging / "out").symlink_to(s.outside)
    (s.staging / "evil.md").symlink_to(s.outside / "evil.md")
    p = s.policy()
    for path in (f"{s.live}/out/x.md", f"{s.live}/evil.md", "out/x.md"):
        out = execute(p, "Write", {"file_path": path, "content": "x\n"})
        assert out.is_error and out.code in ("symlink-escape", "dangling-symlink") and out.content == DENY_TOOL.format(d=s.live), path
    rm = execute(p, "Bash", {"command": f"rm {s.live}/out/x.md"})
    assert rm.is_error and rm.content == DENY_SHELL.format(d=s.live)
    assert not list(s.outside.iterdir())
    # without the release's texts, the safepath reason names the live dir, not the copy
    bare = ToolPolicy(write_root=s.staging, alias=PathAlias(s.live, s.staging), cwd=s.project)
    out = execute(bare, "Write", {"file_path": f"{s.live}/out/x.md", "content": "x\n"})
    assert out.code == "symlink-escape" and str(s.live) in out.content
    s.unseen(out.content)


def test_bash_maps_file_arguments_in_and_output_back(s: Scene) -> None:
    p = s.policy()
    (s.staging / "b.md").touch()
    os.utime(s.staging / "a.md", (1_000_000, 1_000_000))
    cases = {
        f"cat {s.live}/a.md": "alpha from staging",
        f"ls {s.live}": "a.md\nb.md",
        f"head -1 {s.live}/a.md": "alpha from staging",
        f"grep -rn alpha {s.live}": f"{s.live}/a.md:1:alpha from staging",
        f"grep -c alpha {s.live}/a.md {s.live}/b.md": f"{s.live}/a.md:1\n{s.live}/b.md:0",
        f"find {s.live} -name '*.md' -newer {s.live}/a.md": f"{s.live}/b.md",
        f"find {s.live} -path '{s.live}/a*'": f"{s.live}/a.md",
        f"stat -c %n {s.live}/a.md": f"{s.live}/a.md",
        f"wc -l {s.live}/a.md": f"1 {s.live}/a.md",
        # a pattern is not a path: the transcripts are searched for the live path itself
        f"grep -rl {s.live}/a.md {s.transcripts} --include=*.jsonl": f"{s.transcripts}/s1.jsonl",
        f"echo {s.live}": str(s.live),
    }
    for command, expected in cases.items():
        out = execute(p, "Bash", {"command": command})
        assert (out.is_error, out.content) == (False, expected), command
    in_live = s.policy(cwd=s.live)
    assert execute(in_live, "Bash", {"command": "pwd"}).content == str(s.live)
    assert execute(in_live, "Bash", {"command": "cat a.md"}).content == "alpha from staging"
    assert execute(in_live, "Read", {"file_path": "a.md"}).content == "     1\talpha from staging"
    err = execute(p, "Bash", {"command": f"cat {s.live}/gone.md"})
    assert err.is_error and f"{s.live}/gone.md" in err.content
    s.unseen(err.content)


def test_a_result_cut_at_its_cap_is_cut_after_the_mapping(s: Scene) -> None:
    os.utime(s.staging / "a.md", (2_000_000, 2_000_000))
    os.utime(s.staging / "b.md", (1_000_000, 1_000_000))
    full = f"{s.live}/a.md\n{s.live}/b.md"
    cap = len(f"{s.live}/a.md\n") + 8  # inside the second path, whichever dir it names
    p = dataclasses.replace(s.policy(), max_output_chars=cap)
    for name, args in (("Glob", {"pattern": "*.md", "path": str(s.live)}), ("Bash", {"command": f"ls -d {s.live}/a.md {s.live}/b.md"})):
        out = execute(p, name, args)
        assert out.content == f"{full[:cap]}\n[output truncated at {cap:,} characters]", name


def test_rm_of_a_live_memory_removes_the_copy_only(s: Scene) -> None:
    p = s.policy()
    out = execute(p, "Bash", {"command": f"rm {s.live}/b.md"})
    assert not out.is_error and out.removed == (s.real_staging / "b.md",)
    assert not (s.staging / "b.md").exists() and file_bytes(s.live) == s.live_before


def test_stage_paths_names_file_arguments_not_patterns() -> None:
    allow = frozenset({"grep", "head", "find", "file", "wc"})

    def named(argv: list[str]) -> list[str]:
        slots = stage_paths(argv, allow)
        assert not isinstance(slots, Exception) and isinstance(slots, list)
        return [argv[sl.index][sl.start : sl.end] for sl in slots]

    assert named(["grep", "-rn", "/x/pat", "/d1", "/d2"]) == ["/d1", "/d2"]
    assert named(["grep", "-e", "/x/pat", "-f/p/file", "/d"]) == ["/p/file", "/d"]
    assert named(["grep", "--exclude-from=/p/ex", "pat", "/d"]) == ["/p/ex", "/d"]
    assert named(["head", "-5", "/a", "/b"]) == ["/a", "/b"]
    assert named(["file", "-m", "/m1:/m2", "/f"]) == ["/m1", "/m2", "/f"]
    assert named(["wc", "--files0-from", "/list"]) == ["/list"]
    assert named(["find", "-L", "/s1", "/s2", "-name", "/n", "-newer", "/r", "-newermt", "2026-01-01"]) == ["/s1", "/s2", "/r"]


def test_an_alias_needs_two_separate_directories(tmp_path: Path) -> None:
    with pytest.raises(ValueError):
        PathAlias(tmp_path / "mem", tmp_path / "mem" / "staging")
    with pytest.raises(ValueError):
        PathAlias(tmp_path / "mem", tmp_path)
    alias = PathAlias(tmp_path / "mem", tmp_path / "stage")
    assert alias.to_actual("~no-such-user/a.md", "/") is None  # an unknown ~user stays a name
    assert alias.to_actual(f"{tmp_path}/mem-other/a.md", "/") is None  # a separator boundary
    assert alias.to_actual(f"{tmp_path}/mem/./sub//a.md", "/") == f"{tmp_path}/stage/sub/a.md"


def test_an_escaped_listing_names_the_live_dir_too(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``ls -b`` writes a space in a path as ``\\ ``: a copy under a folder with a space (macOS's
    state dir is ``~/Library/Application Support/memtui``) is hidden in that form as well."""
    spaced = tmp_path / "Application Support" / "staging" / "run" / "memory"
    spaced.mkdir(parents=True)
    (spaced / "a.md").write_text("alpha\n")
    live = tmp_path / "home" / ".claude" / "projects" / "p" / "memory"
    live.mkdir(parents=True)
    alias = PathAlias(live, spaced)
    listing = f"{str(spaced).replace(' ', chr(92) + ' ')}/a.md\n"
    assert alias.show(listing) == f"{live}/a.md\n"
    assert alias.show(f"'{spaced}/a.md'") == f"'{live}/a.md'"
