"""Loading one file and its imports, and one rules directory (the reference's
``processMemoryFile`` / ``processMdRules``), recording every decision.

One ``processed`` set of paths (normalised, plus the realpath of a symlink) is shared by a
whole load: the first occurrence of a file wins and later ones are dropped. Depth: the root
file is 0 and a file at depth 5 is never read (four import hops load, the fifth does not).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memtui.core.base.diagnostics import Diagnostic, Severity
from memtui.core.places.flavor import Flavor
from memtui.core.memory.frontmatter import Frontmatter
from memtui.core.places.locations import Locations
from memtui.core.base.units import estimate_tokens, utf16_len as _utf16_len

from .excludes import EXCLUDABLE_LAYERS, ExcludeMatcher
from .imports import ImportRef, did_you_mean, expand_path, extract_import_refs, is_inside, spaced_name
from .model import CascadeFile, ExternalApproval, Kind, Layer, PendingImport, Status
from .preprocess import MAX_FILE_CHARS, ParsedFile, has_binary_extension, js_trim, preprocess, read_text
from .rules import RulePaths, brace_split, flow_list_braces, ignored_path_keys, list_rule_files, rule_paths, suggested_paths

# The reference's MAX_INCLUDE_DEPTH: a file at this depth is not processed.
MAX_INCLUDE_DEPTH = 5


@dataclass(slots=True)
class RealpathCache:
    """``os.path.realpath`` with the directories' realpaths remembered for one load.

    A deep tree makes every ``realpath`` ``lstat`` each component; within one load the
    directories do not change, so only the last component needs checking.
    """

    dirs: dict[str, str] = field(default_factory=dict)

    def __call__(self, path: str) -> str:
        head, tail = os.path.split(path)
        if tail in ("", ".", "..") or not head:
            return os.path.realpath(path)
        real_head = self.dirs.get(head)
        if real_head is None:
            real_head = self.dirs[head] = os.path.realpath(head)
        candidate = os.path.join(real_head, tail)
        return os.path.realpath(candidate) if os.path.islink(candidate) else candidate


@dataclass(slots=True)
class LoadEnv:
    """What every load of one cascade shares: names, the (real) cwd external imports are
    judged against, the home ``~/`` expands to, the excludes and the approval."""

    flavor: Flavor
    cwd: Path
    home: Path
    managed_dir: Path
    user_base_dir: Path
    excludes: ExcludeMatcher
    approval: ExternalApproval
    # Preprocessed files keyed on (path, mtime_ns, size): startup and every later simulated
    # read of one cascade share them, and a file changed on disk is parsed again.
    parse_cache: dict[tuple[str, int, int], ParsedFile] = field(default_factory=dict)
    paths_cache: dict[int, RulePaths] = field(default_factory=dict)  # id(ParsedFile) -> its paths


@dataclass(frozen=True, slots=True)
class CascadeContext:
    """What a computed cascade keeps so reads can be simulated later (``simulate_read``):
    ``agents``: the AGENTS.md support's session state (``None`` without it)."""

    locations: Locations
    env: LoadEnv
    environ: Mapping[str, str]
    agents: Any = None


@dataclass(slots=True)
class _Origin:
    """How a file was reached: from a layer's fixed location, or imported by ``parent``."""

    parent: CascadeFile | None = None
    ref: ImportRef | None = None
    chain: tuple[str, ...] = ()


