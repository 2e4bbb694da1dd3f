"""A deliberate check (a switchback, kg/lifecycle/verify_check.py): a rule still undecided at its deadline is
taken out of its file for a stated period to measure the rate without it, and put back unless those days show
it did not help. It is visible in `kg cycle`, `kg status`, `kg verify --json` and `kg why`, the file comes back
byte for byte, a rule a person confirmed is never checked, and at most `check_max_out` rules are out at once."""

from __future__ import annotations

from datetime import date, datetime, timedelta

RULE = "Add the user to the docker group"
LINE = f"- {RULE}"
# the period as set (a rule that works going back early is tests/cli/test_lifecycle_check_early.py)
# min_baseline_days 0: these tests are about checks, not the wait for a baseline
CHECKS = ("[rules.lifecycle.verification]\ncheck_max_out = {n}\ncheck_days = 14\ncheck_back_level = 0\n"
          "min_baseline_days = 0\n")


def _log(run_kg, at: datetime, key: str = "docker.perm", rule: str = RULE) -> None:
    r = run_kg(f"log error '{key} permission denied on socket' --category tool_gotcha --pattern-key {key} "
               f"--session s{at:%m%d%H} --action '{rule}' --now {at.isoformat()}")
    assert r.exit_code == 0, r.stderr


def _undecided_until_the_deadline(run_kg, key: str = "docker.perm", rule: str = RULE) -> None:
    """Eight days at one a day, promoted on May 8, then one every two days: a ratio near 0.45 on a baseline of
    eight, not decisive at 95 % by the deadline (June 5, 21 days after the first check fell due)."""
    for d in range(8):
        _log(run_kg, datetime(2026, 5, 1, 10) + timedelta(days=d), key, rule)
    assert f"promoted '{key}'" in run_kg("cycle --now 2026-05-08T12:00").stdout
    for d in range(0, 28, 2):
        _log(run_kg, datetime(2026, 5, 8, 22) + timedelta(days=d), key, rule)


def _cycles(run_kg, first: date, last: date) -> list[dict]:
    out, day = [], first
    while day <= last:
        r = run_kg(f"cycle --json --now {day.isoformat()}T12:00")
        assert r.exit_code == 0, r.stderr
        out.append(r.json)
        day += timedelta(days=1)
    return out


