"""Helpers for the cascade tests: build trees in ``tmp_path`` and compute their cascade.

The autouse ``isolated_env`` fixture (tests/conftest.py) already points HOME, the managed
dir and memtui's state dir at temp dirs, so nothing here reads the real home or /etc.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from memtui.core.cascade import Cascade, CascadeFile, compute_cascade
from memtui.core.places.flavor import AGENT, Flavor
from memtui.core.places.locations import resolve_locations


def write(root: Path, rel: str, text: str | bytes) -> Path:
    """Write ``text`` (bytes as-is, str as UTF-8) to ``root/rel``, creating parents."""
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_bytes(text.encode("utf-8"))
    return path


def cascade(
    cwd: Path,
    *,
    reads: Sequence[str | Path] = (),
    approved: bool | None = None,
    flavor: Flavor = AGENT,
    project: Path | None = None,
) -> Cascade:
    """The cascade for ``cwd`` with locations resolved for ``project`` (default: ``cwd``)."""
    locations = resolve_locations(flavor, project or cwd)
    return compute_cascade(locations, cwd, reads=reads, approved_external=approved)


def entry(c: Cascade, path: Path, files: Sequence[CascadeFile] | None = None) -> CascadeFile:
    """The single entry for ``path`` (fails when absent or repeated)."""
    found = [f for f in (c.files if files is None else files) if f.path == str(path)]
    assert len(found) == 1, f"expected one entry for {path}, got {[f.status for f in found]}"
    return found[0]


def loaded(c: Cascade, root: Path) -> list[str]:
    """Paths (relative to ``root``) of the loaded files under ``root``, in load order."""
    return [str(Path(f.path).relative_to(root)) for f in c.files if f.loaded and Path(f.path).is_relative_to(root)]


def codes(c: Cascade | CascadeFile) -> list[str]:
    """The diagnostic codes, in order."""
    return [d.code for d in c.diagnostics]
