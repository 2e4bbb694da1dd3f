"""Verification decisions: did a change cut its pattern's recurrence rate? Pure.

The verdict is a sequential test on the pattern's whole history (`assess`):
- **Rate before** comes from every occurrence before the change, not a window: the clock starts when kg
  started watching (the workspace's first event) or a promotion window before the pattern's first
  occurrence, whichever is later (without a start, at the first occurrence, which is then not counted), less
  the long spells with nothing at all logged (`verify_watch`: kg was not watching then). The occurrence that
  triggered promotion counts when the clock has such a start (`leave_out_trigger = false`): the ratio
  divides by the rate before, and days / occurrences is unbiased for 1 / rate when sampling stops at the
  trigger, while leaving the trigger out overstates it by 3/2 at three occurrences. Without a start, or with
  `leave_out_trigger`, it is left out (the inverse-sampling correction). Time when an earlier change of the
  same pattern was live is left out too, and older days weigh less (`baseline_half_life_days`, for rates
  that drift). At most `max_per_day` occurrences count per day, so one bursty day is not a rate. Where the
  pattern's days vary more than Poisson (bursts: `kg.lifecycle.dispersion`, `dispersion_strength`), a first
  verification weighs its counts as k / φ in t / φ days, so a burst in a rule's first week is not a 0.95 revert.
- **Rate after**: every occurrence since the change over every day since it (a quiet spell there may be the
  rule working), the same per-day cap, less the same long spells with nothing at all logged: the gap rule holds
  for every exposure a verdict counts (before, after, in a check, a relapse's), or a holiday after a change
  confirmed its rule and one inside a check reverted it as "made worse".
- The **posterior of the ratio** r = after / before (Jeffreys priors; `kg.lifecycle.stats`) gives
  P(r < ineffective_min_ratio), that the rule cut the rate at all, and P(r > revert_min_ratio), that it did
  not cut it enough. A confirmation needs the first ≥ 1 − error_rate, a revert the second ≥ 1 −
  revert_error_rate: the thresholds are asymmetric (revert_min_ratio above confirm_max_ratio), because a
  wrong revert takes away a rule that works and the baseline is thin. Reverted rules are labelled made worse
  when the posterior median is ≥ worse_min_ratio and P(r > 1) ≥ worse_min_posterior. Until then the check
  is extended; a confirmed rule stays under the same test, so enough new evidence reverts it later. A check
  undecided for `overdue.revert_days` past due is decided by the posterior median against `boundary_ratio`
  (a truncated sequential test). A rule whose verdict stays uncertain may instead be taken out of its file
  for a stated period to measure the rate without it, and put back unless that period shows it did not help
  (`kg.lifecycle.verify_check`, a switchback; `evidence(checks=...)` counts those days as the rate before).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime

from kg.lifecycle import dispersion, stats, verify_stop, verify_watch
from kg.lifecycle import effect as effects
from kg.lifecycle.policy import LifecyclePolicy
from kg.lifecycle.verify_transition import (  # noqa: F401 - verify.transition and the rest stay importable here
    CONFIRMED,
    DAY,
    HUMAN_CONFIRMED,
    INCONCLUSIVE,
    INEFFECTIVE,
    WORSE,
    Transition,
    due_stage,
    is_deadline,
    overdue_stage,
    transition,
)


@dataclass(frozen=True)
class Counts:
    """What the test sees. `before`/`after` are raw occurrence counts; `k_*` the counts it uses (capped per
    day, discounted), `t_*` their exposures in days."""

    before: int
    after: int
    k_before: float
    t_before: float
    k_after: float
    t_after: float
    left_out: tuple[str, ...]  # why occurrences were not counted ("first", "trigger", "capped 2", ...)
    dispersion: float = 1.0    # φ, the counts' variance over their mean (`kg.lifecycle.dispersion`; 1: Poisson)


def scaled(c: Counts) -> Counts:
    """The counts as the test weighs them: k / φ occurrences in t / φ days (the same rates, less information)."""
    if c.dispersion <= 1.0:
        return c
    f = c.dispersion
    return Counts(c.before, c.after, c.k_before / f, c.t_before / f, c.k_after / f, c.t_after / f, c.left_out, 1.0)


def _phi(times: Sequence[datetime], start: datetime | None, now: datetime, edges: Iterable[datetime], cap: int,
         policy: LifecyclePolicy) -> float:
    """The pattern's overdispersion from its start to `now`, each period between `edges` with its own mean."""
    v = policy.verification
    if start is None or v.dispersion_strength <= 0 or now <= start:
        return 1.0
    cuts = sorted({start, now, *(e for e in edges if start < e < now)})
    return dispersion.index(times, cuts, cap, strength=v.dispersion_strength, ceiling=v.dispersion_max)


