"""Draining the journal into the graph: bounded batches, a fair hand-over, and quarantine.

Every drain applies the journal oldest first, in transactions of `write.drain_batch` records, and always
applies at least one record (so every drain makes progress), except a budgeted one and a polite one that a
foreground process waits for (it drains itself).
Before each batch, and between two records of a batch (the batch then commits what it applied), it may stop:

- a *polite* drain (the detached applier a `kg log` leaves, the `with ws:` thread) stops when a foreground
  process waits for the graph, and hands it over;
- the read server's drain (`yield_to`) stops when a reader is at its door, even before its first record;
- a *budgeted* drain (a reader: search, status, list, the session brief; the lifecycle's commands) stops once
  `write.reader_drain_seconds` have passed since the reader's process started (`command_started`: a reader
  that already waited for the CPU or for the graph applies nothing), and only while there is contention
  (agents go on logging, or another process waits for the graph); the reader then reads the graph as it is.
  What is left is counted (`DrainReport.pending`) and reported, so a reader's wait does not grow with the
  number of agents logging; the detached appliers, the writers and the next readers apply the rest. With no
  contention it stops there too, after its first batch, when `behind()` says someone applies the rest in
  the background (the console's detached applier, the read server between its reads, the MCP server's drain
  thread): else a bulk `kg ingest` that could not reach the graph made the next read apply all of it first
  (QA3: 1,500 entries, a session-start hook of 21 s; 20,000, every MCP tool timing out). Without a `behind`
  (a library caller: nobody would apply it sooner) the reader applies all of it, as every drain did.

What a drain stops short of stays in its draining file, rewritten to hold only the rest, for the next
holder. A record that cannot be applied is quarantined in `journal.rejected` with a warning, and the drain
goes on.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from kg.core.errors import PoolFull, StoreError, UnusableFile
from kg.ingest.apply import apply_records
from kg.ingest.journal import Pending, check_record
from kg.store import Store

if TYPE_CHECKING:
    from kg.workspace import Workspace

_DATA_ERRORS = (KeyError, TypeError, ValueError, AttributeError, OverflowError)


@dataclass
class DrainReport:
    applied: int = 0  # entries (logs) applied; session starts journaled while the graph was held are `sessions`
    sessions: int = 0
    skipped: int = 0
    torn: int = 0
    ids: list[str] = field(default_factory=list)  # every id applied: the entries' and the session starts'
    rejected: int = 0
    pending: int = 0  # records left in the journal when the drain stopped early (0 when it emptied it)
    stopped: str = ""  # why it stopped early: "handed over" or "budget"
    compacted: list[dict[str, Any]] = field(default_factory=list)  # a bulk drain's compactions (kg/store/compact.py)


def warn(message: str) -> None:
    """A warning on stderr: the drain goes on, and `kg status`/`kg doctor` show what was set aside."""
    try:
        sys.stderr.write(f"Warning: {message}\n")
    except (OSError, ValueError):
        pass


FAILED = "apply-failed.json"  # beside the journal: the last drain's operational failure, until a batch applies


def failed(ws: Workspace, error: str | None) -> None:
    """Keep (or, `None`, clear) why the journal's last drain failed. A QA pass's ingest filled Kùzu's buffer pool:
    every later apply failed the same way and `kg status` said only that the backlog was "logged moments ago"."""
    path = ws.kg_dir / FAILED
    try:
        if error is None:
            path.unlink(missing_ok=True)
        else:
            from kg.core import clock
            from kg.core.files import write_atomic

            write_atomic(path, json.dumps({"error": error[:500], "at": clock.wall().isoformat(timespec="seconds")})
                         .encode())
    except (OSError, UnusableFile):  # (a link out of memory/.kg, which kg will not write through)
        pass  # a hint for `kg status`: the entries themselves are in the journal either way


def last_failure(ws: Any) -> dict[str, Any] | None:
    """Why the last drain failed ({"error", "at"}), or None (none failed since a batch applied)."""
    try:
        found = json.loads((ws.kg_dir / FAILED).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return found if isinstance(found, dict) and found.get("error") else None


def operational(exc: StoreError) -> bool:
    """A failure of the disk or the database (kept, retried by the next drain), not of one record's data."""
    low = str(exc).lower()
    return any(w in low for w in ("disk is full", " is full (", "not writable", "io exception", "i/o", "no space",
                                  "buffer manager", "out of memory", "read-only", "read only",
                                  # a FalkorDB server away, or refusing this workspace: kg/store/falkor.py
                                  "cannot reach the team graph", "refused the password",
                                  "asks for a password", "is not a falkordb server"))


