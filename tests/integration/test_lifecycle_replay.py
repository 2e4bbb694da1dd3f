"""Replay 120 days of history with an explicit `now`, one `kg cycle` a day, and check that every lifecycle
transition happens on the right day: promotion, verification (confirmed, ineffective, made worse,
inconclusive), the overdue clock and auto-revert, decay stages, conflicts, proposals, skip, idempotency."""

from __future__ import annotations

import re
from datetime import datetime, timedelta

import pytest

from kg.lifecycle import api
from tests.conftest import baseline_wait_off

T0 = datetime(2026, 1, 1)
DAYS = 120


def at(day: int, hour: int = 9) -> datetime:
    return T0 + timedelta(days=day, hours=hour)


CYCLE_HOUR = 20

TOOLS_HUMAN = "# Tools\n\nLocal notes about tools, written by a person.\n"
MEMORY_HUMAN = "# Memory\n\nThings I want to remember.\n\n## Self-Improvement Principles\n\nHand-written principle.\n"


def schedule() -> dict[int, list[tuple]]:
    """(kind, summary, fields) per day, logged at 09:00 (a few at other hours)."""
    ev: dict[int, list[tuple]] = {}

    def add(day, kind, summary, **f):
        ev.setdefault(day, []).append((kind, summary, f))

    a = {"area": "tooling", "pattern_key": "git.push.auth", "action": "Use SSH remotes for git push"}
    b = {"area": "tooling", "pattern_key": "pip.numpy", "action": "Pin numpy below 2 in CI"}
    c = {"category": "principle", "pattern_key": "answers.long", "action": "Answer in at most five sentences"}
    d = {"area": "backend", "category": "insight", "pattern_key": "migrations.order",
             "action": "Run database migrations before deploying the API"}
    s = {"category": "insight", "tags": ["procedure"], "pattern_key": "deploy.rollback",
             "action": "Roll back with the previous image tag, then page the on-call"}
    for i in range(21):                      # A, B, C: daily in one long session (one session does not
        s_ = "s0" if i < 20 else "s1"         # promote), then in a second: promoted on day 20, with a
        add(i, "error", "git push failed: authentication required", session=s_, **a)   # 20-day baseline
        add(i, "error", "numpy 2 broke the CI build", session=s_, **b)
        add(i, "learning", "answer was far too long", session=s_, **c)
    for i in range(21, 28):                  # A stops; B keeps its rate: ineffective; C doubles: made worse
        add(i, "error", "numpy 2 broke the CI build", session=f"s{i}", **b)
        if i in (23, 26):                    # (7 in 7 days against 21 in 21 is not decisive at 95 % once the
            add(i, "error", "numpy 2 broke the CI build", session=f"s{i}", **b)  # trigger counts: 9 is)
        add(i, "learning", "answer was far too long", session=f"s{i}", **c)
        add(i, "learning", "answer was far too long", session=f"s{i}", **c)
    for i in (10, 11, 12):                   # D: AGENTS.md, proposed on day 12, approved on day 13
        add(i, "learning", "API deployed before its migration ran", session=f"d{i}", **d)
    for i in (15, 18, 22, 25, 29, 32, 36, 39):   # D at ~0.64x: inconclusive until auto-revert on day 41
        add(i, "learning", "API deployed before its migration ran", session=f"d{i}", **d)
    for i in (20, 21, 22, 25):               # S: a procedure: asks; skipped day 23; back on day 25
        add(i, "learning", "rollback took an hour", session=f"r{i}", **s)
    add(0, "error", "flaky network once", session="x0", area="infra")          # decays 30/60/90
    add(0, "error", "pinned: the VPN drops at midnight", session="x0", area="infra")
    add(0, "error", "reinforced: staging DNS is slow", session="x0", area="infra")
    return ev


@pytest.fixture(scope="module")
def replay(tmp_path_factory):
    import kg

    ws = kg.init_workspace(tmp_path_factory.mktemp("replay") / "ws")
    # the replay's own schedule (promotions from day 12, a 20-day baseline for A, B and C) is about each
    # transition's day, not the wait for a baseline (tests/cli/test_lifecycle_baseline_wait.py)
    baseline_wait_off(ws.root)
    ws = kg.open_workspace(ws.root)
    (ws.root / "TOOLS.md").write_text(TOOLS_HUMAN)
    (ws.root / "MEMORY.md").write_text(MEMORY_HUMAN)
    events = schedule()
    ids: dict[str, str] = {}
    reports: dict[int, dict] = {}
    seconds: dict[int, dict] = {}
    snapshots: dict[int, dict[str, bytes]] = {}
    with ws:  # hold the graph for the whole replay (every call below reuses it)
        _replay(ws, events, ids, reports, seconds, snapshots)
    return ws, ids, reports, seconds, snapshots


