"""Whole-table reads for exports and analysis: columns, not node objects.

`MATCH (n:Node) RETURN n` makes the Kùzu Python binding build a dict per node with its internal id and label
(about 7 s per 100k nodes in kuzu 0.11.3); returning the same properties as plain columns costs about 1.5 s.
Without pandas or pyarrow (kg depends on neither) the binding has no faster, columnar path: rows are fetched
one by one here too, with no per-row work beyond zipping the column names in.

Labels come from the database's own catalogue (`show_tables`) and are checked against it before they are
formatted in; property names come from `table_info` and are quoted.
"""

from __future__ import annotations

import itertools
import json
import os
from collections.abc import Iterable, Iterator
from datetime import datetime
from pathlib import Path

from kg.core.errors import StoreError
from kg.store import EDGE_TYPES, NODE_COLUMNS, Row, Store, check_label
from kg.store import queries as _queries
from kg.store import strings as _strings
from kg.store.rebuild import drop_fts

__all__ = ["column_names", "copy_rows", "fetch", "fts_drop", "iter_rows", "path_literal",
           "read_relation", "read_table", "run", "run_each", "stage", "table_kinds", "top_patterns", "unstage"]


def fetch(store: Store, cypher: str) -> tuple[list[str], list[list]]:
    """Run parameterless Cypher and return (column names, rows as lists)."""
    unbound = _queries.params_of(cypher)
    if unbound:  # kuzu would run it with the parameters unbound, matching everything
        raise StoreError(f"fetch() takes no parameters; this Cypher has {sorted(unbound)}")
    return store._fetch(cypher, {})


def run(store: Store, name: str) -> list[Row]:
    """A named query without parameters (such as `edges_all`), its rows fetched in bulk."""
    query = store.query(name)
    query.check({})
    columns, rows = fetch(store, query.text)
    return _dicts(columns, rows)


def _dicts(columns: list[str], rows: list[list]) -> list[Row]:
    return [dict(zip(columns, row, strict=True)) for row in rows]


def table_kinds(store: Store) -> dict[str, str]:
    """Every table's name → "NODE" or "REL"."""
    _, rows = fetch(store, "CALL show_tables() RETURN name, type")
    return {name: kind for name, kind in rows}


def _label(store: Store, label: str, kinds: dict[str, str] | None) -> str:
    names = tuple(kinds if kinds is not None else table_kinds(store))
    return check_label(label, names, "table")


def _quote(name: str) -> str:
    if "`" in name:
        raise StoreError(f"cannot read the property {name!r}")
    return f"`{name}`"


def column_names(store: Store, label: str, *, kinds: dict[str, str] | None = None) -> list[str]:
    """A table's property names in schema order (a node table's primary key first)."""
    label = _label(store, label, kinds)
    columns, rows = fetch(store, f"CALL table_info('{label}') RETURN *")
    at = columns.index("name")
    return [row[at] for row in rows]


def read_table(store: Store, label: str, *, skip: Iterable[str] = (), order_by: Iterable[str] = (),
               kinds: dict[str, str] | None = None) -> list[Row]:
    """Every row of a node table as a dict of its properties (less `skip`), ordered by `order_by` columns
    (those the table has)."""
    kinds = kinds if kinds is not None else table_kinds(store)
    label = _label(store, label, kinds)
    skipped = set(skip)
    names = [c for c in column_names(store, label, kinds=kinds) if c not in skipped]
    if not names:
        return []
    order = [c for c in order_by if c in names]
    cypher = (f"MATCH (x:{label}) RETURN " + ", ".join(f"x.{_quote(c)}" for c in names)
              + (" ORDER BY " + ", ".join(f"x.{_quote(c)}" for c in order) if order else ""))
    _, rows = fetch(store, cypher)
    return _dicts(names, rows)


