"""Maintained aggregates (issue 22): reads whose cost follows their answer, not the graph's size.

`lc_promotion_candidates` (the patterns ready to promote, shown by `kg status`, the session brief and used by
the cycle) joined every pattern's member events and read five columns of the whole node table: ~1 s per
100k events, on every status and brief. Kùzu 0.11.3 plans any per-node filter as a scan of the node table
(it has no secondary index), so a faster query over the same tables does not exist. Instead the table
`PatternOcc` (migration 0005) keeps, per pattern, the time, session and status of each counted member event
(kind event, not tagged exit-code-only), oldest first. The window's figures are then computed from the
rows whose time span meets the window (`agg_occ_window_fields`: a scan of a table with one row per pattern,
reading two time columns, and the `min_recurrence`-th newest time), and the few candidates' own fields come
with them, through each row's link to its pattern's node (`occ_of`, migration 0008). `PatternRank` (migration
0007) keeps, per pattern, its event members' number and newest time, the order of `pattern_stats_all`: `kg
status`'s recurring patterns are its first rows, their figures read by key.

Kept exact, in the same transaction as the write:
- `Store.run` calls `before_write` for every named query in `WATCH` (the writes that add or remove a
  pattern's member edge or change a member's status); the patterns it affects are found first and
  recomputed, by key, right after the write, inside the caller's transaction (or one opened for it).
- A bulk load (import) clears the completeness flag before its first write and rebuilds the table after
  its last; a process that dies in between leaves the flag clear, and every reader then uses the full
  query until the next writer's open rebuilds it (`ensure`).
- `kg doctor` compares the table with a full recomputation and rebuilds it with `--repair`.
- A row is never updated in place (kuzu 0.11.3 checkpointed such updates wrong: `agg_occ_new`), and a row whose
  lists disagree with its own times (`torn`, checked once per open) makes the table incomplete: readers ask the
  full query, the writer's open rebuilds it.
`tests/integration/test_aggregates.py` checks the table against the full recomputation after a random
sequence of logs, resolves, cycles, imports and an interrupted import, and every query that writes those
fields against `WATCH`.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterable, Iterator
from datetime import datetime
from typing import Any

from kg.store import spans
from kg.store.schema import meta_key

FLAG_VALUE = "1"
COLUMNS = ("id", "first", "last", "at", "sess", "st", "ev", "xev")

# query name -> how to find the patterns a write affects: ("param", name) the pattern id itself, ("list", name)
# a list of pattern ids, ("pattern", name) a node id when that node is a pattern,
# ("event", name) the patterns of an event id, ("change_rows", name) the patterns of rows' change ids,
# ("staged", None) the patterns of the events in LcStage.
WATCH: dict[str, tuple[str, str | None]] = {
    "pattern_add_member": ("param", "pattern"),
    "pattern_add_new_member": ("param", "pattern"),
    "pattern_move_members": ("param", "src"),
    "status_set": ("event", "id"),
    "status_close": ("event", "id"),
    "status_reopen": ("event", "id"),
    "lc_mark_promoted": ("param", "pattern"),
    "lc_mark_promoted_many": ("list", "patterns"),
    "lc_change_revert": ("change_rows", "rows"),
    "lc_decay_apply": ("staged", None),
    "lc_reinforce": ("event", "id"),
    "edge_add_derived_from": ("pattern", "src"),  # an edge added by hand: a member only when src is a pattern
    "pattern_retire": ("pattern", "id"),  # its status (merged): its ready spans carry it (migration 0010)
}


_WRITES = re.compile(r"\b(CREATE|MERGE|DELETE|SET|COPY)\b", re.I)
_TOUCHED = re.compile(r"derived_from|\.(status|priority|kind|entry_type)\s*=|\bNode\b.*\bDELETE\b"
                      r"|\b(CREATE|MERGE)\b[^;]*(\]->|:Node\b)", re.I | re.S)  # and the tallies' (edges, nodes)


def touches(cypher: str) -> bool:
    """Whether inline Cypher may write what the aggregates hold (edges, nodes, statuses, priorities)."""
    return bool(_WRITES.search(cypher) and _TOUCHED.search(cypher))


# -- pure: the window's figures -------------------------------------------------------------------------------
def window_figures(at: list[datetime], sess: list[str | None], st: list[str | None], since: datetime,
                   now: datetime, ignore: Iterable[str]) -> tuple[int, int, datetime | None]:
    """(recurrence, sessions, last seen) of one pattern inside [since, now], the way lc_promotion_candidates
    counts: events whose status is set and not ignored; sessions are the distinct non-null ones."""
    skip = set(ignore)
    n, sessions, last = 0, set(), None
    for t, s, status in zip(at, sess, st, strict=True):
        if t is None or status is None or t < since or t > now or status in skip:  # NULLs fail the query's tests
            continue
        n += 1
        if s is not None:
            sessions.add(s)
        if last is None or t > last:
            last = t
    return n, len(sessions), last


def times(text: str | list[datetime | None] | None) -> list[datetime | None]:
    """A TIMESTAMP[] as `CAST(... AS STRING)` gives it ("[2026-01-01 10:00:00,,2026-01-02 09:30:00.5]": a NULL
    item is empty, a NULL list None) as datetimes (see `agg_occ_window_fields` for why not the list itself).
    A team graph (FalkorDB) has no such cast and returns the list of datetimes itself."""
    if isinstance(text, list):
        return text
    if not text or text == "[]":
        return []
    return [datetime.fromisoformat(x) if x else None for x in text[1:-1].split(",")]


def _blocking(proposals: list[tuple[str | None, datetime | None]], last_seen: datetime) -> int:
    return sum(1 for status, decided in proposals
               if status == "pending" or (status == "skipped" and decided is not None and decided >= last_seen))


# -- the flag -------------------------------------------------------------------------------------------------
def ready(st: Any) -> bool:
    """Whether the table is complete and none of its rows is torn (cached on the open store; writes here keep the
    cache right). A torn table is answered as an incomplete one: readers ask the full query, the next writer's
    open rebuilds it (`ensure`)."""
    flag = getattr(st, "_agg_ready", None)
    if flag is None:
        st._agg_torn = []  # the torn rows `ensure` says it repaired: found here, not scanned for again
        try:
            flag = any(r["value"] == FLAG_VALUE for r in st.run("agg_flag"))
            st._agg_torn = torn(st) if flag else []
            flag = flag and not st._agg_torn
        except Exception:  # noqa: BLE001 - a graph before migration 0005 has no aggregate
            flag = False
        st._agg_ready = flag
    return flag


def torn(st: Any) -> list[str]:
    """The rows whose lists disagree with their own times or with each other (one scan of the table, once per
    open: `ready`). kuzu 0.11.3 wrote a row's `at` and `sess` items from another row's at a CHECKPOINT after a
    SET of rows' lists (`agg_occ_new`: kg no longer updates rows in place), leaving its `first` and `last` as
    they were; a graph checkpointed so before (`kg serve stop`) still holds such rows. A team graph (FalkorDB)
    has no such checkpoint: nothing to check there."""
    if not spans.kept(st):
        return []
    return [r["id"] for r in st.run("agg_occ_torn")]


def invalidate(st: Any) -> None:
    """Before a bulk write that bypasses `Store.run`'s upkeep: readers use the full query until `rebuild`."""
    st.run("agg_flag_clear")
    st._agg_ready, st._agg_torn = False, []


