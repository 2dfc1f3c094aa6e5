"""The auto-dream's organization gate (Claude Code 2.1.332, SPEC §13.1): the search of the
project's transcripts for lines that mark a session's sign-in to a hybrid organization, and
what the CLI does with the marks it finds.

**The CLI's search** (read from its bundle): after the lock is taken it runs its bundled ripgrep,
``rg --no-config --no-ignore --hidden --text --no-filename --no-line-number --fixed-strings
--glob '*.jsonl*' --regexp '"type":"hybrid-organization"' <transcripts dir>``, killed after
60 s. :func:`search_marks` gives the same answer in Python, checked against that ripgrep:

- every **regular** file under the dir, at any depth, whose **name** matches the glob
  (``fnmatch`` on the name, case-sensitive: ``a.jsonl``, ``a.jsonl.bak``, ``a.jsonl.1``,
  ``.jsonl``; not ``A.JSONL``), hidden files and dirs included, no ignore file read. Symbolic
  links are not followed and FIFOs, sockets and devices are skipped (ripgrep searches only what
  its walk reports as a file); the dir itself is followed when it is a link;
- bytes as text, the needle byte for byte (``"type": "hybrid-organization"``, with a space, does
  not match), line by line (``\\n`` ends a line). ripgrep strips a UTF-8 byte-order mark and
  reads a file that opens with a UTF-16 one as UTF-16; so does this search;
- any error fails the whole search (ripgrep's exit code 2): the dir unreadable, a subdir or a
  matching file that cannot be read. A dir that does not exist yet has nothing to search: by
  the time the CLI searches, the session that ends its turn has written its transcript there. A search over the time limit fails too (the
  CLI's limit is 60 s; memtui's own search stops at its ``limit_s``), and so does a line over
  ``MAX_MARK_LINE`` bytes, or nested deeper than Python's JSON parser goes, that holds the
  needle (memtui cannot tell whether it is a mark; ``failed_by`` says ``memtui``).

The search is linear in the bytes searched (each read once, in ``CHUNK``s; at most one line
kept) and a file whose ``lstat`` has not changed since an earlier search in the process is not
read again (``benchmarks/org_search_bench.py``).

**A mark** (the CLI's ``uOt``/``iZ``): a matching line that also holds ``"organizationUuid":``
and parses as JSON (as ``JSON.parse``: no ``NaN``/``Infinity``) to an object whose ``type`` is
``hybrid-organization`` and whose ``organizationUuid`` is a string matching
``^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`` case-insensitively (the
bundle's UUID test), taken lowercased. Other matching lines are ignored (:class:`NotAMark`
says why).

**The verdict** (its ``J_e``/``O3``): no mark → the gate is open. Marks of one organization
that is the session's own and only hybrid sign-in → open. Marks of several organizations
(``mixed``) → closed for every session. One organization the session is not signed in to →
closed. memtui cannot see a session's sign-in, so any mark closes it: the reason is
``skip_other`` (``other_hybrid_organization``); a failed search closes it with ``skip_failed``
(``hybrid_organization_check_failed``).
"""

from __future__ import annotations

import codecs
import fnmatch
import json
import os
import re
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from memtui.core.base.safe_read import NotRegularFileError, open_regular
from memtui.core.places.release import OrganizationGate

# The bundle's UUID test (``/^[0-9a-f]{8}-…-[0-9a-f]{12}$/i``; its ``$`` is the end of the
# string, so a value with a trailing newline is no UUID: ``fullmatch`` here).
UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", re.IGNORECASE | re.ASCII)
# The bytes read at a time (memtui's choice).
CHUNK = 1 << 20
# The longest line holding the needle that memtui parses, in bytes (memtui's choice: a mark
# line the CLI writes is ~130 bytes); a longer one fails the search.
MAX_MARK_LINE = 16 << 20
# At most this many marks and ignored lines are kept for display (the organizations are all
# kept; memtui's choice).
MAX_LISTED = 50