@dataclass(slots=True)
class Loader:
    """One load (startup, or one lazy read). ``lazy``: a nested load, which never follows
    external imports. Findings not tied to one file go to ``diagnostics``."""

    env: LoadEnv
    processed: set[str]
    lazy: bool = False
    pending: list[PendingImport] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    rules_seen: int = 0
    realpath: RealpathCache = field(default_factory=RealpathCache)

    # ---------------------------------------------------------------- one file + imports
    def process_file(
        self,
        path: Path,
        layer: Layer,
        kind: Kind,
        include_external: bool,
        *,
        in_rules: bool = False,
        depth: int = 0,
        origin: _Origin | None = None,
    ) -> list[CascadeFile]:
        """``path`` and, depth-first after it, its imports: every entry loaded or skipped.

        A missing root file (an ``AGENT.md`` that is not there) yields ``[]``; a missing
        import yields a ``missing`` entry and a diagnostic on the importer.
        """
        origin = origin or _Origin()
        norm = os.path.normpath(path)
        imported = origin.parent is not None
        exists = os.path.lexists(norm)
        if norm in self.processed:
            if not imported and not exists:
                return []
            cyc = norm in origin.chain
            status: Status = "cycle" if cyc else "duplicate"
            reason = (
                "imports one of its own importers (an import cycle); the agent stops here"
                if cyc
                else "already loaded earlier in this load; the agent keeps the first occurrence only"
            )
            entry = self._skipped(norm, layer, kind, depth, origin, status, reason)
            self._note_on_importer(origin, "import-cycle" if cyc else "import-duplicate", "info", f"`@{_raw(origin)}`: {reason}")
            if not imported:
                entry.diagnostics.append(Diagnostic("file-duplicate", "info", f"{norm} is also reached as a {layer} file; {reason}", norm))
            return [entry]
        if depth >= MAX_INCLUDE_DEPTH:
            reason = f"import depth limit: files {MAX_INCLUDE_DEPTH} hops from a root file are not loaded"
            self._note_on_importer(origin, "import-depth-limit", "warning", f"`@{_raw(origin)}` is not loaded: {reason}")
            return [self._skipped(norm, layer, kind, depth, origin, "depth-limit", reason)]
        if layer in EXCLUDABLE_LAYERS:
            pattern = self.env.excludes.match(norm)
            if pattern is not None:
                if not exists and not imported:
                    return []
                reason = f"excluded by `{self.env.flavor.excludes_key}` pattern {pattern!r}; its imports are not followed"
                entry = self._skipped(norm, layer, kind, depth, origin, "excluded", reason)
                entry.diagnostics.append(Diagnostic("file-excluded", "info", reason, norm))
                return [entry]
        resolved = self.realpath(norm)
        self.processed.add(norm)
        if resolved != norm:
            self.processed.add(resolved)
        try:
            stat = os.stat(norm)
            if has_binary_extension(norm):
                reason = "binary file extension: the agent never loads it"
                self._note_on_importer(origin, "import-binary", "warning", f"`@{_raw(origin)}` is skipped: {reason}")
                return [self._skipped(norm, layer, kind, depth, origin, "binary", reason)]
            key = (norm, stat.st_mtime_ns, stat.st_size)
            parsed = self.env.parse_cache.get(key)
            if parsed is None:
                release = self.env.flavor.behaviour
                parsed = self.env.parse_cache[key] = preprocess(
                    read_text(Path(norm)),
                    norm,
                    want_imports=True,
                    strip_bom=release.memory_format.strip_bom,
                    markdown=release.instructions.markdown,
                    keeps_link_definitions=release.instructions.keeps_link_definitions,
                )
        except FileNotFoundError:
            if not imported:
                return []
            return [self._missing(norm, layer, kind, depth, origin)]
        except OSError as exc:
            if not imported and not exists:
                return []
            why = "is a directory" if isinstance(exc, IsADirectoryError) else (exc.strerror or str(exc))
            reason = f"cannot be read: {why}"
            entry = self._skipped(norm, layer, kind, depth, origin, "unreadable", reason)
            if imported:  # one finding, on the line of the `@` (the entry's reason says it too)
                self._note_on_importer(origin, "import-unreadable", "warning", f"`@{_raw(origin)}` {reason}")
            else:
                entry.diagnostics.append(Diagnostic("file-unreadable", "warning", reason, norm))
            return [entry]
        content = js_trim(parsed.content)
        entry = self._skipped(norm, layer, kind, depth, origin, "loaded", "")
        entry.diagnostics.extend(parsed.diagnostics)
        if not content:
            entry.status = "empty"
            entry.reason = "whitespace only: dropped, and its imports are not followed"
            entry.diagnostics.append(Diagnostic("file-empty", "info", f"{entry.reason}", norm))
            return [entry]
        entry.loaded = True
        entry.content = content
        entry.body = parsed.content
        entry.chars = utf16_len(content)
        entry.tokens_est = estimate_tokens(content)
        entry.reason = _imported_reason(origin) if imported else ""
        self._frontmatter_findings(entry, parsed, in_rules)
        size = utf16_len(parsed.content)
        if size > MAX_FILE_CHARS:
            entry.diagnostics.append(
                Diagnostic(
                    "file-too-large",
                    "warning",
                    f"{size:,} characters (over the agent's {MAX_FILE_CHARS:,}-character advisory); "
                    f"about {estimate_tokens(content):,} tokens of every request",
                    norm,
                )
            )
        result = [entry]
        if parsed.tokens is None:
            return result
        base_dir = Path(os.path.dirname(resolved))
        chain = (*origin.chain, norm, resolved)
        seen: set[str] = set()
        list_text_raw = self.env.flavor.behaviour.instructions.markdown == "claude-code"
        for ref in extract_import_refs(parsed.tokens, parsed.body_line, list_text_raw=list_text_raw):
            target = expand_path(ref.path, base_dir, self.env.home)
            if ref.fragment:
                entry.diagnostics.append(
                    Diagnostic(
                        "import-fragment-ignored",
                        "info",
                        f"`@{ref.raw}`: the fragment `{ref.fragment}` is ignored; the whole of {ref.path} is imported",
                        norm,
                        ref.line,
                    )
                )
            if str(target) in seen:
                entry.diagnostics.append(
                    Diagnostic("import-repeated", "info", f"`@{ref.raw}` is imported earlier in this file; the repeat does nothing", norm, ref.line)
                )
                continue
            seen.add(str(target))
            sub_origin = _Origin(entry, ref, chain)
            # Claude Code 2.1.332 (oracle): an import is external when its path or the real path
            # it leads to is outside the working directory — a link out of the project waits for
            # approval like any external import, and a path out that links back in does too.
            real_target = self.realpath(str(target))
            if not include_external and not (is_inside(target, self.env.cwd) and is_inside(real_target, self.env.cwd)):
                result.append(self._external(target, layer, depth + 1, sub_origin, real_target))
                continue
            result.extend(
                self.process_file(target, layer, "import", include_external, in_rules=in_rules, depth=depth + 1, origin=sub_origin)
            )
        return result

    # ---------------------------------------------------------------- a rules dir
    def process_rules(self, rules_dir: Path, layer: Layer, include_external: bool, *, conditional_rule: bool) -> list[CascadeFile]:
        """Every rule file below ``rules_dir`` (in the release's ``rule_order``), filtered like the reference: with
        ``conditional_rule`` false the conditional rules are kept as skipped entries while
        their imports load (the reference's quirk); with it true only conditional rules are
        returned (their imports do not load)."""
        listing = list_rule_files(rules_dir, self.env.flavor.behaviour.instructions.rule_order)
        self.diagnostics.extend(listing.diagnostics)
        out: list[CascadeFile] = []
        for rule_path in listing.files:
            self.rules_seen += 1
            entries = self.process_file(rule_path, layer, "rule", include_external, in_rules=True)
            if conditional_rule:
                out.extend(e for e in entries if e.loaded and e.conditional)
                continue
            waiting: CascadeFile | None = None
            for e in entries:
                if e.loaded and e.conditional:
                    e.loaded = False
                    e.status = "conditional"
                    e.reason = "conditional rule: loads when the agent reads a file matching " + ", ".join(f"`{p}`" for p in e.patterns)
                    if waiting is None:
                        waiting = e
                elif e.loaded and waiting is not None and e.depth > 0:
                    # a nested folder's rules load on a read under that folder, not at startup
                    when = "with the folder's other files on that read" if self.lazy else "at startup"
                    e.reason += f" — loaded {when} although its conditional rule {waiting.path} waits (the agent's quirk)"
                    waiting.diagnostics.append(
                        Diagnostic(
                            "conditional-rule-imports-eager",
                            "info",
                            f"this rule is conditional, yet its import {e.path} loads {when}" + ("" if self.lazy else " for every session"),
                            waiting.path,
                            e.line,
                        )
                    )
                elif e.loaded and e.depth == 0 and not e.reason:
                    e.reason = _unconditional_reason(e)
            out.extend(entries)
        return out

    # ---------------------------------------------------------------- helpers
    def _skipped(self, path: str, layer: Layer, kind: Kind, depth: int, origin: _Origin, status: Status, reason: str) -> CascadeFile:
        parent = origin.parent.path if origin.parent else None
        line = origin.ref.line if origin.ref else None
        return CascadeFile(path, layer, kind, parent, depth, False, status, reason, line=line)

    def _note_on_importer(self, origin: _Origin, code: str, severity: Severity, message: str) -> None:
        if origin.parent is None or origin.ref is None:
            return
        origin.parent.diagnostics.append(Diagnostic(code, severity, message, origin.parent.path, origin.ref.line))

    def _missing(self, path: str, layer: Layer, kind: Kind, depth: int, origin: _Origin) -> CascadeFile:
        assert origin.parent is not None and origin.ref is not None
        base_dir = Path(os.path.dirname(self.realpath(origin.parent.path)))
        hint = did_you_mean(origin.ref, base_dir, self.env.home)
        spaced = spaced_name(origin.ref, base_dir, self.env.home) if hint is None else None
        if hint is not None:
            meant = origin.ref.path.rstrip(".,:;!?)]}'\"`>*_")
            reason = f"{path} does not exist: the trailing punctuation is part of the path for the agent — did you mean `{meant}`?"
            code = "import-trailing-punctuation"
        elif spaced is not None:
            rest = spaced.name[len(os.path.basename(path)) + 1 :].replace(" ", "\\ ")
            meant = f"@{origin.ref.raw}\\ {rest}"
            reason = f"{path} does not exist: a space ends an import path, and {spaced} is there — to import it, write `{meant}`"
            code = "import-unescaped-space"
        else:
            reason = f"{path} does not exist; the agent skips it silently"
            code = "import-missing"
        looks = not_an_import(origin.ref.raw) if hint is None and spaced is None else None
        if looks is not None:
            reason = f"{path} does not exist; `@{origin.ref.raw}` looks like {looks}, probably not meant as an import — the agent still tries to import it (write it in backticks to stop that)"
            self._note_on_importer(origin, "import-probably-not-meant", "info", f"`@{origin.ref.raw}`: {reason}")
            return self._skipped(path, layer, kind, depth, origin, "missing", reason)
        self._note_on_importer(origin, code, "warning", f"`@{origin.ref.raw}`: {reason}")
        return self._skipped(path, layer, kind, depth, origin, "missing", reason)

    def _external(self, target: Path, layer: Layer, depth: int, origin: _Origin, real_target: str | None = None) -> CascadeFile:
        assert origin.parent is not None and origin.ref is not None
        where = f"outside the working directory {self.env.cwd}"
        if real_target is not None and is_inside(target, self.env.cwd) and real_target != os.path.normpath(target):
            where = f"{target} is a link to {real_target}, {where}"
        status: Status
        severity: Severity
        if self.lazy:
            status, code, severity = "external-lazy", "import-external-lazy", "info"
            reason = f"external import ({where}) of a lazily loaded file: the agent never follows these"
        elif self.env.approval.decision == "declined":
            status, code, severity = "declined", "import-external-declined", "info"
            reason = f"external import ({where}): this project declined external imports"
        else:
            status, code, severity = "pending-approval", "import-external-pending", "warning"
            reason = f"external import ({where}): skipped until the project approves external imports (`memtui imports approve`)"
            self.pending.append(PendingImport(str(target), origin.parent.path, origin.ref.line, layer))
        self._note_on_importer(origin, code, severity, f"`@{origin.ref.raw}`: {reason}")
        return self._skipped(str(target), layer, "import", depth, origin, status, reason)

    def _frontmatter_findings(self, entry: CascadeFile, parsed: ParsedFile, in_rules: bool) -> None:
        fm: Frontmatter = parsed.frontmatter
        sev: Severity = "warning" if in_rules else "info"
        effect = "so this rule is unconditional (loads everywhere)" if in_rules else "so it is sent to the model as text"
        path = entry.path
        if fm.bom_stripped:
            entry.diagnostics.append(
                Diagnostic("frontmatter-bom-stripped", "info", "a UTF-8 BOM precedes `---`: the agent drops it and reads the frontmatter", path, 1)
            )
        if fm.leading == "bom":
            entry.diagnostics.append(
                Diagnostic("frontmatter-after-bom", sev, f"a UTF-8 BOM precedes `---`: the agent sees no frontmatter, {effect}", path, 1)
            )
        elif fm.leading == "blank":
            entry.diagnostics.append(
                Diagnostic("frontmatter-after-blank-line", sev, f"a blank line precedes `---`: frontmatter must start at byte 0, {effect}", path, 1)
            )
        elif fm.unclosed:
            entry.diagnostics.append(Diagnostic("frontmatter-unclosed", sev, f"`---` at the top is never closed: no frontmatter, {effect}", path, 1))
        if fm.error is not None:
            entry.diagnostics.append(
                Diagnostic(
                    "frontmatter-parse-error",
                    sev,
                    f"frontmatter parse error → treated as unconditional: {fm.error}" if in_rules else f"frontmatter parse error: {fm.error}",
                    path,
                    1,
                )
            )
        elif fm.repaired:
            entry.diagnostics.append(
                Diagnostic("frontmatter-repaired", "info", "invalid YAML, read only after the agent's quoting retry (quote values holding `: `, `*`, `{`…)", path, 1)
            )
        if fm.not_mapping:
            entry.diagnostics.append(Diagnostic("frontmatter-not-mapping", sev, f"frontmatter is not a `key: value` mapping, {effect}", path, 1))
        paths = self.env.paths_cache.get(id(parsed))
        if paths is None:
            paths = self.env.paths_cache[id(parsed)] = rule_paths(fm.data)
        if paths.problem is not None:
            code, sentence = paths.problem
            entry.diagnostics.append(Diagnostic(code, "warning" if in_rules else "info", sentence, path, 1))
        if in_rules:
            for key in ignored_path_keys(fm.data):
                entry.diagnostics.append(
                    Diagnostic(
                        "rule-ignored-key",
                        "warning",
                        f"`{key}:` is not read by the agent (only `paths:` makes a rule conditional), so this rule loads everywhere; to scope it, write {suggested_paths(fm.data[key])!r}",
                        path,
                        _key_line(fm, key),
                    )
                )
            split = brace_split(fm.data.get("paths")) or flow_list_braces(fm.raw, entry.patterns)
            for glob, pieces in split:
                shown = ", ".join(f"`{p}`" for p in pieces)
                entry.diagnostics.append(
                    Diagnostic(
                        "paths-brace-split",
                        "warning",
                        f"the brace glob `{glob}` was cut at its commas by YAML's `[...]` list into {shown}; the agent takes each piece literally, so it matches nothing it was meant to: quote it (`- \"{glob}\"`)",
                        path,
                        _key_line(fm, "paths"),
                    )
                )
        if paths.patterns is None:
            return
        entry.patterns = paths.patterns
        if in_rules:
            entry.conditional = True
        else:
            entry.diagnostics.append(
                Diagnostic("paths-ignored", "info", "`paths:` only makes rules in rules directories conditional; this file always loads", path, 1)
            )