# -- upkeep ---------------------------------------------------------------------------------------------------
def affected(st: Any, name: str, params: dict[str, Any]) -> set[str]:
    """The patterns a watched write is about to change (read before it runs: a moved member is gone after)."""
    how, key = WATCH[name]
    if how == "param":
        return {params[key]} if params.get(key) else set()
    if how == "list":
        return set(params[key] or ())
    if how == "pattern":
        pid = params[key]
        return {pid} if any(r["kind"] == "pattern" for r in st.run("agg_pattern_live", id=pid)) else set()
    if how == "event":  # and the node itself when it is a pattern: its status and priority are in its spans
        return ({r["id"] for r in st.run("agg_patterns_of_event", id=params[key])}
                | _pattern_itself(st, params[key]))
    if how == "change_rows":
        return {p for row in params[key]  # by the key a row carries (tallies._change_nodes says why)
                for p in ([row["pattern"]] if row.get("pattern") else
                          [r["id"] for r in st.run("agg_patterns_of_change", id=row["id"])])}
    return ({r["id"] for r in st.run("agg_patterns_of_staged")}
            | ({r["id"] for r in st.run("spn_staged_patterns")} if spans.kept(st) else set()))


def _pattern_itself(st: Any, nid: str | None) -> set[str]:
    if not nid or not spans.kept(st):
        return set()
    return {nid} if any(r["kind"] == "pattern" for r in st.run("spn_pattern", id=nid)) else set()


