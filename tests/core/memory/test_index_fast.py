"""The index's plain-line shortcut finds exactly the entries markdown-it finds.

``parse_entries`` skips markdown-it for the usual ``- [Title](file.md) — hook`` line; every
line, tricky or generated, must give the same entries with the shortcut as without it.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memtui.core.memory import index
from memtui.core.memory.index import parse_entries

LINES = [
    "- [Role](user_role.md) — backend engineer",
    "- [数据库迁移](project/迁移.md) — 计划",
    "- [Role](user_role.md)",
    "* [Role](a/b/../c.md) - x",
    "+ [Role](./a.md)",
    "   - [Role](a.md)",
    "    - [Role](a.md)",
    "- [Ro le](a.md) — two words",
    "- [ Role ](a.md)",
    "- [*Role*](a.md)",
    "- [Role_x](a.md)",
    "- [`code`](a.md)",
    "- [a&amp;b](a.md)",
    "- [a\\]b](a.md)",
    "- [Role](a.md) and [Other](b.md)",
    "- [Role](a.md) <https://example.com>",
    "- [Role](a%20b.md)",
    "- [Role](https://example.com/x.md)",
    "- [Role](/abs.md)",
    "- [Role](../out.md)",
    "- [Role](a.md \"title\")",
    "- [Role](<a b.md>)",
    "- [Role](a.md)*emph*",
    "- ![img](a.png)",
    "- [Role](a.md) — see `x](y)`",
    "# [Heading](h.md)",
    "`- [Role](a.md)`",
    "- [Role] (a.md)",
    "- [Role](a.md",
    "- [$x^2$ {y}](a.md) #tag @me 100%",
    "- [Role](a.md) trailing  ",
    "- [🙂 emoji](e.md)",
    "- [Here](.)",
    "- [Up](..)",
    "- [Dots](...md)",
    "- [Dash](-a.md)",
]


def _without_shortcut(text: str, monkeypatch: pytest.MonkeyPatch) -> list[index.IndexEntry]:
    with monkeypatch.context() as m:
        m.setattr(index, "_PLAIN_ENTRY", re.compile(r"(?!)"))
        return parse_entries(text)


@pytest.mark.parametrize("line", LINES)
def test_tricky_lines(line: str, monkeypatch: pytest.MonkeyPatch) -> None:
    assert parse_entries(line) == _without_shortcut(line, monkeypatch)
    assert parse_entries(line, "team") == [e for e in _without_team(line, monkeypatch)]


def _without_team(text: str, monkeypatch: pytest.MonkeyPatch) -> list[index.IndexEntry]:
    with monkeypatch.context() as m:
        m.setattr(index, "_PLAIN_ENTRY", re.compile(r"(?!)"))
        return parse_entries(text, "team")


def test_the_usual_line_takes_the_shortcut(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    real = index._md.parseInline
    monkeypatch.setattr(index._md, "parseInline", lambda src, env=None: calls.append(src) or real(src, env))
    entries = parse_entries("- [Role](user_role.md) — backend engineer\n- [a](b.md) and [c](d.md)\n")
    assert [e.relpath for e in entries] == ["user_role.md", "b.md", "d.md"]
    assert calls == ["- [a](b.md) and [c](d.md)"]


_REST = st.lists(st.sampled_from(list("ab 数-*+_`\\[]()<>!&~#./%:") + ["](", "[x](y.md)", " — "]), max_size=6).map("".join)


@settings(max_examples=400, deadline=None)
@given(st.text(st.sampled_from(list("ab 数*_`\\[]<>!&~-")), max_size=8), st.text(st.sampled_from(list("ab/._-%:数 ()<>")), max_size=8), _REST, st.sampled_from(["- ", "* ", "  + ", "", "# "]))
def test_generated_lines(title: str, target: str, rest: str, prefix: str) -> None:
    line = f"{prefix}[{title}]({target}){rest}"
    fast = parse_entries(line)
    saved = index._PLAIN_ENTRY
    index._PLAIN_ENTRY = re.compile(r"(?!)")
    try:
        slow = parse_entries(line)
    finally:
        index._PLAIN_ENTRY = saved
    assert fast == slow, line
