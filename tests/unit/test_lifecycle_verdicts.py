"""The verdict as a statistical test, recovery and budgets: pure functions, table-driven, no database."""

from __future__ import annotations

import math
from datetime import datetime, timedelta

import pytest

from kg.core.policy import packaged
from kg.lifecycle import promote, promoting, stats, verify
from kg.lifecycle.policy import LifecyclePolicy

LP = LifecyclePolicy.from_mapping(packaged("lifecycle"))
T0 = datetime(2026, 3, 1, 9, 0)
D = timedelta(days=1)


def days(*xs: float) -> list[datetime]:
    return [T0 + x * D for x in xs]


def counts(before: float, t_before: float, after: float, t_after: float) -> verify.Counts:
    return verify.Counts(int(before), int(after), before, t_before, after, t_after, ())


# -- the statistics -------------------------------------------------------------------------------------------
@pytest.mark.parametrize("a,b,x,expected", [
    (2, 3, 0.5, 0.6875),
    (0.5, 0.5, 0.3, 2 / math.pi * math.asin(math.sqrt(0.3))),
    (1, 1, 0.25, 0.25),
    (5, 5, 0.5, 0.5),
    (3, 1, 0.9, 0.9 ** 3),
])
def test_betainc(a, b, x, expected):
    assert stats.betainc(a, b, x) == pytest.approx(expected, abs=1e-9)


def test_ratio_quantile_inverts_the_cdf():
    q = stats.ratio_quantile(0.3, 4, 10, 9, 20)
    assert stats.p_ratio_below(q, 4, 10, 9, 20) == pytest.approx(0.3, abs=1e-6)


# -- the evidence -----------------------------------------------------------------------------------------------
def test_the_first_occurrence_and_the_trigger_are_not_counted():
    c = verify.evidence(days(0, 1, 2), T0 + 2.5 * D, T0 + 9.5 * D, LP)
    assert (c.before, c.k_before) == (3, pytest.approx(1.0, abs=0.02))  # only the middle one counts
    assert c.t_before == pytest.approx(2.5, abs=0.05) and c.left_out[:2] == ("first", "trigger")
    assert (c.after, c.t_after) == (0, 7.0)


def test_a_burst_day_counts_at_most_max_per_day():
    c = verify.evidence(days(0, 10, 20, *[25 + i / 100 for i in range(10)]), T0 + 24 * D, T0 + 30 * D, LP)
    assert c.after == 10 and c.k_after == LP.verification.max_per_day
    assert f"{10 - LP.verification.max_per_day} over {LP.verification.max_per_day}/day" in c.left_out


def test_time_an_earlier_change_was_live_is_not_the_base_rate():
    times = days(0, 5, 10, 11, 12, 30, 31, 32, 40, 41, 42)
    whole = verify.evidence(times, T0 + 42.5 * D, T0 + 50 * D, LP)
    cut = verify.evidence(times, T0 + 42.5 * D, T0 + 50 * D, LP, excluded=[(T0 + 12.5 * D, T0 + 35 * D)])
    assert cut.t_before < whole.t_before - 15 and cut.k_before < whole.k_before
    assert "3 while an earlier change was live" in cut.left_out


# -- the verdict ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("before,t_before,after,t_after,kind", [
    (60, 60, 0, 14, verify.CONFIRMED),          # 1/day, then nothing for two weeks
    (60, 60, 2, 21, verify.CONFIRMED),          # cut to ~0.1×
    (60, 60, 14, 14, verify.INEFFECTIVE),       # the same rate
    (60, 60, 35, 14, verify.WORSE),             # 2.5×
    (60, 60, 9, 14, verify.INCONCLUSIVE),       # ~0.64×: between the thresholds, not yet decisive
    (1, 3, 0, 7, verify.INCONCLUSIVE),          # a three-day burst is no baseline: nothing is decisive yet
    (0, 0, 3, 7, verify.INCONCLUSIVE),          # no history before
    (10, 20, 0, 0, verify.INCONCLUSIVE),        # no time since the change
])
def test_judge(before, t_before, after, t_after, kind):
    v = verify.judge(counts(before, t_before, after, t_after), LP)
    assert v.kind == kind
    assert v.decisive == (kind != verify.INCONCLUSIVE)
    assert f"before {before} (" in v.summary and f"after {after} in" in v.summary