EXCLUDED_TAG = "exit-code-only"  # an event whose only content is an exit status never counts (rules/errors.toml)


def _counted(rows: Iterable[tuple]) -> tuple[list[tuple], list[str]]:
    """(eid, at, session, status) of the members that count, by time then id (the table's order), and the ids
    of the event members that do not (migration 0009's `xev`)."""
    rows = list(rows)
    return (sorted((eid, at, session, status) for eid, at, session, status, tags in rows
                   if EXCLUDED_TAG not in (tags or ())),
            sorted(eid for eid, _, _, _, tags in rows if EXCLUDED_TAG in (tags or ())))


def _row(pid: str, members: list[tuple], excluded: list[str]) -> dict[str, Any]:
    members.sort(key=lambda m: (m[1], m[0]))
    return {"id": pid, "first": members[0][1], "last": max(m[1] for m in members), "at": [m[1] for m in members],
            "sess": [m[2] for m in members], "st": [m[3] for m in members], "ev": [m[0] for m in members],
            "xev": sorted(excluded)}


MANY = 64  # a refresh of more patterns than this reads and writes them in chunks (a decay pass's thousands)
CHUNK = 10_000  # ids per statement: each is one hash join with a table (bulk.run_each: no per-key lookup)


def refresh(st: Any, ids: Iterable[str]) -> None:
    """Recompute these patterns' rows by key (inside the caller's transaction): PatternOcc's and PatternRank's."""
    ids = sorted(set(ids))
    if len(ids) > MANY and spans.kept(st):
        for i in range(0, len(ids), CHUNK):
            _refresh_many(st, ids[i:i + CHUNK])
        return
    for pid in ids:
        rows = [(r["eid"], r["at"], r["session"], r["status"], r["tags"]) for r in st.run("agg_occurrences_of", id=pid)]
        _refresh_one(st, pid, rows, bool(st.run("agg_occ_get", id=pid)), None)


def _refresh_many(st: Any, ids: list[str]) -> None:
    """`refresh` of a chunk of patterns with a handful of statements, whatever their number: their members,
    ranks and rows read in one statement each; the rows that stay rows deleted and made again (never SET:
    `agg_occ_new`), their spans written again, in one statement each. A row made or deleted (never in a decay
    pass) and a rank that changes go by key, as one pattern's refresh does."""
    from kg.store.bulk import iter_rows

    members: dict[str, list[tuple]] = {pid: [] for pid in ids}
    for pid, eid, at, session, status, tags in iter_rows(st, "agg_occurrences_many", ids=ids):
        members[pid].append((eid, at, session, status, tags))
    ranks = {r["id"]: [r] for r in st.run("agg_rank_many", ids=ids)}
    exists = {r["id"] for r in st.run("agg_occ_ids_many", ids=ids)}
    fields = {r["id"]: r for r in st.run("spn_pattern_many", ids=ids)}
    kept_rows: list[dict[str, Any]] = []
    span_rows: list[dict[str, Any]] = []
    for pid in ids:
        rows = members[pid]
        counted, excluded = _counted(rows)
        if not counted or pid not in exists:  # a row made or deleted: by key
            _refresh_one(st, pid, rows, pid in exists, ranks.get(pid, []))
            continue
        _keep_rank(st, pid, _rank(r[1] for r in rows), ranks.get(pid, []))
        row = _row(pid, counted, excluded)
        kept_rows.append(row)
        f = fields.get(pid)
        if f is not None and f["kind"] == "pattern":
            span_rows.extend(spans.span_row(pid, s, f["status"], f["priority"]) for s in spans.spans_of_row(row))
    if kept_rows:  # made anew, never SET (`agg_occ_new`): their spans and links go with the old rows
        st.run("agg_occ_delete_many", ids=[r["id"] for r in kept_rows])
        st.run("agg_occ_new_many", rows=kept_rows)
    # (not a COPY into ready_span: 0.7 s instead of 8 per 10k patterns at 100k, but at 1M the dry run's rollback
    # after it crashed kuzu 0.11.3 with a segmentation fault)
    if span_rows:
        st.run("spn_add_many", rows=span_rows)


