"""The reading API behind `Workspace`: `show` (a node and its edges), `list` (nodes newest first, filtered)
and `status` (the counts, what is pending, the top patterns: the one status that the CLI and the MCP server
render). Each takes the workspace first and reads through its `store()`/`reading()` handle."""

from __future__ import annotations

import sqlite3
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from kg import workspace_zone as _zone
from kg.core import clock
from kg.core.entries import choice
from kg.core.errors import NotFound, UsageError
from kg.core.text import nfc
from kg.store import EDGE_TYPES, HIDDEN_COLUMNS, KNOWLEDGE_KINDS, Row, Store, plain

if TYPE_CHECKING:
    from kg.workspace import Workspace


def get_node(st: Store, node_id: str) -> Row:
    """A node's properties (without the hidden index columns), or NotFound."""
    rows = st.run("node_get", id=nfc(node_id))
    if not rows:
        raise NotFound(f"no node {node_id!r}: `kg list` shows the ids")
    return {k: v for k, v in rows[0]["n"].items() if k not in HIDDEN_COLUMNS}


def pattern_of(st: Store, key: str | None) -> dict[str, Any] | None:
    """A pattern's derived recurrence figures, by key."""
    if not key:
        return None
    rows = st.run("pattern_stats", keys=[key])
    return plain(rows[0], hide=HIDDEN_COLUMNS) if rows else None


def show(ws: Workspace, node_id: str) -> dict[str, Any]:
    """A node with its edges in both directions (and, for a pattern, its derived recurrence). A pattern is taken by
    its key too, as `kg resolve` and `kg patterns show` take it; a change (a rule kg applied) by its id, as
    `{"change": ...}`."""
    with ws.reading() as st:
        try:
            node = get_node(st, node_id)
        except NotFound as missing:
            from kg.graph.patterns import find

            try:
                node = find(st, node_id)
            except NotFound:
                change = _change(st, node_id)
                if change is not None:
                    return {"change": change}
                raise missing from None  # no node has that id, no pattern that key: said as for an id
            node_id = node["id"]
        edges = [plain(e, hide=HIDDEN_COLUMNS) for e in st.run("node_edges", id=node_id)]
        if node["kind"] == "pattern":
            node["recurrence"] = pattern_of(st, node.get("pattern_key"))
    edges.sort(key=lambda e: (e["direction"], e["type"], e["other"]))
    return {"node": plain(node, hide=HIDDEN_COLUMNS), "edges": edges}


def _change(st: Store, given: str) -> dict[str, Any] | None:
    """A rule kg applied (a change: `chg-…`, as the brief's Verifications Due names it), or None: its file, block,
    text, pattern, status, verdict, checks and dated evidence (QA9 #6: `kg show` and the MCP show tool found none)."""
    want = given.strip().strip("[]").strip().lower()
    if not want.startswith("chg-"):
        return None
    for c in st.run("lc_changes_all"):
        if str(c["id"]).lower() == want:
            return plain(c, hide=HIDDEN_COLUMNS)
    return None


def list_nodes(ws: Workspace, *, type: str | None = None, status: str | None = None,
               priority: str | None = None, area: str | None = None, since: str | datetime | None = None,
               now: datetime | str | None = None, limit: int = 50) -> list[dict[str, Any]]:
    """Nodes newest first: by node kind or entry type, status, priority, area, and age."""
    kind = entry_type = None
    if type:
        t = type.strip().lower()
        if t in KNOWLEDGE_KINDS:
            kind = t
        elif t in ws.policy.kinds:
            entry_type = t
        else:
            raise UsageError(f"unknown type {type!r}: use one of "
                             f"{', '.join(KNOWLEDGE_KINDS + ws.policy.kinds)}")
    status = choice(status, ws.policy.statuses, "status")
    priority = choice(priority, ws.policy.priorities, "priority")
    since_at = None
    if since:
        since_at = since if isinstance(since, datetime) else clock.parse_since(since, clock.now(now))
    limit = all_or(limit)
    filters = {"kind": kind, "entry_type": entry_type, "status": status, "priority": priority,
               "area": nfc(area).lower() if area else None}
    with ws.reading() as st:
        from kg.store.bulk import run_each  # newest first, read by key: see nodes_newest

        if since and not isinstance(since, datetime):  # again in the store's zone, which its open put in effect
            since_at = clock.parse_since(since, clock.now(now))
        found = newest_in_windows(st, filters, since=since_at, limit=limit)
        rows = run_each(st, "nodes_list_row", ({"id": r["id"]} for r in found))
    return [plain(r, hide=HIDDEN_COLUMNS) for r in rows]


