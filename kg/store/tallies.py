"""Maintained counts for `kg status` (issue 22): its cost follows what it prints, not the graph's size.

`count_by_kind` and `count_edges` scanned the node table and every edge table, and `pending_high_newest`
the node table, on every `kg status` (0.1-0.5 s per 100k entries, growing with the graph). They are kept
instead in two tables (migration 0006): `Tally` (key -> n) with one row per (kind, entry_type, status) of
`Node` and one per type of edge leaving a `Node`, and `PendingHigh` with the pending events at a `HIGH`
priority and their time. The edges whose source is a small table (changes, proposals, decisions, skills)
are counted when read (`tly_count_*`): there are as many as the lifecycle's decisions.

Kept exact like `kg.store.aggregates` (whose flag, rebuild and `kg doctor` check cover these tables too):
`Store.run` reads, before every write named in `WATCH`, the counted fields of the nodes it may change and
the edges of the watched types leaving the nodes it may add edges to (`Anchors`), by key, then again after it, and
applies the difference, in the write's transaction. Each edge is counted at its source node, so a write lists as
anchors the sources of the edges it adds or deletes and the nodes whose fields it sets.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from kg.store.schema import EDGE_TYPES

HIGH = ("critical", "high")  # `kg status` lists these; another list falls back to the full query
SMALL_EDGES = ("change_applies", "change_pattern", "proposal_about", "proposal_change", "decision_about",
               "learned_from")

NODE_EDGES = (*EDGE_TYPES, "about")  # the typed edges between nodes, and a lesson's link to its topic
TALLY = "tally:"  # (migration 0011) a tally is a Meta row keyed by this and its own key


def bump(st: Any, key: str, d: int) -> None:
    """Add `d` to one count, by its Meta row's primary key."""
    st.run("tly_add", key=TALLY + key, id=key, d=d)

# query name -> (its anchors, the edge types it may add or delete at them). Anchors: ("param", p) a node id,
# ("rows", p) the `id` of each row, ("members", p) a pattern and its member events, ("members_list", p) the
# same for a list of patterns, ("change_rows", p) the rule nodes and patterns (with members) of rows' change
# ids, ("staged", None) the nodes in LcStage, ("about_all", None) every `about` edge is deleted. Edges are
# counted at the "param" and "rows" anchors (each edge at its source).
WATCH: dict[str, tuple[tuple[tuple[str, str | None], ...], tuple[str, ...]]] = {
    "node_create": ((("param", "id"),), ()),
    "status_set": ((("param", "id"),), ()),
    "status_close": ((("param", "id"),), ()),
    "status_reopen": ((("param", "id"),), ()),
    "lc_reinforce": ((("param", "id"),), ()),
    "lc_mark_promoted": ((("members", "pattern"),), ()),
    "lc_mark_promoted_many": ((("members_list", "patterns"),), ()),
    "lc_change_revert": ((("change_rows", "rows"),), ()),
    "lc_decay_apply": ((("staged", None),), ()),
    "pattern_add_member": ((("param", "pattern"),), ("derived_from",)),
    "pattern_add_new_member": ((("param", "pattern"),), ("derived_from",)),
    "pattern_move_members": ((("param", "src"),), ("derived_from",)),
    "pattern_retire": ((("param", "into"), ("param", "id")), ("derived_from",)),
    "lc_change_link": ((("param", "node"),), ("derived_from",)),
    "ingest_thread": ((("param", "src"),), ("led_to",)),
    "ingest_thread_new": ((("param", "src"),), ("led_to",)),
    "lc_contradicts_add": ((("param", "a"),), ("contradicts",)),
    "link_add_caused_by": ((("param", "src"),), ("caused_by",)),
    "link_add_contradicts": ((("param", "src"),), ("contradicts",)),
    "link_add_led_to": ((("param", "src"),), ("led_to",)),
    "link_add_related_to": ((("param", "src"),), ("related_to",)),
    # a new node's related_to edges to 2-5 others in one statement (kg/graph/linking.py, inside a bulk batch)
    "link_add_related_to_2": ((("param", "src"),), ("related_to",)),
    "link_add_related_to_3": ((("param", "src"),), ("related_to",)),
    "link_add_related_to_4": ((("param", "src"),), ("related_to",)),
    "link_add_related_to_5": ((("param", "src"),), ("related_to",)),
    "link_add_supports": ((("param", "src"),), ("supports",)),
    "memory_topic_links": ((("rows", "rows"),), ("about",)),
    "edge_add_caused_by": ((("param", "src"),), ("caused_by",)),
    "edge_add_led_to": ((("param", "src"),), ("led_to",)),
    "edge_add_supports": ((("param", "src"),), ("supports",)),
    "edge_add_contradicts": ((("param", "src"),), ("contradicts",)),
    "edge_add_related_to": ((("param", "src"),), ("related_to",)),
    "edge_add_derived_from": ((("param", "src"),), ("derived_from",)),
    "memory_topics_reset": ((("about_all", None),), ()),
}


