"""Token counts of memory text: exact with the Messages API, else estimated.

Claude Code's ``/context`` counts each memory file with the Messages API's ``count_tokens``
endpoint. ``TokenCounter`` does the same when an API credential is set — one request per
distinct text, the answer kept in memtui's state dir (``token-counts.sqlite3``, keyed by model
and the text's SHA-256), so a file is counted once until it changes. Without a credential, or
when a request fails, the count is estimated (``estimate_tokens``: 4 characters a token) and
marked as such (``Count.exact`` false; people see ``~``).
"""

from __future__ import annotations

import hashlib
import sqlite3
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from memtui.core.base.units import estimate_tokens

if TYPE_CHECKING:
    import anthropic

CACHE_NAME = "token-counts.sqlite3"
NO_KEY_REASON = "no API key (ANTHROPIC_API_KEY): estimated at 4 characters a token"


@dataclass(frozen=True, slots=True)
class Count:
    """``tokens`` of a text; ``exact``: counted by the API (else estimated)."""

    tokens: int
    exact: bool

    def __str__(self) -> str:
        return f"{self.tokens:,}" if self.exact else f"~{self.tokens:,}"

    def __add__(self, other: Count) -> Count:
        return Count(self.tokens + other.tokens, self.exact and other.exact)


ZERO = Count(0, True)


class TokenCounter:
    """Counts tokens of texts for ``model`` (see the module docstring).

    ``client``: a ready ``anthropic.Anthropic`` (tests inject one on a mock transport); else one
    is made when ``environ`` holds a credential. ``state_dir``: where the cache lives (``None``:
    in memory only). ``online``: requests can be made; ``reason``: why not, or the last error."""

    def __init__(
        self,
        model: str,
        *,
        state_dir: Path | None = None,
        client: anthropic.Anthropic | None = None,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        from memtui.core.recall.claude import has_credentials

        self.model = model
        self._client = client
        self.online = client is not None or has_credentials(environ)
        self.reason: str | None = None if self.online else NO_KEY_REASON
        self._lock = threading.Lock()
        self._db = self._open(state_dir)
        self._failed = False

    @staticmethod
    def _open(state_dir: Path | None) -> sqlite3.Connection:
        target = ":memory:"
        if state_dir is not None:
            try:
                state_dir.mkdir(parents=True, exist_ok=True)
                target = str(state_dir / CACHE_NAME)
            except OSError:
                target = ":memory:"
        try:
            db = sqlite3.connect(target, timeout=5.0, check_same_thread=False, isolation_level=None)
            db.execute("CREATE TABLE IF NOT EXISTS counts (model TEXT, sha256 TEXT, tokens INTEGER, PRIMARY KEY (model, sha256))")
        except sqlite3.DatabaseError:
            db = sqlite3.connect(":memory:", check_same_thread=False, isolation_level=None)
            db.execute("CREATE TABLE IF NOT EXISTS counts (model TEXT, sha256 TEXT, tokens INTEGER, PRIMARY KEY (model, sha256))")
        return db

    def _client_or_none(self) -> anthropic.Anthropic | None:
        if self._client is None and self.online:
            import anthropic

            from memtui.core.recall.claude import make_client

            try:
                self._client = make_client()
            except anthropic.AnthropicError as exc:
                self.online, self.reason = False, f"client error: {exc}"
        return self._client

    def count(self, text: str) -> Count:
        """The tokens of ``text`` as one user message (the API's count, cached; an estimate
        when offline or after a failed request — one failure turns counting offline for this
        counter, so a dead network costs one timeout, not one per file)."""
        if not text:
            return Count(0, True)
        digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
        with self._lock:
            row = self._db.execute("SELECT tokens FROM counts WHERE model = ? AND sha256 = ?", (self.model, digest)).fetchone()
        if row is not None:
            return Count(int(row[0]), True)
        if self._failed:
            return Count(estimate_tokens(text), False)
        client = self._client_or_none()
        if client is None:
            return Count(estimate_tokens(text), False)
        import anthropic

        try:
            reply = client.messages.count_tokens(model=self.model, messages=[{"role": "user", "content": text}])
        except anthropic.AnthropicError as exc:
            self._failed = True
            self.reason = f"count_tokens failed: {type(exc).__name__}: {exc}"
            return Count(estimate_tokens(text), False)
        tokens = int(reply.input_tokens)
        with self._lock:
            self._db.execute("INSERT OR REPLACE INTO counts VALUES (?, ?, ?)", (self.model, digest, tokens))
        return Count(tokens, True)
