"""A pattern the decay expired comes back when it recurs (QA5 #1). Decay sets a pattern unreinforced for
`expire_days` to wont_fix; an expired node stayed expired for good, so a mistake that came back after 90 quiet
days was never promoted again (a workspace whose daily job did not run meanwhile promoted it). Now an expired
node of `[decay] revive_kinds` that recurs (`revive_recurrence` occurrences within `expire_days`) is active
again, said by the cycle, and the promotion rules decide as for a new pattern, with its history. Only decay's
expiry revives: a pattern a person set wont_fix (`kg resolve KEY --status wont_fix`), before or after decay expired
it, stays closed until the person reopens it (`--status active`). Through the real CLI, on either backend."""

from __future__ import annotations

KEY = "helm.locked"
NO_WAIT = "\n[rules.lifecycle.verification]\nmin_baseline_days = 0\n"


def _ok(r):
    assert r.exit_code == 0, r.stderr
    return r


def _log(run_kg, day: str, session: str) -> None:
    _ok(run_kg(["log", "error", "helm upgrade failed: release locked", "--pattern-key", KEY, "--action",
                "run helm rollback first", "--session", session, "--now", f"{day}T10:00:00", "--wait"]))


def _expired_then_back(ws, run_kg, extra: str = "", back: int = 3, then=None) -> tuple[dict, dict, str]:
    with (ws.root / "kg.toml").open("a") as f:
        f.write(NO_WAIT + extra)
    for d in ("01", "02", "03"):
        _log(run_kg, f"2026-07-{d}", f"j{d}")
    gone = _ok(run_kg("cycle --json --now 2026-10-15T11:00:00")).json  # 104 days unreinforced: expired
    assert gone["decayed"]["expired"] >= 1 and not gone["promoted"], gone
    assert _ok(run_kg(f"patterns show {KEY} --json")).json["pattern"]["status"] == "wont_fix"
    if then:
        then()
    for d in ("01", "02", "03")[:back]:
        _log(run_kg, f"2026-12-{d}", f"n{d}")
    said = _ok(run_kg("cycle --dry-run --now 2026-12-04T10:00:00")).stdout
    rep = _ok(run_kg("cycle --json --now 2026-12-04T10:00:00")).json
    return rep, _ok(run_kg(f"patterns show {KEY} --json")).json, said


def test_an_expired_pattern_that_recurs_is_promoted_like_a_new_one(ws, run_kg):
    rep, shown, said = _expired_then_back(ws, run_kg)
    pid = shown["pattern"]["id"]
    assert f"🌱 recurred after decay expired them, candidates again: {pid}" in said, said
    assert rep["decayed"]["revived"] == 1 and rep["decayed"]["ids"]["revived"] == [pid], rep["decayed"]
    assert [p["pattern_key"] for p in rep["promoted"]] == [KEY], rep
    assert "run helm rollback first" in (ws.root / "TOOLS.md").read_text()
    assert shown["pattern"]["status"] == "promoted"
    assert len(shown["members"]) == 6  # its history: July's three (expired, still wont_fix) and December's


def test_one_new_occurrence_makes_it_a_candidate_and_the_rules_decide_what_recurs(ws, run_kg):
    rep, shown, _ = _expired_then_back(ws, run_kg, back=1)
    assert rep["decayed"]["revived"] == 1 and not rep["promoted"], rep  # active again, not ready (1 in 30 days)
    assert shown["pattern"]["status"] == "active"
    again = _ok(run_kg("cycle --json --now 2026-12-04T10:00:00")).json  # a second run changes nothing
    assert again["decayed"]["revived"] == 0 and not again["changed"], again


def test_revive_kinds_empty_keeps_an_expired_pattern_expired(ws, run_kg):
    rep, shown, _ = _expired_then_back(ws, run_kg, extra="\n[rules.lifecycle.decay]\nrevive_kinds = []\n")
    assert rep["decayed"]["revived"] == 0 and not rep["promoted"], rep
    assert shown["pattern"]["status"] == "wont_fix"


def test_a_pattern_a_person_set_wont_fix_after_decay_expired_it_stays_closed_when_it_recurs(ws, run_kg):
    """A person's decision wins over decay: set wont_fix by hand after decay expired it (the status it already
    had), the pattern is the person's, not decay's, and its recurrence does not make it a candidate again."""
    def close() -> None:
        said = _ok(run_kg(f"resolve {KEY} --status wont_fix --json --now 2026-10-20T09:00:00")).json
        assert said["status"] == "wont_fix" and said["previous"] == "wont_fix", said

    rep, shown, said = _expired_then_back(ws, run_kg, then=close)
    assert rep["decayed"]["revived"] == 0 and not rep["promoted"], rep
    assert "recurred after decay expired them" not in said, said
    assert shown["pattern"]["status"] == "wont_fix" and shown["revive_next"] is False
    tools = ws.root / "TOOLS.md"
    assert not tools.exists() or "run helm rollback first" not in tools.read_text()


