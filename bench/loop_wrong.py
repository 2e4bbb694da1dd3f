"""`bench/loop_sim.py --wrong`: how kg got each rule wrong at the end, and what misled it (the traces behind the
tuning notes in rules/lifecycle.toml)."""

from __future__ import annotations

import math
from typing import Any


def wrong_class(p: Any) -> str | None:
    """How kg got a rule wrong at the end (None: right): an ineffective or harmful rule still applied (and
    how it was kept), or an effective rule reverted (at the deadline, at the 1 − error_rate level, or while
    monitored after a confirmation; "for good" when it was not applied again by the end)."""
    live_end = len(p.applied) > len(p.reverted)
    checks = [why for _, why in p.trace if not why.startswith("relapse")]
    first = next((w for w in checks if not w.startswith("extend")), None)
    if p.cls != "effective" and live_end:
        if len(p.applied) > 1:
            return "bad left: applied again after a revert"
        if first is None:
            return "bad left: never decided"
        return ("bad left: confirmed at the deadline" if "deadline" in first else
                "bad left: confirmed at 1 − error_rate")
    if p.cls == "effective" and p.reverted:
        i = next((i for i, w in enumerate(checks) if w.split(":")[0] in ("revert", "auto_revert")), len(checks))
        how = ("at the deadline" if i < len(checks) and "deadline" in checks[i] else
               "while monitored" if any(w.startswith("keep: confirmed") for w in checks[:i]) else
               "at 1 − revert_error_rate")
        return f"effective reverted {how}" + ("" if live_end else ", for good")
    return None


def why_not_back(p: Any, days: int, cooldown: int = 14) -> str | None:
    """Why an effective rule is still reverted at the end (None: it is not): what recovery saw after its last
    revert. "reverted too late": the end came within the cool-down; "never recurred enough": no relapse was
    judged (the pattern did not recur recovery.min_recurrence times in min_sessions sessions since); "tried
    N times": the retries were spent; else the last relapse's numbers kept it out ("relapse P(ratio > 0.5)
    = x ≥ retry_below": the on-period's occurrences, frozen once it is reverted, still show the failure)."""
    if p.cls != "effective" or not p.reverted or len(p.applied) > len(p.reverted):
        return None
    gone = [d for d, why in p.trace if why.startswith(("revert", "auto_revert"))]
    last = max(gone) if gone else p.reverted[-1]  # a check's revert is dated when it ended, not when it began
    if last > days - cooldown:
        return "reverted too late (within the cool-down of the end)"
    notes = [why for d, why in p.trace if d > last and why.startswith("relapse")]
    if not notes:
        return "never recurred enough after the cool-down"
    if len(p.applied) > 1 and "tried" not in notes[-1] and "looks wrong" not in notes[-1]:
        return f"tried {len(p.applied)} times, retries spent"
    head = notes[-1].split(": ", 2)[1]
    return f"relapse kept it out ({head.split(' (')[0]})"


def wrong_cause(p: Any, days: int, start: float) -> str:
    """Why the occurrences misled kg about a rule it got wrong, from the truth: the observed ratio (rate
    after / rate before, from the first change to the wrong decision) is the true effect × the drift of the
    base rate between the two windows × what burst extras added on each side × chance. The factor that
    pushed the ratio furthest the wrong way is the cause: "drift mistaken for an effect", "baseline from a
    burst" (extras before the change), "burst inside the after-window", or "chance (thin baseline)"."""
    import loop_sim as sim  # (imported here: loop_sim imports this module)

    t0 = p.applied[0]
    bad = p.cls != "effective"
    end = (p.verdicts[-1][0] if bad and p.verdicts else p.reverted[0] if p.reverted else days)
    end = max(end, t0 + 1)
    first = min((t for t, _ in p.events), default=t0)
    b0 = max(start, first - 30.0)  # where kg starts the clock (promotion.window_days)

    def rate(a: float, b: float, extras: bool) -> float:
        n = sum(1 for t, x in p.events if a <= t < b and (extras or not x))
        return (n + 0.5) / max(b - a, 0.5)

    drift = math.log(sim._integral(p, t0, end, days) / max(end - t0, 1e-9)) - math.log(
        sim._integral(p, b0, t0, days) / max(t0 - b0, 1e-9)) if t0 > b0 else 0.0
    burst_before = math.log(rate(b0, t0, True) / rate(b0, t0, False))
    burst_after = math.log(rate(t0, end, True) / rate(t0, end, False))
    observed = math.log(rate(t0, end, True) / rate(b0, t0, True))
    chance = observed - math.log(p.effect) - drift - burst_after + burst_before
    sign = -1.0 if bad else 1.0  # bad rules were kept: the ratio looked too low; effective ones too high
    parts = {"drift mistaken for an effect": sign * drift, "baseline from a burst": -sign * burst_before,
             "burst inside the after-window": sign * burst_after, "chance (thin baseline)": sign * chance}
    return max(parts, key=parts.get)


