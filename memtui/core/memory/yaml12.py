"""YAML as the reference agent's JavaScript parser reads it: YAML 1.2 core schema, unique keys.

PyYAML implements YAML 1.1, which differs exactly where memory files trip: ``yes``/``no``/
``on``/``off`` are booleans, ``2026-01-01`` becomes a date, ``1:30`` a sexagesimal number — in
YAML 1.2 (what the reference's JavaScript YAML library speaks) all of those are strings. And
JavaScript YAML libraries reject a mapping with a duplicate key, where PyYAML silently keeps the
last value. This loader fixes both, on top of libyaml's C parser when it is available.

Errors: ``yaml.YAMLError`` for invalid YAML (a duplicate key included); values are plain
``str``/``int``/``float``/``bool``/``None``/``list``/``dict``.

Aliases are bounded where the document is parsed, before anything is built from it: a
"billion laughs" of 1.4 KB (nine anchors, each a list of nine aliases of the one before) is a
tree of 9⁹ nodes to anything that walks it — a JSON encoder, a cache, ``str()``. A document
whose aliases add more than ``MAX_ALIAS_NODES`` nodes to the tree, or that refers to itself
(an alias inside its own anchor), is refused with :class:`AliasExpansionError`; so no
consumer of a parsed frontmatter ever walks a bomb or a cycle.
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


# The most nodes aliases may add to a document's tree (memtui's choice: a frontmatter is a
# few dozen nodes; the JavaScript ``yaml`` library bounds aliases too, by count).
MAX_ALIAS_NODES = 10_000


class AliasExpansionError(yaml.YAMLError):
    """The document's aliases expand past ``MAX_ALIAS_NODES`` nodes, or an alias refers to a
    node that contains it (a cycle). ``problem``: the sentence."""

    def __init__(self, problem: str) -> None:
        super().__init__(problem)
        self.problem = problem


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.MappingNode):
        return [n for pair in node.value for n in pair]
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    return []


def check_aliases(root: yaml.Node, max_added: int = MAX_ALIAS_NODES) -> None:
    """Raise :class:`AliasExpansionError` when the tree ``root`` stands for (every alias
    replaced by a copy of its anchor) has more than ``max_added`` nodes beyond the document's
    own, or has a cycle. Linear in the document's nodes (each node's tree size is computed
    once); never recursive."""
    sizes: dict[int, int] = {}
    open_nodes: set[int] = set()
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, children_done = stack.pop()
        key = id(node)
        if children_done:
            total = 1 + sum(sizes[id(child)] for child in _children(node))
            if total - len(sizes) > max_added + 1:
                raise AliasExpansionError(f"its aliases expand to over {max_added:,} more nodes (a YAML \"billion laughs\"); not read")
            sizes[key] = total
            open_nodes.discard(key)
            continue
        if key in sizes:
            continue
        if key in open_nodes:
            raise AliasExpansionError("an alias refers to a node that contains it (a cycle); not read")
        open_nodes.add(key)
        stack.append((node, True))
        stack.extend((child, False) for child in _children(node) if id(child) not in sizes)


class Yaml12Loader(_BaseLoader):  # type: ignore[misc, valid-type]
    """A safe loader with YAML 1.2 core-schema scalars, unique mapping keys and bounded
    aliases (``check_aliases`` runs on the composed document before it is constructed)."""

    yaml_implicit_resolvers: dict[str | None, list[tuple[str, re.Pattern[str]]]] = {}

    def get_single_data(self) -> Any:
        node = self.get_single_node()
        if node is None:
            return None
        check_aliases(node)
        return self.construct_document(node)

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
