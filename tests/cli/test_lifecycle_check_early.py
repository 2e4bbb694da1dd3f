"""A rule out for a check goes back as soon as the days without it show it works (`verification.check_back_level`,
kg/lifecycle/verify_check.py `back_early`): a check's days out cost the user the mistakes the rule prevents, and
a rule that works shows it fast once it is out, while one that does not needs the whole period. Real CLI, `--now`
replayed."""

from __future__ import annotations

from datetime import date, datetime, timedelta

from tests.cli.test_lifecycle_checks import LINE, _cycles, _log, _undecided_until_the_deadline

# min_baseline_days 0: these tests are about the check's early return, not the wait for a baseline
EARLY = ("[rules.lifecycle.verification]\ncheck_max_out = 1\ncheck_days = 14\ncheck_back_level = 0.9\n"
         "min_baseline_days = 0\n")


def _checked_on_june_5(run_kg, ws) -> dict:
    (ws.root / "TOOLS.md").write_text("# Tools\n")
    _undecided_until_the_deadline(run_kg)
    for day in (date(2026, 5, 15), date(2026, 5, 22), date(2026, 5, 29)):
        assert run_kg(f"cycle --now {day.isoformat()}T12:00").exit_code == 0
    assert LINE in (ws.root / "TOOLS.md").read_text()
    d = run_kg("cycle --json --now 2026-06-05T12:00").json
    assert [(c["action"], c["until"]) for c in d["checks"]] == [("out", "2026-06-19T12:00:00")]
    assert LINE not in (ws.root / "TOOLS.md").read_text()
    return d


def test_a_rule_whose_days_out_show_it_works_goes_back_before_the_period_ends(run_kg, ws):
    (ws.root / "kg.toml").write_text(EARLY)
    _checked_on_june_5(run_kg, ws)
    for d in range(8):  # without the rule it recurs three times a day, six times its rate with it
        for h in (9, 13, 17):
            _log(run_kg, datetime(2026, 6, 6, h) + timedelta(days=d))
    days = _cycles(run_kg, date(2026, 6, 6), date(2026, 6, 13))
    back = [i for i, d in enumerate(days) if any(c["action"] == "back" for c in d["checks"])]
    assert back and back[0] < 7, [d["checks"] for d in days]  # back within the week, not on June 19
    first = days[back[0]]
    (c,) = first["checks"]
    assert c["since"] == "2026-06-05T12:00:00" and "put back early" in c["why"], c
    (v,) = first["verified"]
    assert (v["verdict"], v["status"], v["check"]["state"]) == ("confirmed", "confirmed", "back")
    assert LINE in (ws.root / "TOOLS.md").read_text()
    # the days before it went back: looked at, still out, nothing reported
    assert all(d["verified"] == [] and d["checks"] == [] for d in days[:back[0]])
    at = f"{date(2026, 6, 6) + timedelta(days=back[0])}T12:00:00"
    assert v["stats"]["checks"] == [["2026-06-05T12:00:00", at]]  # its days out end the day it went back

def test_a_rule_whose_days_out_do_not_show_it_works_stays_out_the_whole_period(run_kg, ws):
    (ws.root / "kg.toml").write_text(EARLY)
    _checked_on_june_5(run_kg, ws)
    for d in range(0, 14, 2):  # without the rule: the rate it had with it
        _log(run_kg, datetime(2026, 6, 6, 10) + timedelta(days=d))
    days = _cycles(run_kg, date(2026, 6, 6), date(2026, 6, 18))
    assert all(d["checks"] == [] and d["verified"] == [] for d in days)
    assert LINE not in (ws.root / "TOOLS.md").read_text()
    d = run_kg("cycle --json --now 2026-06-19T12:00").json
    (c,) = d["checks"]  # the period's end decides, as without check_back_level
    assert c["action"] in ("back", "left out") and c["since"] == "2026-06-05T12:00:00" and "early" not in c["why"]