def read_relation(store: Store, label: str, *, kinds: dict[str, str] | None = None) -> list[Row]:
    """Every edge of a relationship table: src_table, src (its primary key), dst_table, dst, then the
    edge's properties; one query per pair of node tables it connects."""
    kinds = kinds if kinds is not None else table_kinds(store)
    label = _label(store, label, kinds)
    names = column_names(store, label, kinds=kinds)
    _, pairs = fetch(store, f"CALL show_connection('{label}') RETURN *")
    out: list[Row] = []
    for src_table, dst_table, src_key, dst_key in (tuple(p[:4]) for p in pairs):
        a = _label(store, src_table, kinds)
        b = _label(store, dst_table, kinds)
        props = "".join(f", r.{_quote(c)}" for c in names)
        _, rows = fetch(store, f"MATCH (a:{a})-[r:{label}]->(b:{b}) RETURN a.{_quote(src_key)}, "
                               f"b.{_quote(dst_key)}{props}")
        for row in rows:
            out.append({"src_table": src_table, "src": row[0], "dst_table": dst_table, "dst": row[1],
                        **dict(zip(names, row[2:], strict=True))})
    return out


# -- bulk writes and key lookups at scale ---------------------------------------------------------------------
def run_each(store: Store, name: str, params: Iterable[dict]) -> list[Row]:
    """A named single-key query run once per parameter set (prepared once), its rows concatenated.

    In kuzu 0.11.3 only `MATCH (n:Node {id: $id})` with a plain parameter is answered from the primary-key
    index. A batch passed as a list is not: `UNWIND $ids AS i MATCH (n {id: i})` and `WHERE n.id IN $ids` scan
    the table (and a two-endpoint `UNWIND $rows MATCH (a {id: r.a}), (b {id: r.b})` builds a cross product
    of the table with itself, which fills a 1 GiB buffer pool at a few hundred thousand nodes). One indexed
    statement per key costs ~0.3 ms whatever the graph's size.

    A write the store keeps something for (`Store.kept_for`: the tallies of `kg status`, the aggregates, a
    remade row) goes through `store.run` each time, which keeps them: straight to the graph, a cycle's
    contradicts edge was never counted (QA4 #4: `kg status` under-reported edges, `kg doctor` found the count off)."""
    query = store.query(name)
    out: list[Row] = []
    kept = getattr(store, "kept_for", None)  # (a team graph keeps no tallies: its statements go as they are)
    if kept is not None and kept(name):
        for p in params:
            out.extend(store.run(name, **p))
        return out
    for p in params:
        query.check(p)
        out.extend(store._execute_raw(query.text, p))
    return out


def iter_rows(store: Store, name: str, **params: object) -> Iterator[tuple]:
    """A named query's rows one at a time, never all in memory (a million texts are ~1 GB as Python rows)."""
    query = store.query(name)
    query.check(params)
    try:
        result = store._conn.execute(store._prepared_statement(query.text), params) if params \
            else store._conn.execute(query.text)
    except RuntimeError as exc:
        raise StoreError(f"graph query failed: {exc}") from None
    while result.has_next():
        yield tuple(result.get_next())


def path_literal(path: Path) -> str:
    """A file path as a Cypher string literal (a workspace under `/tmp/it's` must not break a COPY)."""
    return "'" + str(path).replace("\\", "\\\\").replace("'", "\\'") + "'"


_LAST_TIME: list = [None, ""]  # the last time written and its text: a row's three times are one object


def _json_value(value: object) -> object:
    if value is _LAST_TIME[0]:
        return _LAST_TIME[1]
    if isinstance(value, datetime):  # the text strftime("%Y-%m-%d %H:%M:%S.%f") gives, three times faster
        text = (value.replace(tzinfo=None) if value.tzinfo else value).isoformat(" ", "microseconds")
        _LAST_TIME[:] = value, text
        return text
    raise TypeError(f"cannot write {type(value).__name__} to a bulk load")


_ENCODER = json.JSONEncoder(ensure_ascii=False, default=_json_value)


