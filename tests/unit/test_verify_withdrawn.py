"""Withdrawn by hand and the relapse-learnt mix: pure functions, no database (kg/lifecycle/verify_withdrawn.py,
kg/lifecycle/verify_mix.py, `verify.evidence(paused=...)`, `verification.thin_deadline_events`)."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from kg.core.policy import packaged
from kg.lifecycle import verify, verify_mix
from kg.lifecycle import verify_withdrawn as w
from kg.lifecycle.policy import LifecyclePolicy

LP = LifecyclePolicy.from_mapping(packaged("lifecycle"))
T0 = datetime(2026, 3, 1, 9, 0)
D = timedelta(days=1)


def _with(**verification) -> LifecyclePolicy:
    data = packaged("lifecycle")
    return LifecyclePolicy.from_mapping({**data, "verification": {**data["verification"], **verification}})


def test_pauses_are_read_back_from_the_evidence_trail():
    trail = ["2026-03-01 applied (auto)", w.withdrawn_line(T0 + 2 * D, "TOOLS.md", True),
             w.resumed_line(T0 + 5 * D, T0 + 2 * D, "TOOLS.md"), "2026-03-09 confirmed: ...",
             w.withdrawn_line(T0 + 10 * D, "TOOLS.md", False)]
    assert w.pauses(trail, T0 + 12 * D) == [(T0 + 2 * D, T0 + 5 * D), (T0 + 10 * D, T0 + 12 * D)]
    assert w.paused_since(trail) == T0 + 10 * D
    assert w.paused_since(trail[:3]) is None and w.explain(trail[:3], T0) == ""
    assert "withdrawn by hand since 2026-03-11" in w.explain(trail, T0 + 12 * D)


@pytest.mark.parametrize("text,expected", [
    ("## Gotchas\n\n- my own note\n", False),                       # the rule's line is gone
    ("## Gotchas\n\n* Use uv, not pip\n", True),                     # moved out of the block, other bullet
    ("- use uv, not pip (my wording)\n", True),                       # reworded around: still the rule
    (None, False),                                                  # the file is gone
])
def test_a_rule_a_person_touched_is_in_effect_only_while_its_line_is_there(text, expected):
    assert w.in_effect(text, "kaizen-kg", "Use uv, not pip", "0123456789abcdef") is expected


def test_days_withdrawn_are_neither_time_nor_occurrences_after_the_change():
    times = [T0 + x * D for x in (-9, -6, -3, 4.5, 5, 5.5, 6)]
    whole = verify.evidence(times, T0, T0 + 20 * D, LP)
    out = verify.evidence(times, T0, T0 + 20 * D, LP, paused=[(T0 + 4 * D, T0 + 7 * D)])
    assert (whole.after, whole.t_after) == (4, 20.0)
    assert (out.after, out.t_after) == (0, 17.0)
    assert "4 in 3.0d withdrawn by hand" in out.left_out
    assert (out.k_before, out.t_before) == (whole.k_before, whole.t_before)


def test_a_thin_baseline_keeps_checking_at_the_deadline():
    c = verify.Counts(3, 6, 3.0, 6.0, 6.0, 28.0, ())
    assert verify.judge(c, LP, deadline=True).kind != verify.INCONCLUSIVE
    v = verify.judge(c, _with(thin_deadline_events=5.0), deadline=True)
    assert v.kind == verify.INCONCLUSIVE and "the deadline waits: 3 counted occurrences" in v.summary


@pytest.mark.parametrize("kinds,expected", [
    ([], 1.0),                                                      # nothing measured: the levels as set
    (["ineffective"] * 20, 3.2222),                                 # every revert held: rules work less here
    (["confirmed"] * 5 + ["ineffective"] * 5, 0.2593),              # half the reverts were wrong: more
])
def test_the_mix_from_relapses(kinds, expected):
    lp = _with(mix_source="relapse", mix_strength=10.0, relapse_reference=0.1)
    assert verify_mix.relapse_factor(kinds, lp) == pytest.approx(expected, abs=1e-4)
    assert verify_mix.relapse_factor(kinds, LP) == 1.0              # off by default


@pytest.mark.parametrize("name", ["wsB[old]#2", "ws]]#3", "two\nlines]#4", "plain#2"])
def test_a_workspace_finds_its_own_pause_lines_whatever_its_name(name):
    """rev5 #1: a `]` (or a line break) in a folder name was written mapped and compared raw."""
    ev = [w.withdrawn_line(T0, "TOOLS.md", True, where=name)]
    assert w.paused_since(ev, name) == T0 and w.elsewhere(ev, name) == [] and w.pauses(ev, T0 + D, name)
    assert w.elsewhere(ev, "other#9") == [(w.tag_name(name), T0)]
    ev.append(w.resumed_line(T0 + 2 * D, T0, "TOOLS.md", where=name))
    assert w.paused_since(ev, name) is None and w.closed_total(ev) == 2 * D
