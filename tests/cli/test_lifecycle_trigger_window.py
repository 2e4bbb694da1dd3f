"""`verification.trigger_window`: the promotion is a stopping rule, and with "left_out" the rate before a change
leaves out the group of occurrences that triggered it (off by default: measured in rules/lifecycle.toml). Through
the real cycle with a replayed `now`; the numbers are in `kg verify --json` and `kg why`."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta

import kg
from kg.core.policy import packaged
from kg.lifecycle import api, verify, verify_stop
from kg.lifecycle.policy import LifecyclePolicy

D = timedelta(days=1)
RULE = "Add the user to the docker group"


def _burst(ws, window: str):
    """kg starts watching at 8:00 on May 1; `docker.perm` comes three times between 9:00 and 11:00 (a burst: 18 a
    day over the day's first hours), is promoted at noon, then comes every other day."""
    with (ws.root / "kg.toml").open("a") as f:
        # min_baseline_days 0: the test is about the trigger window in the rate before, not the wait for a baseline
        f.write(f'\n[rules.lifecycle.verification]\ncheck_max_out = 0\nmin_baseline_days = 0\n'
                f'trigger_window = "{window}"\n')
    ws = kg.open_workspace(ws.root)
    with ws:
        ws.log("error", "slow went wrong", now=datetime(2026, 5, 1, 8), session="x", pattern_key="slow",
               category="tool_gotcha")
        for at in [datetime(2026, 5, 1, h) for h in (9, 10, 11)] + [datetime(2026, 5, 3, 9), datetime(2026, 5, 5, 9)]:
            ws.log("error", "docker.perm permission denied on socket", now=at, session=f"s{at:%d%H}",
                   pattern_key="docker.perm", action=RULE, category="tool_gotcha")
            if at.hour == 11:
                assert [p["pattern_key"] for p in api.cycle(ws, now=at.replace(hour=12)).as_dict()["promoted"]] == [
                    "docker.perm"]


def test_the_triggering_group_is_left_out_of_the_rate_before(ws, run_kg):
    _burst(ws, "left_out")
    (v,) = run_kg("verify --json --now 2026-05-08T12:00").json["verified"]
    s = v["stats"]
    # the three of the group and the two hours from its first to the trigger are out; the hour before it and the
    # hour between the trigger and the change are the rate before, with nothing in them
    assert s["k_before"] == 0 and abs(s["days_before"] - 2 / 24) < 1e-3, s
    assert "3 in the 0.1d of the promotion's trigger" in s["not_counted"], s
    why = run_kg(["why", f"- {RULE}", "--json", "--now", "2026-05-08T13:00"]).json
    assert any("of the promotion's trigger" in x for x in why["explanation"]), why


def test_counted_by_default_the_burst_is_the_rate_before(ws, run_kg):
    _burst(ws, "counted")
    (v,) = run_kg("verify --json --now 2026-05-08T12:00").json["verified"]
    assert v["stats"]["k_before"] > 2.9 and not any("trigger" in x for x in v["stats"]["not_counted"]), v["stats"]
    assert v["rate_before"] > 10  # 3 in the 4 hours since kg started watching


def test_the_group_is_as_large_as_the_promotion_threshold_in_the_rules():
    lp = LifecyclePolicy.from_mapping(packaged("lifecycle"))
    lp = replace(lp, verification=replace(lp.verification, trigger_window="left_out", baseline_half_life_days=1e9))
    five = replace(lp, promotion=replace(lp.promotion, min_recurrence=5))
    t0 = datetime(2026, 5, 1)
    times = [t0 + d * D for d in (0, 40, 41, 42, 43, 44, 60)]  # the first is alone in its window
    assert verify_stop.trigger_group(times, lp) == (times[1], times[3])
    assert verify_stop.trigger_group(times, five) == (times[1], times[5])
    kept, gap = verify_stop.left_out(times, five)
    assert kept == [times[0], times[6]] and gap == (times[1], times[5])
    c = verify.evidence(times, t0 + 70 * D, t0 + 80 * D, five, observed_from=t0)
    assert abs(c.k_before - 2) < 1e-3 and abs(c.t_before - 66) < 1e-3, c  # 70 days less the group's 4 (unweighted)
