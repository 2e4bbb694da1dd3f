"""What the reads say of contradicting principles, through the real CLI on a real graph: `kg inject` leaves out
what `kg export memory` keeps out of MEMORY.md (a decision's loser, both sides of a tie), before any command
stored a decision and after; `kg status` lists a contradiction added since the last cycle as `kg conflicts` would
decide it, storing nothing; and `kg conflicts` / `kg export memory` refuse a --now far ahead of the clock as every
command that records lifecycle state does."""

import kg
from kg.memory.inject import inject

AT = "2026-11-20T10:00"
YARN = ("always use yarn for frontend installs", "never use yarn for frontend installs")  # settled: newer wins
SQUASH = ("always squash commits before merging", "never squash commits before merging")  # a tie: neither
MESSAGE = "yarn frontend installs, squash commits before merging, small pull requests"


def _add(run_kg, text, at):
    r = run_kg(["node", "add", "principle", text, "--now", at, "--json"])
    assert r.exit_code == 0, r.stderr
    return r.json["id"]


TEXTS = {"old": YARN[0], "new": YARN[1], "tie_a": SQUASH[0], "tie_b": SQUASH[1], "free": "prefer small pull requests"}


def _rules(run_kg):
    return {name: _add(run_kg, text, "2026-10-01T09:00" if name == "old" else "2026-11-20T09:00")
            for name, text in TEXTS.items()}


def _shown(run_kg):
    r = run_kg(["inject", "--message", MESSAGE, "--now", AT, "--json"])
    assert r.exit_code == 0, r.stderr
    return {i["ref"] for i in r.json["items"] if i["section"] == "principle"}


def _shown_held(root):
    """The same through the in-process cache a held workspace (the read server) answers from: twice, the second
    from what the first kept (a contradiction no decision covers is judged again at the second's time)."""
    with kg.open_workspace(root) as w:
        first, second = ({i["ref"] for i in inject(w, MESSAGE, now=at)["items"] if i["section"] == "principle"}
                         for at in (AT, "2026-11-20T11:00"))
    assert first == second
    return first


def test_inject_leaves_out_what_export_keeps_out_before_and_after_a_decision(run_kg, ws):
    ids = _rules(run_kg)
    want = {ids["new"], ids["free"]}  # the winner and the rule in no conflict; neither side of the tie
    # no decision stored yet: inject showed all five
    assert _shown(run_kg) == want
    assert _shown_held(ws.root) == want
    assert run_kg(["conflicts", "--json", "--now", AT]).exit_code == 0  # (decides and stores them)
    assert _shown(run_kg) == want
    assert _shown_held(ws.root) == want
    assert run_kg(["export", "memory", "--now", AT]).exit_code == 0
    memory = (ws.root / "MEMORY.md").read_text(encoding="utf-8")
    for rule, text in TEXTS.items():  # the two agree, rule by rule
        assert (text in memory) == (ids[rule] in want), (rule, memory)
    # a person's override: the loser of the tie's review is left out, its winner shown
    (tie,) = [d for d in run_kg(["conflicts", "--json", "--now", AT]).json if d["status"] == "tie"]
    assert run_kg(["conflicts", "resolve", tie["id"], "--winner", ids["tie_a"], "--now", AT]).exit_code == 0
    assert _shown(run_kg) == want | {ids["tie_a"]}
    assert _shown_held(ws.root) == want | {ids["tie_a"]}


def _outcomes(rows):
    return sorted((d["a"], d["b"], d["status"], d["winner"] or None) for d in rows)


def test_status_lists_the_contradictions_no_decision_covers_yet_and_stores_none(run_kg, ws):
    ids = _rules(run_kg)
    r = run_kg(["status", "--now", AT])
    assert r.exit_code == 0, r.stderr
    assert "Contradictions not decided yet" in r.stdout, r.stdout
    assert f"{ids['new']} would win (60 to 30), {ids['old']} left out" in r.stdout, r.stdout
    assert f"{ids['tie_a']} vs {ids['tie_b']}: a tie (60 each), for review" in r.stdout, r.stdout
    lc = run_kg(["status", "--json", "--now", AT]).json["lifecycle"]
    want = _outcomes([{"a": ids["old"], "b": ids["new"], "status": "settled", "winner": ids["new"]},
                      {"a": ids["tie_a"], "b": ids["tie_b"], "status": "tie", "winner": None}])
    assert _outcomes(lc["conflicts_undecided"]) == want and lc["conflicts_tied"] == [], lc
    with kg.open_workspace(ws.root).reading() as st:  # a read: nothing stored
        assert st.run("lc_decisions") == []
    # `kg conflicts` decides them as status said, and status then lists the tie it stored, nothing undecided
    assert _outcomes(run_kg(["conflicts", "--json", "--now", AT]).json) == want
    lc = run_kg(["status", "--json", "--now", AT]).json["lifecycle"]
    assert lc["conflicts_undecided"] == [] and [(t["a"], t["b"]) for t in lc["conflicts_tied"]] == \
        [(ids["tie_a"], ids["tie_b"])], lc
    assert "not decided yet" not in run_kg(["status", "--now", AT]).stdout


FUTURE = "2099-01-01T09:00"


def test_conflicts_and_export_memory_refuse_a_far_future_now_unless_told(run_kg, ws):
    ids = _rules(run_kg)
    refused = [run_kg(["conflicts", "--now", FUTURE]), run_kg(["conflicts", "--json"], env={"KG_NOW": FUTURE}),
               run_kg(["export", "memory", "--now", FUTURE])]
    for r in refused:
        assert r.exit_code == 2, (r.stdout, r.stderr)
        assert r.stderr.startswith(f"Error: --now {FUTURE.replace('T', ' ')} is ") and \
            "decided as of that day" in r.stderr and "add --future to run at that day on purpose" in r.stderr, r.stderr
    with kg.open_workspace(ws.root).reading() as st:  # refused before anything was decided or written
        assert st.run("lc_decisions") == []
    assert not (ws.root / "MEMORY.md").exists()
    dry = run_kg(["export", "memory", "--dry-run", "--now", FUTURE])  # a dry run records nothing: not refused
    assert dry.exit_code == 0 and not (ws.root / "MEMORY.md").exists(), dry.stderr
    # meant: decided as of that day, as a cycle with --future would
    decided = run_kg(["conflicts", "--future", "--json", "--now", FUTURE]).json
    assert len(decided) == 2 and {d["status"] for d in decided} == {"tie"}, decided  # (no recency left that day)
    (tie,) = [d for d in decided if d["a"] == ids["tie_a"]]
    override = ["conflicts", "resolve", tie["id"], "--winner", ids["tie_a"], "--now", FUTURE]
    assert run_kg(override).exit_code == 2
    assert run_kg([*override, "--future"]).exit_code == 0
    assert run_kg(["export", "memory", "--future", "--now", FUTURE]).exit_code == 0
    memory = (ws.root / "MEMORY.md").read_text(encoding="utf-8")
    assert TEXTS["tie_a"] in memory and TEXTS["tie_b"] not in memory, memory
