"""The loop simulator at CI size: a few patterns whose truth is clear, a short history, the REAL loop (a real
workspace, `ws.log`, `api.cycle` each simulated day, `api.approve` after a delay). The full run is
`bench/loop_sim.py`."""

from __future__ import annotations

import importlib.util
import random
import sys
from pathlib import Path

import pytest

SPEC = importlib.util.spec_from_file_location("loop_sim", Path(__file__).parents[2] / "bench" / "loop_sim.py")
sim = sys.modules.setdefault("loop_sim", importlib.util.module_from_spec(SPEC))
SPEC.loader.exec_module(sim)
DAYS = 70  # the wait for a 14-day baseline (on in the packaged rules) first, then the 56 days judged


@pytest.fixture(scope="module")
def history(tmp_path_factory):
    pats = [
        sim.Pattern("sim.effective.a", 0.9, "effective", 0.05, 0.0, "auto"),
        sim.Pattern("sim.effective.b", 0.8, "effective", 0.1, 0.0, "propose"),   # approved after a delay
        sim.Pattern("sim.ineffective", 0.9, "ineffective", 1.0, 0.0, "auto"),
        sim.Pattern("sim.harmful", 0.7, "harmful", 2.5, 0.0, "auto"),
    ]
    return sim.run_history(3, n=len(pats), days=DAYS, mix=(60, 30, 10), rate=(0.1, 1.0), drift=0.0, burst=0.0,
                           delay=3, root=tmp_path_factory.mktemp("sim"), patterns=pats)


def test_every_pattern_was_promoted_and_judged(history):
    for p in history["patterns"]:
        assert p.applied, p.key
        assert p.verdicts, p.key                  # a decisive verdict within the history
        # by the deadline at the latest, or, undecided there, when the check it is taken out for ends
        assert p.verdicts[0][0] - p.applied[0] <= 28 + (14 if p.checked else 0)


def test_the_loop_keeps_what_helps_and_removes_what_does_not(history):
    end = {p.key: len(p.applied) > len(p.reverted) for p in history["patterns"]}
    assert end == {"sim.effective.a": True, "sim.effective.b": True, "sim.ineffective": False,
                   "sim.harmful": False}
    labels = {p.key: p.verdicts[0][1] for p in history["patterns"]}
    assert labels["sim.effective.a"] == labels["sim.effective.b"] == "confirmed"
    assert labels["sim.ineffective"] in ("ineffective", "made_worse")
    assert labels["sim.harmful"] in ("ineffective", "made_worse")


def test_the_scores_compare_kg_with_a_baseline_and_the_best(history):
    s = sim.score([history], DAYS, (60, 30, 10))
    assert set(s) == {"kg", "baseline", "best", "bayes"}
    assert s["kg"]["rules"] == 4 and s["kg"]["end_right"] == 100.0 and s["kg"]["effective_permanent_n"] == 0
    assert s["best"]["end_right"] == 100.0
    table = sim.table("t", s)
    assert "keep/revert right, at the end (%)" in table
    assert "| kg | baseline (former rule) | best possible | Bayes, base rate unknown |" in table


def test_the_oracle_and_the_baseline_are_the_decisions_they_claim():
    p = sim.Pattern("x", 0.5, "effective", 0.2, 0.0, "auto", applied=[10.0])
    rng = random.Random(1)
    p.events = [(d + rng.random(), False) for d in range(10)] + [(d + 0.5, False) for d in range(12, 60, 10)]
    assert sim.oracle(p, 60, 60, (60, 30, 10)) == ("effective", True)       # 5 in 50 days at a known 0.5/day
    p.events += [(d + 0.7, False) for d in range(11, 60)]
    assert sim.oracle(p, 60, 60, (60, 30, 10))[1] is False                  # ~1/day: not effective
    label, _, keep = sim.baseline(p, 60)
    assert label in ("ineffective", "made_worse") and keep is False


def test_the_bayes_decider_without_the_base_rate_uses_the_time_without_the_rule():
    """It does not know the rate before: a thin, fast start (3 in 3 days, as a promotion burst) with ~0.3/day
    after looks like a rule that works, and only time without the rule (a revert) shows it changed nothing."""
    p = sim.Pattern("x", 0.3, "ineffective", 1.0, 0.0, "auto", applied=[3.0])
    p.events = [(0.5, False), (1.5, False), (2.5, False)] + [(3.5 + d * 3.3, False) for d in range(30)]
    label, keep = sim.bayes_unknown_rate(p, 103, (60, 30, 10), (0.1, 1.0), 0.0)
    assert keep is True and label == "effective"
    p.reverted = [103.0]
    p.events += [(103.5 + d * 3.3, False) for d in range(20)]                # the same 0.3/day without it
    assert sim.bayes_unknown_rate(p, 170, (60, 30, 10), (0.1, 1.0), 0.0)[1] is False
    assert sim.oracle(p, 103, 170, (60, 30, 10))[1] is False                # the oracle knows 0.3/day


