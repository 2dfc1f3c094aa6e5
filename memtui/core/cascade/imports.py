"""``@`` imports (docs/behaviour.md §3.3): finding them in prose and resolving them like the reference.

An import is ``@`` at the start of a text token or after whitespace, followed by a run of
non-space characters (``\\ `` escapes a space) — the reference's
``/(?:^|\\s)@((?:[^\\s\\\\]|\\\\ )+)/g`` applied to the *text* tokens of the Markdown only, so
code blocks, code spans and raw HTML never import. A ``#fragment`` is cut off. Accepted forms:
``./x``, ``../x``, ``~/x``, ``/abs`` (not ``/``) and a bare name starting with
``[A-Za-z0-9._-]``. Relative paths resolve against the directory of the including file's
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


def extract_import_refs(tokens: list[Token], body_line: int) -> list[ImportRef]:
    """Every import in the prose of ``tokens`` (markdown-it tokens of the file body), in order.

    ``body_line`` is the file line where the body starts, so each ``line`` is a file line.
    Block HTML comments are skipped, but the text left beside a closed comment is scanned.
    """
    refs: list[ImportRef] = []
    for token in tokens:
        if token.type in _SKIPPED_BLOCKS:
            if token.type == "html_block" and token.map is not None:
                stripped = token.content.lstrip()
                if stripped.startswith("<!--") and "-->" in stripped:
                    residue = re.sub(r"<!--[\s\S]*?-->", "", token.content)
                    if residue.strip():
                        refs.extend(_refs_in_text(residue, body_line + token.map[0]))
            continue
        if token.type != "inline" or token.map is None:
            continue
        line = body_line + token.map[0]
        for child in token.children or []:
            if child.type in ("softbreak", "hardbreak"):
                line += 1
            elif child.type == "text":  # an image's alt text is its own children: skipped
                refs.extend(_refs_in_text(child.content, line))
                line += child.content.count("\n")
            elif child.type == "code_inline":
                line += child.markup.count("\n")
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


def is_inside(path: Path | str, root: Path | str) -> bool:
    """``path`` is ``root`` or below it (compared on a separator boundary)."""
    p, r = os.path.normpath(path), os.path.normpath(root)
    return p == r or p.startswith(r.rstrip(os.sep) + os.sep)
