"""Deliberate checks (a switchback): a rule whose verdict stays uncertain is taken out of its file for a stated
period to measure the rate without it, then put back unless that period shows it did not help. Pure.

Why: the rate before a change rests on the 3-5 occurrences that promoted it, so a rule that works and one that
changes nothing can look alike for months, and no threshold on the same data separates them
(`bench/loop_sim.py --frontier`). Only time without the rule adds to the base rate. A check is that time,
taken on purpose and bounded: at most `verification.check_max_out` rules out at once, each out for
`check_days` days, at most `check_max_per_change` times; a rule a person confirmed or took out by hand is never
checked. Its days count as the rate without the rule (`verify.evidence(checks=...)`); when the period ends the
rule is put back, unless P(ratio > revert_min_ratio) on all the evidence reaches `check_revert_posterior`.
With `check_back_level` on, a rule out for a check is looked at every `check_look_days` days and put back as soon
as P(ratio < check_revert_ratio) reaches that level (`back_early`): a rule that works shows it fast once it is
out (its rate jumps back), one that does not needs the whole period, so the days out fall where they cost the
user mistakes. A revert is still only taken at the period's end.

A check is taken:
- at a first verification's deadline, when the evidence is not decisive at the 1 − error_rate levels
  (`check_at_deadline`), instead of letting the posterior majority decide on a thin baseline;
- on a confirmed, monitored rule whose rate before rests on fewer than `check_max_before` counted occurrences
  and is still not decisive `check_after_days` days after the change.
- with `check_doubtful` on, on a confirmed rule whose posterior median at a monitor look is past boundary_ratio
  (the majority would revert it) and not decisive at the 1 − error_rate levels: the evidence leans against it,
  and a thin baseline cannot say more without time out. The check comes before the monitor's own decision, so it
  also stands in for a revert at monitor_error_rate.
- with `check_lopsided` on, on a confirmed rule whose counted occurrences since the change are that many times
  those its rate before rests on (decisive or not: a burst baseline confirms at 0.95), once more than
  `check_max_per_change` allows; it ends at `check_lopsided_posterior`, as the rule was confirmed.

The periods are kept in the change's evidence trail, one dated line each way (as the days a person took a rule
out are, `verify_withdrawn`), so `kg why`, `kg status` and `kg verify --json` show them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import datetime

from kg.lifecycle import verify
from kg.lifecycle.policy import LifecyclePolicy
from kg.lifecycle.verify_withdrawn import STAMP, mark_pattern, marked_spans

OUT = "out for a check"
BACK = "back after its check"
ENDED = "check ended"
_MARK = mark_pattern(OUT, BACK, ENDED)
_LOPSIDED = "the rate before is what the verdict lacks"
_UNTIL = re.compile(rf" until ({STAMP})")


def enabled(policy: LifecyclePolicy) -> bool:
    return policy.verification.check_max_out > 0


def spans(evidence: Iterable[str] | None, now: datetime) -> list[tuple[datetime, datetime]]:
    """The periods the rule was out for a check, from its evidence trail (an open one: up to `now`)."""
    return marked_spans(evidence, now, _MARK, lambda word: word == OUT, lambda word: word != OUT)


def current(evidence: Iterable[str] | None) -> tuple[datetime, datetime] | None:
    """(since, until) of the check in progress, None when there is none."""
    found = None
    for line in evidence or ():
        m = _MARK.match(line)
        if m and m.group(2) == OUT:
            u = _UNTIL.search(line)
            at = datetime.fromisoformat(m.group(1))
            found = (at, datetime.fromisoformat(u.group(1)) if u else at)
        elif m:
            found = None
    return found


def count(evidence: Iterable[str] | None) -> int:
    return sum(1 for line in evidence or () if (m := _MARK.match(line)) and m.group(2) == OUT)


def wants(c: verify.Counts, strict: verify.Verdict, *, status: str, deadline: bool, evidence: Iterable[str] | None,
          policy: LifecyclePolicy) -> str:
    """Why this change should be checked now ('' when not): `strict` is its verdict at the 1 − error_rate levels
    (no deadline majority); the bound on rules out at once is the caller's."""
    v = policy.verification
    lines = list(evidence or ())
    if not enabled(policy) or c.t_before <= 0 or any(verify.HUMAN_CONFIRMED in x for x in lines):
        return ""
    if status == "confirmed" and (why := lopsided(c, lines, policy)):
        return why
    if strict.kind != verify.INCONCLUSIVE or count(lines) >= v.check_max_per_change:
        return ""
    numbers = f"P(ratio < {v.ineffective_min_ratio:g}) = {strict.p_cut:.3f}, P(ratio > {v.revert_min_ratio:g}) = " \
              f"{strict.p_not_enough:.3f}"
    if status == "applied" and deadline and v.check_at_deadline:
        return f"undecided at its deadline ({numbers}; {c.k_before:g} counted occurrences before it)"
    if status == "confirmed" and c.k_before < v.check_max_before and c.t_after >= v.check_after_days:
        return (f"{c.k_before:g} counted occurrences before it (< {v.check_max_before:g}) and still undecided "
                f"after {c.t_after:.0f} days ({numbers})")
    if status == "confirmed" and v.check_doubtful and strict.ratio is not None and strict.ratio >= v.boundary_ratio:
        return (f"confirmed, but its posterior median {strict.ratio:.2f} is now past {v.boundary_ratio:g} without "
                f"reaching the monitor's level ({numbers})")
    return ""


