"""A confirmed rule whose record is lopsided is checked (`verification.check_lopsided`, kg/lifecycle/verify_check.py
`lopsided`): confirmed on three occurrences in two days (the promotion's burst), it then has many more counted
occurrences since it than before it, so the ratio's doubt is all in the rate before, and the monitor keeps it on
that thin baseline for ever. With the switch on, a monitor look takes it out for a check (even past
check_max_per_change by one), and that check ends on `check_lopsided_posterior`. Real CLI, `--now` replayed."""

from __future__ import annotations

from datetime import datetime, timedelta

from tests.cli.test_lifecycle_checks import LINE, _log

# min_baseline_days 0: these tests are about a lopsided record promoted on a burst, not the wait for a baseline
CHECKS = ("[rules.lifecycle.verification]\ncheck_max_out = 1\ncheck_days = 14\ncheck_back_level = 0\n"
          "check_lopsided = {ratio}\ncheck_lopsided_posterior = 0.7\nmin_baseline_days = 0\n")


def _confirmed_then_lopsided(run_kg, ws, until: datetime = datetime(2026, 5, 24, 12)) -> dict:
    """Three occurrences in three days (promoted May 3), none in the first week (confirmed May 10), then one every
    1.25 days: at the look of May 24, 12 counted since it against 2.98 before it (the weighted count)."""
    (ws.root / "TOOLS.md").write_text("# Tools\n")
    for d in range(3):
        _log(run_kg, datetime(2026, 5, 1, 10) + timedelta(days=d))
    assert "promoted 'docker.perm'" in run_kg("cycle --now 2026-05-03T12:00").stdout
    assert run_kg("cycle --json --now 2026-05-10T12:00").json["verified"][0]["status"] == "confirmed"
    t = datetime(2026, 5, 10, 14)
    while t < until:
        _log(run_kg, t)
        t += timedelta(days=1.25)
    return run_kg("cycle --json --now 2026-05-24T12:00").json


def test_a_confirmed_rule_with_a_lopsided_record_is_checked(run_kg, ws):
    (ws.root / "kg.toml").write_text(CHECKS.format(ratio=2))
    d = _confirmed_then_lopsided(run_kg, ws)
    (v,) = d["verified"]
    assert v["action"] == "check" and v["stats"]["k_after"] >= 2 * v["stats"]["k_before"], v
    (c,) = d["checks"]
    assert (c["action"], c["until"]) == ("out", "2026-06-07T12:00:00")
    assert c["why"].startswith("12 counted occurrences since it against 2.9751 before it (≥ 2×)"), c
    assert d["reverted"] == [] and LINE not in (ws.root / "TOOLS.md").read_text()


def test_its_end_is_held_to_check_lopsided_posterior(run_kg, ws):
    """The rule changed nothing (the pattern keeps its pace while it is out): at the check's end the level is
    check_lopsided_posterior, not check_revert_posterior, and the numbers say so."""
    (ws.root / "kg.toml").write_text(CHECKS.format(ratio=2))
    _confirmed_then_lopsided(run_kg, ws, until=datetime(2026, 6, 7, 10))
    d = run_kg("cycle --json --now 2026-06-07T12:00").json
    (v,) = d["verified"]
    end = v["stats"]["check_end"]
    assert end["level"] == 0.7 and end["ratio"] == 0.6325, end
    (c,) = d["checks"]
    assert c["action"] == ("left out" if end["p"] >= 0.7 else "back"), (c, end)


def test_without_the_switch_the_monitor_keeps_it(run_kg, ws):
    (ws.root / "kg.toml").write_text(CHECKS.format(ratio=0))
    d = _confirmed_then_lopsided(run_kg, ws)
    (v,) = d["verified"]
    assert (v["action"], v["status"]) == ("keep", "confirmed"), v
    assert d["checks"] == [] and LINE in (ws.root / "TOOLS.md").read_text()
