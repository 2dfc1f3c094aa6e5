"""Session ids as a user types them: the whole id, or a unique prefix of one (the app and the
transcripts' file names show the first 8 characters, e.g. ``45b86495``)."""

from __future__ import annotations

import os
import string
from collections.abc import Iterable
from pathlib import Path

MIN_PREFIX_HEX = 8
"""Hex digits a prefix needs before it names a session: the 8 the app shows (a UUID's first
group), so that a word or a typo never picks a session by chance."""

_SHOWN_CANDIDATES = 10  # an ambiguous prefix lists this many ids, then "…"
_ID_CHARS = frozenset(string.hexdigits + "-")


class AmbiguousSessionIdError(LookupError):
    """A prefix names more than one session. ``candidates``: their ids, sorted."""

    def __init__(self, prefix: str, candidates: Iterable[str]) -> None:
        self.prefix = prefix
        self.candidates = tuple(sorted(candidates))
        shown = ", ".join(self.candidates[:_SHOWN_CANDIDATES])
        more = f", … ({len(self.candidates)} in all)" if len(self.candidates) > _SHOWN_CANDIDATES else ""
        super().__init__(f"{prefix!r} is the start of {len(self.candidates)} session ids: {shown}{more}; give more of the id")


def is_id_prefix(text: str) -> bool:
    """``text`` can stand for a session id: hex digits and dashes, ``MIN_PREFIX_HEX`` digits or more."""
    return set(text) <= _ID_CHARS and sum(c != "-" for c in text) >= MIN_PREFIX_HEX


def match_session_id(given: str, ids: Iterable[str]) -> str | None:
    """The session id ``given`` names among ``ids``: itself when it is one of them, else the one
    id it is a prefix of (``is_id_prefix``; letters compared case-insensitively); ``None`` when
    it names none. Raises ``AmbiguousSessionIdError`` when it is the prefix of several."""
    known = set(ids)
    if given in known:
        return given
    if not is_id_prefix(given):
        return None
    prefix = given.lower()
    found = [i for i in known if i.lower().startswith(prefix)]
    if len(found) > 1:
        raise AmbiguousSessionIdError(given, found)
    return found[0] if found else None


def find_session_transcript(sessions_dir: Path, given: str) -> Path | None:
    """``<sessions_dir>/<id>.jsonl`` of the session ``given`` names (its id or a unique prefix,
    ``match_session_id``), else ``None``. Raises ``AmbiguousSessionIdError``; an unreadable
    sessions dir is no session."""
    if not given or "/" in given or "\\" in given or given.startswith("."):
        return None
    exact = sessions_dir / f"{given}.jsonl"
    if exact.is_file():
        return exact
    if not is_id_prefix(given):
        return None
    try:
        with os.scandir(sessions_dir) as entries:
            ids = [e.name[: -len(".jsonl")] for e in entries if e.name.endswith(".jsonl") and e.is_file()]
    except OSError:
        return None
    found = match_session_id(given, ids)
    return None if found is None else sessions_dir / f"{found}.jsonl"
