"""Patterns by Pattern-Key from the side index (issues 17 and 22): a key no pattern has is known absent by index.

Kùzu has no secondary index: finding the pattern of a key the graph has not seen read every node's kind, id and key
(`pattern_get`: 112 ms and +17 MB resident at 100k entries, the first `kg log` of each new key, in the read server
too), and the read server kept those pages resident. The side file holds each pattern's key (`pkey`, kg/store/
sidefile.py: a pattern's key never changes after it is created), so the patterns of a key are one SQLite index
read, and the writer's own nodes after the file's last node (its open transaction's, or committed and not synced:
the tail, kg/store/sidelink.py) are looked at in memory. When the file cannot say (a team graph, a file of another
version, behind by more than a writer may read at once) the answer is None and the caller asks the graph.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from kg.store.sidefile import SideIndex, version

_KEYS = ("MATCH (p:Node) WHERE p.kind = 'pattern' AND coalesce(p.pattern_key, '') <> '' AND offset(ID(p)) < $stop "
         "RETURN offset(ID(p)) AS pos, p.pattern_key AS key")
_NODE_KEYS = ("MATCH (n:Node) WHERE coalesce(n.pattern_key, '') <> '' AND offset(ID(n)) < $stop "
              "RETURN offset(ID(n)) AS pos, n.kind AS kind, n.pattern_key AS key")


def pattern_ids(st: Any, key: str) -> list[str] | None:
    """The ids of the patterns whose Pattern-Key is `key` that the graph `st` holds (merged ones too), in id order;
    None when the side index cannot say."""
    from kg.store import sidelink
    from kg.store.sideindex import embedded, open_reader

    if not embedded(st):
        return None
    if getattr(st, "read_only", False):  # a one-off reader: the file when it is in step, else the graph
        side = open_reader(st, open_it=True)
        return _ids(side, key) if side is not None else None
    with sidelink.opened(st) as state:
        if state["have"] is None:
            return None
        found = _ids(state["side"], key) if state["side"] is not None else []
        if found is None:
            return None
        found += [r["id"] for _, r in state["tail"] if r.get("kind") == "pattern" and r.get("pattern_key") == key]
        return sorted(set(found))


def graph_keys(st: Any, stop: int) -> set[tuple[int, str]]:
    """Every keyed pattern's (position, Pattern-Key) among the graph's first `stop` nodes: what `pkey` holds when the
    file is whole (for `kg doctor`; a read of every node's kind)."""
    return {(int(r["pos"]), r["key"]) for r in st._execute_raw(_KEYS, {"stop": stop})}


def _ids(side: SideIndex, key: str) -> list[str] | None:
    try:
        return side.pattern_ids(key) if side.meta("version") == version() else None
    except sqlite3.Error:
        return None


def upgrade(st: Any, side: SideIndex) -> bool:
    """A file of version 6 or 7 (with this kg's stopwords) brought to this version in place, inside the caller's
    transaction, from one read of the graph: 6 gets the keys of the patterns among the nodes it holds (`pkey`),
    6 and 7 every such node's key (`nodekey`; an older kg's rebuild may have left this kg's rows at other
    positions). A catch-up then adds the nodes it lacks as usual. False when the file is of neither version."""
    found = side.meta("version")
    if found not in (version("6"), version("7")):
        return False
    from kg.store.sidestate import BATCH, in_batches

    have, _ = side.stamp()
    if found == version("6"):
        side.db.execute("DELETE FROM pkey")
    side.db.execute("DELETE FROM nodekey")
    for rows in in_batches(st, _NODE_KEYS, {"stop": have}, BATCH):  # streamed: most of 1M events may hold a key
        if found == version("6"):
            side.db.executemany("INSERT OR REPLACE INTO pkey VALUES (?, ?)",
                                [(r["pos"], r["key"]) for r in rows if r["kind"] == "pattern"])
        side.db.executemany("INSERT OR REPLACE INTO nodekey VALUES (?, ?)", [(r["pos"], r["key"]) for r in rows])
    side.db.execute("INSERT OR REPLACE INTO meta VALUES ('version', ?)", (version(),))
    return True