# Findings that explain why a rule that meant to be conditional is not.
_UNCONDITIONAL_CAUSES = (
    "frontmatter-after-bom",
    "frontmatter-after-blank-line",
    "frontmatter-unclosed",
    "frontmatter-parse-error",
    "frontmatter-not-mapping",
    "paths-empty",
    "paths-match-all",
)


def _unconditional_reason(entry: CascadeFile) -> str:
    for diag in entry.diagnostics:
        if diag.code in _UNCONDITIONAL_CAUSES:
            return f"unconditional rule ({diag.code}): {diag.message}"
    return "unconditional rule (no `paths:`)"


def utf16_len(text: str) -> int:
    """UTF-16 length, with the common all-ASCII case answered without a per-character scan."""
    return len(text) if text.isascii() else _utf16_len(text)


def _key_line(fm: Frontmatter, key: str) -> int:
    """The file line of top-level ``key:`` in the frontmatter (1 when not found)."""
    for number, line in enumerate(fm.raw.split("\n"), start=2):
        if line.startswith(f"{key}:"):
            return number
    return 1


_NPM_SCOPE = re.compile(r"^[a-z0-9][a-z0-9._-]*/[a-z0-9][a-z0-9._-]*(?:@[\w.^~-]+)?$")
_DOMAIN = re.compile(r"^[\w-]+(?:\.[\w-]+)*\.(?:com|org|net|io|dev|app|ai|co|me|edu|gov|uk|de|fr|jp|cn|us|ca|au|xyz|tech)$", re.IGNORECASE)
_WORD_TOKEN = re.compile(r"^[A-Za-z][\w-]*$")


def not_an_import(raw: str) -> str | None:
    """What a failed ``@`` token probably is instead of a file, or ``None``: ``@ant-design/icons``
    an npm package, ``@lemedspa.com`` an e-mail domain, ``@refactor`` / ``@alice`` a word or a
    handle (no ``.`` and no ``/``). Trailing punctuation and emphasis are ignored."""
    token = raw.rstrip(".,:;!?)]}'\"`>*_").lstrip("*_")
    if not token:
        return None
    if _NPM_SCOPE.match(token) and "." not in token.rsplit("/", 1)[-1]:
        return "an npm package scope"
    if _DOMAIN.match(token):
        return "an e-mail domain or a web address"
    if _WORD_TOKEN.match(token):
        return "a word or a handle"
    return None


def _raw(origin: _Origin) -> str:
    return origin.ref.raw if origin.ref else ""


def _imported_reason(origin: _Origin) -> str:
    assert origin.parent is not None and origin.ref is not None
    return f"imported by {origin.parent.path} (line {origin.ref.line})"
