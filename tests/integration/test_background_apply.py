"""`with ws:` answers a log at the ack and applies it on a background thread: nothing is lost, every read sees
what was logged before it, and the graph ends up as if each log had been applied in the foreground."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import kg


def _graph(ws) -> dict:
    status = ws.status()
    return {"entries": status["entries"], "edges": status["edges"],
            "patterns": {p["key"]: (p["recurrence"], p["sessions"]) for p in status["patterns"]}}


def _history(ws, *, wait: bool) -> list:
    out = []
    for i in range(12):
        r = ws.log("error", f"git push failed: no upstream for branch feature-{i}", area="tooling",
                   pattern_key="git.push.upstream" if i % 3 else None, session=f"s{i % 4}",
                   now=f"2026-11-{1 + i:02d}T10:00:00", wait=wait)
        out.append(r)
    out.append(ws.log("learning", "set the upstream with git push -u before the first push", area="tooling",
                      category="best_practice", now="2026-11-20T10:00:00", wait=wait))
    return out


def test_inside_with_a_log_answers_queued_and_the_graph_matches_the_foreground_way(tmp_path: Path):
    front = kg.init_workspace(tmp_path / "front")
    with front:
        applied = _history(front, wait=True)
    back = kg.init_workspace(tmp_path / "back")
    with back:
        queued = _history(back, wait=False)
        assert all(r.queued and not r.applied and r.pattern is None for r in queued)
        assert all(r.applied and not r.queued and r.pattern for r in applied if r.pattern_key)
        # a read inside the block waits for the thread and sees every entry logged before it
        assert back.show(queued[-1].id)["node"]["text"].startswith("set the upstream")
    assert [r.id for r in queued] == [r.id for r in applied]
    assert _graph(back) == _graph(front)
    # 8 by key; 3 of the 4 without one are near-duplicates of earlier members (the first came before any)
    assert _graph(back)["patterns"]["git.push.upstream"] == (11, 4)
    assert not back.journal.has_pending()


def test_a_log_inside_a_store_block_is_applied_before_it_answers(ws):
    """A caller holding `ws.store()` reads the graph with that handle next: the entry must already be there."""
    with ws:
        with ws.store() as st:
            r = ws.log("error", "pytest fixture timed out", pattern_key="pytest.timeout")
            assert r.applied and not r.queued
            assert st.run("node_exists", id=r.id)


def test_reads_from_one_thread_while_another_logs(ws):
    """The caller's thread and the applier never use the graph at once (one Kùzu connection)."""
    acked: list[str] = []
    errors: list[BaseException] = []

    def writer() -> None:
        try:
            for i in range(60):
                acked.append(ws.log("error", f"npm ci failed on lockfile {i}", pattern_key=f"npm.{i % 3}",
                                    now="2026-11-30T10:00:00").id)
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    with ws:
        thread = threading.Thread(target=writer)
        thread.start()
        while thread.is_alive():
            ws.status()
            ws.list(limit=5)
        thread.join()
        assert not errors
        assert ws.status()["entries"] == {"error": 60}
    assert len(set(acked)) == 60
    assert {p["key"]: p["recurrence"] for p in ws.status()["patterns"]} == {"npm.0": 20, "npm.1": 20, "npm.2": 20}


def test_the_journal_lock_shuts_out_the_other_threads_of_the_process(ws):
    """flock is per process: without a thread lock too, a second thread would see it held and walk in."""
    inside, release = threading.Event(), threading.Event()
    tried: list[bool] = []

    def holder() -> None:
        with ws.journal.locked():
            inside.set()
            release.wait()

    def other() -> None:  # what `locked()` waits on, tried without waiting
        got = ws.journal._threads.acquire(blocking=False)
        tried.append(got)
        if got:
            ws.journal._threads.release()

    a = threading.Thread(target=holder)
    a.start()
    inside.wait()
    b = threading.Thread(target=other)
    b.start()
    b.join()
    release.set()
    a.join()
    other()  # free again once the holder is done
    assert tried == [False, True]


