"""The startup cascade (docs/behaviour.md §3.1): Managed → User → Project/Local root first → auto memory
→ team memory, each file followed by its imports. ``compute_cascade`` is the entry point.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path

from memtui.core.base.diagnostics import Diagnostic
from memtui.core.places.flavor import home_dir
from memtui.core.places.gitroot import resolve_git_roots
from memtui.core.memory.index import INDEX_NAME, truncate_index
from memtui.core.places.agentconfig import RecallState, recall_state
from memtui.core.places.claude_json import read_global_config
from memtui.core.places.locations import Locations
from memtui.core.places.behaviour import Behaviour
from memtui.core.base.units import agent_sanitize, estimate_tokens, utf16_len

from .agents_md import AgentsMdSession, agents_md_mode, startup_agents
from .approvals import resolve_approval
from .cloud import cloud_placeholders
from .excludes import ExcludeMatcher
from .imports import is_inside
from .lazy import new_session, simulate_read
from .loader import CascadeContext, Loader, LoadEnv
from .model import Cascade, CascadeFile, Kind, Layer
from .nested import list_nested
from .preprocess import js_trim, preprocess, read_text
from .render import render_context
from .rules import list_rule_files

RULES_ORDER_NOTE = "Rules are listed sorted by path for a stable display; the agent reads them in directory order."


def ancestor_dirs(cwd: Path) -> list[Path]:
    """Every directory from ``cwd`` up to, not including, the filesystem root — root first."""
    dirs: list[Path] = []
    current = cwd
    while current != current.parent:
        dirs.append(current)
        current = current.parent
    dirs.reverse()
    return dirs


def compute_cascade(
    locations: Locations,
    cwd: Path,
    *,
    reads: Sequence[Path | str] = (),
    approved_external: bool | None = None,
    environ: Mapping[str, str] | None = None,
    nested: bool = False,
) -> Cascade:
    """What the agent loads at startup in ``cwd``, and what each of ``reads`` adds after.

    ``locations``: the project's resolved locations (managed dir, user base dir, memory dir,
    settings); ``cwd``: the agent's working directory (made absolute and real, like the
    reference's original cwd); ``reads``: target paths (relative to ``cwd`` or absolute) the
    agent reads in turn, simulated with ``simulate_read``; ``approved_external``: force the
    external-import decision (``None``: memtui's recorded decision, then the claude flavor's
    flag, else *pending*); ``environ``: environment for ``HOME`` (default ``os.environ``).

    Never raises for anything found on disk: problems become diagnostics. Raises
    ``NotADirectoryError`` when ``cwd`` is not a directory.
    """
    env = os.environ if environ is None else environ
    real_cwd = Path(os.path.realpath(cwd))
    if not real_cwd.is_dir():
        raise NotADirectoryError(f"cwd {cwd} is not a directory")
    flavor = locations.flavor
    approval, approval_diags = resolve_approval(flavor, locations.state_dir, real_cwd, approved_external=approved_external, environ=env)
    cloud_layer = flavor.behaviour.instructions.cloud_layer
    excludes = ExcludeMatcher.from_settings(locations.settings, flavor.excludes_key, () if cloud_layer is None else (cloud_layer.virtual_root,))
    load_env = LoadEnv(flavor, real_cwd, home_dir(env), locations.managed_dir, locations.user_base_dir, excludes, approval)
    loader = Loader(load_env, set())
    files: list[CascadeFile] = []
    diags: list[Diagnostic] = [*approval_diags, *excludes.diagnostics]
    include_ext = approval.approved

    managed = locations.managed_dir
    _roots(files, loader.process_file(managed / flavor.instruction_file, "managed", "instructions", include_ext), "managed policy instructions (cannot be excluded)")
    files.extend(loader.process_rules(managed / flavor.dot_dir / "rules", "managed", include_ext, conditional_rule=False))
    base = locations.user_base_dir
    user_start = len(files)
    _roots(files, loader.process_file(base / flavor.instruction_file, "user", "instructions", True), "user instructions for all projects")
    files.extend(loader.process_rules(base / "rules", "user", True, conditional_rule=False))
    files.extend(cloud_placeholders(flavor, env, base, files[user_start:], excludes))

    roots = resolve_git_roots(real_cwd)
    nested_worktree = (
        roots.git_root is not None
        and roots.canonical is not None
        and os.path.normpath(roots.git_root) != os.path.normpath(roots.canonical)
        and is_inside(roots.git_root, roots.canonical)
    )
    for directory in ancestor_dirs(real_cwd):
        skip_project = (
            nested_worktree
            and roots.canonical is not None
            and roots.git_root is not None
            and is_inside(directory, roots.canonical)
            and not is_inside(directory, roots.git_root)
        )
        dot = directory / flavor.dot_dir
        if skip_project:
            files.extend(_worktree_skipped(directory, flavor.instruction_file, dot, flavor.behaviour.instructions.rule_order))
        else:
            _roots(files, loader.process_file(directory / flavor.instruction_file, "project", "instructions", include_ext), f"project instructions of {directory}")
            _roots(files, loader.process_file(dot / flavor.instruction_file, "project", "instructions", include_ext), f"project instructions of {directory}")
            files.extend(loader.process_rules(dot / "rules", "project", include_ext, conditional_rule=False))
        _roots(files, loader.process_file(directory / flavor.local_file, "local", "instructions", include_ext), f"private local instructions of {directory}")

    release = flavor.behaviour
    notes: list[str] = []
    cloud = release.instructions.cloud_layer
    if cloud is not None and cloud.env in env:
        local_md = base / flavor.instruction_file
        notes.append(
            f"{cloud.env} is set (any value counts, even 0 or empty): a cloud session fetches your personal cloud configuration's {flavor.instruction_file} and rules "
            f"and loads them right after the user layer; a cloud file replaces the file of the same name in {base} "
            f"({local_md} included). A local run ignores the variable, and memtui cannot see the cloud copy: "
            "the two rows marked cloud-only stand for it."
        )
    if loader.rules_seen > 1 and release.instructions.rule_order == "sorted":
        notes.append(RULES_ORDER_NOTE)
    config = locations.agent_config if locations.agent_config is not None else read_global_config(env)
    cached = config.data.get("cachedGrowthBookFeatures")
    plugin = release.instructions.agents_md
    mode = agents_md_mode(plugin, locations.settings, cached if isinstance(cached, dict) else None)
    diags.extend(mode.diagnostics)
    agents: AgentsMdSession | None = None
    if plugin is not None and mode.mode is not None:
        taken = {os.path.normpath(managed / flavor.instruction_file), os.path.normpath(base / flavor.instruction_file)}
        agents, _added = startup_agents(mode, plugin, files, load_env, taken)
        if mode.mode != plugin.default_mode:
            notes.append(f"AGENTS.md mode: {mode.mode} (from {mode.source} settings).")
    recall = recall_state(release.recall_gate, config, env)
    if locations.auto_memory_enabled:
        for layer, path in (("automem", locations.memory_dir / INDEX_NAME), ("teammem", locations.memory_dir / "team" / INDEX_NAME)):
            if layer == "teammem" and not release.instructions.loads_team_index:
                continue
            entry = _index_entry(path, layer, loader, release)  # type: ignore[arg-type]
            if entry is None:
                continue
            if layer == "automem" and entry.loaded and recall.on and release.recall_gate.hides_index:
                entry.loaded = False
                entry.status = "hidden-by-recall"
                entry.reason = f"not in the context: the agent recalls memories instead ({recall.reason})"
            files.append(entry)
        if recall.on and release.recall_gate.hides_index and not release.recall_gate.always:
            notes.append(f"Recall is on ({recall.reason}): {INDEX_NAME} is not loaded; recall picks memories per prompt.")
    else:
        notes.append(f"Auto memory is off ({locations.auto_memory_source}): MEMORY.md and team memory are not loaded.")
    memory_prompt = ""
    if locations.auto_memory_enabled and release.memory_prompt is not None:
        template = release.memory_prompt.recall_on if recall.on else release.memory_prompt.recall_off
        memory_prompt = template.substitute(memory_dir=str(locations.memory_dir).rstrip(os.sep) + os.sep)

    diags.extend(loader.diagnostics)
    for f in files:
        diags.extend(f.diagnostics)
    context = CascadeContext(locations, load_env, env, agents)
    team_dir = locations.memory_dir / "team"
    if release.instructions.loads_team_index:
        team_note = (f"memories shared with the team, in {team_dir}/: its {INDEX_NAME} loads after your own, wrapped "
                     "as shared content (`memtui team import` adds to it)")
    else:
        team_note = (f"{release.title} loads no team memory at startup, so this layer stays empty; "
                     f"the seed design loads {team_dir}/{INDEX_NAME} here")
    cascade = Cascade(
        cwd=real_cwd,
        flavor=flavor.name,
        files=files,
        pending_external_imports=loader.pending,
        diagnostics=diags,
        reads=[],
        rendered=render_context(files, release.instructions.labels),
        external_approval=approval,
        notes=notes,
        context=context,
        memory_prompt=memory_prompt,
        recall=recall,
        release=release.title,
        agents_md_mode=mode.mode,
        layer_notes={"teammem": team_note},
    )
    if nested:
        cascade.nested = list_nested(cascade)
    if reads:
        session = new_session(cascade)
        for target in reads:
            simulate_read(cascade, session, target)
        cascade.reads = session.steps
    return cascade


def _roots(files: list[CascadeFile], entries: list[CascadeFile], reason: str) -> None:
    """Append ``entries``, giving the root file (depth 0) its layer's reason."""
    for entry in entries:
        if entry.depth == 0 and entry.loaded and not entry.reason:
            entry.reason = reason
        files.append(entry)