def wrong_report(seeds: list[int], hist: list[dict[str, Any]], days: int = 120) -> str:
    """Every wrong rule with its checks, then the count per class and per cause."""
    out, classes, causes, backs = [], {}, {}, {}
    for seed, h in zip(seeds, hist, strict=True):
        start = min((t for p in h["patterns"] for t, _ in p.events), default=0.0)
        for p in h["patterns"]:
            c = wrong_class(p) if p.applied else None
            if c is None:
                continue
            classes[c] = classes.get(c, 0) + 1
            cause = wrong_cause(p, days, start)
            causes[cause] = causes.get(cause, 0) + 1
            c = f"{c}; cause: {cause}"
            if (gone := why_not_back(p, days)) is not None:
                backs[gone] = backs.get(gone, 0) + 1
                c += f"; not back: {gone}"
            before = sum(1 for t, _ in p.events if t < p.applied[0])
            out.append(f"== seed {seed} {p.key}: {c} ({p.cls}, rate {p.rate:.2f}/day × {p.effect:.2f}, drift "
                       f"{p.drift:+.2f}; {before} occurrences before day {p.applied[0]:.1f}; applied "
                       f"{[round(x, 1) for x in p.applied]}, reverted {[round(x, 1) for x in p.reverted]})")
            out += [f"   day {d:6.1f} {why}" for d, why in p.trace if not why.startswith("relapse: no sign")]
    out.append("wrong at the end, by class: " + "; ".join(f"{n} {c}" for c, n in
                                                         sorted(classes.items(), key=lambda kv: -kv[1])))
    out.append("wrong at the end, by cause: " + "; ".join(f"{n} {c}" for c, n in
                                                         sorted(causes.items(), key=lambda kv: -kv[1])))
    out.append("effective rules still reverted at the end, why not back: " + "; ".join(
        f"{n} {c}" for c, n in sorted(backs.items(), key=lambda kv: -kv[1])))
    return "\n".join(out)




def _first(p: Any) -> tuple[str, float | None]:
    """How kg first decided a rule (the first check that did not extend) and the counted occurrences its rate
    before rested on then (None when the line does not say)."""
    import re

    for _, why in p.trace:
        if why.startswith(("relapse", "extend")):
            continue
        how = ("check at the deadline" if "deadline" in why else "check") if why.startswith("check:") else \
            why.split(":")[0] + (" at the deadline" if "deadline" in why else "")
        m = re.search(r"before \d+ \(([\d.]+) counted\)|; ([\d.]+) counted occurrences before it", why)
        return how, float(m.group(1) or m.group(2)) if m else None
    return "never decided", None


def _bins(x: float | None, edges: tuple[float, ...], unit: str = "") -> str:
    if x is None:
        return "?"
    lo = max((e for e in edges if e <= x), default=None)
    hi = min((e for e in edges if e > x), default=None)
    return f"<{hi:g}{unit}" if lo is None else f"{lo:g}+{unit}" if hi is None else f"{lo:g}-{hi:g}{unit}"


def breakdown(hist: list[dict[str, Any]], days: int, mix: tuple[float, float, float],
              rate: tuple[float, float]) -> str:
    """The bad rules left applied and the effective rules reverted, by how kg first decided them, the counted
    occurrences their rate before rested on then, the day kg promoted them and their pattern's true rate; and how
    many of each the Bayes decider beside kg (base rate unknown, judged once at the end on every occurrence kg saw)
    gets wrong too: the share no decider could fix with the data kg had."""
    import loop_sim as sim

    groups: dict[str, list[tuple[Any, bool]]] = {"bad left applied at the end": [],
                                                 "effective reverted (on the way)": [],
                                                 "effective reverted, still at the end": []}
    for h in hist:
        start = min((t for p in h["patterns"] for t, _ in p.events), default=0.0)
        for p in h["patterns"]:
            if not p.applied:
                continue
            live = len(p.applied) > len(p.reverted)
            bayes_wrong = sim.bayes_unknown_rate(p, days, mix, rate, start)[1] != (p.cls == "effective")
            if p.cls != "effective" and live:
                groups["bad left applied at the end"].append((p, bayes_wrong))
            if p.cls == "effective" and p.reverted:
                groups["effective reverted (on the way)"].append((p, bayes_wrong))
                if not live:
                    groups["effective reverted, still at the end"].append((p, bayes_wrong))
    out = []
    for name, rows in groups.items():
        out.append(f"{name}: {len(rows)}, the Bayes decider wrong on {sum(w for _, w in rows)} of them too")
        facets = {"first decided": lambda p: _first(p)[0] + (", tried again" if len(p.applied) > 1 else ""),
                  "counted before": lambda p: _bins(None if _first(p)[1] is None else round(_first(p)[1]), (3, 5, 10)),
                  "promoted on day": lambda p: _bins(p.applied[0], (10, 30, 60)),
                  "rate a day": lambda p: _bins(p.rate, (0.3, 0.6))}
        for facet, key in facets.items():
            count: dict[str, list[int]] = {}
            for p, w in rows:
                c = count.setdefault(key(p), [0, 0])
                c[0] += 1
                c[1] += w
            out.append(f"  {facet}: " + "; ".join(f"{k} {n} ({b} Bayes too)" for k, (n, b) in
                                                   sorted(count.items(), key=lambda kv: -kv[1][0])))
    return "\n".join(out)
