"""Defects a find-only QA pass reproduced on the memory side, through the real CLI on a real workspace:
`kg pref history` failed once a preference was unset; `kg search --since` kept session-summary lines of any age;
a Chinese query of common words only found what 不是 held; `kg inject` said "no memory" of what did not fit its
budget; `kg recall` of a topic just added in kg.toml did not say to build the index; `kg session end` took a
time before the session's start."""

from __future__ import annotations

import json


def test_pref_history_shows_an_unset_as_a_removal(run_kg, ws):
    """An unset's row holds '' as its value in the graph, which `history` read as JSON: JSONDecodeError."""
    assert run_kg("pref set style terse --now 2026-12-01T10:00").exit_code == 0
    assert run_kg("pref unset style --now 2026-12-01T11:00").exit_code == 0
    for args in ("pref history", "pref history style"):
        r = run_kg(args)
        assert r.exit_code == 0, r.stderr
        assert r.stdout.splitlines()[-1].split() == ["2026-12-01T11:00", "style", "unset", "removed", "(was",
                                                     "'terse')"], r.stdout
        rows = run_kg(f"{args} --json").json
        assert [(x["action"], x["value"], x["previous"]) for x in rows] == [("set", "terse", None),
                                                                             ("unset", None, "terse")]


def test_a_key_removed_by_hand_is_one_history_row_not_one_per_write(run_kg, ws):
    """The removal's '' was taken for a value still known, so each later write recorded the hand removal again."""
    assert run_kg("pref set a 1 --now 2026-12-01T10:00").exit_code == 0
    (ws.memory / "preferences.json").write_text(json.dumps({}), encoding="utf-8")
    for n, minute in enumerate(("01", "02", "03")):
        assert run_kg(f"pref set k{n} v --now 2026-12-01T11:{minute}").exit_code == 0
    rows = run_kg("pref history a --json").json
    assert [(x["action"], x["value"], x["previous"]) for x in rows] == [("set", "1", None), ("hand-unset", None, "1")]


def _deploy_session(run_kg) -> None:
    assert run_kg("session start --now 2026-11-01T09:00:00").exit_code == 0
    assert run_kg("log learning 'The staging deploy needs the VPN on' --now 2026-11-01T09:30:00").exit_code == 0
    assert run_kg("session end --summary 'Set up docker and deploy' --now 2026-11-01T10:00:00").exit_code == 0


def test_search_since_leaves_out_old_lines_of_every_memory_file(run_kg, ws):
    """--since held for the graph and the daily logs only: a month-old session summary's lines were hits."""
    import os
    from datetime import datetime

    _deploy_session(run_kg)
    (ws.root / "MEMORY.md").write_text("# Memory\n\nThe deploy script lives in ops/.\n", encoding="utf-8")
    old = datetime(2026, 11, 2, 12).timestamp()
    os.utime(ws.root / "MEMORY.md", (old, old))  # its lines are dated by the file's last change
    now = ["--now", "2026-12-06T10:00:00"]
    everywhere = run_kg(["search", "deploy", "--json", *now]).json
    assert {h["location"].split(":")[0] for h in everywhere} >= {"memory/sessions/2026-11-01-001.md", "MEMORY.md"}
    for extra in (["--since", "7d"], ["--since", "0d"], ["--since", "7d", "--source", "sessions"],
                  ["--since", "7d", "--source", "MEMORY.md"], ["--since", "7d", "--session", "2026-11-01-001"]):
        r = run_kg(["search", "deploy", "--json", *extra, *now])
        assert (r.exit_code, r.json) == (0, []), (extra, [(h["location"], h["created_at"]) for h in r.json])
    # a line at or after --since is kept: the summary's lines are dated by its "Generated:" time
    kept = run_kg(["search", "deploy", "--json", "--since", "2026-11-01T09:59", "--session", "2026-11-01-001", *now])
    assert sorted(h["location"] for h in kept.json) == ["memory/sessions/2026-11-01-001.md:6",
                                                       "memory/sessions/2026-11-01-001.md:9"]
    assert all(h["created_at"] >= "2026-11-01T09:59" for h in kept.json)


def test_search_since_keeps_a_line_dated_by_its_day_while_its_day_is_in_the_window(run_kg, ws):
    """Review: a trail line is dated by its entry id's day (midnight), so `--since 1h` dropped that morning's trail
    entries, and a daily log's line under an entry's heading the same."""
    import json

    (ws.memory / ".learning-trail.json").write_text(json.dumps({
        "entries": [{"id": "LRN-20261206-007", "type": "learning", "summary": "The canary deploy needs the VPN token "
                     "refreshed", "logged": "2026-12-06T09:40:00", "details": ""}],
        "principles": [], "graph": {"nodes": []}}), encoding="utf-8")
    (ws.memory / "2026-12-06.md").write_text("# 2026-12-06\n\n### 2026-12-06 09:40 - Error: the canary rollout "
                                             "stalled\ncanary pods kept restarting\n", encoding="utf-8")
    now = ["--now", "2026-12-06T10:00"]
    got = {h["location"] for h in run_kg(["search", "canary", "--json", "--since", "1h", *now]).json}
    assert {"memory/.learning-trail.json", "memory/2026-12-06.md:3", "memory/2026-12-06.md:4"} <= {
        g.split(":")[0] if g.startswith("memory/.learning") else g for g in got}, got
    assert run_kg(["search", "canary", "--json", "--since", "2026-12-07", *now]).json == []


