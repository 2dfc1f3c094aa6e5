"""A claim about the code is stale only when the project once had it: what the git history
confirms, what it cannot, and the claims a sentence takes back. Each project is built here with
the history a real one would have (a file committed, then deleted or moved)."""

from __future__ import annotations

import subprocess
from pathlib import Path

from memtui.core.memory.memories import read_memory
from memtui.core.verify import memory_claims, verify_memories

GIT = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "init.defaultBranch=main", "-c", "commit.gpgsign=false"]


def _commit(root: Path, files: dict[str, str | None], message: str) -> None:
    for rel, text in files.items():
        path = root / rel
        if text is None:
            path.unlink()
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
    subprocess.run([*GIT, "-C", str(root), "add", "-A"], check=True)
    subprocess.run([*GIT, "-C", str(root), "commit", "-q", "-m", message], check=True)


def _repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    subprocess.run([*GIT, "init", "-q", str(root)], check=True)
    _commit(root, {
        "src/game/load-player.ts": "export function loadPlayerMesh(url: string) {\n  return url;\n}\n",
        "tests/data/handling.cfg": "; a fixture\n",
        "src/app.ts": "import { WebGLRenderTarget } from 'three';\nexport const target = new WebGLRenderTarget(1, 1);\n",
    }, "first")
    _commit(root, {
        "src/game/load-player.ts": None,
        "tests/data/handling.cfg": None,
        "src/app.ts": "export const app = 1;\n",
        "packages/game/src/character.ts": "export class Character {}\n",
    }, "move to packages")
    return root


def _memory(memory_dir: Path, body: str) -> Path:
    memory_dir.mkdir(parents=True, exist_ok=True)
    path = memory_dir / "project_notes.md"
    path.write_text(f"---\nname: notes\ndescription: d\ntype: project\n---\n\n{body}")
    return path


def _results(root: Path, memory_dir: Path, body: str) -> tuple[dict[str, tuple[str, str | None, bool]], object]:
    path = _memory(memory_dir, body)
    report = verify_memories([read_memory(path, memory_dir)], root, exclude=[memory_dir])
    results = report.memories["project_notes.md"].results
    return {r.claim.text: (r.status, r.code, r.confirmed) for r in results}, report


