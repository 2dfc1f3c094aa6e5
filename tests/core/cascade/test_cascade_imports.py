"""``@`` imports: prose only, accepted forms, trailing punctuation, fragments, depth,
cycles and external imports with their approval (docs/behaviour.md §3.3)."""

from __future__ import annotations

import json
import os
from pathlib import Path

from support.cascade import cascade, codes, entry, loaded, write

from memtui.core.cascade import project_key, record_decision
from memtui.core.places.flavor import CLAUDE


def test_ancestor_import_from_subdirectory_cwd_is_pending_until_approved(tmp_path: Path) -> None:
    w = tmp_path / "w"
    write(w, "AGENT.md", "@./rules.md\n")
    write(w, "rules.md", "shared rules")
    (w / "sub").mkdir()
    c = cascade(w / "sub")
    pending = entry(c, w / "rules.md")
    assert (pending.status, pending.loaded, pending.parent) == ("pending-approval", False, str(w / "AGENT.md"))
    assert [(p.path, p.imported_by, p.line) for p in c.pending_external_imports] == [
        (str(w / "rules.md"), str(w / "AGENT.md"), 1)
    ]
    assert [(d.code, d.path, d.line) for d in entry(c, w / "AGENT.md").diagnostics] == [
        ("import-external-pending", str(w / "AGENT.md"), 1)
    ]
    assert c.external_approval.decision is None
    # approve (stored in memtui's state) → it loads
    state = Path(os.environ["MEMTUI_STATE_DIR"])
    record_decision(state, project_key(w / "sub"), "approved")
    approved = cascade(w / "sub")
    assert loaded(approved, w) == ["AGENT.md", "rules.md"]
    assert approved.pending_external_imports == []
    assert approved.external_approval.source == "memtui"
    # with cwd w the import is inside the cwd: no approval needed
    record_decision(state, project_key(w / "sub"), "declined")
    assert loaded(cascade(w), w) == ["AGENT.md", "rules.md"]


def test_declined_external_import_is_listed_not_pending(tmp_path: Path) -> None:
    # the project one level down, so "outside" stays in this test's own dir (tmp_path.parent
    # is shared: tests/core/agent/test_agent_*.py check that no file escaped to it)
    project = tmp_path / "p"
    write(project, "AGENT.md", "@../outside.md\n")
    write(tmp_path, "outside.md", "out")
    record_decision(Path(os.environ["MEMTUI_STATE_DIR"]), project_key(project), "declined")
    c = cascade(project)
    assert entry(c, tmp_path / "outside.md").status == "declined"
    assert c.pending_external_imports == []
    assert "import-external-declined" in codes(c)


def test_user_layer_external_imports_always_load(tmp_path: Path, isolated_env: Path) -> None:
    write(isolated_env, ".agent/AGENT.md", "@~/notes/style.md\n")
    write(isolated_env, "notes/style.md", "style")
    proj = tmp_path / "p"
    proj.mkdir()
    c = cascade(proj)
    style = entry(c, isolated_env / "notes/style.md")
    assert (style.loaded, style.layer, style.kind, style.depth) == (True, "user", "import", 1)


def test_claude_flavor_reads_the_agents_own_approval_flag(tmp_path: Path, isolated_env: Path) -> None:
    w = tmp_path / "w"
    write(w, "CLAUDE.md", "@./x.md\n")
    write(w, "x.md", "x")
    (w / "sub").mkdir()
    key = str(w / "sub")  # no git: the project key is the cwd
    config = {"projects": {key: {"hasClaudeMdExternalIncludesApproved": True}}}
    write(isolated_env, ".claude.json", json.dumps(config))
    c = cascade(w / "sub", flavor=CLAUDE)
    assert (c.external_approval.approved, c.external_approval.source) == (True, "claude.json")
    assert loaded(c, w) == ["CLAUDE.md", "x.md"]
    assert json.loads((isolated_env / ".claude.json").read_text()) == config  # never written


def test_claude_flavor_with_an_unusable_config_keeps_imports_pending_and_says_why(tmp_path: Path, isolated_env: Path) -> None:
    """A broken ``~/.claude.json`` or a FIFO in its place: no approval flag (the import waits),
    one ``claude-json-unreadable`` warning naming the file, and never a hang on the FIFO."""
    w = tmp_path / "w"
    write(w, "CLAUDE.md", "@./x.md\n")
    write(w, "x.md", "x")
    (w / "sub").mkdir()
    config = isolated_env / ".claude.json"
    for make in (lambda: config.write_text('{"projects": {'), lambda: os.mkfifo(config)):
        config.unlink(missing_ok=True)
        make()
        c = cascade(w / "sub", flavor=CLAUDE)
        assert (c.external_approval.approved, c.external_approval.source) == (False, "default")
        assert entry(c, w / "x.md").status == "pending-approval"
        unreadable = [d for d in c.diagnostics if d.code == "claude-json-unreadable"]
        assert [(d.severity, d.path) for d in unreadable] == [("warning", str(config))]
        assert "approval flags" in unreadable[0].message


