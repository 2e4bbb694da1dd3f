"""The aggregates' upkeep for a batch of new entries, done once per batch instead of once per statement.

`Store.run` keeps the tallies (`kg/store/tallies.py`) and the pattern occurrences (`kg/store/aggregates.py`)
exact by reading, around every watched write, the counted fields and out-edges of the nodes it may touch:
four to six statements per write, which were half of a bulk log's cost (39 of 74 ms of CPU per LoCoMo turn).
Applying journal records, kg knows exactly what each of those writes does: a node created with a fresh id,
an edge created (never merged onto one that exists), a new member joining a pattern. So inside `kept`, the
writes named in `NAMES` skip the per-statement upkeep, and the batch's net change is written at its end in
the same transaction: one `tly_add` per changed count, the pending high-priority entries, and one refresh
per pattern touched. Any other watched write inside keeps its usual upkeep, and `kg doctor` (and
tests/integration/test_ingest_upkeep.py) compare the result with a full recount.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from typing import Any

from kg.store import aggregates, tallies

# Writes whose effect the batch states itself: node_create (a fresh id: existence is checked first),
# link_add_* (CREATE, on a node created in this batch), pattern members (a new event, or the earlier events
# of a pattern just made), ingest_thread (a MERGE: counted unless the turn's own auto-links made that edge),
# memory_topic_links (CREATE of an `about` edge per row, each row's node and topic read in the same build).
NAMES = frozenset({"node_create", "pattern_add_new_member", "pattern_add_member", "ingest_thread",
                   "ingest_thread_new", "memory_topic_links",  # CREATE `about` edges: the topic build counts them
                   *(f"link_add_{t}" for t in ("caused_by", "contradicts", "led_to", "related_to", "supports")),
                   *(f"link_add_related_to_{k}" for k in range(2, 6))})  # linking.MANY_MAX


class Upkeep:
    """What a batch changed in the counted tables, written by `flush`."""

    def __init__(self) -> None:
        self.counts: Counter[str] = Counter()
        self.high: list[tuple[str, datetime]] = []
        self.patterns: set[str] = set()

    def node(self, node_id: str, kind: str, entry_type: str | None, status: str | None, priority: str | None,
             at: datetime) -> None:
        """A node created (its id was not in the graph)."""
        self.counts[tallies.node_key(kind, entry_type, status)] += 1
        if tallies.high((kind, entry_type, status, priority, at)):
            self.high.append((node_id, at))

    def edge(self, edge_type: str, n: int = 1) -> None:
        self.counts[tallies.edge_key(edge_type)] += n

    def member(self, pattern: str) -> None:
        """A new `derived_from` edge from `pattern` to an event."""
        self.edge("derived_from")
        self.patterns.add(pattern)

    def flush(self, st: Any) -> None:
        aggregates.refresh(st, self.patterns)
        for key, d in sorted(self.counts.items()):
            if d:
                tallies.bump(st, key, d)
        for node_id, at in self.high:
            st.run("tly_high_add", id=node_id, at=at)


def kept_by(st: Any) -> Upkeep:
    """The batch upkeep open on `st`, or one that is never written (outside `kept`, `Store.run` keeps the
    aggregates itself)."""
    return getattr(st, "_upkeep", None) or Upkeep()


@contextmanager
def kept(st: Any) -> Iterator[Upkeep]:
    """Inside the caller's transaction: the writes in `NAMES` skip `Store.run`'s upkeep, and the batch's net
    change is written when the block ends without an error (dropped with the transaction otherwise). Nested
    use joins the outer batch. A store without that upkeep (a team graph) or whose aggregates are not
    complete (rebuilt on the next open) writes nothing."""
    outer = getattr(st, "_upkeep", None)
    if outer is not None:
        yield outer
        return
    keep = Upkeep()
    if not hasattr(st, "upkeep_by_caller"):  # a team graph keeps no aggregates
        yield keep
        return
    st._upkeep, st.upkeep_by_caller = keep, NAMES
    try:
        yield keep
        st._upkeep, st.upkeep_by_caller = None, frozenset()
        if aggregates.ready(st):
            keep.flush(st)
    finally:
        st._upkeep, st.upkeep_by_caller = None, frozenset()
