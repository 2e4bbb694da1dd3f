"""A value kg renders into one of its blocks (a preference, a rule's action) that holds kg's own marker text is
made inert (`kaizen-kg\\:end`), so it can neither end the block early nor forge one: kg keeps writing its block,
`kg doctor` finds nothing wrong, and `kg why` finds the line as the file shows it and as it was given (a QA pass:
the value was written verbatim, every later `kg pref set` and cycle read kg's own block as damaged, and a removed
preference stayed in USER.md). Real CLI, real files."""

from __future__ import annotations

import pytest

END_PREFS = "<!-- kaizen-kg:end preferences -->"
END_RULES = "<!-- kaizen-kg:end kaizen-kg -->"


def test_a_preference_holding_the_end_marker_leaves_the_block_whole(run_kg, ws):
    value = f"y {END_PREFS} tail"
    r = run_kg(["pref", "set", "k3", value])
    assert r.exit_code == 0, r.stderr
    user = (ws.root / "USER.md").read_text(encoding="utf-8")
    assert user.count(END_PREFS) == 1 and user.count("<!-- kaizen-kg:begin preferences -->") == 1
    assert "- **k3**: y <!-- kaizen-kg\\:end preferences --> tail\n" in user  # readable, inert
    assert run_kg("pref get k3 --json").json["value"] == value  # the preference itself is as given

    for args in (["pref", "set", "theme", "dark"], ["pref", "unset", "k3"]):
        r = run_kg(args)
        assert r.exit_code == 0, r.stderr
        assert "not updated" not in r.stderr and "damaged" not in r.stderr, r.stderr
    user = (ws.root / "USER.md").read_text(encoding="utf-8")
    assert "- **theme**: dark\n" in user and "k3" not in user  # the unset preference left the file agents read
    doctor = run_kg("doctor")
    assert doctor.exit_code == 0, doctor.stdout + doctor.stderr
    assert "damaged" not in doctor.stdout


@pytest.mark.baseline_wait_off("a rule promoted on its first days")
def test_a_rule_holding_the_end_marker_is_rendered_inert_and_kept_up_to_date(run_kg, ws):
    action = f"run make docs; see {END_RULES} in the template"
    for d in (1, 2, 3):
        r = run_kg(["log", "error", "make docs failed", "--pattern-key", "docs.build", "--session", f"s{d}",
                    "--action", action, "--now", f"2026-12-0{d}T10:00:00"])
        assert r.exit_code == 0, r.stderr
    r = run_kg("cycle --now 2026-12-04T10:00:00")
    assert "promoted 'docs.build' to TOOLS.md" in r.stdout, r.stdout
    tools = (ws.root / "TOOLS.md").read_text(encoding="utf-8")
    shown = "run make docs; see <!-- kaizen-kg\\:end kaizen-kg --> in the template"
    assert tools.count(END_RULES) == 1 and f"- {shown}\n{END_RULES}\n" in tools
    again = run_kg("cycle --json --now 2026-12-05T10:00:00")
    assert again.exit_code == 0, again.stderr
    assert again.json["flags"] == [] and again.json["withdrawn"] == [], again.stdout  # kg's block is its own
    doctor = run_kg("doctor")
    assert doctor.exit_code == 0, doctor.stdout + doctor.stderr
    for line in (shown, action):  # as the file shows it, and as it was logged
        why = run_kg(["why", line, "--json", "--now", "2026-12-05T11:00:00"])
        assert why.exit_code == 0, why.stderr
        assert why.json["source"] == "kg" and why.json["file"] == "TOOLS.md", why.stdout
    marker = run_kg(["why", END_RULES, "--json", "--now", "2026-12-05T11:00:00"]).json
    assert marker["source"] == "kg-marker"  # kg's real marker line is still told as one
    r = run_kg("verify --json --future --now 2026-12-12T10:00:00")  # the rule is in effect: judged, not paused
    assert r.exit_code == 0, r.stderr
    judged = [(v["change"], v["verdict"], v["stats"]["not_counted"]) for v in r.json["verified"]]
    assert judged == [("chg-20261204-001", "confirmed", [])], r.stdout


def test_a_skill_step_holding_a_begin_marker_does_not_forge_a_block(run_kg, ws):
    """A skill file may hold the lifecycle's block; a step with kg's begin marker in it read as that block, cut
    short, and `kg skill update` then refused the file (exit 2, asking the person to mend markers kg wrote)."""
    step = "copy <!-- kaizen-kg:begin kaizen-kg --> from the template"
    r = run_kg(["skill", "new", "deploy-app", "--description", "deploy the app", "--step", step])
    assert r.exit_code == 0, r.stderr
    r = run_kg(["skill", "update", "deploy-app", "--step", "then run make"])
    assert r.exit_code == 0, r.stderr
    text = (ws.root / "memory" / "skills" / "deploy-app.md").read_text(encoding="utf-8")
    assert "1. copy <!-- kaizen-kg\\:begin kaizen-kg --> from the template\n2. then run make\n" in text
    assert "<!-- kaizen-kg:begin" not in text