def test_threads_logging_at_once_get_unique_ids(ws):
    """The journal's lock is per process (flock) and per thread: two threads never allocate the same id."""
    acked: list[str] = []

    def writer(n: int) -> None:
        for i in range(40):
            acked.append(ws.log("error", f"thread {n} failure {i}", now="2026-11-30T10:00:00", apply=False).id)

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(acked) == 160 and len(set(acked)) == 160
    assert ws.status()["entries"] == {"error": 160}


CRASH = textwrap.dedent("""
    import os, sys, kg
    ws = kg.open_workspace(sys.argv[1])
    with ws:
        ids = [ws.log("error", f"crash test {i}", pattern_key="crash.test", now="2026-11-30T10:00:00").id
               for i in range(30)]
        print(" ".join(ids), flush=True)
        os._exit(0)  # killed inside the block: no exit handler, the applier mid-way or not started
""")


def test_a_process_killed_inside_with_loses_no_acknowledged_log(ws):
    out = subprocess.run([sys.executable, "-c", CRASH, str(ws.root)], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    acked = out.stdout.split()
    assert len(acked) == 30
    fresh = kg.open_workspace(ws.root)
    assert {r["id"] for r in fresh.list(type="error", limit=100)} == set(acked)
    assert {p["key"]: p["recurrence"] for p in fresh.status()["patterns"]} == {"crash.test": 30}


def test_with_inside_a_store_block_holds_that_blocks_handle(ws):
    """`with ws:` is re-entrant inside `ws.store()` too: no second handle on the graph (Kùzu would refuse it)."""
    with ws.store() as st:
        with ws:
            r = ws.log("error", "docker build failed: no space left", pattern_key="docker.space")
            assert r.applied and r.pattern["recurrence"] == 1
        assert st.run("node_exists", id=r.id)
    assert not ws.is_held


def test_the_backlog_bound_is_a_rule_and_zero_turns_the_thread_off(tmp_path: Path):
    """Past `background_max_queued` waiting entries the caller applies them all before answering (a caller
    logging faster than entries apply is slowed to the graph's pace); with 0 every log applies in place."""
    root = tmp_path / "ws"
    kg.init_workspace(root)
    (root / "kg.toml").write_text("[rules.policy.write]\nbackground_max_queued = 0\n")
    ws = kg.open_workspace(root)
    with ws:
        results = [ws.log("error", f"make failed on target {i}", pattern_key="make.target",
                          now="2026-11-30T10:00:00") for i in range(4)]
        assert ws._applier is None  # never started
    assert [(r.applied, r.queued) for r in results] == [(True, False)] * 4
    assert [r.pattern["recurrence"] for r in results] == [1, 2, 3, 4]


NEVER_LEFT = textwrap.dedent("""
    import sys, kg
    ws = kg.open_workspace(sys.argv[1])
    ws.__enter__()  # held for the life of the process and never left (a notebook, an agent loop)
    print(" ".join(ws.log("error", f"deploy failed on host {i}", pattern_key="deploy.timeout",
                          now="2026-11-30T10:00:00").id for i in range(40)), flush=True)
    # the interpreter ends with the background thread perhaps inside Kùzu
""")


def test_a_block_never_left_is_closed_at_exit_with_everything_applied(ws):
    out = subprocess.run([sys.executable, "-c", NEVER_LEFT, str(ws.root)], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr  # not an abort from a daemon thread killed inside Kùzu
    assert not ws.journal.has_pending()  # applied by the process itself, at exit
    assert {r["id"] for r in ws.list(type="error", limit=100)} == set(out.stdout.split())


# -- the one detached applier per workspace (kg.ingest.background) --------------------------------------------

def test_a_workspace_has_one_applier_slot(ws):
    from kg.ingest.background import applier_running, claim_applier, release_applier

    assert not applier_running(ws.kg_dir)
    slot = claim_applier(ws.kg_dir)
    assert slot is not None and applier_running(ws.kg_dir)
    assert claim_applier(ws.kg_dir) is None  # a second logger leaves no second applier
    release_applier(slot)
    assert not applier_running(ws.kg_dir)
    again = claim_applier(ws.kg_dir)
    assert again is not None
    release_applier(again)


def test_a_kg_log_that_finds_the_slot_taken_leaves_its_entry_to_the_holder(ws):
    """The real console entry: with the slot held (an applier running), `kg log` answers and forks nothing; the
    holder applies the entry."""
    from kg.ingest.background import claim_applier, run_applier

    kg_bin = str(Path(sys.executable).parent / "kg")
    slot = claim_applier(ws.kg_dir)
    r = subprocess.run([kg_bin, "-w", str(ws.root), "log", "error", "docker build ran out of disk", "--json"],
                       capture_output=True, text=True, check=True)
    entry = __import__("json").loads(r.stdout)["id"]
    assert ws.journal.pending_count() == 1  # nobody else could apply it: the holder is this test
    assert run_applier(ws, slot) == 1
    assert not ws.journal.has_pending()
    assert ws.show(entry)["node"]["text"] == "docker build ran out of disk"


def test_an_entry_acknowledged_as_the_applier_finishes_is_not_left_behind(ws):
    """The race: an agent's entry is journaled after the applier's last look at the journal but before it
    releases the slot, so that agent's `kg log` found the slot taken and left no applier. The holder looks
    again after releasing, takes the slot back and applies it."""
    from kg.ingest.background import claim_applier, run_applier

    first = ws.log("error", "npm install timed out behind the proxy", apply=False)
    slot = claim_applier(ws.kg_dir)
    late: list[str] = []

    def ack_in_the_window() -> None:
        if not late:
            assert claim_applier(ws.kg_dir) is None  # this agent's kg log would leave no applier
            late.append(ws.log("error", "npm install timed out again", apply=False).id)

    turns = run_applier(ws, slot, before_release=ack_in_the_window)
    assert turns == 2
    assert not ws.journal.has_pending()
    with ws.reading():
        assert {first.id, late[0]} <= {r["id"] for r in ws.list(limit=10)}


def test_the_applier_waits_for_a_reader_it_stood_aside_for(ws):
    """A reader waits for the graph (it holds its shared lock on graph.lock.wait): the polite drain stands aside
    and applies nothing; the applier pauses and tries again instead of leaving the entry behind."""
    import os

    from kg.ingest.background import claim_applier, run_applier
    from kg.store.lock import _announce

    entry = ws.log("learning", "pin the base image digest", apply=False)
    waiting = [_announce(ws.kg_dir / "graph.lock.wait")]
    pauses: list[float] = []

    def pause(seconds: float) -> None:
        pauses.append(seconds)
        if len(pauses) == 2:  # the reader got its turn and left
            os.close(waiting.pop())

    assert run_applier(ws, claim_applier(ws.kg_dir), sleep=pause) == 1
    assert len(pauses) == 2 and not waiting
    assert not ws.journal.has_pending()
    assert ws.show(entry.id)["node"]["kind"] == "event"


def test_the_applier_outlasts_a_graph_held_past_the_retry_budget(ws, monkeypatch):
    """Another process holds the graph longer than the lock's retry budget (a long cycle on a busy machine): the
    applier's drain fails with "graph is held"; it waits and tries again instead of leaving the entry."""
    from kg.ingest.background import claim_applier, run_applier
    from kg.store.lock import FileLock

    entry = ws.log("error", "the cycle held the graph", apply=False)
    monkeypatch.setenv("KG_LOCK_TIMEOUT", "0")
    holder = FileLock(ws.kg_dir / "graph.lock", timeout=0)
    holder.acquire()
    pauses: list[float] = []

    def pause(seconds: float) -> None:
        pauses.append(seconds)
        holder.release()

    fresh = kg.open_workspace(ws.root)  # KG_LOCK_TIMEOUT is read when the workspace makes its journal
    assert run_applier(fresh, claim_applier(ws.kg_dir), sleep=pause) == 1
    assert len(pauses) == 1 and not fresh.journal.has_pending()
    assert fresh.show(entry.id)["node"]["text"] == "the cycle held the graph"


def test_the_applier_leaves_the_journal_to_a_read_server_that_takes_it(ws):
    """A read server applies the journal between its reads (kg/serve/server.py): once it takes the work
    (`served()`), the applier stops polling and frees the slot; nothing was applied or lost on the way."""
    from kg.ingest.background import claim_applier, run_applier

    entry = ws.log("error", "the server applies this one", apply=False)
    asked: list[int] = []
    assert run_applier(ws, claim_applier(ws.kg_dir), served=lambda: asked.append(1) or True) == 1
    assert asked == [1] and ws.journal.pending_count() == 1  # left to the server, not dropped
    slot = claim_applier(ws.kg_dir)  # the slot is free for the next logger
    assert slot is not None
    assert run_applier(ws, slot, served=lambda: False) == 1  # no server: the applier applies it itself
    assert ws.show(entry.id)["node"]["text"] == "the server applies this one"


def test_a_held_graph_drains_in_batches_and_stops_for_a_reader_at_the_door(ws):
    """The read server's drain (`drain_held`): it stops when `yield_to` says a reader waits, between two records
    of a batch (a reader waits for the record in hand, not for a batch), leaving the rest in the journal
    (counted) for the next drain, which applies it. Every drain applies at least one record: readers arriving
    back to back never leave the journal unapplied."""
    from kg.ingest.drain import drain_held

    batch = ws.policy.drain_batch
    with ws:  # the graph held, as the server holds it; apply=False only journals
        ids = [ws.log("learning", f"cache layer {i} of the image build", apply=False).id for i in range(batch + 4)]
        report = drain_held(ws, yield_to=lambda: True)  # a reader at the door already: one record, then it
        assert (report.applied, report.stopped, report.pending) == (1, "handed over", batch + 3)
        asked: list[int] = []
        report = drain_held(ws, yield_to=lambda: asked.append(1) or len(asked) > 2)  # comes in during record 3
        assert (report.applied, report.stopped, report.pending) == (3, "handed over", batch)
        assert ws.journal.pending_count() == batch
        rest = drain_held(ws, yield_to=lambda: False)
        assert (rest.applied, rest.stopped) == (batch, "") and not ws.journal.has_pending()
        assert drain_held(ws).applied == 0  # nothing waits: nothing to do
    with ws.reading():
        assert set(ids) <= {r["id"] for r in ws.list(limit=50)}


def test_an_applier_whose_team_server_stays_away_ends_instead_of_taking_the_slot_again(ws):
    """The team server away, every drain failed: after its ~200 idle rounds the applier released the slot, saw the
    entry still pending and took it again, for ever (a detached process waking every 0.3 s until the server came
    back). It ends after one turn; the entry waits in the journal for the next command. A graph held by another
    process (a long cycle) is still waited out: its holder lets go in the end."""
    from kg.core.errors import StoreBusy, TeamGraphBusy
    from kg.ingest.background import claim_applier, run_applier

    ws.log("error", "logged while nothing could be applied", apply=False)
    pauses: list[float] = []

    def pause(seconds: float) -> None:
        pauses.append(seconds)
        if len(pauses) > 1000:  # (the former loop: end the test, not the machine)
            raise RuntimeError("still polling")

    def away():
        raise TeamGraphBusy("cannot reach the team graph")

    assert run_applier(ws, claim_applier(ws.kg_dir), drain=away, sleep=pause) == 1
    assert len(pauses) == 200 and ws.journal.has_pending()

    def held():
        if len(pauses) < 600:
            raise StoreBusy("the graph is held")
        return ws.drain(if_pending=True)

    pauses.clear()
    assert run_applier(ws, claim_applier(ws.kg_dir), drain=held, sleep=pause) == 3
    assert not ws.journal.has_pending()