def test_a_chinese_query_of_common_words_only_finds_nothing_and_says_why(run_kg, ws):
    """"的 了 是" was three terms, and 是 matched inside 不是: a hit scored 0.59 where "the a of" is refused."""
    assert run_kg("session start --now 2026-12-01T09:00").exit_code == 0
    assert run_kg(["log", "learning", "用户更喜欢使用 pnpm 而不是 npm", "--now", "2026-12-01T09:30"]).exit_code == 0
    assert run_kg("session end --now 2026-12-01T10:00").exit_code == 0
    now = ["--now", "2026-12-02T10:00"]
    for query, shown in (("的 了 是", "的, 了, 是"), ("什么 是 的", "什么, 是, 的"), ("不是", "不是"),
                         ("這個 是 的", "這個, 是, 的"), ("什麼 我們", "什麼, 我們")):  # traditional too (review)
        r = run_kg(["search", query, *now])
        assert (r.exit_code, r.stdout) == (0, f"No results for {query!r}: only common words ({shown}): add a word "
                                              "that says what to look for\n"), r.stdout
        r = run_kg(["search", query, "--json", *now])
        assert (r.exit_code, r.json) == (0, [])
        assert r.stderr == f"No results: only common words ({shown}): add a word that says what to look for\n"
    for query in ("使用", "pnpm 是", "用户 不是"):  # a word besides them still finds the entry
        hits = run_kg(["search", query, "--json", *now]).json
        assert hits and hits[0]["text"] == "用户更喜欢使用 pnpm 而不是 npm", (query, hits)


def test_inject_says_what_did_not_fit_its_budget_not_that_there_is_no_memory(run_kg, ws):
    """`dropped: 3` beside a block that said "(no memory for this message)"."""
    for text in ("The billing deploy needs the staging database migrated before the service restarts",
                 "Deploy billing only after the invoice queue has drained completely"):
        assert run_kg(["log", "learning", text, "--now", "2026-12-01T10:00"]).exit_code == 0
    assert run_kg(["pref", "set", "deploy_style", "always deploy billing on weekdays with a rollback plan",
                   "--now", "2026-12-01T10:00"]).exit_code == 0
    now = ["--now", "2026-12-02T10:00"]
    r = run_kg(["inject", "--message", "deploy billing", "--budget", "110", "--json", *now])
    assert (r.exit_code, r.json["items"], r.json["dropped"]) == (0, [], 3), r.json
    assert r.json["block"] == "## Memory (kg) — topic: general\n(3 item(s) did not fit the budget of 110 " \
        "characters: a larger one shows them)"
    for budget in range(40, 111, 7):  # shorter notes where the long one does not fit; the budget is a hard cap
        r = run_kg(["inject", "--message", "deploy billing", "--budget", str(budget), "--json", *now])
        assert len(r.json["block"]) <= budget and "no memory" not in r.json["block"], (budget, r.json["block"])
    block = run_kg(["inject", "--message", "deploy billing", "--budget", "400", "--json", *now]).json["block"]
    assert "invoice queue" in block and "did not fit" not in block


def test_recall_of_a_topic_just_added_in_kg_toml_finds_its_memory(run_kg, ws):
    """The index built before the topic was added had neither its files nor its links: "No memory found" until
    `kg index build`, which the message did not name."""
    assert run_kg("log learning 'docker compose needs the env file next to it' --now 2026-12-01T10:00").exit_code == 0
    assert run_kg("recall code --now 2026-12-01T11:00").exit_code == 0  # builds the index, without docker
    with (ws.root / "kg.toml").open("a", encoding="utf-8") as fh:
        fh.write('\n[rules.topics.topics]\ndocker = ["docker", "compose"]\n')
    r = run_kg("recall docker --now 2026-12-01T12:00 --json")
    assert r.exit_code == 0, r.stderr
    assert r.json["built_index"] and [n["id"] for n in r.json["nodes"]] == ["LRN-20261201-001"], r.json
    assert [f["file"] for f in r.json["files"]] == ["memory/2026-12-01.md"]
    assert not run_kg("recall docker --now 2026-12-01T12:00 --json").json["built_index"]  # built once


