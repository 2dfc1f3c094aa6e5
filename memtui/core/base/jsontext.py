"""JSON text: written always as valid UTF-8, read from files memtui did not write with bounds.

**Writing.** A file name with bytes that are not UTF-8 reaches Python as a ``str`` holding lone
surrogates (U+DC80–U+DCFF, the ``surrogateescape`` error handler: ``os.fsdecode``). Such a
string has no UTF-8 form, so JSON writers either fail on it (orjson) or emit the raw surrogate
(``json.dumps`` with ``ensure_ascii=False``), which no UTF-8 reader accepts. Here every lone
surrogate is written as its JSON escape (``"\\udcff"``): the text is valid UTF-8 and exact —
``json.loads`` gives the same string back, and ``os.fsencode`` of it the original bytes.

**Reading.** ``loads_checked`` is ``json.loads`` for text someone else may have written (an
agent's transcript, a settings file, a state file edited by hand): every way the text can be
unusable is one ``JSONInputError`` (a ``ValueError``), never a ``RecursionError`` — nesting
is bounded before parsing (``MAX_JSON_DEPTH``), ``NaN``/``Infinity`` (which JavaScript's
``JSON.parse`` refuses) are refused, bytes that are not UTF-8 are refused. The parsed value
still has whatever JSON types the text had: callers check them (``json_number`` for numbers).
"""

from __future__ import annotations

import json
import math
import re
from itertools import accumulate
from typing import Any

_LONE_SURROGATE = re.compile("[\ud800-\udfff]")

# The deepest nesting of arrays and objects ``loads_checked`` accepts (memtui's choice). Real
# transcripts, settings and state files nest under 20 levels; Python's parser gives up near
# 1,000 with a ``RecursionError``, and code that walks a parsed value (``repr``, ``orjson``,
# which stops at 254) needs headroom below that.
MAX_JSON_DEPTH = 200
# A JSON string (escapes included), to blank out before brackets are counted.
_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_DEPTH_STEP = {"[": 1, "{": 1, "]": -1, "}": -1}


class JSONInputError(ValueError):
    """Text that is not usable JSON: invalid JSON, not UTF-8, ``NaN``/``Infinity``, or nested
    deeper than allowed. ``lineno``: 1-based line of the problem when known, else ``None``."""

    def __init__(self, message: str, lineno: int | None = None) -> None:
        super().__init__(message)
        self.lineno = lineno


def escape_surrogates(text: str) -> str:
    """``text`` (JSON) with every lone surrogate written as a ``\\uXXXX`` escape. Surrogates
    can only occur inside JSON strings, where such an escape means the same code point."""
    return _LONE_SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def dumps_exact(data: Any, *, indent: int | None = None, default: Any = None) -> str:
    """``json.dumps(data, ensure_ascii=False, indent=indent)`` with lone surrogates escaped:
    non-ASCII text kept as is, the result always encodable as UTF-8."""
    return escape_surrogates(json.dumps(data, ensure_ascii=False, indent=indent, default=default))


def nesting_depth(text: str) -> int:
    """How deep arrays and objects nest in the JSON ``text`` (``0`` for a scalar, ``1`` for
    ``[1]``); brackets inside strings do not count. Linear in ``len(text)``, never recursive.
    For text that is not JSON the number is only what its brackets add up to (parsing it fails
    anyway)."""
    if "[" not in text and "{" not in text:
        return 0
    brackets = _NOT_BRACKET.sub("", _STRING.sub("", text))
    return max(0, max(accumulate(map(_DEPTH_STEP.__getitem__, brackets)), default=0))


def _reject_constant(name: str) -> Any:
    raise JSONInputError(f"{name} is not JSON")


def loads_checked(data: str | bytes, *, max_depth: int = MAX_JSON_DEPTH) -> Any:
    """Parse ``data`` (text, or bytes read as strict UTF-8) like ``json.loads``.

    Returns the value: ``dict``/``list``/``str``/``int``/``float``/``bool``/``None``, nested at
    most ``max_depth`` levels; a float may be infinite (``1e999``, as JavaScript reads it).
    Raises ``JSONInputError`` for invalid JSON or UTF-8, ``NaN``/``Infinity``, deeper nesting,
    and integers over Python's 4,300-digit limit. Never raises ``RecursionError``.
    """
    if isinstance(data, bytes):
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise JSONInputError(f"not UTF-8 (byte {exc.start})") from exc
    else:
        text = data
    # cheap first: a text with fewer brackets than the limit cannot nest deeper
    if text.count("[") + text.count("{") > max_depth and nesting_depth(text) > max_depth:
        raise JSONInputError(f"nested deeper than {max_depth} levels")
    try:
        return json.loads(text, parse_constant=_reject_constant)
    except JSONInputError:
        raise
    except json.JSONDecodeError as exc:
        raise JSONInputError(str(exc), exc.lineno) from exc
    except (ValueError, RecursionError) as exc:  # an integer over 4,300 digits; a stack already deep
        raise JSONInputError(f"{type(exc).__name__}: {exc}"[:200]) from exc


def json_number(value: object, lo: float = -math.inf, hi: float = math.inf) -> float | None:
    """``value`` as a float when it is a JSON number (``int`` or ``float``, never ``bool``),
    finite and within ``[lo, hi]``; else ``None``. An integer too big for a float is ``None``,
    never an ``OverflowError``."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if not lo <= value <= hi:  # exact for ints of any size; False for NaN
        return None
    try:
        number = float(value)
    except OverflowError:
        return None
    return number if math.isfinite(number) else None
