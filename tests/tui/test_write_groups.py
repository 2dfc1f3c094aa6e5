"""The worker groups the app waits for on quit (``WRITE_GROUPS``) are exactly the groups of the
workers that write: a renamed group would otherwise be cut short on quit without a word."""

from __future__ import annotations

import re
from pathlib import Path

import memtui.tui
from memtui.tui.threads import WRITE_GROUPS


def test_the_write_groups_are_the_groups_of_the_writing_workers() -> None:
    root = Path(memtui.tui.__file__).parent
    groups = set()
    for path in root.rglob("*.py"):
        source = path.read_text(encoding="utf-8")
        # a worker that writes calls the write path: apply_plan, a session's apply, an undo or a
        # lock reset, an inbox accept/reject
        for match in re.finditer(r'@work\([^)]*group="([^"]+)"\)\s*\n\s*def (\w+)\(', source):
            body = source[match.end(): source.find("\n    @", match.end()) if "\n    @" in source[match.end():] else len(source)]
            body = body.split("\n    def ", 1)[0]
            if re.search(r"\b(apply_plan|session\.apply|undo_last_dream|reset_lock|accept|reject)\(", body):
                groups.add(match.group(1))
    assert groups == WRITE_GROUPS
