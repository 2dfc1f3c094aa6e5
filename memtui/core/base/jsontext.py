"""JSON text that is always valid UTF-8, even for file names that are not.

A file name with bytes that are not UTF-8 reaches Python as a ``str`` holding lone surrogates
(U+DC80–U+DCFF, the ``surrogateescape`` error handler: ``os.fsdecode``). Such a string has no
UTF-8 form, so JSON writers either fail on it (orjson) or emit the raw surrogate (``json.dumps``
with ``ensure_ascii=False``), which no UTF-8 reader accepts. Here every lone surrogate is written
as its JSON escape (``"\\udcff"``): the text is valid UTF-8 and exact — ``json.loads`` gives the
same string back, and ``os.fsencode`` of it the original bytes.
"""

from __future__ import annotations

import json
import re
from typing import Any

_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def escape_surrogates(text: str) -> str:
    """``text`` (JSON) with every lone surrogate written as a ``\\uXXXX`` escape. Surrogates
    can only occur inside JSON strings, where such an escape means the same code point."""
    return _LONE_SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def dumps_exact(data: Any, *, indent: int | None = None, default: Any = None) -> str:
    """``json.dumps(data, ensure_ascii=False, indent=indent)`` with lone surrogates escaped:
    non-ASCII text kept as is, the result always encodable as UTF-8."""
    return escape_surrogates(json.dumps(data, ensure_ascii=False, indent=indent, default=default))