def test_the_numbers_behind_a_verdict():
    v = verify.judge(counts(60, 60, 21, 21), LP)
    assert v.p_not_enough >= 1 - LP.verification.revert_error_rate and v.p_cut < 0.5
    lo, hi = v.interval
    assert lo < v.ratio < hi and 0.5 < v.ratio < 1.5
    assert "95% interval" in v.summary and f"P(ratio > {LP.verification.revert_min_ratio:g})" in v.summary


@pytest.mark.parametrize("posterior,kind", [(0.9, verify.WORSE), (0.95, verify.INEFFECTIVE)])
def test_made_worse_needs_a_high_posterior_that_the_rate_rose(posterior, kind):
    """A revert is labelled made worse (a critical item) only when P(ratio > 1) reaches worse_min_posterior:
    here the rate looks 1.8× higher, but on 8 occurrences before, P(ratio > 1) is about 0.93."""
    v = verify.judge(counts(8, 16, 13, 14), _with(worse_min_posterior=posterior))
    assert 0.9 <= v.p_up < 0.95 and v.ratio > LP.verification.worse_min_ratio
    assert v.kind == kind
    assert f"P(ratio > 1) = {v.p_up:.3f} {'≥' if kind == verify.WORSE else '<'} {posterior:g}" in v.summary


def _with(**verification) -> LifecyclePolicy:
    data = packaged("lifecycle")
    return LifecyclePolicy.from_mapping({**data, "verification": {**data["verification"], **verification}})


def test_a_revert_needs_stronger_evidence_than_a_confirmation():
    """Asymmetric thresholds: a revert is tested against revert_min_ratio (above confirm_max_ratio), so a rule
    that cut the rate to ~0.55× (effective, not by half) on a thin baseline is not reverted."""
    c = counts(12, 12, 8, 14)           # ~0.57×
    sym = _with(revert_min_ratio=0.5, revert_error_rate=0.05)
    strict = _with(revert_min_ratio=0.7, revert_error_rate=0.05)
    assert verify.judge(c, sym).p_not_enough > verify.judge(c, strict).p_not_enough
    c = counts(60, 60, 13, 14)          # ~0.93×: P(r > 0.5) = 0.97, P(r > 0.62) = 0.90
    assert verify.judge(c, _with(revert_min_ratio=0.5)).kind == verify.INEFFECTIVE
    assert verify.judge(c, _with(revert_min_ratio=0.62, revert_error_rate=0.02)).kind == verify.INCONCLUSIVE


@pytest.mark.parametrize("boundary,kind", [(0.6, verify.INEFFECTIVE), (0.75, verify.CONFIRMED)])
def test_the_deadline_decides_at_the_boundary_ratio(boundary, kind):
    c = counts(40, 40, 9.5, 14)         # a posterior median near 0.68×
    assert verify.judge(c, _with(boundary_ratio=boundary), deadline=True).kind == kind


def test_verification_thresholds_are_checked():
    from kg.core.errors import RulesError
    with pytest.raises(RulesError, match="revert_min_ratio"):
        _with(revert_min_ratio=0.9)
    with pytest.raises(RulesError, match="boundary_ratio"):
        _with(boundary_ratio=0.3)


def test_the_deadline_lets_the_majority_decide():
    c = counts(20, 40, 2, 14)          # ~0.29×, but not at 95 % yet
    assert verify.judge(c, LP).kind == verify.INCONCLUSIVE
    assert verify.judge(c, LP, deadline=True).kind == verify.CONFIRMED
    c = counts(20, 40, 6, 14)          # ~0.86×
    assert verify.judge(c, LP, deadline=True).kind == verify.INEFFECTIVE


def test_a_confirmed_rule_is_reverted_on_weaker_evidence():
    c = counts(3, 8, 20, 60)           # a thin baseline: 95 % is out of reach, the median says no effect
    assert verify.judge(c, LP).kind == verify.INCONCLUSIVE
    lp = _with(monitor_error_rate=0.2)   # P(ratio > 0.5) = 0.83 here
    assert verify.judge(c, lp).kind == verify.INCONCLUSIVE
    assert verify.judge(c, lp, monitoring=True).kind in (verify.INEFFECTIVE, verify.WORSE)