def lopsided(c: verify.Counts, evidence: list[str], policy: LifecyclePolicy) -> str:
    """Why a confirmed rule is checked (again) for a lopsided record ('' when not, `check_lopsided` 0: off): the
    counted occurrences since it are at least `check_lopsided` times those its rate before rests on, so the ratio's
    doubt is all in the rate before, which only time without the rule narrows. Decisive or not at the strict
    levels (a burst baseline confirms at 0.95); one check more than `check_max_per_change` allows."""
    v = policy.verification
    if v.check_lopsided <= 0 or count(evidence) > v.check_max_per_change or c.k_after < v.check_lopsided * c.k_before:
        return ""
    return (f"{c.k_after:g} counted occurrences since it against {c.k_before:g} before it (≥ {v.check_lopsided:g}×): "
            f"{_LOPSIDED}")


def summary(why: str, until: datetime, set_aside: str) -> str:
    """A check's line in the cycle's report: what was decided and why, then the verdict the check sets aside. It
    printed that verdict alone ("confirmed: … (deadline: the majority decides)") while kg stored inconclusive and
    took the rule out (a QA pass)."""
    return f"{verify.INCONCLUSIVE}, {OUT} until {until:%Y-%m-%d}: {why}; set aside: {set_aside}"


def out_line(at: datetime, until: datetime, target: str, why: str) -> str:
    return (f"{at.isoformat()} {OUT} until {until.isoformat()}: taken out of {target} to measure the rate without "
            f"it, {why}; put back then unless those days show it did not help")


def back_line(at: datetime, since: datetime, target: str, summary: str) -> str:
    return (f"{at.isoformat()} {BACK}: put back in {target} after {(at - since).total_seconds() / 86400:.1f} days "
            f"out; {summary}")


def ended_line(at: datetime, since: datetime, target: str, summary: str) -> str:
    return (f"{at.isoformat()} {ENDED}: left out of {target} after {(at - since).total_seconds() / 86400:.1f} days "
            f"out, the days without it showed it did not help; {summary}")