@pytest.mark.parametrize(("cls", "applied", "reverted", "trace", "want"), [
    ("ineffective", [3.0], [], [(10.0, "keep: confirmed: ... ≥ 0.95")], "bad left: confirmed at 1 − error_rate"),
    ("harmful", [3.0], [], [(10.0, "extend: inconclusive"),
                            (31.0, "keep: confirmed: ... (deadline: the majority decides)")],
     "bad left: confirmed at the deadline"),
    ("ineffective", [3.0, 40.0], [20.0], [], "bad left: applied again after a revert"),
    ("effective", [3.0], [31.0], [(31.0, "auto_revert: ineffective: ... (deadline: the majority decides)")],
     "effective reverted at the deadline, for good"),
    ("effective", [3.0, 50.0], [45.0], [(10.0, "keep: confirmed: ..."), (45.0, "revert: ineffective: ...")],
     "effective reverted while monitored"),
    ("effective", [3.0], [], [(10.0, "keep: confirmed: ...")], None),
    ("ineffective", [3.0], [10.0], [(10.0, "revert: ineffective: ...")], None),
])
def test_wrong_decisions_are_classed_by_how_they_went_wrong(cls, applied, reverted, trace, want):
    p = sim.Pattern("x", 0.5, cls, 1.0, 0.0, "auto", applied=applied, reverted=reverted, trace=trace)
    assert sim.wrong_class(p) == want


def _steady(days: float, step: float, extra: tuple[float, ...] = ()) -> list[tuple[float, bool]]:
    return sorted([(i * step, False) for i in range(int(days / step))] + [(t, True) for t in extra])


@pytest.mark.parametrize(("cls", "effect", "drift", "events", "applied", "reverted", "verdicts", "want"), [
    # an ineffective rule kept because its baseline held a burst (ten extras on day 3)
    ("ineffective", 1.0, 0.0, _steady(120, 2.0, tuple(3 + i / 100 for i in range(10))), [5.0], [],
     [(12.0, "confirmed")], "baseline from a burst"),
    # an effective rule reverted because bursts crowded the days after it
    ("effective", 0.3, 0.0, [e for e in _steady(120, 2.0, tuple(d + i / 100 for d in (32, 40, 48) for i in range(6)))
                             if e[0] < 30 or e[1] or e[0] % 6 == 0],  # the rule cut the rate to 1/3: every 6 days
     [30.0], [50.0], [(50.0, "ineffective")], "burst inside the after-window"),
    # an ineffective rule kept because its pattern's rate fell on its own (drift −0.9 over 120 days)
    ("ineffective", 1.0, -0.9, [(t, False) for t in (1, 5, 9, 12, 15, 19, 22, 26, 29, *range(33, 117, 7))], [30.0], [],
     [(110.0, "confirmed")], "drift mistaken for an effect"),
])
def test_wrong_decisions_name_their_cause(cls, effect, drift, events, applied, reverted, verdicts, want):
    p = sim.Pattern("x", 0.5, cls, effect, drift, "auto", applied=applied, reverted=reverted,
                    verdicts=verdicts, events=events)
    assert sim.wrong_cause(p, 120, 0.0) == want


def test_the_fast_replay_takes_the_real_loops_decisions(history):
    """bench/loop_replay.py calls kg's decision functions on plain state: on the same history it applies,
    judges and reverts on the same days as the real cycle."""
    from loop_replay import replay_history

    pats = [sim.Pattern(p.key, p.rate, p.cls, p.effect, p.drift, p.target) for p in history["patterns"]]
    fast = replay_history(3, n=len(pats), days=DAYS, mix=(60, 30, 10), rate=(0.1, 1.0), drift=0.0, burst=0.0,
                          delay=3, policy=sim.load_policy([]), patterns=pats)
    for real, quick in zip(history["patterns"], fast["patterns"], strict=True):
        assert (quick.applied, quick.reverted, quick.verdicts) == (real.applied, real.reverted, real.verdicts)
        assert quick.events == real.events


def test_the_fast_replay_judges_due_changes_in_the_cycles_order(tmp_path):
    """With one rule out for a check at a time, which of two due changes takes the place depends on the order they
    are judged in: the cycle reads them by next check, then id (creation order). On seed 5 (8 patterns, 50 days)
    the fast replay took them in the patterns' order before, and had sim.p07 out for a check from day 44 where the
    real cycle had sim.p04's change."""
    from loop_replay import replay_history

    sets = ["verification.check_max_out=1"]
    opts = dict(n=8, days=50, mix=(0.6, 0.3, 0.1), rate=(0.1, 1.0), drift=0.0, burst=0.0, delay=3)
    real = sim.run_history(5, root=tmp_path, sets=sets, **opts)["patterns"]
    fast = replay_history(5, policy=sim.load_policy(sets), **opts)["patterns"]
    assert any(p.checks for p in real)
    for r, q in zip(real, fast, strict=True):
        assert (q.applied, q.reverted, q.checks, q.verdicts) == (r.applied, r.reverted, r.checks, r.verdicts), r.key


