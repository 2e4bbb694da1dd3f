"""Does the learning loop keep the rules that help and remove the ones that do not? A seeded simulator of
histories where the truth is known, driving the REAL loop: a real workspace, `ws.log` for every occurrence,
`api.cycle` once a simulated day (`now` replayed), `api.approve` for the proposals a simulated user accepts.

Each pattern recurs as a Poisson process (rate drawn from --rate, optionally drifting on its own, optionally
with bursty days). When kg applies a rule for it, its rate is multiplied by the rule's true effect:
effective (× 0.05–0.45), ineffective (× 0.85–1.15) or harmful (× 1.6–2.6), drawn with the --mix shares.
The user approves promotion proposals after 0–3 days (--delay) and leaves verification requests alone, and
kg's question whether to try a rule again once it stopped trying (recovery.max_returns).

Beside kg, two deciders see the same events: a **baseline** (kg's former rule: rate after vs the 30 days
before, a 7-day floor, a verdict at day 7 then monthly, auto-revert when undecided at 28 days), and the **best
possible** (an oracle that knows each pattern's true base rate and burst days and decides by the Bayes
posterior of the effect class over the effect mix, on exactly the occurrences kg saw while the rule was live),
and a **Bayes decider that does not know the base rate** (the same posterior, the pattern's rate integrated over
the --rate range, on every occurrence kg saw: with the rule live and without it): what a statistician could do
with kg's data, where "best possible" is out of reach because the rate before a change rests on 3-5 occurrences.

`--wrong` prints, per seed, what kg saw at each check of every rule it got wrong at the end, classed by how it
went wrong (the traces behind the tuning notes in rules/lifecycle.toml).

By default the histories are replayed fast (bench/loop_replay.py: plain state, kg's own decision functions,
a few seconds of CPU a history); `--real` drives the real cycle end to end (minutes a history), and
tests/integration/test_loop_sim.py checks the two agree day for day.

    python bench/loop_sim.py --seeds 1,2,3                 # the full run (40 patterns, 120 days)
    python bench/loop_sim.py --seeds 4 --drift 0.5 --burst 0.2 --mix 40/40/20
    python bench/loop_sim.py --seeds 1 --real              # the real cycle, end to end
    python bench/loop_sim.py --seeds 11,12 --set verification.max_per_day=1   # try a rules value
    python bench/loop_sim.py --seeds 10,11 --frontier      # what any decider could reach on kg's data
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))  # loop_replay, the fast mode; loop_wrong
T0 = datetime(2026, 1, 5)
DAY = timedelta(days=1)
CLASSES = ("effective", "ineffective", "harmful")
EFFECT = {"effective": (0.05, 0.45), "ineffective": (0.85, 1.15), "harmful": (1.6, 2.6)}
LABEL = {"confirmed": "effective", "ineffective": "ineffective", "made_worse": "harmful"}


@dataclass
class Pattern:
    key: str
    rate: float
    cls: str
    effect: float
    drift: float          # the base rate at day d is rate × (1 + drift × d / days)
    target: str           # "auto" (TOOLS.md) or "propose" (AGENTS.md)
    live: bool = False
    # what happened
    applied: list[float] = field(default_factory=list)     # days kg applied a rule
    reverted: list[float] = field(default_factory=list)
    verdicts: list[tuple[float, str]] = field(default_factory=list)   # (day, decisive verdict)
    events: list[tuple[float, bool]] = field(default_factory=list)    # (day, a burst extra?)
    trace: list[tuple[float, str]] = field(default_factory=list)      # (day, why), fast mode: what kg saw
    checks: list[list[Any]] = field(default_factory=list)             # [out, back] days of kg's checks put back
    checked: int = 0                                                  # checks begun (put back or not)


def base_rate(p: Pattern, day: float, days: int) -> float:
    return p.rate * max(0.05, 1 + p.drift * day / days)


def make_patterns(rng: random.Random, n: int, mix: tuple[float, float, float], rate: tuple[float, float],
                  drift: float, days: int) -> list[Pattern]:
    out = []
    for i in range(n):
        cls = rng.choices(CLASSES, weights=mix)[0]
        lo, hi = EFFECT[cls]
        out.append(Pattern(key=f"sim.p{i:02d}", rate=rng.uniform(*rate), cls=cls, effect=rng.uniform(lo, hi),
                           drift=rng.uniform(-drift, drift), target="propose" if rng.random() < 0.3 else "auto"))
    return out


def run_history(seed: int, *, n: int, days: int, mix: tuple[float, float, float], rate: tuple[float, float],
                drift: float, burst: float, delay: int, root: Path,
                patterns: list[Pattern] | None = None, sets: list[str] = (), paired: bool = False) -> dict[str, Any]:
    """One history through the real loop; returns the patterns with what happened to each. `patterns`:
    given ones instead of drawn ones (a test's fixed cases); `sets`: `section.key=value` rules overrides,
    written into the workspace's kg.toml."""
    import kg
    from kg.lifecycle import api

    rng = random.Random(seed)
    pats = patterns if patterns is not None else make_patterns(rng, n, mix, rate, drift, days)
    by_key = {p.key: p for p in pats}
    ws = kg.init_workspace(root / f"ws-{seed}")
    if sets:
        tables: dict[str, list[str]] = {}  # one table per section: TOML refuses a table declared twice
        for k, _, v in (x.partition("=") for x in sets):
            tables.setdefault(k.rpartition(".")[0], []).append(f"{k.rpartition('.')[2]} = {v}\n")
        (ws.root / "kg.toml").write_text("".join(f"[rules.lifecycle.{t}]\n" + "".join(lines)
                                                 for t, lines in tables.items()))
        ws = kg.open_workspace(ws.root)
    approvals: dict[int, list[int]] = {}
    t_start = time.perf_counter()
    with ws:
        for day in range(days):
            for hour, p, extra in day_events(rng, pats, day, days, burst, seed if paired else None):
                at = T0 + day * DAY + timedelta(hours=hour)
                session = session_of(day, hour)
                fields = ({"area": "tooling"} if p.target == "auto" else {"area": "backend", "category": "workflow"})
                ws.log("error", f"{p.key} went wrong again", now=at, session=session, pattern_key=p.key,
                       action=f"Avoid the {p.key} mistake", link=False, **fields)
                p.events.append((day + hour / 24, extra))
            for number, key in approvals.pop(day, []):
                r = api.approve(ws, number, now=T0 + day * DAY + timedelta(hours=19))
                if r.get("action") == "applied":
                    by_key[key].live = True
                    by_key[key].applied.append(day + 19 / 24)
            try:
                rep = api.cycle(ws, now=T0 + day * DAY + timedelta(hours=20)).as_dict()
            except Exception:
                if os.environ.get("SIM_KEEP"):
                    print(f"failed on day {day}: {ws.root}", file=sys.stderr)
                    sys.stderr.flush()
                    os._exit(3)
                raise
            for v in rep["verified"]:
                p = by_key[v["pattern_key"]]
                if v["verdict"] != "inconclusive" or v["action"] == "auto_revert":
                    p.verdicts.append((day + 20 / 24, v["verdict"] if v["action"] != "auto_revert" else "ineffective"))
            left_out = set()
            for c in rep.get("checks", []):  # kg took a rule out for a check, put it back, or left it out
                p = by_key[c["pattern_key"]]
                p.live = c["action"] == "back"
                if c["action"] == "out":
                    p.checks.append([day + 20 / 24, None])
                    p.checked += 1
                elif c["action"] == "back":
                    p.checks[-1][1] = day + 20 / 24
                else:
                    p.reverted.append(p.checks.pop()[0])  # out since the check began
                    left_out.add(c["change"])
            for r in rep["reverted"]:
                if r["change"] in left_out:
                    continue
                p = by_key[r["pattern_key"]]
                p.live = False
                p.reverted.append(day + 20 / 24)
            for r in rep["promoted"]:
                p = by_key[r["pattern_key"]]
                p.live = True
                p.applied.append(day + 20 / 24)
            for q in rep["proposed"]:  # kg's question after recovery.max_returns tries is left alone, as requests are
                if q["type"] == "promotion" and not q.get("asked"):
                    wait = approval_delay(rng, delay, seed if paired else None, q["pattern_key"], day)
                    approvals.setdefault(day + 1 + wait, []).append((q["number"], q["pattern_key"]))
    return {"patterns": pats, "seconds": time.perf_counter() - t_start}


def day_events(rng: random.Random, pats: list[Pattern], day: int, days: int,
               burst: float, paired: int | None = None) -> list[tuple[float, Pattern, bool]]:
    """One simulated day's occurrences, (hour, pattern, a burst extra?) in time order: the same draws in both
    modes. `paired` (the history's seed): each pattern's day draws from its own stream, its count by inversion
    of one uniform, so two policies on one seed see the same days wherever their rules agree, and a live rule's
    day has at most the occurrences of the same day without it (common random numbers: a policy's cost is then
    measured against another's on the same luck). Without it one stream serves every draw, and one decision that
    differs shifts every later draw of the history."""
    todays = []
    for p in pats:
        lam = base_rate(p, day, days) * (p.effect if p.live else 1.0)
        if paired is not None:  # the count, then whether a burst comes and its size, then the hours
            own = random.Random(f"{paired}/{p.key}/{day}")
            k = _poisson_inverse(own.random(), lam)
            bursts, extra = own.random() < burst, own.randint(2, 5)
            todays += [(own.uniform(8, 18), p, False) for _ in range(k)]
            if k and bursts:
                todays += [(own.uniform(8, 18), p, True) for _ in range(extra)]
            continue
        k = _poisson(rng, lam)
        for _ in range(k):
            todays.append((rng.uniform(8, 18), p, False))
        if k and burst and rng.random() < burst:
            todays += [(rng.uniform(8, 18), p, True) for _ in range(rng.randint(2, 5))]
    todays.sort(key=lambda t: t[0])
    return todays


def session_of(day: int, hour: float) -> str:
    return f"s{day:03d}-{int(hour) // 4}"


def _poisson_inverse(u: float, lam: float) -> int:
    """The smallest k with P(X ≤ k) > u, X ~ Poisson(lam): monotone in lam for a fixed u."""
    k, term = 0, math.exp(-lam)
    total = term
    while total <= u and k < 1000:
        k += 1
        term *= lam / k
        total += term
    return k


def approval_delay(rng: random.Random, delay: int, paired: int | None, key: str, day: int) -> int:
    """The days the simulated user takes to approve a proposal (0..delay): its own draw when `paired`."""
    if not delay:
        return 0
    return (random.Random(f"{paired}/{key}/{day}/approve") if paired is not None else rng).randint(0, delay)


def _poisson(rng: random.Random, lam: float) -> int:
    k, t = 0, rng.expovariate(1.0) if lam > 0 else math.inf
    while t < lam:
        k += 1
        t += rng.expovariate(1.0)
    return k


# -- judging what happened ---------------------------------------------------------------------------------------
def live_periods(p: Pattern, until: float) -> list[tuple[float, float]]:
    """When a rule was in its file: applied to reverted, less the days kg had it out for a check."""
    ends = [*p.reverted]
    spans = [(a, ends[i] if i < len(ends) else until) for i, a in enumerate(p.applied) if a < until]
    out = []
    for a, b in spans:
        cur = a
        for x, y in sorted((x, until if y is None else y) for x, y in p.checks):
            if x < b and y > cur:
                if x > cur:
                    out.append((cur, x))
                cur = max(cur, y)
        if b > cur:
            out.append((cur, b))
    return out


def check_days(p: Pattern, until: float) -> float:
    return sum(min(until if y is None else y, until) - x for x, y in p.checks if x < until)


def oracle(p: Pattern, until: float, days: int, mix: tuple[float, float, float]) -> tuple[str, bool]:
    """The best decision on the occurrences kg saw while a rule was live, knowing the true base rate and which
    occurrences were burst extras: the posterior of the effect class over the mix. (label, keep)."""
    spans = [(a, min(b, until)) for a, b in live_periods(p, until)]
    k = sum(1 for t, extra in p.events if not extra and any(a <= t < b for a, b in spans))
    expo = sum(_integral(p, a, b, days) for a, b in spans)
    logs: dict[str, list[float]] = {}
    for cls in CLASSES:
        lo, hi = EFFECT[cls]
        grid = [lo + (hi - lo) * (i + 0.5) / 40 for i in range(40)]
        logs[cls] = [k * math.log(m * expo) - m * expo if expo > 0 else 0.0 for m in grid]
    top = max(x for v in logs.values() for x in v)
    post = {cls: w * sum(math.exp(x - top) for x in logs[cls]) / 40 for cls, w in zip(CLASSES, mix, strict=True)}
    label = max(post, key=post.get)
    return label, post["effective"] > post["ineffective"] + post["harmful"]


def bayes_unknown_rate(p: Pattern, until: float, mix: tuple[float, float, float], rate: tuple[float, float],
                       start: float) -> tuple[str, bool]:
    """The Bayes decision without the pattern's base rate: its rate uniform over the --rate range (no drift,
    no bursts assumed), the effect class over the mix, on every occurrence from `start` (the first in the
    history) to `until`, live or not. (label, keep)."""
    post = class_posterior(p, until, mix, rate, start)
    label = max(post, key=post.get)
    return label, post["effective"] > post["ineffective"] + post["harmful"]


def class_posterior(p: Pattern, until: float, mix: tuple[float, float, float], rate: tuple[float, float],
                    start: float) -> dict[str, float]:
    """`bayes_unknown_rate`'s posterior of the effect class (unnormalised)."""
    spans = [(a, min(b, until)) for a, b in live_periods(p, until)]
    times = [t for t, _ in p.events if start <= t < until]
    k_on = sum(1 for t in times if any(a <= t < b for a, b in spans))
    t_on = sum(b - a for a, b in spans)
    k_off, t_off = len(times) - k_on, max(until - start - t_on, 0.0)
    lams = [rate[0] + (rate[1] - rate[0]) * (i + 0.5) / 60 for i in range(60)]
    logs: dict[str, list[float]] = {}
    for cls in CLASSES:
        lo, hi = EFFECT[cls]
        logs[cls] = [k_off * math.log(lam) - lam * t_off + k_on * math.log(m * lam) - m * lam * t_on
                     for m in (lo + (hi - lo) * (i + 0.5) / 30 for i in range(30)) for lam in lams]
    top = max(x for v in logs.values() for x in v)
    return {cls: w * sum(math.exp(x - top) for x in logs[cls]) for cls, w in zip(CLASSES, mix, strict=True)}


def _integral(p: Pattern, a: float, b: float, days: int) -> float:
    steps = max(1, int((b - a) * 4))
    h = (b - a) / steps
    return sum(base_rate(p, a + (i + 0.5) * h, days) for i in range(steps)) * h


def baseline(p: Pattern, days: int) -> tuple[str | None, float | None, bool]:
    """kg's former rule on the first live period: (first decisive label, its day, keep at the end)."""
    if not p.applied:
        return None, None, True
    t0 = p.applied[0]
    end = p.reverted[0] if p.reverted else days
    times = [t for t, _ in p.events]
    before = [t for t in times if t0 - 30 <= t < t0]
    bdays = min(max(t0 - before[0], 7.0), 30.0) if before else 7.0
    rb = len(before) / bdays
    label, when, check, status = None, None, t0 + 7, "applied"
    while check <= end:
        since = t0 if status == "applied" else max(t0, check - 30)
        after = sum(1 for t in times if since <= t < check)
        ra = after / (check - since)
        ratio = ra / rb if rb > 0 else None
        if after == 0 or (ratio is not None and ratio <= 0.5):
            v = "confirmed"
        elif after >= 2 and ratio is not None and ratio >= 1.5:
            v = "made_worse"
        elif after >= 2 and ratio is not None and ratio >= 0.8:
            v = "ineffective"
        else:
            v = "inconclusive"
        if v == "inconclusive" and status == "applied" and check - t0 >= 28:
            v = "ineffective"
        if v != "inconclusive" and label is None:
            label, when = v, check - t0
        if v in ("ineffective", "made_worse"):
            return label, when, False
        if v == "confirmed":
            status = "confirmed"
        check += 30 if status == "confirmed" else 7
    return label, when, True


def score(hist: list[dict[str, Any]], days: int, mix: tuple[float, float, float],
          rate: tuple[float, float] = (0.1, 1.0)) -> dict[str, dict[str, Any]]:
    rows: dict[str, list] = {"kg": [], "baseline": [], "best": [], "bayes": []}
    for h in hist:
        start = min((t for p in h["patterns"] for t, _ in p.events), default=0.0)
        for p in h["patterns"]:
            if not p.applied:
                continue
            eff = p.cls == "effective"
            first = p.verdicts[0] if p.verdicts else None
            rows["kg"].append(kg_row(p, days))
            b_label, b_days, b_keep = baseline(p, days)
            rows["baseline"].append(dict(
                eff=eff, first_right=None if b_label is None else (b_label == "confirmed") == eff,
                end_right=b_keep == eff, label=None if b_label is None else LABEL[b_label] == p.cls,
                reverted=not b_keep, permanent=not b_keep, days=b_days, left=b_keep and not eff))
            o_first = oracle(p, first[0], days, mix) if first else None
            o_label, o_keep = oracle(p, days, days, mix)
            rows["best"].append(dict(
                eff=eff, first_right=None if o_first is None else o_first[1] == eff, end_right=o_keep == eff,
                label=(o_first or (o_label, o_keep))[0] == p.cls, reverted=not o_keep, permanent=not o_keep,
                days=None if first is None else first[0] - p.applied[0], left=o_keep and not eff))
            u_first = bayes_unknown_rate(p, first[0], mix, rate, start) if first else None
            u_label, u_keep = bayes_unknown_rate(p, days, mix, rate, start)
            rows["bayes"].append(dict(
                eff=eff, first_right=None if u_first is None else u_first[1] == eff, end_right=u_keep == eff,
                label=(u_first or (u_label, u_keep))[0] == p.cls, reverted=not u_keep, permanent=not u_keep,
                days=None if first is None else first[0] - p.applied[0], left=u_keep and not eff))
    return {name: _summary(r) for name, r in rows.items()}


def kg_row(p: Pattern, days: int) -> dict[str, Any]:
    """What kg did with one promoted rule, scored against the truth (a row of `score`'s kg column)."""
    eff = p.cls == "effective"
    live_end = len(p.applied) > len(p.reverted)
    first = p.verdicts[0] if p.verdicts else None
    return dict(
        eff=eff, first_right=None if first is None else (first[1] == "confirmed") == eff,
        end_right=live_end == eff, label=None if first is None else LABEL[first[1]] == p.cls,
        reverted=bool(p.reverted), permanent=bool(p.reverted) and not live_end,
        days=None if first is None else first[0] - p.applied[0], left=live_end and not eff,
        checks=p.checked, out_days=check_days(p, days))


def occurrences(hist: list[dict[str, Any]]) -> dict[str, int]:
    """The occurrences the simulated user saw, per effect class (a burst's extras left out)."""
    out: dict[str, int] = {}
    for h in hist:
        for p in h["patterns"]:
            out[p.cls] = out.get(p.cls, 0) + sum(1 for _, extra in p.events if not extra)
    return out


def kg_summary(hist: list[dict[str, Any]], days: int) -> dict[str, Any]:
    """`score`'s kg column alone (no deciders beside it)."""
    return _summary([kg_row(p, days) for h in hist for p in h["patterns"] if p.applied])


def _pct(xs: list[bool]) -> float | None:
    return round(100 * sum(xs) / len(xs), 1) if xs else None


def _summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    eff = [r for r in rows if r["eff"]]
    bad = [r for r in rows if not r["eff"]]
    days = [r["days"] for r in rows if r["days"] is not None]
    return {
        "rules": len(rows), "effective": len(eff),
        "first_right": _pct([r["first_right"] for r in rows if r["first_right"] is not None]),
        "end_right": _pct([r["end_right"] for r in rows]),
        "label_right": _pct([r["label"] for r in rows if r["label"] is not None]),
        "effective_reverted": _pct([r["reverted"] for r in eff]),
        "effective_reverted_n": sum(r["reverted"] for r in eff),
        "effective_permanent_n": sum(r["permanent"] for r in eff),
        "bad_left_applied": _pct([r["left"] for r in bad]),
        "undecided": sum(r["days"] is None for r in rows),
        "median_days": round(statistics.median(days), 1) if days else None,
        "checks": sum(r.get("checks", 0) for r in rows),
        "effective_out_days": round(sum(r.get("out_days", 0.0) for r in eff), 1),
    }


ROWS = [("keep/revert right, at the first decisive verdict (%)", "first_right"),
        ("keep/revert right, at the end (%)", "end_right"),
        ("verdict label right (%)", "label_right"),
        ("effective rules reverted (%)", "effective_reverted"),
        ("  of them (n) / still reverted at the end (n)", "eff_n"),
        ("ineffective or harmful still applied at the end (%)", "bad_left_applied"),
        ("median days to a decisive verdict", "median_days"),
        ("checks (rules taken out to measure the rate without them)", "checks"),
        ("  days effective rules were out for a check (total)", "effective_out_days"),
        ("rules never decided", "undecided")]


def table(title: str, s: dict[str, dict[str, Any]]) -> str:
    out = [title, "| | kg | baseline (former rule) | best possible | Bayes, base rate unknown |",
           "|---|---|---|---|---|"]
    for label, key in ROWS:
        cells = []
        for name in ("kg", "baseline", "best", "bayes"):
            d = s[name]
            cells.append(f"{d['effective_reverted_n']} / {d['effective_permanent_n']}" if key == "eff_n"
                         else str(d.get(key)))
        out.append(f"| {label} | " + " | ".join(cells) + " |")
    out.append(f"({s['kg']['rules']} promoted rules, {s['kg']['effective']} effective)")
    return "\n".join(out)


from loop_wrong import breakdown, why_not_back, wrong_cause, wrong_class, wrong_report  # noqa: E402,F401 (--wrong)


def load_policy(overrides: list[str]) -> Any:
    """The packaged lifecycle rules with `section.key=value` overrides (TOML values): those of the kg that is
    imported, so another tree's code replays with its own rules (`/work/main/.venv/bin/python bench/...`)."""
    import tomllib

    import kg
    from kg.lifecycle.policy import LifecyclePolicy

    data = tomllib.loads((Path(kg.__file__).resolve().parents[1] / "rules" / "lifecycle.toml").read_text())
    for item in overrides:
        key, _, value = item.partition("=")
        section, _, name = key.rpartition(".")
        data.setdefault(section, {})[name] = tomllib.loads(f"x = {value}")["x"]
    return LifecyclePolicy.from_mapping(data)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", default="1,2,3", help="comma-separated seeds, one history each")
    ap.add_argument("--patterns", type=int, default=40)
    ap.add_argument("--days", type=int, default=120)
    ap.add_argument("--mix", default="60/30/10", help="effective/ineffective/harmful shares")
    ap.add_argument("--rate", default="0.1-1.0", help="daily recurrence rates, lo-hi")
    ap.add_argument("--drift", type=float, default=0.0, help="base rates drift by up to ±this over the history")
    ap.add_argument("--burst", type=float, default=0.0, help="chance a day with an occurrence brings 2-5 more")
    ap.add_argument("--delay", type=int, default=3, help="approval delay, 0..N days")
    ap.add_argument("--real", action="store_true",
                    help="drive the real cycle end to end (a workspace, ws.log, api.cycle; ~100x slower)")
    ap.add_argument("--set", action="append", default=[], metavar="SECTION.KEY=VALUE",
                    help="override a rules/lifecycle.toml value (for tuning; --real writes it into kg.toml)")
    ap.add_argument("--paired", action="store_true",
                    help="each pattern's day from its own random stream (common random numbers, as loop_cost.py)")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--frontier", action="store_true",
                    help="also print what the Bayes decider reaches on kg's data at several keep levels (the "
                         "trade-off between effective rules reverted and bad rules left applied)")
    ap.add_argument("--wrong", action="store_true",
                    help="print what kg saw at each check of the rules it got wrong at the end, classed (fast mode)")
    ap.add_argument("--breakdown", action="store_true",
                    help="bad rules left and effective rules reverted, by cause; which the Bayes decider misses too")
    a = ap.parse_args(argv)
    mix = tuple(float(x) for x in a.mix.split("/"))
    if len(mix) != 3:
        ap.error(f"--mix takes three shares, effective/ineffective/harmful (e.g. 60/30/10), not {a.mix!r}")
    lo, hi = (float(x) for x in a.rate.split("-"))
    seeds = [int(s) for s in a.seeds.split(",")]
    hist = []
    opts = dict(n=a.patterns, days=a.days, mix=mix, rate=(lo, hi), drift=a.drift, burst=a.burst, delay=a.delay,
                paired=a.paired)
    if a.real:
        with tempfile.TemporaryDirectory() as tmp:
            for seed in seeds:
                hist.append(run_history(seed, root=Path(tmp), sets=a.set, **opts))
    else:
        from loop_replay import replay_history

        policy = load_policy(a.set)
        hist = [replay_history(seed, policy=policy, **opts) for seed in seeds]
    s = score(hist, a.days, mix, (lo, hi))
    if a.json:
        from loop_frontier import frontier, pooled_end

        extra = ({"frontier": frontier(hist, a.days, mix, (lo, hi)),
                  "pooled_end": pooled_end(hist, a.days, load_policy(a.set))} if a.frontier else {})
        print(json.dumps({"args": vars(a), "scores": s, **extra, "occurrences": occurrences(hist),
                          "seconds": [round(h["seconds"], 1) for h in hist]}))
    else:
        print(table(f"seeds {a.seeds}, mix {a.mix}, rates {a.rate}/day, drift ±{a.drift}, burst {a.burst}, "
                    f"{a.patterns} patterns × {a.days} days", s))
        if a.frontier:
            from loop_frontier import frontier, frontier_table, pooled_end

            print(frontier_table(frontier(hist, a.days, mix, (lo, hi)), s["kg"],
                                 pooled_end(hist, a.days, load_policy(a.set))))
        if a.wrong:
            print(wrong_report(seeds, hist, a.days))
        if a.breakdown:
            print(breakdown(hist, a.days, mix, (lo, hi)))
        occ = occurrences(hist)
        print(f"occurrences the user saw (bench/loop_cost.py): effective {occ.get('effective', 0)}, ineffective "
              f"{occ.get('ineffective', 0)}, harmful {occ.get('harmful', 0)}, total {sum(occ.values())}")
        print(f"seconds per history ({'real cycle' if a.real else 'fast replay'}): "
              f"{', '.join(str(round(h['seconds'], 1)) for h in hist)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
