"""The personal cloud configuration layer (Claude Code 2.1.332, SPEC §13.1), as placeholders.

A cloud session with ``CLAUDE_CODE_FETCH_PERSONAL_CLOUD_CONFIGURATION`` set fetches a user
``CLAUDE.md`` and rules from the service and splices them right after the user layer
(``~/.claude/CLAUDE.md``, ``~/.claude/rules/*``), before the project layers: CLAUDE.md first,
then the rules. Each is a ``User`` file named ``<personal-cloud-configuration>/.claude/<name>``;
a cloud file shadows ``~/.claude/<name>`` (the local file is then not loaded); ``claudeMdExcludes``
apply to either name; ``@`` imports in them are not followed. A local run with only the variable
set fetches nothing.

memtui cannot see what the service holds, so when the variable is set the cascade lists two
placeholders at that position (never loaded, status ``cloud-only``) saying what would happen in
a cloud session and which local files a cloud file of the same name would replace.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from memtui.core.base.diagnostics import Diagnostic
from memtui.core.places.flavor import Flavor

from .excludes import ExcludeMatcher
from .model import CascadeFile


def cloud_layer_requested(flavor: Flavor, environ: Mapping[str, str]) -> bool:
    """The release has a cloud layer and its variable is set (to anything, even empty)."""
    layer = flavor.behaviour.instructions.cloud_layer
    return layer is not None and layer.env in environ


def cloud_placeholders(
    flavor: Flavor,
    environ: Mapping[str, str],
    user_base_dir: Path,
    user_files: Sequence[CascadeFile],
    excludes: ExcludeMatcher,
) -> list[CascadeFile]:
    """The cloud layer's placeholders (its CLAUDE.md, then its rules), or ``[]`` when the
    release has no such layer or its variable is not set. ``user_files``: the user layer's
    entries as loaded (the files a cloud file of the same name would replace); ``excludes``:
    the project's excludes (a pattern that matches either name drops the cloud file)."""
    layer = flavor.behaviour.instructions.cloud_layer
    if layer is None or layer.env not in environ:
        return []
    root = f"{layer.virtual_root}/{flavor.dot_dir}"
    loaded_user = {f.path: f for f in user_files if f.depth == 0 and f.loaded}
    imports = "its @ imports are not followed" if not layer.follows_imports else "its @ imports are followed"
    needs = f"fetched only by a cloud session (it needs {layer.needs}); a local run with {layer.env} set fetches nothing"
    out: list[CascadeFile] = []

    local_md = user_base_dir / flavor.instruction_file
    md_path = f"{root}/{flavor.instruction_file}"
    if str(local_md) in loaded_user:
        shadow = (f"in such a session a cloud {flavor.instruction_file} replaces {local_md}, which is then not loaded "
                  f"({loaded_user[str(local_md)].chars:,} characters it would no longer bring)")
    else:
        shadow = f"a cloud {flavor.instruction_file} would replace {local_md} (none is loaded here)"
    out.append(_placeholder(md_path, "instructions", f"{needs}; {shadow}; {imports}", excludes, (md_path, str(local_md))))

    local_rules = sorted(p for p, f in loaded_user.items() if f.kind == "rule")
    rules_path = f"{root}/rules/*.md"
    if local_rules:
        names = ", ".join(Path(p).name for p in local_rules[:3]) + (f" +{len(local_rules) - 3} more" if len(local_rules) > 3 else "")
        shadow = f"a cloud rule replaces the rule of the same name in {user_base_dir / 'rules'} ({names} here)"
    else:
        shadow = f"a cloud rule replaces the rule of the same name in {user_base_dir / 'rules'} (none is loaded here)"
    out.append(_placeholder(rules_path, "rule", f"{needs}; up to {layer.max_rules} rules, after the cloud {flavor.instruction_file}; "
                            f"{shadow}; {imports}", excludes, (rules_path,)))
    return out


def _placeholder(path: str, kind: str, reason: str, excludes: ExcludeMatcher, names: tuple[str, ...]) -> CascadeFile:
    diagnostics: list[Diagnostic] = []
    for name in names:
        pattern = excludes.match(name)
        if pattern is not None:
            diagnostics.append(Diagnostic("cloud-excluded", "info", f"the excludes pattern {pattern!r} matches {name}: a cloud session drops this cloud file too", path))
            break
    return CascadeFile(
        path=path,
        layer="user",
        kind=kind,  # type: ignore[arg-type]
        parent=None,
        depth=0,
        loaded=False,
        status="cloud-only",
        reason=reason,
        diagnostics=diagnostics,
    )
