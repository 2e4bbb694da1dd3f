"""A pattern a person closed (`kg resolve KEY --status wont_fix`) is never promoted, not even by approving a
proposal that was pending when they closed it (rev6 #2): closing skips its pending proposals, with a reason naming
the close, and `kg approve` refuses one whose pattern is closed. Through the real CLI, on either backend."""

from __future__ import annotations

from tests.conftest import fresh_workspace, kg_runner

KEY = "ask.delete"


def _ok(r):
    assert r.exit_code == 0, r.stderr
    return r


def _proposed(run_kg) -> None:
    for d in ("01", "05", "10", "15", "20", "25"):
        _ok(run_kg(["log", "learning", f"Ask before deleting branches {d}", "--category", "correction",
                    "--pattern-key", KEY, "--session", f"c{d}", "--now", f"2026-10-{d}T10:00:00", "--wait"]))
    rep = _ok(run_kg("cycle --json --now 2026-10-26T09:00:00")).json
    assert [q["type"] for q in _ok(run_kg("propose --json")).json] == ["promotion"], rep


def test_closing_a_pattern_skips_its_pending_promotion_proposal(ws, run_kg):
    _proposed(run_kg)
    _ok(run_kg(f"resolve {KEY} --status wont_fix --now 2026-10-26T10:00:00"))
    assert _ok(run_kg("propose --json")).json == []
    _ok(run_kg("cycle --now 2026-10-27T09:00:00"))
    assert _ok(run_kg("propose --json")).json == []
    r = run_kg("approve 1 --now 2026-10-27T10:00:00")
    assert r.exit_code == 2 and "already skipped" in r.stderr, (r.exit_code, r.stderr)
    assert _ok(run_kg(f"patterns show {KEY} --json")).json["pattern"]["status"] == "wont_fix"
    soul = ws.root / "SOUL.md"
    assert not soul.exists() or "Ask before deleting" not in soul.read_text()


def test_a_proposal_whose_pattern_decay_expired_is_skipped_by_the_cycle(ws, run_kg):
    """A proposal still pending about a pattern decay expired while it waited stayed listed (the brief, `kg propose`)
    and `kg approve` refused it ("wont_fix (closed)"), nobody able to act on it (QA9 #1). The cycle that expires the
    pattern skips it, as a person's close does, saying why and how to reopen."""
    _proposed(run_kg)
    rep = _ok(run_kg("cycle --json --future --now 2027-02-01T09:00:00")).json  # 98 days unreinforced: expired
    assert rep["decayed"]["proposals_skipped"] == [1], rep["decayed"]
    assert _ok(run_kg(f"patterns show {KEY} --json")).json["pattern"]["status"] == "wont_fix"
    assert _ok(run_kg("propose --json")).json == []
    text = _ok(run_kg("cycle --dry-run --future --now 2027-02-01T09:00:00")).stdout
    assert "proposals skipped" not in text  # (once: the next cycle has nothing left to skip)
    r = run_kg("approve 1 --future --now 2027-02-01T10:00:00")
    assert (r.exit_code, r.stdout) == (2, ""), (r.exit_code, r.stdout, r.stderr)
    assert "proposal #1 is already skipped" in r.stderr, r.stderr
    brief = _ok(run_kg("hook session-start --json --now 2027-02-01T10:00:00")).json
    assert not brief["counts"].get("proposals"), brief["counts"]
    with ws.reading() as st:
        (q,) = [q for q in st.run("lc_proposals", statuses=["skipped"]) if q["number"] == 1]
    assert q["reason"].startswith(f"pattern '{KEY}' expired: not seen for 90 days (2027-02-01)"), q["reason"]
    assert f"`kg resolve {KEY} --status active` reopens it" in q["reason"], q["reason"]


def test_the_cycle_says_which_proposals_it_skipped(ws, run_kg):
    _proposed(run_kg)
    text = _ok(run_kg("cycle --future --now 2027-02-01T09:00:00")).stdout
    assert "🍂 proposals skipped, their patterns expired: #1" in text, text


def test_a_promotion_proposal_whose_pattern_an_approved_import_promoted_is_closed_by_the_cycle(ws, run_kg, tmp_path,
                                                                                                request):
    """rev6 #3: the import proposal approved first promotes the pattern; this workspace's own promotion proposal of
    it stayed pending for good (approving it: "promoted already; skip proposal #1"). The next cycle closes it as
    superseded, naming the change that promoted it, as it does an import proposal in the other order."""
    other = fresh_workspace(tmp_path / "other", request)
    run_o = kg_runner(other.root)
    for d in ("01", "05", "10", "15", "20", "25"):
        _ok(run_o(["log", "learning", f"Ask before deleting branches o{d}", "--category", "correction",
                   "--pattern-key", KEY, "--session", f"o{d}", "--now", f"2026-10-{d}T11:00:00", "--wait"]))
    _ok(run_o("cycle --now 2026-10-26T09:00:00"))
    _ok(run_o("approve 1 --now 2026-10-26T09:10:00"))
    trail = other.root / "theirs.json"
    _ok(run_o(["export", "trail", "--out", str(trail), "--now", "2026-10-26T10:00:00"]))
    _proposed(run_kg)  # this workspace's own #1
    _ok(run_kg(["import", "trail", str(trail), "--now", "2026-10-26T12:00:00"]))
    imports = [q["number"] for q in _ok(run_kg("propose --json")).json if q["type"] == "import"]
    assert len(imports) == 1, imports
    _ok(run_kg(f"approve {imports[0]} --now 2026-10-26T13:00:00"))
    assert _ok(run_kg(f"patterns show {KEY} --json")).json["pattern"]["status"] == "promoted"
    rep = _ok(run_kg("cycle --json --now 2026-10-27T09:00:00")).json
    assert [(q["number"], q["pattern_key"]) for q in rep["superseded"]] == [(1, KEY)], rep
    assert _ok(run_kg("propose --json")).json == []
    r = run_kg("approve 1 --now 2026-10-27T10:00:00")
    assert r.exit_code == 2 and "already superseded" in r.stderr, r.stderr
    status = _ok(run_kg("status --json --now 2026-10-27T10:00:00")).json["lifecycle"]
    assert [q["number"] for q in status["proposals_superseded"]] == [1], status