def _refresh_one(st: Any, pid: str, rows: list[tuple], exists: bool, rank: list[dict[str, Any]] | None) -> None:
    """One pattern's rows from its member rows (eid, at, session, status, tags); `rank`: its PatternRank rows
    when already read."""
    _keep_rank(st, pid, _rank(r[1] for r in rows), rank)
    members, excluded = _counted(rows)
    if not members:
        if exists:
            st.run("agg_occ_delete", id=pid)
        return
    row = _row(pid, members, excluded)
    if exists:  # made anew, never SET (`agg_occ_new`: a kuzu 0.11.3 checkpoint bug); its link and spans go with it
        st.run("agg_occ_delete", id=pid)
    st.run("agg_occ_new", **row)
    st.run("agg_occ_link", id=pid)  # to its pattern's node (migration 0008)
    spans.write(st, pid, row)  # when it is ready to promote (migration 0010)


def _rank(times: Iterable[datetime | None]) -> tuple[int, datetime | None]:
    """A pattern's (recurrence, last seen) as `pattern_stats` derives them: every event member counts."""
    n, last = 0, None
    for t in times:
        n += 1
        if t is not None and (last is None or t > last):
            last = t
    return n, last


def _keep_rank(st: Any, pid: str, rank: tuple[int, datetime | None], had: list[dict[str, Any]] | None = None) -> None:
    """PatternRank's row of one pattern; `had`: its rows when already read."""
    had = st.run("agg_rank_get", id=pid) if had is None else had
    if not rank[0]:
        if had:
            st.run("agg_rank_delete", id=pid)
    elif not had:
        st.run("agg_rank_new", id=pid, n=rank[0], last=rank[1])
    elif (had[0]["n"], had[0]["last"]) != rank:
        st.run("agg_rank_set", id=pid, n=rank[0], last=rank[1])


def _members(st: Any) -> tuple[dict[str, list[tuple]], dict[str, list[str]], dict[str, tuple[int, datetime | None]]]:
    """Every pattern's counted members (eid, at, session, status), the ids of those it does not count, and its
    (recurrence, last seen), from one read of the graph. At a million entries this is every third event: the
    repeated texts (sessions, statuses) are kept once each, and the ranks as running figures, not lists."""
    from kg.store.bulk import iter_rows

    groups: dict[str, list[tuple]] = {}
    excluded: dict[str, list[str]] = {}
    ranks: dict[str, tuple[int, datetime | None]] = {}
    words: dict[str, str] = {}
    for pid, eid, at, session, status, tags in iter_rows(st, "agg_occurrences_all"):
        n, last = ranks.get(pid, (0, None))
        ranks[pid] = (n + 1, at if at is not None and (last is None or at > last) else last)
        if EXCLUDED_TAG not in (tags or ()):
            if session is not None:
                session = words.setdefault(session, session)
            if status is not None:
                status = words.setdefault(status, status)
            groups.setdefault(pid, []).append((eid, at, session, status))
        else:
            excluded.setdefault(pid, []).append(eid)
    return groups, excluded, ranks


def _all_rows(st: Any) -> tuple[dict[str, dict[str, Any]], dict[str, tuple[int, datetime | None]]]:
    """PatternOcc's rows and PatternRank's (recurrence, last seen), by pattern, from one read of the graph."""
    groups, excluded, ranks = _members(st)
    return {pid: _row(pid, members, excluded.get(pid, [])) for pid, members in groups.items()}, ranks


def _drain(groups: dict[str, list[tuple]], excluded: dict[str, list[str]],
           ready: list[tuple] | None) -> Iterator[dict[str, Any]]:
    """PatternOcc's rows one at a time, each pattern's members let go once its row is written; the rows'
    ready spans (kg/store/spans.py) are added to `ready` (None: a graph that keeps none)."""
    for pid in list(groups):
        row = _row(pid, groups.pop(pid), excluded.get(pid, []))
        if ready is not None:
            ready.extend((pid, s) for s in spans.spans_of_row(row))
        yield row


