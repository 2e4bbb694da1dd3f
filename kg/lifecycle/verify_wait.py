"""Whether a ready pattern must wait before it is promoted: the rate before its change would rest on too little
history for any verdict to tell a rule that works from one that does not, and from when it may be promoted.
Pure; the gates are `verification.min_baseline_events` and `verification.min_baseline_days` in
rules/lifecycle.toml. The cycle's promotion (kg/lifecycle/promoting.py), `kg status` and `kg patterns`
(kg/lifecycle/api.py) and the simulator's fast replay (bench/loop_replay.py) ask it; a pattern tried before
(recovery) and a person's own decision (`kg approve N`) never wait here.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta

from kg.lifecycle.policy import LifecyclePolicy

MINUTE = timedelta(minutes=1)


@dataclass(frozen=True)
class Wait:
    """Why a ready pattern waits ('' when it may be promoted now), how far it got (`watched` of `needed` days,
    or `counted` of `needed` occurrences), and from when it may be promoted if it recurs no more (`eligible`:
    None when more occurrences, not more days, are what it waits for)."""
    reason: str = ""
    watched: float = 0.0
    needed: float = 0.0
    eligible: datetime | None = None
    by: str = ""  # "days" or "events"

    def __bool__(self) -> bool:
        return bool(self.reason)

    @property
    def short(self) -> str:
        """What it waits for in a few words: "watched 3.0 of 14 days, eligible from 2026-05-16 03:33"."""
        if self.by == "events":
            return f"{self.watched:g} of {self.needed:g} occurrences counted before it"
        return (f"watched {_down(self.watched)} of {self.needed:g} days"
                + (f", eligible from {self.eligible:%Y-%m-%d %H:%M}" if self.eligible else ""))

    def as_dict(self) -> dict:
        return {"reason": self.reason, "by": self.by, "watched": float(_down(self.watched)), "needed": self.needed,
                "eligible": self.eligible, "short": self.short}


def baseline_wait(times: Iterable[datetime], now: datetime, policy: LifecyclePolicy, *,
                  observed_from: datetime | None = None) -> Wait:
    """Whether a pattern should wait before it is promoted (a false Wait when it may be): the rate before its
    change would rest on fewer than `min_baseline_events` counted occurrences (the same count a verdict uses),
    or on fewer than `min_baseline_days` days watched (the same exposure a verdict uses: from when kg started
    watching, or a promotion window before the pattern's first occurrence). A rate from a few days that began
    with a burst is a multiple of the truth, and every later look at the rule compares against it. The day it
    becomes eligible is the first minute at which this same test passes on the occurrences seen so far."""
    v = policy.verification
    if v.min_baseline_events <= 0 and v.min_baseline_days <= 0:
        return Wait()
    seen = sorted(t for t in times if t <= now)
    c = _counts(seen, now, policy, observed_from)
    if c.k_before < v.min_baseline_events:
        return Wait(f"too little history to verify a rule: {c.k_before:g} counted occurrences before it, needs "
                    f"{v.min_baseline_events:g} (verification.min_baseline_events)",
                    c.k_before, v.min_baseline_events, None, "events")
    if c.t_before < v.min_baseline_days:
        when = _eligible(seen, now, policy, observed_from)
        return Wait(f"too little history to verify a rule: watched {_down(c.t_before)} of {v.min_baseline_days:g} days "
                    f"before it (verification.min_baseline_days)"
                    + (f", eligible from {when:%Y-%m-%d %H:%M} if nothing else changes" if when else ""),
                    c.t_before, v.min_baseline_days, when, "days")
    return Wait()


def baseline_short(times: Iterable[datetime], now: datetime, policy: LifecyclePolicy, *,
                   observed_from: datetime | None = None) -> str:
    """Why a pattern should not be promoted yet ('' when it may): `baseline_wait`'s reason."""
    return baseline_wait(times, now, policy, observed_from=observed_from).reason


def _counts(seen: list[datetime], at: datetime, policy: LifecyclePolicy, observed_from: datetime | None):
    from kg.lifecycle.verify import evidence  # (verify's verdicts do not need this module)

    return evidence(seen, at, at, policy, observed_from=observed_from)


def _days_met(seen: list[datetime], at: datetime, policy: LifecyclePolicy, observed_from: datetime | None) -> bool:
    return _counts(seen, at, policy, observed_from).t_before >= policy.verification.min_baseline_days


def _eligible(seen: list[datetime], now: datetime, policy: LifecyclePolicy,
              observed_from: datetime | None) -> datetime | None:
    """The first whole minute after `now` at which the days watched reach `min_baseline_days`, the occurrences
    so far unchanged (the exposure only grows with time; a half-life makes it grow a little slower than the
    calendar), found by bisection on the gate's own test. None when it is not reached within ten times the
    days needed."""
    step = timedelta(days=max(policy.verification.min_baseline_days, 1.0))
    hi = now + step
    while not _days_met(seen, hi, policy, observed_from):
        hi += step
        if hi - now > 10 * step:
            return None
    lo = now
    while hi - lo > MINUTE:
        mid = lo + (hi - lo) / 2
        if _days_met(seen, mid, policy, observed_from):
            hi = mid
        else:
            lo = mid
    whole = hi.replace(second=0, microsecond=0)  # lo fails, hi passes, hi − lo ≤ 1 min: the first whole minute
    return whole if _days_met(seen, whole, policy, observed_from) else whole + MINUTE  # that passes is one of two


def _down(days: float) -> str:
    """Days watched to a tenth, rounded down (13.99 is not yet 14.0)."""
    return f"{int(days * 10) / 10:.1f}"