def test_an_undecided_rule_is_checked_visibly_and_put_back_byte_for_byte(run_kg, ws):
    (ws.root / "kg.toml").write_text(CHECKS.format(n=1))
    tools = ws.root / "TOOLS.md"
    tools.write_bytes(b"# Tools\r\n\nA person's notes, kept as they are.\n")
    _undecided_until_the_deadline(run_kg)
    _cycles(run_kg, date(2026, 5, 9), date(2026, 6, 4))
    before = tools.read_bytes()
    assert LINE.encode() in before
    d = run_kg("cycle --json --now 2026-06-05T12:00").json
    (c,) = d["checks"]
    assert (c["action"], c["since"], c["until"]) == ("out", "2026-06-05T12:00:00", "2026-06-19T12:00:00")
    assert c["why"].startswith("undecided at its deadline (P(ratio < 0.8) = ")
    assert d["reverted"] == [] and LINE.encode() not in tools.read_bytes()
    assert tools.read_bytes().startswith(b"# Tools\r\n\nA person's notes, kept as they are.\n")
    (v,) = d["verified"]
    assert v["action"] == "check" and v["verdict"] == "inconclusive"
    # its line says what was decided and why (it said "confirmed: … the majority decides" and took the rule out)
    assert v["summary"].startswith("inconclusive, out for a check until 2026-06-19: undecided at its deadline (P("), v
    assert "; set aside: " in v["summary"]
    # the numbers behind it: the levels the posteriors were held to (the deadline's majority), no check end yet
    assert v["stats"]["levels"] == {"keep": 0.5, "revert": 0.5} and v["stats"]["check_end"] is None
    assert v["stats"]["p_cut"] < 0.95 and v["stats"]["p_not_enough"] < 0.95
    assert v["check"] == {"state": "out", "since": "2026-06-05T12:00:00", "until": "2026-06-19T12:00:00"}
    text = run_kg("cycle --now 2026-06-05T12:00").stdout  # idempotent: nothing more to do
    assert "nothing to do" in text, text
    status = run_kg("status --json --now 2026-06-06T09:00").json["lifecycle"]
    (o,) = status["checks_out"]
    assert (o["change"], o["since"], o["until"]) == (c["change"], "2026-06-05T12:00:00", "2026-06-19T12:00:00")
    assert "🔬 Checks" in run_kg("status --now 2026-06-06T09:00").stdout
    mon = run_kg("verify --json --now 2026-06-06T09:00").json["monitoring"]
    assert [m["check"]["until"] for m in mon] == ["2026-06-19T12:00:00"]
    why = run_kg(["why", LINE, "--json", "--now", "2026-06-06T09:00"]).json
    assert why["source"] == "kg-inactive"
    assert any("took it out for a check" in x and "until 2026-06-19" in x for x in why["explanation"]), why
    for d in range(14):  # without the rule it recurs once a day, more than with it
        _log(run_kg, datetime(2026, 6, 5, 14) + timedelta(days=d))
    _cycles(run_kg, date(2026, 6, 6), date(2026, 6, 18))
    assert LINE.encode() not in tools.read_bytes()
    d = run_kg("cycle --json --now 2026-06-19T12:00").json
    assert [(c["action"], c["since"]) for c in d["checks"]] == [("back", "2026-06-05T12:00:00")]
    (v,) = d["verified"]
    assert (v["verdict"], v["status"], v["check"]["state"]) == ("confirmed", "confirmed", "back")
    assert v["stats"]["checks"] == [["2026-06-05T12:00:00", "2026-06-19T12:00:00"]]
    end = v["stats"]["check_end"]  # what put it back: P(ratio > 0.6325) below its level
    assert (end["ratio"], end["level"]) == (0.6325, 0.5) and 0 <= end["p"] < 0.5, end
    assert f"P(ratio > 0.6325) = {end['p']:.3f} < 0.5: put back" in d["checks"][0]["why"]
    assert "14 in 14.0d out for a check counted as the rate without it" in v["summary"]
    assert tools.read_bytes() == before  # put back where it was, byte for byte
    why = run_kg(["why", LINE, "--json", "--now", "2026-06-19T13:00"]).json
    assert why["source"] == "kg" and any("back after its check" in x for x in why["explanation"]), why


def test_a_rule_a_person_confirmed_is_never_checked_and_at_most_n_are_out(run_kg, ws):
    (ws.root / "kg.toml").write_text(CHECKS.format(n=1))
    rules = {"docker.perm": RULE, "ssh.key": "Load the ssh key before git push",
             "npm.lock": "Run npm ci instead of npm install"}
    for key, rule in rules.items():
        _undecided_until_the_deadline(run_kg, key, rule)
    days = _cycles(run_kg, date(2026, 5, 9), date(2026, 6, 4))
    asked = [e for d in days for e in d["evidence_requested"]]
    first = next(e for e in asked if e["target"] == "TOOLS.md")
    mine = first["change"]
    assert run_kg(f"approve {first['proposal']} --now 2026-06-01T09:00").exit_code == 0  # a person says it works
    d = run_kg("cycle --json --now 2026-06-05T12:00").json
    out = [c["change"] for c in d["checks"] if c["action"] == "out"]
    assert len(out) == 1 and mine not in out, d["checks"]          # at most one out at once; never the person's
    by = {v["change"]: v for v in d["verified"]}
    assert mine not in by or by[mine]["action"] == "keep"
    held = [v for v in d["verified"] if v["change"] not in out and v["change"] != mine]
    assert held and all(v["action"] in ("keep", "auto_revert") for v in held)  # the rest: the deadline decides
