"""Which patterns decay expired have recurred since, so that the next `kg cycle` makes them candidates again
(`[decay] revive_*`, `lc_decay_revive`): until it runs they still read expired, and `kg status`, `kg patterns` and
`kg patterns show` say so beside them.

Said, not done at log time: reviving is the cycle's decay step (its report's `decayed.revived`, `--dry-run`'s
rehearsal, `revive_recurrence` occurrences counted as the cycle counts them), and a log that changed a pattern's
status would need the lifecycle policy on the write path and a second writer of decay's fields. Asked only for
the patterns shown that read expired, each by key: nothing is read when none does.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

NOTE = "decay expired it and it recurred since: a candidate again at the next `kg cycle`"


def due(ws: Any, st: Any, now: datetime, patterns: list[dict[str, Any]]) -> list[str]:
    """The ids, among `patterns` (rows with `id` and `status`), that the next cycle revives."""
    from kg.lifecycle.policy import load as load_policy

    d = load_policy(ws).decay
    expired = [p["id"] for p in patterns if p.get("status") == d.expired_status]
    if not expired or "pattern" not in d.revive_kinds:
        return []
    ignore = list(load_policy(ws).promotion.ignore_event_statuses)
    since = now - timedelta(days=d.expire_days)
    return [pid for pid in expired if st.run("lc_decay_revive_one", id=pid, expired_status=d.expired_status,
                                             since=since, min=d.revive_recurrence, ignore_statuses=ignore)]