def test_a_pattern_a_person_closed_before_decay_stays_closed_and_reopens_only_by_hand(ws, run_kg):
    with (ws.root / "kg.toml").open("a") as f:
        f.write(NO_WAIT)
    for d in ("01", "02"):
        _log(run_kg, f"2026-07-{d}", f"j{d}")
    _ok(run_kg(f"resolve {KEY} --status wont_fix --now 2026-07-02T12:00:00"))
    _ok(run_kg("cycle --json --now 2026-10-15T11:00:00"))  # its events expire; the closed pattern is not decay's
    for d in ("01", "02", "03"):
        _log(run_kg, f"2026-12-{d}", f"n{d}")
    rep = _ok(run_kg("cycle --json --now 2026-12-04T10:00:00")).json
    assert rep["decayed"]["revived"] == 0 and not rep["promoted"], rep
    assert _ok(run_kg(f"patterns show {KEY} --json")).json["pattern"]["status"] == "wont_fix"
    bad = run_kg(f"resolve {KEY} --status resolved")
    assert bad.exit_code == 2 and "use one of active, wont_fix" in bad.stderr, bad.stderr
    _ok(run_kg(f"resolve {KEY} --status active --now 2026-12-04T11:00:00"))  # the person reopens it
    again = _ok(run_kg("cycle --json --now 2026-12-04T12:00:00")).json
    assert [p["pattern_key"] for p in again["promoted"]] == [KEY], again


def test_between_its_recurrence_and_the_next_cycle_status_and_patterns_say_it_comes_back(ws, run_kg):
    """Until the cycle revives it, the pattern still reads expired (wont_fix): `kg status`, `kg patterns` and
    `kg patterns show` say the next cycle makes it a candidate again; once it has, they say nothing more."""
    note = "decay expired it and it recurred since: a candidate again at the next `kg cycle`"
    with (ws.root / "kg.toml").open("a") as f:
        f.write(NO_WAIT)
    for d in ("01", "02", "03"):
        _log(run_kg, f"2026-07-{d}", f"j{d}")
    _ok(run_kg("cycle --now 2026-10-15T11:00:00"))
    quiet = _ok(run_kg("status --json --now 2026-10-16T10:00:00")).json  # expired, not back: nothing said
    assert quiet["revive_next"] == [], quiet["revive_next"]
    _log(run_kg, "2026-12-01", "n01")
    at = "--now 2026-12-01T11:00:00"
    pid = _ok(run_kg(f"patterns show {KEY} --json {at}")).json["pattern"]["id"]
    status = _ok(run_kg(f"status --json {at}")).json
    assert status["revive_next"] == [pid], status
    assert f"{KEY}: 4x, 4 session(s), last 2026-12-01 (🌱 {note})" in _ok(run_kg(f"status {at}")).stdout
    [row] = _ok(run_kg(f"patterns --json {at}")).json
    assert row["status"] == "wont_fix" and row["revive_next"] is True, row
    assert f"🌱 {KEY}: {note}" in _ok(run_kg(f"patterns {at}")).stdout
    assert f"🌱 wont_fix: {note}" in _ok(run_kg(f"patterns show {KEY} {at}")).stdout
    _ok(run_kg("cycle --now 2026-12-01T12:00:00"))
    after = "--now 2026-12-01T13:00:00"
    assert _ok(run_kg(f"status --json {after}")).json["revive_next"] == []
    assert "🌱" not in _ok(run_kg(f"patterns {after}")).stdout + _ok(run_kg(f"patterns show {KEY} {after}")).stdout


def test_a_person_reopening_an_expired_pattern_clears_decays_mark_and_restores_its_priority(ws, run_kg):
    """rev6 #1: `kg resolve KEY --status active` on a pattern decay expired left stage 3 and the demoted priority,
    so decay never aged it again and a recurrence never restored it. A reopen is a reinforcement by a person:
    stage 0, priority back to its base, aged from the reopen (unseen `expire_days` after it: expired again)."""
    with (ws.root / "kg.toml").open("a") as f:
        f.write(NO_WAIT)
    for d in ("01", "02"):
        _log(run_kg, f"2026-07-{d}", f"j{d}")
    _ok(run_kg("cycle --json --now 2026-10-15T11:00:00"))  # 105 days unreinforced: decay expires it
    pid = _ok(run_kg(f"patterns show {KEY} --json")).json["pattern"]["id"]
    before = _node(run_kg, pid)
    assert before["status"] == "wont_fix" and before["decay_stage"] == 3, before
    assert before["priority"] != before["base_priority"], before
    said = _ok(run_kg(f"resolve {KEY} --status active --json --now 2026-10-16T09:00:00")).json
    assert said["status"] == "active" and said["previous"] == "wont_fix", said
    shown = _node(run_kg, pid)
    assert shown["status"] == "active" and shown["decay_stage"] == 0, shown
    assert shown["priority"] == before["base_priority"] and not shown.get("stale"), shown
    _ok(run_kg("cycle --json --now 2026-10-17T09:00:00"))  # a day after the reopen: not expired again at once
    assert _node(run_kg, pid)["status"] == "active"
    gone = _ok(run_kg("cycle --json --future --now 2027-01-20T09:00:00")).json  # 96 days unseen after it
    assert gone["decayed"]["expired"] >= 1, gone
    again = _node(run_kg, pid)
    assert again["status"] == "wont_fix" and again["decay_stage"] == 3, again


def _node(run_kg, node_id: str) -> dict:
    shown = _ok(run_kg(f"show {node_id} --json")).json
    return shown.get("node", shown)