def settle(c: verify.Counts, policy: LifecyclePolicy, evidence: Iterable[str] | None = None,
           **judged: object) -> tuple[bool, verify.Verdict, str]:
    """At the end of a check, on all the evidence with its days as the rate without the rule (`c`): (put back?,
    the verdict, why). Put back unless P(ratio > check_revert_ratio) ≥ `check_revert_posterior`; `judged`:
    the priors and mix `verify.judge` takes."""
    v = verify.judge(c, policy, **judged)  # type: ignore[arg-type]
    n = numbers(c, policy, judged.get("prior", (0.0, 0.0)), evidence)  # type: ignore[arg-type]
    p, cut, level = n["p"], n["ratio"], n["level"]
    if v.ratio is None or p < level:
        return True, v, f"P(ratio > {cut:g}) = {p:.3f} < {level:g}: put back, monitored"
    return False, v, f"P(ratio > {cut:g}) = {p:.3f} ≥ {level:g}: reverted"


def back_early(c: verify.Counts, policy: LifecyclePolicy, prior: tuple[float, float] = (0.0, 0.0)) -> str:
    """Why a rule out for a check goes back before its period ends ('' when it stays out): P(ratio <
    check_revert_ratio) on all the evidence so far, the check's days counted as the rate without the rule, has
    reached `check_back_level` (0: never early)."""
    from kg.lifecycle import stats

    ver = policy.verification
    if ver.check_back_level <= 0 or c.t_after <= 0 or c.t_before <= 0:
        return ""
    cut = ver.check_revert_ratio
    c = verify.scaled(c)
    p = stats.p_ratio_below(cut, c.k_after, c.t_after, c.k_before + prior[0], c.t_before + prior[1])
    if p < ver.check_back_level:
        return ""
    return (f"P(ratio < {cut:g}) = {p:.3f} ≥ {ver.check_back_level:g} before the period ended: put back early, "
            "monitored")


def next_look(now: datetime, until: datetime, policy: LifecyclePolicy) -> datetime:
    """When a rule out for a check is next looked at: its period's end, or sooner with `check_back_level` on."""
    if policy.verification.check_back_level <= 0:
        return until
    return min(until, now + policy.verification.check_look_days * verify.DAY)


def numbers(c: verify.Counts, policy: LifecyclePolicy, prior: tuple[float, float] = (0.0, 0.0),
            evidence: Iterable[str] | None = None) -> dict[str, float]:
    """The numbers a check's end is decided on (`settle`), for `kg verify --json`: P(ratio > check_revert_ratio)
    on all the evidence, the check's days counted as the rate without the rule, and the level it must reach."""
    from kg.lifecycle import stats

    ver = policy.verification
    cut = ver.check_revert_ratio
    c = verify.scaled(c)  # overdispersed counts weigh as fewer, as in the verdict
    p = 1.0 - stats.p_ratio_below(cut, c.k_after, c.t_after, c.k_before + prior[0], c.t_before + prior[1]) \
        if c.t_after > 0 else 0.0
    level = ver.check_lopsided_posterior if ver.check_lopsided > 0 and _LOPSIDED in _why(evidence) else \
        ver.check_revert_posterior
    return {"p": p, "ratio": cut, "level": level}


def _why(evidence: Iterable[str] | None) -> str:
    """The out line of the check in progress ('' when none)."""
    found = ""
    for line in evidence or ():
        m = _MARK.match(line)
        if m:
            found = line if m.group(2) == OUT else ""
    return found


def label(v: verify.Verdict, policy: LifecyclePolicy, back: bool) -> str:
    """The verdict a check's end records: confirmed when the rule goes back, else ineffective or made worse."""
    ver = policy.verification
    if back:
        return verify.CONFIRMED
    worse = v.ratio is not None and v.ratio >= ver.worse_min_ratio and v.p_up >= ver.worse_min_posterior
    return verify.WORSE if worse else verify.INEFFECTIVE


def explain(evidence: Iterable[str] | None) -> str:
    """One line for `kg status` and `kg why`: '' when no check is in progress."""
    now = current(evidence)
    if now is None:
        return ""
    return (f"{OUT} since {now[0]:%Y-%m-%d} until {now[1]:%Y-%m-%d}: kg took the rule out of its file to measure "
            "the rate without it; it goes back then unless those days show it did not help")
