"""How the Cascade pane draws a computed cascade: markers, tree labels, and the detail of a
file, a layer, the nested files or a simulated read. Pure functions from core data to rich
renderables."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from rich.console import Group, RenderableType
from rich.rule import Rule
from rich.table import Table
from rich.text import Text

from memtui.core.base.terminal import visible, visible_block
from memtui.core.base.diagnostics import Diagnostic
from memtui.core.base.source_lines import SourceLines
from memtui.core.cascade import LABELS, Cascade, CascadeFile, Layer, NestedListing, ReadStep, Status
from memtui.tui.theme import SEVERITY_ICON, SEVERITY_STYLE, assemble, styled, tone

MUTED = "$muted"

# Marker groups: (glyph, style, legend word). Every Status maps to one group.
MARKERS: dict[str, tuple[str, str, str]] = {
    "loaded": ("●", "$success", "loaded"),
    "conditional": ("◇", "$note", "conditional"),
    "pending": ("!", "bold $warning", "pending"),
    "duplicate": ("≡", "$special", "duplicate"),
    "missing": ("✕", "$error", "missing"),
    "skipped": ("⊘", MUTED, "skipped"),
    "nested": ("○", MUTED, "nested"),
}
_GROUP: dict[Status, str] = {
    "loaded": "loaded",
    "conditional": "conditional",
    "pending-approval": "pending",
    "duplicate": "duplicate",
    "cycle": "duplicate",
    "already-loaded": "duplicate",
    "missing": "missing",
    "unreadable": "missing",
    "nested": "nested",
}
LAYER_NAMES: dict[Layer, str] = {
    "managed": "Managed",
    "user": "User",
    "project": "Project",
    "local": "Local",
    "automem": "Auto memory",
    "teammem": "Team memory",
}
LAYER_ORDER: tuple[Layer, ...] = ("managed", "user", "project", "local", "automem", "teammem")


def marker(status: Status) -> tuple[str, str]:
    """The glyph and style of a file's status (skipped for any status without its own)."""
    glyph, style, _ = MARKERS[_GROUP.get(status, "skipped")]
    return glyph, style


# Short status words for tree labels (the detail shows the full reason).
STATUS_WORDS: dict[Status, str] = {"pending-approval": "pending", "external-lazy": "external, lazy", "worktree-skipped": "worktree"}


def status_word(status: Status) -> str:
    """``status`` as a word or two."""
    return STATUS_WORDS.get(status, status.replace("-", " "))


def legend(compact: bool = False) -> Text:
    """One line naming every marker; ``compact`` for narrow terminals (without the nested
    marker).

    Spaces trail the styled run before them: some SVG rasterizers drop a run's leading
    spaces."""
    gap = " " if compact else "  "
    parts: list[tuple[str, str] | str] = []
    for group, (glyph, style, word) in MARKERS.items():
        if compact and group == "nested":
            continue  # no room at 80 columns; a nested file's row says in words when it loads
        parts += [(glyph + " ", style), (word + gap, MUTED)]
    parts += [("▲ ", SEVERITY_STYLE["warning"]), ("findings", MUTED)]
    if not compact:
        parts += [(gap, MUTED), ("+ ", "bold $success"), ("added by a read", MUTED)]
    return assemble(*parts)


def display_path(path: str | Path, cwd: Path) -> str:
    """``path`` as the pane shows it: relative to ``cwd`` when inside it, ``~/…`` under the
    home directory, else absolute."""
    p = Path(path)
    try:
        return visible(p.relative_to(cwd).as_posix())
    except ValueError:
        return home_path(p)


def home_path(path: str | Path) -> str:
    """The full path, with the home directory written as ``~`` (control characters shown as
    escapes: a display string, never a path to open)."""
    p = Path(path)
    try:
        return visible("~/" + p.relative_to(Path.home()).as_posix())
    except ValueError:
        return visible(str(p))