def _days(a: datetime, b: datetime) -> float:
    return (b - a).total_seconds() / 86400


def _capped(times: Sequence[datetime], cap: int) -> list[tuple[datetime, int]]:
    """(first time of the day, occurrences counted that day) per calendar day."""
    out: dict[object, list] = {}
    for t in times:
        day = out.setdefault(t.date(), [t, 0])
        day[1] += 1
    return [(t, min(n, cap)) for t, n in out.values()]


def day_cap(times: Sequence[datetime], now: datetime, policy: LifecyclePolicy,
            observed_from: datetime | None = None) -> int:
    """How many occurrences of one day count: `max_per_day`, or with `burst_quantile` set, fewer for a
    pattern that is rare on most days, whose crowded day is more likely a burst than its rate. The pattern's
    typical rate comes from the share of days it occurred on (a burst is one such day however many it
    brings), λ = −ln(1 − days with it / (days watched + 1)); the cap is the `burst_quantile` quantile of
    Poisson(λ), between 1 and `max_per_day`. A rate of 0.3 a day counts its days (cap 1); at 1 a day and
    above the cap stays `max_per_day`, so a rule that doubled a daily pattern still shows."""
    v = policy.verification
    if v.burst_quantile <= 0:
        return v.max_per_day
    seen = [t for t in times if t <= now]
    if not seen:
        return v.max_per_day
    start = min(observed_from or seen[0], seen[0])
    watched = max(_days(start, now), 0.0)
    share = len({t.date() for t in seen}) / (watched + 1.0)
    lam = -math.log(1.0 - min(share, 0.999))
    k, p, acc = 0, math.exp(-lam), math.exp(-lam)
    while acc < v.burst_quantile and k < v.max_per_day:
        k += 1
        p *= lam / k
        acc += p
    return max(1, min(k, v.max_per_day))


def _trigger(times: Sequence[datetime], policy: LifecyclePolicy) -> datetime | None:
    """The occurrence at which the pattern first met the promotion threshold (≥ min_recurrence inside the
    window): the stopping time of the sampling."""
    group = verify_stop.trigger_group(times, policy)
    return group[1] if group else None


