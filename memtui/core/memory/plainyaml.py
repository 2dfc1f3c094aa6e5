"""A cheap exact path for the frontmatter almost every memory has: flat ``key: plain text`` lines.

Parsing 20,000 tiny YAML documents costs far more in PyYAML's per-document machinery (composer,
constructor, resolver — Python code even over libyaml's C parser) than in the bytes. Most
frontmatter is a handful of lines like ``description: Prefers tabs over spaces``; for those the
result is fully determined by the loader's implicit resolvers, so this module builds the mapping
directly — and answers ``None`` ("ask the real loader") for anything it is not certain about.

Certain means: every line is empty or ``key: value`` at column 0 where the key is a short
identifier and the value is a one-line plain scalar that starts with no YAML indicator, has no
``": "``, no ``" #"``, no trailing ``:`` or space, no tab/CR/control/line-separator/BOM
character, and neither key nor value matches one of the loader's implicit resolvers (so both
are strings); keys are unique (a duplicate key is the loader's business: it may reject it).
``tests/unit/test_plainyaml.py`` checks the equivalence against the loader on tricky and
generated inputs.
"""

from __future__ import annotations

import re
from typing import Any

_LINE = re.compile(r"([A-Za-z_][A-Za-z0-9_-]{0,63}): ([^-?:,\[\]{}#&*!|>'\"%@`\s][^\n]*)")
# Characters that could make YAML read a text differently from its letters: controls, CR, tab,
# NEL, BOM, line/paragraph separators, surrogates and non-characters.
_UNSAFE = re.compile(r"[^\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd\U00010000-\U0010ffff\n]")

Resolvers = dict[Any, list[tuple[str, "re.Pattern[str]"]]]


def _is_str(value: str, resolvers: Resolvers) -> bool:
    """Whether the loader's implicit resolvers leave plain ``value`` a string (PyYAML's
    ``BaseResolver.resolve``: the resolvers for the first character, then the wildcard ones)."""
    for _tag, regexp in (*resolvers.get(value[0], ()), *resolvers.get(None, ())):
        if regexp.match(value):
            return False
    return True


# Keys repeat across files (name, description, type…): their answer is remembered per loader
# schema (a bounded memo; the answer depends only on the key and the resolvers).
_KEY_MEMO: dict[tuple[int, str], bool] = {}


def _key_is_str(key: str, resolvers: Resolvers) -> bool:
    memo_key = (id(resolvers), key)
    known = _KEY_MEMO.get(memo_key)
    if known is None:
        known = _is_str(key, resolvers)
        if len(_KEY_MEMO) < 4096:
            _KEY_MEMO[memo_key] = known
    return known


def simple_mapping(yaml_text: str, resolvers: Resolvers) -> dict[str, str] | None:
    """The mapping ``yaml_text`` parses to when it is flat ``key: plain text`` lines, else ``None``.

    ``resolvers``: the loader's ``yaml_implicit_resolvers`` (its schema decides which plain
    scalars are not strings). ``None`` means "not sure": the caller must run the real loader.
    """
    if not yaml_text or _UNSAFE.search(yaml_text):
        return None
    out: dict[str, str] = {}
    for line in yaml_text.split("\n"):
        if not line:
            continue
        m = _LINE.fullmatch(line)
        if m is None:
            return None
        key, value = m.group(1), m.group(2)
        if ": " in value or " #" in value or value.endswith((":", " ")):
            return None
        if key in out or not _key_is_str(key, resolvers) or not _is_str(value, resolvers):
            return None
        out[key] = value
    return out or None
