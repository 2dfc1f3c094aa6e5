"""What a memory claims about the code: file paths, directories, symbols and commands.

"The memory says X exists" is not "X exists now" (the seed design's rule for memories that
name files and functions). This module only *reads* the claims; ``memtui.core.verify.check``
tests them against the project.

Where claims come from: the description and the body of a memory, outside fenced code blocks.

- **Code spans** (`` `…` ``) are read whole. A span is a *path* when it has a ``/`` or ends in a
  known file extension or names a well-known extension-less file (``Makefile``); a ``:42`` /
  ``:42-50`` / ``#L42`` suffix is a line, ``#part`` a Markdown anchor, a trailing ``/`` a
  directory. A span is a *symbol* when it is an identifier that reads as code — camelCase or
  PascalCase with an inner capital (``processOrder``), ``snake_case`` / ``SCREAMING_SNAKE``
  with an inner ``_``, dotted names with such a part or a capital (``Foo.bar``), or anything
  written as a call (``write_batch()``). A span is a *command* when its first word is a known
  command-line program (``just``, ``make``, ``npm``, ``python``…); its task-runner target
  (``just vendor``) and its path arguments are claims.
- **Prose** outside spans: only unmistakable paths — a token ending in a known source or
  document extension (``billing.ts:42``, ``src/x.py``, ``docs/x.md#part``).

Never claims: a name in a clause that says it is gone or was never there ("removed
`x.ts`", "`x.ts` was deleted", "no `public-api.ts`", "`old.ts` → `new.ts`", "已删除"), a name
given as an example ("e.g. `foo.ts`", "例如"), URLs and e-mail addresses, globs (``*``, ``?``, ``{``), placeholders (``<name>``),
absolute paths outside the project and ``~/…`` (they are checked by nobody), and two-segment
``owner/name`` spans whose first segment is not a directory of the project (a GitHub
repository, ``S3/Kafka``): ``anchored`` says whether a path needs that check.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any, Literal

from memtui.core.memory.derived import per_memory
from memtui.core.memory.memories import Memory

if TYPE_CHECKING:
    from memtui.core.memory.catalogdb import CatalogDB

ClaimKind = Literal["path", "symbol", "command"]

# Extensions of files a memory names when it points into a repository (memtui's list).
SOURCE_EXTENSIONS = frozenset(
    """
    py pyi pyx ipynb ts tsx mts cts js jsx mjs cjs vue svelte astro go rs java kt kts scala groovy
    rb erb rake php swift m mm c h cc cpp cxx hpp hh cs fs fsx vb dart lua r jl ex exs erl hrl hs
    ml mli clj cljs elm nim zig sol sql prisma graphql gql proto thrift avsc sh bash zsh fish ps1
    bat cmd md mdx rst txt adoc json jsonc json5 yaml yml toml ini cfg conf properties env xml
    html htm css scss sass less tf tfvars hcl nix gradle cmake mk lock csv tsv
    """.split()
)
# Well-known files without an extension (or whose whole name is the extension).
KNOWN_NAMES = frozenset(
    {
        "Makefile", "makefile", "GNUmakefile", "Dockerfile", "Containerfile", "Justfile", "justfile", ".justfile",
        "Gemfile", "Rakefile", "Procfile", "Vagrantfile", "Brewfile", "Pipfile", "Taskfile.yml",
        ".gitignore", ".gitattributes", ".dockerignore", ".editorconfig", ".env.example", ".envrc",
        ".pre-commit-config.yaml", ".npmrc", ".nvmrc", ".python-version", ".tool-versions",
        "LICENSE", "CODEOWNERS", "AGENT.md", "CLAUDE.md", "AGENTS.md",
    }
)
# Programs whose command lines a memory quotes (memtui's list): a span starting with one of
# them is a command. Task runners (`TASK_RUNNERS`) get their target checked.
COMMANDS = frozenset(
    """
    just make npm npx pnpm yarn bun deno node uv uvx pip pip3 pipx poetry pdm hatch python python3
    pytest tox nox ruff mypy black isort flake8 pylint go cargo rustc gradle mvn ./gradlew ./mvnw
    bundle rails rake ruby dotnet mix elixir php composer swift docker docker-compose podman
    kubectl helm terraform git gh bash sh zsh make tsc eslint prettier jest vitest playwright
    """.split()
)
TASK_RUNNERS = frozenset({"just", "make", "npm", "pnpm", "yarn", "bun"})

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_SPAN = re.compile(r"(?<!`)(`+)(?!`)(.+?)(?<!`)\1(?!`)", re.DOTALL)
_IDENT = r"[A-Za-z_][A-Za-z0-9_]*"
_DOTTED = re.compile(rf"{_IDENT}(?:(?:\.|::|#|->){_IDENT})*")
_CALL = re.compile(rf"^({_IDENT}(?:(?:\.|::|->){_IDENT})*)\s*\([^()]*\)?\s*;?$", re.DOTALL)
_CAMEL = re.compile(r"[a-z0-9][A-Z]|[A-Z]{2}[a-z]")
_INNER_UNDERSCORE = re.compile(r"[A-Za-z0-9]_[A-Za-z0-9]")
# A path-like token in prose: ends in `.ext`, maybe `:line` or `#anchor` after it.
_PROSE_PATH = re.compile(
    r"(?<![\w/.@:-])((?:\.{1,2}/)?(?:[\w.-]+/)*[\w-][\w.-]*\.([A-Za-z0-9]{1,10})(?::\d+(?:-\d+)?|#L\d+(?:-L?\d+)?|#[\w-]+)?)(?![\w/])"
)
# Every prose path has a name character right before the dot of its extension.
_PROSE_HINT = re.compile(r"[\w-]\.[A-Za-z0-9]")
_URL_LIKE = re.compile(r"^[a-z][a-z0-9+.-]*://|^www\.|^mailto:", re.IGNORECASE)
_NOT_PATH_CHARS = re.compile(r"[\s*?{}\[\]<>|$`\"'(),;=]")
_VERSIONISH = re.compile(r"^v?\d+(?:\.\d+)+$")
_TLDS = frozenset({"com", "org", "net", "io", "dev", "app", "ai", "co", "uk", "de", "fr", "example", "local", "internal", "cloud", "sh"})


@dataclass(frozen=True, slots=True)
class Claim:
    """One thing a memory says about the code.

    ``kind``: ``path``, ``symbol`` or ``command``; ``text``: as written; ``line``: the file line
    of the memory it is on (1-based). Paths: ``path`` (POSIX, no ``./``, no trailing ``/``),
    ``directory`` (written with a trailing ``/``), ``line_no`` (the last line named by
    ``:42`` / ``:42-50`` / ``#L42``), ``anchor`` (``#part``), ``anchored`` (a two-segment path with
    no extension: a claim only if its first segment is a directory of the project). Symbols:
    ``words`` (the identifier parts, ``Foo.bar`` → ``Foo``, ``bar``). Commands: ``runner`` and
    ``target`` (``just vendor`` → ``just``, ``vendor``).
    """

    kind: ClaimKind
    text: str
    line: int
    path: str | None = None
    directory: bool = False
    line_no: int | None = None
    anchor: str | None = None
    anchored: bool = False
    words: tuple[str, ...] = ()
    runner: str | None = None
    target: str | None = None


# A clause ends at these: a name's clause is the text between the two around it on its line.
_CLAUSE_END = re.compile(r"[;；。，!?！？|]|\.(?:\s|$)|\s[—–]\s|,\s(?:but|while|and then)\b")
# A dash right after a name followed by one of these words still speaks of the name ("`x.ts` — removed").
_DASH_GONE = re.compile(r"(?i)^\W{0,3}\s[—–]\s+(?:removed|deleted|gone|dropped|retired|obsolete|deprecated|renamed|moved)\b")
# Words right before a name saying it is gone, renamed, or never was ("removed `x`", "no `x`").
_GONE_BEFORE = re.compile(
    r"(?i)(?:\b(?:removed|deleted|dropped|retired|killed|got rid of|ripped out|renamed|moved|replaced|"
    r"instead of|in place of|no longer|no(?!-)|without|obsolete|deprecated|formerly|previously|originally|used to|"
    r"old(?:\s+\w+)?\s+(?:layout|structure|paths?|locations?|names?|files?|folders?|dirs?|directory|version|modules?|code|api|endpoints?|scripts?|setup)\s*[:：]?\s*[*_(\[]*$|"
    r"entfernt|gelöscht|umbenannt|verschoben|ersetzt|nicht mehr|supprimé|renommé|déplacé|"
    r"recreate|re-create|resurrect|revive|bring back|before the (?:refactor|rewrite|migration|move|rename|split|restructure)|"
    r"(?:never|don't|do not|stop|avoid)\s+(?:use|using|call|calling|import|importing|rely on|depend on)|"
    r"eliminamos|eliminé|borramos|quitamos|movimos|renombramos)\b"
    r"|\[[xX]\]\s*(?:delete|remove|drop|rename|move|retire|kill)\b|\bRIP\b"
    r"|删|刪|移除|去掉|不再|不要再|别再|別再|禁止使用|没有|沒有|不存在|废弃|廢棄|废除|廢除|退役|下线|下線|弃用|棄用|淘汰|取代了|代替了|削除|廃止|存在しない|삭제|없음|eliminad[oa]|borrad[oa]|ya no|no existe)"
)
# Words that put a whole clause in the past ("the old enum had `a` / `b`", "before the refactor,
# … `x`"): every name in it, not only the next.
_PAST_CLAUSE = re.compile(r"(?i)\b(?:formerly|previously|originally|used to|before the (?:refactor|rewrite|migration|move|rename|split|restructure))\b|以前|原来的|原來的|旧的|舊的")
# "old" puts a clause in the past only with a past verb and no present one ("the old enum had `a`",
# not "the old exporter is `x` — still used").
_OLD_PAST = re.compile(r"(?i)\bold\b.*\b(?:had|was|were|did)\b")
_PRESENT = re.compile(r"(?i)\b(?:is|are|still|now)\b")
# Words after a name saying the same ("`x` was deleted", "`x` → `y`").
_GONE_AFTER = re.compile(
    r"(?i)(?:\b(?:removed|deleted|dropped|retired|gone|renamed|moved|replaced|superseded|obsolete|deprecated|no longer|"
    r"does not exist|doesn't exist|did not exist|didn't exist|never existed|was never|still on disk|killed|ripped out|anymore|any more|any longer|again|used to|back|pre-\w+|"
    r"entfernt|gelöscht|umbenannt|verschoben|ersetzt|nicht mehr|supprimé|renommé|déplacé)\b"
    r"|^\s*(?:→|->|=>|⇒)|删|刪|移除|不再|不存在|废弃|廢棄|退役|下线|下線|弃用|棄用|被取代|被替换|被替換|迁移|遷移|迁到|遷到|移到|搬到|改名|重命名|リネーム|移動|移行|改为|改成|使わない|削除|廃止|삭제|eliminad[oa]|borrad[oa])"
)
# A name right after these is where something went ("moved the cache to `x`", "→ `x`",
# "in favour of `x`"): it exists.
_DESTINATION = re.compile(r"(?i)(?:\b(?:to|into|onto|with|by|as|in favou?r of|a|hacia|en)|→|->|=>|⇒|改为|改成|换成|換成|迁到|遷到|移到)\s*[*_(\[]*$")
# A removal said not to happen ("do not remove `x`", "never delete `x`"): the name exists.
_KEPT = re.compile(r"(?i)\b(?:not|never|don't|do not|mustn't|must not|shouldn't|should not|avoid|before you)\s+(?:\w+\s+){0,2}?(?:remove|delete|drop|rename|move|touch|edit|change)\w*\b")
# Only separators between two names: a list ("removed `a`, `b` and `c`") shares its lead words.
_LIST_GAP = re.compile(r"(?i)^[\s,/+&*_()]*(?:and|or|und|et|y|和|与|及)?[\s,/+&*_()、]*$")
_EXAMPLE_BEFORE = re.compile(r"(?i)(?:\be\.\s?g\.|\bi\.\s?e\.|for example|for instance|such as|example|例如|比如|譬如|例えば|예를 들어|por ejemplo|p\.\s?ej\.)\W{0,4}$")
_CODE_SPAN = re.compile(r"`[^`\n]*`")
_PLACEHOLDER = re.compile(r"(?i)(?:^|[/._-])(?:foo|bar|baz|qux|example|examples|sample|xxx+|yyy+|placeholder|your[-_]?\w*|my[-_]\w+|some[-_]\w+|path/to|to/\w+)(?:$|[/._-])")
# The characters on each side of a name that decide whether it is taken back (memtui's bound:
# a line of thousands of names is read in windows, not once per name).
CONTEXT_CHARS = 300


def retracted(text: str, start: int, end: int) -> bool:
    """Whether the name at ``text[start:end]`` is not a claim that it exists: the words right
    before it or after it in its clause say it is gone, renamed or never was (a name after
    "moved … to" or "→" is where it went, and "do not remove" keeps it), it is struck through,
    given as an example, or a placeholder path (``path/to/x.py``, ``foo/bar.ts``)."""
    line_start = max(text.rfind("\n", max(0, start - CONTEXT_CHARS), start) + 1, start - CONTEXT_CHARS)
    line_end = text.find("\n", end, end + CONTEXT_CHARS)
    line_end = min(len(text), end + CONTEXT_CHARS) if line_end < 0 else line_end
    before_line = text[line_start:start]
    if before_line.count("~~") % 2:
        return True  # struck through (`~~…~~`): the author took it back
    if _EXAMPLE_BEFORE.search(before_line.rstrip("`*_ (["), max(0, len(before_line) - 40)):
        return True
    name = text[start:end].strip("`")
    if ("/" in name or (_extension(name) or "").lower() in SOURCE_EXTENSIONS) and _PLACEHOLDER.search(name):
        return True
    ends = list(_CLAUSE_END.finditer(before_line))
    clause = before_line[ends[-1].end() :] if ends else before_line
    # the words since the name before this one (a list's names share the words that lead it)
    gaps = _CODE_SPAN.split(clause)
    near = gaps[-1]
    for gap in reversed(gaps[:-1]):
        if not _LIST_GAP.match(near):
            break
        near = gap + " " + near
    if _DESTINATION.search(near) or _KEPT.search(near):
        return False
    words = _CODE_SPAN.sub(" ", clause)
    if _PAST_CLAUSE.search(words) or (_OLD_PAST.search(words) and not _PRESENT.search(words)):
        return True
    after_line = text[end:line_end]
    if _DASH_GONE.match(after_line):
        return True
    if after_line.lstrip().startswith(("に", "へ")):
        return False  # Japanese "… `y` にリネームした": `y` is where it went
    stop = _CLAUSE_END.search(after_line)
    after = _CODE_SPAN.sub(" ", after_line[: stop.start()] if stop else after_line)
    return bool(_GONE_BEFORE.search(near) or _GONE_AFTER.search(after))


def _mask_fences(text: str) -> str:
    """``text`` with the lines of fenced code blocks blanked (line count kept)."""
    if "```" not in text and "~~~" not in text:
        return text
    out: list[str] = []
    fence: str | None = None
    for line in text.split("\n"):
        m = _FENCE.match(line)
        if fence is None and m:
            fence = m.group(1)[0] * 3
            out.append("")
        elif fence is not None:
            out.append("")
            if line.strip().startswith(fence):
                fence = None
        else:
            out.append(line)
    return "\n".join(out)


def _extension(name: str) -> str | None:
    base = name.rsplit("/", 1)[-1]
    if "." not in base.strip("."):
        return None
    return base.rsplit(".", 1)[-1]


_LINE_SUFFIX = re.compile(r":(\d+)(?:[-:]\d+)?$")
_L_FRAGMENT = re.compile(r"L(\d+)(?:-L?\d+)?$")


def _split_location(text: str) -> tuple[str, str | None, str | None]:
    """``path:42`` / ``path:42-50`` / ``path#L42`` / ``path#part`` → ``(path, line, anchor)``."""
    hash_at = text.find("#")
    if hash_at > 0:
        fragment = text[hash_at + 1 :]
        m = _L_FRAGMENT.match(fragment)
        if m:
            return text[:hash_at], m.group(1), None
        if fragment and "#" not in fragment and not any(c.isspace() for c in fragment):
            return text[:hash_at], None, fragment
        return text, None, None
    if ":" in text:
        m = _LINE_SUFFIX.search(text)
        if m:
            return text[: m.start()], m.group(1), None
    return text, None, None


