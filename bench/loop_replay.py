"""The loop simulator's fast mode: the same histories as `loop_sim.run_history`, with the graph and the files
replaced by plain Python state, and every decision taken by kg's own pure functions, called the way the cycle
calls them (kg/lifecycle/cycle.py `verify`, kg/lifecycle/promoting.py `ready_rows`/`promote_all`):

- promotion: `promote.eligible` on the window's counts, `promote.rank`, `promote.plan`, `promote.Budget`;
- verification: `verify.population_prior` over every change's baseline once a cycle, `verify.evidence`,
  `verify.judge` (monitoring a confirmed rule), `verify.is_deadline`, `verify.transition`;
- recovery: cooled-down reverted patterns that recur, `verify.relapse` and `promoting.relapse_head`, and
  `promote.plan`'s rule that the same text again needs a human's yes (a proposal the user approves).

About 100× faster than driving the real cycle (`loop_sim.py --real`), which checks that the two agree.
"""

from __future__ import annotations

import inspect
import itertools
import random
import time
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from kg.lifecycle import promote, promoting, verify, verify_check, verify_mix, verify_watch
from kg.lifecycle.policy import LifecyclePolicy

DAY = timedelta(days=1)
TEXT = "Avoid the {key} mistake"
# An older kg has neither (the held-out comparison replays main's code with this bench): its checks end on their day.
_next_look = getattr(verify_check, "next_look", lambda now, until, policy: until)
_back_early = getattr(verify_check, "back_early", lambda c, policy, prior: "")
_asks = getattr(promoting, "asks", lambda note: False)  # nor recovery.max_returns: it never stops to ask
# nor a check's end that reads why it began (verification.check_lopsided)
_SETTLE_ON = ((lambda c: {"evidence": c.evidence}) if "evidence" in inspect.signature(verify_check.settle).parameters
              else (lambda c: {}))


try:  # the promotion's wait; an older kg has it in verify (the held-out comparison may replay main's code)
    from kg.lifecycle.verify_wait import baseline_short as _baseline_short
except ImportError:
    _baseline_short = verify.baseline_short

_CREATED = itertools.count()


@dataclass
class Change:
    applied_at: datetime
    next_check: datetime
    status: str = "applied"
    due_since: datetime | None = None
    reverted_at: datetime | None = None
    text: str = ""
    target: str = ""
    baseline: tuple[float, float] | None = None  # (counted, days) before it: fixed once it is applied
    evidence: list[str] = field(default_factory=list)  # the check lines (verify_check), as the graph keeps them
    seq: int = field(default_factory=lambda: next(_CREATED))  # creation order: the real ids' (chg-<day>-<n>)


@dataclass
class State:
    """What the graph holds about one pattern."""

    times: list[datetime] = field(default_factory=list)
    sessions: list[str] = field(default_factory=list)
    status: str = "active"           # active / promoted / reverted
    changes: list[Change] = field(default_factory=list)
    pending: bool = False            # a promotion proposal waits


def replay_history(seed: int, *, n: int, days: int, mix: tuple[float, float, float], rate: tuple[float, float],
                   drift: float, burst: float, delay: int, policy: LifecyclePolicy,
                   patterns: list | None = None, paired: bool = False) -> dict[str, Any]:
    import loop_sim as sim

    rng = random.Random(seed)
    pats = patterns if patterns is not None else sim.make_patterns(rng, n, mix, rate, drift, days)
    state = {p.key: State() for p in pats}
    approvals: dict[int, list[Any]] = {}
    first: list[datetime] = []
    seen_days: set = set()  # the days with anything logged: the real cycle's unwatched spells (verify_watch)
    t_start = time.perf_counter()
    for day in range(days):
        for hour, p, extra in sim.day_events(rng, pats, day, days, burst, seed if paired else None):
            at = sim.T0 + day * DAY + timedelta(hours=hour)
            s = state[p.key]
            s.times.append(at)
            s.sessions.append(sim.session_of(day, hour))
            p.events.append((day + hour / 24, extra))
            first = first or [at]
            seen_days.add(at.date())
        for p in approvals.pop(day, []):
            s = state[p.key]
            s.pending = False
            if s.status != "promoted":
                _apply(s, p, sim.T0 + day * DAY + timedelta(hours=19), policy, day + 19 / 24)
        now = sim.T0 + day * DAY + timedelta(hours=20)
        observed = (verify_watch.watched(first[0], seen_days, policy.verification.unobserved_gap_days, now)
                    if first else None)
        _verify(pats, state, now, policy, observed, day + 20 / 24)
        for p, mode in _promote(pats, state, now, policy, observed):
            if mode == "auto":
                _apply(state[p.key], p, now, policy, day + 20 / 24)
            elif mode == "asked":  # kg's question after recovery.max_returns: the simulated user leaves it alone
                state[p.key].pending = True
            else:
                state[p.key].pending = True
                approvals.setdefault(day + 1 + sim.approval_delay(rng, delay, seed if paired else None, p.key, day),
                                     []).append(p)
    return {"patterns": pats, "seconds": time.perf_counter() - t_start}


