"""The ready patterns a cycle would hold back while the baseline gate is on (`verification.min_baseline_days`,
`min_baseline_events`), for `kg patterns` and `kg patterns show`: by key, the first reason the promotion gate
holds each, as `kg status` says it (kg/lifecycle/api.py `_ready_view`: a rule that says what failed but not
what to do, a full block, then the baseline, with the day it becomes eligible), read only."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from kg.core import clock
from kg.lifecycle import promote, promoting
from kg.lifecycle.cycle import Lifecycle, _jsonable

# where the baseline's days are set (and the wait turned off): the packaged rules, or a workspace's own kg.toml over
# them; `kg status` and `kg patterns` both end their waiting patterns with BASELINE_NOTE
BASELINE_SET = ("verification.min_baseline_days, 0 turns the wait off: rules/lifecycle.toml, or "
                "[rules.lifecycle.verification] in the workspace's kg.toml")
BASELINE_NOTE = f"(days watched before a rule: {BASELINE_SET})"


def gate_waits(ws: Any, now: datetime | str | None = None, *, keys: list[str] | None = None,
               limit: int = 50) -> dict[str, dict[str, Any]]:
    """{pattern key: why a cycle would hold it now (`reason`, `short`; for the baseline also `by`, `watched`,
    `needed`, `eligible`; `by` is "" for another reason)} for the best `limit` ready patterns (or those of
    `keys`) that a cycle would hold, while the baseline gate is on; the same answer as `kg status`'s."""
    from kg.lifecycle.api import _ready_view
    from kg.store.sideindex import open_reader

    at = clock.now(now)
    with ws.reading() as st:  # a read: a read-only workspace answers too (QA5 #4)
        lc = Lifecycle(ws, st, at)
        v = lc.lp.verification
        if v.min_baseline_days <= 0 and v.min_baseline_events <= 0:
            return {}
        open_reader(st, open_it=True)  # as `kg status` reads the ready patterns' events
        rows, _ = promoting.ready_top(lc, limit)
        rows = [r for r in rows if r.get("key") and (keys is None or r["key"] in keys)]
        room = promote.Budget(lc.lp, {k: [x.text for x in d.lines] for k, d in lc.desired().items()})
        out = {}
        for c in lc.fill(rows):
            view = _ready_view(c, lc, room)
            if view["waiting"]:
                out[c.key] = view["baseline"] or {"reason": view["waiting"], "short": view["waiting"], "by": "",
                                                  "watched": None, "needed": None, "eligible": None}
    return _jsonable(out)