def _replay(ws, events, ids, reports, seconds, snapshots):
    for day in range(DAYS):
        for kind, summary, f in events.get(day, []):
            f = dict(f)
            session = f.pop("session")
            r = ws.log(kind, summary, now=at(day), session=session, **f)
            ids.setdefault(summary, r.id)
        if day == 13:
            number = next(q["number"] for q in api.propose(ws) if q["target"] == "AGENTS.md")
            api.approve(ws, number, now=at(13, 12))
        if day == 23:
            number = next(q["number"] for q in api.propose(ws) if q["target"].startswith("memory/skills/"))
            api.skip(ws, number, "not now", now=at(23, 12))
        if day == 26:
            number = next(q["number"] for q in api.propose(ws) if q["target"].startswith("memory/skills/"))
            api.approve(ws, number, now=at(26, 12))
        if day == 1:
            api.pin(ws, ids["pinned: the VPN drops at midnight"], now=at(1))
        if day == 50:
            api.reinforce(ws, ids["reinforced: staging DNS is slow"], now=at(50))
            ids["concise"] = ws.node_add("principle", "Keep answers concise", now=at(50))["id"]
            ids["verbose"] = ws.node_add("principle", "Keep answers verbose with examples", now=at(50))["id"]
        if day == 52:
            dec = next(d for d in api.conflicts(ws) if {d["a"], d["b"]} == {ids["concise"], ids["verbose"]})
            api.resolve_conflict(ws, dec["id"], ids["concise"], now=at(52))
        if day == 60:
            ids["headless"] = ws.node_add("principle", "Run the browser headless in CI", now=at(60))["id"]
        if day == 61:
            ids["gui"] = ws.node_add("principle", "Use the GUI to debug the browser", now=at(61))["id"]
        reports[day] = api.cycle(ws, now=at(day, CYCLE_HOUR)).as_dict()
        before = {p: (ws.root / p).read_bytes() for p in ("TOOLS.md", "MEMORY.md") if (ws.root / p).exists()}
        seconds[day] = api.cycle(ws, now=at(day, CYCLE_HOUR)).as_dict()
        snapshots[day] = before
        assert {p: (ws.root / p).read_bytes() for p in before} == before


def _days(reports, key, pred=lambda x: True):
    return sorted(((d, x) for d, r in reports.items() for x in r[key] if pred(x)), key=lambda t: t[0])


def test_second_cycle_with_the_same_now_changes_nothing(replay):
    _, _, _, seconds, _ = replay
    assert {d: r for d, r in seconds.items() if r["changed"]} == {}


def test_promotions_happen_on_the_right_day(replay):
    _, _, reports, _, _ = replay
    got = [(d, p["pattern_key"], p["target"], p["mode"]) for d, p in _days(reports, "promoted")]
    assert got == [
        (20, "git.push.auth", "TOOLS.md", "auto"),
        (20, "pip.numpy", "TOOLS.md", "auto"),
        (20, "answers.long", "MEMORY.md", "auto"),
    ]
    proposed = [(d, p["type"], p.get("pattern_key"), p["target"]) for d, p in _days(reports, "proposed")]
    assert (12, "promotion", "migrations.order", "AGENTS.md") in proposed
    assert (22, "promotion", "deploy.rollback", "memory/skills/deploy-rollback.md") in proposed
    # skipped on day 23: not proposed again until the pattern recurred (day 25)
    assert [d for d, t, k, _ in proposed if k == "deploy.rollback"] == [22, 25]


