"""Issue 20, readers never starved: readers share the graph (a shared lock for read-only opens, writers take it
alone and are not kept out by a stream of readers), the lifecycle's commands take their turn without applying
everyone's backlog first, and drains that stop early leave few draining files behind. Real locks, real Kùzu,
real files."""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
import threading
import time

import pytest

import kg
from kg.core.errors import StoreBusy
from kg.ingest.journal import MAX_DRAINING, Journal
from kg.store import Store
from kg.store.lock import FileLock, _announce, _waited_for


def test_readers_hold_the_graph_side_by_side_and_a_writer_waits_for_them(tmp_path):
    path = tmp_path / "graph.lock"
    first, second = FileLock(path, timeout=1, shared=True), FileLock(path, timeout=1, shared=True)
    first.acquire()
    second.acquire()  # a second reader does not wait for the first
    with pytest.raises(StoreBusy):
        FileLock(path, timeout=0.2).acquire()  # a writer does
    first.release()
    second.release()
    with FileLock(path, timeout=1):
        with pytest.raises(StoreBusy):
            FileLock(path, timeout=0.2, shared=True).acquire()  # and a reader waits for a writer


def test_a_reader_waits_behind_a_waiting_writer_rather_than_in_front_of_it(tmp_path):
    """A stream of readers must not keep a writer out: once a writer waits, a new reader queues behind it."""
    path = tmp_path / "graph.lock"
    reader = FileLock(path, timeout=1, shared=True)
    reader.acquire()
    writer = FileLock(path, timeout=30)
    got = threading.Event()
    thread = threading.Thread(target=lambda: (writer.acquire(), got.set()))
    thread.start()
    deadline = time.monotonic() + 30
    while not FileLock(path, timeout=0).others_waiting():  # the writer says it waits
        assert time.monotonic() < deadline
        time.sleep(0.01)
    with pytest.raises(StoreBusy):
        FileLock(path, timeout=0.3, shared=True).acquire()  # the lock is shared-held, but a writer waits
    reader.release()
    assert got.wait(30)
    writer.release()
    thread.join()
    with FileLock(path, timeout=1, shared=True):  # no writer waits: readers come in at once
        pass


def test_two_processes_read_the_graph_at_once(tmp_path):
    """Kùzu admits several read-only processes; with the shared lock, two `kg` readers open the graph together
    (before, the second waited for the first)."""
    ws = kg.init_workspace(tmp_path / "ws")
    ws.log("learning", "readers share the graph", wait=True)
    holder = ("import sys, time, kg\nws = kg.open_workspace(sys.argv[1])\nwith ws.reading() as st:\n"
              "    print('open', flush=True)\n    time.sleep(30)\n")
    proc = subprocess.Popen([sys.executable, "-c", holder, str(ws.root)], stdout=subprocess.PIPE, text=True,
                            env={**os.environ, "KG_SERVER": "0"})
    try:
        assert proc.stdout.readline().strip() == "open"  # the other process holds the graph read-only
        with Store.open(ws.graph_path, lock_path=ws.kg_dir / "graph.lock", lock_timeout=5, read_only=True) as st:
            rows = st.execute("MATCH (n:Node) WHERE n.text = $t RETURN n.id AS id", {"t": "readers share the graph"})
            assert len(rows) == 1
        with pytest.raises(StoreBusy):  # a writer still waits for it
            with Store.open(ws.graph_path, lock_path=ws.kg_dir / "graph.lock", lock_timeout=0.5):
                pass
    finally:
        proc.kill()
        proc.wait()


def test_take_merges_many_draining_files_byte_for_byte_in_order(tmp_path):
    """Drains that stop early leave a draining file per round; past MAX_DRAINING the newer ones are merged
    (the oldest, in progress, stays), torn lines included for the quarantine, order kept."""
    journal = Journal(tmp_path, timeout=5)
    names = []
    for n in range(MAX_DRAINING + 2):
        path = tmp_path / f"draining-{n + 1:020d}-1.jsonl"
        torn = b'{"op": "log", "id": "ERR-20261201-9' if n == 2 else b""  # a crash's torn last line
        path.write_bytes(b'{"op": "log", "id": "ERR-20261201-%03d"}\n' % n + torn)
        names.append(path.name)
    with journal.locked():
        journal.append([{"op": "log", "id": "ERR-20261201-100"}])
    taken = list(journal.take())
    assert [p.path.name for p in taken][0] == names[0] and len(taken) == 2
    assert [r["id"] for p in taken for r in p.records] == [f"ERR-20261201-{n:03d}" for n in
                                                           range(MAX_DRAINING + 2)] + ["ERR-20261201-100"]
    assert [b.text for b in taken[1].bad] == ['{"op": "log", "id": "ERR-20261201-9']
    assert sorted(p.name for p in tmp_path.glob("draining-*.jsonl")) == [p.path.name for p in taken]
    assert not (tmp_path / "journal.jsonl").exists()


