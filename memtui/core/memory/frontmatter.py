"""YAML frontmatter exactly as the reference agent reads it (docs/behaviour.md §3.2, §3.4, §4.2).

The reference matches ``/^---\\s*\\n([\\s\\S]*?)---\\s*\\n?/`` against the raw file text: the
block must start at **byte 0** (a BOM or a blank line first means *no frontmatter*), and it
ends at the first ``---`` that follows. YAML that fails to parse is retried once with the
values of simple ``key: value`` lines that contain YAML-special characters double-quoted; if
that fails too, the file has no frontmatter data.

python-frontmatter is not used for reading because it strips leading whitespace before
matching, which hides exactly the BOM / blank-line traps memtui must report. The YAML is read
as the reference's JavaScript parser reads it (YAML 1.2 core schema, unique keys): see
``memtui.core.memory.yaml12``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import yaml

from memtui.core.memory import yaml12
from memtui.core.memory.plainyaml import simple_mapping

# The reference's frontmatter pattern (JavaScript, no flags: ``^`` is the start of the text).
FRONTMATTER_RE = re.compile(r"^---\s*\n([\s\S]*?)---\s*\n?")
# A "simple" key line, as the reference's quoting retry recognises it.
_SIMPLE_KEY_LINE = re.compile(r"^([a-zA-Z_-]+):\s+(.+)$")
# Characters that make the reference quote a value on retry.
_YAML_SPECIAL = re.compile(r"[{}\[\]*&#!|>%@`]|: ")
_LEADING_BLOCK = re.compile(r"^(?:\ufeff|[ \t]*\r?\n)+---\s*\n")

BOM = "\ufeff"


@dataclass(slots=True)
class Frontmatter:
    """The result of reading a file's frontmatter.

    - ``present``: a frontmatter block matched at byte 0 (its YAML may still be broken).
    - ``data``: the parsed mapping; ``{}`` when absent, unparseable, or not a mapping.
    - ``raw``: the YAML text between the fences (``""`` when absent).
    - ``body``: the text after the block (the whole text when absent).
    - ``body_line``: 1-based line number where ``body`` starts.
    - ``repaired``: the YAML parsed only after the reference's quoting retry.
    - ``error``: the YAML error text when both attempts failed, else ``None``.
    - ``not_mapping``: the YAML parsed to something other than a mapping (a list, a string).
    - ``leading``: ``"bom"`` or ``"blank"`` when a fenced block follows a BOM or blank lines
      (so the reference sees no frontmatter), else ``None``.
    - ``unclosed``: the text starts with ``---`` but no closing fence follows.
    - ``bom_stripped``: a BOM before ``---`` was dropped (``strip_bom``) and the block read.
    """

    present: bool
    data: dict[str, Any] = field(default_factory=dict)
    raw: str = ""
    body: str = ""
    body_line: int = 1
    repaired: bool = False
    error: str | None = None
    not_mapping: bool = False
    leading: str | None = None
    unclosed: bool = False
    bom_stripped: bool = False


def quote_problematic_values(yaml_text: str) -> str:
    """The reference's retry transform: double-quote the value of each simple ``key: value``
    line whose value holds a YAML-special character (``{}[]*&#!|>%@``` or ``": "``) and is
    not already quoted."""
    out: list[str] = []
    for line in yaml_text.split("\n"):
        m = _SIMPLE_KEY_LINE.match(line)
        if m:
            key, value = m.group(1), m.group(2)
            quoted = (value.startswith('"') and value.endswith('"')) or (
                value.startswith("'") and value.endswith("'")
            )
            if not quoted and _YAML_SPECIAL.search(value):
                escaped = value.replace("\\", "\\\\").replace('"', '\\"')
                out.append(f'{key}: "{escaped}"')
                continue
        out.append(line)
    return "\n".join(out)


class _Invalid(Exception):
    """Any failure to read the YAML (syntax, duplicate key, a value PyYAML cannot build)."""


def _load(yaml_text: str) -> Any:
    # Flat `key: plain text` frontmatter (nearly every memory) needs no YAML machinery: the
    # cheap path answers only when the loader would give the same mapping (tests/unit/test_plainyaml.py).
    simple = simple_mapping(yaml_text, yaml12.Yaml12Loader.yaml_implicit_resolvers)
    if simple is not None:
        return simple
    try:
        return yaml12.load(yaml_text)
    except yaml.YAMLError:
        raise
    except (ValueError, TypeError, AttributeError, OverflowError, RecursionError) as exc:
        # e.g. `!!int abc`, a 5,000-digit number, 20,000 nested brackets: invalid, not a crash
        raise _Invalid(f"{type(exc).__name__}: {exc}"[:300]) from exc


def parse_frontmatter(text: str, *, strip_bom: bool = False) -> Frontmatter:
    """Read ``text``'s frontmatter the way the reference does. Never raises.

    ``text`` is the decoded file content, BOM and CRLF kept as they are on disk.
    ``strip_bom``: a leading BOM is dropped before the block is matched (Claude Code's
    ``MemoryFormat.strip_bom``); ``body`` then starts after the block in the text without it,
    and ``body_line`` still counts the file's lines.
    """
    if strip_bom and text.startswith(BOM):
        fm = parse_frontmatter(text[1:])
        if fm.present:
            fm.bom_stripped = True
            return fm
    m = FRONTMATTER_RE.match(text)
    if not m:
        fm = Frontmatter(present=False, body=text)
        if _LEADING_BLOCK.match(text):
            fm.leading = "bom" if text.startswith(BOM) else "blank"
        elif re.match(r"^---[ \t\r]*\n", text):
            fm.unclosed = True
        return fm
    raw = m.group(1)
    fm = Frontmatter(present=True, raw=raw, body=text[m.end() :], body_line=text.count("\n", 0, m.end()) + 1)
    parsed: Any
    try:
        parsed = _load(raw)
    except (yaml.YAMLError, _Invalid):
        try:
            parsed = _load(quote_problematic_values(raw))
            fm.repaired = True
        except (yaml.YAMLError, _Invalid) as exc:
            fm.error = _one_line(exc)
            return fm
    if parsed is None:
        return fm
    if isinstance(parsed, dict):
        fm.data = {str(k): v for k, v in parsed.items()}
    else:
        fm.not_mapping = True
    return fm


def _one_line(exc: Exception) -> str:
    """A YAML error in one line a user can act on: what is wrong and where in the frontmatter."""
    if isinstance(exc, yaml.reader.ReaderError):  # a character YAML does not allow (PyYAML's reader)
        char = exc.character if isinstance(exc.character, int) else ord(exc.character[:1] or "\0")
        return f"{exc.reason}: U+{char:04X} at character {exc.position + 1} of the frontmatter"
    problem = getattr(exc, "problem", None)
    mark = getattr(exc, "problem_mark", None)
    if problem and mark is not None:
        return f"{problem} (frontmatter line {mark.line + 1}, column {mark.column + 1})"
    return " ".join(str(exc).split())
