"""Per-memory content checks of the doctor: what must not be saved as memory (docs/behaviour.md §4.1),
likely secrets, and text an instruction file already says.

The "must not be saved" heuristics are conservative on purpose — a memory is prose and a
false alarm costs the user's trust: each needs a strong, specific signal and says which.

- ``content-code``: a fenced code block of at least ``CODE_BLOCK_MIN_LINES`` lines;
- ``content-stack-trace``: a Python ``Traceback (most recent call last):`` or at least
  ``TRACE_MIN_FRAMES`` frame lines (``  File "x.py", line 3``, ``    at f (x.js:1:2)``);
- ``content-git-history``: ``git log`` output (``commit <40 hex>``) or at least
  ``GIT_MIN_COMMITS`` lines starting with a commit hash;
- ``content-debug-recipe``: a numbered list of at least ``RECIPE_MIN_STEPS`` steps, at least
  two of which use debugging words (reproduce, breakpoint, stack trace, pdb, gdb, strace, …);
- ``content-architecture``: a drawn file tree (``├──``/``└──``) of at least 3 lines, or at least
  ``LAYOUT_MIN_LINES`` list lines that each start with a source file path.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence

from memtui.core.doctor.model import Finding, finding
from memtui.core.memory.memories import Memory

CODE_BLOCK_MIN_LINES = 10
TRACE_MIN_FRAMES = 3
GIT_MIN_COMMITS = 3
RECIPE_MIN_STEPS = 4
LAYOUT_MIN_LINES = 5
# Shorter bodies are not compared with instruction files (a 3-word rule is too common to judge).
INSTRUCTION_MIN_CHARS = 24

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_PY_TRACEBACK = re.compile(r"^[ \t]*Traceback \(most recent call last\):", re.MULTILINE)
_FRAME = re.compile(r"^\s+(?:File \".+\", line \d+|at \S.*[:(]\S*:\d+(?::\d+)?\)?)\s*$")
_GIT_LOG = re.compile(r"^commit [0-9a-f]{40}\b", re.MULTILINE)
_COMMIT_LINE = re.compile(r"^\s*(?:[-*]\s+)?`?([0-9a-f]{7,40})`?\s+\S")
_STEP = re.compile(r"^\s*\d+[.)]\s+\S")
_DEBUG_WORDS = re.compile(
    r"\b(?:debug\w*|reproduc\w*|repro|breakpoints?|stack ?traces?|traceback|pdb|gdb|lldb|strace|"
    r"print statements?|console\.log|logging level|core dump|bisect\w*|step through)\b",
    re.IGNORECASE,
)
_TREE = re.compile(r"[├└]──")
_LAYOUT_LINE = re.compile(
    r"^\s*[-*]\s+`?(?:[\w.-]+/)+[\w.-]*`?|^\s*[-*]\s+`?[\w.-]+\.(?:py|ts|tsx|js|jsx|go|rs|java|kt|rb|c|h|cpp|cs|php|swift|sql)`?\s*(?:[—:–-]|$)"
)


def _hex_with_digit(s: str) -> bool:
    return any(c.isdigit() for c in s) and any(c.isalpha() for c in s)


def content_findings(memory: Memory) -> list[Finding]:
    """The ``content-*`` findings of one memory (lines are file lines)."""
    body, first = memory.body, memory.body_line
    lines = body.split("\n")
    rel = memory.relpath
    out: list[Finding] = []

    # fenced code blocks
    fence: str | None = None
    start = 0
    for i, line in enumerate(lines):
        m = _FENCE.match(line)
        if fence is None and m:
            fence, start = m.group(1)[0] * 3, i
        elif fence is not None and line.strip().startswith(fence):
            size = i - start - 1
            if size >= CODE_BLOCK_MIN_LINES:
                out.append(finding("content-code", rel, first + start, f"a {size}-line code block: code patterns belong in the repo, the agent can read them there (docs/behaviour.md §4.1)"))
            fence = None

    if m := _PY_TRACEBACK.search(body):
        out.append(finding("content-stack-trace", rel, first + body.count("\n", 0, m.start()), "a Python traceback: debugging output is ephemeral and must not be saved as memory"))
    else:
        frames = [i for i, line in enumerate(lines) if _FRAME.match(line)]
        if len(frames) >= TRACE_MIN_FRAMES:
            out.append(finding("content-stack-trace", rel, first + frames[0], f"{len(frames)} stack-frame lines: debugging output is ephemeral and must not be saved as memory"))

    if m := _GIT_LOG.search(body):
        out.append(finding("content-git-history", rel, first + body.count("\n", 0, m.start()), "`git log` output: git history lives in git, not in memory"))
    else:
        commits = [i for i, line in enumerate(lines) if (cm := _COMMIT_LINE.match(line)) and _hex_with_digit(cm.group(1))]
        if len(commits) >= GIT_MIN_COMMITS:
            out.append(finding("content-git-history", rel, first + commits[0], f"{len(commits)} lines starting with a commit hash: git history lives in git, not in memory"))

    steps = [i for i, line in enumerate(lines) if _STEP.match(line)]
    debug_steps = [i for i in steps if _DEBUG_WORDS.search(lines[i])]
    if len(steps) >= RECIPE_MIN_STEPS and len(debug_steps) >= 2:
        out.append(finding("content-debug-recipe", rel, first + steps[0], f"a {len(steps)}-step list with debugging steps: a debugging recipe is task state, not memory"))

    tree = [i for i, line in enumerate(lines) if _TREE.search(line)]
    layout = [i for i, line in enumerate(lines) if _LAYOUT_LINE.match(line)]
    if len(tree) >= 3:
        out.append(finding("content-architecture", rel, first + tree[0], f"a {len(tree)}-line file tree: the layout is derivable from the code"))
    elif len(layout) >= LAYOUT_MIN_LINES:
        out.append(finding("content-architecture", rel, first + layout[0], f"{len(layout)} list lines naming source files: a file-by-file layout is derivable from the code"))
    return out


def secret_findings(memory: Memory) -> list[Finding]:
    """``likely-secret`` findings: detect-secrets' credential-format plugins and gitleaks' rules
    (via ``memtui.core.memory.secretscan``) over the whole file, each naming its rule (data
    ``kind``, ``rule``, ``masked``). The secret itself is never reported, only its mask."""
    from memtui.core.memory.secretscan import find_secrets

    return [
        finding(
            "likely-secret",
            memory.relpath,
            s.line,
            f"a likely {s.kind} ({s.detail()}): remove it (memory is read by a model, team memory by everyone)",
            kind=s.kind,
            rule=s.rule,
            masked=s.masked,
        )
        for s in find_secrets(memory.text)
    ]


def normalize_prose(text: str) -> str:
    """Text for containment checks: NFKC, case-folded, Markdown emphasis/code marks and list
    markers removed, whitespace collapsed."""
    text = unicodedata.normalize("NFKC", text).casefold()
    text = re.sub(r"(?m)^\s*(?:[-*+]|\d+[.)])\s+", " ", text)
    text = re.sub(r"[*_`>#]+", " ", text)
    return " ".join(text.split())


def _paragraphs(body: str) -> list[str]:
    return [p for p in re.split(r"\n\s*\n", body) if p.strip()]


def instruction_finding(memory: Memory, haystacks: Sequence[str]) -> Finding | None:
    """``in-instructions`` for one memory: its body — or its first paragraph, the rule or fact
    itself — appears (after ``normalize_prose``) in one of ``haystacks`` (instruction texts,
    already normalised)."""
    paras = _paragraphs(memory.body)
    if not paras:
        return None
    candidates = [("body", normalize_prose(memory.body)), ("rule", normalize_prose(paras[0]))]
    for what, needle in candidates:
        if len(needle) < INSTRUCTION_MIN_CHARS:
            continue
        if any(needle in hay for hay in haystacks):
            said = "the whole body" if what == "body" else "its first paragraph"
            return finding("in-instructions", memory.relpath, memory.body_line, f"{said} is already in an instruction file: the agent loads it every session anyway; drop the memory or the instruction")
    return None


def instruction_findings(memories: Iterable[Memory], instruction_texts: Sequence[str]) -> list[Finding]:
    """``in-instructions``: a memory whose body — or its first paragraph, the rule or fact
    itself — appears (after ``normalize_prose``) in one of ``instruction_texts``."""
    haystacks = [normalize_prose(t) for t in instruction_texts if t.strip()]
    if not haystacks:
        return []
    return [found for mem in memories if (found := instruction_finding(mem, haystacks)) is not None]


_FENCE_LINE = re.compile(r"^-{3}[ \t]*\r?$")
# Keys that make a `---` block a memory's frontmatter rather than a horizontal rule's neighbour.
_FRONTMATTER_KEYS = frozenset({"name", "description", "type", "metadata", "originSessionId", "paths"})


def second_block_findings(memories: Iterable[Memory]) -> list[Finding]:
    """``frontmatter-second-block``: a ``---`` line in the body opening a block of ``key:
    value`` lines with a memory's keys (``name``, ``description``, ``type``…) closed by ``---``
    — two memories pasted into one file, or an edit that added a new header under the old one.
    The agent reads the first block only; this one is body text to it."""
    from memtui.core.memory.frontmatter import parse_frontmatter

    out: list[Finding] = []
    for mem in memories:
        body = mem.body
        if "---" not in body or mem.body_line <= 1:
            continue  # no first block (none at all, or one hidden by a BOM or blank lines: its own finding)
        lines = body.split("\n")
        for i, line in enumerate(lines):
            if not _FENCE_LINE.match(line) or (i > 0 and lines[i - 1].strip()):
                continue  # `---` under a text line is a setext heading
            fm = parse_frontmatter("\n".join(lines[i:]))
            if not fm.present or fm.error is not None or fm.not_mapping:
                continue
            keys = sorted(k for k in fm.data if str(k) in _FRONTMATTER_KEYS)
            if not keys:
                continue
            shown = ", ".join(f"`{k}`" for k in keys)
            out.append(
                finding(
                    "frontmatter-second-block",
                    mem.relpath,
                    mem.body_line + i,
                    f"a second frontmatter block ({shown}) starts here: the agent reads only the first block at the top; these lines reach it as body text (split the file, or merge the fields into the first block)",
                    keys=keys,
                )
            )
            break
    return out
