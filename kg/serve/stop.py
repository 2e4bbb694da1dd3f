"""`kg serve stop`: ask the read server to let go of the graph and wait until it has.

The server answers a stop once the graph is closed, and it folds its write-ahead log into the graph first
(`kg.serve.renew.fold_before_close`): ~0.1 s on most graphs, minutes at a million entries (165 s after 60 logs).
Its progress marker (`kg.serve.progress`) says so, so the stop waits for it as long as the marker says the fold
goes on (saying so once on stderr, as every waiter does; at most KG_MIGRATION_WAIT when set), and its own budget
counts from the fold's end; it never takes a fold for a server that is still starting.
"""

from __future__ import annotations

import os
import select
import time

from kg.serve import client, protocol
from kg.serve.progress import Watch, give_up_line


class StopFailed(Exception):
    """The server did not let go within the wait: the message says why (exit 1, an operational failure)."""


def stop(kg_dir: str | os.PathLike, budget: float) -> bool:
    """Ask the workspace's server to stop and wait until it has: True when one did, False when none runs (or one
    that was starting gave up before it listened). `budget`: seconds to wait for a server that does not answer,
    counted from the end of a fold (or migration) its marker shows. Raises StopFailed past the wait."""
    watch = Watch(kg_dir)
    waited = time.monotonic()
    sock = None
    try:
        while True:
            if sock is None:
                try:
                    sock = protocol.connect(kg_dir, 5.0)
                    protocol.send(sock, {"op": "stop"})
                    protocol.trace("stop asked")
                except OSError:
                    if sock is not None:
                        sock.close()
                    sock = None
                if sock is None and not client.alive(kg_dir):
                    return False  # none, or it never got going
            elif select.select([sock], [], [], 0.02)[0]:  # its answer, once the graph is closed
                try:
                    return bool(protocol.receive(sock).get("ok"))
                except (OSError, ValueError, protocol.Closed):
                    return _gone(kg_dir, watch, budget)  # it closed without a word (killed): gone, or let it go
            if sock is None:
                protocol.trace("stop waits for a starting server")
                time.sleep(0.02)  # starting: it holds its lock and does not listen yet
            waited = _still(watch, waited, budget, _HELD.format(budget=budget) if sock is not None else
                            "the read server is still starting and did not answer; try `kg serve stop` again")
    finally:
        if sock is not None:
            sock.close()


def _gone(kg_dir: str | os.PathLike, watch: Watch, budget: float) -> bool:
    """The server took the stop and closed the connection without answering: it stopped once its lock is free."""
    waited = time.monotonic()
    while client.alive(kg_dir):
        waited = _still(watch, waited, budget, _HELD.format(budget=budget))
        time.sleep(0.02)
    return True


_HELD = ("the read server took the request to stop but did not let go of the graph within {budget:g} s; "
         "try `kg serve stop` again")


def _still(watch: Watch, waited: float, budget: float, late: str) -> float:
    """One look at the server's progress marker while waiting: the time the budget now counts from (a fold or a
    migration in progress: its end, so far now); raises StopFailed past the marker's own wait, or with `late` past
    `budget` seconds without one."""
    migrating = watch.check()
    if migrating is False:
        raise StopFailed(give_up_line(watch.record))
    now = time.monotonic()
    if migrating:
        return now
    if now - waited > budget:
        raise StopFailed(late)
    return waited