def _worktree_skipped(directory: Path, instruction_file: str, dot: Path, order: str) -> list[CascadeFile]:
    reason = "the cwd is in a git worktree nested in its main repository; the agent skips the main repository's project files outside the worktree"
    out: list[CascadeFile] = []
    candidates = [directory / instruction_file, dot / instruction_file, *list_rule_files(dot / "rules", order).files]  # type: ignore[arg-type]
    for path in candidates:
        if path.is_file():
            kind: Kind = "rule" if path.parent != directory and path != dot / instruction_file else "instructions"
            entry = CascadeFile(str(path), "project", kind, None, 0, False, "worktree-skipped", reason)
            entry.diagnostics.append(Diagnostic("worktree-project-skipped", "info", reason, str(path)))
            out.append(entry)
    return out


def _index_entry(path: Path, layer: Layer, loader: Loader, release: Behaviour) -> CascadeFile | None:
    """The auto-memory or team index as the agent loads it: no imports, frontmatter and
    block comments stripped, then the reference's index truncation (200 lines / 25,000
    UTF-16 units) with the release's warning, then the release's text cleaning."""
    norm = os.path.normpath(path)
    try:
        raw = read_text(path)
    except FileNotFoundError:
        return None
    except OSError as exc:
        entry = CascadeFile(norm, layer, "index", None, 0, False, "unreadable", f"cannot be read: {exc.strerror or exc}")
        entry.diagnostics.append(Diagnostic("file-unreadable", "warning", entry.reason, norm))
        return entry
    if norm in loader.processed:
        return CascadeFile(norm, layer, "index", None, 0, False, "duplicate", "already loaded earlier as an instruction file")
    loader.processed.add(norm)
    parsed = preprocess(raw, norm, want_imports=False, strip_bom=release.memory_format.strip_bom,
                        markdown=release.instructions.markdown, keeps_link_definitions=release.instructions.keeps_link_definitions)
    trunc = truncate_index(parsed.content, release.instructions.index_warning)
    content = js_trim(agent_sanitize(trunc.content) if release.instructions.sanitize_index else trunc.content)
    label = "auto-memory index" if layer == "automem" else "team memory index"
    entry = CascadeFile(norm, layer, "index", None, 0, bool(content), "loaded" if content else "empty", "")
    entry.diagnostics.extend(parsed.diagnostics)
    if not content:
        entry.reason = "empty: nothing to load"
        return entry
    entry.content = content
    entry.chars = utf16_len(content)
    entry.tokens_est = estimate_tokens(content)
    entry.reason = f"{label} (loaded up to 200 lines / 25,000 characters; no imports)"
    if trunc.warning is not None:
        entry.diagnostics.append(Diagnostic("index-truncated", "warning", f"only part of {INDEX_NAME} loads: {trunc.warning}", norm, 201 if "lines" in trunc.truncated_by else None))
    return entry