def copy_rows(store: Store, label: str, rows: Iterable[Row], *, scratch: Path, columns: Iterable[str]) -> int:
    """Load rows into a node table (or, with `src`/`dst` columns, a relationship table) with one `COPY ...
    FROM` a newline-delimited JSON file in `scratch`: lists, quotes and new lines survive as they are, which
    CSV does not promise, and the load is set-based. The table must have no full-text index (see
    `fts_drop`); a relationship's endpoints must exist. `rows` may be a generator: each row is written to the
    file as it comes (an aggregate rebuild's rows are never all in memory). Returns the number of rows."""
    rows = iter(rows)
    first = next(rows, None)
    if first is None:
        return 0
    label = check_label(label, tuple(NODE_TABLES) + STAGING_TABLES + AGGREGATE_TABLES + EDGE_TYPES + LIFECYCLE_TABLES,
                        "table")
    names = list(columns)
    direct = getattr(store, "copy_rows", None)
    if direct is not None:  # a team graph: the rows go to the server, no file (kg/store/falkor_copy.py)
        return direct(label, [first, *rows], names)
    if label == "Meta" and "value" not in names:  # never a NULL value in Meta: kuzu tears it (kg/store/strings.py);
        names.append("value")                       # a FILL after the COPY does not save it, as it does a CREATE's
        first = {**first, "value": ""}
        rows = ({**r, "value": ""} for r in rows)
    if label == "Node":  # '' where a node has none, never NULL: kuzu tears them too (kg/store/strings.py)
        names += [c for c in _strings.EMPTY_NODE_STRINGS if c not in names]
        first = _empty_strings(first)
        rows = map(_empty_strings, rows)
    rename = {"src": "from", "dst": "to"}
    path = scratch / f".bulk-{label}-{os.getpid()}.json"
    n = 0
    try:
        exact = set(first) == set(names) and not set(names) & set(rename)
        encode = _ENCODER.encode  # one encoder: json.dumps with options builds one per row
        keys = [rename.get(c, c) for c in names]
        with open(path, "w", encoding="utf-8") as fh:
            for r in itertools.chain((first,), rows):
                if not exact:
                    r = dict(zip(keys, map(r.get, names), strict=True))
                fh.write(encode(r) + "\n")
                n += 1
        store._execute_raw(f"COPY {label} FROM {path_literal(path)} (file_format='json')", {})
    finally:
        path.unlink(missing_ok=True)
    return n


def _empty_strings(row: Row) -> Row:
    return {**row, **{c: "" for c in _strings.EMPTY_NODE_STRINGS if row.get(c) is None}}


NODE_TABLES = ("Node",)
STAGING_TABLES = ("LcStage",)  # scratch tables a set-based update joins against (made on demand: `stage`)
# maintained aggregates, rebuilt whole (kg/store/aggregates.py)
AGGREGATE_TABLES = ("PatternOcc", "PatternRank", "PendingHigh", "ready_span")
# the lifecycle's tables and edges, loaded by an import of a trail that carries them (kg/ingest/trail_lifecycle.py)
LIFECYCLE_TABLES = ("Change", "Meta", "change_applies", "change_pattern", "proposal_about", "proposal_change",
                    "decision_about")


def fts_drop(store: Store) -> None:
    if store.has_fts():
        drop_fts(store)  # checkpointed at once: kuzu 0.11.3 cannot replay the drop (issue 20)


def newest(store: Store, name: str, *, limit: int, since: datetime | None = None, **params: object) -> list[Row]:
    """The rows of a named `... WHERE n.created_at >= $since ... ORDER BY created_at DESC LIMIT $limit` query
    that returns ids and times only; the caller reads the few rows it lists by key (`run_each`). Sorting two
    columns instead of whole rows (texts included) is 4x faster at 100k nodes. It is still a scan: kuzu 0.11.3
    answers max(created_at) from its statistics but does not skip column chunks for a `>=` filter."""
    if since is None:
        bounds = store.run("nodes_time_bounds")
        since = bounds[0]["lo"] if bounds else None
        if since is None:
            return []
    return store.run(name, since=since, limit=limit, **params)



def top_patterns(store: Store, limit: int, *, exact_at_most: int = 0) -> list[Row]:
    """`pattern_stats_all` for the `limit` most recurring patterns, without deriving every pattern's figures:
    from the maintained PatternRank when the aggregates are complete, else as follows.

    A pattern's derived_from edges bound its recurrence from above, so patterns are taken by that bound, best
    first, their figures derived one by one by key (`pattern_stats_by_id`) until the `limit`-th best
    recurrence beats the next bound: the same rows, in the same order. When more than `exact_at_most`
    patterns tie at the boundary (every pattern seen about as often; by default 2 * limit + 10), one full
    query is cheaper."""
    from kg.store import aggregates

    if aggregates.ready(store):  # the maintained ranking (migration 0007): the cost follows `limit`
        return aggregates.top_patterns(store, limit)

    def order(r: Row) -> tuple:
        return (-r["recurrence"], -(r["last_seen"].timestamp() if r["last_seen"] else 0), r["id"])

    rows: list[Row] = []
    exact_at_most = exact_at_most or 2 * limit + 10
    bounds = list(itertools.islice(iter_rows(store, "bulk_pattern_degrees"), exact_at_most + 1))
    for tried, (pattern, bound) in enumerate(bounds):
        if len(rows) >= limit and rows[limit - 1]["recurrence"] > bound:
            return rows[:limit]
        if tried >= exact_at_most:
            return store.run("pattern_stats_all", limit=limit)
        rows.extend(store.run("pattern_stats_by_id", id=pattern))
        rows.sort(key=order)
    return rows[:limit]