def evidence(times: Iterable[datetime], applied_at: datetime, now: datetime, policy: LifecyclePolicy, *,
             excluded: Iterable[tuple[datetime, datetime]] = (), observed_from: datetime | None = None,
             paused: Iterable[tuple[datetime, datetime]] = (),
             checks: Iterable[tuple[datetime, datetime]] = (),
             pooled: Iterable[tuple[datetime, datetime]] = (), out_words: str = "withdrawn by hand") -> Counts:
    """The counts and exposures behind a verdict, from every occurrence time of the pattern. `excluded`:
    periods when an earlier change of the same pattern was live (not the base rate). `observed_from`: when
    kg started watching (the workspace's first event); a `verify_watch.Watched` also names the spells it was
    not (nothing at all logged), whose days are no exposure before the change. `paused`: periods since the
    change when a person had taken the rule out of its file (`kg.lifecycle.verify_withdrawn`): neither their
    days nor their occurrences count (`out_words`: how, for the counts' note). `checks`: periods since the
    change when kg took the rule out to measure the rate without it (`kg.lifecycle.verify_check`): their days
    and occurrences are base rate, counted (unweighted: they are recent) in the rate before. The unwatched spells
    are no exposure anywhere: not before, after, in a check or in an earlier try. `pooled`: periods
    before the change when an earlier try of the same rule was live (`verification.pool_retries`): a rule
    tried again is judged on every period it was in its file, so their occurrences and days count as the rate
    after (they must be in `excluded` too)."""
    v = policy.verification
    spans = sorted((a, b) for a, b in excluded if a < applied_at)
    out_spans = [(max(a, applied_at), min(b, now)) for a, b in paused if min(b, now) > max(a, applied_at)]
    test_spans = [(max(a, applied_at), min(b, now)) for a, b in checks if min(b, now) > max(a, applied_at)]
    every = sorted(times)
    before_all = [t for t in every if t < applied_at]
    after_all = [t for t in every if applied_at <= t <= now]
    after = [t for t in after_all if not any(a <= t < b for a, b in out_spans + test_spans)]
    tested = [t for t in after_all if any(a <= t < b for a, b in test_spans)]

    def outside(t: datetime) -> bool:
        return not any(a <= t < b for a, b in spans)

    left: list[str] = []
    base = [t for t in before_all if outside(t)]
    if len(base) < len(before_all):
        left.append(f"{len(before_all) - len(base)} while an earlier change was live")
    start = base[0] if base else None
    gap = None
    if base:
        since = max((b for _, b in spans), default=start)
        recent = [t for t in base if t >= since]
        kept, gap = verify_stop.left_out(recent, policy)
        if gap is not None:  # the triggering group was selected for being close together
            base = [t for t in base if t < since] + kept
            left.append(f"{len(recent) - len(kept)} in the {_days(*gap):.1f}d of the promotion's trigger")
        trig = (_trigger(recent, policy)
                if gap is None and (v.leave_out_trigger or observed_from is None) else None)
        if trig is not None:
            base.remove(trig)
            left.append("trigger")
    if start is not None and observed_from is not None:
        # the pattern may have been there since kg started watching, or a window before its first
        # occurrence, whichever is later: the clock starts there, and the first occurrence counts
        start = max(observed_from, start - policy.promotion.window_days * DAY)
    elif base and base[0] == start:
        base = base[1:]
        left.insert(len(left) - ("trigger" in left), "first")
    half = v.baseline_half_life_days
    cap = day_cap(every, now, policy, observed_from)

    def weight(t: datetime) -> float:
        return 0.5 ** (_days(t, applied_at) / half)

    k_b = 0.0
    capped_out = 0
    for t, n in _capped(base, cap):
        k_b += n * weight(t)
    capped_out += len(base) - sum(n for _, n in _capped(base, cap))
    t_b = 0.0
    if start is not None:
        pieces, cur = [], start
        for a, b in sorted(spans + ([gap] if gap else []) + verify_watch.gaps(observed_from)):
            if b > cur:
                if a > cur:
                    pieces.append((cur, min(a, applied_at)))
                cur = max(cur, b)
        pieces.append((cur, applied_at))
        for a, b in pieces:
            if b > a:  # ∫ 0.5^((applied − t)/h) dt over [a, b]
                t_b += half / math.log(2) * (0.5 ** (_days(b, applied_at) / half) -
                                             0.5 ** (_days(a, applied_at) / half))
    holes = verify_watch.gaps(observed_from)  # nothing at all logged: no exposure before, after or in a check

    def watched(a: datetime, b: datetime) -> float:
        return verify_watch.days_watched(a, b, holes)

    t_test = sum(watched(a, b) for a, b in test_spans)
    if test_spans:  # time without the rule since the change: base rate, as recent as it gets
        k_b += sum(n for _, n in _capped(tested, cap))
        t_b += t_test
        left.append(f"{len(tested)} in {t_test:.1f}d out for a check counted as the rate without it")
    withdrawn_n = len(after_all) - len(after)
    tries = [(a, min(b, now, applied_at)) for a, b in pooled if min(b, now, applied_at) > a]
    t_tries = sum(watched(a, b) for a, b in tries)
    if tries:
        earlier = [t for t in every if any(a <= t < b for a, b in tries)]
        after = earlier + after
        left.append(f"{len(earlier)} in {t_tries:.1f}d of an earlier try counted as after")
    a_days = _capped(after, cap)
    k_a = float(sum(n for _, n in a_days))
    capped_out += len(after) - int(k_a)
    if capped_out:
        left.append(f"{capped_out} over {cap}/day")
    t_out = sum(watched(a, b) for a, b in out_spans)
    if out_spans:
        left.append(f"{withdrawn_n} in {t_out:.1f}d {out_words}")
    idle = _days(applied_at, now) - watched(applied_at, now) if now > applied_at else 0.0
    if idle > 0:
        left.append(f"{idle:.1f}d since the change with nothing at all logged")
    phi = _phi(every, start, now, [applied_at] + [e for s in spans + out_spans + test_spans for e in s], cap, policy)
    return Counts(len(before_all), len(after), round(k_b, 4), round(t_b, 4), k_a,
                  round(max(watched(applied_at, now) - t_out - t_test, 0.0) + t_tries, 4), tuple(left), phi)