def rebuild(st: Any) -> int:
    """The whole table from the graph; sets the flag. Returns the number of patterns. The flag is cleared
    first and set last (COPY cannot run inside a transaction): a process that dies between leaves it clear,
    and the next writer's open rebuilds. The rows are written to the COPY's file as they are made."""
    from kg.store import tallies
    from kg.store.bulk import copy_rows

    groups, excluded, ranks = _members(st)
    invalidate(st)
    st.run("agg_occ_clear")
    st.run("agg_rank_clear")
    checkpoint(st)
    ready_spans: list[tuple] | None = [] if spans.kept(st) else None
    count = copy_rows(st, "PatternOcc", _drain(groups, excluded, ready_spans),
                      scratch=st.path.parent, columns=COLUMNS)
    del excluded
    st.run("agg_occ_link_all")
    if ready_spans:
        copy_rows(st, "ready_span", spans.copy_rows_of(ready_spans, spans.patterns(st)), scratch=st.path.parent,
                  columns=spans.COLUMNS)
    del ready_spans
    spans.mark(st)
    copy_rows(st, "PatternRank", ({"id": pid, "n": n, "last": last} for pid, (n, last) in sorted(ranks.items())),
              scratch=st.path.parent, columns=("id", "n", "last"))
    tallies.rebuild(st)  # the counts of `kg status` (kg/store/tallies.py) share the flag
    st.run("agg_flag_set", value=FLAG_VALUE)
    st._agg_ready, st._agg_torn = True, []
    return count


def checkpoint(st: Any) -> None:
    """Write the WAL into the database file before a COPY into a table just cleared. kuzu 0.11.3 bug: after an
    import's rebuild (COPY into PatternOcc) then a cycle whose upkeep rewrote rows' lists (a SET, as then), left
    in the WAL (the store does not checkpoint on close), the next rebuild's DELETE of every row then COPY read
    back wrong TIMESTAMP[] values (`at` held other rows' times; the STRING[] columns were right) under a flag
    saying complete, so promotion windows counted wrong times. Shortest sequence found: three logs, an import,
    a cycle, an inline write (the next open rebuilds). A checkpoint first makes the COPY exact. A team graph
    (FalkorDB: `st.backend`) has no such write-ahead log and no CHECKPOINT statement: nothing to do there."""
    if getattr(st, "backend", "kuzu") == "kuzu":
        st._execute_raw("CHECKPOINT", {})


def ensure(st: Any) -> bool:
    """On a writer's open: build the table when it is not complete (after migration 0005, or an import that
    died) or a row of it is torn (`torn`, said as a repair). True when it was rebuilt."""
    if ready(st) and spans.current(st):
        return False
    bad = getattr(st, "_agg_torn", [])  # (`ready` found them)
    rebuild(st)
    if bad:
        st.repairs.append(f"rebuilt the pattern-occurrence table: {len(bad)} row(s) held times that were not their "
                          f"own ({', '.join(bad[:3])}{', ...' if len(bad) > 3 else ''}; a Kùzu 0.11.3 checkpoint)")
    return True


# -- reading --------------------------------------------------------------------------------------------------
def promotion_candidates(st: Any, *, pattern_statuses: list[str], since: datetime, now: datetime,
                         ignore_statuses: list[str], min_recurrence: int, min_sessions: int) -> list[dict[str, Any]]:
    """The rows of `lc_promotion_candidates`, in its order, from the aggregate: the window's rows with their
    patterns' fields in one query through the rows' links (`agg_occ_window_fields`), and the proposals in
    another (as many rows as the lifecycle's proposals)."""
    return _candidates(st, "agg_occ_window_fields", ("key", "text", "priority", "area"), pattern_statuses, since,
                       now, ignore_statuses, min_recurrence, min_sessions)


