"""YAML as the reference agent's JavaScript parser reads it: YAML 1.2 core schema, unique keys.

PyYAML implements YAML 1.1, which differs exactly where memory files trip: ``yes``/``no``/
``on``/``off`` are booleans, ``2026-01-01`` becomes a date, ``1:30`` a sexagesimal number — in
YAML 1.2 (what the reference's JavaScript YAML library speaks) all of those are strings. And
JavaScript YAML libraries reject a mapping with a duplicate key, where PyYAML silently keeps the
last value. This loader fixes both, on top of libyaml's C parser when it is available.

Errors: ``yaml.YAMLError`` for invalid YAML (a duplicate key included); values are plain
``str``/``int``/``float``/``bool``/``None``/``list``/``dict``.
"""

from __future__ import annotations

import re
from typing import Any

import yaml

try:  # libyaml's parser when present (same results, much faster)
    _BaseLoader: type[yaml.SafeLoader] = yaml.CSafeLoader  # type: ignore[assignment]
except AttributeError:  # pragma: no cover - depends on the PyYAML build
    _BaseLoader = yaml.SafeLoader


class DuplicateKeyError(yaml.constructor.ConstructorError):
    """A mapping repeats a key (the reference's YAML parser refuses the document)."""


class Yaml12Loader(_BaseLoader):  # type: ignore[misc, valid-type]
    """A safe loader with YAML 1.2 core-schema scalars and unique mapping keys."""

    yaml_implicit_resolvers: dict[str | None, list[tuple[str, re.Pattern[str]]]] = {}

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
            try:
                duplicate = key in seen
                seen.add(key)
            except TypeError:  # an unhashable key: let the base class report it
                continue
            if duplicate:
                raise DuplicateKeyError(
                    "while constructing a mapping", node.start_mark, f"found duplicate key {key!r}", key_node.start_mark
                )
        return super().construct_mapping(node, deep=deep)  # type: ignore[no-any-return]


# YAML 1.2 core schema (https://yaml.org/spec/1.2.2/#1032-tag-resolution).
_CORE: list[tuple[str, str, str]] = [
    ("tag:yaml.org,2002:bool", r"^(?:true|True|TRUE|false|False|FALSE)$", "tTfF"),
    ("tag:yaml.org,2002:null", r"^(?:~|null|Null|NULL|)$", "~nN"),
    ("tag:yaml.org,2002:int", r"^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$", "-+0123456789"),
    (
        "tag:yaml.org,2002:float",
        r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$",
        "-+0123456789.",
    ),
]
for _tag, _pattern, _first in _CORE:
    _starts: list[str] = list(_first) + ([""] if _tag.endswith(":null") else [])  # "" = an empty value
    Yaml12Loader.add_implicit_resolver(_tag, re.compile(_pattern), _starts)
Yaml12Loader.add_implicit_resolver("tag:yaml.org,2002:merge", re.compile(r"^(?:<<)$"), ["<"])


def _int12(loader: yaml.SafeLoader, node: yaml.ScalarNode) -> int:
    value = str(loader.construct_scalar(node))
    if value.startswith("0o"):
        return int(value[2:], 8)
    if value.startswith("0x"):
        return int(value[2:], 16)
    return int(value, 10)  # YAML 1.2: a leading 0 is decimal, no `_` separators


Yaml12Loader.add_constructor("tag:yaml.org,2002:int", _int12)
# Explicit 1.1-only tags are not part of the reference's schema: keep their text.
Yaml12Loader.add_constructor("tag:yaml.org,2002:timestamp", yaml.SafeLoader.construct_yaml_str)
Yaml12Loader.add_constructor("tag:yaml.org,2002:binary", yaml.SafeLoader.construct_yaml_str)


def load(text: str) -> Any:
    """Parse one YAML document. Raises ``yaml.YAMLError`` (invalid YAML, duplicate key) or
    ``ValueError`` / ``RecursionError`` for pathological input — callers treat all as invalid."""
    return yaml.load(text, Loader=Yaml12Loader)  # noqa: S506 - a safe loader subclass