ALL = 2**31 - 1  # a LIMIT that lists every row (`--limit 0`)


def all_or(limit: int) -> int:
    """A listing's `--limit` as a LIMIT: 0 is all, as `kg graph query --limit 0` (QA3 #5a: `kg list` refused it
    alone); more than there are rows is all of them too (a LIMIT past ALL returned none on FalkorDB, and Kùzu's
    takes an INT64)."""
    if limit < 0:
        raise UsageError(f"--limit must be 0 (all) or more, not {limit}")
    return min(limit or ALL, ALL)


FIRST_WINDOW = timedelta(days=1)  # `kg list` looks this far back from the newest node first ...
WIDER = 16  # ... and this many times further each time too few nodes match


def newest_in_windows(st: Store, filters: dict[str, Any], *, since: datetime | None, limit: int) -> list[Row]:
    """`nodes_newest`'s rows (ids and times, newest first), read from the newest day back, the window widened
    until `limit` nodes match or it reaches `since` (or the oldest node): the same rows as one read of the
    whole span, since every node outside a window is older than every node inside it. Kùzu 0.11.3 has no
    index on a time column, so each read scans; what a narrow window saves is sorting and reading the ids of
    every node (a year of entries at 1M nodes). With no filter the query tests no other column
    (`nodes_newest_any`), and with the side index in step it is asked instead (issue 22: the scan of every
    node's time grew with the graph; the side index reads its time index from the newest back)."""
    if all(v is None for v in filters.values()):
        from kg.store.sideindex import open_reader

        side = open_reader(st, open_it=True)
        if side is not None:
            try:
                return [{"id": i, "created_at": t} for i, t in side.newest_ids(since, limit)]
            except sqlite3.Error:  # a damaged side index: the graph's own scan (`kg doctor` rebuilds it)
                pass
    bounds = st.run("nodes_time_bounds")
    hi, lo = (bounds[0]["hi"], bounds[0]["lo"]) if bounds else (None, None)
    if hi is None:
        return []
    floor = max(lo, since) if since is not None else lo
    any_node = all(v is None for v in filters.values())
    span = FIRST_WINDOW
    while True:
        start = max(floor, hi - span)
        rows = (st.run("nodes_newest_any", since=start, limit=limit) if any_node
                else st.run("nodes_newest", since=start, limit=limit, **filters))
        if len(rows) >= limit or start <= floor:
            return rows
        span *= WIDER


def _failed(ws: Workspace) -> dict[str, Any] | None:
    """The last drain's failure while the journal still holds entries (a backlog that fails to apply), with how
    many are waiting."""
    from kg.ingest.drain import last_failure

    found = last_failure(ws)
    if found is None or not ws.journal.has_pending():
        return None
    return {**found, "pending": ws.journal.pending_count(entries=True)}


def _leftovers(ws: Workspace) -> list[dict[str, Any]]:
    """Old files of a compaction beside the graph that no open resolves (kg/store/compact.py `kept`): each a
    copy of the whole graph, which stayed unnamed until a `kg doctor` looked."""
    if getattr(ws, "store_url", None) is not None:
        return []
    from kg.store import compact

    found = []
    for p in compact.kept(ws.graph_path):
        try:
            found.append({"file": p.name, "bytes": p.stat().st_size})
        except OSError:
            continue
    return found