def tree_name(entry: CascadeFile, cwd: Path, memory_dir: Path) -> str:
    """The short name of ``entry`` in the tree: the index files relative to the memory dir
    (their layer says which), a cloud-only placeholder as ``cloud: <name>`` (its detail gives
    the virtual path), everything else by ``display_path``."""
    if entry.status == "cloud-only":
        name = entry.path.partition("/")[2]  # <virtual root>/<dot dir>/<name>
        return visible(f"cloud: {name.partition('/')[2] or name}")
    if entry.layer in ("automem", "teammem"):
        try:
            return visible(Path(entry.path).relative_to(memory_dir).as_posix())
        except ValueError:
            pass
    return display_path(entry.path, cwd)


def size_text(chars: int, tokens: int) -> str:
    """``1,234 ch · ~309 tok``."""
    return f"{chars:,} ch · ~{tokens:,} tok"


def problems(diagnostics: Iterable[Diagnostic]) -> int:
    """How many findings are warnings or errors."""
    return sum(1 for d in diagnostics if d.severity != "info")


def file_label(entry: CascadeFile, name: str, *, added: bool = False, compact: bool = False) -> Text:
    """A tree label: marker, name, size (loaded) or status, and a findings count.
    ``compact`` (narrow terminals): tokens only, and the marker alone says the status."""
    glyph, style = ("+", "bold $success") if added else marker(entry.status)
    text = assemble((glyph + " ", style), (name + "  ", "bold" if entry.loaded and entry.depth == 0 else ""))
    if entry.loaded:
        text.append(f"~{entry.tokens_est:,} tok" if compact else size_text(entry.chars, entry.tokens_est), tone(MUTED))
    elif not compact:
        text.append(status_word(entry.status), tone(style if style != MUTED else "italic " + MUTED))
    count = problems(entry.diagnostics)
    if count:
        text.append("  ")
        text.append(f"▲{count}", tone(SEVERITY_STYLE["warning"]))
    return text


def nested_label(entry: CascadeFile, name: str, *, loaded_by: int | None = None, compact: bool = False) -> Text:
    """A nested file's tree label, muted: its marker, name and the read that loads it
    (``loads when Claude reads a file under sub/``). Once simulated read ``loaded_by`` (an
    index) loaded it: the added marker, its size and that read. A nested file that would not
    load (excluded, empty…) is labelled like any file."""
    if loaded_by is not None:
        text = assemble(("+ ", "bold $success"), (name + "  ", "bold" if entry.depth == 0 else ""))
        size = f"~{entry.tokens_est:,} tok" if compact else size_text(entry.chars, entry.tokens_est)
        text.append(f"{size} · read {loaded_by + 1}", tone(MUTED))
    elif entry.status == "nested":
        glyph, style = marker(entry.status)
        text = assemble((glyph + " ", style), (name + "  ", MUTED), (visible(entry.loads_when), "italic " + MUTED))
    else:
        return file_label(entry, name, compact=compact)
    count = problems(entry.diagnostics)
    if count:
        text.append("  ")
        text.append(f"▲{count}", tone(SEVERITY_STYLE["warning"]))
    return text


def nested_section_label(listing: NestedListing, *, compact: bool = False) -> Text:
    """The nested files' node: how many, and that a read loads them; says when the search
    stopped short."""
    text = assemble(("Nested  ", "bold"))
    count = sum(1 for f in listing.files if f.depth == 0)
    if not listing.files:
        text.append("none below the project" if listing.complete else "none found", tone("italic " + MUTED))
    else:
        files, load = ("1 file", "loads") if count == 1 else (f"{count} files", "load")
        text.append(files if compact else f"{files} · {load} on a read", tone(MUTED))
    if not listing.complete:
        text.append("  ")
        text.append("search cut short" if compact else f"search cut short: {listing.stopped}", tone("$warning"))
    return text


