"""Small helpers the memory modules share."""

from __future__ import annotations

from datetime import datetime
from typing import Any


def iso(value: Any) -> Any:
    return value.isoformat() if isinstance(value, datetime) else value


def allocate(ws: Any, prefix: str, at: datetime) -> str:
    with ws.journal.locked():
        (new_id,) = ws.journal.allocate(prefix, f"{at:%Y%m%d}")
    return new_id