def test_the_frontier_is_the_bayes_decider_at_each_keep_level():
    """`--frontier`: at level 0.5 it is the Bayes column of the table; a higher level keeps fewer rules of
    both kinds. The thin-start ineffective rule of the test above is kept up to a level and reverted above it."""
    thin = sim.Pattern("thin", 0.3, "ineffective", 1.0, 0.0, "auto", applied=[3.0])
    thin.events = [(0.5, False), (1.5, False), (2.5, False)] + [(3.5 + d * 3.3, False) for d in range(30)]
    works = sim.Pattern("works", 0.6, "effective", 0.2, 0.0, "auto", applied=[5.0])
    works.events = [(d * 0.9, False) for d in range(6)] + [(5.5 + d * 9.0, False) for d in range(11)]
    hist = [{"patterns": [thin, works]}]
    from loop_frontier import frontier, frontier_table

    rows = frontier(hist, 103, (60, 30, 10), levels=(0.1, 0.5, 0.99, 1.0))
    s = sim.score(hist, 103, (60, 30, 10))["bayes"]
    (mid,) = [r for r in rows if r["level"] == 0.5]
    assert (mid["end_right"], mid["bad_left_applied"]) == (s["end_right"], s["bad_left_applied"]) == (50.0, 100.0)
    assert [r["bad_left_applied"] for r in rows] == [100.0, 100.0, 0.0, 0.0]
    assert [r["effective_reverted"] for r in rows] == [0.0, 0.0, 0.0, 100.0]
    assert "| kg |" in frontier_table(rows, sim.score(hist, 103, (60, 30, 10))["kg"])


def test_the_pooled_row_judges_kgs_own_counts_once_at_the_end():
    """`--frontier`'s row of what a workspace knows: the pattern's counts while its rule was live against all the
    other time, no rate range, no mix. The thin, fast start looks like a rule that works until the days after a
    revert show the same rate without it; the rule that works stays kept."""
    from loop_frontier import pooled_end

    thin = sim.Pattern("thin", 0.3, "ineffective", 1.0, 0.0, "auto", applied=[3.0])
    thin.events = [(0.5, False), (1.5, False), (2.5, False)] + [(3.5 + d * 3.3, False) for d in range(30)]
    works = sim.Pattern("works", 0.6, "effective", 0.2, 0.0, "auto", applied=[5.0])
    works.events = [(d * 0.9, False) for d in range(6)] + [(5.5 + d * 9.0, False) for d in range(11)]
    policy = sim.load_policy([])
    assert pooled_end([{"patterns": [thin, works]}], 103, policy) == {
        "end_right": 50.0, "effective_reverted": 0.0, "bad_left_applied": 100.0}
    thin.reverted = [103.0]
    thin.events += [(103.5 + d * 3.3, False) for d in range(20)]
    works.events += [(103.5 + d * 9.0, False) for d in range(8)]
    assert pooled_end([{"patterns": [thin, works]}], 170, policy) == {
        "end_right": 100.0, "effective_reverted": 0.0, "bad_left_applied": 0.0}


@pytest.mark.parametrize(("applied", "reverted", "trace", "want"), [
    # the relapse still shows the failure: the on-period's occurrences, frozen once reverted, keep it out
    ([9.8], [23.8], [(23.8, "revert: ineffective: ..."),
                     (40.8, "relapse: no sign the old rule worked (P = 0.120, needs 0.6): ...")],
     "relapse kept it out (no sign the old rule worked)"),
    # a check that began on day 98.8 ended in a revert on day 112.8: the end came within the cool-down
    ([70.8], [98.8], [(98.8, "check: undecided at its deadline (...)"),
                      (112.8, "revert: check ended, P(ratio > 0.6325) = 0.746 ≥ 0.5: reverted: ...")],
     "reverted too late (within the cool-down of the end)"),
    ([20.0], [40.0], [(40.0, "revert: ineffective: ...")], "never recurred enough after the cool-down"),
    ([20.0, 70.0], [40.0, 90.0], [(40.0, "revert: ..."), (60.0, "relapse: worth another try (tried 1 of 2 times; ...)"),
                                  (90.0, "revert: ..."), (104.0, "relapse: no sign the old rule worked (...)")],
     "tried 2 times, retries spent"),
    ([20.0, 70.0], [40.0], [(40.0, "revert: ...")], None),     # applied again: back
])
def test_an_effective_rule_still_reverted_says_why_it_did_not_come_back(applied, reverted, trace, want):
    p = sim.Pattern("x", 0.5, "effective", 0.3, 0.0, "auto", applied=applied, reverted=reverted, trace=trace)
    assert sim.why_not_back(p, 120) == want
    assert sim.why_not_back(sim.Pattern("y", 0.5, "ineffective", 1.0, 0.0, "auto", applied=applied,
                                        reverted=reverted, trace=trace), 120) is None


