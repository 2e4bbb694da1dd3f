"""`verification.dispersion_strength`: a pattern whose days come in bursts (three at once) carries less information
per occurrence than a Poisson one, so a rule's first verification weighs its counts as fewer and one bursty week
after the change is no revert at 0.95. Through the real cycle with a replayed `now`; φ is in `kg verify --json`
and the verdict's numbers (`kg why`)."""

from __future__ import annotations

from datetime import datetime, timedelta

import kg
from kg.lifecycle import api

D = timedelta(days=1)
RULE = "Add the user to the docker group"
T0 = datetime(2026, 5, 1, 8)


def _bursty(ws, strength: float) -> None:
    """kg starts watching on May 1; `docker.perm` comes three at a time on six days of the first sixteen, is
    promoted into TOOLS.md on day 16, then comes three at a time on three days of the week after."""
    with (ws.root / "kg.toml").open("a") as f:
        # no checks and no baseline wait: the test is about the first verdict's weight of evidence
        f.write(f"\n[rules.lifecycle.verification]\ncheck_max_out = 0\nmin_baseline_days = 0\n"
                f"dispersion_strength = {strength}\n")
    ws = kg.open_workspace(ws.root)
    with ws:
        ws.log("error", "slow went wrong", now=T0, session="x", pattern_key="slow", category="tool_gotcha")
        for day in (0, 3, 5, 8, 11, 14, 17, 19, 21):
            if day == 17:
                promoted = api.cycle(ws, now=T0 + 16 * D).as_dict()["promoted"]
                assert [p["pattern_key"] for p in promoted] == ["docker.perm"]
            for h in (1, 2, 3):
                at = T0 + day * D + timedelta(hours=h)
                ws.log("error", "docker.perm permission denied on socket", now=at, session=f"s{day}",
                       pattern_key="docker.perm", action=RULE, category="tool_gotcha")


def test_a_bursty_first_week_is_not_a_revert(ws, run_kg):
    _bursty(ws, 10.0)
    (v,) = run_kg("verify --json --now 2026-05-24T08:30").json["verified"]
    assert v["action"] == "extend" and v["verdict"] == "inconclusive", v
    assert v["stats"]["dispersion"] > 1.5 and "overdispersion φ" in v["summary"], v
    assert v["before"] == 18 and v["after"] == 9, v
    why = run_kg(["why", f"- {RULE}", "--json", "--now", "2026-05-24T09:00"]).json
    assert any("overdispersion φ" in x for x in why["explanation"]), why


def test_off_the_same_week_reverts_as_poisson_counts(ws, run_kg):
    _bursty(ws, 0.0)
    (v,) = run_kg("verify --json --now 2026-05-24T08:30").json["verified"]
    assert v["action"] == "revert" and v["stats"]["dispersion"] == 1.0, v
