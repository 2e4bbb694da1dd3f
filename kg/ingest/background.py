"""The background thread that applies a held-open workspace's logs to the graph."""

from __future__ import annotations

import threading
import weakref
from typing import TYPE_CHECKING

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
