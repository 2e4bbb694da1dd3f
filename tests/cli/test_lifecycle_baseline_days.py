"""`verification.min_baseline_days`: a pattern is promoted only once the rate before its change would rest on that
many days watched. A workspace's first days often begin with a burst (three in an hour reads 24 a day for a pattern
that comes every other day), and every later look at the rule compares against that rate, so a rule that changes
nothing is confirmed and kept. Through the real cycle and `kg verify --json`, with a replayed `now`."""

from __future__ import annotations

from datetime import datetime

import kg
from kg.lifecycle import api

RULE = "Add the user to the docker group"


def _watch(ws, days: float):
    """kg starts watching at 8:00 on May 1; `docker.perm` comes three times between 9:00 and 11:00, then on May 5,
    9 and 13; a cycle runs at noon each of those days. Returns the cycles' reports."""
    with (ws.root / "kg.toml").open("a") as f:
        f.write(f"\n[rules.lifecycle.verification]\ncheck_max_out = 0\nmin_baseline_days = {days}\n")
    ws = kg.open_workspace(ws.root)
    reports = []
    with ws:
        ws.log("error", "slow went wrong", now=datetime(2026, 5, 1, 8), session="x", pattern_key="slow",
               category="tool_gotcha")
        for at in [datetime(2026, 5, 1, h) for h in (9, 10, 11)] + [datetime(2026, 5, d, 9) for d in (5, 9, 13, 16)]:
            ws.log("error", "docker.perm permission denied on socket", now=at, session=f"s{at:%d%H}",
                   pattern_key="docker.perm", action=RULE, category="tool_gotcha")
            if at.day != 1 or at.hour == 11:  # (no cycle inside the burst)
                reports.append(api.cycle(ws, now=at.replace(hour=12)).as_dict())
    return reports


def _promoted(report) -> list[str]:
    return [p["pattern_key"] for p in report["promoted"]]


def test_a_pattern_waits_until_its_rate_before_rests_on_enough_days(ws, run_kg):
    first, *later = _watch(ws, 14)
    assert _promoted(first) == []
    (wait,) = [w for w in first["waiting"] if w["pattern_key"] == "docker.perm"]
    assert "watched 0.1 of 14 days before it (verification.min_baseline_days)" in wait["reason"]
    assert [_promoted(r) for r in later] == [[], [], [], ["docker.perm"]]  # May 5, 9, 13 wait; May 16 is day 15
    (v,) = run_kg("verify --json --now 2026-05-23T12:00").json["verified"]
    assert v["stats"]["days_before"] >= 14 and v["before"] == 7  # the burst is 3 of 7 occurrences, not 3 of 3


def test_off_a_burst_on_the_first_morning_is_promoted_at_once(ws):
    first, _, may9, *_ = _watch(ws, 0)
    assert _promoted(first) == ["docker.perm"] and first["waiting"] == []
    (v,) = may9["verified"]  # its first check (May 8, noon) compares against the burst's morning
    assert v["stats"]["days_before"] < 1 and v["before"] == 3