def nested_detail(listing: NestedListing, agent: str) -> RenderableType:
    """What the nested files are, how many, and how far memtui searched for them."""
    grid = _grid()
    roots = [f for f in listing.files if f.depth == 0]
    folders = {Path(f.path).parent for f in roots}
    grid.add_row("what", f"instruction files in the project's sub-folders: {agent} loads each the first time it reads a file under its folder, once per session")
    waiting = sum(1 for f in roots if f.status == "nested")
    grid.add_row("files", f"{len(roots)} in {len(folders)} folder{'s' if len(folders) != 1 else ''} · {waiting} would load" if roots else "none")
    if waiting:
        tokens = sum(f.tokens_est for f in listing.files if f.status == "nested")
        chars = sum(f.chars for f in listing.files if f.status == "nested")
        grid.add_row("size", f"{size_text(chars, tokens)} if every folder is read (imports included)")
    searched = f"{listing.folders:,} folder{'s' if listing.folders != 1 else ''}, skipping symlinked folders, dependency folders, virtual environments, caches and what .gitignore ignores"
    grid.add_row("searched", searched)
    parts: list[RenderableType] = [grid]
    if not listing.complete:
        parts.append(styled(f"\n{listing.stopped}: nested files further down are not listed here, though a read there still loads them", style="$warning"))
    parts.append(styled("\nType a path under one of these folders in the box above ( / ) to see what the read adds.", style=MUTED))
    return Group(*parts)


def parts_text(cascade: Cascade, *, compact: bool = False, bare: bool = False) -> str:
    """The context's size as its parts add up: the files' text (what the rows sum to), the
    headers and preamble the agent adds, the total. ``compact``: shortest labels; ``bare``: the
    numbers alone (where nothing longer fits)."""
    files, framing, total = cascade.files_chars, cascade.framing_chars, cascade.total_chars
    if bare:
        return f"{files:,}+{framing:,}={total:,} ch · ~{cascade.total_tokens_est:,} tok"
    if compact:
        return f"files {files:,} + hdr {framing:,} = {total:,} ch · ~{cascade.total_tokens_est:,} tok"
    return f"files {files:,} + headers/preamble {framing:,} = {total:,} ch · ~{cascade.total_tokens_est:,} tok"


def layer_label(layer: Layer, files: Sequence[CascadeFile], *, compact: bool = False, empty: str = "no files") -> Text:
    """A layer node: its name, how many files load and their size (tokens only when ``compact``);
    ``empty``: what a layer without files says."""
    loaded = [f for f in files if f.loaded]
    text = assemble((LAYER_NAMES[layer] + "  ", "bold"))
    if not files:
        text.append(empty, tone("italic " + MUTED))
        return text
    summary = f"{len(loaded)} loaded"
    tokens = sum(f.tokens_est for f in loaded)
    if loaded:
        summary += f" · ~{tokens:,} tok" if compact else f" · {size_text(sum(f.chars for f in loaded), tokens)}"
    text.append(summary, tone(MUTED))
    return text


def step_label(index: int, step: ReadStep, cwd: Path, *, compact: bool = False) -> Text:
    """A read node: its number, target and how many files it added (the detail has sizes)."""
    text = assemble((f"read {index + 1} ", "bold $note"), (display_path(step.target, cwd) + "  ", "bold"))
    if step.added:
        files = "file" if len(step.added) == 1 else "files"
        text.append(f"+{len(step.added)}" if compact else f"+{len(step.added)} {files}", tone("$success"))
    else:
        text.append("+0" if compact else "adds nothing", tone("italic " + MUTED))
    return text


def _grid() -> Table:
    grid = Table.grid(padding=(0, 1))
    grid.add_column(style=tone(MUTED), no_wrap=True)
    grid.add_column(overflow="fold")
    return grid


def diagnostics_table(diagnostics: Sequence[Diagnostic], cwd: Path, *, focus_line: int | None = None) -> Table:
    """The findings, one per row: icon, code, line, message (the ``focus_line`` one bold)."""
    table = Table.grid(padding=(0, 1))
    table.add_column(no_wrap=True)
    table.add_column(overflow="fold")
    for d in diagnostics:
        where = f" · line {d.line}" if d.line else ""
        focused = focus_line is not None and d.line == focus_line
        table.add_row(
            styled(SEVERITY_ICON[d.severity], style=SEVERITY_STYLE[d.severity]),
            assemble((d.code + " ", SEVERITY_STYLE[d.severity]), (visible(where.lstrip()), MUTED), "\n", (visible(d.message), "bold" if focused else "")),
        )
    return table


