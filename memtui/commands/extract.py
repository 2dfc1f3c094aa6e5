"""``memtui extract``, ``memtui inbox`` and ``memtui hook stop``: extraction from the command line."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import click

from memtui.commands.common import (
    CliContext,
    common_options,
    emit_json,
    fail,
    say,
    user_errors,
)
from memtui.core.base.terminal import visible
from memtui.core.base.wording import details_line
from memtui.core.extract import (
    EXTRACTOR_CHOICES,
    ExtractorError,
    extract,
    proposal_excerpt,
)
from memtui.core.extract.inbox import Inbox, InboxError, Proposal
from memtui.core.sessions.sessionid import AmbiguousSessionIdError, find_session_transcript
from memtui.core.writes.journal import Journal
from memtui.core.places.locations import state_dir
from memtui.core.places.release import release_of
from memtui.core.memory.memories import MEMORY_TYPES


def _transcript(obj: CliContext, value: str) -> Path:
    """TRANSCRIPT as given: a path, or a session id (or a unique prefix of one, 8 hex digits or
    more) looked up in the sessions dir."""
    path = Path(value)
    if path.is_file():
        return path.resolve()
    if path.exists():
        fail(f"{value}: not a file", 2)
    if os.sep not in value and not value.endswith(".jsonl"):
        try:
            found = find_session_transcript(obj.locations.sessions_dir, value)
        except AmbiguousSessionIdError as exc:
            fail(str(exc), 2)
        if found is not None:
            return found
        fail(f"{value}: no such file, and no session {value} in {obj.locations.sessions_dir}", 2)
    fail(f"{value}: no such file", 2)


def _project_from_transcript(obj: CliContext, path: Path) -> None:
    """With neither --project nor --memory-dir, the session's own cwd is the project: a
    transcript belongs to the project it was recorded in."""
    if obj.project is not None or obj.memory_dir is not None:
        return
    from memtui.core.sessions.transcripts import read_transcript

    try:
        cwds = read_transcript(path).cwds
    except OSError:
        return
    if cwds and Path(cwds[0]).is_dir():
        obj.project = Path(cwds[0])
        obj._locations = None


def _proposal_line(p: Proposal) -> str:
    tag = " [heuristic]" if p.heuristic else ""
    kind = "" if p.kind == "create" else f" ({p.kind})"
    return f"{visible(p.id)}  {p.type:<9} {visible(p.path)}{kind}{tag}\n              {visible(p.description)}"


@click.command("extract")
@click.argument("transcript")
@click.option("--extractor", type=click.Choice(EXTRACTOR_CHOICES), default="auto", show_default=True,
              help="auto: claude with an API key, else offline (explicit cues only).")
@click.option("--apply", "apply_", is_flag=True, help="Write the memories now (the agent's behaviour) instead of proposing them.")
@click.option("--all", "whole", is_flag=True, help="Read the whole transcript, not only what follows the cursor.")
@click.option("--model", default=None, help="Model for the claude extractor (default: settings `model`, else claude-sonnet-5-5).")
@click.option("--explain", is_flag=True, help="claude flavor: show the gates of Claude Code's own extraction for this range, in its order (extracts nothing).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@common_options
@click.pass_obj
@user_errors
def extract_cmd(obj: CliContext, transcript: str, extractor: str, apply_: bool, whole: bool, model: str | None, explain: bool, as_json: bool) -> None:
    """Extract memories from a session TRANSCRIPT (a .jsonl path, a session id or its first 8+ characters) into the inbox.

    Reads what follows the session's cursor; skips (and moves the cursor) when the agent
    already wrote memory in that range."""
    path = _transcript(obj, transcript)
    _project_from_transcript(obj, path)
    loc = obj.locations
    release = release_of(loc.flavor)
    if explain:
        _explain(obj, path, whole, as_json)
        return
    from memtui.core.recall import choose_model

    setting_model = loc.settings.get("model")[0]
    if release is not None:  # the agent's extraction is a fork of its main loop: the main model
        chosen_model = model or (setting_model.strip() if isinstance(setting_model, str) and setting_model.strip() else release.main_model_default)
    else:
        chosen_model = choose_model(model, setting_model)
    try:
        result = extract(path, loc.memory_dir, state_dir(), obj.now(), extractor=extractor,  # type: ignore[arg-type]
                         apply=apply_, model=chosen_model, ignore_cursor=whole, release=release)
    except ExtractorError as exc:
        fail(f"extraction failed, cursor not moved: {exc.reason}", 1)
    if as_json:
        emit_json(result.to_json())
        return
    say(f"memory dir: {visible(str(loc.memory_dir))}")
    say(f"session {visible(str(result.session_id))}, entries {result.start}–{result.end}")
    if result.skipped:
        say(f"skipped: {visible(str(result.skipped))}")
    else:
        badge = " (offline: explicit cues only, heuristic)" if result.extractor == "offline" else ""
        say(f"extractor: {result.extractor}{badge}")
        if not result.proposals:
            say("nothing worth remembering found")
        for p in result.proposals:
            say(_proposal_line(p))
        if result.written:
            say("written: " + ", ".join(visible(w) for w in result.written) + "  (memtui undo reverts the last one)")
        elif result.added:
            say(f"{len(result.added)} new in the inbox: memtui inbox accept|reject ID")
    for note in result.notes:
        say(f"note: {visible(note)}")
    say(f"cursor: {visible(str(result.cursor))}")


def _explain(obj: CliContext, path: Path, whole: bool, as_json: bool) -> None:
    """``extract --explain``: the release's extraction gates for the range a pass would read."""
    from memtui.core.extract.engine import explain_extraction

    status = explain_extraction(path, obj.locations, state_dir(), ignore_cursor=whole)
    if status is None:
        fail("--explain shows the gates of a CLI release's own extraction: use --flavor claude", 2)
    if as_json:
        emit_json(status.to_json())
        return
    r = status.release
    say(f"{r.cli} {r.version}'s extraction, gates in its order ({'interactive' if status.interactive else '-p/SDK'} session, {status.messages} message(s) since the cursor):")
    for g in status.gates:
        say(f"  {g.id:<16} {'open  ' if g.ok else 'CLOSED'} {visible(g.detail)}")
        if g.details:
            say(f"  {'':<16}        {visible(details_line(g.details))}")
        if not g.ok and g.log:
            say(f"  {'':<16}        its log: {visible(g.log)}")
    say(visible(status.verdict))


