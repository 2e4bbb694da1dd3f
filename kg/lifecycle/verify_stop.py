"""The promotion's stopping rule, as the rate before a change sees it. Pure.

A pattern is promoted when `promotion.min_recurrence` of its occurrences fall within `promotion.window_days`:
the first time that happens is the trigger, a stopping time. The occurrences of that triggering group were
selected for being close together (a pattern at 0.3 a day promoted on "3 in half a day" reads 6 a day), so with
`verification.trigger_window = "left_out"` the rate before leaves the group out, its occurrences and the days
from its first to the trigger: what is left (the days before the group, the occurrences and days between the
trigger and the change) was not selected, and where it holds nothing the workspace's rate prior speaks. The
thresholds are read from the policy, so a workspace that promotes on 5 leaves 5 out.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta

from kg.lifecycle.policy import LifecyclePolicy


def trigger_group(times: Sequence[datetime], policy: LifecyclePolicy) -> tuple[datetime, datetime] | None:
    """(the first occurrence of the triggering group, the trigger): the first `min_recurrence` occurrences
    inside one promotion window, in sorted `times`; None when the threshold was never met."""
    p = policy.promotion
    w = timedelta(days=p.window_days)
    lo = 0
    for i, t in enumerate(times):
        while times[lo] <= t - w:
            lo += 1
        if i - lo + 1 >= p.min_recurrence:
            return times[i - p.min_recurrence + 1], t
    return None


def left_out(base: Sequence[datetime],
             policy: LifecyclePolicy) -> tuple[list[datetime], tuple[datetime, datetime] | None]:
    """(the occurrences the rate before counts, the span of days it leaves out): with `trigger_window =
    "left_out"`, `base` less the triggering group and the group's span; else `base` as it is."""
    if policy.verification.trigger_window != "left_out":
        return list(base), None
    group = trigger_group(base, policy)
    if group is None:
        return list(base), None
    first, last = group
    return [t for t in base if not first <= t <= last], group