# ``parse_mark``'s answer for a line nested deeper than Python's parser goes (``JSON.parse``
# goes deeper): memtui cannot tell whether it is a mark, and the search fails.
TOO_DEEP = "nested too deeply for memtui to parse"

SearchState = Literal["none", "marks", "failed"]


@dataclass(frozen=True, slots=True)
class Mark:
    """A mark line: ``path`` (absolute), ``line`` (1-based, counted as ripgrep counts lines),
    ``organization`` (the UUID lowercased) and ``raw`` (the ``organizationUuid`` as written)."""

    path: Path
    line: int
    organization: str
    raw: str


@dataclass(frozen=True, slots=True)
class NotAMark:
    """A line that holds the needle but is no mark: ``path``, ``line`` and ``why`` (a plain
    phrase: ``not JSON``, ``organizationUuid is not a UUID``…)."""

    path: Path
    line: int
    why: str


@dataclass(frozen=True, slots=True)
class OrgSearch:
    """What the search found under ``root``: ``marks`` (at most ``MAX_LISTED``, in walk order:
    names sorted), ``marks_total``, ``organizations`` (every organization marked, lowercased, in
    the order first found), ``ignored`` (lines with the needle that are no mark, at most
    ``MAX_LISTED``), ``files`` (files searched), ``size`` (their bytes), ``failure`` (why the
    search failed, ``None`` when it finished) and ``failed_by`` (``"rg"``: the CLI's ripgrep
    fails the same way; ``"memtui"``: memtui's own limit, see the module docstring),
    ``missing``: there is no transcripts dir yet — nothing to search (the CLI's ripgrep would
    fail on it, but a session ending a turn has written its transcript there, so the CLI finds
    the dir)."""

    root: Path
    marks: tuple[Mark, ...] = ()
    marks_total: int = 0
    organizations: tuple[str, ...] = ()
    ignored: tuple[NotAMark, ...] = ()
    files: int = 0
    size: int = 0
    failure: str | None = None
    failed_by: Literal["rg", "memtui"] | None = None
    missing: bool = False

    @property
    def state(self) -> SearchState:
        """``failed`` (the search did not finish), ``marks`` (a mark was found), ``none``."""
        return "failed" if self.failure is not None else "marks" if self.organizations else "none"

    @property
    def mixed(self) -> bool:
        """Marks of more than one organization (the CLI's ``mixed``: no session may dream)."""
        return len(self.organizations) > 1

    def reason(self, gate: OrganizationGate) -> str | None:
        """The CLI's skip reason as memtui sees it (no session's sign-in known):
        ``gate.skip_failed`` after a failed search, ``gate.skip_other`` for any mark, ``None``
        when the gate is open."""
        return gate.skip_failed if self.state == "failed" else gate.skip_other if self.state == "marks" else None

    def marks_of(self, organization: str) -> tuple[Mark, ...]:
        """The listed marks of ``organization``."""
        return tuple(m for m in self.marks if m.organization == organization)


class _Failed(Exception):
    def __init__(self, why: str, by: Literal["rg", "memtui"]) -> None:
        super().__init__(why)
        self.why = why
        self.by = by


def parse_mark(line: bytes, gate: OrganizationGate) -> tuple[str, str] | str:
    """A line holding ``gate.needle`` read as the CLI reads it: ``(organization lowercased, as
    written)`` when it is a mark, else why not (a plain phrase). ``line`` has no final ``\\n``;
    a final ``\\r`` is dropped and invalid UTF-8 becomes U+FFFD, as the CLI decodes ripgrep's
    output. ``TOO_DEEP`` when Python's parser cannot go as deep as the line is nested. Never
    raises."""
    text = line.decode("utf-8", errors="replace")
    if text.endswith("\r"):
        text = text[:-1]
    key = f'"{gate.organization_key}":'
    if key not in text:
        return f"no {key} in the line"
    try:
        obj = _DECODER.decode(text)
    except ValueError:
        return "not JSON"
    except RecursionError:
        return TOO_DEEP
    if not isinstance(obj, dict) or obj.get("type") != gate.mark_type:
        return f"not a JSON object of type {gate.mark_type}"
    value = obj.get(gate.organization_key)
    if not isinstance(value, str):
        return f"{gate.organization_key} is not a string"
    if not UUID.fullmatch(value):
        return f"{gate.organization_key} is not a UUID"
    return value.lower(), value


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")  # JSON.parse refuses NaN and Infinity


