"""Claude Code's HTML blocks, as a markdown-it block rule (the ``claude-code`` Markdown dialect).

Claude Code tokenises an instruction file with its own CommonMark lexer before it strips
comments and looks for ``@`` imports. Its HTML blocks differ from CommonMark's (and so from
markdown-it's) in ways that decide which comments are cut and which imports load. The rules,
read from the 2.1.332 bundle (2.1.328 has the same) and each confirmed by an oracle scenario
(``scripts/oracle_scenarios.py``, ``o_html_*``):

- A block starts on a line indented by at most 3 spaces (relative to its container) with
  1. ``<script``, ``<pre``, ``<style`` or ``<textarea`` (any case) followed by whitespace or
     ``>``: it ends at the end of the line holding the matching ``</name>`` (any case), else
     at the end of the container. A closing ``</script>`` (``</pre>``…) alone on a line is no
     block at all, and nor is a longer name starting with one of these (``<prefix>``,
     ``<scripts>``): they are paragraph text.
  2. ``<!--``: it ends at the end of the line holding ``-->``.
  3. ``<?``: it ends right after ``?>``, **mid-line**: the rest of that line starts a new block.
  4. ``<!`` and a letter (``<!DOCTYPE html>``): it ends right after the first ``>``, mid-line.
  5. ``<![CDATA[`` (any case): it ends right after ``]]>``, mid-line.
  6. ``<name`` or ``</name`` of the block tag list (div, table, p, details, …; any case)
     followed by a space, a line end, ``>`` or ``/>`` (a tab does not count): it ends at a
     blank line.
  7. any other complete open tag (attributes separated by spaces) or closing tag, alone on
     its line: it ends at a blank line.
- Only some of them interrupt a paragraph, and only at the container's column 0 (an indented
  ``  <div>`` continues the paragraph): ``<!--``, ``<script``/``<pre``/``<style``/``<textarea``
  (lower case, any continuation) and a lower-case block tag name as in 6. ``<?``, ``<!DOCTYPE``,
  ``<![CDATA[`` and kind 7 never do. A line indented less than a list item's content ends the
  item when it starts (after up to 3 spaces, any case) with ``<!--``, a raw tag name followed by
  whitespace or ``>``, or a block tag as in 6: ``- item`` then ``<!-- c -->`` is a top-level
  comment, which is cut.
- Inside a list item a block also takes the lazy lines that follow it (lines indented less
  than the item's content that start nothing else), as a paragraph does; in a blockquote it
  does not.
"""

from __future__ import annotations

import re

from markdown_it import MarkdownIt
from markdown_it.rules_block.state_block import StateBlock

BLOCK_TAGS = frozenset(
    """address article aside base basefont blockquote body caption center col colgroup dd details
    dialog dir div dl dt fieldset figcaption figure footer form frame frameset h1 h2 h3 h4 h5 h6 head
    header hr html iframe legend li link main menu menuitem meta nav noframes ol optgroup option p
    param search section summary table tbody td tfoot th thead title tr track ul""".split()
)
RAW_TAGS = ("script", "pre", "style", "textarea")

_TAG_ALT = "|".join(sorted(BLOCK_TAGS))
# What ends a paragraph (the lexer's paragraph-continuation test, case-sensitive, column 0).
_INTERRUPTS = re.compile(rf"<(?:!--|script|pre|style|textarea|/?(?:{_TAG_ALT})(?:[\n >]|/>))")
# What ends a list item's lazy lines (up to 3 spaces, any case).
_ITEM_STOPS = re.compile(rf" {{0,3}}<(?:!--|(?:{'|'.join(RAW_TAGS)})[\s>]|/?(?:{_TAG_ALT})(?:[\n >]|/>))", re.IGNORECASE)
_NAME = re.compile(r"[A-Za-z][-A-Za-z0-9_]*")
_RAW_PREFIX = re.compile(rf"(?:{'|'.join(RAW_TAGS)})")
_ATTRIBUTE = re.compile(r""" +[:A-Za-z_][-.:A-Za-z0-9_]*(?: *= *(?:[^\s"'<=>`]+|'[^\n']*'|"[^\n"]*"))?""")
_OPEN_END = re.compile(r" */?>")
_CLOSE_END = re.compile(r"\s*>")
_BLANK_REST = re.compile(r"[\t ]*(?:\n|$)")
_WHITESPACE = "\t\n\v\f\r "

