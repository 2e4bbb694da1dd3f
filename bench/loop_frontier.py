"""`bench/loop_sim.py --frontier`: what any decider could reach on kg's own data. The Bayes decider that does
not know the base rate (`loop_sim.class_posterior`), at several keep levels, judged at the end of each history."""

from __future__ import annotations

from typing import Any

import loop_sim as sim


def frontier(hist: list[dict[str, Any]], days: int, mix: tuple[float, float, float],
             rate: tuple[float, float] = (0.1, 1.0),
             levels: tuple[float, ...] = (0.3, 0.5, 0.6, 0.7, 0.8, 0.9)) -> list[dict[str, Any]]:
    """What any decider could reach on kg's own data: the Bayes decider without the base rate (told the true
    rate range and effect mix) keeping a rule when P(effective) > level, judged at the end of each history.
    One row per level: right at the end, effective rules reverted at the end, bad rules left applied (%). A
    higher level trades effective rules for bad ones; the row whose both rates meet their targets, if any, is
    what the data allow. (It judges once, at the end, with every occurrence kg's own reverts made visible, so
    its 'effective reverted' counts only rules off at the end; kg's counts every revert on the way.)"""
    probs = []
    for h in hist:
        start = min((t for p in h["patterns"] for t, _ in p.events), default=0.0)
        for p in h["patterns"]:
            if p.applied:
                post = sim.class_posterior(p, days, mix, rate, start)
                probs.append((p.cls == "effective", post["effective"] / sum(post.values())))
    eff = [q for e, q in probs if e]
    bad = [q for e, q in probs if not e]
    out = []
    for level in levels:
        kept_eff, kept_bad = sum(q > level for q in eff), sum(q > level for q in bad)
        right = [True] * (kept_eff + len(bad) - kept_bad) + [False] * (len(eff) - kept_eff + kept_bad)
        out.append({"level": level, "end_right": sim._pct(right),
                    "effective_reverted": sim._pct([q <= level for q in eff]),
                    "bad_left_applied": sim._pct([q > level for q in bad])})
    return out


def pooled_end(hist: list[dict[str, Any]], days: int, policy: Any) -> dict[str, Any]:
    """What kg's own data allow without the simulator's truth: each promoted pattern's occurrences while its rules
    were live against all the other time since kg started watching (at most a promotion window before its first
    occurrence, as kg's clock), every try and check pooled, the rate before with the workspace's Gamma prior fitted
    to those off-periods (`verify.population_prior`), judged once at the end: kept when P(ratio < boundary_ratio)
    > 0.5. The Bayes decider is told the rate range and the effect mix; this row knows what a workspace knows, so
    the distance from it to kg is what kg's sequential decisions lose, and from it to Bayes what the truth adds."""
    from kg.lifecycle import stats, verify

    rows = []
    for h in hist:
        start = min((t for p in h["patterns"] for t, _ in p.events), default=0.0)
        counts = []
        for p in h["patterns"]:
            if not p.applied:
                continue
            since = max(start, min(t for t, _ in p.events) - policy.promotion.window_days)
            spans = [(max(a, since), min(b, days)) for a, b in sim.live_periods(p, days)
                     if min(b, days) > max(a, since)]
            times = [t for t, _ in p.events if since <= t < days]
            k_on = sum(1 for t in times if any(a <= t < b for a, b in spans))
            t_on = sum(b - a for a, b in spans)
            counts.append((p, len(times) - k_on, max(days - since - t_on, 0.0), k_on, t_on))
        prior = verify.population_prior([(kb, tb) for _, kb, tb, _, _ in counts], policy)
        for p, kb, tb, ka, ta in counts:
            cut = policy.verification.boundary_ratio
            keep = ta > 0 and stats.p_ratio_below(cut, ka, ta, kb + prior[0], tb + prior[1]) > 0.5
            rows.append((p.cls == "effective", keep))
    eff = [k for e, k in rows if e]
    bad = [k for e, k in rows if not e]
    return {"end_right": sim._pct([k == e for e, k in rows]), "effective_reverted": sim._pct([not k for k in eff]),
            "bad_left_applied": sim._pct(bad)}


def frontier_table(rows: list[dict[str, Any]], kg: dict[str, Any], pooled: dict[str, Any] | None = None) -> str:
    out = ["Bayes decider (base rate unknown) keeping a rule when P(effective) > level, at the end, same data:",
           "| level | right at the end (%) | effective reverted at the end (%) | bad left applied (%) |",
           "|---|---|---|---|"]
    out += [f"| {r['level']:g} | {r['end_right']} | {r['effective_reverted']} | {r['bad_left_applied']} |"
            for r in rows]
    if pooled is not None:
        out.append(f"| kg's own counts pooled, majority once at the end | {pooled['end_right']} | "
                   f"{pooled['effective_reverted']} | {pooled['bad_left_applied']} |")
    out.append(f"| kg | {kg['end_right']} | {_pct_of(kg['effective_reverted'], kg)} | {kg['bad_left_applied']} |")
    return "\n".join(out)


def _pct_of(_: Any, kg: dict[str, Any]) -> float | None:
    """kg's effective rules still reverted at the end (%), comparable with the frontier's column."""
    return round(100 * kg["effective_permanent_n"] / kg["effective"], 1) if kg["effective"] else None
