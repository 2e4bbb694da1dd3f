"""The maintained aggregates (kg/store/aggregates.py and kg/store/tallies.py, issue 22) equal the full
recomputation, and what they answer (ready to promote, the counts and pending entries of `kg status`) equals the
full queries, after a random sequence of logs (linked or not), resolves, cycles, imports, edges added by hand and
writes cut short by a process that dies before it commits. Real Kùzu."""

from __future__ import annotations

import json
import random
import re
import subprocess
import sys
from datetime import datetime, timedelta

import pytest

from kg.lifecycle import api
from kg.store import _named_queries, aggregates, tallies

T0 = datetime(2026, 3, 1, 9)
KEYS = [f"tool.{k}" for k in range(6)]


def full_query(st, params):
    return st._execute_raw(st.query("lc_promotion_candidates").text, params)


def check(ws, now: datetime) -> None:
    """The table equals a recomputation, and the aggregate's rows equal the full query's for a few windows
    and thresholds."""
    with ws.store() as st:
        assert aggregates.ready(st)
        assert aggregates.differences(st) == []
        for days, rec, sess in ((30, 3, 2), (2, 1, 1), (400, 2, 1)):
            params = {"pattern_statuses": ["active"], "since": now - timedelta(days=days), "now": now,
                      "ignore_statuses": ["wont_fix"], "min_recurrence": rec, "min_sessions": sess}
            want = full_query(st, params)
            assert aggregates.promotion_candidates(st, **params) == want
            # the figures alone (what `kg status` ranks and counts): the aggregate's, the Cypher's, and the full
            # rows' without key, text and area, alike
            figures = [{k: v for k, v in r.items() if k not in ("key", "text", "area")} for r in want]
            assert aggregates.promotion_figures(st, **params) == figures
            assert full_query_named(st, "lc_promotion_figures", params) == figures
            # each pattern's events in the window, from its row's members read by key (migration 0009), equal
            # the query's (exit-code-only members included, ignored statuses left out)
            window = {"since": params["since"], "now": now, "ignore_statuses": ["wont_fix"]}
            for p in st._execute_raw("MATCH (p:Node) WHERE p.kind = 'pattern' RETURN p.id AS id", {}):
                got = st.run("lc_window_events_of", id=p["id"], **window)
                assert (aggregates.window_events_of(st, id=p["id"], **window) is not None
                        or not st.run("agg_occ_get", id=p["id"]))  # answered from the row whenever there is one
                assert got == full_query_named(st, "lc_window_events_of", {"id": p["id"], **window}), p["id"]
        for name in ("count_by_kind", "count_edges"):
            assert sorted(map(repr, st.run(name))) == sorted(map(repr, full_query_named(st, name, {})))
        for limit in (1, 3, 50):
            params = {"priorities": ["high", "critical"], "since": T0 - timedelta(days=1), "limit": limit}
            assert st.run("pending_high_newest", **params) == full_query_named(st, "pending_high_newest", params)


HIGH = ["critical", "high"]
ROUTED = [("hooks_pending_high_ids", {"priorities": HIGH, "limit": 3}),
          ("hooks_pending_high_count", {"priorities": HIGH}),
          ("memory_watch", {"priorities": HIGH, "limit": 50}), ("memory_watch", {"priorities": HIGH, "limit": 2}),
          ("hooks_counts", {}), ("hooks_edge_count", {}), ("lc_free_principles", {}),
          ("memory_principles", {"limit": 5}), ("lc_proposals", {"statuses": ["pending"]}),
          ("lc_proposals", {"statuses": ["pending", "approved", "skipped", "obsolete"]})]


def check_reads(st) -> None:
    """Every read answered from the maintained tables (the session brief's, `kg status`'s, the memory's watch
    list and principles, the recurring patterns) gives the full query's rows, in its order."""
    from kg.store.bulk import newest, top_patterns

    for name, params in ROUTED:
        assert st.run(name, **params) == full_query_named(st, name, params), name
    for limit in (1, 3, 10):
        assert top_patterns(st, limit) == full_query_named(st, "pattern_stats_all", {"limit": limit})
        filters = {"kind": None, "entry_type": None, "status": None, "priority": None, "area": None}
        lo = st.run("nodes_time_bounds")[0]["lo"]
        if lo is not None:
            assert newest(st, "nodes_newest", limit=limit, **filters) == full_query_named(
                st, "nodes_newest", {**filters, "since": lo, "limit": limit})


