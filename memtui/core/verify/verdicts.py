"""The shape of Claude's answer when it judges conflicts (``memtui.core.verify.judge``): a
pydantic model for structured output, in a module of its own so that pydantic is imported only
when a request is sent."""

from __future__ import annotations

import pydantic


class Verdict(pydantic.BaseModel):
    """The judgement of one pair."""

    pair: int
    contradiction: bool
    subject: str
    older_value: str
    newer_value: str
    explanation: str


class Verdicts(pydantic.BaseModel):
    """One verdict per numbered pair."""

    verdicts: list[Verdict]
