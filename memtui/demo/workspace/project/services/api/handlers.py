"""Admin API: operators inspect and replay ingest batches."""

from __future__ import annotations

from datetime import datetime

from fastapi import APIRouter, Depends
from pydantic import BaseModel

from acme_ingest.auth import require_operator
from acme_ingest.store import list_batches

router = APIRouter(dependencies=[Depends(require_operator)])


class Batch(BaseModel):
    id: int
    source: str
    rows: int
    written_at: datetime


@router.get("/healthz")
async def healthz() -> dict[str, str]:
    return {"status": "ok"}


@router.get("/batches", response_model=list[Batch])
async def batches(after: int = 0, limit: int = 50) -> list[Batch]:
    return [Batch(**row) for row in list_batches(after=after, limit=min(limit, 200))]