def test_a_thin_baseline_still_undecided_after_weeks_of_monitoring_is_checked_without_the_rule():
    """verification.check_max_before with check_max_out (off in the packaged rules; 8, two checks a change, measured): 3
    occurrences in 3.4 days before, then ~0.3/day for 70 days: a rule that changed nothing and one that cut a fast
    rate look alike, so the rule is taken out for a check (kg/lifecycle/verify_check.py), not reverted; a person's
    confirmation is never checked."""
    from kg.lifecycle import verify_check

    def wants(c, lp, status="confirmed", deadline=False, evidence=()):
        return verify_check.wants(c, verify.judge(c, lp), status=status, deadline=deadline, evidence=evidence,
                                  policy=lp)

    c = counts(3, 3.4, 21, 70)
    assert verify.judge(c, LP, monitoring=True).kind == verify.INCONCLUSIVE
    assert wants(c, _with(check_max_before=0)) == ""                            # off
    on = _with(check_max_before=5, check_after_days=56, check_max_out=2, check_max_per_change=1)
    assert verify.judge(c, on, monitoring=True).kind == verify.INCONCLUSIVE     # judge itself never reverts for it
    assert wants(c, on).startswith("3 counted occurrences before it (< 5) and still undecided after 70 days")
    assert wants(c, on, status="applied") == ""                                 # not at a deadline
    assert wants(c, on, status="applied", deadline=True).startswith("undecided at its deadline")
    assert wants(counts(3, 3.4, 15, 50), on) == ""                              # too soon
    assert wants(counts(8, 16, 21, 70), on) == ""                               # enough before
    assert wants(counts(3, 3.4, 1, 70), on) == ""                               # decisive
    assert wants(c, on, evidence=[f"2026-01-01 kept: {verify.HUMAN_CONFIRMED}"]) == ""
    once = [verify_check.out_line(datetime(2026, 1, 1), datetime(2026, 1, 15), "TOOLS.md", "x")]
    assert wants(c, on, evidence=once) == ""                                    # check_max_per_change 1
    assert wants(c, LP) == ""                                                   # packaged: off
    twice = _with(check_max_before=8, check_after_days=56, check_max_per_change=2)
    assert wants(c, twice, evidence=once).startswith("3 counted occurrences before it (< 8)")


def test_the_population_prior_tightens_a_thin_baseline():
    assert verify.population_prior([(2, 5)] * 4, LP) == (0.0, 0.0)   # too few changes
    shape, rate = verify.population_prior([(2, 5), (3, 6), (1, 8), (4, 5), (2, 4), (3, 9)], LP)
    assert 0 < shape <= LP.verification.prior_max_events and shape / rate == pytest.approx(15 / 37, rel=0.01)
    c = counts(1, 2, 3, 14)
    assert (verify.judge(c, LP, prior=(shape, rate)).interval[1] < verify.judge(c, LP).interval[1])


def test_a_baseline_of_half_a_day_does_not_swamp_the_population_prior():
    """The negative-binomial likelihood weighs a short baseline little: 5 occurrences in the first half day
    (a pattern promoted on the day kg started watching) leaves the prior worth over 1 occurrence (the method
    of moments kept 0.25 of one)."""
    steady = [(2, 5), (3, 6), (1, 8), (4, 5), (2, 4), (3, 9)]
    shape, rate = verify.population_prior(steady, LP)
    shape2, rate2 = verify.population_prior([*steady, (5, 0.5)], LP)
    assert shape2 / rate2 == pytest.approx(20 / 37.5, rel=0.01)    # the pooled mean
    assert shape == LP.verification.prior_max_events and 1.0 < shape2 < shape


def test_assess_is_evidence_then_judge():
    times = days(*range(0, 60), 61, 70)
    v = verify.assess(times, T0 + 60.5 * D, T0 + 75 * D, LP)
    assert v.kind == verify.CONFIRMED and v.before == 60 and v.after == 2


def test_the_issue_burst_case_is_not_confirmed_on_an_empty_first_week():
    # a pattern at 0.1/day promoted on a burst of three: a quiet first week proves nothing
    v = verify.assess(days(0, 1, 2), T0 + 2.5 * D, T0 + 9.5 * D, LP)
    assert v.kind == verify.INCONCLUSIVE


# -- transitions ----------------------------------------------------------------------------------------------
def _v(kind):
    return verify.Verdict(kind, 3, 0, 7, 7, 0.4, 0.0, 0.0, kind)


