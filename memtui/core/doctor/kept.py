"""The doctor's report of an unchanged memory dir, kept in the catalog database.

Working the findings out from kept rows and facts means decoding 100,000 rows and their facts,
pairing the conflict subjects and checking the index: seconds of Python at 100,000 memories for
the findings of the last run when nothing changed. The findings
that depend only on the memory dir, the instruction texts and the agent's usage (every check
but the claims about the code, which depend on the project's files) are kept as one
``CatalogDB.result`` under a fingerprint of everything they are made from:

- every entry below the memory dir — directories included, each name with the ``stat`` key of
  what it names (``os.stat``, links followed; the index files are among them) — and the dir's
  own key;
- the code (every module of ``memtui.core``: size and mtime), Python's and the libraries'
  versions that find secrets, near-duplicates and dates, the time zone;
- the memory format, the index warning style, the near-duplicate threshold, whether the claims
  are checked, the instruction texts;
- what the ``unused`` check reads of the usage: the sessions' start times and every memory's
  last use.

No finding depends on the clock otherwise (dates resolve against each file's mtime), so "now"
needs no part in it. An entry modified (mtime or ctime) within ``RACY_SECONDS`` makes the dir
not fingerprintable (git's racy rule, as for the rows), and so does a symbolic link to a
directory (an index link through it names a file outside the walk). What is kept with the
findings: the memories' relpaths in report order and their claims about the code, so the
claims check runs again without the catalog; the counts per severity, so a report printed as
JSON (its text kept too) never decodes its findings (``KeptFindings``).
"""

from __future__ import annotations

import hashlib
import os
import sys
import time
import zlib
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from operator import attrgetter
from pathlib import Path
from typing import Any

import orjson

from memtui.core.doctor.model import Finding, findings_json
from memtui.core.memory import catalogdb
from memtui.core.memory.catalogdb import CatalogDB
from memtui.core.memory.dirdigest import dir_digest
from memtui.core.places.behaviour import IndexWarning, MemoryFormat
from memtui.core.sessions.usage import UsageReport
from memtui.core.verify.claims import Claim, claims_from_json, claims_to_json

REPORT_KIND = "doctor-report"
FINDINGS_KIND = "doctor-report-findings"
RENDERED_KIND = "doctor-report-json"
# Libraries whose answers are findings (secrets, near-duplicate scores, index links, YAML,
# relative dates) or their text.
_LIBRARIES = ("detect-secrets", "rapidfuzz", "markdown-it-py", "pyahocorasick", "PyYAML", "dateparser", "regex", "orjson")


class KeptFindings(Sequence[Finding]):
    """The findings of a kept report, decoded from their columns when first read.

    A report printed as JSON needs only its kept text and its counts: decoding 228,000
    findings (a ``Finding`` each) is most of a warm doctor at 100,000 memories when nothing
    asks for them. ``columns`` is the kept value (``orjson`` text of ``[messages, columns]``),
    checked against its SHA-256 before it is taken, so the decode meets only what
    ``keep_report`` wrote. Compares equal to any sequence of the same findings."""

    __slots__ = ("_blob", "_items", "_n")

    def __init__(self, blob: bytes, n: int) -> None:
        self._blob: bytes | None = blob
        self._items: tuple[Finding, ...] | None = None
        self._n = n

    def _all(self) -> tuple[Finding, ...]:
        if self._items is None:
            assert self._blob is not None
            messages, columns = orjson.loads(self._blob)
            codes, severities, paths, lines, which, fixes, datas = columns
            self._items = tuple(map(Finding, codes, severities, paths, lines, map(messages.__getitem__, which), fixes, datas))
            self._blob = None
        return self._items

    def __len__(self) -> int:
        return self._n

    def __getitem__(self, index: Any) -> Any:
        return self._all()[index]

    def __iter__(self) -> Iterator[Finding]:
        return iter(self._all())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, KeptFindings):
            return self._all() == other._all()
        return isinstance(other, (tuple, list)) and len(other) == self._n and self._all() == tuple(other)

    def __hash__(self) -> int:
        return hash(self._all())

    def __repr__(self) -> str:
        return f"KeptFindings({self._n} findings)"


@dataclass(frozen=True, slots=True)
class KeptReport:
    """A kept report: ``findings`` (sorted, no claims check's; decoded when first read),
    ``counts`` (findings per severity: ``error``, ``warning``, ``info``), ``relpaths`` (the
    memories in report order), ``claims`` (relpath → its claims about the code, only those with
    any; empty when the claims were not checked), ``rendered`` (the findings' JSON text,
    ``memtui.core.doctor.model.findings_json``)."""

    findings: Sequence[Finding]
    counts: dict[str, int]
    relpaths: list[str]
    claims: dict[str, list[Claim]]
    rendered: bytes | None = None  # ``findings_json(findings)``


@lru_cache(maxsize=1)
def _libraries() -> str:
    from importlib.metadata import PackageNotFoundError, version

    parts = [sys.version]
    for name in _LIBRARIES:
        try:
            parts.append(f"{name}={version(name)}")
        except PackageNotFoundError:
            parts.append(f"{name}=?")
    return ";".join(parts)


def _usage_digest(usage: UsageReport | None) -> str:
    """What the ``unused`` check reads of ``usage``: each session's start time, each memory's
    last use."""
    if usage is None:
        return "none"
    digest = hashlib.sha256()
    digest.update(repr([s.first_time for s in usage.sessions]).encode())
    for use in (*usage.memories, *usage.missing):
        if use.last_used is not None:
            digest.update(f"{use.relpath}\0{use.last_used!r}\n".encode("utf-8", "surrogateescape"))
    return digest.hexdigest()