def _apply(s: State, p: Any, at: datetime, policy: LifecyclePolicy, day: float) -> None:
    s.status = "promoted"
    s.changes.append(Change(at, at + policy.verification.first_check_days * DAY, text=TEXT.format(key=p.key),
                            target=p.target))
    p.live = True
    p.applied.append(day)


def _spans(s: State, skip: Change | None, now: datetime) -> list[tuple[datetime, datetime]]:
    """When each change's rule was in its file (verifying.live_spans): less the days it was out for a check."""
    from kg.lifecycle.verifying import in_effect_spans

    return [x for c in s.changes if c is not skip
            for x in in_effect_spans(c.applied_at, c.reverted_at or now, verify_check.spans(c.evidence, now))]


def _tries(s: State, c: Change, now: datetime, policy: LifecyclePolicy) -> list[tuple[datetime, datetime]]:
    """The live periods of earlier tries of the same rule (verifying.tries), pooled into its rate after."""
    if not getattr(policy.verification, "pool_retries", False):
        return []
    from kg.lifecycle.verifying import in_effect_spans

    return [x for e in s.changes if e is not c and e.text == c.text and e.applied_at < c.applied_at
            for x in in_effect_spans(e.applied_at, e.reverted_at or now, verify_check.spans(e.evidence, now))]


_PRIOR: dict[tuple[int, datetime], tuple[float, float]] = {}


def _prior(state: dict[str, State], now: datetime, policy: LifecyclePolicy,
           observed: datetime | None) -> tuple[float, float]:
    """Fitted once a cycle, at its first use, as cycle.py's `Lifecycle.prior` is."""
    memo = (id(state), now)
    if memo in _PRIOR:
        return _PRIOR[memo]
    _PRIOR.clear()
    _EFFECT.clear()
    _MIX.clear()
    base = []
    for s in state.values():
        for c in s.changes:
            if c.baseline is None:  # the same figures as cycle.py's prior(): nothing after applied_at counts
                e = verify.evidence([t for t in s.times if t <= now], c.applied_at, c.applied_at, policy,
                                    excluded=_spans(s, c, now), observed_from=observed)
                c.baseline = (e.k_before, e.t_before)
            base.append(c.baseline)
    if getattr(policy.verification, "prior_source", "changes") == "patterns":  # every pattern's rate without its rules
        base = [verify.rate_without_rules(s.times, _spans(s, None, now), now, policy, observed)
                for s in state.values() if s.times]
    _PRIOR[memo] = rate = verify.population_prior(base, policy)
    if policy.verification.mix_source == "relapse":
        settled = now - policy.recovery.cooldown_days * DAY  # a relapse needs time without the rule
        kinds = [verify.relapse([t for t in s.times if t <= now], _spans(s, None, now), now, policy,
                                observed_from=observed, prior=rate).kind
                 for s in state.values() if any(c.reverted_at and c.reverted_at <= settled for c in s.changes)]
        _MIX[memo] = verify_mix.relapse_factor(kinds, policy)
    else:
        _MIX[memo] = verify.mix_factor((c.status for s in state.values() for c in s.changes), policy)
    _EFFECT[memo] = verify.effect_prior(
        [verify.evidence([t for t in s.times if t <= now], c.applied_at, min(c.reverted_at or now, now), policy,
                         excluded=_spans(s, c, now), observed_from=observed)
         for s in state.values() for c in s.changes], policy, rate)
    return rate


