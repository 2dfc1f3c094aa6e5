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


# Unicode Default_Ignorable_Code_Point (DerivedCoreProperties.txt), which JavaScript's \p{DI}
# matches and Python's unicodedata does not expose.
_DEFAULT_IGNORABLE = (
    (0x00AD, 0x00AD), (0x034F, 0x034F), (0x061C, 0x061C), (0x115F, 0x1160), (0x17B4, 0x17B5),
    (0x180B, 0x180F), (0x200B, 0x200F), (0x202A, 0x202E), (0x2060, 0x206F), (0x3164, 0x3164),
    (0xFE00, 0xFE0F), (0xFEFF, 0xFEFF), (0xFFA0, 0xFFA0), (0xFFF0, 0xFFF8), (0x1BCA0, 0x1BCA3),
    (0x1D173, 0x1D17A), (0xE0000, 0xE0FFF),
)
# Kept although they are format characters: ZWNJ, ZWJ, VS15, VS16, tab, LF, CR.
_SANITIZE_KEEP = frozenset({0x200C, 0x200D, 0xFE0E, 0xFE0F, 0x09, 0x0A, 0x0D})


def _dropped_by_sanitize(ch: str) -> bool:
    import unicodedata

    cp = ord(ch)
    if cp in _SANITIZE_KEEP:
        return False
    if cp < 32 or 127 <= cp <= 159:
        return True
    if unicodedata.category(ch) in ("Cf", "Co", "Cn", "Cs"):
        return True
    return any(lo <= cp <= hi for lo, hi in _DEFAULT_IGNORABLE)


def agent_sanitize(text: str) -> str:
    """Claude Code's cleaning of text it puts in the context (the auto-memory index, recalled
    memories): ``\\r\\n``, ``\\r``, U+2028 and U+2029 become ``\\n``; control, format,
    private-use, unassigned and default-ignorable characters are dropped (tab, ZWNJ, ZWJ and
    the emoji variation selectors are kept)."""
    import re

    text = re.sub("\r\n?|[\u2028\u2029]", "\n", text)
    if text.isascii() and not any(ord(c) < 32 and c not in "\t\n" or ord(c) == 127 for c in text):
        return text
    return "".join(c for c in text if not _dropped_by_sanitize(c))
