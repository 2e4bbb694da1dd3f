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


def frontier_table(rows: list[dict[str, Any]], kg: dict[str, Any]) -> str:
    out = ["Bayes decider (base rate unknown) keeping a rule when P(effective) > level, at the end, same data:",
           "| level | right at the end (%) | effective reverted at the end (%) | bad left applied (%) |",
           "|---|---|---|---|"]
    out += [f"| {r['level']:g} | {r['end_right']} | {r['effective_reverted']} | {r['bad_left_applied']} |"
            for r in rows]
    out.append(f"| kg | {kg['end_right']} | {_pct_of(kg['effective_reverted'], kg)} | {kg['bad_left_applied']} |")
    return "\n".join(out)


def _pct_of(_: Any, kg: dict[str, Any]) -> float | None:
    """kg's effective rules still reverted at the end (%), comparable with the frontier's column."""
    return round(100 * kg["effective_permanent_n"] / kg["effective"], 1) if kg["effective"] else None