def test_verification_verdicts_on_the_right_day(replay):
    _, _, reports, _, _ = replay
    got = [(d, v["pattern_key"], v["verdict"], v["action"], v["overdue"]) for d, v in _days(reports, "verified")]
    assert got == [
        (20, "migrations.order", "inconclusive", "extend", "none"),      # a 3-day burst is no baseline
        (27, "migrations.order", "inconclusive", "extend", "remind"),
        (27, "git.push.auth", "confirmed", "keep", "none"),               # 20-day baseline, then nothing
        (27, "pip.numpy", "ineffective", "revert", "none"),
        (27, "answers.long", "made_worse", "revert", "none"),
        (33, "deploy.rollback", "inconclusive", "extend", "none"),        # the skill approved on day 26
        (34, "migrations.order", "inconclusive", "extend", "request_evidence"),
        # 14 days after approval the skill is confirmed: its baseline counts the trigger and the pooled prior
        # lends it 3 occurrences (it waited one more week while the trigger was left out and the prior lent 1.5)
        (40, "deploy.rollback", "confirmed", "keep", "none"),
        # the deadline, still undecided at 95 %: out of AGENTS.md for a 14-day check (verification.check_*)
        (41, "migrations.order", "inconclusive", "check", "none"),
        (41, "git.push.auth", "confirmed", "keep", "none"),               # every 14 days from here on
        (54, "deploy.rollback", "confirmed", "keep", "none"),
        (55, "migrations.order", "ineffective", "revert", "none"),        # its days out showed it did not help
        (55, "git.push.auth", "confirmed", "keep", "none"),
        (68, "deploy.rollback", "confirmed", "keep", "none"),
        (69, "git.push.auth", "confirmed", "keep", "none"),
        (82, "deploy.rollback", "confirmed", "keep", "none"),
        (83, "git.push.auth", "confirmed", "keep", "none"),
        (96, "deploy.rollback", "confirmed", "keep", "none"),
        (97, "git.push.auth", "confirmed", "keep", "none"),
        (110, "deploy.rollback", "confirmed", "keep", "none"),
        (111, "git.push.auth", "confirmed", "keep", "none"),
    ]
    reverted = [(d, r["pattern_key"], r["status"]) for d, r in _days(reports, "reverted")]
    assert reverted == [(27, "pip.numpy", "reverted"), (27, "answers.long", "reverted"),
                        (55, "migrations.order", "reverted")]
    checks = [(d, c["pattern_key"], c["action"], c["until"][:10]) for d, c in _days(reports, "checks")]
    assert checks == [(41, "migrations.order", "out", reports[55]["now"][:10]),
                      (55, "migrations.order", "left out", reports[55]["now"][:10])]
    assert [d for d, _ in _days(reports, "reminders")] == [27]
    assert [d for d, _ in _days(reports, "evidence_requested")] == [34]


def test_verdicts_carry_their_numbers(replay):
    _, _, reports, _, _ = replay
    v = {x["pattern_key"]: x for x in reports[27]["verified"]}
    assert (v["pip.numpy"]["before"], v["pip.numpy"]["after"]) == (21, 9)
    assert v["answers.long"]["after"] == 14 and v["answers.long"]["ratio"] >= 1.25
    assert "before 21 (" in v["git.push.auth"]["summary"] and "95% interval" in v["git.push.auth"]["summary"]
    worse = v["answers.long"]     # made worse: the label's number, P(ratio > 1), is shown with its threshold
    p_up = worse["stats"]["p_up"]
    assert p_up >= 0.95 and f"P(ratio > 1) = {p_up:.3f} ≥ 0.95" in worse["summary"]
    st = v["pip.numpy"]["stats"]
    # the trigger counts: kg watched from the workspace's first event
    assert st["p_not_enough"] >= 0.95 and st["not_counted"] == [] and st["days_after"] == 7.0
    deadline = next(x for x in reports[41]["verified"] if x["pattern_key"] == "migrations.order")
    assert deadline["stats"]["deadline"] is True and "the majority decides" in deadline["summary"]
    assert deadline["action"] == "check" and deadline["check"]["state"] == "out"   # a check, not the majority
    ended = next(x for x in reports[55]["verified"] if x["pattern_key"] == "migrations.order")
    assert ended["check"]["state"] == "left out"
    assert "out for a check counted as the rate without it" in ended["summary"]


def test_made_worse_raises_a_critical_item_and_a_critical_fix(replay):
    ws, _, reports, _, _ = replay
    logged = reports[27]["logged"]
    assert [(x["kind"], x["priority"]) for x in logged] == [("learning", "medium"), ("error", "critical")]
    critical_id = logged[1]["id"]
    node = ws.show(critical_id)["node"]       # by day 119 it has decayed; decay kept what it was
    assert (node["entry_type"], node["base_priority"]) == ("error", "critical")
    assert "made things worse" in node["text"]
    ratio = re.search(r"made_worse: ratio (\d+\.\d+)×", node["details"])
    assert ratio and float(ratio.group(1)) >= 1.25  # the verdict's own number, as `kg verify` shows it
    fixes = [p for p in reports[27]["proposed"] if p["type"] == "critical_fix"]
    assert [p["entry"] for p in fixes] == [critical_id]