def promotion_figures(st: Any, *, pattern_statuses: list[str], since: datetime, now: datetime,
                      ignore_statuses: list[str], min_recurrence: int, min_sessions: int) -> list[dict[str, Any]]:
    """The rows of `lc_promotion_figures` (`lc_promotion_candidates` without key, text and area), in its order,
    from the aggregate: the node table's text is not read for every ready pattern."""
    return _candidates(st, "agg_occ_window_figures", ("priority",), pattern_statuses, since, now,
                       ignore_statuses, min_recurrence, min_sessions)


def _candidates(st: Any, query: str, columns: tuple[str, ...], pattern_statuses: list[str], since: datetime,
                now: datetime, ignore_statuses: list[str], min_recurrence: int,
                min_sessions: int) -> list[dict[str, Any]]:
    figures: dict[str, tuple[int, int, datetime]] = {}
    fields: dict[str, dict[str, Any]] = {}
    nodes: dict[tuple[int, int], str] = {}
    for r in st.run(query, since=since, now=now, min_recurrence=max(min_recurrence, 1)):
        n, sessions, last = window_figures(times(r["at"]), r["sess"], r["st"], since, now, ignore_statuses)
        if last is not None and n >= min_recurrence and sessions >= min_sessions:
            figures[r["id"]] = (n, sessions, last)
            fields[r["id"]] = r
            nodes[_internal(r["node"])] = r["id"]
    if not figures:
        return []
    proposals: dict[str, list[tuple[str | None, datetime | None]]] = {}
    for row in st.run("agg_proposals_about"):
        pid = nodes.get(_internal(row["node"]))
        if pid is not None:
            proposals.setdefault(pid, []).append((row["q_status"], row["q_decided"]))
    statuses = set(pattern_statuses)
    out = []
    for pid in sorted(figures):
        p = fields[pid]
        if p["kind"] != "pattern" or p["status"] not in statuses:
            continue
        n, sessions, last = figures[pid]
        if _blocking(proposals.get(pid, []), last):
            continue
        out.append({"id": pid, **{c: p[c] for c in columns}, "recurrence": n, "sessions": sessions,
                    "last_seen": last})
    out.sort(key=lambda r: (-r["recurrence"], -r["last_seen"].timestamp(), r["id"]))
    return out


def window_events_of(st: Any, *, id: str, since: datetime, now: datetime,
                     ignore_statuses: list[str]) -> list[dict[str, Any]] | None:
    """The rows of `lc_window_events_of` (one pattern's events inside [since, now] whose status is not ignored,
    by time then id) from the pattern's row: its counted members whose time is in the window, and the members
    it does not count, each read by key and tested as the query tests them. None (the query answers) when the
    pattern has no row, or a row from before migration 0009's rebuild."""
    rows = st.run("agg_occ_members", id=id)
    if not rows or rows[0]["ev"] is None or len(rows[0]["ev"]) != len(rows[0]["at"] or ()):
        return None
    r = rows[0]
    wanted = [eid for eid, at in zip(r["ev"], r["at"], strict=True) if at is not None and since <= at <= now]
    skip = set(ignore_statuses)
    out = []
    for e in _events(st, [*wanted, *(r["xev"] or ())]):
        at, status = e.pop("created_at"), e.pop("status")
        del e["session"]
        # as the query's WHERE: a NULL time or status fails its tests
        if e.pop("kind") != "event" or at is None or status is None or not since <= at <= now or status in skip:
            continue
        out.append({"pattern": id, "id": e.pop("id"), "created_at": at, **e})
    out.sort(key=lambda e: (e["created_at"], e["id"]))
    return out


# `agg_event_in_window`'s columns, in its order
EVENT_FIELDS = ("id", "kind", "status", "created_at", "category", "area", "entry_type", "action", "tags", "source",
                "priority", "text", "session")


