"""The data the cascade computation returns (docs/behaviour.md §3): files in load order, reads, rendering.

Everything here is plain data: the TUI, the CLI's ``--json`` and other core modules read it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from memtui.core.base.diagnostics import Diagnostic
from memtui.core.base.units import estimate_tokens, utf16_len

Layer = Literal["managed", "user", "project", "local", "automem", "teammem"]
Kind = Literal["instructions", "rule", "import", "index"]
# Why a file is (not) part of the context. Stable strings: the TUI picks markers from them.
Status = Literal[
    "loaded",  # in the context
    "conditional",  # a conditional rule waiting for a matching read
    "excluded",  # matched the excludes setting
    "empty",  # whitespace-only: dropped, its imports not followed
    "binary",  # binary extension: skipped
    "missing",  # an import target that does not exist
    "unreadable",  # exists but cannot be read (permissions, a directory)
    "pending-approval",  # external import waiting for the project's approval
    "declined",  # external import the project declined
    "external-lazy",  # external import of a lazily loaded file: never followed
    "duplicate",  # already loaded earlier in this load (first occurrence wins)
    "cycle",  # imports one of its own ancestors
    "depth-limit",  # past the import depth limit
    "worktree-skipped",  # main-repo Project file outside the nested worktree
    "already-loaded",  # a lazy read found it already in the session
    "dropped",  # dropped by the release's AGENTS.md support (managed-only mode)
    "hidden-by-recall",  # the index is left out because the agent recalls memories instead
    "nested",  # a nested file below the cwd: waits for a read under its folder
    "cloud-only",  # a placeholder for a file only a cloud session fetches (never on disk)
]
ApprovalSource = Literal["argument", "memtui", "claude.json", "default"]


@dataclass(slots=True)
class CascadeFile:
    """One file the agent loaded, or considered and skipped.

    ``path``: absolute path as the agent names it (rules by their realpath, like the
    reference); ``parent``: the importing file for imports, else ``None``; ``depth``: 0 for
    a root file, +1 per import hop; ``conditional``/``patterns``: the rule's ``paths:`` globs
    (after splitting, brace expansion and dropping ``/**``); ``loaded``: in the context;
    ``status``/``reason``: why (a ``Status`` and a sentence); ``content``: the text as the
    model receives it at startup (frontmatter and block comments stripped, trimmed); ``body``:
    the same text before trimming (what a lazy load sends in Claude Code); ``chars``: its
    length in UTF-16 code units (the agent's measure); ``tokens_est``: estimated tokens;
    ``line``: for imports, the line of the ``@`` in the parent; ``diagnostics``: findings
    about this file; ``loads_when``: for a nested file, the read that loads it, in words
    (``loads when Claude reads a file under sub/``), else ``""``.
    """

    path: str
    layer: Layer
    kind: Kind
    parent: str | None
    depth: int
    loaded: bool
    status: Status
    reason: str
    conditional: bool = False
    patterns: tuple[str, ...] = ()
    content: str = ""
    chars: int = 0
    tokens_est: int = 0
    line: int | None = None
    diagnostics: list[Diagnostic] = field(default_factory=list)
    body: str = ""
    loads_when: str = ""

    def to_json(self) -> dict[str, Any]:
        """The CLI's JSON shape (content left out; ``rendered`` carries the text)."""
        return {
            "path": self.path,
            "layer": self.layer,
            "kind": self.kind,
            "parent": self.parent,
            "depth": self.depth,
            "conditional": self.conditional,
            "patterns": list(self.patterns),
            "loaded": self.loaded,
            "status": self.status,
            "reason": self.reason,
            "chars": self.chars,
            "tokens_est": self.tokens_est,
            "line": self.line,
        }


@dataclass(frozen=True, slots=True)
class PendingImport:
    """An external import skipped until the project approves external imports.

    ``path``: the resolved target; ``imported_by``: the importing file; ``line``: 1-based line
    of the ``@`` in it; ``layer``: the importing file's layer.
    """

    path: str
    imported_by: str
    line: int | None
    layer: Layer

    def to_json(self) -> dict[str, Any]:
        """``{path, imported_by, line, layer}``."""
        return {"path": self.path, "imported_by": self.imported_by, "line": self.line, "layer": self.layer}


@dataclass(frozen=True, slots=True)
class ExternalApproval:
    """The project's decision on external imports and where it came from.

    ``approved``: what the computation used; ``decision``: the recorded decision
    (``None`` = never decided: imports are *pending*); ``source``: ``"argument"`` (the
    caller forced it), ``"memtui"`` (memtui's state), ``"claude.json"`` (claude flavor's
    ``hasClaudeMdExternalIncludesApproved``) or ``"default"``; ``project_key``: the project
    path decisions are keyed on (canonical git root, else cwd).
    """

    approved: bool
    decision: Literal["approved", "declined"] | None
    source: ApprovalSource
    project_key: str


@dataclass(slots=True)
class ReadStep:
    """What one simulated read of ``target`` added (docs/behaviour.md §3.5).

    ``tool``: ``Read``/``Write``/``Edit`` (``Bash`` reads load nothing); ``added``: the
    files newly loaded, in order; ``considered``: files that matched but were already in the
    session (status ``already-loaded``) or were skipped; ``diagnostics``: findings of this step;
    ``texts``: the text of each added file as the release sends it; ``messages``: the messages
    the read adds as the model receives them; ``renders``: the release says how a lazy load
    reaches the model (``messages`` and ``rendered`` are in the JSON only then).
    """

    target: str
    tool: str
    added: list[CascadeFile] = field(default_factory=list)
    considered: list[CascadeFile] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)
    messages: list[str] = field(default_factory=list)
    renders: bool = False

    @property
    def rendered(self) -> str:
        """The messages this read adds, one after the other (blank-line separated)."""
        return "\n\n".join(self.messages)

    def to_json(self) -> dict[str, Any]:
        """``{target, tool, added: [path], added_files: [... + content], skipped: [...],
        diagnostics, messages, rendered}``: ``added_files[i].content`` is the text of that file
        as the release sends it; ``messages`` the messages the read adds, in order."""
        files = []
        for i, f in enumerate(self.added):
            item = f.to_json()
            item["content"] = self.texts[i] if i < len(self.texts) else f.content
            files.append(item)
        out: dict[str, Any] = {
            "target": self.target,
            "tool": self.tool,
            "added": [f.path for f in self.added],
            "added_files": files,
            "skipped": [f.to_json() for f in self.considered],
            "diagnostics": [d.to_json() for d in self.diagnostics],
        }
        if self.renders:
            out["messages"] = list(self.messages)
            out["rendered"] = self.rendered
        return out


@dataclass(slots=True)
class SessionState:
    """A simulated session: the paths already in the agent's context (startup files and
    every file loaded by an earlier read, plus the read targets themselves)."""

    loaded_paths: set[str] = field(default_factory=set)
    steps: list[ReadStep] = field(default_factory=list)


@dataclass(slots=True)
class NestedListing:
    """The nested instruction files below the cwd, before any read.

    ``files``: folder by folder (sorted by path, a folder before the folders in it), each
    folder's files in the order a read loads them (``AGENT.md``, ``.agent/AGENT.md``,
    ``AGENT.local.md``, the rules), each followed by its imports. A file that would load has
    status ``nested`` and ``loads_when`` (``loads when Claude reads a file under sub/``); one
    that would not keeps its reason (excluded, empty, …). ``folders``: folders searched;
    ``complete``: the search reached every folder it meant to (``stopped`` says why not).
    """

    files: list[CascadeFile] = field(default_factory=list)
    folders: int = 0
    complete: bool = True
    stopped: str = ""

    def to_json(self) -> dict[str, Any]:
        """``{files: [... + loads_when], folders, complete, stopped}``."""
        return {
            "files": [{**f.to_json(), "loads_when": f.loads_when} for f in self.files],
            "folders": self.folders,
            "complete": self.complete,
            "stopped": self.stopped,
        }


@dataclass(slots=True)
class Cascade:
    """The whole computed cascade for one cwd.

    ``files``: every file loaded or skipped at startup, in load order; ``pending_external_imports``;
    ``diagnostics``: every finding (each also on its file); ``reads``: the simulated reads;
    ``rendered``: the exact text the model receives (docs/behaviour.md §3.6); ``notes``: display notes
    (e.g. the rule sort order); ``context``: what ``simulate_read`` needs to continue;
    ``memory_prompt``: the ``# Memory`` section of the system prompt as the release builds it
    (``""`` when auto memory is off or the release's prompt is not modelled); ``recall``: the
    release's recall gate for this user (``memtui.core.places.agentconfig.RecallState``);
    ``release``: the release modelled (``Claude Code 2.1.328``); ``agents_md_mode``: the
    AGENTS.md mode in effect (``None`` when the release reads no AGENTS.md); ``layer_notes``:
    layer -> one sentence on what it is for this release (the team memory layer);
    ``nested``: the nested instruction files below the cwd, which load only on a read under
    their folder (``None``: not searched for).
    """

    cwd: Path
    flavor: str
    files: list[CascadeFile]
    pending_external_imports: list[PendingImport]
    diagnostics: list[Diagnostic]
    reads: list[ReadStep]
    rendered: str
    external_approval: ExternalApproval
    notes: list[str]
    context: Any = field(default=None, repr=False)
    memory_prompt: str = ""
    recall: Any = None
    release: str = ""
    agents_md_mode: str | None = None
    # layer -> what the layer is, when its name does not say it (team memory), for this release
    layer_notes: dict[str, str] = field(default_factory=dict)
    # the nested files below the cwd, when asked for (``compute_cascade(nested=True)``)
    nested: NestedListing | None = None

    @property
    def loaded_files(self) -> list[CascadeFile]:
        """The files in the startup context, in order."""
        return [f for f in self.files if f.loaded]

    @property
    def considered_files(self) -> list[CascadeFile]:
        """The files the agent looks at on this machine, in order: ``files`` without the
        placeholders of files only a cloud session fetches (status ``cloud-only``)."""
        return [f for f in self.files if f.status != "cloud-only"]

    @property
    def total_chars(self) -> int:
        """Length of ``rendered`` in UTF-16 code units."""
        return utf16_len(self.rendered)

    @property
    def files_chars(self) -> int:
        """The loaded files' own text (the sum of their ``chars``, UTF-16 code units): the part
        of ``total_chars`` the file rows account for."""
        return sum(f.chars for f in self.loaded_files)

    @property
    def framing_chars(self) -> int:
        """What the agent adds around the files (UTF-16 code units): the preamble, each file's
        ``Contents of <path> (<label>):`` header, the blank lines between blocks, the team
        memory wrapper. ``files_chars + framing_chars == total_chars``."""
        return self.total_chars - self.files_chars

    @property
    def total_tokens_est(self) -> int:
        """Estimated tokens of ``rendered``."""
        return estimate_tokens(self.rendered)

    def changes_since(self, before: Cascade) -> str:
        """One line on what differs from ``before`` (an earlier computation for the same cwd):
        files loaded that were not, no longer loaded, loaded with other text, and the size of
        the context; ``"nothing changed"`` when the model would receive the same text."""
        # the nested files count only when both computations searched for them
        both = before.nested is not None and self.nested is not None
        old_nested = {f.path for f in before.nested.files} if both and before.nested is not None else set()
        new_nested = {f.path for f in self.nested.files} if both and self.nested is not None else set()
        if (
            before.rendered == self.rendered
            and [f.status for f in before.files] == [f.status for f in self.files]
            and old_nested == new_nested
        ):
            return "nothing changed"
        old = {f.path: f.content for f in before.loaded_files}
        new = {f.path: f.content for f in self.loaded_files}
        parts = []
        for word, paths in (
            ("now loaded", sorted(new.keys() - old.keys())),
            ("no longer loaded", sorted(old.keys() - new.keys())),
            ("changed", sorted(p for p in new.keys() & old.keys() if new[p] != old[p])),
            ("nested now listed", sorted(new_nested - old_nested)),
            ("nested no longer listed", sorted(old_nested - new_nested)),
        ):
            if paths:
                parts.append(f"{len(paths)} {word} ({', '.join(Path(p).name for p in paths[:2])}{f' +{len(paths) - 2}' if len(paths) > 2 else ''})")
        parts.append(f"{before.total_chars:,} → {self.total_chars:,} ch")
        return ", ".join(parts)

    def to_json(self) -> dict[str, Any]:
        """The ``memtui cascade --json`` shape."""
        return {
            "cwd": str(self.cwd),
            "flavor": self.flavor,
            "files": [f.to_json() for f in self.files],
            "pending_external_imports": [p.to_json() for p in self.pending_external_imports],
            "external_imports": {
                "approved": self.external_approval.approved,
                "decision": self.external_approval.decision,
                "source": self.external_approval.source,
                "project": self.external_approval.project_key,
            },
            "diagnostics": [d.to_json() for d in self.diagnostics],
            "reads": [r.to_json() for r in self.reads],
            "rendered": self.rendered,
            "total_chars": self.total_chars,
            "files_chars": self.files_chars,
            "framing_chars": self.framing_chars,
            "total_tokens_est": self.total_tokens_est,
            "notes": list(self.notes),
            "release": self.release,
            "memory_prompt": self.memory_prompt,
            "recall": None if self.recall is None else {"on": self.recall.on, "source": self.recall.source, "reason": self.recall.reason},
            "agents_md_mode": self.agents_md_mode,
            **({"nested": self.nested.to_json()} if self.nested is not None else {}),
        }