def test_a_cycle_or_a_snapshot_under_contention_takes_its_turn_without_the_backlog(tmp_path):
    """`kg cycle` while agents log used to apply everyone's backlog first (minutes on a loaded machine). Its
    drains are bounded as a reader's: under contention (another process waits for the graph) with a budget of
    0 it applies nothing and runs; with no contention it applies everything first, as before."""
    from kg.analysis.snapshot import take
    from kg.lifecycle.api import cycle

    root = tmp_path / "ws"
    kg.init_workspace(root)
    (root / "kg.toml").write_text("[rules.policy.write]\nreader_drain_seconds = 0\n")
    ws = kg.open_workspace(root)
    for i in range(12):
        ws.log("error", f"deploy step {i} failed on staging", now="2026-11-01T10:00", apply=False)
    waiter = _announce(ws.kg_dir / "graph.lock.wait")  # contention, as a real waiter shows it
    try:
        report = cycle(ws, now="2026-11-02")
        assert report.now.startswith("2026-11-02") and ws.journal.pending_count() == 12
        with take(ws) as snapshot:  # an analysis snapshot (kg graph report) is a read: bounded the same way
            assert snapshot.graph_path.exists() and ws.journal.pending_count() == 12
    finally:
        os.close(waiter)
    cycle(ws, now="2026-11-02")
    assert ws.journal.pending_count() == 0 and ws.status(now="2026-11-02")["entries"] == {"error": 12}


def test_a_log_inside_a_bounded_lifecycle_block_is_not_called_applied_before_it_is(tmp_path):
    """Inside the lifecycle's block (`holding`) under contention the drain stops before the lifecycle's own
    entry: `ws.log` says it waits in the journal (it used to answer `applied` with no node in the graph), and
    the next command applies it."""
    from kg.lifecycle.cycle import holding

    root = tmp_path / "ws"
    kg.init_workspace(root)
    (root / "kg.toml").write_text("[rules.policy.write]\nreader_drain_seconds = 0\n")
    ws = kg.open_workspace(root)
    ws.log("learning", "backlog entry about queue depth", now="2026-11-01T10:00", apply=False)
    waiter = _announce(ws.kg_dir / "graph.lock.wait")  # another process waits for the graph
    try:
        with holding(ws) as st:
            r = ws.log("error", "kg reverted the rule about retries", now="2026-11-02T10:00")
            assert not r.applied and "not yet in the graph" in r.note
            assert not st.run("node_exists", id=r.id)
    finally:
        os.close(waiter)
    assert ws.status(now="2026-11-02")["entries"] == {"learning": 1, "error": 1}


def test_another_checkers_moment_is_not_a_waiting_writer(tmp_path):
    """A reader that finds `.xwait` locked by another reader's check (descheduled mid-check on a loaded machine)
    must not queue behind a writer that does not exist; a writer that really waits is still seen."""
    path = tmp_path / "graph.lock"
    xwait = tmp_path / "graph.lock.xwait"
    fd = os.open(xwait, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # what a checker held while it tried the file (before)
        assert not _waited_for(xwait)
        with FileLock(path, timeout=0, shared=True):  # no writer waits: the reader comes in at once
            pass
    finally:
        os.close(fd)
    waiter = _announce(xwait)  # a writer waiting for the graph
    try:
        assert _waited_for(xwait)
        with pytest.raises(StoreBusy):
            FileLock(path, timeout=0.2, shared=True).acquire()
    finally:
        os.close(waiter)
    assert not _waited_for(xwait)


def test_a_polite_drain_whose_open_a_reader_waited_for_hands_over_before_applying(tmp_path):
    """A detached applier that opened the graph while a foreground process began to wait hands it over before
    its first record (a fresh process's first record costs seconds on a loaded machine; the waiter drains
    itself); with nobody waiting it applies everything, as before."""
    from kg.ingest.drain import drain

    ws = kg.init_workspace(tmp_path / "ws")
    for i in range(3):
        ws.log("error", f"deploy step {i} failed on staging", apply=False)
    with ws.store(apply_journal=False) as st:
        waiter = _announce(ws.kg_dir / "graph.lock.wait")
        try:
            report = drain(ws, st, polite=True)
        finally:
            os.close(waiter)
        assert (report.applied, report.stopped, ws.journal.pending_count()) == (0, "handed over", 3)
        assert drain(ws, st, polite=True).applied == 3


def test_a_read_past_its_budget_applies_nothing_while_agents_stream(tmp_path):
    """The read server stopped applying a backlog for a reader (`streaming`): a reader past its budget reads at
    once (it applied a record or more first, until an agent's next entry showed the contention); within its
    budget, or with no stream, it applies as before."""
    from kg.ingest.drain import drain

    ws = kg.init_workspace(tmp_path / "ws")
    for i in range(3):
        ws.log("error", f"deploy step {i} failed on staging", apply=False)
    with ws.store(apply_journal=False) as st:
        late = time.monotonic() - 10  # the reader's process started 10 s ago (a loaded machine)
        report = drain(ws, st, budget=0.3, since=late, streaming=True)
        assert (report.applied, report.stopped, report.pending) == (0, "budget", 3)
        assert drain(ws, st, budget=0.3, since=late).applied == 3  # no stream: a finite backlog, applied