def path_claim(raw: str, line: int, *, in_span: bool) -> Claim | None:
    """The path claim of ``raw`` (a span's text or a prose token), or ``None`` when it is not
    one (see the module doc)."""
    text = raw.strip()
    if not text or _URL_LIKE.match(text) or "@" in text or text.startswith(("~", "$", "-")):
        return None
    path, line_no, anchor = _split_location(text)
    if _NOT_PATH_CHARS.search(path) or ":" in path or "\\" in path or "#" in path:
        return None
    directory = path.endswith("/")
    path = path.rstrip("/")
    while path.startswith("./"):
        path = path[2:]
    if not path or path.startswith("/") or any(seg in ("", ".", "..") for seg in path.split("/")):
        return None
    name = path.rsplit("/", 1)[-1]
    ext = _extension(path)
    has_slash = "/" in path
    if _VERSIONISH.match(path) or (ext is not None and ext.lower() in _TLDS and not has_slash):
        return None  # `1.2.3`, `acme.io`
    if ext is not None and ext.lower() in SOURCE_EXTENSIONS or name in KNOWN_NAMES:
        return Claim("path", text, line, path, directory, int(line_no) if line_no else None, anchor)
    if not in_span:
        return None
    if directory:
        return Claim("path", text, line, path, True, None, None)
    if has_slash and ext is None:
        # `services/worker`: a directory or an extension-less file, if its root exists
        anchored = path.count("/") == 1
        return Claim("path", text, line, path, False, int(line_no) if line_no else None, anchor, anchored)
    return None


