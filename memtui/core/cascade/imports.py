"""``@`` imports (docs/behaviour.md §3.3): finding them in prose and resolving them like the reference.

An import is ``@`` at the start of a run of text or after whitespace, followed by a run of
non-space characters (``\\ `` escapes a space) — the reference's
``/(?:^|\\s)@((?:[^\\s\\\\]|\\\\ )+)/g`` applied to the *text* of the Markdown only, so code
blocks, code spans and raw HTML never import (but see ``list_text_raw``). A run of text is what
the reference's lexer keeps as one text token: ``\\ `` (a backslash before a space, which
Markdown cannot escape) and entities stay in it as written, so ``@docs/release\\ notes.md``
imports ``docs/release notes.md``; an escape (``\\(``, ``\\#``, ``\\\\``) ends it, so
``@a\\(b).md`` tries ``a`` (Claude Code 2.1.332, oracle scenario ``o_import_escapes``).

A ``#fragment`` is cut off. Accepted forms: ``./x``, ``../x``, ``~/x``, ``/abs`` (not ``/``)
and a bare name starting with ``[A-Za-z0-9._-]``. Relative paths resolve against the directory of the including file's
realpath; the result is normalised and NFC-normalised (the reference's ``expandPath``).
"""

from __future__ import annotations

import os
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from markdown_it.token import Token

# JavaScript's \s (the reference's regex runs in JavaScript).
_JS_SPACE = "\\t\\n\\v\\f\\r \\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000\\ufeff"
IMPORT_RE = re.compile(f"(?:^|[{_JS_SPACE}])@((?:[^{_JS_SPACE}\\\\]|\\\\ )+)")
_BARE_START = re.compile(r"^[a-zA-Z0-9._-]")
_SPECIAL_START = re.compile(r"^[#%^&*()]+")
# Punctuation a sentence puts right after a path: the source of the "did you mean" hint.
TRAILING_PUNCTUATION = ".,:;!?)]}'\"`>*_"
_SKIPPED_BLOCKS = frozenset({"fence", "code_block", "html_block"})


@dataclass(frozen=True, slots=True)
class ImportRef:
    """One ``@`` import as written: ``raw`` (the text after ``@``), ``path`` (fragment cut,
    ``\\ `` unescaped), ``fragment`` (the cut ``#…`` or ``None``), ``line`` (1-based, in the
    file)."""

    raw: str
    path: str
    fragment: str | None
    line: int


def is_import_form(path: str) -> bool:
    """The reference's accepted forms (``./``, ``~/``, ``/abs`` but not ``/``, or a bare name
    starting with ``[A-Za-z0-9._-]`` — which covers ``../``)."""
    return (
        path.startswith("./")
        or path.startswith("~/")
        or (path.startswith("/") and path != "/")
        or (not path.startswith("@") and not _SPECIAL_START.match(path) and bool(_BARE_START.match(path)))
    )


def _refs_in_text(text: str, line: int) -> Iterable[ImportRef]:
    for m in IMPORT_RE.finditer(text):
        raw = m.group(1)
        path = raw
        fragment: str | None = None
        hash_at = path.find("#")
        if hash_at != -1:
            path, fragment = path[:hash_at], path[hash_at:]
        if not path:
            continue
        path = path.replace("\\ ", " ")
        if is_import_form(path):
            yield ImportRef(raw, path, fragment, line)


def _text_runs(children: list[Token], line: int) -> Iterable[tuple[str, int]]:
    """The inline text of a paragraph as the reference's lexer cuts it: each run of adjacent
    text with the file line it starts on. A backslash before a character that cannot be
    escaped (``\\ ``) and an entity (``&amp;``) stay in the run as written; an escape
    (``\\(``, ``\\#``, ``\\\\``), a hard break, code, raw HTML and link or emphasis marks end it.
    An image's alt text is its own children: skipped."""
    run: list[str] = []
    run_line = line
    for child in children:
        if child.type == "softbreak" or child.type == "text" or (
            child.type == "text_special" and (child.info == "entity" or child.content == child.markup)
        ):
            if not run:
                run_line = line
            run.append("\n" if child.type == "softbreak" else child.markup if child.type == "text_special" else child.content)
        elif run:
            yield "".join(run), run_line
            run = []
        if child.type in ("softbreak", "hardbreak"):
            line += 1
        elif child.type in ("text", "code_inline", "html_inline"):
            line += child.content.count("\n")
    if run:
        yield "".join(run), run_line


def _refs_by_line(text: str, line: int) -> Iterable[ImportRef]:
    """``_refs_in_text`` with each reference on the line it is written on (the newlines
    counted forward from the previous match: linear in ``text``)."""
    counted = 0
    for m in IMPORT_RE.finditer(text):
        upto = m.start() + 1
        line += text.count("\n", counted, upto)
        counted = upto
        yield from _refs_in_text(m.group(0), line)


