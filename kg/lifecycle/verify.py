"""Verification decisions: compare a pattern's recurrence rate after a change with the rate before it, and
decide what happens to the change (confirmed, reverted, extended), including the overdue clock. Pure."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from kg.lifecycle.policy import LifecyclePolicy

CONFIRMED, INEFFECTIVE, WORSE, INCONCLUSIVE = "confirmed", "ineffective", "made_worse", "inconclusive"
DAY = timedelta(days=1)


@dataclass(frozen=True)
class Windows:
    before_from: datetime
    before_to: datetime
    after_from: datetime
    after_to: datetime


def windows(applied_at: datetime, now: datetime, policy: LifecyclePolicy, *, monitoring: bool) -> Windows:
    """Before: the `baseline_days` before the change. After: since the change, or for a confirmed change
    under monthly monitoring, the last `monitor_days` (so a later relapse shows)."""
    v = policy.verification
    after_from = applied_at
    if monitoring:
        after_from = max(applied_at, now - v.monitor_days * DAY)
    return Windows(applied_at - v.baseline_days * DAY, applied_at, after_from, now)


@dataclass(frozen=True)
class Verdict:
    kind: str
    before: int
    after: int
    before_days: float
    after_days: float
    rate_before: float
    rate_after: float
    ratio: float | None
    summary: str


def judge(before: int, before_span_days: float, after: int, after_days: float,
          policy: LifecyclePolicy) -> Verdict:
    """The verdict with the numbers behind it. `before_span_days` is the time from the first occurrence in
    the baseline window to the change; it is stretched to at least `min_baseline_days`."""
    v = policy.verification
    bdays = min(max(before_span_days, v.min_baseline_days), v.baseline_days)
    adays = max(after_days, 1e-9)
    rb = before / bdays
    ra = after / adays if after_days > 0 else 0.0
    ratio = (ra / rb) if rb > 0 else None
    numbers = (f"before {before} in {bdays:.1f}d = {rb:.3f}/day; after {after} in {after_days:.1f}d = "
               f"{ra:.3f}/day")
    if before == 0:
        kind, why = INCONCLUSIVE, "no occurrences before the change to compare with"
    elif after_days <= 0:
        kind, why = INCONCLUSIVE, "no time has passed since the change"
    elif after == 0 or (ratio is not None and ratio <= v.confirm_max_ratio):
        kind, why = CONFIRMED, f"rate fell to {ratio:.2f}× (≤ {v.confirm_max_ratio})"
    elif after >= v.min_after_events and ratio is not None and ratio >= v.worse_min_ratio:
        kind, why = WORSE, f"rate rose to {ratio:.2f}× (≥ {v.worse_min_ratio})"
    elif after >= v.min_after_events and ratio is not None and ratio >= v.ineffective_min_ratio:
        kind, why = INEFFECTIVE, f"rate stayed at {ratio:.2f}× (≥ {v.ineffective_min_ratio})"
    else:
        r = f"{ratio:.2f}×" if ratio is not None else "n/a"
        kind, why = INCONCLUSIVE, f"rate {r}, between the thresholds or too few occurrences after"
    return Verdict(kind, before, after, round(bdays, 3), round(after_days, 3), round(rb, 4), round(ra, 4),
                   None if ratio is None else round(ratio, 4), f"{kind}: {why} ({numbers})")


def overdue_stage(due_since: datetime, now: datetime, policy: LifecyclePolicy) -> str:
    """none / remind (grace) / request_evidence (first extension) / revert, by whole days overdue."""
    days = (now - due_since) // DAY
    o = policy.overdue
    if days >= o.revert_days:
        return "revert"
    if days >= o.extend_days:
        return "request_evidence"
    if days >= o.grace_days:
        return "remind"
    return "none"


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
               now: datetime, policy: LifecyclePolicy) -> Transition:
    """Decide a due change's next state from its verdict.

    confirmed → monitored monthly; ineffective → revert; made worse → revert at once + critical item;
    inconclusive → extended by `extend_days`, and the overdue clock (from the first undecided due date)
    reminds at 7 days, asks for evidence at 14 and auto-reverts at 21. A change already confirmed that turns
    inconclusive at a monthly check stays confirmed.
    """
    v = policy.verification
    day = now.date().isoformat()
    if verdict.kind == CONFIRMED:
        return Transition("keep", "confirmed", now + v.monitor_days * DAY, None, CONFIRMED, "none", False,
                          f"{day} {verdict.summary}; next check in {v.monitor_days} days")
    if verdict.kind == WORSE:
        return Transition("revert", "reverted", next_check, None, WORSE, "none", True,
                          f"{day} {verdict.summary}; reverted at once")
    if verdict.kind == INEFFECTIVE:
        return Transition("revert", "reverted", next_check, None, INEFFECTIVE, "none", False,
                          f"{day} {verdict.summary}; reverted")
    if status == "confirmed":
        return Transition("keep", "confirmed", now + v.monitor_days * DAY, None, CONFIRMED, "none", False,
                          f"{day} {verdict.summary}; stays confirmed, next check in {v.monitor_days} days")
    since = due_since or next_check
    stage = overdue_stage(since, now, policy)
    if stage == "revert":
        days = (now - since) // DAY
        return Transition("auto_revert", "auto_reverted", next_check, since, INCONCLUSIVE, stage, False,
                          f"{day} {verdict.summary}; auto-reverted: no decisive verdict for {days}d past due")
    note = {"none": "check extended", "remind": "check extended (reminder: overdue, grace period)",
            "request_evidence": "check extended (first extension: evidence requested)"}[stage]
    return Transition("extend", status, now + v.extend_days * DAY, since, INCONCLUSIVE, stage, False,
                      f"{day} {verdict.summary}; {note} to {(now + v.extend_days * DAY).date().isoformat()}")