_EFFECT: dict[tuple[int, datetime], Any] = {}
_MIX: dict[tuple[int, datetime], float] = {}


def _effect(state: dict[str, State], now: datetime, policy: LifecyclePolicy, observed: datetime | None) -> Any:
    """The effect prior, fitted with the rate prior (verifying.py's `effect_prior`)."""
    _prior(state, now, policy, observed)
    return _EFFECT[(id(state), now)]


def _verify(pats: list, state: dict[str, State], now: datetime, policy: LifecyclePolicy,
            observed: datetime | None, day: float) -> None:
    # in the order the cycle reads them (lc_changes_due: next check, then id): with check_max_out rules out at
    # once, which due change takes the last free place depends on it
    due = sorted(((p, c) for p in pats for c in state[p.key].changes
                  if c.status in ("applied", "confirmed", "checking") and c.next_check <= now),
                 key=lambda pc: (pc[1].next_check, pc[1].seq))
    if not due:
        return
    prior = _prior(state, now, policy, observed)
    out = sum(c.status == "checking" for s in state.values() for c in s.changes)
    for p, c in due:
        s = state[p.key]
        times = [t for t in s.times if t <= now]
        deadline = verify.is_deadline(c.status, c.due_since, c.next_check, now, policy)
        tries = _tries(s, c, now, policy)
        counts = verify.evidence(times, c.applied_at, now, policy, excluded=_spans(s, c, now), observed_from=observed,
                                 checks=verify_check.spans(c.evidence, now), **({"pooled": tries} if tries else {}))
        judged = dict(prior=prior, effect=_effect(state, now, policy, observed), mix=_MIX[(id(state), now)])
        if c.status == "checking":
            out -= _end_check(p, s, c, counts, now, policy, day, judged, prior)
            continue
        v = verify.judge(counts, policy, deadline=deadline, monitoring=c.status == "confirmed" or bool(tries), **judged)
        why = verify_check.wants(counts, verify.judge(counts, policy, **judged), status=c.status, deadline=deadline,
                                 evidence=c.evidence, policy=policy) if out < policy.verification.check_max_out else ""
        if why:
            until = now + policy.verification.check_days * DAY
            c.evidence.append(verify_check.out_line(now, until, c.target, why))
            c.status, c.next_check, c.due_since = "checking", _next_look(now, until, policy), None
            p.live = False
            p.checks.append([day, None])
            p.checked += 1
            p.trace.append((day, f"check: {why}"))
            out += 1
            continue
        t = verify.transition(status=c.status, next_check=c.next_check, due_since=c.due_since, verdict=v, now=now,
                              policy=policy)
        if v.kind != verify.INCONCLUSIVE or t.action == "auto_revert":
            p.verdicts.append((day, v.kind if t.action != "auto_revert" else "ineffective"))
        p.trace.append((day, f"{t.action}: {v.summary}"))
        c.status, c.next_check, c.due_since = t.status, t.next_check, t.due_since
        if t.action in ("revert", "auto_revert"):
            c.reverted_at = now
            s.status = "reverted"
            p.live = False
            p.reverted.append(day)


def _end_check(p: Any, s: State, c: Change, counts: verify.Counts, now: datetime, policy: LifecyclePolicy,
               day: float, judged: dict[str, Any], prior: tuple[float, float]) -> int:
    """A check's period is over: put the rule back, or revert it; before its end, back early or still out
    (verifying.end_check)."""
    since, until = verify_check.current(c.evidence)
    back, v, why = verify_check.settle(counts, policy, **_SETTLE_ON(c), **judged)
    if now < until:
        why = _back_early(counts, policy, prior)
        if not why:
            c.next_check = _next_look(now, until, policy)
            return 0
        back = True
    kind = verify_check.label(v, policy, back)
    p.verdicts.append((day, kind))
    p.trace.append((day, f"{'back' if back else 'revert'}: check ended, {why}: {v.summary}"))
    if back:
        c.evidence.append(verify_check.back_line(now, since, c.target, why))
        c.status, c.next_check = "confirmed", now + policy.verification.monitor_days * DAY
        p.live = True
        p.checks[-1][1] = day
    else:
        c.evidence.append(verify_check.ended_line(now, since, c.target, why))
        c.status, c.reverted_at = "reverted", now
        s.status = "reverted"
        start = p.checks.pop()[0]
        p.reverted.append(start)  # the rule has been out since the check began
    return 1


