"""Forgetting: what is not reinforced fades. Pure.

Days since the last reinforcement (a new occurrence, a new edge, `kg reinforce`) give a stage: 0 fresh,
1 priority one level down, 2 low and stale, 3 expired (wont_fix). The stage a node has reached is stored, so
a second run changes nothing; a node reinforced since it decayed is restored to the stage its new age gives
(an expired node stays expired: `kg reinforce` revives it; one of `[decay] revive_kinds`, a pattern, is revived
when it recurs: `revived_status` again, a candidate as a new pattern with its history; a person's wont_fix, which
clears decay's stage 3 (`kg resolve`, kg/store/core.cypher status_close; a reopen, status_reopen, is a
reinforcement), never is). Pinned nodes never decay.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from kg.lifecycle.policy import LifecyclePolicy

DAY = timedelta(days=1)


def stage_for(days: int, policy: LifecyclePolicy) -> int:
    d = policy.decay
    if days >= d.expire_days:
        return 3
    if days >= d.stale_days:
        return 2
    if days >= d.demote_days:
        return 1
    return 0


def demote(priority: str, levels: int, priorities: tuple[str, ...]) -> str:
    """`levels` steps towards the last (lowest) priority, never past it."""
    if priority not in priorities:
        return priorities[-1]
    return priorities[min(priorities.index(priority) + levels, len(priorities) - 1)]


@dataclass(frozen=True)
class DecayState:
    id: str
    status: str
    priority: str | None
    base_priority: str | None
    stage: int
    pinned: bool
    last_reinforced: datetime


@dataclass(frozen=True)
class DecayUpdate:
    id: str
    stage: int
    priority: str
    base_priority: str
    stale: bool
    status: str
    days: int
    reason: str


def decide(node: DecayState, now: datetime, policy: LifecyclePolicy, *, revive: bool = False) -> DecayUpdate | None:
    """`revive`: an expired node that recurred (`lc_decay_revive`), back to the stage its new age gives."""
    if node.pinned or (node.stage >= 3 and not revive):
        return None
    days = max(0, (now - node.last_reinforced) // DAY)
    target = stage_for(days, policy)
    if target == node.stage:
        return None
    pr = policy.priorities
    base = node.base_priority or node.priority or policy.conflicts.default_priority
    priority = {0: base, 1: demote(base, 1, pr)}.get(target, pr[-1])
    status = policy.decay.expired_status if target == 3 else policy.decay.revived_status if revive else node.status
    if revive:
        reason = f"recurred after it expired: {status} again, {priority} (last occurrence {days}d ago)"
    elif target > node.stage:
        reason = {1: f"{base}→{priority} (unreinforced {days}d)", 2: f"{base}→{priority}, stale (unreinforced {days}d)",
                  3: f"auto-resolved {status} (unreinforced {days}d)"}[target]
    else:
        reason = f"reinforced: back to {priority} (last reinforced {days}d ago)"
    return DecayUpdate(node.id, target, priority, base, target >= 2, status, days, reason)