def check_tallies(ws) -> None:
    """The tallies equal a recomputation, and the status reads they answer equal the full queries."""
    with ws.store() as st:
        assert aggregates.ready(st)
        assert tallies.differences(st) == []
        for name in ("count_by_kind", "count_edges"):
            assert sorted(map(repr, st.run(name))) == sorted(map(repr, full_query_named(st, name, {})))
        for limit in (1, 3, 50):
            params = {"priorities": ["high", "critical"], "since": T0 - timedelta(days=1), "limit": limit}
            assert st.run("pending_high_newest", **params) == full_query_named(st, "pending_high_newest", params)
        check_reads(st)


def full_query_named(st, name, params):
    return st._execute_raw(st.query(name).text, params)


def die_mid_write(ws, code: str) -> None:
    """Run `code` against the open graph in another process that dies (os._exit) without committing."""
    script = ("import os, kg\nfrom kg.store import aggregates, bulk\nws = kg.open_workspace(os.environ['WS'])\n"
              "with ws.store() as st:\n" + "".join(f"    {line}\n" for line in code.splitlines()) + "    os._exit(3)\n")
    done = subprocess.run([sys.executable, "-c", script], env={"WS": str(ws.root), "PATH": "/usr/bin:/bin"},
                          capture_output=True, text=True)
    assert done.returncode == 3, done.stderr


@pytest.mark.parametrize("seed", [1, 2])
def test_aggregate_equals_recomputation_after_random_operations(ws, tmp_path, seed):
    rng = random.Random(seed)
    now = T0
    ids: list[str] = []
    for step in range(20):
        now += timedelta(hours=rng.choice([1, 5, 20, 30]))
        op = rng.choices(["log", "resolve", "cycle", "import", "crash"], [10, 3, 2, 1, 1])[0]
        if op == "log" or not ids:
            for _ in range(rng.randint(1, 4)):
                tags = ["exit-code-only"] if rng.random() < 0.1 else []
                r = ws.log("error", f"step {step} tool {rng.randrange(6)} broke", now=now,
                           session=f"s{rng.randrange(4)}", pattern_key=rng.choice(KEYS), link=False, tags=tags,
                           action="Check the tool first")
                ids.append(r.id)
        elif op == "resolve":
            ws.resolve(rng.choice(ids), rng.choice(["resolved", "wont_fix", "pending"]), now=now)
        elif op == "cycle":
            api.cycle(ws, now=now)
        elif op == "import":
            trail = tmp_path / f"trail-{step}.json"
            entries = [{"id": f"ERR-{now:%Y%m%d}-{step}{i:03d}", "summary": f"imported {i} broke", "type": "error",
                        "logged": (now - timedelta(hours=i)).isoformat(), "session": f"imp{i % 3}",
                        "pattern_key": rng.choice(KEYS), "status": rng.choice(["pending", "wont_fix"])}
                       for i in range(rng.randint(2, 6))]
            trail.write_text(json.dumps({"version": 3, "entries": entries}))
            from kg.ingest.trail import import_trail

            import_trail(ws, [trail], now=now)
        else:  # a resolve that dies before it commits, or an import killed after its first COPY
            victim = rng.choice(ids)
            if rng.random() < 0.5:
                die_mid_write(ws, f"with st.transaction():\n    st.run('status_set', id={victim!r}, status='wont_fix', "
                                  "at=None)\n    os._exit(3)")
            else:
                die_mid_write(ws, "aggregates.invalidate(st)\n"
                                  f"st.run('status_set', id={victim!r}, status='wont_fix', at=None)")
        check(ws, now)


