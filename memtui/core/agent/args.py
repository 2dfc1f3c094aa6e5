"""Argument checks shared by the agent tools: a wrong or missing argument is a ``bad-input``
tool error, never an exception."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from memtui.core.agent.policy import ToolOutcome

__all__ = ["error", "int_arg", "str_arg"]


def error(code: str, message: str) -> ToolOutcome:
    """A refusal or failure: ``is_error=True`` with ``code`` and the sentence ``message``."""
    return ToolOutcome(message, is_error=True, code=code)


def str_arg(args: Mapping[str, Any], key: str, tool: str, *, required: bool = True) -> str | ToolOutcome | None:
    """``args[key]`` as a string (non-empty when ``required``; ``None`` when optional and
    absent), or the ``bad-input`` outcome."""
    value = args.get(key)
    if value is None and not required:
        return None
    if not isinstance(value, str) or (required and not value):
        return error("bad-input", f"Refused: {tool} needs {key!r} (a non-empty string).")
    return value


def int_arg(args: Mapping[str, Any], key: str, tool: str) -> int | ToolOutcome | None:
    """``args[key]`` as an integer ≥ 1 (``None`` when absent), or the ``bad-input`` outcome."""
    value = args.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        return error("bad-input", f"Refused: {tool}'s {key!r} must be a whole number ≥ 1.")
    return value