def node_key(kind: str | None, entry_type: str | None, status: str | None) -> str:
    return json.dumps(["node", kind, entry_type, status])


def edge_key(edge_type: str) -> str:
    return json.dumps(["edge", edge_type])


# -- upkeep ---------------------------------------------------------------------------------------------------
Shape = tuple[str | None, str | None, str | None, str | None, Any]  # kind, entry_type, status, priority, at


def _change_nodes(st: Any, row: dict[str, Any]) -> list[str]:
    """The rule node and the pattern of a change being reverted: by the keys its row carries (lc_change_revert:
    an edge from a change whose row was made anew in this transaction leads to the wrong row in Kùzu 0.11.3)."""
    if row.get("rule") or row.get("pattern"):
        return [n for n in (row.get("rule"), row.get("pattern")) if n]
    return [r["id"] for r in st.run("tly_change_nodes", id=row["id"])]


class Anchors:
    """What a watched write may change: the nodes whose fields it may set, the nodes (and edge types) whose
    edges out it may add or delete, whether it deletes every `about` edge."""

    def __init__(self, st: Any, name: str, params: dict[str, Any]):
        spec, self.types = WATCH[name]
        self.fields: set[str] = set()
        self.edges: set[str] = set()
        self.about_all = False
        self.staged = False
        for how, key in spec:
            value = params.get(key) if key else None
            if how == "param" and value:
                self.edges.add(value)
            elif how == "rows":
                self.edges.update(r["id"] for r in value or () if r.get("id"))
            elif how in ("members", "members_list", "change_rows"):
                patterns = ([value] if how == "members" and value else list(value or ()) if how == "members_list"
                            else [n for row in value or () for n in _change_nodes(st, row)])
                for pid in patterns:
                    self.fields.add(pid)
                    self.fields.update(r["id"] for r in st.run("tly_member_shapes", id=pid))
            elif how == "staged":  # read in one statement (`read`): a first decay pass stages most of a graph
                self.staged = True
            elif how == "about_all":
                self.about_all = True
        self.fields |= self.edges

    def read(self, st: Any) -> tuple[dict[str, Shape], dict[tuple[str, str], int]]:
        """Each node's counted fields (absent: no such node) and its edges out of the watched types."""
        fields: dict[str, Shape] = {}
        for nid in sorted(self.fields):
            for r in st.run("tly_fields", id=nid):
                fields[nid] = (r["kind"], r["entry_type"], r["status"], r["priority"], r["at"])
        if self.staged:  # one join of the staging table with the node table, not two statements per node
            from kg.store.bulk import iter_rows

            words: dict[str, str] = {}  # a first pass at 1M restages ~all nodes: each repeated text kept once,
            for nid, kind, entry_type, status, priority, at in iter_rows(st, "tly_staged_fields"):
                shape = tuple(words.setdefault(w, w) if w is not None else None
                              for w in (kind, entry_type, status, priority))
                # and the time only where it is counted (PendingHigh's): `apply` compares the rest
                fields[nid] = (*shape, at if high((*shape, at)) else None)  # type: ignore[assignment]
        out = {(nid, t): st.run(f"tly_out_{t}", id=nid)[0]["n"] for nid in sorted(self.edges) for t in self.types}
        return fields, out


def high(shape: Shape | None) -> bool:
    return shape is not None and shape[0] == "event" and shape[2] == "pending" and shape[3] in HIGH