@pytest.mark.parametrize("seed", [2, 3, 4, 5])
def test_status_tallies_equal_recomputation_after_random_operations(ws, tmp_path, seed):
    """Linked and unlinked logs of every kind and priority, edges added by hand (an inline write), resolves,
    cycles and imports: the occurrence table and the tallies stay exact, and the promotion candidates and
    status reads equal the full queries. Seed 4 caught a rebuild (after the hand-added edge) whose COPY wrote
    wrong `at` lists under a flag saying complete (the kuzu bug `aggregates.checkpoint` works around)."""
    rng = random.Random(seed)
    now = T0
    ids: list[str] = []
    for step in range(20):
        now += timedelta(hours=rng.choice([1, 5, 20, 30]))
        op = rng.choices(["log", "resolve", "cycle", "import", "edge"], [10, 3, 2, 1, 2])[0]
        if op == "log" or not ids:
            for _ in range(rng.randint(1, 4)):
                tags = ["exit-code-only"] if rng.random() < 0.1 else []
                r = ws.log(rng.choice(["error", "learning"]), f"step {step} tool {rng.randrange(6)} broke the build",
                           now=now, session=f"s{rng.randrange(4)}", pattern_key=rng.choice(KEYS + [None]),
                           link=rng.random() < 0.5, tags=tags, action="Check the tool first",
                           priority=rng.choice(["low", "medium", "high", "critical"]))
                ids.append(r.id)
        elif op == "edge" and len(ids) > 1:  # by hand (kept in step), or inline Cypher (rebuilt on the next open)
            a, b = rng.sample(ids, 2)
            kind = rng.choice(["caused_by", "supports"])
            if step % 2:
                try:
                    ws.edge_add(a, b, kind, now=now)
                except Exception:  # noqa: BLE001 - the same edge twice is refused
                    pass
            else:
                with ws.store() as st:
                    st.execute(f"MATCH (a:Node {{id: $a}}), (b:Node {{id: $b}}) CREATE (a)-[:{kind} {{created_at: $at, "
                               "manual: true, score: 1.0, reason: 'inline'}]->(b)", {"a": a, "b": b, "at": now})
        elif op == "resolve":
            ws.resolve(rng.choice(ids), rng.choice(["resolved", "wont_fix", "pending"]), now=now)
        elif op == "cycle":
            api.cycle(ws, now=now)
        elif op == "import":
            trail = tmp_path / f"trail-{step}.json"
            entries = [{"id": f"ERR-{now:%Y%m%d}-{step}{i:03d}", "summary": f"imported {i} broke", "type": "error",
                        "logged": (now - timedelta(hours=i)).isoformat(), "session": f"imp{i % 3}",
                        "pattern_key": rng.choice(KEYS), "status": rng.choice(["pending", "wont_fix"]),
                        "priority": rng.choice(["medium", "high", "critical"])}
                       for i in range(rng.randint(2, 6))]
            trail.write_text(json.dumps({"version": 3, "entries": entries}))
            from kg.ingest.trail import import_trail

            import_trail(ws, [trail], now=now)
        with ws:  # one open for both checks (the open rebuilds what an inline write left stale: checked after it)
            check(ws, now)
            check_tallies(ws)


def test_every_write_of_what_the_aggregate_holds_is_watched():
    """A named query that creates or deletes a member edge, or sets a node's status, is in WATCH (or is the
    import's, which rebuilds): a new one added without upkeep fails here."""
    unwatched = []
    for name, q in _named_queries(None).items():
        text = q.text
        if not re.search(r"\b(CREATE|MERGE|DELETE|SET)\b", text):
            continue
        member_edge = re.search(r"(CREATE|MERGE)[^;]*derived_from|derived_from[^;]*\bDELETE\b", text, re.S)
        node_status = re.search(r"\bSET\b[^;]*\b(\w+)\.status\s*=", text, re.S) and re.search(
            r"\((\w+):Node", text)
        if member_edge or node_status:
            unwatched.append(name.split("@", 1)[0])  # a backend's variant is run by its base name
    allowed = {
        # derived_from from a rule node or a merged pattern, never pattern -> event: no member of a pattern
        "lc_change_link", "pattern_retire",
        # sets statuses of changes, proposals, decisions (not of nodes)
        "lc_change_update", "lc_change_confirm", "lc_proposal_decide", "lc_proposals_obsolete",
        "lc_decision_upsert", "lc_decision_override", "lc_contradicts_add",
        # a pattern's own reinforcement time, not a member
        "pattern_reinforce_bulk",
    }
    missing = sorted(set(unwatched) - set(aggregates.WATCH) - allowed)
    assert missing == []