@dataclass(frozen=True)
class Verdict:
    kind: str
    before: int
    after: int
    before_days: float
    after_days: float
    rate_before: float
    rate_after: float
    ratio: float | None          # the posterior median of rate after / rate before
    summary: str
    p_cut: float = 0.0           # P(ratio < ineffective_min_ratio): the rule cut the rate
    p_not_enough: float = 0.0    # P(ratio > revert_min_ratio): it did not cut it enough
    interval: tuple[float, float] | None = None  # the ratio's central 1 − error_rate interval
    decisive: bool = False
    p_up: float = 0.0            # P(ratio > 1): the rule raised the rate (a revert's "made worse" label)
    levels: tuple[float, float] | None = None  # (keep, revert): the levels P(ratio < cut) and P(ratio > min) met


def population_prior(baselines: Iterable[tuple[float, float]], policy: LifecyclePolicy) -> tuple[float, float]:
    """A Gamma prior for a pattern's rate before its change, from the baselines (counted occurrences, days) of
    every change in the workspace: the hierarchical Gamma–Poisson model (each count is negative binomial given
    its days) fitted by maximum likelihood, its mean the pooled rate. A short baseline weighs little in that
    likelihood, so one pattern promoted on the day kg started watching (5 occurrences in half a day) does not
    swamp the rest, as it did a method-of-moments fit. Never more certain than ±50 % of the mean, worth at
    most `prior_max_events` occurrences; (0, 0), no prior, with fewer than `prior_min_changes` changes."""
    v = policy.verification
    rows = [(k, t) for k, t in baselines if t > 0]
    if len(rows) < v.prior_min_changes or v.prior_max_events <= 0:
        return 0.0, 0.0
    mean = sum(k for k, _ in rows) / sum(t for _, t in rows)
    if mean <= 0:
        return 0.0, 0.0

    def loglik(shape: float) -> float:
        b = shape / mean
        return sum(math.lgamma(k + shape) - math.lgamma(shape) + shape * math.log(b / (b + t)) +
                   k * math.log(t / (b + t)) for k, t in rows)

    grid = [0.05 * 1.15 ** i for i in range(60)]  # 0.05 … ~190 occurrences
    shape = min(max(grid, key=loglik), 4.0, v.prior_max_events)  # 4: ±50 % of the mean
    return round(shape, 4), round(shape / mean, 4)


def rate_without_rules(times: Iterable[datetime], live: Iterable[tuple[datetime, datetime]], now: datetime,
                       policy: LifecyclePolicy, observed_from: datetime | None = None) -> tuple[float, float]:
    """One pattern's (counted occurrences, days) in all the time none of its rules was in effect, from when it
    could have been seen (as `evidence`'s clock: kg's start, or a promotion window before its first occurrence)
    to `now`, capped per day: a row of the workspace's rate prior (`prior_source = "patterns"`). A pattern never
    promoted counts all its days, so the workspace's slow patterns tell the prior that rates can be low, which
    the baselines of promoted changes (each ended by a burst of recurrences) never do."""
    every = sorted(t for t in times if t <= now)
    if not every:
        return 0.0, 0.0
    spans = [(a, min(b, now)) for a, b in live if min(b, now) > a]
    start = every[0] if observed_from is None else max(observed_from, every[0] - policy.promotion.window_days * DAY)
    off = [t for t in every if not any(a <= t < b for a, b in spans)]
    if observed_from is None:
        off = off[1:]  # the clock starts at the first occurrence, which is then not counted
    t_on = sum(_days(max(a, start), b) for a, b in spans if b > start)
    k = float(sum(n for _, n in _capped(off, day_cap(every, now, policy, observed_from))))
    return k, round(max(_days(start, now) - t_on, 0.0), 4)