def symbol_claim(raw: str, line: int) -> Claim | None:
    """The symbol claim of a code span's text, or ``None`` (see the module doc)."""
    text = raw.strip().lstrip("@")
    call = _CALL.match(text)
    name = call.group(1) if call else text
    if not _DOTTED.fullmatch(name):
        return None
    words = tuple(w for w in re.split(r"\.|::|#|->", name) if w)
    if len(words) > 1:
        ok = call is not None or any(_CAMEL.search(w) or _INNER_UNDERSCORE.search(w) or w[:1].isupper() for w in words)
    else:
        ok = bool(_CAMEL.search(name) or _INNER_UNDERSCORE.search(name) or (call is not None and len(name) > 2))
    if not ok or any(len(w) < 2 for w in words):
        return None
    return Claim("symbol", raw.strip(), line, words=words)


def command_claims(raw: str, line: int) -> list[Claim]:
    """The claims in a command span: its task-runner target and its path arguments."""
    words = raw.split()
    if not words or words[0] not in COMMANDS:
        return []
    out: list[Claim] = []
    runner = words[0]
    args = [w for w in words[1:] if not w.startswith("-")]
    if runner in TASK_RUNNERS and args:
        target: str | None = args[0]
        if runner in ("npm", "pnpm", "yarn", "bun"):
            target = args[1] if args[0] in ("run", "run-script") and len(args) > 1 else (None if args[0] in _PM_BUILTINS else args[0])
        if target and re.fullmatch(r"[A-Za-z0-9_][\w:.-]*", target):
            out.append(Claim("command", raw.strip(), line, runner=runner, target=target))
    for arg in words[1:]:
        if "/" in arg or _extension(arg):
            claim = path_claim(arg, line, in_span=False)
            if claim is not None:
                out.append(claim)
    return out


