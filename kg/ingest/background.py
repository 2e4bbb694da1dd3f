"""Applying acknowledged logs in the background: the thread of a held-open workspace (`with ws:`), and the one
detached applier per workspace that `kg log` leaves behind."""

from __future__ import annotations

import fcntl
import os
import threading
import time
import weakref
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kg.core.paths import try_flock

if TYPE_CHECKING:
    from kg.workspace import Workspace


class BackgroundApplier:
    """`log()` inside `with ws:` answers once the entry is durable in the journal (as `kg log` does) and wakes
    this thread, which drains the journal through `ws.store()`: under the workspace's mutex, so it never works
    in the graph at the same time as the caller, and any read the caller makes drains first (it waits for
    the thread's batch, then applies whatever is left itself). A failure leaves the entries in the journal,
    where the next drain (the caller's next log or read, leaving `with ws:`, or any kg command) applies them.
    Leaving the block does not wait for the thread: it takes the mutex (so a batch in flight ends first) and
    drains what is left itself."""

    def __init__(self, ws: Workspace):
        self.ws = ws
        self.error: BaseException | None = None
        self._wake = threading.Condition()
        self._wanted = False
        self._stopping = False
        self._thread = threading.Thread(target=self._run, name="kg-apply", daemon=True)
        self._thread.start()

    @property
    def alive(self) -> bool:
        return not self._stopping and self._thread.is_alive()

    def kick(self) -> None:
        with self._wake:
            self._wanted = True
            self._wake.notify()

    def stop(self) -> None:
        """End the thread after the batch in flight, if any; what is left stays in the journal."""
        with self._wake:
            self._stopping = True
            self._wake.notify()

    def _run(self) -> None:
        while True:
            with self._wake:
                while not self._wanted and not self._stopping:
                    self._wake.wait()
                if self._stopping:
                    return
                self._wanted = False
            if self.error is not None:
                continue  # the graph failed once; the entries wait in the journal for the caller's next drain
            ws = self.ws
            try:
                with ws._mutex:
                    if self._stopping or ws._held is None:
                        return  # the block was left: its exit drained, or the journal keeps the rest
                    try:
                        ws.drain(if_pending=True)
                    finally:
                        if ws._close_after_batch:  # the block's exit was interrupted waiting for us
                            ws._close_after_batch = False
                            ws._close_held(drain=False)
            except BaseException as exc:  # noqa: BLE001 - kept for the caller; the entries stay journaled
                self.error = exc


def close_at_exit(ref: weakref.ref[Workspace]) -> None:
    ws = ref()
    if ws is not None:
        ws._close_held()


# -- the detached applier: one per workspace ------------------------------------------------------------------
# `kg log` answers once its entry is journaled and leaves a detached process to apply it. With many agents
# logging, one such process per log would each import Kùzu, open the graph and compete for it (on a small
# machine most of the CPU went there, and readers waited behind the queue). So a workspace has one applier
# *slot*: an exclusive `flock` on `memory/.kg/applier.lock`, taken without waiting by the process that is about
# to fork the applier (so one that is queued, forked but not yet running, counts too) and held by the applier
# until it stops. A log that finds the slot taken leaves no process: the holder applies its entry.
#
# The holder drains in bounded, polite batches (it hands the graph to a waiting reader between batches and
# waits for the reader to finish) until the journal is empty, then releases the slot and looks at the journal
# once more: an entry acknowledged after its last look but before the release (whose logger found the slot
# taken) is seen there, and the holder takes the slot again, or leaves it to whoever took it meanwhile, who
# looks again in turn. So no acknowledged entry is left waiting for the next command.

APPLIER_LOCK = "applier.lock"
_claimed: dict[int, float] = {}  # slot -> when it was claimed (epoch seconds): see `detached_applier`


def _slot_file(kg_dir: Path, lane: str | None) -> Path:
    """One slot per journal lane (kg/ingest/journal.py): an applier drains its own lane only, so a log in another
    lane that found the slot taken would wait for the next command."""
    return kg_dir / (APPLIER_LOCK if lane is None else f"applier.{lane}.lock")


def claim_applier(kg_dir: Path, lane: str | None = None) -> int | None:
    """Take the workspace's applier slot (of the journal lane `lane`) without waiting: the file descriptor that
    holds it (inherited by a forked child, which then holds it), or None when an applier is running or queued
    already (or the workspace is unwritable: the log's entry then waits for the next command, as before)."""
    claimed = time.time()
    slot = try_flock(_slot_file(kg_dir, lane))
    if slot is not None:
        _claimed[slot] = claimed
    return slot


def release_applier(slot: int) -> None:
    _claimed.pop(slot, None)
    try:
        fcntl.flock(slot, fcntl.LOCK_UN)
    finally:
        os.close(slot)


def applier_running(kg_dir: Path, lane: str | None = None) -> bool:
    """Whether a detached applier holds (or is about to hold) the slot: a reader need not drain for it."""
    try:
        fd = os.open(_slot_file(kg_dir, lane), os.O_RDONLY)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        return False
    except OSError:
        return True
    finally:
        os.close(fd)  # closing drops the shared lock, if it was taken


