"""``memtui.core.memory.plainyaml``: the cheap path gives exactly what the YAML loader gives, or passes.

For every input, either ``simple_mapping`` answers ``None`` (the caller runs the loader) or its
mapping equals the loader's result — for PyYAML's ``SafeLoader`` (YAML 1.1 resolvers) and for
the YAML 1.2 loader frontmatter uses. Tricky inputs first (the quoting-retry shapes, the tab
trap, scalars that are not strings, control characters, CRLF, CJK), then generated ones.
"""

from __future__ import annotations

import importlib
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from memtui.core.memory.plainyaml import simple_mapping

LOADERS: list[type[Any]] = [yaml.SafeLoader]
try:
    LOADERS.append(importlib.import_module("memtui.core.memory.yaml12").Yaml12Loader)
except ImportError:  # pragma: no cover - the YAML 1.2 loader is optional here
    pass

TRICKY = [
    "name: Role\ndescription: Backend engineer\ntype: user\n",
    "description: a: b\ntype: feedback\n",
    "name: [draft] notes\n",
    'd: x "y": z\n',
    "name: @handle\n",
    "paths:\n\t- src/**\n",
    "name:\tx\n",
    "name: x\t\n",
    "metadata:\n  type: feedback\n",
    "- a\n- b\n",
    "just text\n",
    "",
    "\n\n",
    "# only a comment\n",
    "name: x # comment\n",
    "name: x#not-comment\n",
    "yes: no\non: off\n",
    "name: yes\n",
    "name: No\n",
    "date: 2026-01-01\nwhen: 2026-01-01 10:00:00\n",
    "n: 1_000\n", "f: 1.5e3\n", "x: 0x1F\n", "o: 0o17\n", "sexa: 1:30\n", "v: 1.0\n", "v: .5\n", "v: .inf\n", "v: .NaN\n",
    "v: 012\n", "v: +1\n", "v: 1e3\n",
    "null: ~\n", "v: ~\n", "v: null\n", "v: Null\n", "v: NULL\n", "empty:\n", "t: True\n", "t: TRUE\n", "t: tRUE\n",
    "key: =\n",
    "<<: x\n",
    "name: x\nname: y\n",
    "name: x\r\ndescription: crlf\r\n",
    "name: 数据库迁移\ndescription: 本番環境の移行手順\ntype: project\n",
    "name: emoji 🙂 ok\n",
    "name: bell \x07\n",
    "name: nel \x85 here\n",
    "name: ls \u2028 here\n",
    "name: bom \ufeff inside\n",
    "\ufeffname: bom first\n",
    "name: nbsp\xa0here\n",
    "name: x\n...\n",
    "name: x\n---\n",
    "name: &a x\n",
    "name: !!str 12\n",
    "a: b: c\n",
    "k: a,b,c\n", "k: a [b] {c}\n", "k: it's \"fine\"\n", "k: a:b\n", "k: x:\n", "k: a  b\n", "k: value \n",
    "k:  two spaces\n",
    "k-dash_under: v\n",
    "1: one\n",
    "true: t\n",
    "k: 100%\n",
    "k: a|b>c\n",
    "k: see @docs\n",
    "k: `x`\n",
    "k: " + "v" * 5000 + "\n",
    "name: x\n  continued\n",
    " name: indented\n",
]


@pytest.mark.parametrize("loader", LOADERS, ids=lambda c: c.__name__)
@pytest.mark.parametrize("raw", TRICKY)
def test_tricky_inputs(raw: str, loader: type[Any]) -> None:
    _check(raw, loader)


def test_the_common_shape_takes_the_cheap_path() -> None:
    raw = "name: Role\ndescription: Prefers tabs; see docs/style.md (2026-01-01)\ntype: user\noriginSessionId: 5f0c-77\n"
    for loader in LOADERS:
        assert simple_mapping(raw, loader.yaml_implicit_resolvers) == yaml.load(raw, Loader=loader)  # noqa: S506


def _check(raw: str, loader: type[Any]) -> None:
    fast = simple_mapping(raw, loader.yaml_implicit_resolvers)
    if fast is None:
        return
    assert fast == yaml.load(raw, Loader=loader), raw  # noqa: S506 - safe loaders only


_ALPHABET = st.sampled_from(list("ab:-#'\"[]{}&*!|>%@`?,=~ \t\r.01xyTNn_") + ["数", "本", "🙂", "\x85", "\x07", "\ufeff", "\xa0", "\u2028"])
_LINE = st.one_of(
    st.tuples(st.sampled_from(["name", "description", "type", "a-b", "yes", "1", "k_1", "null"]), st.text(_ALPHABET, max_size=10)).map(
        lambda kv: f"{kv[0]}: {kv[1]}"
    ),
    st.text(_ALPHABET, max_size=12),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_LINE, max_size=4))
def test_generated_inputs(lines: list[str]) -> None:
    raw = "".join(line + "\n" for line in lines)
    for loader in LOADERS:
        _check(raw, loader)


@pytest.mark.parametrize("raw", TRICKY)
def test_frontmatter_reads_the_same_with_and_without_the_cheap_path(raw: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from memtui.core.memory import frontmatter

    text = f"---\n{raw}---\nbody\n"
    fast = frontmatter.parse_frontmatter(text)
    monkeypatch.setattr(frontmatter, "simple_mapping", lambda _text, _resolvers: None)
    assert frontmatter.parse_frontmatter(text) == fast
