"""The inbox: proposals in the state dir; accept writes through the normal
write path with ``originSessionId`` and the index entry; edit then accept; reject; undo; the
source conversation of a proposal and of the memory it became."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
from support.extract import SESSION, Talk

from memtui.core.writes.edits import ConflictError, EditError, plan_create, undo
from memtui.core.extract import extract, memory_excerpt, proposal_excerpt
from memtui.core.extract.inbox import Inbox, InboxError, Proposal, ProposalSource
from memtui.core.writes.journal import Journal
from memtui.core.memory.memories import read_memory

NOW = datetime(2026, 3, 10, 12, 0, tzinfo=UTC)
BODY = (
    "We never deploy on Fridays.\n\n**Why:** the user asked for this explicitly: “And remember that we never deploy on Fridays.”\n\n"
    "**How to apply:** follow it in this project from now on, unless the user says otherwise.\n"
)


@pytest.fixture
def box(tmp_path: Path) -> tuple[Inbox, Path, Path, Path]:
    memory = tmp_path / "memory"
    memory.mkdir()
    (memory / "MEMORY.md").write_text("- [Old](old.md) — an old one\n", encoding="utf-8")
    (memory / "old.md").write_text("---\ndescription: an old one\ntype: user\n---\nx\n", encoding="utf-8")
    state = tmp_path / "state"
    talk = Talk(cwd=str(tmp_path))
    talk.human("Please fix the build.")
    talk.say("Fixed.")
    talk.human("Thanks. And remember that we never deploy on Fridays.")
    talk.say("Noted.")
    transcript = talk.write(tmp_path / f"{SESSION}.jsonl")
    extract(transcript, memory, state, NOW, extractor="offline")
    return Inbox(state, memory), memory, state, transcript


def test_proposals_live_in_the_state_dir_as_json(box: tuple[Inbox, Path, Path, Path]) -> None:
    inbox, memory, state, _ = box
    (p,) = inbox.pending()
    assert inbox.count() == 1
    stored = inbox.root / f"{p.id}.json"
    assert stored.is_file() and str(stored).startswith(str(state)) and not str(stored).startswith(str(memory))
    data = json.loads(stored.read_text(encoding="utf-8"))
    assert data["body"] == BODY and data["status"] == "pending" and data["source"]["message_uuid"] == "u3"
    assert Proposal.from_json(data) == p
    assert inbox.get(p.id[:5]) == p  # a unique prefix will do


def test_accept_writes_file_index_and_origin(box: tuple[Inbox, Path, Path, Path]) -> None:
    inbox, memory, state, _ = box
    (p,) = inbox.pending()
    result = inbox.accept(p.id, Journal(state, memory), NOW)
    assert result.relpath == "feedback_we_never_deploy_on_fridays.md"
    assert (memory / result.relpath).read_text(encoding="utf-8") == (
        "---\nname: We never deploy on Fridays\ndescription: We never deploy on Fridays.\ntype: feedback\n"
        f"originSessionId: {SESSION}\n---\n\n{BODY}"
    )
    assert (memory / "MEMORY.md").read_text(encoding="utf-8") == (
        "- [Old](old.md) — an old one\n"
        "- [We never deploy on Fridays](feedback_we_never_deploy_on_fridays.md) — We never deploy on Fridays.\n"
    )
    mem = read_memory(memory / result.relpath, memory)
    assert mem.type == "feedback" and mem.frontmatter["originSessionId"] == SESSION and not [
        d for d in mem.diagnostics if d.severity != "info"]
    assert inbox.pending() == [] and inbox.get(p.id).status == "accepted" and inbox.get(p.id).written == result.relpath
    with pytest.raises(InboxError, match="already accepted"):
        inbox.accept(p.id, Journal(state, memory), NOW)
    # One undo reverts file and index line together.
    undo(memory, Journal(state, memory), NOW)
    assert not (memory / result.relpath).exists()
    assert (memory / "MEMORY.md").read_text(encoding="utf-8") == "- [Old](old.md) — an old one\n"


def test_edit_then_accept(box: tuple[Inbox, Path, Path, Path]) -> None:
    inbox, memory, state, _ = box
    (p,) = inbox.pending()
    edited = inbox.update(p.id, type="project", name="No Friday deploys", description="Deploys never happen on a Friday",
                          path="project_no_friday_deploys.md")
    assert edited.edited and inbox.get(p.id).type == "project"
    result = inbox.accept(p.id, Journal(state, memory), NOW, body="Deploys happen Monday to Thursday.")
    assert result.relpath == "project_no_friday_deploys.md"
    assert (memory / result.relpath).read_text(encoding="utf-8") == (
        "---\nname: No Friday deploys\ndescription: Deploys never happen on a Friday\ntype: project\n"
        f"originSessionId: {SESSION}\n---\n\nDeploys happen Monday to Thursday.\n"
    )
    assert "(project_no_friday_deploys.md) — Deploys never happen on a Friday" in (memory / "MEMORY.md").read_text(encoding="utf-8")


def test_bad_edits_are_refused(box: tuple[Inbox, Path, Path, Path]) -> None:
    inbox, _, _, _ = box
    (p,) = inbox.pending()
    with pytest.raises(InboxError):
        inbox.update(p.id, type="Feedback")  # type: ignore[arg-type]
    with pytest.raises(InboxError):
        inbox.update(p.id, description="  ")
    with pytest.raises(EditError):
        inbox.update(p.id, path="../escape.md")
    with pytest.raises(EditError):
        inbox.update(p.id, path="MEMORY.md")
    assert not inbox.get(p.id).edited


def test_accept_refuses_an_existing_target(box: tuple[Inbox, Path, Path, Path]) -> None:
    inbox, memory, state, _ = box
    (p,) = inbox.pending()
    (memory / p.path).write_text("someone else's file\n", encoding="utf-8")
    with pytest.raises(EditError, match="already exists"):
        inbox.accept(p.id, Journal(state, memory), NOW)
    assert inbox.get(p.id).status == "pending"
    assert inbox.accept(p.id, Journal(state, memory), NOW, path="feedback_fridays_2.md").relpath == "feedback_fridays_2.md"


def test_reject_keeps_a_record_and_is_not_proposed_again(box: tuple[Inbox, Path, Path, Path]) -> None:
    inbox, memory, state, transcript = box
    (p,) = inbox.pending()
    done = inbox.reject(p.id, NOW)
    assert done.status == "rejected" and done.decided == NOW.isoformat()
    assert inbox.pending() == [] and sorted(x.name for x in memory.iterdir()) == ["MEMORY.md", "old.md"]
    again = extract(transcript, memory, state, NOW, extractor="offline", ignore_cursor=True)
    assert again.added == () and inbox.pending() == []
    with pytest.raises(InboxError, match="no proposal"):
        inbox.get("ffffffffffff")


def test_update_proposal_conflicts_when_the_file_changed(tmp_path: Path) -> None:
    memory = tmp_path / "memory"
    memory.mkdir()
    (memory / "old.md").write_text("---\ndescription: d\ntype: user\n---\nv1\n", encoding="utf-8")
    from memtui.core.writes.journal import sha256_hex

    inbox = Inbox(tmp_path / "state", memory)
    p = Proposal("abc123abc123", "update", "old.md", "user", "old", "d", "v2\n", ProposalSource(SESSION, "u1"), "claude",
                 False, NOW.isoformat(), text="---\ndescription: d\ntype: user\n---\nv2\n",
                 before_sha256=sha256_hex((memory / "old.md").read_bytes()))
    assert inbox.add(p) and not inbox.add(p)
    assert inbox.plan(p.id).changes[0].after == f"---\ndescription: d\ntype: user\noriginSessionId: {SESSION}\n---\nv2\n".encode()
    (memory / "old.md").write_text("---\ndescription: d\ntype: user\n---\nedited by hand\n", encoding="utf-8")
    with pytest.raises(ConflictError):
        inbox.accept(p.id, Journal(tmp_path / "state", memory), NOW)
    assert inbox.get(p.id).status == "pending"


def test_source_excerpt_of_a_proposal_and_of_the_memory(box: tuple[Inbox, Path, Path, Path], tmp_path: Path) -> None:
    inbox, memory, state, transcript = box
    (p,) = inbox.pending()
    ex = proposal_excerpt(p)
    assert ex.error is None and ex.transcript_path == transcript
    assert [(t.role, t.text, t.is_source) for t in ex.turns] == [
        ("user", "Please fix the build.", False),
        ("assistant", "Fixed.", False),
        ("user", "Thanks. And remember that we never deploy on Fridays.", True),
        ("assistant", "Noted.", False),
    ]
    result = inbox.accept(p.id, Journal(state, memory), NOW)
    mem = read_memory(memory / result.relpath, memory)
    from_memory = memory_excerpt(mem, inbox, tmp_path)
    assert from_memory is not None and [t.is_source for t in from_memory.turns] == [False, False, True, False]
    # Without the inbox record, originSessionId finds the transcript in the sessions dir.
    fresh = Inbox(tmp_path / "other-state", memory)
    by_origin = memory_excerpt(mem, fresh, tmp_path)
    assert by_origin is not None and by_origin.turns[-1].text == "Noted." and by_origin.error is None
    assert memory_excerpt(read_memory(memory / "old.md", memory), fresh, tmp_path) is None
    transcript.unlink()
    missing = proposal_excerpt(inbox.get(p.id))
    assert missing.turns == () and missing.error is not None and "cannot read" in missing.error


def test_plan_create_extra_frontmatter(tmp_path: Path) -> None:
    plan = plan_create(tmp_path, "user", "Role", "The user's role", body="x\n", extra={"originSessionId": "123", "related": "a b"})
    assert plan.changes[0].after == (
        b"---\nname: Role\ndescription: The user's role\ntype: user\noriginSessionId: \"123\"\nrelated: a b\n---\n\nx\n")
    with pytest.raises(EditError):
        plan_create(tmp_path, "user", "Role", "d", extra={"type": "feedback"})
    with pytest.raises(EditError):
        plan_create(tmp_path, "user", "Role", "d", extra={"bad key": "v"})
    assert b"originSessionId" not in plan_create(tmp_path, "user", "Role", "d").changes[0].after


def test_edit_from_the_whole_text_the_editor_shows(box: tuple[Inbox, Path, Path, Path]) -> None:
    inbox, memory, state, _ = box
    (p,) = inbox.pending()
    text = (
        "---\nname: Friday freeze\ndescription: No deploys on Fridays, ever\ntype: project\n---\n\n"
        "No deploys on Fridays.\n\n**Why:** weekend on-call.\n\n**How to apply:** ship by Thursday.\n"
    )
    inbox.update_from_text(p.id, text)
    result = inbox.accept(p.id, Journal(state, memory), NOW)
    assert (memory / result.relpath).read_text(encoding="utf-8") == (
        "---\nname: Friday freeze\ndescription: No deploys on Fridays, ever\ntype: project\n"
        f"originSessionId: {SESSION}\n---\n\nNo deploys on Fridays.\n\n**Why:** weekend on-call.\n\n**How to apply:** ship by Thursday.\n"
    )


def test_edit_from_text_refuses_a_type_the_agent_would_not_read(box: tuple[Inbox, Path, Path, Path]) -> None:
    inbox, _, _, _ = box
    (p,) = inbox.pending()
    with pytest.raises(InboxError):
        inbox.update_from_text(p.id, "---\nname: x\ndescription: y\ntype: Feedback\n---\nbody\n")
    with pytest.raises(InboxError):
        inbox.update_from_text(p.id, "no frontmatter at all\n")


def test_undoing_an_accept_puts_the_proposal_back_in_the_inbox(box: tuple[Inbox, Path, Path, Path]) -> None:
    inbox, memory, state, _ = box
    (p,) = inbox.pending()
    result = inbox.accept(p.id, Journal(state, memory), NOW)
    assert inbox.pending() == []
    undo(memory, Journal(state, memory), NOW)
    assert not (memory / result.relpath).exists()
    (again,) = inbox.pending()
    assert again.id == p.id and again.status == "pending"
    inbox.accept(p.id, Journal(state, memory), NOW)  # and it can be accepted again
    assert (memory / result.relpath).is_file()
