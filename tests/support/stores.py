"""The memory-store scenarios captured from Claude Code 2.1.332 (``scripts/oracle_stores.py``), laid
out again under a test's ``tmp_path``.

A capture is ``tests/captures/claude-2.1.332/stores/<name>/``: ``home/`` (the CLI's transcripts,
sub-agent files and memory dirs, relative to HOME), ``work/`` (the workspace's own files) and
``scenario.json`` (the layout, with the paths of the run). ``materialize`` copies both under a
new root, rewriting the run's root path — in file contents, and as a slug in the project dir
names —, every file dated a minute before the first session (the workspace was there first), and rebuilds the git metadata the CLI saw (by hand: no ``git`` needed): a main checkout's
``.git`` with the objects of the commits the sessions recorded, and for the ``worktree`` scenario
the linked worktree's admin dir whose back-link still names the worktree's first place.
"""

from __future__ import annotations

import json
import os
import re
from datetime import datetime
import shutil
from pathlib import Path

CAPTURES = Path(__file__).resolve().parent.parent / "captures" / "claude-2.1.332" / "stores"
SCENARIOS = ("healthy", "subdir", "worktree", "trust", "moved", "automem_off", "ignored", "committed",
             "worktree_ok", "two_subdirs", "config_dir", "project_dir_name", "user_setting", "automem_enabled_false")
_COMMITS = re.compile(r"Recent commits:\\n([0-9a-f]{7,40}) ")
_STAMP = re.compile(r'"timestamp":"(20[0-9]{2}-[0-9]{2}-[0-9]{2}T[0-9:.]+Z)"')


def slug(path: str) -> str:
    return re.sub(r"[^A-Za-z0-9]", "-", path)


def _main_git(checkout: Path, commits: set[str]) -> None:
    git = checkout / ".git"
    (git / "refs" / "heads").mkdir(parents=True, exist_ok=True)
    (git / "HEAD").write_text("ref: refs/heads/main\n")
    for short in commits:
        obj = git / "objects" / short[:2] / (short[2:] + "0" * (38 - len(short[2:])))
        obj.parent.mkdir(parents=True, exist_ok=True)
        obj.write_bytes(b"")


def materialize(name: str, root: Path) -> dict:
    """Lay scenario ``name`` out under ``root``; returns its layout (``scenario.json``) with every
    path rewritten, plus ``home`` and ``env`` (the variables the sessions ran with that steer the
    stores: ``CLAUDE_CONFIG_DIR``, ``CLAUDE_CODE_PROJECT_DIR_NAME``)."""
    src = CAPTURES / name
    layout = json.loads((src / "scenario.json").read_text())
    old = layout["root"]
    new = str(root)

    def fix(text: str) -> str:
        return text.replace(slug(old), slug(new)).replace(old, new)

    commits: set[str] = set()
    stamps: list[str] = []
    written: list[Path] = []
    for part in ("home", "work"):
        base = src / part
        if not base.is_dir():
            continue
        for f in sorted(base.rglob("*")):
            if not f.is_file():
                continue
            rel = f.relative_to(base).as_posix().replace(slug(old), slug(new))
            dest = (root / "home" / rel) if part == "home" else (root / rel)
            dest.parent.mkdir(parents=True, exist_ok=True)
            text = f.read_text(encoding="utf-8")
            commits.update(_COMMITS.findall(text))
            stamps.extend(_STAMP.findall(text))
            dest.write_text(fix(text), encoding="utf-8")
            written.append(dest)
    # the workspace's files were there before its first session, as in the run
    before = datetime.fromisoformat(min(stamps).replace("Z", "+00:00")).timestamp() - 60 if stamps else None
    for dest in written if before is not None else ():
        os.utime(dest, (before, before))
    (root / "home").mkdir(exist_ok=True)
    out = json.loads(fix(json.dumps(layout)))
    out["home"] = str(root / "home")
    out["env"] = {k: v for s in out.get("sessions", []) for k, v in s.get("env", {}).items()}
    project = Path(out["project"])
    project.mkdir(parents=True, exist_ok=True)
    _main_git(project, commits)
    if name == "worktree_ok":  # an intact link: the admin dir's gitdir names the worktree's .git
        admin = project / ".git" / "worktrees" / "wt"
        admin.mkdir(parents=True)
        (admin / "commondir").write_text("../..\n")
        (admin / "HEAD").write_text("ref: refs/heads/feature\n")
        (admin / "gitdir").write_text(str(Path(out["worktree"]) / ".git") + "\n")
        Path(out["worktree"]).mkdir(parents=True, exist_ok=True)
        (Path(out["worktree"]) / ".git").write_text(f"gitdir: {admin}\n")
    if name not in ("moved", "worktree"):  # the folders the sessions ran in (those two were moved away)
        for session in out.get("sessions", []):
            Path(session["cwd"]).mkdir(parents=True, exist_ok=True)
    if name == "worktree":
        admin = project / ".git" / "worktrees" / "wt"
        admin.mkdir(parents=True)
        (admin / "commondir").write_text("../..\n")
        (admin / "HEAD").write_text("ref: refs/heads/feature\n")
        (admin / "gitdir").write_text(str(root / "wt" / ".git") + "\n")  # still the first place
        moved = Path(out["worktree"])
        moved.mkdir(parents=True, exist_ok=True)
        (moved / ".git").write_text(f"gitdir: {admin}\n")
    return out


def copy_capture(name: str, dest: Path) -> None:
    """The capture's files as they are (for tests of the reader itself)."""
    shutil.copytree(CAPTURES / name, dest)