def test_paired_draws_give_two_policies_the_same_luck_where_their_rules_agree():
    """bench/loop_cost.py compares two policies on one seed: with paired draws a rule that differs changes only its
    own pattern's days, and a live effective rule's day never has more occurrences than the same day without it
    (with one stream, one differing decision shifted every later draw of the history)."""
    def days(live_days: set[int], paired: int | None) -> list[list[tuple[float, str]]]:
        pats = [sim.Pattern(f"sim.p{i}", 0.8, "effective", 0.3, 0.0, "auto") for i in range(3)]
        rng, out = random.Random(5), []
        for day in range(40):
            pats[0].live = day in live_days
            out.append([(h, p.key) for h, p, _ in sim.day_events(rng, pats, day, 40, 0.2, paired)])
        return out

    off, on = days(set(), 7), days(set(range(10, 30)), 7)
    for d in range(40):
        assert [e for e in on[d] if e[1] != "sim.p0"] == [e for e in off[d] if e[1] != "sim.p0"]
        assert sum(e[1] == "sim.p0" for e in on[d]) <= sum(e[1] == "sim.p0" for e in off[d])
    assert on[:10] == off[:10] and on[30:] == off[30:]
    assert sum(e[1] == "sim.p0" for d in on[10:30] for e in d) < sum(e[1] == "sim.p0" for d in off[10:30] for e in d)
    stream_off, stream_on = days(set(), None), days(set(range(10, 30)), None)
    assert [e for d in stream_on[30:] for e in d if e[1] != "sim.p0"] != \
        [e for d in stream_off[30:] for e in d if e[1] != "sim.p0"]
    assert sim.approval_delay(random.Random(1), 3, 7, "sim.p0", 4) == sim.approval_delay(random.Random(2), 3, 7,
                                                                                          "sim.p0", 4)


def test_the_breakdown_says_how_each_wrong_rule_was_decided_and_whether_bayes_misses_it_too():
    """`--breakdown`: a bad rule confirmed at 0.95 on a burst baseline of 3 and kept (its pattern recurring at
    its own pace all along: the Bayes decider sees the rate never fell and reverts it), an effective rule reverted
    for good (its rate fell to a tenth: the Bayes decider keeps it), and a rule kg got right, which is in no row."""
    steady = [(float(d), False) for d in range(0, 120, 2)]
    bad = sim.Pattern("bad", 0.5, "ineffective", 1.0, 0.0, "auto", applied=[4.0], events=steady, trace=[
        (11.0, "keep: confirmed: ratio 0.10× (...) (before 3 (3 counted) in 0.5d = 6.000/day; after 0 in 7.0d)")])
    good = sim.Pattern("good", 0.5, "effective", 0.1, 0.0, "auto", applied=[4.0], reverted=[40.0],
                       events=[e for e in steady if e[0] < 4 or e[0] >= 40 or e[0] % 20 == 0], trace=[
        (11.0, "extend: inconclusive: (before 3 (3 counted) in 4.0d)"),
        (40.0, "revert: ineffective: ratio 0.9× (...) (before 3 (3 counted) in 4.0d = 0.75/day; after 2 in 36d)")])
    right = sim.Pattern("right", 0.5, "effective", 0.1, 0.0, "auto", applied=[4.0], events=steady[:3],
                        trace=[(11.0, "keep: confirmed: (before 3 (3 counted) in 4.0d)")])
    out = sim.breakdown([{"patterns": [bad, good, right]}], 120, (60, 30, 10), (0.1, 1.0)).splitlines()
    assert out[0] == "bad left applied at the end: 1, the Bayes decider wrong on 0 of them too"
    assert out[1] == "  first decided: keep 1 (0 Bayes too)"
    assert out[2] == "  counted before: 3-5 1 (0 Bayes too)"
    assert out[3:5] == ["  promoted on day: <10 1 (0 Bayes too)", "  rate a day: 0.3-0.6 1 (0 Bayes too)"]
    assert out[5] == "effective reverted (on the way): 1, the Bayes decider wrong on 0 of them too"
    assert out[6] == "  first decided: revert 1 (0 Bayes too)"
    assert out[10] == "effective reverted, still at the end: 1, the Bayes decider wrong on 0 of them too"
