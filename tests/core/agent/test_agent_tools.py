"""The agent tool policy (docs/behaviour.md §7 "Extractor tools", §9): each tool on a hand-made tree, and
each refusal coming back as a tool error with a code — never an exception, never a write."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from memtui.core.agent import ToolCall, ToolPolicy, execute, tool_definitions


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """``work/`` (the cwd) holding ``mem/`` (the writable root), ``notes.txt`` and ``x``;
    ``outside/target.md`` next to ``work``."""
    work = tmp_path / "work"
    mem = work / "mem"
    mem.mkdir(parents=True)
    (mem / "user_role.md").write_text("---\ntype: user\n---\nData scientist.\nLikes logs.\n", encoding="utf-8")
    (work / "notes.txt").write_text("alpha\nBeta\ngamma beta\n", encoding="utf-8")
    (work / "x").write_text("keep me\n", encoding="utf-8")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "target.md").write_text("original\n", encoding="utf-8")
    return work


@pytest.fixture
def policy(tree: Path) -> ToolPolicy:
    return ToolPolicy(write_root=tree / "mem", cwd=tree)


def snapshot(root: Path) -> dict[str, bytes]:
    """Every file below ``root`` (not following links) with its bytes."""
    out: dict[str, bytes] = {}
    for dirpath, _dirs, files in os.walk(root):
        for name in files:
            p = Path(dirpath, name)
            if not p.is_symlink():
                out[str(p.relative_to(root))] = p.read_bytes()
    return out


# -- Read ------------------------------------------------------------------------------------


def test_read_numbers_lines_like_cat_n(policy: ToolPolicy) -> None:
    out = execute(policy, "Read", {"file_path": "notes.txt"})
    assert (out.is_error, out.content) == (False, "     1\talpha\n     2\tBeta\n     3\tgamma beta")


def test_read_offset_and_limit(policy: ToolPolicy, tree: Path) -> None:
    out = execute(policy, "Read", {"file_path": str(tree / "notes.txt"), "offset": 2, "limit": 1})
    assert not out.is_error
    assert out.content == "     2\tBeta\n[more lines follow; continue with offset=3]"


def test_read_refusals(policy: ToolPolicy, tree: Path) -> None:
    (tree / "blob.bin").write_bytes(b"PK\x03\x04\x00\x00binary")
    big = tree / "big.txt"
    big.write_text("line\n" * 60_000, encoding="utf-8")  # 300,000 bytes > 256 KB
    cases = {
        "missing.txt": "not-found",
        "mem": "is-directory",
        "blob.bin": "binary-file",
        "big.txt": "too-large",
    }
    for path, code in cases.items():
        out = execute(policy, "Read", {"file_path": path})
        assert (out.is_error, out.code) == (True, code), path
    # With offset/limit a large file is read in parts.
    part = execute(policy, "Read", {"file_path": "big.txt", "offset": 59_999, "limit": 5})
    assert part.content == " 59999\tline\n 60000\tline"


def test_read_anywhere_by_default_but_confined_by_read_roots(tree: Path) -> None:
    target = tree.parent / "outside" / "target.md"
    assert execute(ToolPolicy(cwd=tree), "Read", {"file_path": str(target)}).content == "     1\toriginal"
    confined = ToolPolicy(cwd=tree, read_roots=(tree,))
    out = execute(confined, "Read", {"file_path": "../outside/target.md"})
    assert (out.is_error, out.code) == (True, "outside-read-roots")
    os.symlink(target, tree / "peek.md")
    out = execute(confined, "Read", {"file_path": "peek.md"})
    assert (out.is_error, out.code) == (True, "outside-read-roots")
    assert execute(confined, "Read", {"file_path": "x"}).content == "     1\tkeep me"


def test_read_roots_check_the_path_the_kernel_opens(tmp_path: Path) -> None:
    """``out/link/../secret.txt``: lexically ``out/secret.txt`` (outside the root), really
    ``root/secret.txt`` (``link`` points to ``root/sub``). The file read is the checked one."""
    root, out = tmp_path / "root", tmp_path / "out"
    (root / "sub").mkdir(parents=True)
    out.mkdir()
    (root / "secret.txt").write_text("inside\n", encoding="utf-8")
    (out / "secret.txt").write_text("outside\n", encoding="utf-8")
    os.symlink(root / "sub", out / "link")
    policy = ToolPolicy(cwd=tmp_path, read_roots=(root,))
    assert execute(policy, "Read", {"file_path": "out/link/../secret.txt"}).content == "     1\tinside"


def test_bash_is_not_offered_when_reads_are_confined(tree: Path) -> None:
    policy = ToolPolicy(cwd=tree, write_root=tree / "mem", read_roots=(tree,))
    assert policy.offered() == ("Read", "Grep", "Glob", "Write", "Edit")
    out = execute(policy, "Bash", {"command": "cat /etc/hostname"})
    assert (out.is_error, out.code) == (True, "tool-disabled")
    assert "could name any path" in out.content


def test_read_cuts_long_lines(tree: Path) -> None:
    (tree / "long.txt").write_text("a" * 30 + "\n", encoding="utf-8")
    out = execute(ToolPolicy(cwd=tree, read_max_line_chars=10), "Read", {"file_path": "long.txt"})
    assert out.content == "     1\taaaaaaaaaa… [line cut]"


# -- Grep and Glob ---------------------------------------------------------------------------


def test_grep_lists_path_line_text(policy: ToolPolicy, tree: Path) -> None:
    out = execute(policy, "Grep", {"pattern": "beta", "path": "notes.txt"})
    assert out.content == f"{tree / 'notes.txt'}:3:gamma beta"
    out = execute(policy, "Grep", {"pattern": "beta", "path": "notes.txt", "ignore_case": True})
    assert out.content == f"{tree / 'notes.txt'}:2:Beta\n{tree / 'notes.txt'}:3:gamma beta"


def test_grep_walks_a_directory_with_a_glob_filter(policy: ToolPolicy, tree: Path) -> None:
    (tree / "mem" / "other.txt").write_text("Likes logs too\n", encoding="utf-8")
    out = execute(policy, "Grep", {"pattern": "Likes", "glob": "*.md"})
    assert out.content == f"{tree / 'mem' / 'user_role.md'}:5:Likes logs."
    everything = execute(policy, "Grep", {"pattern": "Likes"})
    assert everything.content.splitlines() == [
        f"{tree / 'mem' / 'other.txt'}:1:Likes logs too",
        f"{tree / 'mem' / 'user_role.md'}:5:Likes logs.",
    ]


def test_grep_caps_matches_and_refuses_a_bad_regex(tree: Path) -> None:
    (tree / "many.txt").write_text("hit\n" * 10, encoding="utf-8")
    out = execute(ToolPolicy(cwd=tree, grep_max_matches=3), "Grep", {"pattern": "hit", "path": "many.txt"})
    assert out.content.splitlines()[-1] == "[stopped at 3 matching lines; narrow the search]"
    assert len(out.content.splitlines()) == 4
    bad = execute(ToolPolicy(cwd=tree), "Grep", {"pattern": "(unclosed"})
    assert (bad.is_error, bad.code) == (True, "bad-regex")


def test_glob_matches_recursively_newest_first(policy: ToolPolicy, tree: Path) -> None:
    (tree / "mem" / "sub").mkdir()
    (tree / "mem" / "sub" / "deep.md").write_text("d", encoding="utf-8")
    os.utime(tree / "mem" / "sub" / "deep.md", (2_000_000_000, 2_000_000_000))
    os.utime(tree / "mem" / "user_role.md", (1_000_000_000, 1_000_000_000))
    out = execute(policy, "Glob", {"pattern": "**/*.md"})
    assert out.content == f"{tree / 'mem' / 'sub' / 'deep.md'}\n{tree / 'mem' / 'user_role.md'}"
    top_only = execute(policy, "Glob", {"pattern": "*.md", "path": "mem"})
    assert top_only.content == str(tree / "mem" / "user_role.md")
    braces = execute(policy, "Glob", {"pattern": "{x,notes.txt}"})
    assert sorted(braces.content.splitlines()) == sorted([str(tree / "x"), str(tree / "notes.txt")])


def test_glob_refuses_escaping_patterns_and_caps_results(tree: Path) -> None:
    for pattern in ("../*", "/etc/*", "mem/../../*"):
        out = execute(ToolPolicy(cwd=tree), "Glob", {"pattern": pattern})
        assert (out.is_error, out.code) == (True, "bad-pattern"), pattern
    for i in range(5):
        (tree / f"f{i}.log").write_text("", encoding="utf-8")
    out = execute(ToolPolicy(cwd=tree, glob_max_results=2), "Glob", {"pattern": "*.log"})
    lines = out.content.splitlines()
    assert len(lines) == 3 and lines[-1] == "[3 more not shown; narrow the pattern]"


# -- Bash ------------------------------------------------------------------------------------


def test_bash_runs_allowed_commands_and_pipelines(policy: ToolPolicy) -> None:
    assert execute(policy, "Bash", {"command": "ls mem"}).content == "user_role.md"
    assert execute(policy, "Bash", {"command": "cat notes.txt | grep -i beta | wc -l"}).content.strip() == "2"
    # Quoted operators are arguments, not shell syntax.
    assert execute(policy, "Bash", {"command": "grep -c '>' notes.txt"}).content == "0\n[exit code 1]"
    assert execute(policy, "Bash", {"command": "echo 'a;b' \"c|d\""}).content == "a;b c|d"
    # Single quotes keep $(...) literal: nothing runs, echo prints it.
    assert execute(policy, "Bash", {"command": "echo '$(id)'"}).content == "$(id)"


def test_bash_reports_a_failing_command_as_an_error(policy: ToolPolicy) -> None:
    out = execute(policy, "Bash", {"command": "ls no-such-dir"})
    assert (out.is_error, out.code) == (True, "bash-exit")
    assert "[stderr]" in out.content and "no-such-dir" in out.content
    assert out.content.endswith("[exit code 2]")


REFUSED = [
    ("rm -rf x", "bash-not-allowed"),
    ("/bin/rm -rf x", "bash-not-allowed"),
    ("python3 -c 'print(1)'", "bash-not-allowed"),
    ("cat x > y", "bash-redirection"),
    ("cat x >> y", "bash-redirection"),
    ("cat < x", "bash-redirection"),
    ("ls 2> y", "bash-redirection"),
    ("ls &> y", "bash-redirection"),
    ("ls | sh", "bash-not-allowed"),
    ("cat x | tee y", "bash-not-allowed"),
    ("ls |& cat", "bash-chaining"),
    ("ls; rm x", "bash-chaining"),
    ("ls && rm x", "bash-chaining"),
    ("ls || rm x", "bash-chaining"),
    ("ls &", "bash-chaining"),
    ("ls\nrm x", "bash-chaining"),
    ("(rm x)", "bash-chaining"),
    ("echo $(id)", "bash-substitution"),
    ('echo "$(id)"', "bash-substitution"),
    ("echo ${HOME}", "bash-substitution"),
    ("echo `id`", "bash-substitution"),
    ("find . -delete", "bash-forbidden-option"),
    ("find . -name x -exec rm {} +", "bash-forbidden-option"),
    ("find . -execdir rm {} ;", "bash-chaining"),
    ("find . -execdir rm {} \\;", "bash-forbidden-option"),
    ("find . -ok rm {} \\;", "bash-forbidden-option"),
    ("find . -fprint y", "bash-forbidden-option"),
    ("find . -fls y", "bash-forbidden-option"),
    ("tail -f notes.txt", "bash-forbidden-option"),
    ("tail -5f notes.txt", "bash-forbidden-option"),
    ("tail --follow=name notes.txt", "bash-forbidden-option"),
    ("file -C -m x", "bash-forbidden-option"),
    ("echo 'unclosed", "bash-syntax"),
    ("ls |", "bash-syntax"),
    ("   ", "bash-empty"),
]


@pytest.mark.parametrize(("command", "code"), REFUSED)
def test_bash_refusals_are_tool_errors_and_change_nothing(policy: ToolPolicy, tree: Path, command: str, code: str) -> None:
    before = snapshot(tree.parent)
    out = execute(policy, "Bash", {"command": command})
    assert (out.is_error, out.code, out.wrote) == (True, code, None)
    assert out.content.startswith("Refused: ")
    assert snapshot(tree.parent) == before
    assert not (tree / "y").exists()


def test_bash_output_is_capped(tree: Path) -> None:
    (tree / "big.txt").write_text("z" * 5_000, encoding="utf-8")
    out = execute(ToolPolicy(cwd=tree, max_output_chars=100), "Bash", {"command": "cat big.txt"})
    assert not out.is_error
    assert out.content == "z" * 100 + "\n[output truncated at 100 characters]"


def test_bash_times_out(tree: Path) -> None:
    os.mkfifo(tree / "pipe")  # cat blocks on a FIFO with no writer
    out = execute(ToolPolicy(cwd=tree, bash_timeout_s=0.3), "Bash", {"command": "cat pipe"})
    assert (out.is_error, out.code) == (True, "bash-timeout")
    assert out.content == "[timed out after 0.3 s; the command was stopped]"


def test_bash_does_not_expand_globs_or_variables(policy: ToolPolicy) -> None:
    out = execute(policy, "Bash", {"command": "echo $HOME *.txt $"})
    assert out.content == "$HOME *.txt $"


# -- Write and Edit --------------------------------------------------------------------------


def test_write_creates_a_file_inside_the_root(policy: ToolPolicy, tree: Path) -> None:
    text = "---\ntype: feedback\n---\nUse a real DB in tests. 笔记\n"
    out = execute(policy, "Write", {"file_path": "feedback_db.md", "content": text})
    target = (tree / "mem" / "feedback_db.md").resolve()
    assert (out.is_error, out.wrote) == (False, target)
    assert target.read_bytes() == text.encode("utf-8")
    absolute = execute(policy, "Write", {"file_path": str(tree / "mem" / "sub" / "笔记.md"), "content": "x"})
    assert absolute.wrote == (tree / "mem" / "sub" / "笔记.md").resolve()
    assert absolute.wrote.read_text(encoding="utf-8") == "x"


def test_write_refusals_leave_every_file_as_it_was(policy: ToolPolicy, tree: Path) -> None:
    outside = tree.parent / "outside"
    os.symlink(outside, tree / "mem" / "link")  # a directory link inside the root, pointing out
    os.symlink(outside / "target.md", tree / "mem" / "evil.md")  # a file link pointing out
    os.symlink(tree.parent / "nowhere.md", tree / "mem" / "dangling.md")
    before = snapshot(tree.parent)
    cases = [
        ("../../outside.md", "outside-dir"),
        ("../x", "outside-dir"),
        (str(outside / "target.md"), "outside-dir"),
        ("/etc/passwd", "outside-dir"),
        ("link/new.md", "symlink-escape"),
        ("link/target.md", "symlink-escape"),
        ("evil.md", "symlink-escape"),
        ("dangling.md", "dangling-symlink"),
        (".", "dir-itself"),
        ("bad\0.md", "nul-byte"),
    ]
    for path, code in cases:
        for tool, extra in (("Write", {"content": "pwned\n"}), ("Edit", {"old_string": "original", "new_string": "pwned"})):
            out = execute(policy, tool, {"file_path": path, **extra})
            assert (out.is_error, out.code, out.wrote) == (True, code, None), (tool, path)
            assert out.content.startswith(f"Refused: {tool} may only change files inside {tree / 'mem'}")
    assert snapshot(tree.parent) == before
    assert not (tree.parent.parent / "outside.md").exists()
    assert not (outside / "new.md").exists()


def test_write_refuses_oversized_content_and_directories(tree: Path) -> None:
    (tree / "mem" / "sub").mkdir()
    policy = ToolPolicy(write_root=tree / "mem", cwd=tree, write_max_bytes=10)
    out = execute(policy, "Write", {"file_path": "a.md", "content": "0123456789A"})
    assert (out.is_error, out.code) == (True, "too-large")
    out = execute(policy, "Write", {"file_path": "sub", "content": "x"})
    assert (out.is_error, out.code) == (True, "is-directory")
    assert not (tree / "mem" / "a.md").exists()


def test_write_and_edit_are_off_without_a_write_root(tree: Path) -> None:
    policy = ToolPolicy(cwd=tree)
    assert [d["name"] for d in tool_definitions(policy)] == ["Read", "Grep", "Glob", "Bash"]
    out = execute(policy, "Write", {"file_path": "x", "content": "y"})
    assert (out.is_error, out.code) == (True, "tool-disabled")
    assert (tree / "x").read_text(encoding="utf-8") == "keep me\n"


def test_edit_replaces_a_unique_string(policy: ToolPolicy, tree: Path) -> None:
    out = execute(policy, "Edit", {"file_path": "user_role.md", "old_string": "Likes logs.", "new_string": "Likes traces."})
    assert (out.is_error, out.wrote) == (False, (tree / "mem" / "user_role.md").resolve())
    assert (tree / "mem" / "user_role.md").read_text(encoding="utf-8") == "---\ntype: user\n---\nData scientist.\nLikes traces.\n"


def test_edit_refusals(policy: ToolPolicy, tree: Path) -> None:
    path = tree / "mem" / "twice.md"
    path.write_bytes(b"a-b-a\r\n")
    cases = [
        ({"file_path": "twice.md", "old_string": "a", "new_string": "c"}, "ambiguous-match"),
        ({"file_path": "twice.md", "old_string": "zzz", "new_string": "c"}, "no-match"),
        ({"file_path": "twice.md", "old_string": "a", "new_string": "a"}, "no-change"),
        ({"file_path": "twice.md", "old_string": "", "new_string": "c"}, "bad-input"),
        ({"file_path": "missing.md", "old_string": "a", "new_string": "c"}, "not-found"),
        ({"file_path": "twice.md", "old_string": "a"}, "bad-input"),
    ]
    for args, code in cases:
        out = execute(policy, "Edit", args)
        assert (out.is_error, out.code) == (True, code), args
    assert path.read_bytes() == b"a-b-a\r\n"
    out = execute(policy, "Edit", {"file_path": "twice.md", "old_string": "a", "new_string": "c", "replace_all": True})
    assert out.content == f"Edited {path.resolve()}: replaced 2 occurrences."
    assert path.read_bytes() == b"c-b-c\r\n"  # the CRLF is untouched


def test_lone_surrogates_are_not_written(policy: ToolPolicy, tree: Path) -> None:
    out = execute(policy, "Write", {"file_path": "s.md", "content": "a\ud800b"})
    assert (out.is_error, out.code) == (True, "bad-input")
    out = execute(policy, "Edit", {"file_path": "user_role.md", "old_string": "Likes", "new_string": "\udfff"})
    assert (out.is_error, out.code) == (True, "bad-input")
    assert not (tree / "mem" / "s.md").exists()
    assert (tree / "mem" / "user_role.md").read_text(encoding="utf-8").endswith("Likes logs.\n")


def test_edit_refuses_a_file_that_is_not_utf8(policy: ToolPolicy, tree: Path) -> None:
    (tree / "mem" / "latin.md").write_bytes(b"caf\xe9\n")
    out = execute(policy, "Edit", {"file_path": "latin.md", "old_string": "caf", "new_string": "tea"})
    assert (out.is_error, out.code) == (True, "not-utf8")


# -- any tool --------------------------------------------------------------------------------


def test_unknown_tools_and_bad_input_are_tool_errors(policy: ToolPolicy) -> None:
    for name, args, code in [
        ("WebFetch", {"url": "https://example.com"}, "unknown-tool"),
        ("NotebookEdit", {}, "unknown-tool"),
        ("Read", ["not", "an", "object"], "bad-input"),
        ("Read", {}, "bad-input"),
        ("Read", {"file_path": "notes.txt", "offset": 0}, "bad-input"),
        ("Read", {"file_path": "notes.txt", "limit": "3"}, "bad-input"),
        ("Bash", {"cmd": "ls"}, "bad-input"),
        ("Write", {"file_path": "a.md"}, "bad-input"),
    ]:
        out = execute(policy, name, args)
        assert (out.is_error, out.code) == (True, code), (name, args)


def test_every_call_is_logged(policy: ToolPolicy, tree: Path) -> None:
    log: list[ToolCall] = []
    execute(policy, "Bash", {"command": "rm -rf x"}, log=log, tool_use_id="toolu_1", turn=2)
    execute(policy, "Write", {"file_path": "a.md", "content": "hello"}, log=log, tool_use_id="toolu_2", turn=2)
    assert [(c.id, c.turn, c.name, c.summary, c.is_error, c.code) for c in log] == [
        ("toolu_1", 2, "Bash", "Bash rm -rf x", True, "bash-not-allowed"),
        ("toolu_2", 2, "Write", "Write a.md (5 chars)", False, None),
    ]
    assert log[1].wrote == (tree / "mem" / "a.md").resolve()


def test_tool_definitions_name_the_allow_list_and_the_root(policy: ToolPolicy, tree: Path) -> None:
    defs = {d["name"]: d for d in tool_definitions(policy)}
    assert list(defs) == ["Read", "Grep", "Glob", "Bash", "Write", "Edit"]
    assert "cat, echo, file, find, grep, head, ls, pwd, stat, tail, wc" in defs["Bash"]["description"]
    assert str(tree / "mem") in defs["Write"]["description"]
    assert defs["Edit"]["input_schema"]["required"] == ["file_path", "old_string", "new_string"]


def test_tool_definitions_state_the_policys_caps(tree: Path) -> None:
    policy = ToolPolicy(cwd=tree, read_max_bytes=1024 * 1024, read_default_lines=50, grep_max_matches=7, glob_max_results=9)
    defs = {d["name"]: d for d in tool_definitions(policy)}
    assert "files over 1,024 KB are refused" in defs["Read"]["description"]
    assert defs["Read"]["input_schema"]["properties"]["limit"]["description"] == "Number of lines to read (default 50)."
    assert defs["Grep"]["description"].endswith("at most 7.")
    assert defs["Glob"]["description"].endswith("at most 9.")


def test_searches_skip_vcs_dirs_and_do_not_follow_links_out(policy: ToolPolicy, tree: Path) -> None:
    (tree / ".git").mkdir()
    (tree / ".git" / "config.md").write_text("original\n", encoding="utf-8")
    os.symlink(tree.parent / "outside", tree / "out-link")
    os.symlink(tree.parent / "outside" / "target.md", tree / "file-link.md")
    out = execute(policy, "Grep", {"pattern": "original"})
    assert out.content == f"No matches for 'original' in {tree}."
    globbed = execute(policy, "Glob", {"pattern": "**/*.md"})
    assert sorted(globbed.content.splitlines()) == sorted([str(tree / "file-link.md"), str(tree / "mem" / "user_role.md")])
