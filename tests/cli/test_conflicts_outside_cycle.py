"""Conflicts where a person meets them (QA4 #4, #5, #6, #7), through the real CLI on a real graph: the edge a
cycle adds is counted, recency is the evidence's and not the approval's, contradictions added between cycles are
decided by `kg conflicts` and `kg export memory` as a cycle decides them, and a rule a conflict keeps out of its
file is not reported as written."""

from tests.conftest import TEST_STORE

BASELINE_OFF = "[rules.lifecycle.verification]\nmin_baseline_days = 0\n"


def _log(run_kg, ws, rules):
    """Each (category, pattern key, action) logged once a day on three days, at the same hour."""
    (ws.root / "kg.toml").write_text(BASELINE_OFF, encoding="utf-8")
    for d in ("01", "02", "03"):
        for category, key, action in rules:
            r = run_kg(["log", "learning", f"learned: {action}", "--category", category, "--pattern-key", key,
                        "--action", action, "--session", f"s{d}", "--now", f"2026-09-{d}T10:00"])
            assert r.exit_code == 0, r.stderr


def test_a_tie_the_cycle_finds_is_counted_told_and_not_called_written(run_kg, ws):
    _log(run_kg, ws, [("principle", "a.pnpm", "always use pnpm in this repository"),
                      ("principle", "b.nopnpm", "never use pnpm in CI scripts")])
    cycle = run_kg(["cycle", "--now", "2026-09-04T08:00"])
    assert cycle.exit_code == 0, cycle.stderr
    assert not (ws.root / "MEMORY.md").exists()  # the tie holds both back
    # (#6) "promoted 'a.pnpm' to MEMORY.md" for both sides, and MEMORY.md never made
    assert "✅ promoted" not in cycle.stdout, cycle.stdout
    assert cycle.stdout.count("not written to MEMORY.md: it ties dec-") == 2, cycle.stdout
    assert "set aside by a conflict since" not in cycle.stdout  # (said once, on the promotion's line)
    # (#4) the contradicts edge the cycle added is in the counts `kg status` shows, and doctor finds them exact
    edges = run_kg(["status", "--json"]).json["edges"]
    assert edges.get("contradicts") == 1, edges
    doctor = run_kg(["doctor", "--dry-run"]).stdout
    assert "differ" not in doctor, doctor
    if TEST_STORE != "falkordb":  # the kept aggregates doctor recomputes are the embedded store's
        assert "equals a full recomputation" in doctor, doctor
    # (#6) no advice to put back what kg itself took out
    status = run_kg(["status", "--now", "2026-09-04T09:00"]).stdout
    assert "Rules set aside by a conflict" in status and "put it back" not in status, status


def test_approval_timing_does_not_pick_the_winner_and_a_reinforcement_counts(run_kg, ws):
    # seen together on the same three days: one rule promoted by the cycle, the other approved an hour later
    _log(run_kg, ws, [("correction", "pkg.pnpm", "always use pnpm in this repository"),
                      ("principle", "ci.nopnpm", "never use pnpm in CI scripts")])
    first = run_kg(["cycle", "--now", "2026-09-04T08:00", "--json"]).json
    assert [p["pattern_key"] for p in first["promoted"]] == ["ci.nopnpm"], first["promoted"]
    (number,) = [q["number"] for q in first["proposed"] if "always use pnpm" in q["text"]]
    approved = run_kg(["approve", str(number), "--now", "2026-09-04T09:00"])
    # decided as it is approved, and said: a tie, neither written (the auto-promoted one taken out of MEMORY.md)
    assert approved.exit_code == 0 and "not written to SOUL.md: it ties dec-" in approved.stdout, approved.stdout
    for day in ("2026-09-05T08:00", "2026-10-04T08:00"):  # a day later the approved one won 90 to 89
        assert run_kg(["cycle", "--now", day]).exit_code == 0
        (d,) = run_kg(["conflicts", "--json", "--now", day]).json
        assert (d["status"], d["winner"]) == ("tie", "") and d["score_a"] == d["score_b"], (day, d)
    # a person's `kg reinforce` is a sighting: that rule is the more recent now
    never = first["promoted"][0]["node"]
    assert run_kg(["reinforce", never, "--now", "2026-10-20T08:00"]).exit_code == 0
    run_kg(["cycle", "--now", "2026-10-21T08:00"])
    (d,) = run_kg(["conflicts", "--json", "--now", "2026-10-21T08:00"]).json
    assert (d["status"], d["winner"]) == ("settled", never), d


def test_principles_added_between_cycles_are_decided_where_a_person_meets_them(run_kg, ws):
    old = run_kg(["node", "add", "principle", "always use yarn for frontend installs", "--now", "2026-10-01T09:00",
                  "--json"]).json["id"]
    new = run_kg(["node", "add", "principle", "never use yarn for frontend installs", "--now", "2026-11-20T09:00",
                  "--json"]).json["id"]
    # (#7) `kg conflicts` said none and `kg export memory` rendered both, until a cycle ran
    (d,) = run_kg(["conflicts", "--json", "--now", "2026-11-20T10:00"]).json
    assert (d["status"], d["winner"]) == ("settled", new) and {d["a"], d["b"]} == {old, new}, d
    assert run_kg(["export", "memory", "--now", "2026-11-20T10:00"]).exit_code == 0
    memory = (ws.root / "MEMORY.md").read_text(encoding="utf-8")
    assert "never use yarn" in memory and "always use yarn" not in memory, memory
    # one place decides: the cycle at that time finds the same decision and changes nothing
    again = run_kg(["cycle", "--now", "2026-11-20T10:00", "--json"]).json
    assert again["conflicts"] == [] and again["changed"] is False, again
    assert (ws.root / "MEMORY.md").read_text(encoding="utf-8") == memory


def test_export_memory_alone_settles_and_its_dry_run_records_nothing(run_kg, ws):
    for text in ("always squash commits before merging", "never squash commits before merging"):
        run_kg(["node", "add", "principle", text, "--now", "2026-11-20T09:00"])
    dry = run_kg(["export", "memory", "--dry-run", "--now", "2026-11-20T10:00", "--json"]).json
    assert all("squash" not in line for b in dry["blocks"] for line in b["lines"]), dry  # a tie: neither
    assert not (ws.root / "MEMORY.md").exists()
    assert _tied(run_kg) == []  # (`kg status` reads, never settles)
    assert run_kg(["export", "memory", "--now", "2026-11-20T10:00"]).exit_code == 0
    assert "squash" not in ((ws.root / "MEMORY.md").read_text(encoding="utf-8")
                            if (ws.root / "MEMORY.md").exists() else "")
    assert len(_tied(run_kg)) == 1


def _tied(run_kg):
    return run_kg(["status", "--json", "--now", "2026-11-20T11:00"]).json["lifecycle"]["conflicts_tied"]
