"""What the memory index costs per session: the tokens of every AutoMem index a session and each of
its sub-agents loaded, read from their own transcripts (never from today's ``MEMORY.md``).

Claude Code 2.1.332 gives a general-purpose sub-agent its own copy of the whole index (an
``instructions`` attachment in ``<session>/subagents/agent-<id>.jsonl``); ``Explore`` and
``Plan`` get none (``omitClaudeMd``). A session that loads the index twice (after a compaction)
pays twice: every load counts.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from memtui.core.audit.tokens import Count, TokenCounter
from memtui.core.stores.evidence import SessionEvidence


@dataclass(frozen=True, slots=True)
class AgentCost:
    """One transcript's index loads: ``agent`` (a sub-agent's id, ``None`` for the session
    itself), ``agent_type`` (its ``agentType``), ``loads`` (how many indexes it loaded) and
    ``tokens`` (their sum; ``Count.exact`` false when estimated)."""

    agent: str | None
    agent_type: str | None
    loads: int
    tokens: Count

    def to_json(self) -> dict[str, Any]:
        """``{agent, type, loads, tokens, exact}``."""
        return {"agent": self.agent, "type": self.agent_type, "loads": self.loads, "tokens": self.tokens.tokens, "exact": self.tokens.exact}


@dataclass(frozen=True, slots=True)
class SessionCost:
    """One session: ``session`` id, ``time`` (ISO, its first line), ``cwd``, ``agents`` (the
    session itself first, then its sub-agents, oldest first) and ``total``."""

    session: str
    time: str | None
    cwd: str | None
    agents: tuple[AgentCost, ...]
    total: Count

    def to_json(self) -> dict[str, Any]:
        """The cost as a JSON object (``total`` as ``{tokens, exact}``)."""
        return {
            "session": self.session,
            "time": self.time,
            "cwd": self.cwd,
            "total": {"tokens": self.total.tokens, "exact": self.total.exact},
            "agents": [a.to_json() for a in self.agents],
        }


def _cost(ev: SessionEvidence, counter: TokenCounter) -> AgentCost:
    total = Count(0, True)
    for index in ev.loaded:
        total = total + counter.count(index.content)
    return AgentCost(ev.agent_id, ev.agent_type, len(ev.loaded), total)


def index_costs(sessions: Sequence[SessionEvidence], subagents: Sequence[SessionEvidence], counter: TokenCounter) -> list[SessionCost]:
    """The index cost of each session of ``sessions`` with its sub-agents (``subagents``
    matched by session id), in the order of ``sessions``."""
    by_session: dict[str, list[SessionEvidence]] = {}
    for ev in subagents:
        by_session.setdefault(ev.session_id, []).append(ev)
    out: list[SessionCost] = []
    for ev in sessions:
        agents = [_cost(ev, counter), *(_cost(sub, counter) for sub in by_session.get(ev.session_id, []))]
        total = Count(0, True)
        for a in agents:
            total = total + a.tokens
        out.append(SessionCost(ev.session_id, ev.first_time, ev.cwd, tuple(agents), total))
    return out
