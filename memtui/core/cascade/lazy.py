"""Lazy loading: what one read of a target file adds to a session (docs/behaviour.md §3.5).

When the agent first reads (Read/Write/Edit — never Bash) a file X inside the cwd:
1. Managed and User *conditional* rules matching X (patterns relative to the cwd);
2. for each directory from the cwd (exclusive) down to X's directory: ``AGENT.md``,
   ``.agent/AGENT.md``, ``AGENT.local.md``, the unconditional rules and the matching
   conditional rules (patterns relative to that directory);
3. for each directory from the filesystem root down to the cwd: only the matching
   conditional rules.
A file loads at most once per session; nested files never follow external imports. This
mirrors the reference's ``getNestedMemoryAttachmentsForFile``.
"""

from __future__ import annotations

import os
from pathlib import Path

from string import Template

from memtui.core.base.diagnostics import Diagnostic

from .agents_md import lazy_agents
from .imports import is_inside
from .loader import CascadeContext, Loader
from .model import Cascade, CascadeFile, Layer, ReadStep, SessionState
from .render import render_lazy
from .rules import RuleMatcher

READ_TOOLS = ("Read", "Write", "Edit")


def new_session(cascade: Cascade) -> SessionState:
    """A session right after startup: every file the startup cascade loaded is in context."""
    return SessionState(loaded_paths={f.path for f in cascade.files if f.loaded})


def _target_path(cwd: Path, target: Path | str) -> Path:
    path = Path(os.path.expanduser(str(target))) if str(target).startswith("~") else Path(target)
    return Path(os.path.normpath(path if path.is_absolute() else cwd / path))


def nested_dirs(cwd: Path, target: Path) -> list[Path]:
    """Directories from ``cwd`` (exclusive) down to ``target``'s directory (inclusive)."""
    out: list[Path] = []
    current = target.parent
    while current != cwd and current != current.parent:
        if str(current).startswith(str(cwd)):  # the reference's plain prefix test
            out.append(current)
        current = current.parent
    out.reverse()
    return out


def simulate_read(cascade: Cascade, state: SessionState, target: Path | str, *, tool: str = "Read") -> ReadStep:
    """Simulate the agent's ``tool`` on ``target`` (relative to the cwd or absolute) and
    return what it adds; ``state`` is updated and the step appended to ``state.steps``.

    Files already in ``state`` are reported in ``ReadStep.considered`` with status
    ``already-loaded``. Never raises for anything on disk.
    """
    ctx = cascade.context
    assert isinstance(ctx, CascadeContext), "a Cascade made by compute_cascade"
    cwd = ctx.env.cwd
    path = _target_path(cwd, target)
    step = ReadStep(str(path), tool, renders=ctx.locations.flavor.behaviour.instructions.lazy_message is not None)
    state.steps.append(step)
    if tool not in READ_TOOLS:
        step.diagnostics.append(
            Diagnostic("read-tool-ignored", "info", f"{tool} does not trigger nested loading; only {', '.join(READ_TOOLS)} do", str(path))
        )
        return step
    if not is_inside(path, cwd):
        step.diagnostics.append(
            Diagnostic("read-outside-cwd", "info", f"{path} is outside the working directory {cwd}: the agent loads nothing for it", str(path))
        )
        return step
    state.loaded_paths.add(str(path))  # the read file itself is now in context
    candidates: list[CascadeFile] = []
    processed: set[str] = set()
    flavor = ctx.locations.flavor
    loader = Loader(ctx.env, processed, lazy=True)
    # 1. Managed and User conditional rules, relative to the cwd.
    candidates += _conditioned(loader, path, ctx.env.managed_dir / flavor.dot_dir / "rules", "managed", False, cwd)
    candidates += _conditioned(loader, path, ctx.env.user_base_dir / "rules", "user", True, cwd)
    # 2. Nested directories, cwd (exclusive) → the target's directory.
    for directory in nested_dirs(cwd, path):
        dot = directory / flavor.dot_dir
        for file_path, layer in (
            (directory / flavor.instruction_file, "project"),
            (dot / flavor.instruction_file, "project"),
            (directory / flavor.local_file, "local"),
        ):
            entries = loader.process_file(file_path, layer, "instructions", False)  # type: ignore[arg-type]
            for e in entries:
                if e.depth == 0 and e.loaded:
                    e.reason = f"nested {'local' if layer == 'local' else 'project'} instructions of {directory}, loaded by the first read below it"
            candidates += entries
        # Unconditional rules use a copy of the processed set so conditional ones still load.
        copy = Loader(ctx.env, set(processed), lazy=True)
        for e in copy.process_rules(dot / "rules", "project", False, conditional_rule=False):
            if e.depth == 0 and e.loaded:
                e.reason = f"unconditional rule of {directory}, loaded by the first read below it"
            if e.loaded or e.status not in ("conditional", "duplicate"):
                candidates.append(e)
        candidates += _conditioned(loader, path, dot / "rules", "project", False, directory)
        processed |= copy.processed
    # 3. Root → cwd: only matching conditional rules.
    for directory in _dirs_to_cwd(cwd):
        candidates += _conditioned(loader, path, directory / flavor.dot_dir / "rules", "project", False, directory)
    instructions = flavor.behaviour.instructions
    for entry in candidates:
        if not entry.loaded:
            step.considered.append(entry)
        elif entry.path in state.loaded_paths:
            entry.loaded = False
            entry.status = "already-loaded"
            entry.reason = "already in this session's context: each file loads at most once"
            step.considered.append(entry)
        else:
            state.loaded_paths.add(entry.path)
            step.added.append(entry)
            step.diagnostics.extend(entry.diagnostics)
            step.texts.append(entry.content if instructions.lazy_content_trimmed else entry.body)
            message = render_lazy(entry, instructions.lazy_message, instructions.lazy_content_trimmed)
            if message is not None:
                step.messages.append(message)
    # The release's AGENTS.md support adds its files after the instruction files of this read.
    if ctx.agents is not None and instructions.agents_md is not None:
        agents = lazy_agents(ctx.agents, ctx.env, path, state.loaded_paths, ctx.environ, ctx.agents.processed)
        for entry in agents:
            state.loaded_paths.add(entry.path)
            step.added.append(entry)
            step.diagnostics.extend(entry.diagnostics)
            step.texts.append(entry.body)
        if agents:
            joined = "\n".join(f"Contents of {e.path}:\n\n{e.body}" for e in agents)
            step.messages.append(Template(instructions.agents_md.lazy_message).substitute(messages=joined))
    return step


def _dirs_to_cwd(cwd: Path) -> list[Path]:
    dirs: list[Path] = []
    current = cwd
    while current != current.parent:
        dirs.append(current)
        current = current.parent
    dirs.reverse()
    return dirs


def _conditioned(loader: Loader, target: Path, rules_dir: Path, layer: Layer, include_external: bool, base: Path) -> list[CascadeFile]:
    """The conditional rules of ``rules_dir`` whose patterns match ``target`` relative to
    ``base`` (the reference's ``processConditionedMdRules``)."""
    out: list[CascadeFile] = []
    for entry in loader.process_rules(rules_dir, layer, include_external, conditional_rule=True):
        if not RuleMatcher.compile(entry.patterns).matches(target, base):
            continue
        matched = next((p for p in entry.patterns if RuleMatcher.compile([p]).matches(target, base)), entry.patterns[0])
        rel = os.path.relpath(target, base)
        entry.reason = f"conditional rule: `{matched}` matches {Path(rel).as_posix()} (relative to {base})"
        out.append(entry)
    return out