# Package-manager subcommands that are not scripts (`npm install`, `yarn add`…).
_PM_BUILTINS = frozenset(
    "install i ci add remove rm uninstall update up upgrade outdated init create exec dlx x publish pack link unlink audit why list ls info view config cache login logout version help test start".split()
)


def _span_claims(content: str, line: int) -> list[Claim]:
    text = " ".join(content.split())
    if not text:
        return []
    first = text.split()[0]
    if first in COMMANDS and " " in text:
        return command_claims(text, line)
    if " " not in text:
        claim = path_claim(text, line, in_span=True)
        if claim is not None:
            return [claim]
    symbol = symbol_claim(text, line)
    return [symbol] if symbol is not None else []


def claims_in_text(text: str, first_line: int) -> Iterator[Claim]:
    """The claims in ``text`` (a description or a body; ``first_line``: its first line's
    number in the file), in order of appearance."""
    masked = _mask_fences(text)
    spans: list[tuple[int, int]] = []
    line, at = first_line, 0  # the line of offset ``at`` (counted forward, once)
    for m in _SPAN.finditer(masked) if "`" in masked else ():
        if "\n\n" in m.group(2):
            continue  # a span does not cross a paragraph: an unmatched backtick
        spans.append((m.start(), m.end()))
        line += masked.count("\n", at, m.start(2))
        at = m.start(2)
        # the words around a span are read only when it names something (``retracted`` reads
        # up to 300 characters each side; a line of thousands of spans names few things)
        found = _span_claims(m.group(2), line)
        if found and not retracted(masked, m.start(), m.end()):
            yield from found
    # prose outside the spans
    pos = 0
    line, at = first_line, 0  # counted forward again, over the prose paths in order
    for start, end in [*spans, (len(masked), len(masked))]:
        chunk = masked[pos:start]
        if "." in chunk and _PROSE_HINT.search(chunk):
            for m in _PROSE_PATH.finditer(chunk):
                token = m.group(1).rstrip(".")
                if m.group(2).lower() not in SOURCE_EXTENSIONS:
                    continue
                line += masked.count("\n", at, pos + m.start(1))
                at = pos + m.start(1)
                claim = path_claim(token, line, in_span=False)
                if claim is not None and not retracted(masked, pos + m.start(1), pos + m.end(1)):
                    yield claim
        pos = end


