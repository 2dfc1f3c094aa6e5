"""``memtui stores setting``: one key of a settings file set or removed, the rest of the file kept,
previewed, applied as one journaled change that ``memtui undo`` reverts byte for byte."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner
from support.stores import materialize

from memtui.cli import main
from memtui.core.stores.settings_fix import SettingEditError, plan_setting


def test_unset_keeps_the_other_keys_their_order_and_the_indent(tmp_path: Path) -> None:
    f = tmp_path / "settings.json"
    f.write_text('{\n    "model": "opus",\n    "env": {\n        "CLAUDE_CODE_DISABLE_AUTO_MEMORY": "1",\n        "FOO": "x"\n    },\n    "z": [1, 2]\n}\n')
    change = plan_setting(f, "env.CLAUDE_CODE_DISABLE_AUTO_MEMORY", None)
    assert change.after.decode() == '{\n    "model": "opus",\n    "env": {\n        "FOO": "x"\n    },\n    "z": [\n        1,\n        2\n    ]\n}\n'


def test_set_creates_the_file_and_the_key_path(tmp_path: Path) -> None:
    change = plan_setting(tmp_path / "settings.local.json", "autoMemoryDirectory", "/srv/mem")
    assert change.before is None
    assert json.loads(change.after) == {"autoMemoryDirectory": "/srv/mem"}


@pytest.mark.parametrize(
    ("text", "key", "value", "message"),
    [
        ("[1]", "a", "x", "is not a JSON object"),
        ("{oops", "a", "x", "is not valid JSON"),
        (b'{"a": "caf\xe9"}', "a", "y", "is not valid JSON"),
        ('{"env": "1"}', "env.X", "x", "env in .* is not an object"),
        ('{"a": "x"}', "a", "x", "is already x"),
        ('{"a": "x"}', "b", None, "is not set"),
        ('{"a": "x"}', "a..b", None, "is not a key path"),
    ],
)
def test_refusals(tmp_path: Path, text: str | bytes, key: str, value: str | None, message: str) -> None:
    f = tmp_path / "settings.json"
    f.write_bytes(text if isinstance(text, bytes) else text.encode())
    with pytest.raises(SettingEditError, match=message):
        plan_setting(f, key, value)


def test_the_auto_memory_fix_runs_and_undo_puts_the_file_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    layout = materialize("automem_off", tmp_path / "automem_off")
    monkeypatch.setenv("HOME", layout["home"])
    monkeypatch.chdir(layout["project"])
    runner = CliRunner()
    found = json.loads(runner.invoke(main, ["stores", "--json", "--flavor", "claude"]).stdout)["findings"]
    (command,) = [x["command"] for f in found for x in f["fixes"]]
    args = command.split()[1:]
    settings = Path(layout["home"]) / ".claude" / "settings.json"
    before = settings.read_bytes()
    preview = runner.invoke(main, [*args, "--flavor", "claude"])
    assert preview.exit_code == 0 and '-    "CLAUDE_CODE_DISABLE_AUTO_MEMORY": "1"' in preview.stdout
    assert settings.read_bytes() == before
    done = runner.invoke(main, [*args, "--yes", "--flavor", "claude"])
    assert done.exit_code == 0, done.output
    assert json.loads(settings.read_text()) == {"env": {}, "enabledPlugins": {"claude-mem@thedotmack": True}}
    after = json.loads(runner.invoke(main, ["stores", "--json", "--flavor", "claude"]).stdout)
    assert after["auto_memory"] is True and not [f for f in after["findings"] if f["code"] == "auto-memory-off"]
    undone = runner.invoke(main, ["undo", "--flavor", "claude"])
    assert undone.exit_code == 0, undone.output
    assert settings.read_bytes() == before


def test_a_settings_file_linked_out_of_its_folder_is_not_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    dotfiles = tmp_path / "dotfiles" / "settings.json"
    dotfiles.parent.mkdir()
    dotfiles.write_text('{"autoMemoryDirectory": "rel"}\n')
    home = tmp_path / "home"
    (home / ".claude").mkdir(parents=True)
    os.symlink(dotfiles, home / ".claude" / "settings.json")
    monkeypatch.setenv("HOME", str(home))
    done = CliRunner().invoke(main, ["stores", "setting", str(home / ".claude" / "settings.json"), "autoMemoryDirectory", "--unset", "--yes", "--flavor", "claude", "--project", str(tmp_path)])
    assert done.exit_code == 1
    assert f"is a link to {dotfiles}: memtui does not write through it" in done.output
    assert dotfiles.read_text() == '{"autoMemoryDirectory": "rel"}\n'


def test_a_number_json_cannot_write_back_is_left_to_a_person(tmp_path: Path) -> None:
    f = tmp_path / "settings.json"
    f.write_text('{"f": 1e400, "autoMemoryDirectory": "rel"}\n')
    with pytest.raises(SettingEditError, match="cannot write back"):
        plan_setting(f, "autoMemoryDirectory", None)


def test_crlf_line_ends_are_kept(tmp_path: Path) -> None:
    f = tmp_path / "settings.json"
    f.write_bytes(b'{\r\n  "a": "1",\r\n  "autoMemoryDirectory": "rel"\r\n}\r\n')
    assert plan_setting(f, "autoMemoryDirectory", None).after == b'{\r\n  "a": "1"\r\n}\r\n'