@pytest.mark.parametrize("status,kind,due_days,action,new_status,critical", [
    ("applied", verify.CONFIRMED, 0, "keep", "confirmed", False),
    ("applied", verify.INEFFECTIVE, 0, "revert", "reverted", False),
    ("applied", verify.WORSE, 0, "revert", "reverted", True),
    ("applied", verify.INCONCLUSIVE, 0, "extend", "applied", False),
    ("applied", verify.INCONCLUSIVE, 7, "extend", "applied", False),
    ("applied", verify.INCONCLUSIVE, 14, "extend", "applied", False),
    ("applied", verify.INEFFECTIVE, 21, "auto_revert", "auto_reverted", False),   # decided at the deadline
    ("confirmed", verify.INCONCLUSIVE, 60, "keep", "confirmed", False),
    ("confirmed", verify.INEFFECTIVE, 0, "revert", "reverted", False),
])
def test_transition(status, kind, due_days, action, new_status, critical):
    now = T0 + due_days * D
    t = verify.transition(status=status, next_check=T0, due_since=None, verdict=_v(kind), now=now, policy=LP)
    assert (t.action, t.status, t.critical) == (action, new_status, critical)
    if action == "keep":
        assert t.next_check == now + LP.verification.monitor_days * D and t.due_since is None
    if action == "extend":
        assert t.next_check == now + LP.verification.extend_days * D and t.due_since == T0


def test_a_human_confirmation_wins_over_the_evidence():
    t = verify.transition(status="confirmed", next_check=T0, due_since=None, verdict=_v(verify.INEFFECTIVE),
                          now=T0, policy=LP, human=True)
    assert (t.action, t.status) == ("keep", "confirmed") and "a human decision wins" in t.evidence


def test_is_deadline():
    assert verify.is_deadline("applied", None, T0, T0 + LP.overdue.revert_days * D, LP)
    assert not verify.is_deadline("applied", None, T0, T0 + (LP.overdue.revert_days - 1) * D, LP)
    assert not verify.is_deadline("confirmed", None, T0, T0 + 90 * D, LP)


# -- recovery ---------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("live_hits,since_hits,wrong", [
    ([], [62, 63, 65, 66, 68, 70, 71, 73, 75, 76, 78], True),     # quiet while live, back at the old rate after
    ([24, 30, 36, 42, 48, 54], [62, 69, 75], False),            # the same rate live and since: the rule did nothing
])
def test_a_pattern_judged_again_on_its_whole_history(live_hits, since_hits, wrong):
    # 4 occurrences in the 10 days before the rule (the 4th the trigger), live days 20-60, reverted on day 60
    times = days(10, 13, 16, 19, *live_hits, *since_hits)
    v = verify.relapse(times, [(T0 + 20 * D, T0 + 60 * D)], T0 + 80 * D, LP, observed_from=T0)
    assert v.after == len(live_hits) and v.before == 4 + len(since_hits)  # raw counts
    assert ("trigger" in v.summary) is LP.verification.leave_out_trigger  # counted: kg watched from T0
    assert ("looks wrong" in promoting.relapse_head(v, LP)) is wrong


def test_a_revert_the_whole_history_does_not_confirm_gets_another_try_once():
    """recovery.max_tries 2, retry_below 0.8: a reverted pattern whose rule had a thin, unlucky live period (3 in
    its 14 days, against a rate of 0.3/day before and since) is not shown to have failed (P(ratio > 0.5) < 0.8),
    so its text is tried once more instead of staying reverted for good; after a second revert, or when the
    history shows the rule failed, it waits (the same text again only with a person's yes)."""
    live = [(T0 + 20 * D, T0 + 34 * D)]
    before = [0, 3, 7, 10, 13, 17, 19]
    thin = verify.relapse(days(*before, 24, 29, 33, 38, 42, 45, 49, 52, 56), live, T0 + 60 * D, LP, observed_from=T0)
    assert "looks wrong" not in promoting.relapse_head(thin, LP, 1)
    assert thin.p_not_enough < LP.recovery.retry_below, thin.summary
    head = promoting.relapse_head(thin, LP, 1)
    assert head.startswith("worth another try (tried 1 of 2 times") and promoting.comes_back(head)
    assert not promoting.comes_back(promoting.relapse_head(thin, LP, 2))          # tried twice: it waits
    once = _with_recovery(max_tries=1)
    assert not promoting.comes_back(promoting.relapse_head(thin, once, 1))        # the former rule: never
    failed = verify.relapse(days(*before, *range(20, 34, 2), 38, 42, 45, 49, 52, 56), live, T0 + 60 * D, LP,
                            observed_from=T0)                                     # live at twice the rate
    assert failed.p_not_enough >= LP.recovery.retry_below
    assert not promoting.comes_back(promoting.relapse_head(failed, LP, 1))