_DECODER = json.JSONDecoder(parse_constant=_no_constant)


def _chunks(f: Any, check: Callable[[], None]) -> Iterator[bytes]:
    """The file's bytes as ripgrep searches them: a UTF-8 byte-order mark dropped, a file opening
    with a UTF-16 one transcoded to UTF-8 (bad code units as U+FFFD). ``check`` runs per chunk."""
    first = f.read(CHUNK)
    decoder = None
    if first.startswith(codecs.BOM_UTF8):
        first = first[3:]
    elif first.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        decoder = codecs.getincrementaldecoder("utf-16-le" if first.startswith(codecs.BOM_UTF16_LE) else "utf-16-be")(errors="replace")
        first = decoder.decode(first[2:]).encode("utf-8", errors="surrogatepass")
    chunk = first
    while True:
        check()
        if chunk:
            yield chunk
        raw = f.read(CHUNK)
        if not raw:
            if decoder is not None:
                tail = decoder.decode(b"", final=True).encode("utf-8", errors="surrogatepass")
                if tail:
                    yield tail
            return
        chunk = raw if decoder is None else decoder.decode(raw).encode("utf-8", errors="surrogatepass")


@dataclass(frozen=True, slots=True)
class _FileScan:
    """One file's finds: ``marks`` as ``(line, organization, raw)`` and ``ignored`` as ``(line,
    why)`` (at most ``MAX_LISTED`` each), ``marks_total``, ``organizations`` (first found first),
    ``size`` (bytes searched)."""

    marks: tuple[tuple[int, str, str], ...] = ()
    marks_total: int = 0
    organizations: tuple[str, ...] = ()
    ignored: tuple[tuple[int, str], ...] = ()
    size: int = 0


class _FileFinds:
    def __init__(self, path: Path, gate: OrganizationGate) -> None:
        self.path = path
        self.gate = gate
        self.marks: list[tuple[int, str, str]] = []
        self.total = 0
        self.orgs: dict[str, None] = {}
        self.ignored: list[tuple[int, str]] = []

    def line(self, number: int, line: bytes) -> None:
        found = _parse_memo(line, self.gate)
        if found == TOO_DEEP:
            raise _Failed(f"line {number} of {self.path} holds the needle and is {TOO_DEEP}", "memtui")
        if isinstance(found, str):
            if len(self.ignored) < MAX_LISTED:
                self.ignored.append((number, found))
            return
        org, raw = found
        self.total += 1
        self.orgs.setdefault(org, None)
        if len(self.marks) < MAX_LISTED:
            self.marks.append((number, org, raw))

    def done(self, size: int) -> _FileScan:
        return _FileScan(tuple(self.marks), self.total, tuple(self.orgs), tuple(self.ignored), size)


# The answers for the last short lines parsed (a file may repeat one line many times).
_MEMO: dict[tuple[bytes, OrganizationGate], tuple[str, str] | str] = {}
_MEMO_LINE = 1024
_MEMO_MAX = 256


def _parse_memo(line: bytes, gate: OrganizationGate) -> tuple[str, str] | str:
    """:func:`parse_mark`, remembered for lines of at most ``_MEMO_LINE`` bytes."""
    if len(line) > _MEMO_LINE:
        return parse_mark(line, gate)
    key = (line, gate)
    found = _MEMO.get(key)
    if found is None:
        found = parse_mark(line, gate)
        if len(_MEMO) >= _MEMO_MAX:
            _MEMO.clear()
        _MEMO[key] = found
    return found