def _description_line(memory: Memory) -> int | None:
    if memory.body_line <= 1:
        return None
    for number, line in enumerate(memory.text.split("\n", memory.body_line)[: memory.body_line - 1], start=1):
        if line.startswith("description:"):
            return number
    return None


# At most this many claims are read from one memory (memtui's bound: a memory naming more is a
# listing of files, and each claim costs a look at the words around it).
MAX_CLAIMS = 1000


def _holds_secret(text: str) -> bool:
    """Whether a claim's text is (or holds) a likely secret: such a claim would quote the key in
    every report that lists it. Only a text of 16 characters or more with a letter and a digit
    (the shape of every key format) is scanned."""
    if len(text) < 16 or not any(c.isdigit() for c in text) or not any(c.isalpha() for c in text):
        return False
    from memtui.core.memory.secretscan import find_secrets

    return bool(find_secrets(text))


def memory_claims(memory: Memory) -> list[Claim]:
    """Every claim of ``memory`` (at most ``MAX_CLAIMS``): its description's, then its body's;
    one claim per distinct kind, path (or text), line and anchor (the first occurrence's line):
    `x.ts` and `x.ts:120` are two claims."""
    out: list[Claim] = []
    seen: set[tuple[str, str]] = set()
    sources: list[tuple[str, int]] = []
    if memory.description:
        sources.append((memory.description, _description_line(memory) or 1))
    sources.append((memory.body, memory.body_line))
    for text, first in sources:
        if "`" not in text and "." not in text:
            continue
        for looked, claim in enumerate(claims_in_text(text, first)):
            if looked >= 10 * MAX_CLAIMS:
                return out  # the same names over and over: enough read
            key = (claim.kind, claim.path or claim.text, claim.line_no, claim.anchor)
            if key not in seen:
                seen.add(key)
                if _holds_secret(claim.text):
                    continue  # a pasted key is the secret check's finding, never quoted as a claim
                out.append(claim)
                if len(out) >= MAX_CLAIMS:
                    return out
    return out