# How a block ends: ("line", marker) at the end of the line holding the marker; ("after",
# marker) right after the marker; ("blank", "") at a blank line.
_End = tuple[str, str, int]


def _start(src: str, pos: int) -> _End | None:
    """The kind of HTML block starting at ``src[pos]`` (a ``<``) as ``(ending, marker, search
    from)``, or ``None`` when none starts there."""
    nxt = src[pos + 1 : pos + 2]
    if nxt == "?":
        return ("after", "?>", pos + 2)
    if nxt == "!":
        if src.startswith("--", pos + 2):
            return ("line", "-->", pos + 2)
        if _NAME.match(src, pos + 2):
            return ("after", ">", pos + 1)
        if src[pos + 2 : pos + 9].upper() == "[CDATA[":
            return ("after", "]]>", pos + 9)
        return None
    closing = nxt == "/"
    name_at = pos + 2 if closing else pos + 1
    m = _NAME.match(src, name_at)
    name_end = m.end() if m else name_at
    name = src[name_at:name_end].lower()
    after = src[name_end : name_end + 1]
    if _RAW_PREFIX.match(name):
        if not closing and name in RAW_TAGS and after and (after == ">" or after in _WHITESPACE):
            return ("line", f"</{name}>", name_end)
        return None
    if name in BLOCK_TAGS and ((after and after in "\n >") or src.startswith("/>", name_end)):
        return ("blank", "", 0)
    if not name:
        return None
    if closing:
        end = _CLOSE_END.match(src, name_end)
    else:
        at = name_end
        while (attr := _ATTRIBUTE.match(src, at)) and attr.end() > at:
            at = attr.end()
        end = _OPEN_END.match(src, at)
    if end is None or not _BLANK_REST.match(src, end.end()):
        return None
    return ("blank", "", 0)


# A closing raw tag in any (ASCII) case, matched where it stands in the source: the reference
# compares ``src.slice(at, at + marker.length).toLowerCase()`` with the marker, and no character
# but ASCII letters lowers to one of a marker's, while U+0130 lowers to two characters (so it
# never matches). Searched from the current line only: linear in the lines searched.
_CLOSING = {name: re.compile(re.escape(f"</{name}>"), re.IGNORECASE | re.ASCII) for name in RAW_TAGS}
_SPACES = re.compile(" *")
_SPACES_TABS = re.compile("[ \t]*")


def _find(src: str, marker: str, start: int, stop: int) -> int:
    """Where ``marker`` ends in ``src[start:stop]`` (a closing raw tag in any case), or -1."""
    if marker.startswith("</"):
        m = _CLOSING[marker[2:-1]].search(src, start, stop)
        return -1 if m is None else m.end()
    at = src.find(marker, start, stop)
    return -1 if at == -1 else at + len(marker)


def _lazy(state: StateBlock, line: int, end_line: int) -> bool:
    """A line indented less than the list item's content continues the item's HTML block."""
    if state.isEmpty(line) or state.parentType != "list":
        return False
    pos = state.bMarks[line] + state.tShift[line]
    if _ITEM_STOPS.match(state.src, state.bMarks[line]) and state.sCount[line] < 4:
        return False
    old = state.parentType
    state.parentType = "paragraph"
    try:
        for rule in state.md.block.ruler.getRules("paragraph"):
            if rule is not claude_html_block and rule(state, line, end_line, True):
                return False
    finally:
        state.parentType = old
    return pos < state.eMarks[line]


def claude_html_block(state: StateBlock, start_line: int, end_line: int, silent: bool) -> bool:
    """markdown-it block rule for Claude Code's HTML blocks (the rules in this module's
    docstring). A block that ends mid-line hands the rest of its last line, and the lines
    after, to the block tokenizer; top-level blocks record their exact ``span`` (offsets in
    the LF text) in ``token.meta``."""
    found = _block(state, start_line, end_line, silent)
    if isinstance(found, bool):
        return found
    _tokenize_rests(state, found, end_line)
    return True