def expected_after(c: Counts, prior: tuple[float, float] = (0.0, 0.0)) -> float:
    """How many occurrences the time since the change would hold had the rule changed nothing: its days × the
    posterior mean of the rate before. Below `min_expected` no test can tell an effect yet."""
    return c.t_after * (0.5 + prior[0] + c.k_before) / (prior[1] + c.t_before) if c.t_before > 0 else 0.0


def effect_prior(rows: Iterable[Counts], policy: LifecyclePolicy,
                 prior: tuple[float, float] = (0.0, 0.0)) -> effects.EffectPrior | None:
    """The workspace's prior on a rule's effect, fitted to every change's counts (each up to its revert, or
    now); None when the rules switch it off (`verification.effect_prior`)."""
    v = policy.verification
    if not v.effect_prior:
        return None
    return effects.fit(((c.k_before, c.t_before, c.k_after, c.t_after) for c in rows),
                       strength=v.effect_prior_strength, min_changes=v.effect_prior_min_changes, rate_prior=prior)


def _shift(level: float, factor: float) -> float:
    """A probability level with its odds multiplied by `factor` (unchanged at 1)."""
    if factor == 1.0 or level >= 1.0:
        return level
    odds = level / (1.0 - level) * factor
    return odds / (1.0 + odds)


def mix_factor(statuses: Iterable[str], policy: LifecyclePolicy) -> float:
    """How much less (> 1) or more (< 1) likely than usual a rule in this workspace is to work: the prior odds
    against keeping one, relative to the mix the levels were chosen on (`mix_reference`, the share of rules
    that work). The share comes from the workspace's own settled changes (confirmed against reverted),
    shrunk toward `mix_reference` with the weight of `mix_strength` changes; 1.0 (no change) when off."""
    v = policy.verification
    if v.mix_strength <= 0:
        return 1.0
    kept = dropped = 0
    for s in statuses:
        kept += s == "confirmed"
        dropped += s in ("reverted", "auto_reverted")
    return stats.shrunk_odds(kept, dropped, v.mix_strength, v.mix_reference)