_CLAIM_FIELDS = tuple(f.name for f in fields(Claim))
_CLAIM_TYPES: tuple[tuple[type, ...], ...] = (
    (str,), (str,), (int,), (str, type(None)), (bool,), (int, type(None)), (str, type(None)), (bool,), (list,), (str, type(None)), (str, type(None)),
)


def claims_to_json(claims: Iterable[Claim]) -> list[list[Any]]:
    """``[[kind, text, line, path, directory, line_no, anchor, anchored, [words…], runner,
    target], …]`` (``Claim``'s fields in order): ``claims_from_json``'s input."""
    return [[*(getattr(c, name) for name in _CLAIM_FIELDS[:-3]), list(c.words), c.runner, c.target] for c in claims]


def claims_from_json(data: Any) -> list[Claim]:
    """The claims a ``claims_to_json`` list describes. Raises ``ValueError`` for another shape."""
    out: list[Claim] = []
    if not isinstance(data, list):
        raise ValueError("not a list of claims")
    for row in data:
        if not (isinstance(row, list) and len(row) == len(_CLAIM_FIELDS)):
            raise ValueError("not a claim")
        for value, types in zip(row, _CLAIM_TYPES, strict=True):
            if not isinstance(value, types) or (isinstance(value, bool) and bool not in types):
                raise ValueError("not a claim: wrong types")
        if row[0] not in ("path", "symbol", "command") or not all(isinstance(w, str) for w in row[8]):
            raise ValueError("not a claim: wrong kind or words")
        out.append(Claim(*row[:8], tuple(row[8]), row[9], row[10]))
    return out


# What ``stated_claims`` keeps per memory in the catalog database (``CatalogDB.derived``): its
# claims, under a fingerprint of the code that finds them.
CLAIMS_KIND = "claims"
_CLAIMS_MODULES = ("verify/claims", "memory/memories", "memory/frontmatter")


def stated_claims(memories: Sequence[Memory], db: CatalogDB | None) -> dict[str, list[Claim]]:
    """relpath → ``memory_claims`` of each of ``memories`` (``verify_memories``' ``claims``):
    from ``db`` (the memory dir's catalog database, or ``None``) for a file whose bytes did not
    change since they were stored, else from its text (read now, and stored when it is the
    bytes the record describes)."""
    return per_memory(memories, db, CLAIMS_KIND, _CLAIMS_MODULES, memory_claims, claims_to_json, claims_from_json)