def apply(st: Any, before: tuple[dict, dict], after: tuple[dict, dict], about_all: bool) -> None:
    """Write the difference between two `Anchors.read` readings (inside the write's transaction)."""
    delta: Counter = Counter()
    (f0, e0), (f1, e1) = before, after
    drop: list[str] = []
    add: list[dict[str, Any]] = []
    for nid in sorted(set(f0) | set(f1)):
        a, b = f0.get(nid), f1.get(nid)
        if a == b:  # most of a decay pass: the counted fields did not change
            continue
        if a is not None and (b is None or a[:3] != b[:3]):
            delta[node_key(*a[:3])] -= 1
        if b is not None and (a is None or a[:3] != b[:3]):
            delta[node_key(*b[:3])] += 1
        if high(a) and not (high(b) and a[4] == b[4]):
            drop.append(nid)
        if high(b) and not (high(a) and a[4] == b[4]):
            add.append({"id": nid, "at": b[4]})
    _high_writes(st, drop, add)
    for (_, t), n in e1.items():
        delta[edge_key(t)] += n - e0.get((_, t), 0)
    if about_all:
        have = {r["key"]: r["n"] for r in st.run("tly_all")}.get(edge_key("about"), 0)
        delta[edge_key("about")] = -have
    for key, d in sorted(delta.items()):
        if d:
            bump(st, key, d)


HIGH_CHUNK = 20_000  # ids per UNWIND statement: each is one hash join with PendingHigh (bulk.run_each)


def _high_writes(st: Any, drop: list[str], add: list[dict[str, Any]]) -> None:
    """PendingHigh's rows out, then in (a node whose time changed is both): one statement for one row, as
    a log's write has; a decay pass's thousands in chunks of `HIGH_CHUNK` per statement."""
    if len(drop) == 1:
        st.run("tly_high_drop", id=drop[0])
    else:
        for i in range(0, len(drop), HIGH_CHUNK):
            st.run("tly_high_drop_many", ids=drop[i:i + HIGH_CHUNK])
    if len(add) == 1:
        st.run("tly_high_add", **add[0])
    else:
        for i in range(0, len(add), HIGH_CHUNK):
            st.run("tly_high_add_many", rows=add[i:i + HIGH_CHUNK])


# -- reading --------------------------------------------------------------------------------------------------
def count_by_kind(st: Any) -> list[dict[str, Any]]:
    out = []
    for r in st.run("tly_all"):
        key = json.loads(r["key"])
        if key[0] == "node" and r["n"]:
            out.append({"kind": key[1], "entry_type": key[2], "status": key[3], "n": r["n"]})
    return out


def count_edges(st: Any) -> list[dict[str, Any]]:
    out = []
    for r in st.run("tly_all"):
        key = json.loads(r["key"])
        if key[0] == "edge" and r["n"]:
            out.append({"type": key[1], "n": r["n"]})
    for t in SMALL_EDGES:
        n = st.run(f"tly_count_{t}")[0]["n"]
        if n:
            out.append({"type": t, "n": n})
    return out


def pending_high_newest(st: Any, *, priorities: list[str], since: Any, limit: int) -> list[dict[str, Any]] | None:
    """The rows of `pending_high_newest` from the table; None when asked for other priorities."""
    if sorted(set(priorities)) != sorted(HIGH):
        return None
    return st.run("tly_high_newest", since=since, limit=limit)


def patterns(st: Any) -> int:
    """How many pattern nodes there are (any status)."""
    return sum(r["n"] for r in count_by_kind(st) if r["kind"] == "pattern")


def _none_of(st: Any, kind: str, status: str | None = None) -> bool:
    return not any(r["kind"] == kind and (status is None or r["status"] == status) for r in count_by_kind(st))


def free_principles(st: Any) -> list[dict[str, Any]] | None:
    """`lc_free_principles` when the counts show no active principle: no rows, without the node table's scan
    (0.3 s of CPU at 1M nodes). None (the full query) when there are some."""
    return [] if _none_of(st, "principle", "active") else None