def _with_recovery(**keys: object) -> LifecyclePolicy:
    import copy

    data = copy.deepcopy(packaged("lifecycle"))
    data["recovery"].update(keys)
    return LifecyclePolicy.from_mapping(data)


@pytest.mark.parametrize("actions,failed,expected", [
    (["Use SSH", "Use SSH", "Use a token"], ["Use SSH"], "Use a token"),
    (["Use SSH", "Use a token", "Use a token"], [], "Use a token"),
    (["Use SSH"], ["use  ssh"], None),                                    # the summary is no next try
    ([], [], None),
])
def test_next_text(actions, failed, expected):
    assert promote.next_text(actions, "push failed", failed, LP) == expected


def test_a_recovery_with_nothing_new_asks():
    c = promote.Candidate("pat-1", "git.push", "push failed", 4, 2, area="tooling", action="Use SSH",
                          failed=("Use SSH",), actions=("Use SSH",))
    p = promote.plan(c, LP)
    assert p.mode == "ask" and p.file == "TOOLS.md" and "Reverted before: 'Use SSH'" in p.motivation
    c2 = promote.Candidate("pat-1", "git.push", "push failed", 4, 2, area="tooling", action="Use a token",
                           failed=("Use SSH",), actions=("Use SSH", "Use a token"))
    p2 = promote.plan(c2, LP)
    assert (p2.mode, p2.text) == ("auto", "Use a token")
    # no action in the window: the reverted text again, asked; the error text is no rule (a QA pass)
    c3 = promote.Candidate("pat-1", "git.push", "push failed", 4, 2, area="tooling", failed=("Use SSH",),
                           actions=("Use SSH",))
    p3 = promote.plan(c3, LP)
    assert (p3.mode, p3.text) == ("ask", "Use SSH")


# -- budgets ----------------------------------------------------------------------------------------------------
def test_budget_per_file_and_per_block():
    b = promote.Budget(LP, {("TOOLS.md", "kaizen-kg"): ["x"] * (LP.budget.max_block_lines - 1)})
    assert b.why_not("TOOLS.md", "kaizen-kg", "new") == ""
    b.take("TOOLS.md", "kaizen-kg", "new")
    assert "holds" in b.why_not("TOOLS.md", "kaizen-kg", "more")
    fresh = promote.Budget(LP, {})
    for _ in range(LP.budget.per_file_per_cycle):
        assert fresh.why_not("MEMORY.md", "kaizen-kg", "r") == ""
        fresh.take("MEMORY.md", "kaizen-kg", "r")
    assert "this cycle already" in fresh.why_not("MEMORY.md", "kaizen-kg", "r")
    assert "characters" in promote.Budget(LP, {}).why_not("A.md", "kaizen-kg", "x" * LP.budget.max_block_chars)


def test_rank_puts_high_impact_first():
    rows = [{"id": "a", "recurrence": 3, "priority": "low", "last_seen": T0},
            {"id": "b", "recurrence": 3, "priority": "critical", "last_seen": T0},
            {"id": "c", "recurrence": 9, "priority": "low", "last_seen": T0},
            {"id": "d", "recurrence": 4, "priority": "low", "last_seen": T0}]
    assert [r["id"] for r in promote.rank(rows, LP)] == ["c", "b", "d", "a"]


def _stopped_histories(rate: float, n: int, seed: int = 7) -> list[list[datetime]]:
    """Poisson histories at `rate`/day watched from T0 and stopped at the promotion trigger (the
    min_recurrence-th occurrence within the window), as kg samples them."""
    import random

    rng, out = random.Random(seed), []
    for _ in range(n):
        t, times = 0.0, []
        while True:
            t += rng.expovariate(rate)
            times.append(T0 + t * D)
            if verify._trigger(times, LP) is not None:
                break
        out.append(times)
    return out


