"""Agents memtui runs against the Messages API — the extractor (docs/behaviour.md §7) and the dream's
Claude consolidator (docs/behaviour.md §8) — with one tool policy and one loop.

- :class:`ToolPolicy`, :func:`execute` → :class:`ToolOutcome`: the six tools (Read, Grep,
  Glob, read-only Bash, Write/Edit inside one root) and every refusal as a tool error.
- :class:`PathAlias` (``ToolPolicy.alias``): the model is shown one directory (the live memory
  dir) where the tools work in another (memtui's staging copy); paths are mapped in, texts back.
- :func:`tool_definitions`: the ``tools`` request parameter for a policy.
- :func:`run_agent` → :class:`AgentRun`: the tool-use loop with a turn limit, a cancel event,
  a time budget for all its Bash commands (:class:`ShellBudget`), a deadline for the whole run,
  a live :class:`AgentEvent` stream and API errors as sentences.

Codes of a :class:`ToolOutcome` with ``is_error=True``:

- any tool: ``unknown-tool``, ``tool-disabled``, ``bad-input``, ``internal-error``;
- Read/Grep/Glob: ``not-found``, ``is-directory``, ``not-a-file``, ``not-a-directory``,
  ``outside-read-roots``, ``denied`` (other processes' state: ``memtui.core.agent.deny``),
  ``too-large``, ``binary-file``, ``unreadable``, ``bad-regex``, ``bad-pattern``;
- Bash: ``bash-empty``, ``bash-syntax``, ``bash-substitution``, ``bash-redirection``,
  ``bash-chaining``, ``bash-not-allowed``, ``bash-forbidden-option``, ``bash-denied-path``,
  ``bash-timeout``, ``bash-limit`` (stopped at its memory or CPU-time limit), ``bash-budget``
  (the run's Bash time budget is used up), ``bash-exit`` (ran, non-zero status or killed by a
  signal), ``bash-failed`` (could not start);
- Write/Edit: :class:`memtui.core.writes.safepath.UnsafePathError` codes (``outside-dir``,
  ``symlink-escape``, ``dangling-symlink``, ``symlink-loop``, ``dir-itself``, ``nul-byte``,
  ``unresolvable``), ``is-directory``, ``too-large``, ``write-failed``; Edit also
  ``not-found``, ``not-a-file``, ``not-utf8``, ``no-match``, ``ambiguous-match``, ``no-change``.
"""

from __future__ import annotations

from memtui.core.agent.alias import PathAlias
from memtui.core.agent.bash import ShellBudget
from memtui.core.agent.policy import (
    ALL_TOOLS,
    BASH_BUDGET_S,
    BASH_CPU_S,
    BASH_MEMORY_BYTES,
    BASH_TIMEOUT_S,
    DEFAULT_BASH_ALLOW,
    ToolCall,
    ToolOutcome,
    ToolPolicy,
)
from memtui.core.agent.runner import (
    DEFAULT_MAX_TOKENS,
    REQUEST_TIMEOUT_S,
    RUN_DEADLINE_S,
    AgentEvent,
    AgentRun,
    describe_api_error,
    run_agent,
    request_text,
)
from memtui.core.agent.tools import execute, summarize, tool_definitions

__all__ = [
    "ALL_TOOLS",
    "BASH_BUDGET_S",
    "BASH_CPU_S",
    "BASH_MEMORY_BYTES",
    "BASH_TIMEOUT_S",
    "DEFAULT_BASH_ALLOW",
    "DEFAULT_MAX_TOKENS",
    "REQUEST_TIMEOUT_S",
    "RUN_DEADLINE_S",
    "AgentEvent",
    "AgentRun",
    "PathAlias",
    "ShellBudget",
    "ToolCall",
    "ToolOutcome",
    "ToolPolicy",
    "describe_api_error",
    "execute",
    "request_text",
    "run_agent",
    "summarize",
    "tool_definitions",
]
