"""`kg patterns` and `kg patterns show` give the first reason the promotion gate holds a ready pattern, the one
`kg status` gives and a cycle acts on: a failure logged without what to do is held for that before its baseline
(`verification.min_baseline_days` 14, set in kg.toml here), so no "eligible from" is promised for it; and where
the baseline's days are set is said truly when a workspace's kg.toml sets them."""

from __future__ import annotations

KEY = "make.build.fail"
NOW = "2026-05-03T12:00:00"


def _logged(ws, run_kg, *action: str) -> None:
    with (ws.root / "kg.toml").open("a") as f:
        f.write("\n[rules.lifecycle.verification]\nmin_baseline_days = 14\n")
    for session, at in (("s1", "2026-05-01T09:40:00"), ("s1", "2026-05-01T10:40:00"), ("s2", "2026-05-02T11:40:00")):
        r = run_kg(["log", "error", "make build failed: exit status 2", "--area", "build", "--pattern-key", KEY,
                    "--tags", "tool-failure", *action, "--session", session, "--now", at, "--wait"])
        assert r.exit_code == 0, r.stderr


def test_a_failure_without_an_action_is_held_for_that_not_promised_a_day(ws, run_kg):
    _logged(ws, run_kg)
    (ready,) = [p for p in run_kg(f"status --json --now {NOW}").json["lifecycle"]["ready_to_promote"]
                if p["key"] == KEY]
    assert ready["waiting"].startswith("says what failed, not what to do") and ready["baseline"] is None
    (listed,) = [r["waits"] for r in run_kg(f"patterns --json --now {NOW}").json if r["key"] == KEY]
    assert listed["reason"] == ready["waiting"] and listed["eligible"] is None
    assert run_kg(f"patterns show {KEY} --json --now {NOW}").json["waits"]["reason"] == ready["waiting"]
    for argv in (f"patterns --now {NOW}", f"patterns show {KEY} --now {NOW}"):
        out = run_kg(argv).stdout
        assert "says what failed, not what to do" in out and "eligible from" not in out, out
    (held,) = run_kg("cycle --dry-run --json --now 2026-05-17T12:00:00").json["waiting"]
    assert held["reason"] == ready["waiting"]  # past the day the baseline would have promised


def test_the_baseline_wait_says_where_its_days_are_set(ws, run_kg):
    _logged(ws, run_kg, "--action", "Run make clean before make build")
    (listed,) = [r["waits"] for r in run_kg(f"patterns --json --now {NOW}").json if r["key"] == KEY]
    assert listed["by"] == "days" and listed["eligible"]
    out = run_kg(f"patterns --now {NOW}").stdout
    assert "eligible from" in out and "kg.toml" in out, out
