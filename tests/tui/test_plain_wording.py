"""Plain wording: no internal name reaches a person outside a ``details:`` line.

Every pane of the app (the claude flavor on a project whose recall, extraction and dream are
off by feature flag — with the flags cached as off, and with no flag cache at all — and the
agent flavor), and the human output of the CLI commands that say why the agent does or does not
recall, dream or extract, are read line by line: no feature-flag name (``tengu_…``), no flag-cache
key (``cachedGrowthBookFeatures``), no Python module path (``memtui.core…``) and no "units"
(lengths are said in characters) may stand on any line but a details line: one of its own that
starts with ``details:``, under the plain sentence it explains.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from support.memories import NOW, write_memory_dir, write_transcript
from support.pilot import rendered, settle, type_text, wait_until
from textual.app import App
from textual.pilot import Pilot
from textual.widget import Widget
from textual.widgets import DataTable, Input, OptionList, Static, TextArea, Tree

from memtui.cli import main
from memtui.core.places.flavor import AGENT, CLAUDE, Flavor
from memtui.tui.app import MemtuiApp
from memtui.tui.dream import DreamPane
from memtui.tui.recall import RecallPane

# What a person must not read outside a details line.
JARGON = re.compile(r"tengu_|cachedGrowthBookFeatures|\bmemtui\.(?:core|tui|commands|cli|demo)\b|\bunits\b")
DETAILS = "details:"
# "answers" is only in one description (feedback_terse.md): a near miss below the picks.
QUERY = "grafana latency board and the answers"
# The claude flavor's flags, cached as off: recall, extraction (and under -p), the dream.
FLAGS_OFF = {
    "tengu_moth_copse": False,
    "tengu_passport_quail": False,
    "tengu_slate_thimble": False,
    "tengu_onyx_plover": {"enabled": False, "available": False},
}
# The same flags on: what the panes and commands say then (recall on hides MEMORY.md: the
# cascade says why) must be as plain.
FLAGS_ON = {
    "tengu_moth_copse": True,
    "tengu_passport_quail": True,
    "tengu_slate_thimble": True,
    "tengu_onyx_plover": {"enabled": True, "available": True},
}
def off_said(flags: dict[str, Any] | None) -> str:
    """How a feature that is not on is said: off for the account when the CLI saved its flags,
    off on this machine when it saved none (``None``: no flag cache) — nothing is known then
    about the account."""
    if flags is None:
        return ("off on this machine: Claude Code has not saved your account's feature settings here, "
                "and without them it treats the feature as off")
    return "off for your account"


FLAG_STATES = pytest.mark.parametrize("flags", [FLAGS_OFF, None, FLAGS_ON], ids=["flags-off", "no-flag-cache", "flags-on"])


def jargon(lines: list[str]) -> list[str]:
    """The lines that show an internal name (or "units") and are no details line (one whose
    text, indentation aside, starts with ``details:``)."""
    return [line for line in lines if JARGON.search(line) and not line.lstrip().startswith(DETAILS)]


def test_the_check_reads_the_details_label() -> None:
    """The guard itself: a name on a line of its own that starts ``details:`` passes; anywhere
    else, not."""
    assert jargon(["Claude Code does not recall memories for you: this feature is off for your account",
                   "  details: flag tengu_moth_copse: false in ~/.claude.json (cachedGrowthBookFeatures)"]) == []
    assert jargon(["never dreams here: flag tengu_onyx_plover off"]) == ["never dreams here: flag tengu_onyx_plover off"]
    assert jargon(["off for your account; details: flag tengu_moth_copse"]) == ["off for your account; details: flag tengu_moth_copse"]
    assert jargon(["see memtui.core.recall.engine"]) == ["see memtui.core.recall.engine"]
    assert jargon(["(12 of 61,440 units)", "12 of 61,440 characters", "a note about memtui.md"]) == ["(12 of 61,440 units)"]


def _texts(widget: Widget) -> Iterator[str]:
    """What ``widget`` shows, as logical lines (wide enough that nothing wraps)."""
    for title in (widget.border_title, widget.border_subtitle):
        if title:
            yield str(title)
    if isinstance(widget, TextArea):
        return  # the exact text the agent injects: its own words and the memories', not memtui's
    if isinstance(widget, Static):
        yield from rendered(widget.content, width=1000).splitlines()
    elif isinstance(widget, Tree):
        stack = [widget.root]
        while stack:
            node = stack.pop()
            yield str(node.label)
            stack.extend(node.children)
    elif isinstance(widget, OptionList):
        for i in range(widget.option_count):
            yield from rendered(widget.get_option_at_index(i).prompt, width=1000).splitlines()
    elif isinstance(widget, DataTable):
        for row in range(widget.row_count):
            yield " ".join(str(cell) for cell in widget.get_row_at(row))
    elif isinstance(widget, Input):
        yield widget.value
        yield str(widget.placeholder)


def widget_lines(root: Widget) -> list[str]:
    """Every line ``root`` and the widgets in it show, right-trimmed."""
    return [line.rstrip() for widget in root.walk_children(with_self=True) for line in _texts(widget)]


def screen_lines(app: App[Any]) -> list[str]:
    """Every line the current screen's widgets show (shown or in a tab not shown), the header's
    title and the notifications."""
    return [str(app.title), str(app.sub_title), *widget_lines(app.screen), *(str(n.message) for n in app._notifications)]


async def every_pane(app: MemtuiApp, pilot: Pilot[None]) -> dict[str, list[str]]:
    """Show each pane, a recall for ``QUERY``, the dream's gate details and the key panel;
    return the lines shown at each step (by the step's name)."""
    shown: dict[str, list[str]] = {}
    await settle(pilot)
    for key, name in (("1", "cascade"), ("2", "memories")):
        await pilot.press(key)
        await settle(pilot)
        shown[name] = screen_lines(app)
    await pilot.press("3")
    recall = app.query_one(RecallPane)
    await wait_until(pilot, lambda: recall.corpus is not None, what="the recall corpus")
    await type_text(pilot, QUERY)
    await wait_until(pilot, lambda: recall.result is not None and recall.result.query == QUERY, what="a recall")
    await settle(pilot)
    shown["recall"] = screen_lines(app)
    shown["recall pane"] = widget_lines(recall)
    await pilot.press("4")
    dream = app.query_one(DreamPane)
    await settle(pilot)
    if dream.release is not None:
        await wait_until(pilot, lambda: dream.auto is not None, what="the dream's gates")
        await settle(pilot)
        shown["dream"] = screen_lines(app)
        shown["dream pane"] = widget_lines(dream)
        await pilot.press("g")
        await settle(pilot)
        shown["dream gate details"] = screen_lines(app)
    else:
        shown["dream"] = screen_lines(app)
    await pilot.press("question_mark")
    await settle(pilot)
    shown["keys"] = screen_lines(app)
    return shown


def claude_project(home: Path, monkeypatch: pytest.MonkeyPatch, flags: dict[str, Any] | None) -> tuple[Path, Path]:
    """A claude-flavor project with the small memory dir and one session transcript; ``flags``:
    the cached feature flags (``None``: ``~/.claude.json`` holds no flag cache)."""
    monkeypatch.setenv("MEMTUI_NOW", NOW.isoformat())
    monkeypatch.setenv("PATH", "/nonexistent")  # no `claude` to ask for its version
    project = home.parent / "project"
    project.mkdir()
    memory_dir = home.parent / "memory"
    write_memory_dir(memory_dir)
    config: dict[str, Any] = {"projects": {str(project): {"hasTrustDialogAccepted": True}}}
    if flags is not None:
        config["cachedGrowthBookFeatures"] = flags
    (home / ".claude.json").write_text(json.dumps(config), encoding="utf-8")
    return project, memory_dir


@FLAG_STATES
async def test_claude_flavor_panes_say_it_plainly(isolated_env: Path, monkeypatch: pytest.MonkeyPatch, flags: dict[str, Any] | None) -> None:
    project, memory_dir = claude_project(isolated_env, monkeypatch, flags)
    app = MemtuiApp.for_project(CLAUDE, project, memory_dir=memory_dir, watch=False)
    async with app.run_test(size=(120, 36)) as pilot:
        shown = await every_pane(app, pilot)
    for step, lines in shown.items():
        assert jargon(lines) == [], step
    recall, dream = shown["recall pane"], shown["dream pane"]
    if flags is FLAGS_ON:
        assert "Claude Code 2.1.332 recalls memories for you: this feature is on for your account; MEMORY.md is not in its context." in recall
        assert "details: flag tengu_moth_copse: true in ~/.claude.json (cachedGrowthBookFeatures)" in recall
        return
    # what was read: the plain sentences, once each where they are shown, the flag names only in details
    off = off_said(flags)
    assert recall.count(f"Claude Code 2.1.332 does not recall memories for you: this feature is {off}.") == 1
    assert sum(f"this feature is {off}" in line for line in recall) == 1
    assert any(line.startswith("details: flag tengu_moth_copse") for line in recall)
    assert dream.count(f"■ never dreams here: the dream is {off}, and autoDreamEnabled cannot turn it on") == 1
    assert sum(off in line for line in dream) == 1  # not again as a gate line or a trap
    assert any(line.lstrip().startswith("details: flag tengu_onyx_plover") for line in dream)


async def test_agent_flavor_panes_say_it_plainly(isolated_env: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMTUI_NOW", NOW.isoformat())
    project = isolated_env / "project"
    project.mkdir()
    memory_dir = isolated_env / "memory"
    write_memory_dir(memory_dir)
    app = MemtuiApp.for_project(AGENT, project, memory_dir=memory_dir, watch=False)
    async with app.run_test(size=(120, 36)) as pilot:
        shown = await every_pane(app, pilot)
    for step, lines in shown.items():
        assert jargon(lines) == [], step
    recall = shown["recall pane"]
    assert "Near misses" in recall  # the recall ran and was read, its near misses with what their score is
    assert "BM25 word-match score, higher is closer (no fixed scale: compare within one prompt)" in recall


def cli(flavor: Flavor, project: Path, memory_dir: Path, *args: str) -> list[str]:
    """The human output of ``memtui --flavor <flavor> <args>`` (exit code 0), as lines."""
    result = CliRunner().invoke(main, ["--flavor", flavor.name, *args, "--project", str(project), "--memory-dir", str(memory_dir)],
                                catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output.splitlines()


@FLAG_STATES
def test_claude_flavor_commands_say_it_plainly(isolated_env: Path, monkeypatch: pytest.MonkeyPatch, flags: dict[str, Any] | None) -> None:
    project, memory_dir = claude_project(isolated_env, monkeypatch, flags)
    transcript = write_transcript(isolated_env / "s1.jsonl", project, "please remember that we deploy on fridays")
    runs = {
        "recall": cli(CLAUDE, project, memory_dir, "recall", QUERY),
        "recall --preview": cli(CLAUDE, project, memory_dir, "recall", QUERY, "--preview"),
        "recall eval": cli(CLAUDE, project, memory_dir, "recall", "eval", "--transcripts"),
        "dream status": cli(CLAUDE, project, memory_dir, "dream", "status"),
        "extract --explain": cli(CLAUDE, project, memory_dir, "extract", str(transcript), "--explain"),
        "cascade": cli(CLAUDE, project, memory_dir, "cascade"),
    }
    for name, lines in runs.items():
        assert jargon(lines) == [], name
    if flags is FLAGS_ON:
        assert "Claude Code 2.1.332 recalls memories for you: this feature is on for your account" in runs["recall"]
        assert "note: Recall is on (this feature is on for your account): MEMORY.md is not loaded; recall picks memories per prompt." in runs["cascade"]
        return
    # each says it once, plainly, with the flag's name on its details line
    recall = runs["recall"]
    off = off_said(flags)
    assert recall.count(f"Claude Code 2.1.332 does not recall memories for you: this feature is {off}") == 1
    assert recall[recall.index(f"Claude Code 2.1.332 does not recall memories for you: this feature is {off}") + 1].startswith(
        "details: flag tengu_moth_copse")
    assert not any("this feature is off" in line for line in recall[1:] if not line.startswith("Claude Code 2.1.332"))
    assert f"Claude Code would not extract: memory extraction is {off}." in runs["extract --explain"]
    assert any(line.lstrip().startswith("details: flag tengu_passport_quail") for line in runs["extract --explain"])
    dream = runs["dream status"]
    assert dream[-1].startswith(f"Your Claude Code never dreams here: the dream is {off}, and autoDreamEnabled cannot turn it on.")
    assert not any(line.startswith("trap:") for line in dream)  # the verdict says it; no trap line repeats it


def test_agent_flavor_commands_say_it_plainly(isolated_env: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMTUI_NOW", NOW.isoformat())
    project = isolated_env / "project"
    project.mkdir()
    memory_dir = isolated_env / "memory"
    write_memory_dir(memory_dir)
    for args in (("recall", QUERY), ("recall", "eval", "--transcripts"), ("dream", "status"), ("cascade",)):
        assert jargon(cli(AGENT, project, memory_dir, *args)) == [], args


def test_the_external_imports_note_keeps_the_agents_key_for_its_details() -> None:
    """What the Cascade pane and ``memtui imports`` can say about the agent's own answer on
    external imports: a plain sentence, the config key on the details line."""
    from memtui.core.cascade.approvals import agent_approval_note

    note = agent_approval_note(CLAUDE)
    assert note == ("The agent keeps its own answer for this project in ~/.claude.json; memtui does not change it.",
                    "projects[<project>].hasClaudeMdExternalIncludesApproved in ~/.claude.json ($CLAUDE_CONFIG_DIR/.claude.json when set)")
    assert agent_approval_note(AGENT) is None