def status(ws: Workspace, *, now: datetime | str | None = None, limit: int = 10) -> dict[str, Any]:
    """The workspace's status: nodes by kind, entries by type and status, edges by type, sessions, the high
    priority entries still pending, the top patterns, the journal's backlog (and, on a team graph, who
    contributed)."""
    from kg.ingest.import_mark import unfinished

    at = clock.now(now)
    with ws.reading() as st:
        counts = st.run("count_by_kind")
        edges = st.run("count_edges")
        sessions = st.run("count_sessions")[0]["n"]
        from kg.store.bulk import run_each, top_patterns  # issue 22: see these

        # ids first (no moment among the parameters: the read server keeps the answer until the graph changes)
        high = run_each(st, "pending_high_row", ({"id": r["id"]} for r in st.run(
            "hooks_pending_high_ids", priorities=["critical", "high"], limit=limit)))
        # the bound-ordered read is Kùzu's (per-id lookups); a team graph answers the one query
        patterns = (top_patterns(st, limit) if ws.store_url is None
                    else st.run("pattern_stats_all", limit=limit))
        team = st.run("team_contributors") if ws.store_url is not None else None  # who contributed
        from kg.lifecycle import revival

        revive_next = revival.due(ws, st, at, patterns)  # expired, recurred: candidates at the next cycle
        from kg.store.sideindex import lost

        graph_lost = lost(st)  # (QA5 #1) entries the graph lost that the side index holds: one lookup
    by_kind: dict[str, int] = {k: 0 for k in KNOWLEDGE_KINDS}
    by_entry: dict[str, int] = {}
    by_status: dict[str, int] = {}
    for row in counts:
        by_kind[row["kind"]] = by_kind.get(row["kind"], 0) + row["n"]
        if row["entry_type"]:
            by_entry[row["entry_type"]] = by_entry.get(row["entry_type"], 0) + row["n"]
            by_status[row["status"]] = by_status.get(row["status"], 0) + row["n"]
    return {
        "workspace": str(ws.root),
        "now": at.isoformat(),
        "zone": clock.zone_name(ws.zone),  # the clock zone of every time kg keeps and shows (kg/workspace_zone.py)
        # False: a workspace an older kg made, whose store records none (each process keeps its own: zone_note)
        "zone_recorded": _zone.is_recorded(ws),
        "zone_note": _zone.note(ws),
        "nodes": by_kind,
        "entries": by_entry,
        "entry_status": by_status,
        # the typed edges between nodes, as `kg graph query` and `kg export graph` count them; apart, the links
        # of the lifecycle (a change to its pattern and its rule, a proposal or decision to what it is about) and
        # of lessons to their topics
        "edges": {row["type"]: row["n"] for row in edges if row["type"] in EDGE_TYPES},
        "links": {row["type"]: row["n"] for row in edges if row["type"] not in EDGE_TYPES},
        "sessions": sessions,
        "pending_high": [plain(r, hide=HIDDEN_COLUMNS) for r in high],
        "patterns": [plain(p, hide=HIDDEN_COLUMNS) for p in patterns],
        "revive_next": revive_next,  # ids of those patterns the next cycle revives (kg/lifecycle/revival.py)
        "journal_rejected": len(ws.journal.rejected()),
        "journal_pending": ws.pending,  # acknowledged, not applied when this was read
        "journal_failed": _failed(ws),  # why the backlog is not applied: the last drain's error (kg/ingest/drain.py)
        "import_unfinished": unfinished(ws),
        "graph_leftovers": _leftovers(ws),
        "graph_lost": graph_lost,
        **({"team": {"graph": ws.store_url.public, "contributors": [plain(r, hide=HIDDEN_COLUMNS) for r in team]}}
           if team is not None else {}),
    }


def recurring(patterns: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The patterns that recurred: one seen once does not recur (`kg status`, its --json and the MCP status)."""
    return [p for p in patterns if (p.get("recurrence") or 0) > 1]
