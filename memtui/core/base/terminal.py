"""Text from files and file names, made safe to show on a terminal.

A memory's name, a file name or a file's content can hold characters a terminal acts on
instead of showing: ESC starts a sequence that can set the window title (OSC 0), write the
clipboard (OSC 52) or recolour and move the cursor; C1 controls (U+0080–U+009F, CSI is U+009B)
do the same on some terminals; CR, backspace and the bidirectional overrides (U+202E…) make
a line read differently from its bytes. Every human-readable output of memtui — the CLI and the
app — passes such text through :func:`visible` (one line) or :func:`visible_block` (several
lines), which write each of these characters as a visible escape (``\\x1b``, ``\\u202e``).
JSON output keeps the text exact (see :mod:`memtui.core.base.jsontext`).

Escaped: every control character (Unicode category Cc: C0, DEL, C1), line and paragraph
separators (Zl, Zp), lone surrogates (Cs — a file-name byte that is not UTF-8, shown as the
byte, ``\\xff``) and every format character (Cf: bidi controls and isolates, zero-width space,
word joiner, BOM, invisible operators, tag characters…) except the zero-width joiner and
non-joiner (U+200C, U+200D), which scripts and emoji sequences need.
"""

from __future__ import annotations

import re

__all__ = ["UNSAFE", "has_unsafe", "visible", "visible_block"]

# Cc, Cs, Zl, Zp, and Cf less U+200C/U+200D (Unicode 15.1; tests/core/base checks the running
# Python's unicodedata is covered).
UNSAFE = re.compile(
    "[\x00-\x1f\x7f-\x9f\u00ad\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u180e\u200b\u200e\u200f"
    "\u2028-\u202e\u2060-\u2064\u2066-\u206f\ud800-\udfff\ufeff\ufff9-\ufffb"
    "\U000110bd\U000110cd\U00013430-\U0001343f\U0001bca0-\U0001bca3\U0001d173-\U0001d17a"
    "\U000e0001\U000e0020-\U000e007f]"
)
_BLOCK_UNSAFE = re.compile(UNSAFE.pattern.replace("\x00-\x1f", "\x00-\x08\x0b-\x1f"))
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    named = _NAMED.get(char)
    if named is not None:
        return named
    code = ord(char)
    if code < 0x100:
        return f"\\x{code:02x}"
    if 0xDC80 <= code <= 0xDCFF:  # surrogateescape: the undecodable byte itself
        return f"\\x{code - 0xDC00:02x}"
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"


def visible(text: str) -> str:
    """``text`` for one line of a terminal: every character listed in the module docstring
    (newline and tab included) written as its escape — ``\\n``, ``\\r``, ``\\t``, ``\\xNN``
    (below U+0100, and the byte of a surrogate-escaped file name), ``\\uNNNN``,
    ``\\UNNNNNNNN``. Other text, any script or emoji, is unchanged."""
    if UNSAFE.search(text) is None:
        return text
    return UNSAFE.sub(_escape, text)


def visible_block(text: str, *, keep_crlf: bool = False) -> str:
    """``text`` for several lines of a terminal: as :func:`visible`, but newlines and tabs stay.
    A CR before a newline is dropped (CRLF shows as a line end), or kept with ``keep_crlf``
    (output meant to be byte-exact wherever nothing is escaped); a CR elsewhere is escaped."""
    if "\r\n" in text and not keep_crlf:
        text = text.replace("\r\n", "\n")
    if _BLOCK_UNSAFE.search(text) is None:
        return text
    if keep_crlf:
        return _BLOCK_UNSAFE.sub(lambda m: m.group() if m.group() == "\r" and m.end() < len(text) and text[m.end()] == "\n" else _escape(m), text)
    return _BLOCK_UNSAFE.sub(_escape, text)


def has_unsafe(text: str) -> bool:
    """Whether ``text`` holds a character :func:`visible` would escape."""
    return UNSAFE.search(text) is not None