def report_fingerprint(
    memory_dir: Path,
    *,
    fmt: MemoryFormat,
    warning_style: IndexWarning,
    threshold: float,
    haystacks: Sequence[str],
    claims: bool,
    usage: UsageReport | None,
) -> str | None:
    """The fingerprint a kept report of ``memory_dir`` is stored under (see the module
    docstring); ``None`` when the dir cannot have one now. ``haystacks``: the normalised
    instruction texts; ``claims``: whether the claims about the code are checked."""
    listing = dir_digest(memory_dir)
    if listing is None:
        return None
    digest = hashlib.sha256()
    zone = f"{os.environ.get('TZ')}:{time.tzname}"  # dates are read in UTC; the zone is kept in case a library reads it
    for part in (listing, catalogdb.core_fingerprint(), _libraries(), zone, repr(fmt), repr(warning_style), repr(threshold), repr(claims), _usage_digest(usage)):
        digest.update(part.encode("utf-8", "surrogateescape") + b"\0")
    for hay in haystacks:
        digest.update(hay.encode("utf-8", "surrogatepass") + b"\1")
    return digest.hexdigest()


def kept_report(db: CatalogDB, fingerprint: str) -> KeptReport | None:
    """The report kept under ``fingerprint``, else ``None`` (also for one of the wrong shape,
    or whose findings are not the bytes their digest names)."""
    blob = db.result(REPORT_KIND, fingerprint)
    columns = db.result(FINDINGS_KIND, fingerprint)
    if blob is None or columns is None:
        return None
    try:
        counts, n, digest, relpaths, claims, size = orjson.loads(blob)
        if not (
            isinstance(counts, list) and len(counts) == 3 and set(map(type, counts)) <= {int} and min(counts) >= 0
            and type(n) is int and n == sum(counts) and isinstance(digest, str)
            and isinstance(relpaths, list) and set(map(type, relpaths)) <= {str} and isinstance(claims, dict)
        ):
            return None
        if hashlib.sha256(columns).hexdigest() != digest:
            return None  # not the findings this report was kept with
        claims_of = {rel: claims_from_json(value) for rel, value in claims.items()}
    except (orjson.JSONDecodeError, TypeError, ValueError, IndexError):
        return None
    rendered: bytes | None = None
    if (packed := db.result(RENDERED_KIND, fingerprint)) is not None:
        try:
            # (zlib checks the text it gives against its checksum); one buffer of the known size
            rendered = zlib.decompress(packed, bufsize=size if type(size) is int and 0 < size < 1 << 32 else zlib.DEF_BUF_SIZE)
        except zlib.error:
            rendered = None
        if rendered is not None and len(rendered) != size:
            rendered = None  # not the text these findings were written as
    return KeptReport(KeptFindings(columns, n), dict(zip(("error", "warning", "info"), counts, strict=True)), relpaths, claims_of, rendered)


def keep_report(
    db: CatalogDB, fingerprint: str, findings: list[Finding], relpaths: list[str], claims: Mapping[str, Sequence[Claim]]
) -> bytes | None:
    """Keep ``findings`` (sorted, none of the claims check's), the memories' ``relpaths`` and
    their ``claims`` under ``fingerprint``, with the findings' JSON text (compressed: 83 MB of
    text for 228,000 findings is 3.5 MB); nothing when a value would not come back the same
    from JSON. Three values: the findings as columns (``FINDINGS_KIND``, each message once),
    the header (``REPORT_KIND``: counts per severity, the number of findings, the columns'
    SHA-256, relpaths, claims, the text's length) and the text (``RENDERED_KIND``). Returns
    that text (``findings_json(findings)``), ``None`` when nothing was kept. Never raises."""
    columns = [list(map(attrgetter(name), findings)) for name in ("code", "severity", "path", "line", "message", "fix", "data")]
    datas = columns[6]
    if not set(map(type, datas)) <= {dict}:
        datas[:] = [dict(d) for d in datas]
    numbers: dict[str, int] = {}  # each text once: many findings of a code say the same
    columns[4] = [numbers.setdefault(m, len(numbers)) for m in columns[4]]
    kept_claims = {rel: claims_to_json(c) for rel, c in claims.items() if c}
    counts = {"error": 0, "warning": 0, "info": 0}
    for severity in columns[1]:
        counts[severity] += 1
    try:
        # orjson refuses a lone surrogate, an int past 64 bits, a key that is not a string;
        # what it would change (a tuple, a float that is not finite) fails the round trip
        if orjson.loads(orjson.dumps(datas)) != datas or orjson.loads(orjson.dumps(kept_claims)) != kept_claims:
            return None
        rendered = findings_json(findings)
        kept = orjson.dumps([list(numbers), columns])
        del columns, datas
        blob = orjson.dumps([[counts["error"], counts["warning"], counts["info"]], len(findings), hashlib.sha256(kept).hexdigest(),
                             relpaths, kept_claims, len(rendered)])
    except TypeError:  # orjson.JSONEncodeError
        return None
    db.put_result(RENDERED_KIND, fingerprint, zlib.compress(rendered, 1))
    db.put_result(FINDINGS_KIND, fingerprint, kept)
    db.put_result(REPORT_KIND, fingerprint, blob)
    return rendered