def _window(s: State, since: datetime, now: datetime) -> tuple[int, int, datetime | None]:
    idx = [i for i, t in enumerate(s.times) if since <= t <= now]
    return len(idx), len({s.sessions[i] for i in idx}), (s.times[idx[-1]] if idx else None)


def _promote(pats: list, state: dict[str, State], now: datetime, policy: LifecyclePolicy,
             observed: datetime | None) -> list[tuple[Any, str]]:
    """promoting.ready_rows + promote_all on plain state: (pattern, mode) to apply or propose, within the
    budgets."""
    import loop_sim as sim

    pr, rec = policy.promotion, policy.recovery
    since = now - pr.window_days * DAY
    by_id = {p.key: p for p in pats}
    rows = []
    for p in pats:
        s = state[p.key]
        if s.pending:
            continue
        if s.status == "active":
            n, k, last = _window(s, since, now)
            if n >= pr.min_recurrence and k >= pr.min_sessions and promote.eligible(n, k, policy):
                rows.append({"id": p.key, "recurrence": n, "sessions": k, "last_seen": last, "priority": "medium"})
        elif s.status == "reverted":
            gone = max(c.reverted_at for c in s.changes if c.reverted_at)
            if gone > now - rec.cooldown_days * DAY:
                continue
            n, k, last = _window(s, max(since, gone), now)
            if n >= rec.min_recurrence and k >= rec.min_sessions:
                rows.append({"id": p.key, "recurrence": n, "sessions": k, "last_seen": last, "priority": "medium",
                             "failed": [c.text for c in s.changes if c.reverted_at]})
    ranked = promote.rank(rows, policy)
    lines: dict[tuple[str, str], list[str]] = {}
    for p in pats:
        s = state[p.key]
        if s.status == "promoted":
            lines.setdefault((_file(p), "kaizen-kg"), []).append(TEXT.format(key=p.key))
    budget = promote.Budget(policy, lines)
    out = []
    for r in ranked[: policy.budget.max_examined]:
        p, s = by_id[r["id"]], state[r["id"]]
        failed = tuple(r.get("failed") or ())
        note = ""
        if failed:
            v = verify.relapse([t for t in s.times if t <= now], _spans(s, None, now), now, policy,
                               observed_from=observed, prior=_prior(state, now, policy, observed),
                               effect=_effect(state, now, policy, observed))
            note = promoting.relapse_head(v, policy, len(failed))
            p.trace.append((now.toordinal() - sim.T0.toordinal() + 20 / 24, f"relapse: {note}: {v.summary}"))
        fields = ({"area": "tooling"} if p.target == "auto" else {"area": "backend", "category": "workflow"})
        cand = promote.Candidate(pattern_id=p.key, key=p.key, summary=f"{p.key} went wrong again",
                                 recurrence=r["recurrence"], sessions=r["sessions"], priority="medium",
                                 entry_type="error", action=TEXT.format(key=p.key), failed=failed,
                                 actions=(TEXT.format(key=p.key),) if failed else (), note=note, **fields)
        plan = promote.plan(cand, policy)
        asked = bool(failed) and plan.mode == "ask" and _asks(note)
        if failed and plan.mode == "ask" and not promoting.comes_back(note) and not asked:
            continue
        if budget.why_not(plan.file, plan.block, plan.text):
            continue
        if not failed and _baseline_short(s.times, now, policy, observed_from=observed):
            continue
        budget.take(plan.file, plan.block, plan.text)
        out.append((p, "asked" if asked else plan.mode))
    return out


def _file(p: Any) -> str:
    return "TOOLS.md" if p.target == "auto" else "AGENTS.md"