def test_every_write_of_what_status_counts_is_watched():
    """A named query that creates a Node, creates or deletes an edge leaving a Node, or sets a Node's kind,
    entry type, status or priority is in tallies.WATCH with the edge types it writes: a new one added
    without upkeep fails here."""
    unwatched, untyped = [], []
    for name, q in _named_queries(None).items():
        text = q.text
        if "@" in name or not re.search(r"\b(CREATE|MERGE|DELETE|SET)\b", text):
            continue
        creates_node = re.search(r"(CREATE|MERGE)\s*\(\w*:Node\b", text)
        writes_edges = re.search(r"(CREATE|MERGE)[^;]*\]->|\bDELETE\b", text)
        edges = {t for t in tallies.NODE_EDGES if re.search(rf"\[\w*:{t}\b", text)} if writes_edges else set()
        node_vars = set(re.findall(r"\((\w+):Node\b", text))
        sets_field = any(re.search(rf"\bSET\b[^;]*\b{v}\.(status|priority|kind|entry_type)\s*=", text, re.S)
                         for v in node_vars)
        if not (creates_node or edges or sets_field):
            continue
        if name not in tallies.WATCH:
            unwatched.append(name.split("@", 1)[0])  # a backend's variant is run by its base name
            continue
        spec, types = tallies.WATCH[name]
        covered = set(types) | ({"about"} if ("about_all", None) in spec else set())
        if edges - covered:
            untyped.append(name)
    assert sorted(unwatched) == []
    assert sorted(untyped) == []


def test_status_counts_from_the_tallies_follow_every_kind_of_write(ws):
    """The counts that `kg status` prints come from the tallies and move with logs, links, resolves and a
    promotion."""
    from kg.graph import reads

    for i in range(6):
        ws.log("error", f"docker build broke on the cache {i}", now=T0 + timedelta(hours=i), session=f"s{i % 3}",
               pattern_key="docker.cache", priority="high")
    first = reads.status(ws, now=T0 + timedelta(days=1))
    assert first["nodes"]["event"] == 6 and first["entry_status"] == {"pending": 6}
    assert len(first["pending_high"]) == 6 and first["edges"]["derived_from"] == 6
    ws.resolve(first["pending_high"][0]["id"], "resolved", now=T0 + timedelta(days=1))
    api.cycle(ws, now=T0 + timedelta(days=2))
    with ws.store() as st:
        assert aggregates.differences(st) == []
        tally = {r["key"] for r in st.run("tly_all")}
    assert tallies.edge_key("derived_from") in tally
    after = reads.status(ws, now=T0 + timedelta(days=2))
    assert after["entry_status"].get("pending", 0) < 6
    assert len(after["pending_high"]) == after["entry_status"].get("pending", 0)


def test_window_figures_count_like_the_query():
    at = [datetime(2026, 1, d) for d in (1, 2, 3, 4)]
    assert aggregates.window_figures(at, ["a", None, "b", "a"], ["pending", "pending", "wont_fix", "resolved"],
                                     datetime(2026, 1, 2), datetime(2026, 1, 4), ["wont_fix"]) == (2, 1, at[3])
    # `NOT e.status IN $ignore` is null, so false, for an event without a status: not counted either
    assert aggregates.window_figures(at, ["a"] * 4, [None] * 4, at[0], at[3], ["wont_fix"]) == (0, 0, None)


def test_doctor_rebuilds_a_damaged_aggregate(ws):
    from kg.doctor import doctor

    for i in range(4):
        ws.log("error", f"docker broke {i}", now=T0 + timedelta(hours=i), session=f"s{i % 2}", pattern_key="docker.x",
               link=False)
    with ws.store() as st:
        st.run("agg_occ_clear")  # damaged behind the upkeep's back: the flag still says complete
        pid = st.run("patterns_by_key", keys=["docker.x"])[0]["id"]
        # the row's ready spans (migration 0010) went with it (DETACH DELETE)
        assert aggregates.differences(st) == [f"pattern {pid}: missing", f"ready spans of {pid}: 0 kept, 3 derived"]
    checks = {c.name: c for c in doctor(ws).checks}
    assert checks["aggregate"].status == "repaired"
    assert {c.name: c for c in doctor(ws).checks}["aggregate"].status == "ok"
    with ws.store() as st:
        assert aggregates.differences(st) == []