def drain(ws: Workspace, st: Store, *, polite: bool = False, budget: float | None = None,
          clock: Callable[[], float] = time.monotonic, yield_to: Callable[[], bool] | None = None,
          since: float | None = None, streaming: bool = False,
          behind: Callable[[], bool] | None = None) -> DrainReport:
    """Apply the journal into `st` (whose graph lock the caller holds); see the module docstring. `yield_to`
    (the read server: a reader is at its door) stops the drain between two batches when it says so, as a
    polite drain stops for a process waiting for the graph. `streaming`: the caller knows agents are logging
    (the read server stopped applying a backlog for this reader), so a spent budget stops the drain at once;
    else that shows only once an entry arrives after this drain took the journal, after a record or more.
    `behind()` (asked once, when a budgeted drain would stop without contention) arranges for the rest to be
    applied in the background and says whether it was: only then does the reader leave it."""
    report = DrainReport()
    started = clock() if since is None else since
    if since is None and budget is not None and clock is time.monotonic:
        started = command_started(started)  # a one-off reader: its wait began when its process did
    # Batches of `drain_batch` records, each one transaction; a drain that may stop (budgeted, polite, or the
    # read server's) also looks between two records of a batch, so it ends within one record's apply.
    # On a team graph a batch is one atomic query to the server (kg/store/falkor_batch.py): bigger batches.
    size = max(1, ws.policy.team_drain_batch if hasattr(st, "batched") else ws.policy.drain_batch)
    size = getattr(ws, "_drain_size", None) or size  # a bulk log's own drain (kg/ingest/batch.py bulk)
    batches = 0

    def contended() -> bool:
        # agents are logging (new entries since this drain took the journal, or the caller saw them: `streaming`)
        # or a process waits for the graph.
        # (Not "a detached applier runs": it stands aside for this reader, so a reader that left the backlog
        # to it would answer without entries whose writers had finished; tests/integration/test_concurrency.)
        return streaming or ws.journal.growing() or st.others_waiting()

    left: list[bool] = []  # what `behind()` said (asked once: it may claim the applier's slot)

    def left_behind() -> bool:
        if behind is None:
            return False
        if not left:  # a bulk backlog only: a small one the reader applies whole, and reads every acknowledged entry
            left.append(ws.journal.pending_count() >= ws.policy.reader_leave_backlog and bool(behind()))
        return left[0]

    def stop_now() -> str:
        if budget is not None and clock() - started >= budget:
            if contended():
                return "budget"  # checked first: under contention a budget of 0 applies nothing
            if batches and left_behind():
                return "budget"  # the first batch always (a reader sees what was logged moments ago), whole
                # batches only: without contention its wait is bounded by a batch, and someone applies the rest
        # (issue 20) before the first batch too: a polite drain whose open a foreground process waited for
        # hands the graph over without applying (the waiter drains itself: seconds, for a fresh process's first
        # record on a loaded machine)
        if polite and st.others_waiting():
            return "handed over"
        if not batches:
            return ""  # else the first batch always: every drain makes progress (a reader at the read
            # server's door waits for its first record only: `between` stops the batch after it)
        if yield_to is not None and yield_to():
            return "handed over"  # the read server: a reader at the door goes first (it drains between reads)
        return ""

    handing = polite or yield_to is not None or budget is not None
    why: list[str] = []

    def between() -> bool:
        # between two records of a batch: a waiter waits for the record in hand, not for the whole batch
        if budget is not None and clock() - started >= budget and contended():
            why.append("budget")
        elif (polite and st.others_waiting()) or (yield_to is not None and yield_to()):
            why.append("handed over")
        return bool(why)

    rounds = 0
    # A background drain that holds the graph keeps taking what other agents log meanwhile (a few rounds,
    # while no reader waits), so one open graph serves a burst instead of every `kg log` opening it.
    while not report.stopped and ws.journal.has_pending() and (
            rounds == 0 or (polite and rounds < 8 and not st.others_waiting())):
        rounds += 1
        ws._forget_queued()
        for pending in ws.journal.take():
            report.torn += pending.skipped
            quarantine(ws, pending, report)
            records, start = pending.records, 0
            while start < len(records):
                report.stopped = stop_now()
                if report.stopped:
                    break
                batch = records[start:start + size]
                why.clear()
                try:
                    done, used = apply_batch(ws, st, pending, batch, report, stop=between if handing else None)
                except StoreError as exc:
                    if operational(exc):  # kept in the journal: said by `kg status` until a batch applies
                        failed(ws, str(exc))
                    raise
                starts = {r.get("id") for r in batch if r.get("op") == "session"}
                entries = [i for i in done if i not in starts]  # a session start is not an entry: counted apart
                report.applied += len(entries)
                report.sessions += len(done) - len(entries)
                report.skipped += used - len(done)
                report.ids.extend(done)
                start += used
                if not batches:
                    failed(ws, None)  # a batch applied: an earlier failure is over
                batches += 1
                if getattr(ws, "_compact_between", False) and start < len(records):
                    _compact(ws, st, report)
                if used < len(batch):  # the batch stopped after its record in hand
                    report.stopped = why[-1] if why else "handed over"
                    break
            if report.stopped:
                if start:  # else the draining file holds these records already (quarantine rewrote it)
                    alive = {id(r) for r in pending.records}  # not those a failed batch quarantined
                    ws.journal.keep(pending, [r for r in records[start:] if id(r) in alive])
                break
            ws.journal.done(pending)
    if report.stopped:
        report.pending = ws.journal.pending_count(entries=True)
    if report.applied:  # memory search's side index, before the reads that follow this drain
        from kg.store.sideindex import safe_sync

        safe_sync(st)
    ws.applied_total = getattr(ws, "applied_total", 0) + report.applied  # every drain's, for a command to say
    return report