@pytest.mark.parametrize("leave_out,factor", [(False, 1.0), (True, 1.5)])
def test_the_rate_before_under_the_promotion_stopping_rule(leave_out, factor):
    # the ratio divides by the rate before, so what must be unbiased is days / occurrences (1 / rate). Watched
    # from a fixed start and stopped at the 3rd occurrence, the days hold 3 exponential gaps: days / 3 is
    # unbiased, and leaving the trigger out (days / 2) overstates 1 / rate by 3/2 (effective rules reverted)
    lp = LifecyclePolicy.from_mapping({**packaged("lifecycle"), "verification": {
        **packaged("lifecycle")["verification"], "leave_out_trigger": leave_out, "baseline_half_life_days": 1e6}})
    rate, inv = 0.5, []
    for times in _stopped_histories(rate, 1500):
        c = verify.evidence(times, times[-1] + 0.01 * D, times[-1] + 0.01 * D, lp, observed_from=T0)
        assert c.before == 3 and c.k_before == (2 if leave_out else 3)
        inv.append(c.t_before / c.k_before)
    assert sum(inv) / len(inv) == pytest.approx(factor / rate, rel=0.08)


def test_without_a_start_the_first_and_the_trigger_stay_out():
    # kg has no start (no workspace events yet): the clock starts at the first occurrence, which is not
    # counted, and the trigger stays out too (the issue's burst case stays inconclusive)
    lp = LifecyclePolicy.from_mapping({**packaged("lifecycle"), "verification": {
        **packaged("lifecycle")["verification"], "leave_out_trigger": False}})
    c = verify.evidence(days(0, 1, 2), T0 + 2.5 * D, T0 + 9.5 * D, lp)
    assert c.k_before == pytest.approx(1.0, abs=0.02) and c.left_out[:2] == ("first", "trigger")


# -- the workspace's mix and burst caps (both off by default) ---------------------------------------------------
def _with(**keys: object) -> LifecyclePolicy:
    data = packaged("lifecycle")
    data = {**data, "verification": {**data["verification"], **keys}}
    return LifecyclePolicy.from_mapping(data)


def test_the_mix_factor_is_one_when_off_or_at_the_reference_share():
    assert verify.mix_factor(["confirmed"] * 3 + ["reverted"] * 7, LP) == 1.0  # off by default
    on = _with(mix_strength=10.0, mix_reference=0.6)
    assert verify.mix_factor(["confirmed"] * 6 + ["reverted", "auto_reverted"] * 2, on) == pytest.approx(1.0)
    assert verify.mix_factor(["applied"] * 20, on) == pytest.approx(1.0)  # unsettled changes say nothing


def test_a_workspace_whose_rules_mostly_fail_needs_more_to_keep_one():
    on = _with(mix_strength=10.0)
    failing = verify.mix_factor(["confirmed"] * 4 + ["reverted"] * 16, on)
    working = verify.mix_factor(["confirmed"] * 18 + ["reverted"] * 2, on)
    assert failing > 1.0 > working
    c = counts(12, 20, 2, 14)  # a cut to about 0.25×, P(ratio < 0.8) near 0.96
    assert verify.judge(c, on).kind == verify.CONFIRMED
    assert verify.judge(c, on, mix=working).kind == verify.CONFIRMED
    strict = verify.judge(c, on, mix=failing)
    assert strict.kind == verify.INCONCLUSIVE and "mix" in strict.summary
    # at the deadline the tie between the two thresholds leans the same way
    mid = counts(10, 20, 4.6, 14)  # median near the boundary ratio
    kept = [verify.judge(mid, on, deadline=True, mix=m).kind for m in (working, 1.0, failing)]
    assert kept[0] == verify.CONFIRMED and kept[-1] != verify.CONFIRMED


def test_the_mix_changes_nothing_at_one():
    for c in (counts(12, 20, 2, 14), counts(10, 20, 4.6, 14), counts(3, 0.5, 4, 7)):
        for deadline in (False, True):
            assert verify.judge(c, LP, deadline=deadline, mix=1.0) == verify.judge(c, LP, deadline=deadline)


def test_a_rare_pattern_counts_its_days_when_burst_caps_are_on():
    on = _with(burst_quantile=0.95)
    rare = days(0, 9, 20, *[25 + i / 100 for i in range(6)], 40)  # about 0.1 a day, one crowded day
    assert verify.day_cap(rare, T0 + 45 * D, LP) == LP.verification.max_per_day  # off: the fixed cap
    assert verify.day_cap(rare, T0 + 45 * D, on) == 1
    c = verify.evidence(rare, T0 + 24 * D, T0 + 45 * D, on)
    assert c.k_after == 2 and "5 over 1/day" in c.left_out
    daily = days(*[i + h for i in range(30) for h in (0, 0.2)])  # twice a day, every day: not a burst
    assert verify.day_cap(daily, T0 + 30 * D, on) == LP.verification.max_per_day


