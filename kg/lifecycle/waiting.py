"""The ready patterns a cycle would promote but that wait for their baseline (`verification.min_baseline_days`,
`min_baseline_events`), for `kg patterns` and `kg patterns show`: by key, what each waits for and the day it
becomes eligible. The promotion gate's own answer (kg/lifecycle/promoting.py `baseline_wait`), read only."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from kg.core import clock
from kg.lifecycle import promoting
from kg.lifecycle.cycle import Lifecycle, _jsonable, holding


def baseline_waits(ws: Any, now: datetime | str | None = None, *, keys: list[str] | None = None,
                   limit: int = 50) -> dict[str, dict[str, Any]]:
    """{pattern key: the wait (`reason`, `short`, `watched`, `needed`, `eligible`)} for the best `limit` ready
    patterns (or those of `keys`) that wait for their baseline; a pattern kg tried before (recovery) does not."""
    at = clock.now(now)
    with holding(ws) as st:
        lc = Lifecycle(ws, st, at)
        v = lc.lp.verification
        if v.min_baseline_days <= 0 and v.min_baseline_events <= 0:
            return {}
        rows, _ = promoting.ready_top(lc, limit)
        out = {}
        for r in rows:
            if r.get("failed") or not r.get("key") or (keys is not None and r["key"] not in keys):
                continue
            wait = promoting.baseline_wait(lc, r["id"])
            if wait:
                out[r["key"]] = wait.as_dict()
    return _jsonable(out)