def pool_full(exc: BaseException) -> bool:
    """Whether Kùzu failed for want of room in its buffer pool (a graph file grown far past its data does it)."""
    return "buffer pool is full" in str(exc).lower()


def recovering(ws: Workspace, st: Store, **how: Any) -> DrainReport:
    """`drain`, and when it fails because Kùzu's buffer pool is full: the graph file compacted when it is due
    (kg/store/compact.py), then the drain tried once more. A QA pass's file grew to 1.2 GB, where every apply
    failed that way, and the writer's open applies the journal before anything else: `kg cycle`, `kg log --wait`
    and `kg ingest` failed in it with Kùzu's message and never reached the compaction that would let them apply;
    only `kg doctor` compacted first. The entries stay in the journal either way; a failure is said in one line."""
    try:
        return drain(ws, st, **how)
    except StoreError as exc:
        if not pool_full(exc):
            raise
    from kg.store import compact

    try:
        if compact.embedded(st):  # the failed apply can leave the pool full: the compaction's own first reads
            st.reopen()  # (the tables' pages, their row counts) failed in it (ci24), so it starts on a fresh one
        done = compact.maybe(st, ws.policy, pool_mb=compact.full_pool_mb(ws.policy))
    except (StoreError, RuntimeError, OSError) as exc:
        raise _full(ws, f"; the graph file could not be compacted ({exc})") from None
    if done is None:
        raise _full(ws, "") from None
    try:
        report = drain(ws, st, **how)
    except StoreError as exc:
        if not pool_full(exc):
            raise
        raise _full(ws, f"; {done.text()}, and it still fails") from None
    warn(f"applying the journal filled Kùzu's buffer pool: {done.text()}, and the journal then applied")
    report.compacted.append(done.as_dict())
    return report


def _full(ws: Workspace, done: str) -> PoolFull:
    """The one line a drain that filled Kùzu's buffer pool ends with (kept for `kg status` as the failure)."""
    n = ws.journal.pending_count(entries=True)
    said = (f"{n} entr(y/ies) wait in the journal: applying them fails because Kùzu's buffer pool "
            f"(store.buffer_pool_mb, {ws.policy.buffer_pool_mb} MB) is full{done}. They are kept; run `kg doctor`, "
            "or raise store.buffer_pool_mb")
    failed(ws, said)
    return PoolFull(said)


@contextmanager
def reader_pool(ws: Workspace) -> Iterator[None]:
    """A read (`kg status`, search, the session brief) that fails because Kùzu's buffer pool is full, said in one
    line with what to do: a reader does not compact (a session's start would wait for the rebuild), and Kùzu's
    message ("Buffer manager exception: Unable to allocate memory! ...") said neither what was wrong nor the fix."""
    try:
        yield
    except StoreError as exc:
        if isinstance(exc, PoolFull) or not pool_full(exc):
            raise
        n = ws.journal.pending_count(entries=True)
        kept = f"; {n} entr(y/ies) wait in the journal, kept" if n else ""
        raise PoolFull(f"the graph does not fit Kùzu's buffer pool (store.buffer_pool_mb, {ws.policy.buffer_pool_mb} "
                       f"MB){kept}: run `kg doctor`, which rebuilds the graph file compact, or raise "
                       "store.buffer_pool_mb (kg.toml [rules.policy.store])") from None