def test_decay_stages_on_the_right_day(replay):
    _, ids, reports, _, _ = replay
    plain = ids["flaky network once"]
    stages = {name: [d for d, r in reports.items() if plain in r["decayed"]["ids"].get(name, [])]
              for name in ("demoted", "stale", "expired", "restored")}
    assert stages == {"demoted": [30], "stale": [60], "expired": [90], "restored": []}
    pinned = ids["pinned: the VPN drops at midnight"]
    assert not any(pinned in ids_ for r in reports.values() for ids_ in r["decayed"]["ids"].values())
    reinforced = ids["reinforced: staging DNS is slow"]
    got = [(d, name) for d, r in sorted(reports.items()) for name, ids_ in r["decayed"]["ids"].items()
           if reinforced in ids_]
    assert got == [(30, "demoted"), (80, "demoted"), (110, "stale")]


def test_decay_end_state(replay):
    ws, ids, _, _, _ = replay
    plain = ws.show(ids["flaky network once"])["node"]
    assert (plain["status"], plain["priority"], plain["stale"]) == ("wont_fix", "low", True)
    pinned = ws.show(ids["pinned: the VPN drops at midnight"])["node"]
    assert (pinned["status"], pinned["priority"], pinned["stale"]) == ("pending", "high", False)
    again = ws.show(ids["reinforced: staging DNS is slow"])["node"]
    assert (again["status"], again["priority"], again["stale"]) == ("pending", "low", True)


def test_conflicts(replay):
    ws, ids, reports, _, snapshots = replay
    first = [c for c in reports[50]["conflicts"]]
    assert len(first) == 1 and first[0]["winner"] == "" and first[0]["status"] == "tie"
    # a tie with no winner holds both back until a human picks one (day 52)
    assert b"concise" not in snapshots[50]["MEMORY.md"] and b"verbose" not in snapshots[50]["MEMORY.md"]
    assert b"Keep answers concise" in snapshots[52]["MEMORY.md"]
    browser = [(d, c["status"], c["winner"]) for d, c in _days(reports, "conflicts") if ids["gui"] in (c["a"], c["b"])]
    # the newer rule wins by recency on day 61; on day 91 recency is spent and the scores tie: the incumbent
    # stays rendered and the tie is listed for review
    assert browser == [(61, "settled", ids["gui"]), (91, "tie", ids["gui"])]
    memory = (ws.root / "MEMORY.md").read_text()
    assert "Keep answers concise" in memory and "verbose" not in memory
    browser = [c for c in reports[61]["conflicts"] if ids["gui"] in (c["a"], c["b"])]
    assert browser and browser[0]["winner"] == ids["gui"]
    decisions = {frozenset((d["a"], d["b"])): d for d in api.conflicts(ws)}
    assert decisions[frozenset((ids["concise"], ids["verbose"]))]["override"] is True


def test_memory_and_tools_files_at_the_end(replay):
    ws, _, _, _, snapshots = replay
    tools = (ws.root / "TOOLS.md").read_text()
    assert tools.startswith(TOOLS_HUMAN)
    assert "- Use SSH remotes for git push\n" in tools and "numpy" not in tools
    memory = (ws.root / "MEMORY.md").read_text()
    assert memory.startswith(MEMORY_HUMAN.split("## Self-Improvement Principles\n")[0])
    assert "Hand-written principle.\n" in memory and "five sentences" not in memory
    # on day 20 C was in MEMORY.md; after its revert on day 27 MEMORY.md is byte for byte what the human wrote
    assert b"five sentences" in snapshots[20]["MEMORY.md"]
    assert snapshots[27]["MEMORY.md"] == MEMORY_HUMAN.encode()
    assert not (ws.root / "AGENTS.md").exists()        # created on day 13, removed again by the day-41 revert
    skill = (ws.root / "memory/skills/deploy-rollback.md").read_text()
    assert "Roll back with the previous image tag" in skill


def test_agents_md_existed_while_the_rule_was_live(replay):
    _, _, reports, _, _ = replay
    assert [(d, f["path"], f["action"]) for d, f in _days(reports, "files", lambda f: f["path"] == "AGENTS.md")] \
        == [(41, "AGENTS.md", "delete")]
