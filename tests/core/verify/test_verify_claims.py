"""Verify: memories' claims about the code checked against a small repository.

The repository below is written by the test; each expected outcome is worked out by hand from
its files (line counts, headings, recipes, identifiers)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from memtui.core.memory.memories import read_memory
from memtui.core.verify import memory_claims, verify_memories

INVOICE = "\n".join(
    [
        "// invoices",
        "export function submitInvoice(id: string) {",
        "  return store.flushPending(id);",
        "}",
        "",
        "export class InvoiceStore {",
        "  flushPending(id: string) {",
        "    return id;",
        "  }",
        "}",
        "",
        "export const VERSION = 2;",
    ]
) + "\n"  # 12 lines
FILES = {
    "src/billing/invoice.ts": INVOICE,
    "src/orders/order_service.py": "def process_order_batch(orders):\n    return orders\n",
    "docs/runbook.md": "# Runbook\n\n## Replay a partner\n\nSteps.\n\n## Rotate keys\n",
    "lib/util.py": "def helper():\n    pass\n",
    "justfile": "lint:\n    ruff check .\n\ntest *args:\n    pytest {{args}}\n",
    ".gitignore": ".env\nbuild/\n",
}
GIT = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "init.defaultBranch=main", "-c", "commit.gpgsign=false"]


# What the project held before its last commit: the refund code and the order service at its
# old place, which the memories below still name (the git history says they were there).
OLD_FILES = {
    "src/payments/refund.ts": "export function chargeCustomer(id: string) {\n  return id;\n}\n",
    "src/order_service.py": "def process_order(orders):\n    return orders\n",
}


def make_project(root: Path, *, git: bool) -> Path:
    def write(files: dict[str, str]) -> None:
        for rel, text in files.items():
            path = root / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)

    if git:
        subprocess.run([*GIT, "init", "-q", str(root)], check=True)
        write(OLD_FILES)
        subprocess.run([*GIT, "-C", str(root), "add", "-A"], check=True)
        subprocess.run([*GIT, "-C", str(root), "commit", "-q", "-m", "old layout"], check=True)
        for rel in OLD_FILES:
            (root / rel).unlink()
    write(FILES)
    if git:
        subprocess.run([*GIT, "-C", str(root), "add", "-A"], check=True)
        subprocess.run([*GIT, "-C", str(root), "commit", "-q", "-m", "init"], check=True)
    return root


def memory(memory_dir: Path, name: str, body: str, description: str = "d") -> Path:
    memory_dir.mkdir(parents=True, exist_ok=True)
    path = memory_dir / name
    path.write_text(f"---\nname: {name}\ndescription: {description}\ntype: project\n---\n\n{body}")
    return path


TRUE = (
    "Invoices are sent by `submitInvoice()` in `src/billing/invoice.ts:10`; `InvoiceStore.flushPending`\n"  # line 7
    "writes them. See `docs/runbook.md#replay-a-partner`, run `just lint`, helpers live in `lib/`.\n"  # line 8
    "The same file from its package: billing/invoice.ts.\n"  # line 9
)
FALSE = (
    "The total is computed at `src/billing/invoice.ts:40` and `chargeCustomer` bills it.\n"  # line 7
    "Rollback: `docs/runbook.md#rollback`. Refunds: `src/payments/refund.ts`. Ship with `just deploy`.\n"  # line 8
)
RENAMED = "Orders go through `process_order` in `src/order_service.py`.\n"  # line 7
NOT_CLAIMS = (
    "Schemas are in the `acme/event-schemas` repository; see https://example.com/a.md and the\n"
    "S3/Kafka sources. The build output `build/app.js` and `.env` are local only.\n"
)


@pytest.fixture(params=["git", "walk"])
def setup(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[Path, Path]:
    if request.param == "git" and shutil.which("git") is None:
        pytest.skip("git is not installed")
    root = make_project(tmp_path / "repo", git=request.param == "git")
    memory_dir = tmp_path / "memory"
    memory(memory_dir, "project_true.md", TRUE)
    memory(memory_dir, "project_false.md", FALSE)
    memory(memory_dir, "project_renamed.md", RENAMED)
    memory(memory_dir, "project_not_claims.md", NOT_CLAIMS)
    return root, memory_dir


def run(root: Path, memory_dir: Path, **kwargs: object):  # type: ignore[no-untyped-def]
    mems = [read_memory(p, memory_dir) for p in sorted(memory_dir.glob("*.md"))]
    return verify_memories(mems, root, exclude=[memory_dir], **kwargs)  # type: ignore[arg-type]


def test_true_claims_all_verify(setup: tuple[Path, Path]) -> None:
    report = run(*setup)
    mv = report.memories["project_true.md"]
    assert [(r.claim.kind, r.claim.text, r.claim.line, r.status) for r in mv.results] == [
        ("symbol", "submitInvoice()", 7, "verified"),
        ("path", "src/billing/invoice.ts:10", 7, "verified"),  # 12 lines: line 10 exists
        ("symbol", "InvoiceStore.flushPending", 7, "verified"),
        ("path", "docs/runbook.md#replay-a-partner", 8, "verified"),  # "## Replay a partner"
        ("command", "just lint", 8, "verified"),
        ("path", "lib/", 8, "verified"),
        ("path", "billing/invoice.ts", 9, "verified"),  # prose, and a suffix of the real path
    ]
    assert mv.summary() == "verified 7/7"


def test_false_claims_are_stale_with_what_was_found(setup: tuple[Path, Path]) -> None:
    report = run(*setup)
    by_text = {r.claim.text: r for r in report.memories["project_false.md"].results}
    line = by_text["src/billing/invoice.ts:40"]
    assert (line.code, line.claim.line) == ("stale-line", 7)
    assert "src/billing/invoice.ts has 12 lines; line 40 is past its end" in line.message
    symbol = by_text["chargeCustomer"]
    assert (symbol.code, symbol.instead) == ("stale-symbol", None)  # nothing like it in the repo
    anchor = by_text["docs/runbook.md#rollback"]
    assert (anchor.code, anchor.claim.line) == ("stale-line", 8)
    assert "no heading of docs/runbook.md has the anchor `#rollback`" in anchor.message
    path = by_text["src/payments/refund.ts"]
    assert (path.code, path.instead) == ("stale-path", None)
    command = by_text["just deploy"]
    assert command.code == "stale-command"
    assert "justfile has no recipe `deploy`" in command.message
    assert report.memories["project_false.md"].summary() == "0/5 verified · 5 stale"


def test_renamed_claims_name_the_new_place(setup: tuple[Path, Path]) -> None:
    report = run(*setup)
    path, symbol = sorted(report.memories["project_renamed.md"].stale, key=lambda r: r.claim.kind)
    assert (path.code, path.instead) == ("stale-path", "src/orders/order_service.py")  # same name, moved
    assert "moved to: `src/orders/order_service.py`?" in path.message
    assert (symbol.code, symbol.instead) == ("stale-symbol", "process_order_batch")
    assert "closest: `process_order_batch`" in symbol.message


def test_what_is_not_a_claim(setup: tuple[Path, Path]) -> None:
    report = run(*setup)
    # `acme/event-schemas`: no top-level acme/ (a repository name); the URL, S3/Kafka and .env
    # are no claims; build/app.js is a claim but build/ is ignored: unchecked, not stale
    results = report.memories["project_not_claims.md"].results
    assert [(r.claim.text, r.status) for r in results] == [("build/app.js", "unchecked")]


def test_findings_carry_claim_line_and_instead(setup: tuple[Path, Path]) -> None:
    report = run(*setup)
    findings = [(f.code, f.relpath, f.line, f.data["claim"], f.data["instead"]) for f in report.findings()]
    assert ("stale-symbol", "project_renamed.md", 7, "process_order", "process_order_batch") in findings
    assert ("stale-path", "project_renamed.md", 7, "src/order_service.py", "src/orders/order_service.py") in findings
    assert len(findings) == 7  # 5 false + 2 renamed
    assert report.complete


def test_a_search_out_of_time_leaves_symbols_unchecked(setup: tuple[Path, Path]) -> None:
    report = run(*setup, timeout=0.0)
    results = {r.claim.text: r.status for r in report.memories["project_true.md"].results}
    assert results["submitInvoice()"] == "unchecked"  # not stale: the search never finished
    assert results["src/billing/invoice.ts:10"] == "verified"  # paths need no search
    assert not report.complete
    assert [f.code for f in report.findings() if f.relpath is None] == ["verify-incomplete"]


def test_nothing_is_written(setup: tuple[Path, Path]) -> None:
    root, memory_dir = setup
    before = {p: p.read_bytes() for p in [*root.rglob("*"), *memory_dir.rglob("*")] if p.is_file() and ".git" not in p.parts}
    run(root, memory_dir)
    after = {p: p.read_bytes() for p in [*root.rglob("*"), *memory_dir.rglob("*")] if p.is_file() and ".git" not in p.parts}
    assert after == before


def test_claims_from_description_and_body_with_file_lines(tmp_path: Path) -> None:
    path = memory(
        tmp_path,
        "project_x.md",
        "```sh\njust build src/in_fence.py\n```\n\nCall `Foo.bar` then `make release`; see src/x.py:3.\n",
        description="billing lives in `src/billing.ts`",
    )
    claims = memory_claims(read_memory(path, tmp_path))
    assert [(c.kind, c.text, c.line) for c in claims] == [
        ("path", "src/billing.ts", 3),  # the description's line
        ("symbol", "Foo.bar", 11),
        ("command", "make release", 11),
        ("path", "src/x.py:3", 11),  # prose
    ]  # nothing from the fenced block
    assert claims[3].line_no == 3 and claims[1].words == ("Foo", "bar")