def source_excerpt(source: SourceLines, cwd: Path) -> RenderableType:
    """The lines around a finding's line, numbered, the line itself highlighted."""
    where = display_path(source.path, cwd)
    if source.error is not None:
        return styled(f"cannot read {where}: {source.error}", style=MUTED)
    if source.past_end:
        return styled(f"line {source.line} is past the end of {where}", style=MUTED)
    table = Table.grid(padding=(0, 1))
    table.add_column(justify="right", style=tone(MUTED), no_wrap=True)
    table.add_column(overflow="fold")
    for number, line in enumerate(source.lines, start=source.first):
        here = number == source.line
        table.add_row(
            styled(f"{'▶' if here else ' '}{number}", style="bold $warning" if here else MUTED),
            styled(visible(line.expandtabs(4)) or " ", style="bold on $line-focus" if here else ""),
        )
    return Group(styled(f"{where}, line {source.line}", style=MUTED), table)


def content_block(entry: CascadeFile) -> RenderableType:
    """The text the model receives for ``entry`` (or why there is none), under a rule."""
    if entry.content:
        title = "what the model receives" if entry.loaded else "what it would add"
        body: Text = Text(visible_block(entry.content))
    elif entry.status == "cloud-only":
        title = "content"
        body = styled("fetched by a cloud session only: memtui cannot see it", style="italic " + MUTED)
    else:
        title = "content"
        body = styled("nothing: this file is not part of the context", style="italic " + MUTED)
    return Group(Rule(styled(title, style=MUTED), style=tone(MUTED), align="left"), body)


@dataclass(frozen=True, slots=True)
class FileContext:
    """What the detail of one file needs besides the file: the cwd, the memory dir, which
    read loaded it (for a conditional rule), the line a finding points at and the lines
    around it (read off the UI thread)."""

    cwd: Path
    memory_dir: Path
    loaded_by: str | None = None
    focus_line: int | None = None
    added_by_read: str | None = None
    source: SourceLines | None = None


def file_detail(entry: CascadeFile, ctx: FileContext) -> RenderableType:
    """The fields, findings, source excerpt and content of one file."""
    cwd = ctx.cwd
    glyph, style = marker(entry.status)
    grid = _grid()
    status = assemble((f"{glyph} {entry.status.replace('-', ' ')}", style))
    if ctx.added_by_read:
        status = assemble(("+ loaded ", "bold $success"), (f"by {ctx.added_by_read}", MUTED))
    elif ctx.loaded_by:
        status = assemble((f"{glyph} {entry.status.replace('-', ' ')} ", style), (f"· loaded later by {ctx.loaded_by}", "$success"))
    grid.add_row("status", status)
    grid.add_row("why", Text(visible(entry.reason or "—")))
    grid.add_row("layer", assemble((LAYER_NAMES[entry.layer] + " ", "bold"), (f"· {entry.kind}", MUTED)))
    if entry.chars:
        grid.add_row("size", f"{entry.chars:,} characters · ~{entry.tokens_est:,} tokens")
    grid.add_row("path", Text(home_path(entry.path)))
    if entry.parent:
        line = f", line {entry.line}" if entry.line else ""
        grid.add_row("imported by", f"{display_path(entry.parent, cwd)}{line} (depth {entry.depth})")
    if entry.patterns:
        grid.add_row("paths", styled(", ".join(entry.patterns), style="$note"))
    parts: list[RenderableType] = [grid]
    if entry.diagnostics:
        parts += [Text(""), diagnostics_table(entry.diagnostics, cwd, focus_line=ctx.focus_line)]
    if ctx.source is not None:
        parts += [Text(""), source_excerpt(ctx.source, cwd)]
    parts += [Text(""), content_block(entry)]
    return Group(*parts)


def layer_detail(layer: Layer, files: Sequence[CascadeFile], cascade: Cascade) -> RenderableType:
    """A layer run: what its files are labelled as, counts and totals, the approval state."""
    loaded = [f for f in files if f.loaded]
    grid = _grid()
    grid.add_row("layer", styled(LAYER_NAMES[layer], style="bold"))
    grid.add_row("label", styled(f"({LABELS[layer]})", style="italic"))
    if layer in cascade.layer_notes:
        grid.add_row("what", visible(cascade.layer_notes[layer]))
    on_disk = [f for f in files if f.status != "cloud-only"]
    grid.add_row("files", f"{len(loaded)} loaded of {len(on_disk)} considered" + (f" · {len(files) - len(on_disk)} cloud-only placeholders" if len(on_disk) < len(files) else ""))
    if loaded:
        grid.add_row("size", f"{sum(f.chars for f in loaded):,} characters · ~{sum(f.tokens_est for f in loaded):,} tokens")
    if layer in ("managed", "project", "local"):
        approval = cascade.external_approval
        state = "approved" if approval.approved else (approval.decision or "pending approval")
        grid.add_row("external", f"imports outside the cwd: {state} ({approval.source})")
    parts: list[RenderableType] = [grid]
    for note in cascade.notes:
        parts.append(styled(f"\nnote: {note}", style=MUTED))
    return Group(*parts)


