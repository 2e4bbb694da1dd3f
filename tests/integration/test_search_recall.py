"""Memory search as the agent calls it (issue 17): one hit per memory, queries that relax instead of coming
back empty, dates matched to event times, recall along the graph, and the read-only open."""

from kg.memory import inject, search, sessions


def test_identical_events_and_their_daily_lines_are_one_hit(ws):
    for day in ("05", "06", "07"):
        ws.log("error", "docker build failed: permission denied on /var/run/docker.sock", area="infra",
               now=f"2026-01-{day}T10:00")
    ws.log("error", "docker compose up failed: port 5432 in use", area="infra", now="2026-01-07T11:00")
    hits = search.search(ws, "docker permission", now="2026-01-10")
    texts = [h.text for h in hits]
    assert texts.count("docker build failed: permission denied on /var/run/docker.sock") == 1
    top = hits[0]
    assert top.text.startswith("docker build failed") and top.count == 3
    # the other two events and the three daily-log lines are named, not repeated
    assert sum(a.startswith("ERR-") for a in top.also) == 2
    assert sum(a.startswith("memory/2026-01-0") for a in top.also) == 3


def test_a_word_found_nowhere_does_not_empty_the_query(ws):
    ws.log("learning", "The user paints landscapes on weekends", now="2026-01-05T10:00")
    ws.log("learning", "Deploys go through the staging cluster first", now="2026-01-06T10:00")
    hits = search.search(ws, "does the user enjoy painting as a hobby xylophonically", now="2026-01-10",
                         sources=["graph"])
    assert hits and hits[0].text.startswith("The user paints") and hits[0].match == "partial"
    assert hits[0].unmatched == ["enjoy", "hobby", "xylophonically"]  # said: no memory holds it


def test_a_query_that_finds_nothing_relaxes_and_says_so(ws):
    ws.log("learning", "kubernetes rollout needs the canary flag", now="2026-01-05T10:00")
    ws.log("learning", "the invoice service retries three times", now="2026-01-06T10:00")
    fuzzy = search.search(ws, "kubernetis", now="2026-01-10", sources=["graph"])
    assert fuzzy and fuzzy[0].text.startswith("kubernetes rollout") and fuzzy[0].match == "fuzzy"
    recent = search.search(ws, "zzqx", now="2026-01-10", sources=["graph"])
    assert [h.match for h in recent] == ["recent", "recent"]
    assert recent[0].text.startswith("the invoice service")
    assert "showing the newest memory" in search.render([h.as_dict() for h in recent], "zzqx")


def test_dates_in_the_query_match_event_times(ws):
    ws.log("learning", "Sam went hiking with friends", now="2023-12-04T15:00")
    ws.log("learning", "Sam went swimming at the lake", now="2023-11-20T15:00")
    ws.log("learning", "Sam cooked dinner for the family", now="2023-12-10T15:00")
    hits = search.search(ws, "What was Sam doing on December 4, 2023?", now="2023-12-20", sources=["graph"])
    assert hits[0].text == "Sam went hiking with friends" and hits[0].parts["date"] == 1.0
    chinese = search.search(ws, "昨天 Sam", now="2023-12-11T09:00", sources=["graph"])
    assert chinese[0].text == "Sam cooked dinner for the family"


def test_recall_follows_links_from_the_best_hits(ws):
    a = ws.log("error", "the nightly backup job crashed with an out of memory error", now="2026-01-05T10:00")
    b = ws.log("learning", "raised the worker heap limit to 4 GiB", now="2026-01-05T11:00", link=False)
    ws.log("learning", "lunch order for the team offsite", now="2026-01-05T12:00", link=False)
    ws.edge_add(a.id, b.id, "led_to", now="2026-01-05T11:00")
    hits = search.search(ws, "nightly backup crashed", now="2026-01-10", sources=["graph"])
    assert [h.ref for h in hits[:2]] == [a.id, b.id]
    assert hits[1].parts["text"] > 0 and hits[1].parts["graph"] > 0


def test_reads_open_the_graph_read_only_and_still_see_every_acknowledged_entry(ws):
    ws.log("learning", "first entry about gradle caches", now="2026-01-05T10:00")
    with ws.reading() as st:
        assert st.run("node_exists", id="LRN-20260105-001")
        with ws.store() as again:  # nested use shares the read-only handle
            assert again is st
        try:
            st.execute("CREATE (:Session {id: 'x'})")
            written = True
        except Exception:  # noqa: BLE001 - Kùzu refuses a write in read-only mode
            written = False
        assert not written
    # an entry still waiting in the journal: the read takes the writer's path and applies it first
    ws.log("learning", "second entry about gradle daemons", now="2026-01-05T11:00", apply=False)
    assert ws.journal.has_pending()
    hits = search.search(ws, "gradle", now="2026-01-10", sources=["graph"])
    assert {h.text for h in hits} == {"first entry about gradle caches", "second entry about gradle daemons"}
    assert not ws.journal.has_pending()
    block = inject.inject(ws, "gradle caches", now="2026-01-10")
    assert "gradle caches" in block["block"]


def test_an_empty_memory_has_no_results(ws):
    assert search.search(ws, "anything at all", now="2026-01-10") == []
    assert search.render([], "anything at all") == "No results for 'anything at all'"