def _inbox(obj: CliContext) -> Inbox:
    return Inbox(state_dir(), obj.locations.memory_dir)


@click.group("inbox", invoke_without_command=True)
@click.option("--all", "everything", is_flag=True, help="Include accepted and rejected proposals.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@common_options
@click.pass_context
def inbox(ctx: click.Context, everything: bool, as_json: bool) -> None:
    """List the proposed memories waiting for a decision."""
    if ctx.invoked_subcommand is not None:
        return
    obj: CliContext = ctx.obj
    box = _inbox(obj)
    items = box.all() if everything else box.pending()
    if as_json:
        emit_json([p.to_json() for p in items])
        return
    if not items:
        say(f"the inbox of {visible(str(obj.locations.memory_dir))} is empty")
        return
    for p in items:
        status = "" if p.status == "pending" else f"  [{p.status}]"
        say(_proposal_line(p) + status)


@inbox.command("show")
@click.argument("ident", metavar="ID")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@common_options
@click.pass_obj
@user_errors
def inbox_show(obj: CliContext, ident: str, as_json: bool) -> None:
    """Show one proposal: the file it would write and the conversation it came from."""
    box = _inbox(obj)
    try:
        proposal = box.get(ident)
    except InboxError as exc:
        fail(str(exc), 1)
    excerpt = proposal_excerpt(proposal, obj.locations.sessions_dir)
    if as_json:
        data = proposal.to_json()
        data["excerpt"] = {
            "error": excerpt.error,
            "turns": [{"role": t.role, "text": t.text, "uuid": t.uuid, "timestamp": t.timestamp, "is_source": t.is_source}
                      for t in excerpt.turns],
        }
        emit_json(data)
        return
    say(_proposal_line(proposal))
    if proposal.status == "pending":
        try:
            say(box.plan(proposal.id).diff())
        except (InboxError, ValueError, RuntimeError) as exc:
            say(f"cannot be accepted as is: {visible(str(exc))}")
    say(f"from session {visible(str(proposal.source.session_id))}:")
    for turn in excerpt.turns:
        mark = ">" if turn.is_source else " "
        say(f"{mark} {visible(turn.role)}: {turn.text}")
    if excerpt.error:
        say(f"({visible(excerpt.error)})")


@inbox.command("accept")
@click.argument("ident", metavar="ID")
@click.option("--type", "type_", type=click.Choice(MEMORY_TYPES), default=None, help="Change the type first.")
@click.option("--name", default=None, help="Change the name first.")
@click.option("--description", default=None, help="Change the description first.")
@click.option("--path", default=None, help="Write to this file (relative to the memory dir) instead.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@common_options
@click.pass_obj
@user_errors
def inbox_accept(obj: CliContext, ident: str, type_: str | None, name: str | None, description: str | None,
                 path: str | None, as_json: bool) -> None:
    """Write proposal ID into the memory dir (index updated, originSessionId recorded)."""
    loc = obj.locations
    box = _inbox(obj)
    edits = {k: v for k, v in {"type": type_, "name": name, "description": description, "path": path}.items() if v is not None}
    try:
        result = box.accept(ident, Journal(state_dir(), loc.memory_dir), obj.now(), **edits)
    except InboxError as exc:
        fail(str(exc), 1)
    except RuntimeError as exc:  # ConflictError
        fail(str(exc), 1)
    if as_json:
        emit_json({"accepted": result.proposal.to_json(), "written": result.relpath, "journal": result.entry.id})
        return
    say(f"wrote {visible(str(loc.memory_dir / result.relpath))} (memtui undo reverts it)")


@inbox.command("reject")
@click.argument("ident", metavar="ID")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@common_options
@click.pass_obj
@user_errors
def inbox_reject(obj: CliContext, ident: str, as_json: bool) -> None:
    """Reject proposal ID (kept as rejected, so it is not proposed again)."""
    try:
        proposal = _inbox(obj).reject(ident, obj.now())
    except InboxError as exc:
        fail(str(exc), 1)
    if as_json:
        emit_json({"rejected": proposal.to_json()})
        return
    say(f"rejected {visible(proposal.id)} ({visible(proposal.path)})")


@click.group("hook")
@common_options
def hook() -> None:
    """Entry points for an agent's hooks (see the README: "Wire it into Claude Code")."""


def _child_args(obj: CliContext, extractor: str, apply_: bool) -> list[str]:
    args = [sys.executable, "-c", "from memtui.cli import main; main()", "--flavor", obj.flavor.name]
    if obj.memory_dir is not None:
        args += ["--memory-dir", str(obj.memory_dir)]
    args += ["hook", "stop", "--wait", "--extractor", extractor]
    return args + (["--apply"] if apply_ else [])


@hook.command("stop")
@click.option("--extractor", type=click.Choice(EXTRACTOR_CHOICES), default="auto", show_default=True)
@click.option("--apply", "apply_", is_flag=True, help="Write memories directly instead of into the inbox.")
@click.option("--wait", is_flag=True, help="Extract before returning (default: in a detached process, so the agent never waits).")
@common_options
@click.pass_obj
def hook_stop(obj: CliContext, extractor: str, apply_: bool, wait: bool) -> None:
    """The Stop hook: read {session_id, transcript_path, cwd} on stdin and extract.

    Always exits 0; every outcome and error goes to the hook log in memtui's state dir."""
    from memtui.core.extract.hook import stop_hook

    def read_input() -> bytes:
        return b"" if sys.stdin is None or sys.stdin.isatty() else sys.stdin.buffer.read()

    def detach(data: bytes) -> None:
        # a child in its own session extracts; the agent's hook returns at once
        child = subprocess.Popen(_child_args(obj, extractor, apply_), stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                                 stderr=subprocess.DEVNULL, start_new_session=True, close_fds=True)
        assert child.stdin is not None
        child.stdin.write(data)
        child.stdin.close()

    stop_hook(read_input, flavor=obj.flavor, state_dir=state_dir(), wait=wait, detach=detach, extractor=extractor,
              apply=apply_, memory_dir=obj.memory_dir)
    sys.exit(0)