def test_an_edge_added_by_hand_keeps_the_aggregates_without_a_rebuild(ws):
    """`kg link add` writes through named queries in WATCH: the flag stays set (no full rebuild on the next
    open) and the tables follow, a hand-added derived_from from a pattern making the event a member."""
    for i in range(3):
        ws.log("error", f"docker build broke on the cache {i}", now=T0 + timedelta(hours=i), session=f"s{i}",
               pattern_key="docker.cache", priority="high", link=False)
    other = ws.log("error", "the linter crashed on a syntax error", now=T0 + timedelta(hours=5), session="s9",
                   pattern_key="lint.crash", priority="high", link=False).id
    lesson = ws.node_add("lesson", "Pin the linter version in CI", now=T0 + timedelta(hours=6), link=False)["id"]
    with ws.store() as st:
        pattern = st.run("patterns_by_key", keys=["docker.cache"])[0]["id"]
        before = {r["id"]: list(r["at"]) for r in st.run("agg_occ_all")}
    with ws.store() as st:  # one open graph: a writer's open would rebuild a cleared flag and hide it
        ws.edge_add(pattern, other, "derived_from", now=T0 + timedelta(hours=7))
        ws.edge_add(lesson, other, "derived_from", now=T0 + timedelta(hours=7))  # not a pattern: no member
        ws.edge_add(other, lesson, "led_to", now=T0 + timedelta(hours=7))
        assert aggregates.ready(st) and any(r["value"] == aggregates.FLAG_VALUE for r in st.run("agg_flag"))
        assert aggregates.differences(st) == []
        after = {r["id"]: list(r["at"]) for r in st.run("agg_occ_all")}
        edges = {r["type"]: r["n"] for r in st.run("count_edges")}
    assert after[pattern] == sorted(before[pattern] + [T0 + timedelta(hours=5)])
    assert lesson not in after
    assert edges.get("led_to") == 1  # from the tallies (differences() above compares them with a recount)


def test_each_row_is_linked_to_its_pattern_and_a_lost_link_is_found_and_repaired(ws):
    """The ready-to-promote read takes each candidate's fields through its row's link (migration 0008): every
    row has exactly one, to its own pattern; `differences` (kg doctor) names a lost one, and a rebuild makes
    the reads equal the full query again."""
    now = T0
    for i in range(8):
        now += timedelta(hours=7)
        ws.log("error", f"tool {i % 2} broke again", now=now, session=f"s{i % 3}", pattern_key=KEYS[i % 2],
               link=False)
    params = {"pattern_statuses": ["active"], "since": now - timedelta(days=30), "now": now,
              "ignore_statuses": ["wont_fix"], "min_recurrence": 3, "min_sessions": 2}
    with ws.store() as st:
        links = st.run("agg_occ_links")
        assert len(links) == 2 and all(r["linked"] == r["id"] for r in links)
        want = full_query(st, params)
        assert len(want) == 2 and aggregates.promotion_candidates(st, **params) == want
        lost = links[0]["id"]
        st._execute_raw("MATCH (a:PatternOcc {id: $id})-[r:occ_of]->() DELETE r", {"id": lost})
        assert aggregates.differences(st) == [f"pattern {lost}: linked to [None]"]
        assert [r["id"] for r in aggregates.promotion_candidates(st, **params)] == [links[1]["id"]]
        aggregates.rebuild(st)
        assert aggregates.differences(st) == []
        assert aggregates.promotion_candidates(st, **params) == want


def test_times_read_as_text_equal_the_list(ws):
    """(issue 22) The window's times come from Kùzu as one text per pattern (its Python binding never frees the
    items of a TIMESTAMP[] it returns): parsed, they equal the list, NULL items, an empty and a NULL list too."""
    from datetime import datetime

    with ws.store() as st:
        st.execute("CREATE NODE TABLE TimesProbe(id STRING PRIMARY KEY, at TIMESTAMP[])")
        lists = {"a": [datetime(2026, 1, 1, 10), None, datetime(2026, 1, 2, 9, 30, 0, 500_000)], "b": [],
                 "c": None, "d": [datetime(1999, 12, 31, 23, 59, 59, 1)]}
        for key, at in lists.items():
            st.execute("CREATE (:TimesProbe {id: $id, at: $at})", {"id": key, "at": at})
        rows = st.execute("MATCH (t:TimesProbe) RETURN t.id AS id, CAST(t.at AS STRING) AS at, t.at AS raw")
        assert {r["id"]: aggregates.times(r["at"]) for r in rows} == {k: v or [] for k, v in lists.items()}
        assert all(aggregates.times(r["at"]) == (r["raw"] or []) for r in rows)
