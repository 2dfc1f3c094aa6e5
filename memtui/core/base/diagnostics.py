"""Diagnostics: every trap memtui finds is one of these, with a stable ``code``.

A diagnostic never aborts a scan. ``code`` strings are stable API (the CLI's ``--json``
output and tests match on them); ``message`` is a sentence for a person.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Literal

Severity = Literal["error", "warning", "info"]


@dataclass(frozen=True, slots=True)
class Diagnostic:
    """One finding about one file (or about the setup as a whole).

    ``path`` is a filesystem path string or ``None`` for setup-wide findings; ``line`` is
    1-based or ``None`` when the finding is about the whole file.
    """

    code: str
    severity: Severity
    message: str
    path: str | None = None
    line: int | None = None

    def to_json(self) -> dict[str, Any]:
        """The JSON shape ``{code, severity, message, path, line}``."""
        return asdict(self)
