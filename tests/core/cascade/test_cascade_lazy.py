"""Lazy loading for target reads (docs/behaviour.md §3.5): nested files, once per session."""

from __future__ import annotations

from pathlib import Path

from support.cascade import cascade, codes, write

from memtui.core.cascade import new_session, simulate_read


def test_nested_instructions_load_on_first_read_only(tmp_path: Path) -> None:
    p = tmp_path / "p"
    write(p, "AGENT.md", "top")
    write(p, "test/AGENT.md", "test dir rules")
    write(p, "test/run.sh", "#!/bin/sh\n")
    c = cascade(p)
    assert [f.path for f in c.loaded_files] == [str(p / "AGENT.md")]  # not loaded at startup
    session = new_session(c)
    first = simulate_read(c, session, "test/run.sh")
    assert [(f.path, f.layer, f.kind) for f in first.added] == [(str(p / "test/AGENT.md"), "project", "instructions")]
    assert "nested project instructions" in first.added[0].reason
    assert simulate_read(c, session, "test/run.sh").added == []
    assert simulate_read(c, session, "test/new.txt", tool="Write").added == []
    # a fresh session whose first touch is a write of a new file
    fresh = new_session(c)
    assert [f.path for f in simulate_read(c, fresh, "test/new.txt", tool="Write").added] == [str(p / "test/AGENT.md")]
    # Bash never triggers nested loading
    bash = simulate_read(c, new_session(c), "test/run.sh", tool="Bash")
    assert bash.added == [] and codes(bash) == ["read-tool-ignored"]


def test_nested_order_and_rules_of_each_directory(tmp_path: Path) -> None:
    p = tmp_path / "p"
    write(p, "a/AGENT.md", "a")
    write(p, "a/b/AGENT.local.md", "b local")
    write(p, "a/b/.agent/AGENT.md", "b dot")
    write(p, "a/b/AGENT.md", "b")
    write(p, "a/b/.agent/rules/always.md", "always")
    write(p, "a/b/.agent/rules/py.md", "---\npaths: \"*.py\"\n---\npy")
    write(p, "a/b/.agent/rules/js.md", "---\npaths: \"*.js\"\n---\njs")
    write(p, ".agent/rules/deep.md", "---\npaths: a/b/**\n---\ndeep")  # a cwd-level conditional rule
    c = cascade(p, reads=["a/b/x.py"])
    added = [Path(f.path).relative_to(p).as_posix() for f in c.reads[0].added]
    assert added == [
        "a/AGENT.md",
        "a/b/AGENT.md",
        "a/b/.agent/AGENT.md",
        "a/b/AGENT.local.md",
        "a/b/.agent/rules/always.md",
        "a/b/.agent/rules/py.md",
        ".agent/rules/deep.md",
    ]
    assert [f.layer for f in c.reads[0].added][3] == "local"


def test_nested_files_never_follow_external_imports(tmp_path: Path) -> None:
    p = tmp_path / "p"
    write(p, "sub/AGENT.md", "@../../outside.md\n@inside.md\n")
    write(p, "sub/inside.md", "inside")
    write(tmp_path, "outside.md", "outside")
    c = cascade(p, reads=["sub/x.txt"], approved=True)
    step = c.reads[0]
    assert [Path(f.path).name for f in step.added] == ["AGENT.md", "inside.md"]
    assert [(f.status, Path(f.path).name) for f in step.considered] == [("external-lazy", "outside.md")]
    assert "import-external-lazy" in codes(step)
    assert c.pending_external_imports == []


def test_reads_json_lists_each_file_once(tmp_path: Path) -> None:
    write(tmp_path, "x/AGENT.md", "x")
    c = cascade(tmp_path, reads=["x/1.txt", "x/2.txt"])
    assert [r["added"] for r in c.to_json()["reads"]] == [[str(tmp_path / "x/AGENT.md")], []]