def step_detail(index: int, step: ReadStep, cwd: Path) -> RenderableType:
    """One simulated read: the files it added (with why), and what it found already loaded."""
    grid = _grid()
    grid.add_row("target", styled(display_path(step.target, cwd), style="bold"))
    chars = sum(f.chars for f in step.added)
    tokens = sum(f.tokens_est for f in step.added)
    files = "file" if len(step.added) == 1 else "files"
    grid.add_row("adds", f"{len(step.added)} {files} · {size_text(chars, tokens)}" if step.added else styled("nothing new", style="italic"))
    parts: list[RenderableType] = [grid]
    for entry in step.added:
        parts.append(assemble(("\n+ ", "bold $success"), (display_path(entry.path, cwd), "bold"), "\n", ("  " + visible(entry.reason), MUTED)))
    if step.considered:
        parts.append(styled("\nmatched but not added", style=MUTED))
        for entry in step.considered:
            glyph, style = marker(entry.status)
            parts.append(assemble((f"{glyph} ", style), display_path(entry.path, cwd), "\n", ("  " + visible(entry.reason), MUTED)))
    if step.messages:
        parts.append(styled("\nas the model receives it", style=MUTED))
        parts.extend(Text(visible_block(message)) for message in step.messages)
    if step.diagnostics:
        parts += [Text(""), diagnostics_table(step.diagnostics, cwd)]
    return Group(*parts)


# ----- what a tree node holds ---------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class LayerNode:
    """A run of consecutive files of one layer (Project and Local alternate per directory)."""

    layer: Layer
    files: tuple[CascadeFile, ...]


@dataclass(frozen=True, slots=True)
class FileNode:
    """One file; ``read`` is the index of the read step that added it (``None``: startup);
    ``nested``: listed among the nested files (loads on a read under its folder)."""

    entry: CascadeFile
    read: int | None = None
    nested: bool = False


@dataclass(frozen=True, slots=True)
class NestedNode:
    """The nested files below the project, before any read."""

    listing: NestedListing


@dataclass(frozen=True, slots=True)
class StepNode:
    """One simulated read."""

    index: int


NodeData = LayerNode | FileNode | NestedNode | StepNode | None


def node_key(data: NodeData) -> tuple[object, ...] | None:
    """A key that finds the same node again after the tree is rebuilt."""
    if isinstance(data, FileNode):
        return ("file", data.read, data.entry.path, data.entry.parent, data.nested)
    if isinstance(data, NestedNode):
        return ("nested",)
    if isinstance(data, LayerNode):
        return ("layer", data.layer, data.files[0].path if data.files else "")
    if isinstance(data, StepNode):
        return ("step", data.index)
    return None


def layer_runs(files: Iterable[CascadeFile]) -> list[tuple[Layer, list[CascadeFile]]]:
    """Files in load order, cut into runs of one layer; layers with no file get an empty run
    in their place so the tree always names all six."""
    runs: list[tuple[Layer, list[CascadeFile]]] = []
    for f in files:
        if runs and runs[-1][0] == f.layer:
            runs[-1][1].append(f)
        else:
            runs.append((f.layer, [f]))
    present = {layer for layer, _ in runs}
    out: list[tuple[Layer, list[CascadeFile]]] = []
    emitted: set[Layer] = set()
    for layer, run in runs:
        for empty in LAYER_ORDER[: LAYER_ORDER.index(layer)]:
            if empty not in present and empty not in emitted:
                out.append((empty, []))
                emitted.add(empty)
        out.append((layer, run))
        emitted.add(layer)
    out += [(layer, []) for layer in LAYER_ORDER if layer not in present and layer not in emitted]
    return out