def judge(c: Counts, policy: LifecyclePolicy, *, deadline: bool = False,
          prior: tuple[float, float] = (0.0, 0.0), monitoring: bool = False,
          effect: effects.EffectPrior | None = None, mix: float = 1.0) -> Verdict:
    """The verdict with the numbers behind it. `deadline`: the check is out of time, so the posterior
    decides instead of the 1 − error_rate level (once `min_expected` occurrences were expected since the
    change; before that the check waits). `prior`: (occurrences, days) of a Gamma prior on the rate before
    (`population_prior`); none by default (Jeffreys). `effect`: the workspace's prior on the effect
    (`kg.lifecycle.effect`); without it the ratio's posterior has the Jeffreys priors only. `mix`
    (`mix_factor`): the workspace's odds against a rule working relative to the usual mix; every level a
    keep must reach is multiplied by it in odds, every level a revert must reach divided by it (1: as set)."""
    v = policy.verification
    rb = c.k_before / c.t_before if c.t_before > 0 else 0.0
    ra = c.k_after / c.t_after if c.t_after > 0 else 0.0
    numbers = (f"before {c.before} ({c.k_before:g} counted) in {c.t_before:.1f}d = {rb:.3f}/day; after {c.after} "
               f"in {c.t_after:.1f}d = {ra:.3f}/day")
    if c.t_before <= 0:
        return Verdict(INCONCLUSIVE, c.before, c.after, c.t_before, c.t_after, round(rb, 4), round(ra, 4), None,
                       f"{INCONCLUSIVE}: no history before the change to compare with ({numbers})")
    if c.t_after <= 0:
        return Verdict(INCONCLUSIVE, c.before, c.after, c.t_before, c.t_after, round(rb, 4), round(ra, 4), None,
                       f"{INCONCLUSIVE}: no time has passed since the change ({numbers})")
    expected = expected_after(c, prior)
    thin = c.k_before < v.thin_deadline_events  # a thin baseline: the majority is no decision, keep checking
    waits = deadline and (expected < v.min_expected or thin)
    deadline = deadline and not waits
    a = v.error_rate
    # overdispersed counts weigh as fewer (`verification.dispersion_strength`), at a rule's first verification: the
    # monitor's level was chosen on the Poisson posterior (with φ there it kept more bad rules: rules/lifecycle.toml)
    w = c if monitoring else scaled(c)
    if effect is not None:
        post = effects.posterior(effect, w.k_before, w.t_before, w.k_after, w.t_after, prior)
        below, quantile = post.p_below, post.quantile
    else:
        args = (w.k_after, w.t_after, w.k_before + prior[0], w.t_before + prior[1])
        below = lambda x: stats.p_ratio_below(x, *args)  # noqa: E731
        quantile = lambda q: stats.ratio_quantile(q, *args)  # noqa: E731
    p_cut = below(v.ineffective_min_ratio)
    p_not = 1.0 - below(v.revert_min_ratio)
    p_up = 1.0 - below(1.0)
    median = quantile(0.5)
    lo, hi = quantile(a / 2), quantile(1 - a / 2)
    level = _shift(0.5 if deadline else 1.0 - a, mix)
    drop_level = _shift((v.deadline_revert_posterior if effect is not None else 0.5) if deadline
                        else 1.0 - v.revert_error_rate, 1.0 / mix)
    keep, drop = p_cut >= level, p_not >= drop_level
    levels = (round(level, 4), round(_shift(1.0 - v.monitor_error_rate, 1.0 / mix) if monitoring and not drop
                                     else drop_level, 4))
    # the side of boundary_ratio a tie or a monitored rule falls on: the posterior median against it, or with a
    # mix other than 1, P(ratio < boundary_ratio) against the mix's level
    below_boundary = below(v.boundary_ratio) >= _shift(0.5, mix) if mix != 1.0 else median < v.boundary_ratio
    if deadline and effect is not None:  # the posterior decides: kept unless a revert is the likelier right call
        keep, drop = not drop, drop
    if monitoring and not drop:  # a confirmed rule: reverted on weaker evidence (its baseline cannot grow)
        drop = p_not >= _shift(1.0 - v.monitor_error_rate, 1.0 / mix) and not below_boundary
        keep = keep and not drop
    if keep and drop:  # the ratio sits between the two thresholds: the nearer side wins
        keep = below_boundary
        drop = not keep
    if keep:
        kind, why = CONFIRMED, f"P(ratio < {v.ineffective_min_ratio:g}) = {p_cut:.3f}"
    elif drop:
        # "made worse" raises a critical item, so it needs the rate to have risen (worse_min_posterior)
        worse = median >= v.worse_min_ratio and p_up >= v.worse_min_posterior
        kind = WORSE if worse else INEFFECTIVE
        why = f"P(ratio > {v.revert_min_ratio:g}) = {p_not:.3f}"
        level = drop_level if p_not >= drop_level else _shift(1.0 - v.monitor_error_rate, 1.0 / mix)
    else:
        kind, why = INCONCLUSIVE, (f"P(ratio < {v.ineffective_min_ratio:g}) = {p_cut:.3f}, "
                                   f"P(ratio > {v.revert_min_ratio:g}) = {p_not:.3f}, below {level:.2f} / "
                                   f"{levels[1]:.2f}")
    if kind != INCONCLUSIVE:
        why += f" ≥ {level:.2f}" + (" (deadline: the majority decides)" if deadline else "")
    if kind in (WORSE, INEFFECTIVE):
        why += (f"; P(ratio > 1) = {p_up:.3f} {'≥' if p_up >= v.worse_min_posterior else '<'} "
                f"{v.worse_min_posterior:g}" + ("" if median >= v.worse_min_ratio else
                                                f", median < {v.worse_min_ratio:g}"))
    if waits and thin:
        why += (f"; the deadline waits: {c.k_before:g} counted occurrences before it < {v.thin_deadline_events:g}, "
                "checking on until the evidence decides")
    elif waits:
        why += f"; the deadline waits: {expected:.1f} occurrences expected without an effect < {v.min_expected:g}"
    summary = (f"{kind}: ratio {median:.2f}× ({1 - a:.0%} interval {lo:.2f}–{hi:.2f}); {why} ({numbers}"
               + (f"; prior {prior[0]:g} in {prior[1]:g}d" if prior[0] else "")
               + (f"; overdispersion φ {c.dispersion:g}: counts weighed as /{c.dispersion:g}" if w is not c else "")
               + (f"; effect prior from {effect.changes} changes" if effect is not None and effect.changes else "")
               + (f"; workspace mix ×{mix:g} on the odds" if mix != 1.0 else "")
               + (f"; not counted: {', '.join(c.left_out)}" if c.left_out else "") + ")")
    return Verdict(kind, c.before, c.after, c.t_before, c.t_after, round(rb, 4), round(ra, 4), round(median, 4),
                   summary, round(p_cut, 4), round(p_not, 4), (round(lo, 4), round(hi, 4)), kind != INCONCLUSIVE,
                   round(p_up, 4), levels)