def principles(st: Any, *, limit: int) -> list[dict[str, Any]] | None:
    """`memory_principles` when the counts show no principle at all: no rows; None (the full query) else."""
    return [] if _none_of(st, "principle") else None


def _high(priorities: list[str]) -> bool:
    return sorted(set(priorities)) == sorted(HIGH)


def high_ids(st: Any, *, priorities: list[str], limit: int) -> list[dict[str, Any]] | None:
    """`hooks_pending_high_ids` from the table; None when asked for other priorities."""
    return st.run("tly_high_ids", limit=limit) if _high(priorities) else None


def high_count(st: Any, *, priorities: list[str]) -> list[dict[str, Any]] | None:
    """`hooks_pending_high_count` from the table; None when asked for other priorities."""
    return st.run("tly_high_count") if _high(priorities) else None


def watch(st: Any, *, priorities: list[str], limit: int) -> list[dict[str, Any]] | None:
    """`memory_watch` (the newest pending high-priority entries with their fields): ids from the table, the
    rows by key; None when asked for other priorities."""
    if not _high(priorities):
        return None
    from kg.store.bulk import run_each
    from kg.store.sideindex import current_rows

    ids = [r["id"] for r in st.run("tly_high_ids", limit=limit)]
    kept = current_rows(st, ids)  # (issue 17) the side index's rows, kept current: no lookup by key
    cols = ("id", "text", "priority", "entry_type", "area", "created_at", "reinforced_at")
    return [row for i in ids for row in ([{k: kept[i][k] for k in cols}] if i in kept
                                         else run_each(st, "tly_watch_row", [{"id": i}]))]


def node_totals(st: Any) -> list[dict[str, Any]]:
    """`hooks_counts`: every node, and the events among them."""
    nodes = entries = 0
    for r in count_by_kind(st):
        nodes += r["n"]
        entries += r["n"] if r["kind"] == "event" else 0
    return [{"nodes": nodes, "entries": entries if nodes else None}]


def edge_total(st: Any) -> list[dict[str, Any]]:
    """`hooks_edge_count`: the typed edges between nodes (as `kg status`, `kg graph query` and `kg export graph`
    count them: not the lifecycle's or topics' links)."""
    return [{"n": sum(r["n"] for r in count_edges(st) if r["type"] in EDGE_TYPES)}]


# -- rebuilding and checking ----------------------------------------------------------------------------------
def _full(st: Any) -> tuple[dict[str, int], list[tuple[str, Any]]]:
    from kg.store.bulk import iter_rows

    counts: dict[str, int] = {}
    for kind, entry_type, status, n in iter_rows(st, "count_by_kind"):
        counts[node_key(kind, entry_type, status)] = n
    for t in NODE_EDGES:
        n = st.run(f"tly_count_{t}")[0]["n"]
        if n:
            counts[edge_key(t)] = n
    return counts, sorted(iter_rows(st, "tly_high_full", priorities=list(HIGH)))


def rebuild(st: Any) -> None:
    """Both tables from the graph (called by `aggregates.rebuild`, between its flag's clear and set)."""
    from kg.store.aggregates import checkpoint
    from kg.store.bulk import copy_rows

    counts, pending = _full(st)
    st.run("tly_clear")
    st.run("tly_high_clear")
    checkpoint(st)  # the same kuzu bug as PatternOcc's (aggregates.checkpoint) before a COPY into a cleared table
    for key, n in sorted(counts.items()):
        bump(st, key, n)
    copy_rows(st, "PendingHigh", [{"id": i, "at": at} for i, at in pending], scratch=st.path.parent,
              columns=("id", "at"))


def differences(st: Any) -> list[str]:
    """How the tables differ from a full recomputation (empty when exact)."""
    counts, pending = _full(st)
    have = {r["key"]: r["n"] for r in st.run("tly_all") if r["n"]}
    out = [f"count {key}: {have.get(key, 0)} kept, {counts.get(key, 0)} counted"
           for key in sorted(set(counts) | set(have)) if have.get(key, 0) != counts.get(key, 0)]
    kept = [(r["id"], r["at"]) for r in st.run("tly_high_all")]
    if kept != pending:
        out.append(f"pending high-priority entries: {len(kept)} kept, {len(pending)} found")
    return out