def _too_long(path: Path, number: int) -> _Failed:
    return _Failed(f"line {number} of {path} holds the needle and is over {MAX_MARK_LINE:,} bytes long: memtui does not parse it", "memtui")


def _scan_file(path: Path, needle: bytes, gate: OrganizationGate, check: Callable[[], None]) -> tuple[_FileScan, os.stat_result]:
    """Every line of ``path`` holding ``needle``, and the file's ``stat`` when opened. Reads each
    byte once and holds at most one chunk and one line of ≤ ``MAX_MARK_LINE`` bytes. Raises
    ``OSError`` (``NotRegularFileError`` for a FIFO or a device), ``_Failed``."""
    out = _FileFinds(path, gate)
    n = len(needle)
    size = 0
    lineno = 1  # the number of the line ``partial`` belongs to
    partial = bytearray()  # the current line so far; once over the cap, only its last n-1 bytes
    overflow = False  # the current line is over MAX_MARK_LINE
    hit = False  # the current line holds the needle
    f, st = open_regular(path)
    with f:
        for chunk in _chunks(f, check):
            size += len(chunk)
            first = chunk.find(b"\n")
            head = chunk if first < 0 else chunk[:first]
            if not hit:
                seam = bytes(partial[-(n - 1):]) + head[: n - 1] if partial and n > 1 else b""
                hit = needle in seam or needle in head
            partial += head
            if len(partial) > MAX_MARK_LINE:
                overflow = True
            if overflow:
                if hit:
                    raise _too_long(path, lineno)
                del partial[: len(partial) - (n - 1)]
            if first < 0:
                continue
            if hit:
                out.line(lineno, bytes(partial))
            lineno += 1
            last = chunk.rfind(b"\n")
            if last > first:  # the complete lines between the first newline and the last
                body = chunk[first + 1 : last + 1]
                counted = 0  # the newlines of body[:counted] are in lineno
                at = body.find(needle)
                while at >= 0:
                    start = body.rfind(b"\n", 0, at) + 1
                    end = body.find(b"\n", at)
                    lineno += body.count(b"\n", counted, start)
                    counted = start
                    out.line(lineno, body[start:end])
                    at = body.find(needle, end + 1)
                lineno += body.count(b"\n", counted)
            partial = bytearray(chunk[last + 1 :])
            overflow = False
            hit = needle in partial
        if hit:
            out.line(lineno, bytes(partial))
    return out.done(size), st


# path -> (dev, ino, size, mtime_ns, needle, what the file held): a file whose ``lstat`` is
# unchanged is not read again (memtui's cache; at most _CACHE_MAX files, the oldest dropped).
_CACHE: dict[str, tuple[tuple[int, int, int, int, bytes], _FileScan]] = {}
_CACHE_MAX = 20_000
_CACHE_LOCK = threading.Lock()


def _key(st: os.stat_result, needle: bytes) -> tuple[int, int, int, int, bytes]:
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, needle)


def _scan_cached(path: Path, listed: os.stat_result | None, needle: bytes, gate: OrganizationGate, check: Callable[[], None]) -> _FileScan:
    """:func:`_scan_file`, or what it found last time when the file's ``lstat`` (``listed``, from
    the walk) is the same as then."""
    name = str(path)
    if listed is not None:
        with _CACHE_LOCK:
            hit = _CACHE.get(name)
        if hit is not None and hit[0] == _key(listed, needle):
            return hit[1]
    found, st = _scan_file(path, needle, gate, check)
    with _CACHE_LOCK:
        _CACHE.pop(name, None)
        if len(_CACHE) >= _CACHE_MAX:
            _CACHE.pop(next(iter(_CACHE)))
        _CACHE[name] = (_key(st, needle), found)
    return found


