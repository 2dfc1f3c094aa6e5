"""Text measures the reference agent uses.

The reference is written in JavaScript, so its string lengths are **UTF-16 code units**:
an astral character (an emoji) counts 2, a BMP character (CJK included) counts 1.
"""

from __future__ import annotations


def utf16_len(text: str) -> int:
    """Length of ``text`` in UTF-16 code units (what JavaScript's ``String.length`` returns)."""
    if text.isascii():
        return len(text)
    # UTF-16LE has two bytes per code unit; `surrogatepass` counts a lone surrogate as the one
    # unit JavaScript counts (C speed, where a per-character count took ~0.2 s per 1.8 M chars).
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def utf16_prefix(text: str, units: int) -> str:
    """The longest prefix of ``text`` whose UTF-16 length is at most ``units``.

    JavaScript's ``slice(0, n)`` may split a surrogate pair; we never return half a character,
    so an astral character straddling the cut is dropped whole.
    """
    if units <= 0:
        return ""
    if len(text) <= units and utf16_len(text) <= units:
        return text
    count = 0
    for i, ch in enumerate(text):
        count += 2 if ord(ch) > 0xFFFF else 1
        if count > units:
            return text[:i]
    return text


def estimate_tokens(text: str) -> int:
    """A rough token estimate: 4 characters per token (the reference's own rule of thumb)."""
    return (len(text) + 3) // 4


def utf16_to_index(text: str, units: int) -> int:
    """The Python string index at which ``units`` UTF-16 code units of ``text`` have passed.

    An astral character straddling the boundary is counted as before it (so the result never
    splits a character). ``units`` past the end gives ``len(text)``.
    """
    if units <= 0:
        return 0
    count = 0
    for i, ch in enumerate(text):
        count += 2 if ord(ch) > 0xFFFF else 1
        if count > units:
            return i
    return len(text)


# JavaScript's String.prototype.trim() removes WhiteSpace and LineTerminator code points
# (ECMA-262 §12.2, §12.3): this set, no more (Python's str.strip() differs: it keeps U+FEFF and
# strips U+001C–U+001F and U+0085).
JS_WHITESPACE = (
    "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u2028\u2029\u202f\u205f\u3000\ufeff"
)


def js_trim(text: str) -> str:
    """``text.trim()`` as JavaScript computes it (a leading BOM is removed, U+0085 kept)."""
    return text.strip(JS_WHITESPACE)