def extract_import_refs(tokens: list[Token], body_line: int, *, list_text_raw: bool = False) -> list[ImportRef]:
    """Every import in the prose of ``tokens`` (markdown-it tokens of the file body), in order.

    ``body_line`` is the file line where the body starts, so each ``line`` is a file line.
    Block HTML comments are skipped, but the text left beside a closed comment is scanned.

    ``list_text_raw`` (the ``claude-code`` Markdown dialect, confirmed with Claude Code 2.1.332
    by the oracle scenario ``o_import_list_text``): the reference's lexer makes a paragraph in
    a list item a ``text`` block whose source text it scans as well as its inline text, so in a
    list item an ``@path`` inside a code span or an inline comment **is** imported. A paragraph
    that follows a nested list inside the same item is an ordinary paragraph again (the lexer
    leaves its "not at the top" state when the nested list ends).
    """
    refs: list[ImportRef] = []
    containers: list[list[bool]] = []  # per open list item / blockquote: [is a list item, raw text scan]
    for token in tokens:
        if token.type == "list_item_open":
            containers.append([True, True])
        elif token.type == "blockquote_open":
            containers.append([False, False])
        elif token.type in ("list_item_close", "blockquote_close"):
            if containers:
                containers.pop()
        elif token.type in ("bullet_list_close", "ordered_list_close"):
            if containers and containers[-1][0]:
                containers[-1][1] = False
        if token.type in _SKIPPED_BLOCKS:
            if token.type == "html_block" and token.map is not None:
                stripped = token.content.lstrip()
                if stripped.startswith("<!--") and "-->" in stripped:
                    residue = re.sub(r"<!--[\s\S]*?-->", "", token.content)
                    if residue.strip():
                        refs.extend(_refs_by_line(residue, body_line + token.map[0]))
            continue
        if token.type != "inline" or token.map is None:
            continue
        line = body_line + token.map[0]
        found: list[ImportRef] = []
        if list_text_raw and containers and containers[-1][0] and containers[-1][1]:
            found.extend(_refs_by_line(token.content, line))
        # A path already found in this paragraph (by the raw scan or an earlier run) is not
        # found again from its inline text; the set is kept up to date as refs are added.
        seen = {f.path for f in found}
        for text, run_line in _text_runs(token.children or [], line):
            for ref in _refs_by_line(text, run_line):
                if ref.path not in seen:
                    seen.add(ref.path)
                    found.append(ref)
        refs.extend(found)
    return refs


def expand_path(path: str, base_dir: Path, home: Path) -> Path:
    """The reference's ``expandPath``: ``~/x`` → under ``home``; absolute → normalised;
    relative → joined to ``base_dir``; the result NFC-normalised."""
    trimmed = path.strip()
    if not trimmed:
        result = os.path.normpath(base_dir)
    elif trimmed == "~":
        result = str(home)
    elif trimmed.startswith("~/"):
        result = os.path.normpath(os.path.join(home, trimmed[2:]))
    elif os.path.isabs(trimmed):
        result = os.path.normpath(trimmed)
    else:
        result = os.path.normpath(os.path.join(base_dir, trimmed))
    return Path(unicodedata.normalize("NFC", result))


def did_you_mean(ref: ImportRef, base_dir: Path, home: Path) -> Path | None:
    """When ``ref`` failed only because of trailing punctuation (``@a.md:``), the file the
    author meant, if it exists; else ``None``."""
    stripped = ref.path.rstrip(TRAILING_PUNCTUATION)
    if not stripped or stripped == ref.path or not is_import_form(stripped):
        return None
    candidate = expand_path(stripped, base_dir, home)
    return candidate if candidate.is_file() else None


# At most this many entries of a folder are looked at for a spaced name (memtui's bound).
SPACED_SCAN_LIMIT = 2_000


def spaced_name(ref: ImportRef, base_dir: Path, home: Path) -> Path | None:
    """When ``ref`` names no file but its folder holds one whose name is the path's last part,
    a space and more (``@docs/release`` beside ``docs/release notes.md``: a space ends an import
    path unless written ``\\ ``), that file (the first by name); else ``None``. Looks at no more
    than ``SPACED_SCAN_LIMIT`` entries; never raises."""
    if not ref.path or ref.path.endswith("/") or not is_import_form(ref.path):
        return None
    target = expand_path(ref.path, base_dir, home)
    prefix = target.name + " "
    found: list[str] = []
    try:
        with os.scandir(target.parent) as entries:
            for n, entry in enumerate(entries):
                if n >= SPACED_SCAN_LIMIT:
                    break
                if entry.name.startswith(prefix) and entry.is_file():
                    found.append(entry.name)
    except OSError:
        return None
    return target.parent / min(found) if found else None


def is_inside(path: Path | str, root: Path | str) -> bool:
    """``path`` is ``root`` or below it (compared on a separator boundary)."""
    p, r = os.path.normpath(path), os.path.normpath(root)
    return p == r or p.startswith(r.rstrip(os.sep) + os.sep)
