"""Project slugs: how the reference turns a path into one directory name (docs/behaviour.md §2).

Every character outside ``[A-Za-z0-9]`` becomes ``-``, counted in UTF-16 code units (an emoji
is two units, so it gives ``--``). A slug longer than 200 units is cut to 200 and
``-`` + base-36 of ``abs(djb2(path))`` is appended.

Source of the constants: the reference's ``sanitizePath`` (``MAX_SANITIZED_LENGTH = 200``) and
its ``djb2Hash`` (seed 0, ``hash = (hash << 5) - hash + code_unit``, wrapped to a signed 32-bit
int after each step). Note: builds of the reference running on Bun hash with ``Bun.hash``
instead; memtui follows the portable (Node) path, as docs/behaviour.md §2 specifies.
"""

from __future__ import annotations

MAX_SLUG_UNITS = 200
_ALNUM = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
_BASE36 = "0123456789abcdefghijklmnopqrstuvwxyz"


def _utf16_units(text: str) -> list[int]:
    data = text.encode("utf-16-le", errors="surrogatepass")
    return [int.from_bytes(data[i : i + 2], "little") for i in range(0, len(data), 2)]


def djb2_hash(text: str) -> int:
    """The reference's ``djb2Hash``: a signed 32-bit int over the UTF-16 code units of ``text``."""
    h = 0
    for unit in _utf16_units(text):
        h = ((h << 5) - h + unit) & 0xFFFFFFFF
    return h - 0x1_0000_0000 if h & 0x8000_0000 else h


def to_base36(n: int) -> str:
    """Non-negative ``n`` in base 36, lower case (JavaScript's ``n.toString(36)``)."""
    if n == 0:
        return "0"
    digits: list[str] = []
    while n:
        n, r = divmod(n, 36)
        digits.append(_BASE36[r])
    return "".join(reversed(digits))


def slugify(path: str) -> str:
    """The slug of ``path`` (a string, used as given: no normalisation).

    >>> slugify("/tmp/test-project")
    '-tmp-test-project'
    """
    units: list[str] = []
    for ch in path:
        if ch in _ALNUM:
            units.append(ch)
        else:
            units.append("--" if ord(ch) > 0xFFFF else "-")
    sanitized = "".join(units)
    if len(sanitized) <= MAX_SLUG_UNITS:
        return sanitized
    return f"{sanitized[:MAX_SLUG_UNITS]}-{to_base36(abs(djb2_hash(path)))}"