def assess(times: Iterable[datetime], applied_at: datetime, now: datetime, policy: LifecyclePolicy, *,
           excluded: Iterable[tuple[datetime, datetime]] = (), deadline: bool = False,
           observed_from: datetime | None = None, prior: tuple[float, float] = (0.0, 0.0)) -> Verdict:
    """The verdict on a change from its pattern's occurrence times: the one rule kg, `kg verify` and the
    analysis all use."""
    return judge(evidence(times, applied_at, now, policy, excluded=excluded, observed_from=observed_from),
                 policy, deadline=deadline, prior=prior)


def relapse(times: Iterable[datetime], live: Sequence[tuple[datetime, datetime]], now: datetime,
            policy: LifecyclePolicy, *, observed_from: datetime | None = None,
            prior: tuple[float, float] = (0.0, 0.0), effect: effects.EffectPrior | None = None) -> Verdict:
    """A reverted pattern judged again on its whole history (an A-B-A design): r = the rate while its rules
    were `live` / the rate in all the time they were not (before the first and since each revert, the same
    trigger rule as `evidence`, and its per-day cap or `recovery.max_per_day` when that is lower: the live period
    is frozen once the rule is out, so one burst in it would weigh for good). Once the rule is gone the base rate
    is measured afresh, so a wrong revert shows as a rate that came back."""
    v = policy.verification
    every = sorted(t for t in times if t <= now)
    spans = sorted(live)
    if not every or not spans:
        return judge(Counts(0, 0, 0.0, 0.0, 0.0, 0.0, ()), policy)

    def inside(t: datetime) -> bool:
        return any(a <= t < b for a, b in spans)

    on = [t for t in every if inside(t)]
    off = [t for t in every if not inside(t)]
    raw_off = len(off)
    left = []
    trig = (_trigger([t for t in off if t < spans[0][0]], policy)
            if v.leave_out_trigger or observed_from is None else None)
    if trig is not None:
        off.remove(trig)
        left.append("trigger")
    start = every[0] if observed_from is None else max(observed_from, every[0] - policy.promotion.window_days * DAY)
    holes = verify_watch.gaps(observed_from)  # nothing at all logged: no exposure on either side
    t_on = sum(verify_watch.days_watched(max(a, start), min(b, now), holes) for a, b in spans)
    t_off = max(verify_watch.days_watched(start, now, holes) - t_on, 0.0)
    cap = day_cap(every, now, policy, observed_from)
    if policy.recovery.max_per_day:  # a burst in the frozen live period (rules/lifecycle.toml [recovery])
        cap = min(cap, policy.recovery.max_per_day)
    k_on = float(sum(n for _, n in _capped(on, cap)))
    k_off = float(sum(n for _, n in _capped(off, cap)))
    capped = len(on) + len(off) - int(k_on + k_off)
    if capped:
        left.append(f"{capped} over {cap}/day")
    c = Counts(raw_off, len(on), k_off, round(t_off, 4), k_on, round(t_on, 4), tuple(left))
    return judge(c, policy, prior=prior, effect=effect)