def test_trailing_punctuation_fails_like_the_reference_with_a_hint(tmp_path: Path) -> None:
    write(tmp_path, "AGENT.md", "See @a.md: x\nAlso @b.md, y\nEnd @c.md.\n")
    for name in ("a.md", "b.md", "c.md"):
        write(tmp_path, name, name)
    c = cascade(tmp_path)
    assert loaded(c, tmp_path) == ["AGENT.md"]
    for name, punct, line in (("a.md", ":", 1), ("b.md", ",", 2), ("c.md", ".", 3)):
        assert entry(c, tmp_path / (name + punct)).status == "missing"
    diags = entry(c, tmp_path / "AGENT.md").diagnostics
    assert [(d.code, d.line) for d in diags] == [("import-trailing-punctuation", n) for n in (1, 2, 3)]
    assert ["did you mean `a.md`?" in diags[0].message, "did you mean `b.md`?" in diags[1].message] == [True, True]
    assert "did you mean `c.md`?" in diags[2].message


def test_fragment_is_cut_and_the_whole_file_imported(tmp_path: Path) -> None:
    write(tmp_path, ".agent/AGENT.md", "Follow @test.md#rule please.\n")
    write(tmp_path, ".agent/test.md", "# rule\nall of it")
    c = cascade(tmp_path)
    imported = entry(c, tmp_path / ".agent/test.md")
    assert (imported.loaded, imported.content, imported.parent) == (True, "# rule\nall of it", str(tmp_path / ".agent/AGENT.md"))
    assert [(d.code, d.line) for d in entry(c, tmp_path / ".agent/AGENT.md").diagnostics] == [("import-fragment-ignored", 1)]


def test_only_prose_imports(tmp_path: Path) -> None:
    write(
        tmp_path,
        "AGENT.md",
        "# T\n\n```sh\n@fenced.md\n```\n\nUse `@span.md` here.\nMail me@mail.md today (@paren.md).\n\n"
        "    @indented.md\n\n<div>\n@html.md\n</div>\n\nInstall @types/node first.\n",
    )
    for name in ("fenced.md", "span.md", "mail.md", "paren.md", "indented.md", "html.md"):
        write(tmp_path, name, name)
    c = cascade(tmp_path)
    assert loaded(c, tmp_path) == ["AGENT.md"]
    # the only import attempt is @types/node, which fails (line 16): an npm scope, so the
    # finding says it was probably not meant as an import
    assert [f.path for f in c.files if f.kind == "import"] == [str(tmp_path / "types/node")]
    assert [(d.code, d.severity, d.line) for d in c.diagnostics] == [("import-probably-not-meant", "info", 16)]


def test_relative_imports_resolve_against_the_realpath_of_the_importer(tmp_path: Path) -> None:
    write(tmp_path, "shared/real.md", "@sibling.md\n")
    write(tmp_path, "shared/sibling.md", "sibling")
    (tmp_path / "AGENT.md").symlink_to(tmp_path / "shared/real.md")
    c = cascade(tmp_path)
    assert loaded(c, tmp_path) == ["AGENT.md", "shared/sibling.md"]


def test_four_hops_load_five_stop_and_cycles_terminate(tmp_path: Path) -> None:
    write(tmp_path, "AGENT.md", "@h1.md\n")
    for i in range(1, 5):
        write(tmp_path, f"h{i}.md", f"@h{i + 1}.md\n")
    write(tmp_path, "h5.md", "too deep")
    c = cascade(tmp_path)
    assert loaded(c, tmp_path) == ["AGENT.md", "h1.md", "h2.md", "h3.md", "h4.md"]
    deep = entry(c, tmp_path / "h5.md")
    assert (deep.status, deep.depth, deep.parent) == ("depth-limit", 5, str(tmp_path / "h4.md"))
    assert [(d.code, d.path, d.line) for d in c.diagnostics] == [("import-depth-limit", str(tmp_path / "h4.md"), 1)]


def test_import_cycle_terminates_each_file_once(tmp_path: Path) -> None:
    write(tmp_path, "AGENT.md", "@a.md\n")
    write(tmp_path, "a.md", "A @b.md\n")
    write(tmp_path, "b.md", "B\n\n@a.md and @AGENT.md\n")
    c = cascade(tmp_path)
    assert loaded(c, tmp_path) == ["AGENT.md", "a.md", "b.md"]
    assert [(d.code, d.line) for d in entry(c, tmp_path / "b.md").diagnostics] == [("import-cycle", 3), ("import-cycle", 3)]
    assert c.rendered.count("Contents of") == 3


def test_first_occurrence_wins_across_files(tmp_path: Path) -> None:
    write(tmp_path, "AGENT.md", "@common.md\n")
    write(tmp_path, "AGENT.local.md", "@common.md\n")
    write(tmp_path, "common.md", "common")
    c = cascade(tmp_path)
    assert loaded(c, tmp_path) == ["AGENT.md", "common.md", "AGENT.local.md"]
    dup = [f for f in c.files if f.path == str(tmp_path / "common.md")][1]
    assert (dup.status, dup.parent, dup.layer) == ("duplicate", str(tmp_path / "AGENT.local.md"), "local")
    assert "import-duplicate" in codes(entry(c, tmp_path / "AGENT.local.md"))


def test_binary_import_skipped(tmp_path: Path) -> None:
    write(tmp_path, "AGENT.md", "See @diagram.png\n")
    write(tmp_path, "diagram.png", b"\x89PNG\r\n")
    c = cascade(tmp_path)
    assert entry(c, tmp_path / "diagram.png").status == "binary"
    assert "import-binary" in codes(c)
