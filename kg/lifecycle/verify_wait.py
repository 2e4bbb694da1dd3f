"""Whether a ready pattern must wait before it is promoted: the rate before its change would rest on too little
history for any verdict to tell a rule that works from one that does not. Pure; both gates are off in the
packaged rules unless rules/lifecycle.toml says otherwise (`verification.min_baseline_events`,
`verification.min_baseline_days`). The cycle's promotion (kg/lifecycle/promoting.py) and the simulator's fast
replay (bench/loop_replay.py) ask it; a pattern tried before (recovery) never waits here.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from kg.lifecycle.policy import LifecyclePolicy


def baseline_short(times: Iterable[datetime], now: datetime, policy: LifecyclePolicy, *,
                   observed_from: datetime | None = None) -> str:
    """Why a pattern should not be promoted yet ('' when it may): the rate before its change would rest on
    fewer than `min_baseline_events` counted occurrences (the same count a verdict uses), or on fewer than
    `min_baseline_days` days watched (the same exposure a verdict uses: from when kg started watching, or a
    promotion window before the pattern's first occurrence). A rate from a few days that began with a burst is
    a multiple of the truth, and every later look at the rule compares against it."""
    from kg.lifecycle.verify import evidence  # (verify's verdicts do not need this module)

    v = policy.verification
    if v.min_baseline_events <= 0 and v.min_baseline_days <= 0:
        return ""
    c = evidence([t for t in times if t <= now], now, now, policy, observed_from=observed_from)
    if c.k_before < v.min_baseline_events:
        return (f"too little history to verify a rule: {c.k_before:g} counted occurrences before it, needs "
                f"{v.min_baseline_events:g} (verification.min_baseline_events)")
    if c.t_before < v.min_baseline_days:
        return (f"too little history to verify a rule: {c.t_before:.1f} days watched before it, needs "
                f"{v.min_baseline_days:g} (verification.min_baseline_days)")
    return ""
