"""Preprocessing of every instruction/memory file (docs/behaviour.md §3.2), as the reference does it.

Read as UTF-8 (invalid bytes replaced, a BOM kept: Node's ``readFile`` keeps it), strip the
byte-0 YAML frontmatter, strip block-level HTML comments (a comment inside code, an inline
comment and an unclosed ``<!--`` stay), and tokenise the Markdown once so the comment
stripping and the ``@`` import extraction share the tokens (markdown-it-py standing in for
the reference's ``marked`` lexer).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from markdown_it import MarkdownIt
from markdown_it.token import Token

from memtui.core.base.safe_read import read_regular
from memtui.core.cascade.html_blocks import use_claude_html_blocks
from memtui.core.base.diagnostics import Diagnostic
from memtui.core.memory.frontmatter import Frontmatter, parse_frontmatter

# The reference's size advisory: MAX_MEMORY_CHARACTER_COUNT = 40,000 (UTF-16 units).
MAX_FILE_CHARS = 40_000
# The largest instruction file read at all (memtui's choice, like a memory's cap): a FIFO, a
# device or a bigger file is unreadable, never a hang.
MAX_READ_BYTES = 32 * 1024 * 1024

# Extensions memtui treats as binary and never loads (docs/behaviour.md §3.2: "skip files with a binary
# extension"): images, documents, archives, executables, media, fonts, databases.
BINARY_EXTENSIONS: frozenset[str] = frozenset(
    """
    .png .jpg .jpeg .gif .bmp .ico .webp .tif .tiff .psd .heic .avif
    .pdf .doc .docx .xls .xlsx .ppt .pptx .odt .ods .odp .key .numbers .pages
    .zip .gz .tgz .bz2 .xz .zst .7z .rar .tar .jar .war .whl .egg .dmg .iso .deb .rpm
    .exe .dll .so .dylib .bin .o .a .lib .class .pyc .pyo .wasm .node
    .mp3 .mp4 .m4a .wav .flac .ogg .mov .avi .mkv .webm
    .ttf .otf .woff .woff2 .eot
    .sqlite .sqlite3 .db .parquet .pkl .pickle .npy .npz .h5 .onnx .pt .safetensors
    """.split()
)

# JavaScript's String.prototype.trim whitespace (WhiteSpace + LineTerminator, BOM included).
_JS_WS = "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
_COMMENT_SPAN = re.compile(r"<!--[\s\S]*?-->")
_LINE_ENDINGS = re.compile(r"\r\n?")

# The Markdown dialects (``Instructions.markdown``). Both are markdown-it's CommonMark without
# ``text_join``: escapes stay separate ``text_special`` tokens, as in the reference's lexer
# (where an escaped ``\@`` is an ``escape`` token, never import text). ``claude-code`` swaps in
# Claude Code's HTML blocks (``memtui.core.cascade.html_blocks``) and emits link reference
# definitions as ``definition`` tokens so a release that loses them can cut them out.
_MARKDOWN: dict[str, MarkdownIt] = {
    "commonmark": MarkdownIt("commonmark").disable("text_join"),
    "claude-code": use_claude_html_blocks(MarkdownIt("commonmark", {"inline_definitions": True}).disable("text_join")),
}


def js_trim(text: str) -> str:
    """``text.trim()`` as JavaScript does it (strips a BOM too, unlike ``str.strip``)."""
    return text.strip(_JS_WS)


def has_binary_extension(path: str | Path) -> bool:
    """True when ``path``'s extension (case-insensitive) is one memtui treats as binary."""
    return os.path.splitext(str(path))[1].lower() in BINARY_EXTENSIONS


def read_text(path: Path) -> str:
    """The file decoded as the reference decodes it: UTF-8, bad bytes → U+FFFD, BOM kept.

    Raises ``OSError`` (``FileNotFoundError``, ``IsADirectoryError``, ``PermissionError``…;
    ``NotRegularFileError`` for a FIFO or a device, ``FileTooLargeError`` over
    ``MAX_READ_BYTES``).
    """
    return read_regular(path, MAX_READ_BYTES)[0].decode("utf-8", errors="replace")


@dataclass(slots=True)
class ParsedFile:
    """One file after preprocessing.

    ``content``: the text the agent keeps (frontmatter and block comments stripped, not yet
    trimmed); ``frontmatter``: the byte-0 reader's result; ``tokens``: markdown-it tokens of the
    body (``None`` when the body has neither ``@`` nor ``<!--``, so there is nothing to find);
    ``body_line``: 1-based file line where the body starts; ``diagnostics``: comment findings.
    """

    content: str
    frontmatter: Frontmatter
    tokens: list[Token] | None
    body_line: int
    diagnostics: list[Diagnostic] = field(default_factory=list)