def _walk(root: Path, gate: OrganizationGate, check: Callable[[], None]) -> Iterator[tuple[Path, os.stat_result | None]]:
    """The files ripgrep's walk would search under ``root`` (see the module docstring), each
    dir's names sorted, each with its ``lstat`` (``None`` when it could not be taken). Raises
    ``_Failed`` where ripgrep reports an error."""
    stack = [root]
    while stack:
        check()
        here = stack.pop()
        try:
            with os.scandir(here) as it:
                entries = sorted(it, key=lambda e: e.name)
        except FileNotFoundError:
            raise _Failed(f"{here}: no such directory", "rg") from None
        except OSError as exc:
            raise _Failed(f"{here}: {exc.strerror or exc}", "rg") from None
        dirs: list[Path] = []
        for entry in entries:
            try:
                if entry.is_dir(follow_symlinks=False):
                    dirs.append(Path(entry.path))
                elif entry.is_file(follow_symlinks=False) and fnmatch.fnmatchcase(entry.name, gate.glob):
                    try:
                        st: os.stat_result | None = entry.stat(follow_symlinks=False)
                    except OSError:
                        st = None
                    yield Path(entry.path), st
            except OSError:
                continue  # the entry vanished: ripgrep's walk skips it too
        stack.extend(reversed(dirs))


def search_marks(root: Path, gate: OrganizationGate, *, limit_s: float | None = None, clock: Callable[[], float] = time.monotonic) -> OrgSearch:
    """Search ``root`` (the project's transcripts dir) as the CLI's ripgrep does (see the module
    docstring), stopping with a failure after ``limit_s`` seconds of ``clock`` (default
    ``gate.timeout_s``, the CLI's 60 s). A file unchanged since an earlier search in this
    process (same ``lstat``: device, inode, size, mtime) is not read again. Reads only; never
    raises."""
    budget = gate.timeout_s if limit_s is None else limit_s
    deadline = clock() + budget

    def check() -> None:
        if clock() > deadline:
            raise _Failed(f"the search took over {budget:g} s", "memtui")

    needle = gate.needle.encode("utf-8")
    marks: list[Mark] = []
    ignored: list[NotAMark] = []
    orgs: dict[str, None] = {}
    total = files = size = 0
    failure: _Failed | None = None
    if not root.exists():
        return OrgSearch(root, missing=True)
    try:
        if not root.is_dir():
            raise _Failed(f"{root}: not a directory", "rg")
        for path, listed in _walk(root, gate, check):
            try:
                found = _scan_cached(path, listed, needle, gate, check)
            except (FileNotFoundError, NotRegularFileError):
                continue  # gone, or replaced by a FIFO or a device, since the walk listed it
            except OSError as exc:
                raise _Failed(f"{path}: {exc.strerror or exc}", "rg") from None
            files += 1
            size += found.size
            total += found.marks_total
            orgs.update(dict.fromkeys(found.organizations))
            marks.extend(Mark(path, line, org, raw) for line, org, raw in found.marks[: MAX_LISTED - len(marks)])
            ignored.extend(NotAMark(path, line, why) for line, why in found.ignored[: MAX_LISTED - len(ignored)])
    except _Failed as exc:
        failure = exc
    return OrgSearch(root, tuple(marks), total, tuple(orgs), tuple(ignored), files, size,
                     None if failure is None else failure.why, None if failure is None else failure.by)


def search_to_json(search: OrgSearch) -> dict[str, Any]:
    """``{state, organizations, marks: [{path, line, organization}], marks_total, ignored:
    [{path, line, why}], files_searched, missing, failure, failed_by}``."""
    return {
        "state": search.state,
        "organizations": list(search.organizations),
        "marks": [{"path": str(m.path), "line": m.line, "organization": m.organization} for m in search.marks],
        "marks_total": search.marks_total,
        "ignored": [{"path": str(i.path), "line": i.line, "why": i.why} for i in search.ignored],
        "files_searched": search.files,
        "failure": search.failure,
        "failed_by": search.failed_by,
    }