def test_a_checks_days_count_as_the_rate_without_the_rule():
    """`verify.evidence(checks=...)`: the days kg took a rule out for a check, and what recurred meanwhile, are
    base rate (the rate before), not evidence after the change; a check's end puts a rule back unless those days
    show it did not help (`verify_check.settle`)."""
    from kg.lifecycle import verify_check

    d0 = datetime(2026, 3, 1)
    times = [d0 + timedelta(days=i, hours=9) for i in range(0, 6, 2)]            # 3 before, one every 2 days
    times += [d0 + timedelta(days=20 + i, hours=9) for i in range(0, 14, 2)]     # 7 in the check, days 20-34
    applied, now = d0 + timedelta(days=6), d0 + timedelta(days=40)
    out = [(d0 + timedelta(days=20), d0 + timedelta(days=34))]
    c = verify.evidence(times, applied, now, LP, observed_from=d0, checks=out)
    plain = verify.evidence(times, applied, now, LP, observed_from=d0)
    assert (plain.k_after, plain.t_after) == (7.0, 34.0)
    assert (c.k_after, c.t_after) == (0.0, 20.0)
    assert c.k_before == pytest.approx(plain.k_before + 7) and c.t_before == pytest.approx(plain.t_before + 14)
    assert "7 in 14.0d out for a check counted as the rate without it" in c.left_out
    back, v, why = verify_check.settle(c, LP)
    assert back and verify_check.label(v, LP, back) == verify.CONFIRMED, why
    worse = verify.evidence(times + [applied + timedelta(days=i, hours=3) for i in range(1, 14)], applied, now, LP,
                            observed_from=d0, checks=out)
    back, v, why = verify_check.settle(worse, LP)
    assert not back and verify_check.label(v, LP, back) in (verify.INEFFECTIVE, verify.WORSE), why
    trail = [verify_check.out_line(out[0][0], out[0][1], "TOOLS.md", "undecided"),
             verify_check.back_line(out[0][1], out[0][0], "TOOLS.md", why)]
    assert verify_check.spans(trail, now) == out and verify_check.current(trail) is None
    assert verify_check.current(trail[:1]) == out[0] and verify_check.spans(trail[:1], now) == [(out[0][0], now)]


@pytest.mark.parametrize(("kw", "want"), [
    ({}, (0.95, 0.95)),                                   # 1 − error_rate, 1 − revert_error_rate
    ({"deadline": True}, (0.5, 0.5)),                     # the deadline: the majority decides
    ({"monitoring": True}, (0.95, 0.8)),                  # a confirmed rule: reverted at 1 − monitor_error_rate
])
def test_a_verdict_carries_the_levels_it_was_held_to(kw, want):
    v = verify.judge(counts(4, 10.0, 3, 14.0), LP, **kw)
    assert v.levels == want
    assert f"below {want[0]:.2f} / {want[1]:.2f}" in v.summary or v.kind != verify.INCONCLUSIVE


def test_a_burst_while_the_rule_was_live_does_not_keep_a_wrong_revert_out():
    """recovery.max_per_day 2: a relapse counts at most 2 occurrences of one day. Once a day for 8 days before the
    rule; with it for 28 days, 4 retries in one session every fourth day (the days it happens cut to a quarter);
    once a day for 14 days since its revert. Counted 3 a day (the verdict's cap) the rule looked 0.75× and the
    revert stayed for good; counted 2 a day the revert looks wrong."""
    live = [(T0 + 8 * D, T0 + 36 * D)]
    burst = [d + h / 24 for d in range(8, 36, 4) for h in range(4)]
    times = days(*range(8), *burst, *range(36, 50))
    v = verify.relapse(times, live, T0 + 50 * D, LP, observed_from=T0)
    assert LP.recovery.max_per_day == 2 and "14 over 2/day" in v.summary, v.summary
    assert "looks wrong" in promoting.relapse_head(v, LP, 1), v.summary
    counted_3 = _with_recovery(max_per_day=0)
    v3 = verify.relapse(times, live, T0 + 50 * D, counted_3, observed_from=T0)
    assert not promoting.comes_back(promoting.relapse_head(v3, counted_3, 1)), v3.summary
