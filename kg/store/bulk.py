"""Whole-table reads for exports and analysis: columns, not node objects.

`MATCH (n:Node) RETURN n` makes the Kùzu Python binding build a dict per node with its internal id and label
(about 7 s per 100k nodes in kuzu 0.11.3); returning the same properties as plain columns costs about 1.5 s.
Without pandas or pyarrow (kg depends on neither) the binding has no faster, columnar path: rows are fetched
one by one here too, with no per-row work beyond zipping the column names in.

Labels come from the database's own catalogue (`show_tables`) and are checked against it before they are
formatted in; property names come from `table_info` and are quoted.
"""

from __future__ import annotations

from collections.abc import Iterable

from kg.errors import StoreError
from kg.store import Row, Store, check_label
from kg.store import queries as _queries

__all__ = ["column_names", "fetch", "read_relation", "read_table", "run", "table_kinds"]


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