def bulk_load_nodes(store: Store, rows: list[Row], *, chunk: int = 5000) -> None:
    """Create many Node rows at once (imports, benchmarks).

    In kuzu 0.11.3 a multi-row `UNWIND ... CREATE` into a table with a full-text index leaves that index wrong
    for the rest of the process: an old graph's is dropped first (none is built since issue 22). Every row
    must carry every column in NODE_COLUMNS.
    """
    if not rows:
        return
    sets = ", ".join(f"{c}: r.{c}" for c in NODE_COLUMNS)
    fts_drop(store)  # (issue 22) an old graph's; none is built again
    for start in range(0, len(rows), chunk):
        store._execute_raw(f"UNWIND $rows AS r CREATE (:Node {{{sets}}})", {"rows": rows[start:start + chunk]})


_EDGE_COLUMNS = ("src", "dst", "created_at", "manual", "score", "reason")


def bulk_load_edges(store: Store, label: str, rows: list[Row], *, scratch: Path) -> int:
    """Create many edges of one type at once with `COPY ... FROM` a CSV file in `scratch`.

    In kuzu 0.11.3 `UNWIND $rows MATCH (a {id: r.a}), (b {id: r.b})` does not use the primary-key index: it
    costs about 0.6 s per row at 100k nodes. COPY joins endpoints by key in bulk (20k edges in ~0.1 s).
    Every row needs both endpoints to exist; the caller filters.
    """
    import csv

    label = check_label(label, EDGE_TYPES, "edge type")
    if not rows:
        return 0
    path = scratch / f".bulk-{label}-{os.getpid()}.csv"
    try:
        with open(path, "w", newline="", encoding="utf-8") as fh:
            out = csv.writer(fh, quoting=csv.QUOTE_MINIMAL, lineterminator="\n")
            for r in rows:
                at = r.get("created_at")
                out.writerow([r["src"], r["dst"], at.strftime("%Y-%m-%d %H:%M:%S") if at else "",
                              "true" if r.get("manual") else "false", float(r.get("score") or 0.0),
                              " ".join(str(r.get("reason") or "").split())])
        store._execute_raw(f"COPY {label} FROM '{path}' (HEADER=false, DELIM=',', QUOTE='\"', ESCAPE='\"')", {})
    finally:
        path.unlink(missing_ok=True)
    return len(rows)


def stage(store: Store, label: str) -> None:
    """A scratch table (`STAGING_TABLES`) ready and empty for a set-based update, inside the caller's transaction
    (migration 0013: in an embedded graph it exists only while used, as a node table costs ~5-6 MB resident at every
    open even empty; made here, so a rolled-back pass leaves none, and dropped by `unstage` after the commit: Kùzu
    0.11.3 cannot commit a transaction that wrote to a table and dropped it). What a killed pass left is emptied.
    A team graph keeps no tables: its staged nodes are only deleted. Statements prepared against a table made
    again are forgotten (a prepared plan names the table's id)."""
    from kg.store.schema import STAGING_DDL

    label = check_label(label, STAGING_TABLES, "staging table")
    if getattr(store, "backend", "kuzu") == "kuzu":
        store._execute_raw(STAGING_DDL[label], {})
        store.forget_prepared()
    store._execute_raw(f"MATCH (s:{label}) DELETE s", {})


def unstage(store: Store, label: str) -> None:
    """After the transaction that used it (outside any): the scratch table dropped (embedded graph) or emptied."""
    label = check_label(label, STAGING_TABLES, "staging table")
    if getattr(store, "backend", "kuzu") != "kuzu":
        store._execute_raw(f"MATCH (s:{label}) DELETE s", {})
        return
    if label in table_kinds(store):
        store._execute_raw(f"DROP TABLE {label}", {})
        store.forget_prepared()