def test_full_text_ties_are_broken_by_id_whatever_the_threads(ws):
    """260 texts that score alike for "zebra" (one shared word, one own number, same length): the tie
    reaches past the index's top 100. The candidates are the same on a writer's handle (Kùzu runs several
    threads there; its top-k then picked by thread timing) as on a one-thread reader, every time, in id order."""
    from kg.memory.views import Direct

    ws.log_many([{"kind": "learning", "summary": f"zebra crossing {i:03d}", "at": f"2026-01-05T10:{i % 60:02d}"}
                 for i in range(260)], link=False)
    with ws.store() as st:
        ids = sorted(r["id"] for r in st.execute("MATCH (n:Node) WHERE n.text STARTS WITH 'zebra' RETURN n.id AS id"))
        got = [r["id"] for r in Direct(st).fts("zebra", 100)]
        assert all([r["id"] for r in Direct(st).fts("zebra", 100)] == got for _ in range(3))
    assert len(ids) == 260 and len(got) == 100 and got == sorted(got)  # one score: in id order
    with ws.reading() as st:  # one query thread
        assert [r["id"] for r in Direct(st).fts("zebra", 100)] == got


def test_recall_reaches_the_entries_logged_beside_a_hit_in_its_session(ws):
    """Build item 4: the entries logged just before and after a best hit in its session (of any kind: the fix
    after an error) come back although they share no word with the query; one of another session logged in
    between, and one farther away than `session_steps`, do not."""
    s1 = sessions.start(ws, "2026-01-05T09:00")["id"]
    s2 = sessions.start(ws, "2026-01-05T09:30")["id"]
    far = ws.log("learning", "renamed the dashboard panels", now="2026-01-05T09:40", session=s1, link=False)
    second = ws.log("learning", "cleared the build cache", now="2026-01-05T09:50", session=s1, link=False)
    before = ws.log("learning", "bumped the worker pool to eight processes", now="2026-01-05T09:55",
                    session=s1, link=False)
    hit = ws.log("error", "the staging deploy failed at the database migration step", now="2026-01-05T10:00",
                 session=s1, link=False)
    other = ws.log("learning", "ordered new chairs for the office", now="2026-01-05T10:02", session=s2, link=False)
    after = ws.log("learning", "rolled back, then dropped the stale index before trying again",
                   now="2026-01-05T10:05", session=s1, link=False)
    hits = search.search(ws, "staging deploy migration failed", now="2026-01-10", sources=["graph"])
    refs = [h.ref for h in hits]
    assert refs[0] == hit.id and {after.id, before.id} <= set(refs)
    # the packaged rules take two steps: the entry two places away comes back, below the ones next to the hit
    assert refs.index(second.id) > max(refs.index(before.id), refs.index(after.id))
    found = hits[refs.index(after.id)]
    assert found.parts["text"] > 0 and found.parts["graph"] > 0 and found.parts["fuzzy"] == 0
    assert other.id not in refs and far.id not in refs


def test_a_candidate_reached_from_two_best_hits_ranks_above_one_reached_from_one(ws):
    a = ws.log("error", "payment webhook timed out talking to the ledger", now="2026-01-05T10:00", link=False)
    b = ws.log("error", "payment webhook timed out again under load", now="2026-01-06T10:00", link=False)
    two = ws.log("learning", "moved the slow reconciliation into a queue", now="2026-01-07T10:00", link=False)
    one = ws.log("learning", "renamed the dashboard panels", now="2026-01-07T10:00", link=False)
    for src, dst in ((a.id, two.id), (b.id, two.id), (a.id, one.id)):
        ws.edge_add(src, dst, "led_to", now="2026-01-07T11:00")
    hits = search.search(ws, "payment webhook timed out", now="2026-01-10", sources=["graph"])
    refs = [h.ref for h in hits]
    assert set(refs[:2]) == {a.id, b.id}
    assert refs.index(two.id) < refs.index(one.id)
    assert hits[refs.index(two.id)].parts["graph"] > hits[refs.index(one.id)].parts["graph"]


def test_graph_recall_is_the_same_one_shot_and_held_open(ws):
    """The one-shot reader (one query per key) and the held-open cache (node and edge maps) expand alike."""
    s = sessions.start(ws, "2026-01-05T09:00")["id"]
    for i, text in enumerate(["the nightly backup crashed with out of memory", "raised the heap to 4 GiB",
                              "reran the backup and it passed", "backup crashed again on the archive volume"]):
        ws.log("learning", text, now=f"2026-01-05T10:0{i}", session=s)
    one_shot = [(h.ref, h.score) for h in search.search(ws, "backup crashed", now="2026-01-10", sources=["graph"])]
    with ws:
        held = [(h.ref, h.score) for h in search.search(ws, "backup crashed", now="2026-01-10", sources=["graph"])]
    assert one_shot == held and len(one_shot) == 4


def test_graph_recall_is_policy_a_workspace_can_turn_off(ws):
    """`[rules.search.expand] seeds = 0` in kg.toml: no seeds, no paths; the entry beside the hit is gone."""
    import kg

    s = sessions.start(ws, "2026-01-05T09:00")["id"]
    hit = ws.log("error", "the staging deploy failed at the database migration step", now="2026-01-05T10:00",
                 session=s, link=False)
    after = ws.log("learning", "rolled back, then dropped the stale index", now="2026-01-05T10:05", session=s,
                   link=False)
    on = [h.ref for h in search.search(ws, "staging deploy migration", now="2026-01-10", sources=["graph"])]
    (ws.root / "kg.toml").write_text("[rules.search.expand]\nseeds = 0\n", encoding="utf-8")
    off = [h.ref for h in search.search(kg.open_workspace(ws.root), "staging deploy migration", now="2026-01-10",
                                        sources=["graph"])]
    assert on == [hit.id, after.id] and off == [hit.id]
