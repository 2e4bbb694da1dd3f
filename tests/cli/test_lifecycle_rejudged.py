"""A confirmed rule is judged again on its whole history at every monitor look, and the posterior majority
decides (verification.monitor_error_rate 0.5 with boundary_ratio): a rule confirmed on a thin baseline is
reverted once later evidence turns, instead of staying confirmed while the 80 % level is out of reach. A bursty
day counts at most `max_per_day` (2) occurrences, so one unlucky week does not revert a rule that works.
Replayed through the real cycle with --now; the numbers behind each verdict are read from `kg verify --json`."""

from __future__ import annotations

from datetime import datetime, timedelta

RULE = "Add the user to the docker group"
LINE = f"- {RULE}"
D = timedelta(days=1)


def _log(run_kg, at: datetime) -> None:
    r = run_kg(f"log error 'docker.perm permission denied on socket' --category tool_gotcha "
               f"--pattern-key docker.perm --session s{at:%m%d%H} --action '{RULE}' --now {at.isoformat()}")
    assert r.exit_code == 0, r.stderr


def _cycles(run_kg, applied: datetime, *after: int) -> list[dict]:
    """The cycles on the days a check falls due (`after` days since the change): a daily cycle does nothing
    in between."""
    out = []
    for n in after:
        r = run_kg(f"cycle --json --now {(applied + n * D).isoformat()}")
        assert r.exit_code == 0, r.stderr
        out.append(r.json)
    return out


def _tools(ws) -> str:
    path = ws.root / "TOOLS.md"
    return path.read_text() if path.exists() else ""


def _promote(run_kg, n: int) -> datetime:
    """`n` occurrences a day apart from May 1, then the cycle that promotes the rule into TOOLS.md."""
    for d in range(n):
        _log(run_kg, datetime(2026, 5, 1, 10) + d * D)
    at = datetime(2026, 5, 1, 12) + (n - 1) * D
    assert "promoted 'docker.perm'" in run_kg(f"cycle --now {at.isoformat()}").stdout
    return at


def test_a_harmful_rule_confirmed_early_is_reverted_when_later_evidence_turns(run_kg, ws):
    applied = _promote(run_kg, 3)                    # promoted on a thin baseline: 3 in 2 days
    t = applied + 7.4 * D                            # a quiet first week (confirmed), then 1.6 a day
    while t < applied + 40 * D:
        _log(run_kg, t)
        t += D / 1.6
    (first,) = _cycles(run_kg, applied, 7)
    assert [(v["action"], v["verdict"]) for v in first["verified"]] == [("keep", "confirmed")]  # at 95 %
    assert LINE in _tools(ws)
    # the first monitor look, two weeks later, through `kg verify`: the numbers behind the revert
    ver = run_kg(f"verify --json --now {(applied + 21 * D).isoformat()}").json
    (v,) = ver["verified"]
    assert v["action"] == "revert" and v["verdict"] in ("ineffective", "made_worse"), v["summary"]
    assert v["status"] == "reverted" and ver["reverted"] and LINE not in _tools(ws)
    # the monitor's revert level is the majority: the posterior median is past boundary_ratio, while
    # P(ratio > 0.5) is short of the 80 % the former monitor asked for (it stayed confirmed there)
    s = v["stats"]
    assert s["levels"] == {"keep": 0.95, "revert": 0.5}, s
    assert v["ratio"] >= 0.6325 and 0.5 <= s["p_not_enough"] < 0.8, (v["ratio"], s)
    assert f"P(ratio > 0.5) = {s['p_not_enough']:.3f} ≥ 0.50" in v["summary"], v["summary"]


def test_an_effective_rule_with_one_unlucky_week_is_not_reverted(run_kg, ws):
    applied = _promote(run_kg, 8)                    # 8 in 8 days: about 1 a day before the rule
    for i in range(3):                               # the first week after: three bursty days of 3
        for j in range(3):
            _log(run_kg, applied + (1 + 2 * i) * D + (0.3 + 0.05 * j) * D)
    for d in range(12, 60, 5):                       # then once every 5 days: the rule cut the rate ~5×
        _log(run_kg, applied + d * D + 0.4 * D)
    days = _cycles(run_kg, applied, 7, 14, 21, 35)
    acts = [(v["action"], v["verdict"]) for d in days for v in d["verified"]]
    assert all(a == "keep" or a == "extend" for a, _ in acts), acts
    assert ("keep", "confirmed") in acts, acts
    assert LINE in _tools(ws)
    first = days[0]["verified"][0]                   # the first check, a week after: the burst counted 2 a day
    assert first["action"] == "extend" and first["verdict"] == "inconclusive", first
    assert "3 over 2/day" in first["summary"], first["summary"]
    ver = run_kg(f"verify --json --now {(applied + 49 * D).isoformat()}").json
    (v,) = ver["verified"]
    assert (v["action"], v["status"]) == ("keep", "confirmed") and v["ratio"] < 0.6325, v["summary"]
    assert v["stats"]["levels"]["revert"] == 0.5 and [m["status"] for m in ver["monitoring"]] == ["confirmed"]
