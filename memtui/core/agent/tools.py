"""The six agent tools and :func:`execute`, the one entry point that enforces a
:class:`~memtui.core.agent.policy.ToolPolicy` (docs/behaviour.md §7, §9).

``Read``/``Grep``/``Glob`` read anywhere (or below ``policy.read_roots``); ``Bash`` runs the
read-only allow-list (:mod:`memtui.core.agent.bash`); ``Write``/``Edit`` change files only
inside ``policy.write_root``, at the path :func:`memtui.core.writes.safepath.validate_inside` returns,
through :func:`memtui.core.writes.atomic.atomic_write_bytes`. Any other name is refused.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from memtui.core.agent.args import error
from memtui.core.agent.bash import ShellBudget, run_bash
from memtui.core.agent.policy import ALL_TOOLS, ToolCall, ToolOutcome, ToolPolicy
from memtui.core.agent.read import glob_tool, grep_tool, read_tool
from memtui.core.agent.remove import is_rm, remove_tool
from memtui.core.agent.write import edit_tool, write_tool

__all__ = ["execute", "summarize", "tool_definitions"]

_DEFINITIONS: dict[str, dict[str, Any]] = {
    "Read": {
        "description": (
            "Read a text file. Returns its lines numbered from 1, as `cat -n` prints them "
            "(number, tab, line). Without offset/limit, files over {read_kb} KB are refused: read them "
            "in parts. A relative path is relative to the working directory. Any file can be read except "
            "other processes' state (/proc/<pid>, /proc/self, /proc/thread-self) and /proc/kcore."
        ),
        "input_schema": {
            "type": "object",
            "properties": {
                "file_path": {"type": "string", "description": "Path of the file (absolute preferred)."},
                "offset": {"type": "integer", "minimum": 1, "description": "First line to read (1-based)."},
                "limit": {"type": "integer", "minimum": 1, "description": "Number of lines to read (default {read_lines})."},
            },
            "required": ["file_path"],
        },
    },
    "Grep": {
        "description": (
            "Search file contents with a regular expression (Python syntax) in a file or in every "
            "text file below a directory. Returns matching lines as path:line:text, at most {grep_max}."
        ),
        "input_schema": {
            "type": "object",
            "properties": {
                "pattern": {"type": "string", "description": "Regular expression to search for."},
                "path": {"type": "string", "description": "File or directory to search (default: the working directory)."},
                "glob": {"type": "string", "description": "Only files whose name (or relative path, if it has a '/') matches, e.g. '*.md'."},
                "ignore_case": {"type": "boolean", "description": "Case-insensitive search."},
            },
            "required": ["pattern"],
        },
    },
    "Glob": {
        "description": (
            "Find files by name pattern ('*', '?', '[abc]', '{a,b}', '**' for any depth) below a "
            "directory. Returns absolute paths, newest first, at most {glob_max}."
        ),
        "input_schema": {
            "type": "object",
            "properties": {
                "pattern": {"type": "string", "description": "Pattern relative to path, e.g. '**/*.md'."},
                "path": {"type": "string", "description": "Directory to search (default: the working directory)."},
            },
            "required": ["pattern"],
        },
    },
    "Bash": {
        "description": (
            "Run one read-only command, or a pipeline of them joined by '|': {allow}. There is no "
            "shell: no redirection, no ';', '&&', '||' or '&', no $(...), ${...} or backticks, no "
            "globbing or variables (use the Glob tool for patterns). Options are checked as each "
            "command parses them: find -exec/-delete, tail -f, file -C, grep -R and the like are "
            "refused, and so is any file under /proc/<pid>, /proc/self or /proc/kcore. Each command is "
            "stopped after {bash_s} s or {bash_mem} of memory, and the output kept is cut at {out_chars} "
            "characters; all the commands of this run together get {budget_s} s, then the run ends."
        ),
        "input_schema": {
            "type": "object",
            "properties": {"command": {"type": "string", "description": "The command line."}},
            "required": ["command"],
        },
    },
    "Write": {
        "description": (
            "Create or replace a file with the given content (UTF-8). Only files inside {root} "
            "may be written; a relative path is relative to it."
        ),
        "input_schema": {
            "type": "object",
            "properties": {
                "file_path": {"type": "string", "description": "Path of the file to write."},
                "content": {"type": "string", "description": "The whole new content of the file."},
            },
            "required": ["file_path", "content"],
        },
    },
    "Edit": {
        "description": (
            "Replace text in an existing file inside {root}: old_string must occur exactly once "
            "(give more context to make it unique) unless replace_all is true. Copy old_string "
            "from the file itself, without Read's line-number prefix."
        ),
        "input_schema": {
            "type": "object",
            "properties": {
                "file_path": {"type": "string", "description": "Path of the file to change."},
                "old_string": {"type": "string", "description": "The exact text to replace."},
                "new_string": {"type": "string", "description": "The text to put in its place."},
                "replace_all": {"type": "boolean", "description": "Replace every occurrence (default false)."},
            },
            "required": ["file_path", "old_string", "new_string"],
        },
    },
}


def tool_definitions(policy: ToolPolicy) -> list[dict[str, Any]]:
    """The ``tools`` parameter of a Messages API request for ``policy``: one
    ``{"name", "description", "input_schema"}`` dict per tool in ``policy.offered()``, with the
    allow-list, the writable root (as ``policy.show`` names it) and the policy's caps written into
    the descriptions."""
    allow = ", ".join(sorted(policy.bash_allow))
    root = policy.show(str(policy.write_root)) if policy.write_root is not None else "the writable directory"
    values = {
        "allow": allow,
        "root": root,
        "read_kb": f"{policy.read_max_bytes // 1024:,}",
        "read_lines": str(policy.read_default_lines),
        "grep_max": str(policy.grep_max_matches),
        "glob_max": str(policy.glob_max_results),
        "bash_s": f"{policy.bash_timeout_s:g}",
        "bash_mem": f"{policy.bash_memory_bytes / (1 << 20):g} MiB",
        "out_chars": f"{policy.max_output_chars:,}",
        "budget_s": f"{policy.bash_budget_s:g}",
    }
    result = []
    for name in policy.offered():
        spec = _DEFINITIONS[name]
        result.append(
            {
                "name": name,
                "description": _fill(spec["description"], values),
                "input_schema": _fill_schema(spec["input_schema"], values),
            }
        )
    return result


def _fill(text: str, values: dict[str, str]) -> str:
    for key, value in values.items():
        text = text.replace("{" + key + "}", value)
    return text


def _fill_schema(schema: dict[str, Any], values: dict[str, str]) -> dict[str, Any]:
    """A copy of ``schema`` with the placeholders of its property descriptions filled in."""
    props = {
        key: {**prop, "description": _fill(prop["description"], values)} if "description" in prop else dict(prop)
        for key, prop in schema["properties"].items()
    }
    return {**schema, "properties": props}


def execute(
    policy: ToolPolicy,
    name: str,
    tool_input: object,
    *,
    log: list[ToolCall] | None = None,
    tool_use_id: str = "",
    turn: int = 0,
    budget: ShellBudget | None = None,
) -> ToolOutcome:
    """Run the tool ``name`` with the model's ``tool_input`` (a JSON object) under ``policy``.

    ``budget``: the run's time budget for Bash commands, shared by its calls (``None``: each
    command has only its own limits).

    Returns a :class:`ToolOutcome`; a refusal or failure has ``is_error=True``, a ``code`` and
    a reason in ``content`` — this function never raises for anything the model sends (an
    unexpected ``Exception`` inside a tool comes back as ``internal-error``). With
    ``policy.alias``, ``content`` names ``alias.shown`` wherever the tool named
    ``alias.actual``; ``wrote`` and ``removed`` stay the real paths. When ``log`` is given, a
    :class:`ToolCall` (with ``tool_use_id`` and ``turn``) is appended to it.
    """
    try:
        outcome = _dispatch(policy, name, tool_input, budget)
    except Exception as exc:  # noqa: BLE001 - the model must get an answer; the log keeps it
        outcome = ToolOutcome(f"Internal error in {name}: {type(exc).__name__}: {exc}", is_error=True, code="internal-error")
    if policy.alias is not None:
        outcome = dataclasses.replace(outcome, content=policy.show(outcome.content))
    if policy.denials is not None and outcome.is_error:
        outcome = _release_denial(policy.denials, name, outcome)
    if log is not None:
        log.append(
            ToolCall(
                id=tool_use_id,
                turn=turn,
                name=name,
                input=tool_input,
                summary=summarize(name, tool_input),
                is_error=outcome.is_error,
                code=outcome.code,
                wrote=outcome.wrote,
                content=outcome.content,
                removed=outcome.removed,
            )
        )
    return outcome


def summarize(name: str, tool_input: object) -> str:
    """One line describing a call, for logs: ``Read /x/y.md``, ``Bash ls -la``,
    ``Write notes.md (120 chars)``, ``Edit notes.md``; at most 200 characters."""
    data = tool_input if isinstance(tool_input, Mapping) else {}
    if name == "Bash":
        detail = str(data.get("command", ""))
    elif name in ("Grep", "Glob"):
        detail = f"{data.get('pattern', '')!r} in {data.get('path') or '.'}"
        if data.get("glob"):
            detail += f" ({data['glob']})"
    elif name == "Write":
        content = data.get("content")
        size = f" ({len(content)} chars)" if isinstance(content, str) else ""
        detail = f"{data.get('file_path', '')}{size}"
    else:
        detail = str(data.get("file_path", "")) if data else repr(tool_input)
    line = f"{name} {detail}".replace("\n", "\\n")
    return line if len(line) <= 200 else line[:199] + "…"


def _dispatch(policy: ToolPolicy, name: str, tool_input: object, budget: ShellBudget | None) -> ToolOutcome:
    if name not in ALL_TOOLS:
        offered = ", ".join(policy.offered())
        return error("unknown-tool", f"Refused: there is no tool {name!r}. The tools are: {offered}.")
    if name not in policy.offered():
        if name in ("Write", "Edit") and policy.write_root is None:
            why = "no writable directory was given"
        elif name == "Bash" and policy.read_roots is not None:
            why = "reads are confined to some directories, and a command's arguments could name any path"
        else:
            why = "it is turned off"
        return error("tool-disabled", f"Refused: {name} is not available in this run ({why}).")
    if not isinstance(tool_input, Mapping):
        return error("bad-input", f"Refused: the input of {name} must be a JSON object.")
    args: Mapping[str, Any] = tool_input
    if name == "Read":
        return read_tool(policy, args)
    if name == "Grep":
        return grep_tool(policy, args)
    if name == "Glob":
        return glob_tool(policy, args)
    if name == "Bash":
        command = args.get("command")
        if not isinstance(command, str):
            return error("bad-input", "Refused: Bash needs 'command' (a string).")
        if policy.remove_md and policy.write_root is not None and is_rm(command):
            return remove_tool(policy, command)
        return run_bash(policy, command, budget)
    if name == "Write":
        return write_tool(policy, args)
    return edit_tool(policy, args)


# Refusals a release answers with its own texts (``ToolPolicy.denials``): a shell command that
# is neither read-only nor an allowed ``rm``, and a tool or a path its memory agents may not use.
_SHELL_DENIED = frozenset({"bash-redirection", "bash-chaining", "bash-not-allowed", "bash-forbidden-option", "bash-substitution"})
_PATH_DENIED = frozenset({"outside-dir", "symlink-escape", "dangling-symlink", "symlink-loop", "dir-itself", "nul-byte", "unresolvable", "not-memory-file"})


def _release_denial(denials: Mapping[str, str], name: str, outcome: ToolOutcome) -> ToolOutcome:
    """``outcome`` with the release's refusal text when it is one of the refusals it words."""
    if name == "Bash" and outcome.code in _SHELL_DENIED and "shell" in denials:
        return ToolOutcome(denials["shell"], is_error=True, code=outcome.code)
    if (outcome.code in ("unknown-tool", "tool-disabled") or (name in ("Write", "Edit") and outcome.code in _PATH_DENIED)) and "tool" in denials:
        return ToolOutcome(denials["tool"], is_error=True, code=outcome.code)
    return outcome