def _events(st: Any, ids: list[str]) -> list[dict[str, Any]]:
    """`agg_event_in_window`'s rows of these events (those that exist), in order. With the side index a read
    opened already in step (the read server's), the columns that never change after an event is logged come
    from its row, the rest from its kept state (kg/store/sidestate.py) or, not kept, `agg_event_state`'s six by key
    (issue 17: these reads were a third of the brief's time at 100k); an event it does not hold is read whole."""
    from kg.store.sideindex import open_reader

    side = open_reader(st) if ids else None
    try:
        kept = side.rows_by_id(ids) if side is not None else {}
        state = side.state(list(kept)) if kept else {}  # (issue 17) kept current in the side index
    except sqlite3.Error:  # a damaged side index: every column from the graph (`kg doctor` rebuilds it)
        kept, state = {}, {}
    out: list[dict[str, Any]] = []
    for eid in ids:
        base = kept.get(eid)
        if base is None:
            out += st.run("agg_event_in_window", id=eid)
            continue
        rows = [{"id": eid, **state[eid]}] if eid in state else st.run("agg_event_state", id=eid)
        out += [{k: r[k] if k in r else base[k] for k in EVENT_FIELDS} for r in rows]
    return out


def top_patterns(st: Any, limit: int) -> list[dict[str, Any]]:
    """`pattern_stats_all`'s rows for the `limit` most recurring patterns: their ids from PatternRank, their
    figures by key (`stats_of`), so the cost follows `limit`, not the number of patterns."""
    return [row for r in st.run("agg_rank_top", limit=limit) for row in stats_of(st, r["id"])]


def stats_of(st: Any, pid: str) -> list[dict[str, Any]]:
    """`pattern_stats_by_id`'s row for one pattern, from its PatternOcc row (the counted members' times and
    sessions) and the members it does not count, read by key: the query walks every member and reads their
    columns (~12 ms a pattern at 1M events). The query answers a pattern with no row, or one from before
    migration 0009's rebuild."""
    rows = st.run("agg_occ_members", id=pid)
    if not rows or rows[0]["ev"] is None:
        return st.run("pattern_stats_by_id", id=pid)
    r = rows[0]
    times, sessions = list(r["at"] or ()), list(r["sess"] or ())
    for e in _events(st, list(r["xev"] or ())):
        if e["kind"] == "event":
            times.append(e["created_at"])
            sessions.append(e["session"])
    fields = st.run("agg_pattern_fields", id=pid)
    if not fields:
        return []
    known = [t for t in times if t is not None]
    return [{**fields[0], "recurrence": len(times), "sessions": len({s for s in sessions if s is not None}),
             "first_seen": min(known, default=None), "last_seen": max(known, default=None)}]


def proposals(st: Any, *, statuses: list[str]) -> list[dict[str, Any]]:
    """`lc_proposals`' rows: the proposals first (a handful), then each one's node and change by key."""
    out = []
    for q in st.run("agg_proposals_only", statuses=statuses):
        out += [{**q, **link} for link in st.run("agg_proposal_links", key=meta_key("Proposal", q["id"]))]
    return out


def _internal(node: dict[str, int] | int) -> tuple[int, int]:
    """Kùzu's internal id of a node (table, offset), or FalkorDB's (a number): stable between two reads with no
    write between."""
    return (0, node) if isinstance(node, int) else (node["table"], node["offset"])


def differences(st: Any) -> list[str]:
    """How the tables differ from a full recomputation (empty when they are exact): for `kg doctor`."""
    from kg.store import tallies

    rows, ranks = _all_rows(st)
    want = {pid: (r["at"], r["sess"], r["st"], r["ev"], r["xev"]) for pid, r in rows.items()}
    have = {r["id"]: (list(r["at"]), list(r["sess"]), list(r["st"]), None if r["ev"] is None else list(r["ev"]),
                      list(r["xev"] or ())) for r in st.run("agg_occ_all")}
    ranked = {r["id"]: (r["n"], r["last"]) for r in st.run("agg_rank_all")}
    links: dict[str, list[str | None]] = {}
    for r in st.run("agg_occ_links"):
        links.setdefault(r["id"], []).append(r["linked"])
    return ([f"pattern {pid}: {'missing' if pid not in have else 'extra' if pid not in want else 'differs'}"
             for pid in sorted(set(want) | set(have)) if want.get(pid) != have.get(pid)]
            + [f"pattern rank {pid}: {ranked.get(pid)} kept, {ranks.get(pid)} derived"
               for pid in sorted(set(ranks) | set(ranked)) if ranks.get(pid) != ranked.get(pid)]
            + [f"pattern {pid}: linked to {linked}" for pid, linked in sorted(links.items()) if linked != [pid]]
            + spans.differences(st, rows) + tallies.differences(st))