def _compact(ws: Workspace, st: Store, report: DrainReport) -> None:
    """Between two batches of a bulk drain (kg/ingest/batch.py `bulk`): the graph file rebuilt compact when it
    grew past `store.compact_factor` times its data. Without it a 30k-entry ingest filled Kùzu's buffer pool at
    ~13k entries (a 1.2 GB file) and every batch after failed; a failed compaction leaves the graph as it was."""
    from kg.store import compact

    try:
        done = compact.maybe(st, ws.policy, between=True)
    except (StoreError, RuntimeError, OSError) as exc:
        warn(f"the graph file was not compacted ({exc}); the ingest goes on")
        ws._compact_between = False  # not tried again at every batch
        return
    if done is not None:
        report.compacted.append(done.as_dict())


def command_started(now: float, *, longest: float = 60.0) -> float:
    """When a one-off reader's wait began, on the monotonic clock: the start of its process, so that a kg
    command that already waited (for the CPU on a busy machine, for the graph behind other readers) past
    `write.reader_drain_seconds` applies nothing under contention and reads at once; applying even one entry
    costs a fresh process seconds on a loaded machine (it loads the linking code and warms the full-text
    index). A process older than `longest` seconds (the MCP server, a notebook) counts from `now`, the call.
    Linux only (`/proc`); elsewhere `now`. A read the server answers counts from its client's start."""
    from kg.serve.protocol import process_start

    return process_start(now, longest=longest)


def drain_held(ws: Workspace, *, budget: float | None = None, yield_to: Callable[[], bool] | None = None,
               since: float | None = None, streaming: bool = False,
               behind: Callable[[], bool] | None = None) -> DrainReport:
    """Apply the journal into the graph this process holds open (the read server's), within `budget` seconds
    (counted from `since`, by default now: a served read passes its client's start; `behind`: see `drain`) or
    until `yield_to` says a reader waits; an empty report when the graph is not held or nothing waits."""
    with ws._mutex:
        if ws._held is None or not ws.journal.has_pending():
            return DrainReport()
        report = drain(ws, ws._held, budget=budget, yield_to=yield_to,
                       since=time.monotonic() if since is None else since, streaming=streaming, behind=behind)
        ws._last_drain = report
        return report


def quarantine(ws: Workspace, pending: Pending, report: DrainReport) -> None:
    """Set aside the lines of `pending` that are not applicable records (torn, garbled, malformed)."""
    items: list[dict[str, Any]] = [{"reason": b.reason, "line": b.text, "file": pending.path.name,
                                    "lineno": b.lineno} for b in pending.bad]
    good = []
    for rec in pending.records:
        why = check_record(rec, ws.policy.kinds)
        if why:
            items.append({"reason": why, "record": rec, "file": pending.path.name})
        else:
            good.append(rec)
    if not items:
        return
    pending.records = good
    ws.journal.reject(pending, items)
    report.rejected += len(items)
    warn(f"{len(items)} journal line(s) could not be applied and were moved to "
         f"{ws.journal.rejected_path.relative_to(ws.root)} ({items[0]['reason']}); `kg doctor` shows them")


def apply_batch(ws: Workspace, st: Store, pending: Pending, batch: list[dict[str, Any]],
                report: DrainReport, stop: Callable[[], bool] | None = None) -> tuple[list[str], int]:
    """Apply one batch: the ids applied, and how many of the batch's records were dealt with (all of them,
    unless `stop()` ended it early: see `apply_records`). If it fails on its data (not on the disk), its
    records are applied one by one and the ones that fail alone quarantined, so one record never blocks
    every reader."""
    fired = False

    def cut() -> bool:
        nonlocal fired
        fired = bool(stop is not None and stop())
        return fired

    try:
        done = apply_records(ws, st, batch, stop=cut if stop is not None else None)
        if not fired:
            return done, len(batch)
        applied = set(done)  # it stopped after its last applied record (never before the first)
        return done, max(i for i, r in enumerate(batch) if r.get("id") in applied) + 1
    except StoreError as exc:
        if operational(exc):
            raise
    except _DATA_ERRORS:
        pass
    done, bad = [], []
    for rec in batch:
        try:
            done += apply_records(ws, st, [rec])
        except StoreError as exc:
            if operational(exc):
                raise
            bad.append({"reason": f"the graph refused it: {exc}"[:300], "record": rec, "file": pending.path.name})
        except _DATA_ERRORS as exc:
            bad.append({"reason": f"cannot apply: {type(exc).__name__}: {exc}"[:300], "record": rec,
                        "file": pending.path.name})
    if bad:
        ids = {id(b["record"]) for b in bad}
        pending.records = [r for r in pending.records if id(r) not in ids]
        pending.bad = []
        ws.journal.reject(pending, bad)
        report.rejected += len(bad)
        warn(f"{len(bad)} journal record(s) could not be applied and were moved to "
             f"{ws.journal.rejected_path.relative_to(ws.root)} ({bad[0]['reason']})")
    return done, len(batch)
