"""Two verdict options, off by default (their measurements are in rules/lifecycle.toml), through the real cycle
with a replayed `now`: a rule tried again is judged on every period it was live (`verification.pool_retries`),
and a rule promoted on a burst is judged with a rate prior fitted to the workspace's patterns
(`verification.prior_source = "patterns"`). The numbers are in `kg cycle --json`, `kg verify --json`, `kg why`."""

from __future__ import annotations

from datetime import datetime, timedelta

import kg
from kg.lifecycle import api

D = timedelta(days=1)
RULE = "Add the user to the docker group"


def _with_rules(ws, text: str):
    """The workspace reopened with these lifecycle rules in its kg.toml (appended: a team store's lines stay)."""
    with (ws.root / "kg.toml").open("a") as f:
        # min_baseline_days 0: these tests are about pooling a rule's periods and the workspace prior, not the
        # wait for a baseline
        f.write("\n[rules.lifecycle.verification]\nmin_baseline_days = 0\n" + text)
    return kg.open_workspace(ws.root)


def _log(ws, at: datetime, key: str = "docker.perm", rule: str = RULE) -> None:
    ws.log("error", f"{key} permission denied on socket", now=at, session=f"s{at:%m%d%H}", pattern_key=key,
           action=rule, category="tool_gotcha")


def _retried(ws, pool: bool) -> list[tuple[datetime, dict]]:
    """Promoted on May 8 after a week at one a day; one a day with the rule, auto-reverted at its deadline (June 5);
    twice a day without it, so recovery brings the same text back (approved the day it is proposed); with it again
    one or two a day. Returns every verification, (day, item)."""
    ws = _with_rules(ws, f"check_max_out = 0\npool_retries = {'true' if pool else 'false'}\n")
    seen, state, i = [], "first", 0
    with ws:
        for d in range(8):
            _log(ws, datetime(2026, 5, 1, 10) + d * D)
        assert api.cycle(ws, now=datetime(2026, 5, 8, 12)).as_dict()["promoted"]
        day = datetime(2026, 5, 9)
        while day <= datetime(2026, 7, 31):
            for h in range({"first": 1, "off": 2, "again": 1 + i % 2}[state]):
                _log(ws, day.replace(hour=9 + h))
            r = api.cycle(ws, now=day.replace(hour=12)).as_dict()
            seen += [(day, v) for v in r["verified"]]
            for q in r["proposed"]:
                assert api.approve(ws, q["number"], now=day.replace(hour=13))["action"] == "applied"
            state, i = ("off", 0) if r["reverted"] else ("again", 0) if r["proposed"] else (state, i + 1)
            day += D
    return seen


def test_a_rule_tried_again_is_judged_on_every_period_it_was_live(ws, run_kg):
    seen = _retried(ws, pool=True)
    reverts = [(d.date().isoformat(), v) for d, v in seen if v["action"] in ("revert", "auto_revert")]
    assert [d for d, _ in reverts] == ["2026-06-05", "2026-07-04", "2026-07-31"], [(d, v["summary"]) for d, v in seen]
    # the third try's first check: reverted at once, on its own week and the 36 live days of the two before it
    day, v = reverts[-1]
    assert v["stats"]["days_after"] > 36 and v["stats"]["k_after"] > 50
    assert any("of an earlier try counted as after" in x for x in v["stats"]["not_counted"]), v["stats"]
    assert v["stats"]["levels"]["revert"] == 0.8  # a monitored rule's level: its evidence is not new
    why = run_kg(["why", f"- {RULE}", "--json", "--now", "2026-08-01T09:00"]).json
    assert any("of an earlier try counted as after" in x for x in why["explanation"]), why


def test_without_pooling_the_third_try_is_extended_on_its_own_week(ws):
    seen = _retried(ws, pool=False)
    third = [(d.date().isoformat(), v["action"]) for d, v in seen if d >= datetime(2026, 7, 24)]
    assert third == [("2026-07-31", "extend")], third


def test_a_rule_promoted_on_a_burst_is_judged_under_the_workspace_prior(ws, run_kg):
    """kg starts watching on May 1: six patterns recur once in ten days; `docker.perm` comes three times on the
    first morning (a burst: 6 a day over half a day) and once a week after its rule. With the prior fitted to
    the changes' baselines (one change: no prior) the burst is its rate before and the rule is confirmed at once;
    with the patterns' prior the rate before is shrunk toward theirs and the week decides nothing yet."""
    ws = _with_rules(ws, 'prior_source = "patterns"\n')
    with ws:
        for d in range(0, 16, 10):
            for p in range(6):
                ws.log("error", f"slow{p} went wrong", now=datetime(2026, 5, 1, 8) + d * D + p * D,
                       session=f"x{d}{p}", pattern_key=f"slow{p}", category="tool_gotcha")
        for h in (9, 10, 11):
            _log(ws, datetime(2026, 5, 1, h))
        assert [p["pattern_key"] for p in api.cycle(ws, now=datetime(2026, 5, 1, 12)).as_dict()["promoted"]] == [
            "docker.perm"]
        _log(ws, datetime(2026, 5, 5, 9))
    r = run_kg("verify --json --now 2026-05-08T12:00").json  # the first check, through the CLI
    (v,) = r["verified"]
    assert v["stats"]["prior"]["source"] == "patterns" and v["stats"]["prior"]["events"] > 0, v["stats"]
    assert (v["verdict"], v["action"]) == ("inconclusive", "extend"), v["summary"]
    assert "; prior " in v["summary"]  # the prior's numbers are in the verdict's text (kg why shows it)