def test_recall_rebuilds_an_index_over_the_days_it_was_built_for(run_kg, ws):
    """Review: the rebuild for a topic added in kg.toml took the default 30 days, so an index built with
    `kg index build --days 90` lost its older files, and recall said "No memory found"; an index from before the
    topics were recorded was rebuilt the same way on the first recall after an upgrade."""
    import json
    import os
    from datetime import datetime

    old = ws.memory / "2026-10-01.md"
    old.write_text("# 2026-10-01\n\n### 2026-10-01 10:00 - Insight: the python script for the trading bot fails on "
                   "a bug in its error handling\n", encoding="utf-8")
    os.utime(old, (datetime(2026, 10, 1, 10).timestamp(),) * 2)
    assert run_kg("index build --days 90 --now 2026-12-06T10:00").exit_code == 0
    files = lambda r: [f["file"] for f in r.json["files"]]  # noqa: E731
    assert files(run_kg("recall code --now 2026-12-06T10:00 --json")) == ["memory/2026-10-01.md"]
    with (ws.root / "kg.toml").open("a", encoding="utf-8") as fh:
        fh.write('\n[rules.topics.topics]\ntravel = ["flight", "hotel"]\n')
    r = run_kg("recall code --now 2026-12-06T10:01 --json")
    assert r.json["built_index"] and files(r) == ["memory/2026-10-01.md"], r.json
    index = ws.memory / ".memory-index.json"
    doc = json.loads(index.read_text(encoding="utf-8"))
    index.write_text(json.dumps({k: v for k, v in doc.items() if k not in ("topics", "days")}), encoding="utf-8")
    r = run_kg("recall code --now 2026-12-06T10:02 --json")  # an index an older kg wrote: taken as it is
    assert not r.json["built_index"] and files(r) == ["memory/2026-10-01.md"], r.json


def test_recall_finding_nothing_in_an_older_index_names_kg_index_build(run_kg, ws):
    assert run_kg("recall code --now 2026-12-01T11:00").exit_code == 0  # the index, built on first use
    assert run_kg("recall code --now 2026-12-01T11:30").stdout.count("kg index build") == 0  # nothing written since
    assert run_kg("log learning 'the team lunch moved to Friday' --now 2026-12-01T11:45").exit_code == 0
    r = run_kg("recall code --now 2026-12-01T12:00")
    assert r.stdout == ("No memory found for topic 'code'\n"
                        "  Try: kg search WORDS (any memory holding the words), or name another topic\n"
                        "  Or: kg index build (the topic index was built 2026-12-01 11:00: memory written since is "
                        "not in it)\n")


def test_session_end_before_its_start_is_refused_and_writes_nothing(run_kg, ws):
    """`--now 06:00` ended a session begun at 07:00: a summary "Generated: 06:00", exit 0."""
    assert run_kg("session start --now 2026-12-06T07:00:00").exit_code == 0
    assert run_kg("log learning 'the cache lives in /var/tmp' --now 2026-12-06T07:10:00").exit_code == 0
    daily = (ws.memory / "2026-12-06.md").read_text(encoding="utf-8")
    r = run_kg("session end --summary 'tidied the cache' --now 2026-12-06T06:00:00")
    assert (r.exit_code, r.stdout) == (2, "")
    assert r.stderr == ("Error: session 2026-12-06-001 began at 2026-12-06 07:00:00, after the end time given "
                        "(2026-12-06 06:00:00): it cannot end before it began; pass a later --now (or KG_NOW)\n")
    assert not (ws.memory / "sessions" / "2026-12-06-001.md").exists()
    assert (ws.memory / "2026-12-06.md").read_text(encoding="utf-8") == daily
    assert ws.current_session() == "2026-12-06-001"  # still open, and ends at a later time
    r = run_kg("session end --summary 'tidied the cache' --now 2026-12-06T07:00:00 --json")
    assert r.exit_code == 0 and r.json["ended_at"] == "2026-12-06T07:00:00"


def test_an_end_at_the_clocks_own_time_before_the_start_is_dated_at_the_start(run_kg, ws):
    """Review: local time that went back (a daylight-saving fall-back, a clock set back) made the agent's own
    `kg session end --summary ...` (no --now) exit 2, its summary lost. Only an end time given is refused."""
    from datetime import datetime, timedelta

    later = (datetime.now() + timedelta(hours=2)).replace(microsecond=0)  # the session began "after" the clock
    assert run_kg(["session", "start", "--now", later.isoformat()]).exit_code == 0
    r = run_kg("session end --summary 'fixed the deploy' --json")
    assert r.exit_code == 0, r.stderr
    assert r.json["ended_at"] == later.isoformat()
    assert "fixed the deploy" in (ws.memory / "sessions" / f"{r.json['id']}.md").read_text(encoding="utf-8")


def test_a_hook_end_dated_before_the_start_still_writes_the_summary_at_the_start(run_kg, ws):
    """kg's own ends (a runtime's session end, a reflection) take the runtime's clock: dated at the start instead
    of refused, so a skewed clock loses no summary."""
    assert run_kg("session start --now 2026-12-06T07:00:00").exit_code == 0
    r = run_kg("hook session-end --now 2026-12-06T06:00:00 --json", input="")
    assert r.exit_code == 0, r.stderr
    text = (ws.memory / "sessions" / "2026-12-06-001.md").read_text(encoding="utf-8")
    assert "Generated: 2026-12-06 07:00" in text