def run_applier(ws: Workspace, slot: int, *, drain: Callable[[], Any] | None = None,
                sleep: Callable[[float], None] = time.sleep,
                before_release: Callable[[], None] | None = None,
                served: Callable[[], bool] | None = None) -> int:
    """The detached applier's body: apply the journal while holding `slot` (from `claim_applier`), then release
    it and re-check (see above). Returns how many times it took the slot. `drain` (one polite drain), `sleep`
    and `before_release` (the last moment of a turn) are parameters for the tests. `served()` says a read
    server took the work (it applies the journal between its reads, kg/serve/server.py): the applier then
    leaves it to the server. A failure ends it quietly, with the entries left in the journal for the next
    command (which reports what is wrong)."""
    once = drain or (lambda: ws.drain(if_pending=True))
    turns = 0
    while slot is not None:
        turns += 1
        try:
            if _drain_until_empty(ws, once, sleep, served) in ("served", "away"):
                return turns  # a read server took the work, or the team server stayed away for ~200 rounds (taking
                # the slot again looped for ever, a detached process waking every 0.3 s until it came back)
        except Exception:  # noqa: BLE001 - see the docstring
            return turns
        finally:
            if before_release is not None:
                before_release()
            release_applier(slot)
        slot = claim_applier(ws.kg_dir, ws.journal.lane) if ws.journal.has_pending() else None
    return turns


def _drain_until_empty(ws: Workspace, once: Callable[[], Any], sleep: Callable[[float], None],
                       served: Callable[[], bool] | None = None) -> str:
    """Polite drains until the journal is empty ("empty"), or until a read server takes the work ("served"). A
    drain that stood aside for a waiting reader (or handed the graph over between batches, or the graph stayed
    held past the retry budget) is retried after a short pause; after about 200 rounds that applied nothing
    ("idle"), the caller looks again (the holder of a long hold lets go in the end), unless the last round found
    the team server away ("away"): the entries then wait in the journal for the next command."""
    from kg.core.errors import StoreBusy, TeamGraphBusy

    pause, idle, away = 0.02, 0, False
    while ws.journal.has_pending():
        if served is not None and served():
            return "served"
        try:
            report = once()
            away = False
        except StoreBusy as exc:  # held past the retry budget (a long cycle, a busy machine): wait and try again
            report, away = None, isinstance(exc, TeamGraphBusy)
        if report is not None and (report.applied or report.sessions or report.skipped or report.rejected):
            idle, pause = 0, 0.02
            continue
        idle += 1
        if idle > 200:
            return "away" if away else "idle"
        sleep(pause)
        pause = min(pause * 2, 0.3)
    return "empty"


def detached_applier(ws: Workspace, slot: int) -> None:
    """What the forked child of `kg log` runs: `run_applier` at a lower CPU priority
    (`write.applier_nice`), since nobody waits for it and readers and agents' own commands come first.

    When entries arrive while it drains (agents logging in parallel), it starts the workspace's read server
    if none lives (`serve_readers`): the first read under that load then finds it warm instead of paying its
    start (seconds on a busy machine), and the server applies the journal from then on. Not after a `kg serve
    stop` that ran once its log had answered (when the slot was claimed): a stopped server does not come back
    unasked because an applier, late on a loaded machine, ran after the stop."""
    since = _claimed.get(slot)
    try:
        os.nice(max(0, ws.policy.applier_nice))
    except OSError:
        pass
    run_applier(ws, slot, drain=watching(ws, lambda: ws.drain(if_pending=True), since=since),
                served=lambda: server_applies(ws))


def watching(ws: Workspace, drain: Callable[[], Any], *, since: float | None = None) -> Callable[[], Any]:
    """`drain`, which also starts the read server (once) when agents log in parallel: when the journal holds
    more than the entry that started this applier, or entries were appended while it drained. Started before
    the first drain, the server is warm for the first read under that load instead of starting inline (seconds
    on a busy machine), and the applier does not load Kùzu for a drain the server takes over: that round does
    nothing and `run_applier` hands the work to the server once it listens. `since`: see `serve_readers`."""
    started = False

    def once() -> Any:
        nonlocal started
        if server_starting(ws):
            # (issue 20) a read server lives but does not listen yet: it applies the journal once it does, and
            # an open of the graph here would only make it wait for the lock (at load 13 the applier's open
            # held a fresh server back ~1 s). `run_applier` asks it again after a pause.
            return None
        if not started and ws.journal.pending_count() > 1:
            started = True
            if serve_readers(ws, since=since):
                return None
        report = drain()
        if not started and ws.journal.growing():
            started = True
            serve_readers(ws, since=since)
        return report

    return once


def server_starting(ws: Workspace) -> bool:
    """Whether the workspace's read server lives (holds its lock) but does not answer yet: it is starting."""
    from kg.serve import client, protocol

    # (the socket appears when it listens; a killed server's stale one is replaced then: seen as listening,
    # which only costs the applier its wait)
    return client.enabled() and client.alive(ws.kg_dir) and not (ws.kg_dir / protocol.SOCKET).exists()


def server_applies(ws: Workspace) -> bool:
    """Whether the workspace's read server lives and took a request to apply the journal: it then applies
    it (and everything logged after, between its reads), so the applier need not stay."""
    from kg.serve import client

    if not client.enabled() or not client.alive(ws.kg_dir):
        return False
    return client.hand_over(ws.kg_dir, polite=True, timeout=min(5.0, ws.lock_timeout))


def serve_readers(ws: Workspace, *, since: float | None = None) -> bool:
    """Start the workspace's read server unless one lives, it is switched off (KG_SERVER=0, kg.toml) or the
    workspace is a team graph, or (`since`: when the applier's slot was claimed) `kg serve stop` ran after that
    moment. True when one lives or was started."""
    from kg.serve import client, protocol

    if not client.enabled() or not client.configured(ws.root):
        return False
    protocol.trace("applier starts the server")
    return client.spawn(ws.root, unless_stopped_since=since)