def _tokenize_rests(state: StateBlock, rest: int, end_line: int) -> None:
    """The block tokenizer from line ``rest`` (whose start was moved past a block that ended
    mid-line) to ``end_line``, as ``state.md.block.tokenize(state, rest, end_line)`` would run
    it, but without recursing when another block there ends mid-line again: each such block
    is one more turn of the loop here (500 ``<?a?>`` on one line once exceeded Python's
    recursion limit).

    This is markdown-it's ``ParserBlock.tokenize`` loop, and a loop over the nested calls that
    the recursive version made. A nested call ended as soon as its mid-line block returned (the
    call it made had consumed the lines to ``end_line`` or to the container's end), so a turn
    stops at such a block and the next turn starts a fresh call at its rest. ``state.tight``
    set in these calls is overwritten by the caller's own tokenizer once the rule returns, as
    it was."""
    rules = state.md.block.ruler.getRules("")
    max_nesting = state.md.options.maxNesting
    floor = 0
    next_rest: int | None = rest
    while next_rest is not None:
        line, next_rest = next_rest, None
        floor = max(floor, line + 1)
        has_empty_lines = False
        while line < end_line:
            state.line = line = state.skipEmptyLines(line)
            if line >= end_line or state.sCount[line] < state.blkIndent:
                break
            if state.level >= max_nesting:
                state.line = end_line
                break
            ok: bool = False
            for rule in rules:
                if rule is claude_html_block:
                    found = _block(state, line, end_line, False)
                    if not isinstance(found, bool):
                        next_rest, found = found, True
                    ok = found
                else:
                    ok = rule(state, line, end_line, False)
                if ok:
                    if state.line <= line:
                        raise RuntimeError("block rule didn't increment state.line")
                    break
            if not ok:
                raise RuntimeError("none of the block rules matched")
            state.tight = not has_empty_lines
            if next_rest is not None:
                break
            line = state.line
            if (line - 1) < end_line and state.isEmpty(line - 1):
                has_empty_lines = True
            if line < end_line and state.isEmpty(line):
                has_empty_lines = True
                line += 1
                state.line = line
    state.line = max(state.line, floor)


def _block(state: StateBlock, start_line: int, end_line: int, silent: bool) -> bool | int:
    """The rule's work: ``False`` (no block here), ``True`` (a block, ``state.line`` past it),
    or, for a block that ends mid-line with text after it, the line whose start was moved to
    that text (``state.line`` one past it): the caller tokenizes from there."""
    if state.is_code_block(start_line):
        return False
    src = state.src
    pos = state.bMarks[start_line] + state.tShift[start_line]
    if src[pos : pos + 1] != "<":
        return False
    if silent:
        if state.sCount[start_line] < state.blkIndent:  # a lazy line of a list item
            return bool(_ITEM_STOPS.match(src, state.bMarks[start_line]))
        return state.sCount[start_line] == state.blkIndent and bool(_INTERRUPTS.match(src, pos))
    kind = _start(src, pos)
    if kind is None:
        return False
    ending, marker, search_from = kind
    line = start_line
    cut = -1  # an "after" block's end, when text follows it on its last line
    while True:
        if line > start_line:
            if line >= end_line:
                break
            if ending == "blank" and state.isEmpty(line):
                break
            if state.sCount[line] < state.blkIndent and not _lazy(state, line, end_line):
                if ending == "blank" or not state.isEmpty(line):
                    break
        if ending != "blank":
            line_start = search_from if line == start_line else state.bMarks[line]
            found = _find(src, marker, line_start, state.eMarks[line])
            if found != -1:
                if ending == "after" and _SPACES_TABS.match(src, found, state.eMarks[line]).end() < state.eMarks[line]:
                    cut = found
                line += 1
                break
        line += 1
    token = state.push("html_block", "", 0)
    token.map = [start_line, line]
    last_end = cut if cut != -1 else state.eMarks[line - 1]
    token.content = src[pos:last_end] if cut != -1 else state.getLines(start_line, line, state.blkIndent, True)
    if state.level == 0 and state.parentType == "root":
        token.meta = {"span": (state.bMarks[start_line], min(last_end + (cut == -1), len(src)))}
    if cut == -1:
        state.line = line
        return True
    # The rest of the last line starts a new block, as in the reference's string lexer.
    rest = line - 1
    indent = _SPACES.match(src, cut, state.eMarks[rest]).end() - cut
    state.bMarks[rest] = cut
    state.tShift[rest] = indent
    state.sCount[rest] = state.blkIndent + indent
    state.line = line
    return rest


def use_claude_html_blocks(md: MarkdownIt) -> MarkdownIt:
    """``md`` with its ``html_block`` rule replaced by :func:`claude_html_block`."""
    md.block.ruler.at("html_block", claude_html_block, {"alt": ["paragraph", "reference", "blockquote"]})
    return md
