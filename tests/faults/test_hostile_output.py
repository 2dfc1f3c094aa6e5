"""Names and contents that try to act on the terminal are shown, never obeyed: every
human-readable output of the CLI and of the app writes control characters, escape sequences and
bidi overrides from file names and contents as visible escapes (``\\x1b``, ``\\u202e``); no name
(a file name, a frontmatter field, a team key — single-line fields) can forge an output line; no
text is read as markup; ``--json`` stays exact and valid UTF-8, with C1 and bidi controls written
as JSON escapes. (A multi-line content — a body,
the rendered context, a diff — keeps its own line breaks.)
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from memtui.cli import main

# OSC 52 (write the clipboard), OSC 0 (window title), CSI (clear the screen), C1 CSI, BEL, an
# RTL override, a line feed that would forge a line, Rich and Textual markup
OSC52 = "\x1b]52;c;cHduZWQ=\x07"
OSC0 = "\x1b]0;pwned\x07"
CSI = "\x1b[2J"
C1 = "\u009b31m"
RLO = "\u202e"
FORGE = "\nFORGED: memtui was fooled"
MARKUP = "[@click=app.quit]click[/] [link=https://evil.example]x[/link] [bold red]"
EVIL = f"{OSC52}{OSC0}{CSI}{C1}{RLO}gpj.exe{MARKUP}"
# what no human-readable output may hold: C0 (but tab and line feed), DEL, C1, bidi controls,
# isolates, line and paragraph separators, lone surrogates
RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069\ud800-\udfff]")


def yaml_str(text: str) -> str:
    return json.dumps(text)  # a JSON string is a YAML double-quoted scalar


def hostile_workspace(root: Path) -> tuple[Path, Path]:
    project = root / "project"
    project.mkdir()
    (project / "AGENT.md").write_text(f"# Rules {EVIL}\nUse tabs. {OSC52}\n@{RLO}missing.md\n")
    mem = root / "memory"
    mem.mkdir()
    name = f"user_{OSC0}{RLO}x.md"
    (mem / name).write_text(
        f"---\nname: {yaml_str('Evil ' + EVIL + FORGE)}\ndescription: {yaml_str('tabs ' + EVIL + FORGE)}\ntype: user\n"
        f"extra: {yaml_str(EVIL)}\n---\n\nBody {EVIL}\n"
    )
    (mem / f"project_{CSI}.md").write_text(f"---\nname: Due\ndescription: {yaml_str('due ' + OSC52)}\ntype: project\n---\n\nDue tomorrow {C1}. See `src/{RLO}gone.py` and `run{OSC0}_app()`.\n")
    os.utime(mem / f"project_{CSI}.md", (1_772_000_000, 1_772_000_000))
    (mem / f"ref{RLO}.md").write_text(f"---\nname: R\ndescription: {yaml_str('ref ' + RLO)}\ntype: Reference\n---\n\nx\n")
    (mem / os.fsdecode(b"user_\xff\xfe.md")).write_text("---\nname: Bytes\ndescription: a name that is not UTF-8\ntype: user\n---\n\nb\n")
    (mem / f"feedback_{FORGE}.md").write_text("---\nname: F\ndescription: a file name with a line feed\ntype: feedback\n---\n\nf\n")
    (mem / "MEMORY.md").write_text(f"- [{EVIL}]({name}) — {OSC52}\n- [gone {CSI}](gone{RLO}.md) — x\n")
    (mem / "team").mkdir()
    (mem / "team" / "MEMORY.md").write_text(f"- [T {OSC0}](t.md) — {RLO}\n")
    return project, mem


def transcript(root: Path) -> Path:
    path = root / "s1.jsonl"
    line = {"type": "user", "uuid": "u1", "sessionId": "s1", "cwd": str(root), "timestamp": "2026-03-10T11:00:00Z",
            "message": {"role": "user", "content": f"remember that I prefer tabs {EVIL}"}}
    path.write_text(json.dumps(line) + "\n")
    return path


def check_human(output: str, what: str) -> None:
    found = RAW.search(output)
    assert found is None, f"{what}: raw {found.group()!r} in output: {output[max(0, found.start() - 60): found.end() + 20]!r}"
    assert not any(line.startswith("FORGED") for line in output.splitlines()), f"{what}: a forged line"


def invoke(project: Path, mem: Path, *args: str, stdin: str | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, ["--project", str(project), "--memory-dir", str(mem), *args], input=stdin, catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


HUMAN = [
    ["where"], ["ls"], ["ls", "--type", "untyped"], ["index"], ["index", "--team"], ["cascade"], ["cascade", "--rendered"],
    ["cascade", "--read", f"x{RLO}.py"], ["doctor"], ["doctor", "--fix", "all"], ["recall", "tabs due evil ref"], ["verify"],
    ["dream", "status"], ["dream", "plan"], ["dream", "history"], ["dream", "reset-lock"], ["undo", "--list"], ["trash"], ["inbox"],
    ["--flavor", "claude", "dream", "status"], ["--flavor", "claude", "dream", "request"], ["--flavor", "claude", "dream", "history"],
]


def test_every_cli_output_shows_escapes_and_forges_no_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMTUI_NOW", "2026-03-10T12:00:00Z")
    project, mem = hostile_workspace(tmp_path)
    tried = 0
    for args in HUMAN:
        code, out, err = invoke(project, mem, *args)
        assert code in (0, 1), (args, code, err)
        check_human(out + err, " ".join(args))
        tried += 1
    # changes and their messages: a doctor fix, a dream, a delete and restore, an undo
    for args in (["doctor", "--fix", "all", "--yes"], ["dream", "apply", "--force", "--consolidator", "offline"], ["undo", "--list"], ["undo"], ["trash"]):
        code, out, err = invoke(project, mem, *args)
        assert code in (0, 1), (args, code, err)
        check_human(out + err, " ".join(args))
        tried += 1
    # a team import whose rejections and acceptances name hostile keys and paths
    bundle = tmp_path / "bundle.json"
    bundle.write_text(json.dumps({f"../{OSC52}{RLO}.md": "x", f"ok{CSI}.md": f"---\nname: {yaml_str(EVIL)}\n---\n{EVIL}", f"a{OSC0}/../../x.md": "y",
                                  f"%2e%2e%2f{OSC0}": "z", f"sub/{RLO}{FORGE}.md": "w"}))
    code, out, err = invoke(project, mem, "team", "import", str(bundle))
    assert code == 1 and "rejected" in out, (out, err)
    check_human(out + err, "team import")
    code, out, err = invoke(project, mem, "team", "import", str(bundle), "--dry-run")
    check_human(out + err, "team import --dry-run")
    # extraction of a hostile conversation, the inbox, a proposal shown and accepted
    talk = transcript(tmp_path)
    code, out, err = invoke(project, mem, "extract", str(talk), "--extractor", "offline")
    assert code == 0, err
    check_human(out + err, "extract")
    ident = json.loads(invoke(project, mem, "inbox", "--json")[1])[0]["id"]
    for args in (["inbox"], ["inbox", "show", ident], ["inbox", "accept", ident], ["inbox", "--all"]):
        code, out, err = invoke(project, mem, *args)
        assert code in (0, 1), (args, err)
        check_human(out + err, " ".join(args))
        tried += 1
    # errors: a hostile argument echoed back, a hostile path that does not exist
    for args in (["restore", f"{OSC52}{FORGE}.md"], ["team", "import", str(tmp_path / f"{OSC0}{FORGE}.json")], ["ls", f"--{OSC0}"]):
        code, out, err = invoke(project, mem, *args)
        assert code != 0
        check_human(out + err, " ".join(args))
        tried += 1
    print(f"faults: hostile names through {tried + 4} CLI outputs: no raw escape, no forged line")


JSON = [["ls", "--json"], ["index", "--json"], ["cascade", "--json"], ["doctor", "--json"], ["recall", "tabs due evil ref", "--json"],
        ["dream", "plan", "--json"], ["where", "--json"], ["verify", "--json"]]


def test_json_stays_exact_and_valid_utf8(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMTUI_NOW", "2026-03-10T12:00:00Z")
    project, mem = hostile_workspace(tmp_path)
    (mem / "user_del\x7f.md").write_text("---\nname: del \x7f\ndescription: a DEL in the name\ntype: user\n---\n\nx\n")
    for args in JSON:
        result = CliRunner().invoke(main, ["--project", str(project), "--memory-dir", str(mem), *args], catch_exceptions=False)
        assert result.exit_code in (0, 1), (args, result.stderr)
        text = result.stdout_bytes.decode("utf-8")  # strict: valid UTF-8
        json.loads(text)
        # piped to a terminal, a raw C1 (U+009B is a one-byte CSI) or bidi control would act: escaped
        assert not re.search("[\x7f-\x9f\u202a-\u202e\u2066-\u2069]", text), args
    listed = json.loads(CliRunner().invoke(main, ["--memory-dir", str(mem), "ls", "--json"]).stdout_bytes.decode("utf-8"))
    paths = {e["path"] for e in listed}
    # exact: the names as they are on disk; the non-UTF-8 byte as its surrogate escape
    assert f"user_{OSC0}{RLO}x.md" in paths
    assert os.fsencode(next(p for p in paths if p.startswith("user_\udcff"))) == b"user_\xff\xfe.md"
    evil = next(e for e in listed if e["path"] == f"user_{OSC0}{RLO}x.md")
    assert evil["name"] == "Evil " + EVIL + FORGE


def test_the_app_shows_escapes_never_markup_and_writes_no_control_character(tmp_path: Path) -> None:
    import asyncio

    from memtui.core.places.flavor import AGENT
    from memtui.core.places.locations import resolve_locations
    from memtui.tui.app import MemtuiApp

    from support.faultlab import NOW
    from textual.lazy import Lazy

    from memtui.core.extract.inbox import Inbox, Proposal, ProposalSource

    project, mem = hostile_workspace(tmp_path)
    os.mkfifo(mem / f"user_fifo{RLO}.md")  # unreadable: the dream's plan carries a note for it
    state = Path(os.environ["MEMTUI_STATE_DIR"])
    Inbox(state, mem).add(Proposal("0123456789ab", "create", f"user_{RLO}.md", "user", f"P {EVIL}{FORGE}", f"d {EVIL}", f"b {EVIL}\n",
                                   ProposalSource("s1", "u1", str(transcript(tmp_path))), "offline", True, NOW.isoformat()))
    app = MemtuiApp(resolve_locations(AGENT, project, memory_dir=mem), watch=False)
    written: list[str] = []

    def frame() -> None:
        update = app.screen._compositor.render_update(full=True)
        written.append(update.render_segments(app.console))

    async def tour() -> None:
        async with app.run_test(size=(160, 50)) as pilot:

            async def settle() -> None:
                await pilot.pause()
                while app.query(Lazy):  # the panes mounted after the first refresh
                    await pilot.pause(0.02)
                await app.workers.wait_for_complete()
                await pilot.pause()

            async def pane(name: str) -> None:
                app.action_show_pane(name)
                await settle()

            async def dialog(*keys: str) -> None:
                if app.screen.query("#memories-table"):
                    app.query_one("#memories-table").focus()
                await pilot.press(*keys)
                await settle()
                frame()
                await pilot.press("escape")
                await settle()

            await settle()
            for _ in range(5):  # each memory's preview
                frame()
                await pilot.press("down")
                await pilot.pause()
            await pane("cascade")
            frame()
            await pane("recall")
            app.query_one("#recall-query").focus()
            await pilot.press(*"tabs evil due", "enter")
            await settle()
            frame()
            await pane("dream")
            app.query_one("#dream-changes").focus()
            await pilot.press("d")  # a dry run: the plan, its log and diffs
            await settle()
            frame()
            await pilot.press("end")  # its last item: a note (the unreadable FIFO memory)
            await settle()
            frame()
            await pane("memories")
            app.query_one("#memories-table").focus()
            await pilot.press("home")
            await dialog("y")  # re-type
            await dialog("m")  # rename
            await dialog("d")  # delete: the plan's preview
            await dialog("I")  # the inbox: a hostile proposal and its conversation
            await pilot.press("D")  # the doctor
            await settle()
            frame()
            await dialog("f")  # a fix's preview: its diff
            await pilot.press("escape")
            await settle()
            app.query_one("#memories-table").focus()
            # the editor opens on a memory memtui can write (the FIFO memory is refused before it)
            from memtui.tui.memories import MemoriesPane

            pane = app.query_one(MemoriesPane)
            rows = [e.memory.sha256 != "" for e in pane.shown]
            app.query_one("#memories-table").move_cursor(row=rows.index(True))  # type: ignore[attr-defined]
            await pilot.pause()
            await pilot.press("e")  # the editor (last: it stays until its text is saved or dropped)
            await settle()
            frame()
            app.notify(f"a message {EVIL}{FORGE}")
            await pilot.pause()
            frame()

    asyncio.run(tour())
    assert app.is_running is False and app.return_code in (None, 0)  # markup did not quit the app
    screens = "".join(written)
    # the app's own sequences are SGR and cursor moves (ESC [ … m / H); nothing else
    content = re.sub(r"\x1b\[[0-9;?]*[mHJKlh]|\x1b\]8;[^\x1b]*\x1b\\\\", "", screens)
    found = RAW.search(content)
    assert found is None, f"raw {found.group()!r} near {content[max(0, found.start() - 80): found.end() + 20]!r}"
    assert "\\x1b]52;c;" in content  # shown, as an escape
    assert "[@click=app.quit]" in content  # shown as text, not a link
    for seen in ("Type of", "editing", "Doctor", "proposed memor", "gates", "A note changes nothing"):  # the screens and dialogs were reached
        assert seen in content, seen
    print(f"faults: hostile names through {len(written)} app screens: no raw escape, no markup")
