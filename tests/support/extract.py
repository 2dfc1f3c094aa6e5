"""Hand-built session transcripts (docs/behaviour.md §7 shapes) for the extraction tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

SESSION = "5e55a0b1-0000-4000-8000-000000000001"


class Talk:
    """Builds a transcript line by line; uuids are ``u1``, ``u2``… in order."""

    def __init__(self, cwd: str = "/work/proj", session: str = SESSION) -> None:
        self.cwd = cwd
        self.session = session
        self.lines: list[dict[str, Any]] = []

    def _add(self, kind: str, content: Any, **extra: Any) -> str:
        uuid = f"u{len(self.lines) + 1}"
        role = "assistant" if kind == "assistant" else "user"
        self.lines.append({
            "type": kind, "uuid": uuid, "sessionId": self.session, "cwd": self.cwd,
            "timestamp": f"2026-03-10T11:{len(self.lines):02d}:00.000Z",
            "message": {"role": role, "content": content}, **extra,
        })
        return uuid

    def human(self, text: str) -> str:
        return self._add("user", text)

    def say(self, text: str) -> str:
        return self._add("assistant", [{"type": "text", "text": text}])

    def tool(self, name: str, tool_input: dict[str, Any], result: str = "ok", is_error: bool = False) -> str:
        ident = f"toolu_{len(self.lines)}"
        self._add("assistant", [{"type": "tool_use", "id": ident, "name": name, "input": tool_input}])
        return self._add("user", [{"type": "tool_result", "tool_use_id": ident, "content": result, "is_error": is_error}])

    def raw(self, obj: dict[str, Any]) -> None:
        self.lines.append(obj)

    def write(self, path: Path, tail: str = "") -> Path:
        path.write_text("".join(json.dumps(line) + "\n" for line in self.lines) + tail, encoding="utf-8")
        return path
