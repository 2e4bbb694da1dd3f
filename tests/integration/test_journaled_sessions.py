"""A session start journaled while another process held the graph (`kg.memory.sessions.start_journaled`): the
next drain makes the session, dated when it started (not when its first log came), before the logs that name it;
a drain cut short between two records never skips a log behind a session start; a replay changes nothing. On a
real graph (either backend)."""

from __future__ import annotations

from kg.ingest.apply import apply_records
from kg.ingest.journal import read_lines
from kg.memory import sessions


def _records(ws) -> list[dict]:
    return read_lines(ws.journal.path)[0]


def test_a_journaled_start_is_made_by_the_next_drain_before_the_logs_that_name_it(ws):
    before = ws.log("learning", "an entry of no session", now="2026-07-01T09:00", apply=False).id
    started = sessions.start_journaled(ws, "2026-07-01T09:30", source="claude-code")
    sid = started["id"]
    assert ws.current_session() == sid and started["journaled"]
    ids = [ws.log("error", f"the deploy step {i} failed on staging", now=f"2026-07-01T1{i}:00", apply=False).id
           for i in range(3)]
    report = ws.drain()
    assert set(report.ids) >= {before, sid, *ids} and not report.rejected
    with ws.reading() as st:
        row = st.run("memory_session_get", id=sid)[0]
        assert (row["started_at"].isoformat(), row["source"], row["ended_at"]) == ("2026-07-01T09:30:00",
                                                                                  "claude-code", None)
        assert sorted(n["id"] for n in st.run("memory_session_nodes", id=sid)) == sorted(ids)
    # the next start (the graph free) numbers past it, and a replay of the start changes nothing
    again = sessions.start(ws, "2026-07-01T12:00")
    assert again["id"] > sid and again["previous"] == sid and again["previous_open"]
    with ws.store() as st:
        assert apply_records(ws, st, [{"op": "session", "id": sid, "at": "2026-07-01T23:00:00",
                                       "source": "kg"}]) == [sid]
        assert st.run("memory_session_get", id=sid)[0]["started_at"].isoformat() == "2026-07-01T09:30:00"


def test_numbers_given_without_the_graph_never_repeat_one_the_graph_gave(ws):
    first = sessions.start(ws, "2026-07-01T09:00")["id"]
    ws.set_current_session(None)  # (its end handed over: no longer current, not ended yet)
    second = sessions.start_journaled(ws, "2026-07-01T09:05")["id"]
    third = sessions.start_journaled(ws, "2026-07-01T09:06")["id"]
    assert len({first, second, third}) == 3 and first < second < third


def test_a_batch_cut_short_reports_no_start_past_the_cut(ws):
    """The drain resumes after the last record `apply_records` reports: a session start past the cut (made
    already, harmlessly) must not be reported, or the logs between would be skipped."""
    a = ws.log("learning", "the first entry of the batch", now="2026-07-01T09:00", apply=False).id
    b = ws.log("learning", "the second entry, left for the next batch", now="2026-07-01T09:01", apply=False).id
    sid = sessions.start_journaled(ws, "2026-07-01T09:02")["id"]
    c = ws.log("learning", "the third entry, in the session", now="2026-07-01T09:03", apply=False).id
    records = _records(ws)
    assert [r["id"] for r in records] == [a, b, sid, c]
    with ws.store(apply_journal=False) as st:
        assert apply_records(ws, st, records, stop=lambda: True) == [a]  # stopped before b
        # stopped before c: the start before the cut was made, and is reported
        assert apply_records(ws, st, records[1:], stop=lambda: True) == [sid, b]
    report = ws.drain()
    assert not report.rejected
    with ws.reading() as st:
        assert [n["id"] for n in st.run("memory_session_nodes", id=sid)] == [c]
        assert all(st.run("node_exists", id=i) for i in (a, b, c))


def test_a_session_handed_to_its_end_keeps_its_number_when_kg_before_sessions_json_started_it(ws):
    """A session started by kg before memory/.kg/sessions.json existed (an upgrade) is noted nowhere but the
    graph. Its end handed over (no longer current, no summary file yet) and its reflection holding the graph, the
    next start, journaled, took its number: the child's end of that session then ended the new one too (it was
    current under the same id), and everything the agent did next had no session."""
    from kg.runtimes import hooks

    first = sessions.start(ws, "2026-07-01T09:00")["id"]
    (ws.kg_dir / "sessions.json").unlink()  # as kg before it left the workspace
    assert hooks.hand_over_end(ws, None, write_summary=True, now="2026-07-01T09:30") == first
    assert ws.current_session() is None
    assert sessions.start_journaled(ws, "2026-07-01T09:31")["id"] > first


def test_a_drain_counts_journaled_session_starts_apart_from_entries(ws, run_kg):
    """A journaled session start is made by the drain, but it is no entry: `kg doctor` (text and --json), which
    reports the drain it did, said "applied 3 waiting entr(y/ies)" for two logs and a start; what a read leaves
    waiting (`ws.pending`, status's journal_pending: "entries logged moments ago") counted the start as one too."""
    sid = sessions.start_journaled(ws, "2026-07-01T09:30", source="claude-code")["id"]
    for i in range(2):
        ws.log("error", f"the deploy step {i} failed on staging", now=f"2026-07-01T1{i}:00", apply=False)
    out = run_kg("doctor --json")
    (journal,) = [c for c in out.json["checks"] if c["name"] == "journal" and c["status"] == "repaired"]
    assert journal["detail"] == ("applied 2 waiting entr(y/ies); made 1 session start(s) journaled while the "
                                 "graph was held")
    assert ws.journal.pending_count() == 0
    sessions.start_journaled(ws, "2026-07-01T12:30")
    ws.log("learning", "staging deploys need the VPN", now="2026-07-01T12:40", apply=False)
    assert ws.journal.pending_count() == 2 and ws.journal.pending_count(entries=True) == 1
    text = run_kg("doctor")
    assert ("applied 1 waiting entr(y/ies); made 1 session start(s) journaled while the graph was held"
            in text.stdout)
    with ws.reading() as st:
        assert st.run("memory_session_get", id=sid)[0]["ended_at"] is None
