"""A confirmed rule whose evidence turned doubtful is checked (`verification.check_doubtful`, off by default;
kg/lifecycle/verify_check.py `wants`): confirmed early on a burst baseline, its posterior median later passes
boundary_ratio (the majority would revert it) while P(ratio > revert_min_ratio) stays below the monitor's level, so
the monitor keeps it on evidence that leans against it. With the switch on, that look takes it out for a check
instead, to measure the rate without it. Real CLI, `--now` replayed."""

from __future__ import annotations

from datetime import datetime, timedelta

from tests.cli.test_lifecycle_checks import LINE, _log

# min_baseline_days 0: these tests are about checking a doubtful confirmed rule, not the wait for a baseline
CHECKS = ("[rules.lifecycle.verification]\ncheck_max_out = 1\ncheck_days = 14\ncheck_doubtful = {on}\n"
          "min_baseline_days = 0\n")


def _confirmed_then_doubtful(run_kg, ws) -> dict:
    """Three occurrences in three days (promoted May 3), none in the first week (confirmed May 10), then one every
    0.8 days: at the look of June 7 the posterior median is about 0.66, P(ratio > 0.5) about 0.69."""
    (ws.root / "TOOLS.md").write_text("# Tools\n")
    for d in range(3):
        _log(run_kg, datetime(2026, 5, 1, 10) + timedelta(days=d))
    assert "promoted 'docker.perm'" in run_kg("cycle --now 2026-05-03T12:00").stdout
    assert run_kg("cycle --json --now 2026-05-10T12:00").json["verified"][0]["status"] == "confirmed"
    t = datetime(2026, 5, 10, 14)
    while t < datetime(2026, 6, 7, 12):
        _log(run_kg, t)
        t += timedelta(days=0.8)
    (v,) = run_kg("cycle --json --now 2026-05-24T12:00").json["verified"]
    assert (v["action"], v["status"]) == ("keep", "confirmed")
    return run_kg("cycle --json --now 2026-06-07T12:00").json


def test_a_confirmed_rule_whose_median_passed_the_boundary_is_checked(run_kg, ws):
    (ws.root / "kg.toml").write_text(CHECKS.format(on="true"))
    d = _confirmed_then_doubtful(run_kg, ws)
    (v,) = d["verified"]
    assert v["action"] == "check" and v["ratio"] > 0.6325 and v["stats"]["p_not_enough"] < 0.8, v
    (c,) = d["checks"]
    assert (c["action"], c["until"]) == ("out", "2026-06-21T12:00:00")
    assert c["why"].startswith("confirmed, but its posterior median 0.6") and "past 0.6325" in c["why"], c
    assert d["reverted"] == [] and LINE not in (ws.root / "TOOLS.md").read_text()


def test_without_the_switch_the_monitor_keeps_it(run_kg, ws):
    (ws.root / "kg.toml").write_text(CHECKS.format(on="false"))
    d = _confirmed_then_doubtful(run_kg, ws)
    (v,) = d["verified"]
    assert (v["action"], v["status"]) == ("keep", "confirmed") and v["ratio"] > 0.6325, v
    assert d["checks"] == [] and LINE in (ws.root / "TOOLS.md").read_text()
