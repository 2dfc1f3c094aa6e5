"""Precision of the doctor's and verify's findings on real users' files.

Runs ``memtui doctor --json`` and ``memtui verify --json`` (the claude flavor, memtui's state in a
temp dir) over every memory dir of the shared corpus (``../shared/corpus/``: real users' memory
folders from public repositories), matches each finding with its label in
``benchmarks/precision/labels.tsv`` (``TP``: the file has the problem the finding names; ``FP``:
it does not) and prints, per check: its severity, findings, true and false alarms, precision,
and the warnings (and errors) per memory file.

Three runs, as the labels name them:

- ``no-tree``: ``--project`` an empty directory (the corpus holds the memory files, not the
  repositories' code): no claim about the code can be judged there;
- ``real-tree@578c348``: ``AlexSergey__opensa``'s memory dir checked against that repository's own
  checkout at commit 578c3487 (``--opensa PATH``; skipped when not given). Get it with
  ``git clone https://github.com/AlexSergey/opensa && git -C opensa checkout 578c3487``;
- ``project``: each repository folder as the project, the memory dir resolved as Claude Code
  resolves it (``~/.claude/projects/<slug>/memory/``, empty here): the project-level findings
  (``PROJECT_CODES``: a memory folder committed to the repository that the agent never reads).

``--heldback DIR`` adds the ``heldback`` run: every checkout below DIR with a ``.claude/memory/``
(other repositories than the corpus's, listed with their commits in benchmarks/README.md),
each against its own code and history; only its warnings and errors are labelled
(``benchmarks/precision/heldback.tsv``).

A finding with no label is listed as ``unlabelled``: read its file and label it in labels.tsv
(a finding you cannot defend is ``FP``). ``--write-readme`` puts the table into benchmarks/README.md.

    python benchmarks/precision.py [--corpus ../shared/corpus] [--opensa /path/to/opensa] [--write-readme]
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import subprocess
import sys
import tempfile
from collections import Counter, defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
LABELS = HERE / "precision" / "labels.tsv"
HELDBACK_LABELS = HERE / "precision" / "heldback.tsv"

# (repo folder, memory dir inside it): every memory folder of the corpus
MEMORY_DIRS = (
    ("1110x__ETA", ".claude/memory"),
    ("13725102796__LingXi-watchos", "memory"),
    ("1ckendall__Prometheus", "memory"),
    ("2923858564__game-legal-ai-agent", "memory"),
    ("66Ronghua99__RealTalk", "memory"),
    ("8nk9567f6c-prog__bianju-workbench", ".claude/memory"),
    ("AlexSergey__opensa", ".claude/memory"),
    ("Alexnj22__Portal-Farmalasa", ".claude/memory"),
    ("ChenYuHsu413__ScratchTeaching", "claude-memory"),
    ("tanakayuushin__ai-ceo-project", "claude-memory"),
    ("tanakayuushin__ai-ceo-project", "setup/memory"),
)
OPENSA_RUN = "real-tree@578c348"
PROJECT_CODES = frozenset({"unread-memory-folder"})
FIELDS = ("run", "repo", "file", "line", "code", "severity", "label", "claim_or_phrase", "reason")


def _memtui(args: list[str], state: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC", "CLAUDE", "MEMTUI", "AGENT_"))}
    env.update(HOME=str(state / "home"), XDG_STATE_HOME=str(state / "xdg-state"), XDG_CACHE_HOME=str(state / "xdg-cache"),
               XDG_CONFIG_HOME=str(state / "xdg-config"), XDG_DATA_HOME=str(state / "xdg-data"), TZ="UTC")
    proc = subprocess.run([sys.executable, "-c", "from memtui.cli import main; main()", "--flavor", "claude", *args], capture_output=True, text=True, env=env, cwd=state, timeout=600)
    if proc.returncode not in (0, 1):
        raise SystemExit(f"memtui {' '.join(args)} exited {proc.returncode}:\n{proc.stderr}")
    return json.loads(proc.stdout)


def _claim(f: dict) -> str:
    data = f.get("data") or {}
    return str(data.get("claim") or data.get("phrase") or (data.get("other") if f["code"] == "possible-conflict" else "") or "")


def run_corpus(corpus: Path, opensa: Path | None, heldback: Path | None = None) -> tuple[list[dict], dict[str, int]]:
    """Every finding of every run as ``{run, repo, file, line, code, severity, claim_or_phrase, message}``,
    and the number of memory files per run."""
    out: list[dict] = []
    files: dict[str, int] = Counter()
    with tempfile.TemporaryDirectory(prefix="memtui-precision-") as tmp:
        state = Path(tmp)
        (state / "home").mkdir()
        empty = state / "empty-project"
        empty.mkdir()
        runs = [("no-tree", repo, corpus / repo / mdir, mdir, empty) for repo, mdir in MEMORY_DIRS]
        if opensa is not None:
            runs.append((OPENSA_RUN, "AlexSergey__opensa", opensa / ".claude/memory", ".claude/memory", opensa))
        if heldback is not None:
            runs.extend(("heldback", d.name, d / ".claude/memory", ".claude/memory", d) for d in sorted(heldback.iterdir()) if (d / ".claude/memory").is_dir())
        for run, repo, memory_dir, mdir, project in runs:
            report = _memtui(["--memory-dir", str(memory_dir), "--project", str(project), "doctor", "--json"], state)
            files[run] += report["memories"]
            for f in report["findings"]:
                if run == OPENSA_RUN and not f["code"].startswith("stale-"):
                    continue  # the real-tree run is labelled for the claims about the code only
                if run == "heldback" and f["severity"] == "info":
                    continue  # the held-back runs are labelled for their warnings and errors
                path = f"{mdir}/{f['path']}" if f["path"] else mdir
                out.append({"run": run, "repo": repo, "file": path, "line": str(f["line"] or ""), "code": f["code"],
                            "severity": f["severity"], "claim_or_phrase": _claim(f), "message": f["message"], "source": "doctor"})
            verify = _memtui(["--memory-dir", str(memory_dir), "--project", str(project), "verify", "--json"], state)  # the same claims, through verify
            doctor_claims = {(f["file"], f["line"], f["code"], f["claim_or_phrase"]) for f in out if f["run"] == run and f["repo"] == repo and f["code"].startswith("stale-")}
            for mv in verify.get("memories", []):
                for c in mv["claims"]:
                    if c["status"] != "stale":
                        continue
                    key = (f"{mdir}/{mv['relpath']}", str(c["line"]), c["code"], c["text"])
                    if key not in doctor_claims:
                        out.append({"run": run, "repo": repo, "file": key[0], "line": key[1], "code": c["code"], "severity": "?",
                                    "claim_or_phrase": c["text"], "message": c["message"], "source": "verify only"})
        for repo in sorted({r for r, _ in MEMORY_DIRS} | {p.name for p in corpus.iterdir() if p.is_dir()}):
            report = _memtui(["--project", str(corpus / repo), "doctor", "--json"], state)
            for f in report["findings"]:
                if f["code"] in PROJECT_CODES:
                    folder = Path(f["data"].get("folder", "")).relative_to(corpus / repo).as_posix()
                    out.append({"run": "project", "repo": repo, "file": folder, "line": "", "code": f["code"], "severity": f["severity"],
                                "claim_or_phrase": "", "message": f["message"], "source": "doctor"})
            files["project"] += 1
    return out, dict(files)


def load_labels(path: Path = LABELS) -> dict[tuple[str, ...], dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh, delimiter="\t", quoting=csv.QUOTE_NONE))
    return {(r["run"], r["repo"], r["file"], r["line"], r["code"], r["claim_or_phrase"]): r for r in rows}


def table(findings: list[dict], labels: dict, files: dict[str, int]) -> tuple[list[str], list[dict]]:
    per: dict[tuple[str, str, str], Counter] = defaultdict(Counter)
    unlabelled: list[dict] = []
    for f in findings:
        key = (f["run"], f["repo"], f["file"], f["line"], f["code"], f["claim_or_phrase"])
        label = labels.get(key, {}).get("label")
        if label is None:
            unlabelled.append(f)
            label = "?"
        per[(f["run"], f["code"], f["severity"])][label] += 1
    lines = ["| run | check | severity | findings | TP | FP | unlabelled | precision |", "|---|---|---|---:|---:|---:|---:|---:|"]
    order = {"error": 0, "warning": 1, "info": 2}
    for (run, code, sev), c in sorted(per.items(), key=lambda kv: (kv[0][0], order.get(kv[0][2], 3), kv[0][1])):
        n = sum(c.values())
        decided = c["TP"] + c["FP"]
        precision = f"{c['TP'] / decided:.2f}" if decided else "—"
        lines.append(f"| {run} | `{code}` | {sev} | {n} | {c['TP']} | {c['FP']} | {c['?']} | {precision} |")
    lines.append("")
    for run, n in sorted(files.items()):
        if run == "project":
            lines.append(f"- project: {n} repositories as projects (project-level checks only)")
            continue
        warn = sum(1 for f in findings if f["run"] == run and f["severity"] in ("warning", "error"))
        lines.append(f"- {run}: {n} memory files, {warn} warnings and errors: **{warn / n:.2f} per memory file**" if n else f"- {run}: no memory files")
    return lines, unlabelled


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", type=Path, default=REPO.parent / "shared" / "corpus")
    ap.add_argument("--opensa", type=Path, help="a checkout of github.com/AlexSergey/opensa at 578c3487")
    ap.add_argument("--heldback", type=Path, help="a folder of checkouts of other repositories with a .claude/memory/")
    ap.add_argument("--labels", type=Path, default=LABELS)
    ap.add_argument("--unlabelled", type=Path, help="write the unlabelled findings here (TSV, labels.tsv's columns, label left empty)")
    ap.add_argument("--write-readme", action="store_true")
    args = ap.parse_args(argv)
    findings, files = run_corpus(args.corpus.resolve(), args.opensa.resolve() if args.opensa else None, args.heldback.resolve() if args.heldback else None)
    labels = load_labels(args.labels)
    if HELDBACK_LABELS.exists():
        labels.update(load_labels(HELDBACK_LABELS))
    lines, unlabelled = table(findings, labels, files)
    print("\n".join(lines))
    if unlabelled:
        print(f"\n{len(unlabelled)} unlabelled findings:")
        for f in unlabelled:
            print(f"  {f['run']}\t{f['repo']}\t{f['file']}:{f['line']}\t{f['code']}\t{f['severity']}\t{f['claim_or_phrase']}\t{f['message'][:140]}")
        if args.unlabelled:
            with args.unlabelled.open("w", encoding="utf-8") as fh:
                for f in unlabelled:
                    fh.write("\t".join([f["run"], f["repo"], f["file"], f["line"], f["code"], f["severity"], "", f["claim_or_phrase"], f["message"].replace("\t", " ")]) + "\n")
    if args.write_readme:
        readme = HERE / "README.md"
        text = readme.read_text(encoding="utf-8")
        start, end = "<!-- precision-table -->", "<!-- /precision-table -->"
        block = f"{start}\n" + "\n".join(lines) + f"\n{end}"
        if start in text:
            text = text[: text.index(start)] + block + text[text.index(end) + len(end):]
        else:
            text += f"\n## Precision on real users' files\n\n{block}\n"
        readme.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
