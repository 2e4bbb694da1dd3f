"""What a verification verdict does to a change (`kg.lifecycle.verify` judges it): its next state, its next
check and the overdue clock that reminds, asks for evidence and at the deadline decides. Pure."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from kg.lifecycle.policy import LifecyclePolicy

if TYPE_CHECKING:
    from kg.lifecycle.verify import Verdict

CONFIRMED, INEFFECTIVE, WORSE, INCONCLUSIVE = "confirmed", "ineffective", "made_worse", "inconclusive"
DAY = timedelta(days=1)
HUMAN_CONFIRMED = "confirmed by a human"


def overdue_stage(due_since: datetime, now: datetime, policy: LifecyclePolicy) -> str:
    """none / remind (grace) / request_evidence (first extension) / revert (the deadline), by whole days
    overdue."""
    days = (now - due_since) // DAY
    o = policy.overdue
    if days >= o.revert_days:
        return "revert"
    if days >= o.extend_days:
        return "request_evidence"
    if days >= o.grace_days:
        return "remind"
    return "none"


def due_stage(status: str, due_since: datetime | None, next_check: datetime, now: datetime,
              policy: LifecyclePolicy) -> str:
    """How late a due change is, as `transition` reads it: only a first verification (`applied`) runs to a deadline;
    a confirmed rule's later look, however late the cycle comes, is just due (QA: `kg status` and the session brief
    said "overdue: revert" for three confirmed rules the next cycle kept)."""
    return overdue_stage(due_since or next_check, now, policy) if status == "applied" else "none"


def is_deadline(status: str, due_since: datetime | None, next_check: datetime, now: datetime,
                policy: LifecyclePolicy) -> bool:
    """A first verification undecided for `overdue.revert_days` past due is decided by the majority."""
    return status == "applied" and overdue_stage(due_since or next_check, now, policy) == "revert"


@dataclass(frozen=True)
class Transition:
    """What a verification does to a change. `action`: keep, extend, revert, auto_revert."""

    action: str
    status: str
    next_check: datetime
    due_since: datetime | None
    verdict: str
    overdue: str
    critical: bool
    evidence: str


def transition(*, status: str, next_check: datetime, due_since: datetime | None, verdict: Verdict,
               now: datetime, policy: LifecyclePolicy, human: bool = False) -> Transition:
    """Decide a due change's next state from its verdict.

    confirmed → monitored every `monitor_days`; ineffective → revert; made worse → revert at once + a
    critical item; inconclusive → checked again in `extend_days`, with the overdue clock (from the first
    undecided due date) reminding, then asking for evidence; at `revert_days` overdue the verdict was taken
    at the deadline (majority), so it is decisive, and a revert then is an auto-revert. A confirmed change
    that turns inconclusive stays confirmed. A change a human confirmed is never reverted by kg: the
    evidence is noted instead.
    """
    v = policy.verification
    day = now.date().isoformat()
    monitor = now + v.monitor_days * DAY
    if verdict.kind == CONFIRMED:
        return Transition("keep", "confirmed", monitor, None, CONFIRMED, "none", False,
                          f"{day} {verdict.summary}; next check in {v.monitor_days} days")
    if verdict.kind in (WORSE, INEFFECTIVE) and human:
        return Transition("keep", "confirmed", monitor, None, verdict.kind, "none", verdict.kind == WORSE,
                          f"{day} {verdict.summary}; kept: {HUMAN_CONFIRMED} (a human decision wins)")
    stage = due_stage(status, due_since, next_check, now, policy)
    if verdict.kind in (WORSE, INEFFECTIVE):
        auto = stage == "revert"
        what = "auto-reverted at the deadline" if auto else ("reverted at once" if verdict.kind == WORSE else
                                                             "reverted")
        return Transition("auto_revert" if auto else "revert", "auto_reverted" if auto else "reverted",
                          next_check, None, verdict.kind, stage, verdict.kind == WORSE,
                          f"{day} {verdict.summary}; {what}")
    if status == "confirmed":
        return Transition("keep", "confirmed", monitor, None, CONFIRMED, "none", False,
                          f"{day} {verdict.summary}; stays confirmed, next check in {v.monitor_days} days")
    since = due_since or next_check
    note = {"none": "check extended", "remind": "check extended (reminder: overdue, grace period)",
            "request_evidence": "check extended (first extension: evidence requested)",
            "revert": "check extended"}[stage]
    return Transition("extend", status, now + v.extend_days * DAY, since, INCONCLUSIVE, stage, False,
                      f"{day} {verdict.summary}; {note} to {(now + v.extend_days * DAY).date().isoformat()}")