def test_a_path_the_history_had_is_stale_and_one_it_never_had_is_no_claim(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    got, report = _results(root, tmp_path / "mem", "The player loads in `src/game/load-player.ts`; the scene uses `three.js` and `assets/city.json`.\n")
    assert got["src/game/load-player.ts"] == ("stale", "stale-path", True)
    # never a file of this repository: a library name, a game asset
    assert got["three.js"][0] == "unchecked"
    assert got["assets/city.json"][0] == "unchecked"
    findings = report.findings()
    assert [(f.code, f.severity, f.data["claim"]) for f in findings] == [("stale-path", "warning", "src/game/load-player.ts")]


def test_a_bare_data_file_name_is_not_confirmed_by_a_fixture_of_that_name(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    got, _ = _results(root, tmp_path / "mem", "Vehicle mass comes from `handling.cfg` and the code in `load-player.ts`.\n")
    assert got["handling.cfg"][0] == "unchecked"  # the game's own file; the repo only had a test copy
    assert got["load-player.ts"] == ("stale", "stale-path", True)  # a source file it had


def test_a_name_is_stale_only_when_the_project_defined_it(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    got, _ = _results(root, tmp_path / "mem", "Meshes come from `loadPlayerMesh()`; depth goes to a `WebGLRenderTarget` (three.js).\n")
    assert got["loadPlayerMesh()"] == ("stale", "stale-symbol", True)  # `export function loadPlayerMesh` was removed
    assert got["WebGLRenderTarget"][0] == "unchecked"  # only imported from a library, never defined here


def test_a_sentence_that_says_the_file_is_gone_makes_no_claim(tmp_path: Path) -> None:
    body = (
        "Removed the placeholder (`src/game/load-player.ts` + its model).\n"
        "There is no `src/public-api.ts` (methods live on `Game`).\n"
        "`src/old.ts` → `src/app.ts`.\n"
        "For example `src/example/thing.ts`, or e.g. `path/to/file.ts`.\n"
        "The character lives in `packages/game/src/character.ts`.\n"
    )
    claims = [c.text for c in memory_claims(read_memory(_memory(tmp_path / "mem", body), tmp_path / "mem"))]
    assert claims == ["src/app.ts", "packages/game/src/character.ts"]


def test_without_a_history_a_stale_claim_is_advice(tmp_path: Path) -> None:
    root = tmp_path / "plain"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.ts").write_text("export const app = 1;\n")
    got, report = _results(root, tmp_path / "mem", "Billing is in `src/billing.ts`.\n")
    assert got["src/billing.ts"] == ("stale", "stale-path", False)
    assert [(f.code, f.severity) for f in report.findings()] == [("stale-path", "info")]


def test_a_fresh_repository_with_no_commit_confirms_nothing(tmp_path: Path) -> None:
    root = tmp_path / "fresh"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.ts").write_text("export const app = 1;\n")
    subprocess.run([*GIT, "init", "-q", str(root)], check=True)
    got, _ = _results(root, tmp_path / "mem", "Billing is in `src/billing.ts`.\n")
    assert got["src/billing.ts"] == ("stale", "stale-path", False)


def test_no_project_tree_gives_one_notice_instead_of_a_finding_per_claim(tmp_path: Path) -> None:
    root = tmp_path / "empty"
    root.mkdir()
    (root / "CLAUDE.md").write_text("# rules\n")  # the agent's own file is no code
    body = "Billing is in `src/billing.ts`, `chargeCustomer()` bills, `src/refund.ts` refunds.\n"
    got, report = _results(root, tmp_path / "mem", body)
    assert {status for status, _, _ in got.values()} == {"unchecked"}
    findings = report.findings()
    assert [(f.code, f.relpath, f.severity) for f in findings] == [("claims-not-checked", None, "info")]
    assert f"project not found at {root}" in findings[0].message
    assert "3 claims about the code in 1 memory not checked" in findings[0].message


def test_more_ways_a_sentence_takes_a_name_back(tmp_path: Path) -> None:
    body = (
        "Don't import from `src/core.ts` anymore.\n"
        "Don't recreate `src/legacy.ts`.\n"
        "Before the refactor, `src/all.ts` held everything.\n"
        "- ~~Migration tool `tools/migrate.py`: moved the rows once~~\n"
        "删 `cli/resubmit.py`，不留别名。\n"
        "2026-07 退役 `query.py` 的旧查询。\n"
        "Never edit `src/vendor/client.ts` by hand.\n"  # a rule about a file that exists
    )
    claims = [c.text for c in memory_claims(read_memory(_memory(tmp_path / "mem", body), tmp_path / "mem"))]
    assert claims == ["src/vendor/client.ts"]


def test_a_file_and_a_line_of_it_are_two_claims(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    (root / "src" / "app.ts").write_text("export const app = 1;\n")
    got, _ = _results(root, tmp_path / "mem", "Start in `src/app.ts`.\nThe handler is at `src/app.ts:120`.\n")
    assert got["src/app.ts"][0] == "verified"
    assert got["src/app.ts:120"][:2] == ("stale", "stale-line")


def test_a_rename_git_recorded_is_named_and_a_folder_it_had_is_stale(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    subprocess.run([*GIT, "init", "-q", str(root)], check=True)
    _commit(root, {"pkg/core.py": "def run_job():\n    return 1\n" * 5, "config/dev.yaml": "a: 1\n"}, "first")
    subprocess.run([*GIT, "-C", str(root), "mv", "pkg/core.py", "pkg/engine.py"], check=True)
    _commit(root, {"config/dev.yaml": None}, "rename the core, drop the config")
    (root / "config").rmdir()  # as a fresh clone has it: git keeps no empty folder
    got, report = _results(root, tmp_path / "mem", "The work happens in `pkg/core.py`; settings live in `config/`.\n")
    assert got["pkg/core.py"] == ("stale", "stale-path", True)
    assert got["config/"] == ("stale", "stale-path", True)
    [core] = [r for r in report.memories["project_notes.md"].results if r.claim.text == "pkg/core.py"]
    assert core.instead == "pkg/engine.py" and "git recorded its rename to `pkg/engine.py`" in core.message


def test_a_shallow_or_partial_clone_confirms_nothing(tmp_path: Path) -> None:
    origin = _repo(tmp_path)
    shallow = tmp_path / "shallow"
    subprocess.run([*GIT, "clone", "-q", "--depth", "1", f"file://{origin}", str(shallow)], check=True)
    got, report = _results(shallow, tmp_path / "mem", "The player loads in `src/game/load-player.ts`.\n")
    # the deleting commit's parent is not in a depth-1 clone: the path may well have existed
    assert got["src/game/load-player.ts"] == ("stale", "stale-path", False)
    assert any("shallow clone" in note for note in report.notes)
    partial = tmp_path / "partial"
    subprocess.run([*GIT, "clone", "-q", str(origin), str(partial)], check=True)
    subprocess.run([*GIT, "-C", str(partial), "config", "remote.origin.promisor", "true"], check=True)
    got, report = _results(partial, tmp_path / "mem2", "The player loads in `src/game/load-player.ts`.\n")
    assert got["src/game/load-player.ts"] == ("stale", "stale-path", False)  # never a fetch to find out
    assert any("partial clone" in note for note in report.notes)


def test_a_huge_removed_line_is_not_read_for_definitions(tmp_path: Path) -> None:
    from memtui.core.verify.history import MAX_DEFINITION_CHARS, removed_words

    root = tmp_path / "repo"
    root.mkdir()
    subprocess.run([*GIT, "init", "-q", str(root)], check=True)
    _commit(root, {"gen.ts": "  ghostFunc(" + "):" * (MAX_DEFINITION_CHARS * 50) + "\n", "keep.ts": "export function kept() {}\n"}, "first")
    _commit(root, {"gen.ts": None}, "drop the generated file")
    found = removed_words(root, ["ghostFunc"], timeout=5)
    assert found.complete and found.found == frozenset()  # a 200 KB line is no definition


def test_names_a_sentence_says_exist_are_kept(tmp_path: Path) -> None:
    body = (
        "Do not remove `src/config.ts`.\n"
        "Removing `src/flags.ts` breaks the build.\n"
        "Moved the cache to `src/cache.ts`.\n"
        "Replaced Redis with `src/store.ts`.\n"
        "The no-op handler is `src/noop.ts`.\n"
        "`src/a.ts` is deprecated in favour of `src/b.ts`.\n"
        "Renamed `oldName` → `newName` in `src/x.ts`.\n"
        "Legacy: `src/api.ts` handles v1 clients.\n"
        "Use `src/old.ts` — removed.\n"
        "Never call `hash_password_v1` again.\n"
        "RIP `seed_fixtures()`.\n"
        "- [x] delete `src/legacy_auth.py`\n"
        "`src/payments/` 目录已经迁移到 `src/billing/`。\n"
        "`src/utils/dates.ts` は `src/utils/time.ts` にリネームした。\n"
        "Eliminamos `scripts/seed_db.py` y movimos `scripts/deploy.sh` a `scripts/ci/deploy.sh`.\n"
        "Das Modul `src/legacy_csv.py` wurde im März entfernt.\n"
        "The old CSV export is `src/csv_export.py` — still used by the quarterly run.\n"
    )
    claims = [c.text for c in memory_claims(read_memory(_memory(tmp_path / "mem", body), tmp_path / "mem"))]
    assert claims == [
        "src/config.ts", "src/flags.ts", "src/cache.ts", "src/store.ts", "src/noop.ts", "src/b.ts", "newName", "src/x.ts", "src/api.ts",
        "src/billing/", "src/utils/time.ts", "scripts/ci/deploy.sh",  # where things went, not where they were
        "src/csv_export.py",  # "old" with a present verb: it is there
    ]


def test_a_long_line_of_names_keeps_every_name(tmp_path: Path) -> None:
    from memtui.core.verify.claims import CONTEXT_CHARS, claims_in_text

    names = 4000
    body = "Files: " + " ".join(f"`src/f{i}.ts`" for i in range(names))
    claims = list(claims_in_text(body, 1))
    assert len(claims) == names  # each read within CONTEXT_CHARS of its name, not the whole line
    assert CONTEXT_CHARS < len(body)
