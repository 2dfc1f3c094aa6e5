"""What one release of the agent does with its memory, as data.

A ``Flavor`` names the files; its ``Behaviour`` says how the release it models reads them: how a memory's
frontmatter is read, in which order rules load, how the index warning reads, whether and how
recall asks the model and what it injects, what the ``# Memory`` section of the system prompt
says, which settings may move the memory dir. The logic in the core reads these fields and never
asks which flavor it runs for, so the next release of the agent is an edit of data (plus the
captures that prove it), not a hunt through the code.

Two exist: ``memtui.core.places.releases.seed`` (the seed design memtui was built from) and
``memtui.core.places.releases.claude_code`` (Claude Code as it ships: 2.1.332, and 2.1.328 kept as
an older profile). The release's
background work (dream, extraction) is described beside it in ``memtui.core.places.release``
(``Flavor.release``); its long texts live in ``release_data/<release>/``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from string import Template
from typing import Literal

RuleOrder = Literal["sorted", "directory"]
# A settings layer that may name the memory dir: "flag" is the `--settings` file or JSON.
MemoryDirSource = Literal["policy", "flag", "user", "project", "local"]


@dataclass(frozen=True, slots=True)
class MemoryFormat:
    """How the agent reads a memory file's frontmatter.

    ``key``: a stable name (caches of parsed memories are kept per format);
    ``strip_bom``: a UTF-8 BOM before ``---`` is dropped before the block is matched (else the
    file has no frontmatter); ``type_keys``: where the type is read, each a key path into the
    frontmatter mapping, the first one *present* deciding (its value must then be exactly one of
    the four types); ``strings_only``: ``name`` and ``description`` count only as non-empty
    strings (a number or a list is ignored) — else scalars are read as text;
    ``written_type_key``: the form the agent's own instructions tell the model to write the type
    in (so a file in that form is no trap)."""

    key: str
    strip_bom: bool
    type_keys: tuple[tuple[str, ...], ...]
    strings_only: bool
    written_type_key: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class IndexWarning:
    """How the ``MEMORY.md`` truncation warning reads.

    ``names_cut``: the warning says what was cut (``N of M lines were cut off, starting at line
    K ("…")``) instead of only ``Only part of it was loaded.``; ``quote_units``: the cap on the
    quoted first cut line, in UTF-16 units (longer lines are word-cut with ``…``)."""

    names_cut: bool
    quote_units: int = 80


@dataclass(frozen=True, slots=True)
class AgentsMd:
    """The agent's AGENTS.md support (a built-in plugin in Claude Code).

    ``names``: file names looked for in each directory, in order; ``claude_names``: the
    instruction files whose presence makes a directory (or the project) a "CLAUDE.md" one;
    ``settings_path``: where its options live in the user (or ``--settings``) settings;
    ``mode_key`` / ``legacy_key``: the option names; ``modes``: the accepted modes;
    ``default_mode``; ``legacy_modes``: legacy value → mode (any other legacy string reads as
    ``legacy_fallback``); ``lazy_message``: how the nested AGENTS.md files of one read reach
    the model (``$messages``: each file as ``Contents of <path>:\\n\\n<text>``, joined by a
    newline)."""

    names: tuple[str, ...]
    claude_names: tuple[str, ...]
    settings_path: tuple[str, ...]
    mode_key: str
    legacy_key: str
    modes: tuple[str, ...]
    default_mode: str
    legacy_modes: Mapping[str, str]
    legacy_fallback: str
    lazy_message: str


@dataclass(frozen=True, slots=True)
class CloudLayer:
    """A user layer a cloud session fetches instead of reading it from disk (Claude Code
    2.1.332's personal cloud configuration, SPEC §13.1).

    ``env``: the variable that asks for it (any value); ``virtual_root``: the path its files are
    named under (``<personal-cloud-configuration>``), each file ``<virtual_root>/<dot dir>/<name>``;
    ``after_layer``: the layer it is spliced right after (``user``); ``needs``: what else a
    session must have for the fetch to happen (a sentence); ``shadows``: a cloud file replaces
    the same-named file of that layer; ``follows_imports``: ``@`` imports in its files are
    followed; ``max_rules``: the most rules it takes."""

    env: str
    virtual_root: str
    after_layer: str
    needs: str
    shadows: bool = True
    follows_imports: bool = False
    max_rules: int = 200


@dataclass(frozen=True, slots=True)
class Instructions:
    """How the instruction cascade loads and renders.

    ``rule_order``: ``sorted`` (by name) or ``directory`` (the order the directory lists its
    entries, sub-folders walked where they appear); ``labels``: layer → the label of its
    ``Contents of <path> (<label>):`` header; ``loads_team_index``: ``team/MEMORY.md`` joins the
    startup context; ``lazy_message``: how one lazily loaded file reaches the model
    (``$path``, ``$content``), ``None`` when the release shows no text for it;
    ``lazy_content_trimmed``: the lazily loaded text is trimmed like startup text (else sent as
    read, after frontmatter and comment stripping); ``index_warning``; ``agents_md``: ``None``
    when the release reads no AGENTS.md; ``sanitize_index``: the loaded index goes through the
    release's text cleaning (``memtui.core.base.units.agent_sanitize``); ``cloud_layer``: a
    user layer cloud sessions fetch (``None``: the release has none); ``markdown``: the dialect
    that finds HTML blocks, comments and imports (``commonmark``, or ``claude-code``: Claude
    Code's own lexer, ``memtui.core.cascade.html_blocks``, where a paragraph in a list item is
    scanned for imports as written); ``keeps_link_definitions``: ``False`` when the release
    rebuilds a file holding ``<!--`` from its blocks and so loses its link reference
    definitions (Claude Code 2.1.328; 2.1.332 cuts only the comments)."""

    rule_order: RuleOrder
    labels: Mapping[str, str]
    loads_team_index: bool
    lazy_message: str | None
    lazy_content_trimmed: bool
    index_warning: IndexWarning
    agents_md: AgentsMd | None = None
    sanitize_index: bool = False
    cloud_layer: CloudLayer | None = None
    markdown: str = "commonmark"
    keeps_link_definitions: bool = True


@dataclass(frozen=True, slots=True)
class InjectionFormat:
    """The text recall adds to the conversation.

    ``prefix``: put once before the first memory (``""`` for none); ``fresh_header`` /
    ``stale_header``: the header of a memory at most one day old / older (``$path``,
    ``$label`` — today/yesterday —, ``$caveat``); ``wrap``: each memory's message, ``$text``
    standing for ``<header>\\n\\n<content>``; ``joiner``: between the messages as memtui shows
    them; ``sanitize``: each memory's text goes through the release's text cleaning."""

    prefix: str
    fresh_header: str
    stale_header: str
    wrap: str
    joiner: str
    sanitize: bool = False


@dataclass(frozen=True, slots=True)
class RecallGate:
    """Whether the agent recalls at all.

    ``always``: it does (the seed design); else it does when the feature flag ``flag`` is true
    in the agent's cached flags (``cache_keys`` of ``~/.claude.json``, first present wins) or
    the variable ``env`` is non-empty. ``hides_index``: with recall on, ``MEMORY.md`` is not put
    in the context. ``cache_off_env``: variables (telemetry off) under which the agent reads its
    cached flags only when ``cache_keep_env`` is set too (memtui reads them anyway and says so)."""

    always: bool
    flag: str | None = None
    cache_keys: tuple[str, ...] = ()
    env: str | None = None
    hides_index: bool = False
    cache_off_env: tuple[str, ...] = ()
    cache_keep_env: str | None = None

    def off_by_default_note(self) -> str | None:
        """Why the agent's sessions may record no recall at all, in plain words (``"the agent's
        recall is off by default: it runs only when the feature is on for your account"``) when
        it recalls only behind a feature flag (whose name is in :meth:`off_by_default_details`);
        ``None`` when it always recalls."""
        if self.always or not self.flag:
            return None
        return "the agent's recall is off by default: it runs only when the feature is on for your account"

    def off_by_default_details(self) -> str | None:
        """The details behind :meth:`off_by_default_note`: ``"flag <flag> (off by default)"``,
        plus ``", or <env> set"`` when a variable turns it on too; ``None`` when it always
        recalls."""
        if self.always or not self.flag:
            return None
        return f"flag {self.flag} (off by default)" + (f", or {self.env} set" if self.env else "")


@dataclass(frozen=True, slots=True)
class RecallRequest:
    """The selector request.

    ``style``: ``query-first`` (one user message ``Query: …`` + manifest + recent tools) or
    ``conversation`` (the manifest as the first user message, each query as a later one
    ``Select memories relevant to:\\n<query>``, both with ``cache_control``); ``system``: the
    system prompt; ``max_tokens``; ``thinking_budget``: added to ``max_tokens`` for a model that
    does not take disabled thinking (0: none); ``no_thinking_models``: models that take
    ``thinking: {type: disabled}`` (then ``max_tokens`` alone); ``default_model``;
    ``model_env``: a variable naming the model instead; ``fallbacks``: how many other models
    are tried when the API refuses the request, and which (a sentence)."""

    style: Literal["query-first", "conversation"]
    system: str
    max_tokens: int
    default_model: str
    thinking_budget: int = 0
    no_thinking_models: tuple[str, ...] = ()
    model_env: str | None = None
    uses_settings_model: bool = True
    fallbacks: str = ""


@dataclass(frozen=True, slots=True)
class MemoryPrompt:
    """The ``# Memory`` section of the system prompt, per recall mode (``$memory_dir`` is the
    memory dir with a trailing separator)."""

    recall_off: Template
    recall_on: Template


@dataclass(frozen=True, slots=True)
class Behaviour:
    """How one release of the agent loads, reads and recalls memory, as memtui models it.

    ``product`` / ``version``: what is modelled (``version`` ``None`` for the seed design);
    ``version_command``: how the installed version is asked for (``None``: it is not);
    ``memory_dir_sources``: the settings layers that may set ``autoMemoryDirectory``, highest
    priority first, each with whether it counts only in a trusted workspace;
    ``memory_dir_invalid_falls_through``: an invalid value lets the next layer decide (else the
    first layer that sets the key decides, and an invalid value means the default dir);
    ``transcript_types``: the JSONL line types the release writes (others are skipped quietly);
    ``attachment_types``: the attachment kinds memtui reads from its transcripts;
    ``settings_env``: the agent copies each settings file's ``env`` block into its environment,
    over the shell's (so a variable such as the auto-memory switch counts when set there)."""

    product: str
    version: str | None
    version_command: tuple[str, ...] | None
    memory_format: MemoryFormat
    instructions: Instructions
    recall_gate: RecallGate
    recall_request: RecallRequest
    injection: InjectionFormat
    memory_dir_sources: tuple[tuple[MemoryDirSource, bool], ...]
    memory_dir_invalid_falls_through: bool = True
    memory_prompt: MemoryPrompt | None = None
    transcript_types: frozenset[str] = field(default_factory=frozenset)
    attachment_types: frozenset[str] = field(default_factory=frozenset)
    settings_env: bool = False

    @property
    def title(self) -> str:
        """``Claude Code 2.1.332``, or the product alone when it has no version."""
        return f"{self.product} {self.version}" if self.version else self.product