def preprocess(
    raw: str,
    path: str,
    *,
    want_imports: bool,
    strip_bom: bool = False,
    markdown: str = "commonmark",
    keeps_link_definitions: bool = True,
) -> ParsedFile:
    """Strip frontmatter and block comments from ``raw`` (the decoded file text).

    ``want_imports``: the caller will extract ``@`` imports, so tokenise when the body holds an
    ``@``; ``strip_bom``: a BOM before ``---`` is dropped (``MemoryFormat.strip_bom``);
    ``markdown``: the dialect that finds the blocks (``Instructions.markdown``);
    ``keeps_link_definitions``: ``False`` for a release that rebuilds a file holding ``<!--``
    from its blocks (``Instructions.keeps_link_definitions``). Never raises.
    """
    fm = parse_frontmatter(raw, strip_bom=strip_bom)
    body = fm.body
    has_comment = "<!--" in body
    need_tokens = has_comment or (want_imports and "@" in body)
    diags: list[Diagnostic] = []
    tokens = _tokenize(body, markdown, path, fm.body_line, diags) if need_tokens else None
    content = body
    if tokens is not None and has_comment:
        content, diags = _strip_block_comments(body, tokens, path, fm.body_line, keeps_link_definitions)
    return ParsedFile(content, fm, tokens, fm.body_line, diags)


def _tokenize(body: str, markdown: str, path: str, body_line: int, diags: list[Diagnostic]) -> list[Token] | None:
    """The body's markdown-it tokens, or ``None`` (with a ``markdown-too-deep`` warning) when
    the parser runs out of Python's stack: the last line of defence that keeps
    :func:`preprocess` from raising. No input known today gets here (markdown-it stops nesting
    at ``maxNesting`` and the HTML-block rule loops instead of recursing); the file then keeps
    its comments and its imports are not followed, which the warning says."""
    try:
        return _MARKDOWN[markdown].parse(body)
    except RecursionError:
        diags.append(
            Diagnostic(
                "markdown-too-deep",
                "warning",
                "memtui's Markdown parser gave up on this file (nested too deeply): memtui shows it with its "
                "HTML comments kept and follows none of its @imports, which may differ from what the agent loads",
                path,
                body_line,
            )
        )
        return None


def _line_starts(text: str) -> list[int]:
    starts = [0]
    pos = text.find("\n")
    while pos != -1:
        starts.append(pos + 1)
        pos = text.find("\n", pos + 1)
    starts.append(len(text) + 1)
    return starts


def _span(token: Token, starts: list[int], size: int) -> tuple[int, int]:
    """Where a top-level block lies in the LF text: its own span when the block rule recorded
    one (a block starting mid-line), else its lines."""
    if token.meta and "span" in token.meta:
        return token.meta["span"]
    assert token.map is not None
    start, end = token.map
    return starts[start], min(starts[end], size)


def _strip_block_comments(
    body: str, tokens: list[Token], path: str, body_line: int, keeps_link_definitions: bool
) -> tuple[str, list[Diagnostic]]:
    """The reference's comment stripping (Claude Code 2.1.332, read from its bundle and
    confirmed by oracle scenarios ``o_html_*``).

    A top-level HTML block whose text starts (after whitespace) with ``<!--`` and holds ``-->``
    is replaced by what is left after removing its comments; when only whitespace is left it is
    dropped together with the empty lines right after it (lines holding spaces stay). The
    rest of the text stays byte for byte. A comment inside a list, a blockquote, a paragraph or
    code stays, and so does an unclosed ``<!--`` (with a warning). When something was cut the
    result has LF line endings (the reference normalises CRLF before cutting), else it is the
    body as read.

    With ``keeps_link_definitions`` false (2.1.328) the reference rebuilt the text from its
    top-level blocks whenever it held ``<!--``: link reference definitions (``[x]: https://…``),
    which are no block, vanished with the empty lines after them, and CRLF became LF even when
    no comment was cut.
    """
    text = _LINE_ENDINGS.sub("\n", body)
    starts = _line_starts(text)
    diags: list[Diagnostic] = []
    cuts: list[tuple[int, int, str]] = []
    for token in tokens:
        if token.level != 0 or token.map is None:
            continue
        if token.type == "definition" and not keeps_link_definitions:
            start, end = _span(token, starts, len(text))
            while end < len(text) and text[end] == "\n":
                end += 1
            cuts.append((start, end, ""))
            continue
        if token.type != "html_block" or not token.content.lstrip().startswith("<!--"):
            continue
        if "-->" not in token.content:
            diags.append(
                Diagnostic(
                    "html-comment-unclosed",
                    "warning",
                    "`<!--` is never closed: the agent keeps this comment (and all text after it) in the context",
                    path,
                    body_line + token.map[0],
                )
            )
            continue
        start, end = _span(token, starts, len(text))
        while end < len(text) and text[end] == "\n":
            end += 1
        residue = _COMMENT_SPAN.sub("", text[start:end])
        cuts.append((start, end, residue if js_trim(residue) else ""))
    if not cuts:
        return (body if keeps_link_definitions else text), diags
    out: list[str] = []
    pos = 0
    for start, end, residue in sorted(cuts):
        out.append(text[pos:start])
        out.append(residue)
        pos = max(pos, end)
    out.append(text[pos:])
    return "".join(out), diags
