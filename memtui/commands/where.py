"""``memtui where``: every location memtui resolved, and why."""

from __future__ import annotations

from typing import Any

import click

from memtui.commands.common import CliContext, common_options, emit_json, say, user_errors
from memtui.core.base.terminal import visible
from memtui.core.places.locations import Locations
from memtui.core.places.profiles import ReleaseChoice, profile_versions
from memtui.core.sessions.version import VersionCheck, check_version

_TRUST_NOTE = "a trusted workspace, or a -p/SDK run"


def locations_to_json(loc: Locations, version: VersionCheck | None = None, choice: ReleaseChoice | None = None) -> dict[str, Any]:
    """The ``memtui where --json`` shape: ``release`` is the profile modelled (``product``,
    ``version``) and, when chosen, why (``source``, ``reason``, ``detected``…: ``ReleaseChoice.to_json``)
    and the other profiles of the flavor (``profiles``)."""
    release = loc.flavor.behaviour
    return {
        "flavor": loc.flavor.name,
        "release": {
            "product": release.product,
            "version": release.version,
            "profiles": list(profile_versions(loc.flavor)),
            **({} if choice is None else {k: v for k, v in choice.to_json().items() if k != "profile"}),
        },
        "version": version.to_json() if version is not None else None,
        "project_root": str(loc.project_root),
        "git_root": str(loc.git_root) if loc.git_root else None,
        "canonical_git_root": str(loc.canonical_git_root) if loc.canonical_git_root else None,
        "slug": loc.slug,
        "memory_dir": str(loc.memory_dir),
        "memory_dir_source": loc.memory_dir_source,
        "memory_dir_exists": loc.memory_dir.is_dir(),
        "sessions_dir": str(loc.sessions_dir),
        "state_dir": str(loc.state_dir),
        "auto_memory_enabled": loc.auto_memory_enabled,
        "auto_memory_source": loc.auto_memory_source,
        "trust": None if loc.trust is None else {"trusted": loc.trust.trusted, "record": loc.trust.key},
        "memory_dir_untrusted": str(loc.memory_dir_untrusted) if loc.memory_dir_untrusted else None,
        "memory_dir_untrusted_source": loc.memory_dir_untrusted_source,
        "diagnostics": [d.to_json() for d in loc.diagnostics],
    }


@click.command()
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@common_options
@click.pass_obj
@user_errors
def where(obj: CliContext, as_json: bool) -> None:
    """Show where the agent's memory, transcripts and memtui's state live."""
    loc = obj.locations
    chosen = obj.choice.release
    if chosen is not None and chosen.source in ("command", "transcript"):
        version = check_version(loc, detected=chosen.detected)
    else:
        version = check_version(loc)
    data = locations_to_json(loc, version, chosen)
    data["flavor_reason"] = obj.choice.reason
    stores = None
    if loc.flavor.name == "claude" and loc.memory_dir_source != "option":
        from memtui.core.stores.audit import audit_stores

        stores = audit_stores(loc)
        data["other_stores"] = [s.path for s in stores.others]
        data["store_findings"] = [f.code for f in stores.findings]
    if as_json:
        emit_json(data)
        return
    trusted_note = ""
    if loc.memory_dir_untrusted is not None:
        trusted_note = f"; in {_TRUST_NOTE}"
    rows = [
        ("flavor", f"{data['flavor']}  ({obj.choice.reason})"),
        ("models", _models(loc, chosen)),
        *([("profiles", f"{', '.join(profile_versions(loc.flavor))}  (--release VERSION picks one)")] if len(profile_versions(loc.flavor)) > 1 else []),
        ("project root", data["project_root"]),
        ("git root", data["git_root"] or "— (not in a git repository)"),
        ("canonical git root", data["canonical_git_root"] or "—"),
        ("slug", data["slug"]),
        (
            "memory dir",
            f"{data['memory_dir']}  (from {data['memory_dir_source']}{trusted_note}"
            + ("" if data["memory_dir_exists"] else "; does not exist yet") + ")",
        ),
        ("sessions dir", data["sessions_dir"]),
        ("state dir", data["state_dir"]),
        ("auto memory", f"{'on' if data['auto_memory_enabled'] else 'OFF'}  (from {data['auto_memory_source']})"),
    ]
    if loc.memory_dir_untrusted is not None:
        rows.insert(
            rows.index(next(r for r in rows if r[0] == "memory dir")) + 1,
            ("  if untrusted", f"{loc.memory_dir_untrusted}  (from {loc.memory_dir_untrusted_source}: an interactive session in a workspace whose trust was not accepted)"),
        )
    if stores is not None:
        others = len(stores.others)
        found = len(stores.findings)
        rows.append(
            (
                "other stores",
                f"{others} other memory store{'' if others == 1 else 's'} in play"
                + (f", {found} finding{'' if found == 1 else 's'}" if found else "")
                + ("  (`memtui stores` shows them)" if others or found else ""),
            )
        )
    if loc.trust is not None:
        rows.append(("workspace trust", f"accepted ({loc.trust.key})" if loc.trust.trusted else "no record (interactive sessions ask; -p/SDK runs count as trusted)"))
    if version.modelled is not None:
        rows.append(("your version", f"{version.installed}  ({version.source})" if version.installed else "unknown (no transcript says, no `claude` on PATH)"))
    width = max(len(k) for k, _ in rows)
    for key, value in rows:
        say(f"{key:<{width}}  {visible(str(value))}")
    if version.notice:
        say(f"\nnotice: {visible(version.notice)}")
    hint = obj.other_flavor_hint()
    if hint:
        say(f"\nnote: {loc.memory_dir} has no memories{visible(hint)}")
    for d in data["diagnostics"]:
        where_ = f" {visible(d['path'])}" if d["path"] else ""
        say(f"{d['severity']}: {d['code']}{where_}: {visible(d['message'])}")


def _models(loc: Locations, chosen: ReleaseChoice | None) -> str:
    """``Claude Code 2.1.332  (`claude --version` says 2.1.332)``: the profile and why."""
    title = loc.flavor.behaviour.title
    known = profile_versions(loc.flavor)
    if chosen is None or chosen.source == "only" or len(known) < 2:
        return title
    return f"{title}  ({chosen.reason})"
