"""Rows whose lists change are made anew, never SET in place (kuzu 0.11.3's CHECKPOINT bug).

Kùzu 0.11.3 checkpoints a list column as if its entries lay in order and side by side. A SET of a committed row's
list writes the new items at the end of the list data, out of order; a row made in the same checkpoint's span
then reads other rows' items once the CHECKPOINT has run (upstream kuzudb/kuzu PR #5976, never released for
0.11.3). Pattern-occurrence rows were the first found (kg/store/aggregates.py, `agg_occ_new`); the change table's
evidence trail (a verification, a revert, a pause, a human's confirmation) and Meta's skill triggers and tools and
topic keywords were SET the same way, and Meta is shared by every small table's rows (proposals' evidence, a tally
made after a topic rebuild ...). tests/integration/test_list_checkpoint.py holds a plain-Kùzu probe per table and
the kg history that tore a change's evidence.

Each named write in `WRITES` sets the row's other columns in place (no list: safe) and, in its embedded form,
returns per row it wrote `lst_key` and the lists it means (`lst_<column>`); `settle` then deletes each row whose
lists differ and makes it again with every column it had, and every edge it had, in the write's transaction. A
row whose lists are already those (a topic rebuild, most skill saves) is left alone. FalkorDB SETs lists safely: its
variants (`// dialect: falkordb`) are the writes as they were.

The statements are built from Kùzu's own catalogue (`table_info`, `show_connection`), not kept as text: a row
must be made again with every column a later migration adds, and edges of every relationship table that ends at
it; the labels and column names come from the catalogue and are checked against `values.check_label`'s pattern.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

KEY = "lst_key"
PREFIX = "lst_"
FEW_EDGES = 32  # up to this many edges of one kind are made one by one, both ends by key; more in one UNWIND
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


@dataclass(frozen=True)
class Write:
    table: str
    key: str  # the table's primary key
    lists: tuple[str, ...]
    rows: str = ""  # the lists come from this parameter's rows (`id` and the columns) instead of returned columns


WRITES: dict[str, Write] = {
    "lc_change_update": Write("Change", "id", ("evidence",)),
    "lc_change_revert": Write("Change", "id", ("evidence",), rows="rows"),
    "lc_change_confirm": Write("Change", "id", ("evidence",)),
    "lc_change_pause": Write("Change", "id", ("evidence",)),
    "memory_skill_upsert": Write("Meta", "key", ("triggers", "tools")),
    "memory_topic_upsert": Write("Meta", "key", ("keywords",)),
}


def kept(st: Any) -> bool:
    """Only the embedded store needs it (a team graph on FalkorDB SETs its lists)."""
    return getattr(st, "backend", "kuzu") == "kuzu"


def settle(st: Any, name: str, params: dict[str, Any], rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """After the named write ran (inside its transaction): make anew each row whose lists it means to change;
    returns its rows as the caller knows them (the `lst_` columns taken out, rows of nothing else dropped)."""
    spec = WRITES[name]
    wanted: dict[Any, dict[str, Any]] = {}
    if spec.rows:
        for r in params.get(spec.rows) or ():
            wanted[r["id"]] = {c: r[c] for c in spec.lists}
    out = []
    for row in rows:
        if row.get(KEY) is not None:
            wanted[row[KEY]] = {c: row[PREFIX + c] for c in spec.lists}
        rest = {c: v for c, v in row.items() if not c.startswith(PREFIX)}
        if rest:
            out.append(rest)
    for key, lists in wanted.items():
        remake(st, spec.table, spec.key, key, lists)
    return out


@contextmanager
def rehearsing(st: Any) -> Iterator[None]:
    """A dry run's transaction, which is rolled back: its lists are SET in place (`remake`). Nothing it writes
    is ever checkpointed, so the bug the remake avoids cannot reach it, and the remake's own hazard does: in the
    same uncommitted transaction Kùzu 0.11.3 reads a row made anew through its edges as another row (QA2 #5: a
    dry run's export read a confirmed change as a second copy of SOUL.md's and predicted "AGENTS.md: remove" and
    "SOUL.md: update", which the real cycle, reading after its commit, never did)."""
    st.__dict__["_rehearsing"] = True
    try:
        yield
    finally:
        st.__dict__.pop("_rehearsing", None)


def remake(st: Any, table: str, key: str, value: Any, lists: dict[str, Any]) -> bool:
    """The row `table.key = value` with these lists: deleted and made again with its other columns and its edges
    when a list differs (True), else untouched. No row: nothing. In a rehearsal (`rehearsing`) SET in place."""
    node = f"MATCH (n:{_name(table)} {{{_name(key)}: $k}})"
    now = st._execute_raw(f"{node} RETURN " + ", ".join(f"n.{_name(c)} AS {c}" for c in lists), {"k": value})
    if not now or all(now[0][c] == v for c, v in lists.items()):
        return False  # no row, or its lists are those already: one read of the lists alone
    if st.__dict__.get("_rehearsing"):
        names = sorted(lists)
        st._execute_raw(f"{node} SET " + ", ".join(f"n.{_name(c)} = $l{i}" for i, c in enumerate(names)),
                        {"k": value, **{f"l{i}": lists[c] for i, c in enumerate(names)}})
        return True
    found = st._execute_raw(f"{node} RETURN n", {"k": value})
    props = {c: v for c, v in found[0]["n"].items() if not c.startswith("_")}
    props.update(lists)
    edges = [(rel, out, other, other_key, _edges(st, table, key, value, rel, out, other, other_key))
             for rel, out, other, other_key in _connections(st, table)]
    st._execute_raw(f"{node} DETACH DELETE n", {"k": value})
    # a null is written only where the column's default is not null (Meta's 60 columns, mostly null in a row)
    columns = sorted(c for c, v in props.items() if v is not None or c in _defaulted(st, table))
    st._execute_raw(f"CREATE (:{table} {{{', '.join(f'{_name(c)}: $p{i}' for i, c in enumerate(columns))}}})",
                    {f"p{i}": props[c] for i, c in enumerate(columns)})
    for rel, out, other, other_key, found_edges in edges:
        if found_edges:
            _relink(st, table, key, value, rel, out, other, other_key, found_edges)
    return True


def _name(name: str) -> str:
    if not _NAME.match(name):
        from kg.core.errors import StoreError

        raise StoreError(f"{name!r} is not a table or column name kg can write")
    return name


def _connections(st: Any, table: str) -> list[tuple[str, bool, str, str]]:
    """The relationship tables with an end at `table`: (name, out of it, the other table, its key). Kept per
    open graph: the schema changes only in migrations, before any write."""
    cache = st.__dict__.setdefault("_remake_links", {})
    if table not in cache:
        found = []
        for t in st._execute_raw("CALL show_tables() RETURN name, type", {}):
            if t["type"] != "REL":
                continue
            for c in st._execute_raw(f"CALL show_connection('{_name(t['name'])}') RETURN *", {}):
                src, dst, src_key, dst_key = (c["source table name"], c["destination table name"],
                                              c["source table primary key"], c["destination table primary key"])
                if src == table:
                    found.append((t["name"], True, _name(dst), _name(dst_key)))
                if dst == table and src != table:  # (an edge from a row to itself is read once, going out)
                    found.append((t["name"], False, _name(src), _name(src_key)))
        cache[table] = found
    return cache[table]


def _defaulted(st: Any, table: str) -> set[str]:
    """The columns of `table` whose default is not null (left out of a CREATE, they would not be null)."""
    cache = st.__dict__.setdefault("_remake_defaults", {})
    if table not in cache:
        info = st._execute_raw(f"CALL table_info('{_name(table)}') RETURN *", {})
        cache[table] = {r["name"] for r in info if str(r.get("default expression", "NULL")).upper() != "NULL"}
    return cache[table]


def _types(st: Any, rel: str) -> dict[str, str]:
    cache = st.__dict__.setdefault("_remake_types", {})
    if rel not in cache:
        cache[rel] = {r["name"]: r["type"] for r in st._execute_raw(f"CALL table_info('{_name(rel)}') RETURN *", {})}
    return cache[rel]


def _edges(st: Any, table: str, key: str, value: Any, rel: str, out: bool, other: str,
           other_key: str) -> list[tuple[Any, dict[str, Any]]]:
    arrow = f"-[r:{rel}]->(m:{other})" if out else f"<-[r:{rel}]-(m:{other})"
    rows = st._execute_raw(f"MATCH (n:{table} {{{key}: $k}}){arrow} RETURN m.{other_key} AS other, r", {"k": value})
    return [(r["other"], {c: v for c, v in r["r"].items() if not c.startswith("_")}) for r in rows]


def _relink(st: Any, table: str, key: str, value: Any, rel: str, out: bool, other: str, other_key: str,
            edges: list[tuple[Any, dict[str, Any]]]) -> None:
    """The row's edges of one kind made again, to the same rows, with the same properties."""
    types = _types(st, rel)
    columns = sorted(types)
    arrow = "(n)-[:{rel} {{{props}}}]->(m)" if out else "(m)-[:{rel} {{{props}}}]->(n)"
    if len(edges) <= FEW_EDGES:
        make = arrow.format(rel=rel, props=", ".join(f"{_name(c)}: $p{i}" for i, c in enumerate(columns)))
        text = f"MATCH (n:{table} {{{key}: $k}}), (m:{other} {{{other_key}: $o}}) CREATE {make}"
        for o, props in edges:
            st._execute_raw(text, {"k": value, "o": o, **{f"p{i}": props.get(c) for i, c in enumerate(columns)}})
        return
    # many (a topic's `about` edges): one statement; CAST, as a column null in every row has no type in an UNWIND
    make = arrow.format(rel=rel, props=", ".join(f"{_name(c)}: CAST(e.p{i} AS {types[c]})"
                                                 for i, c in enumerate(columns)))
    text = f"MATCH (n:{table} {{{key}: $k}}) UNWIND $edges AS e MATCH (m:{other} {{{other_key}: e.o}}) CREATE {make}"
    st._execute_raw(text, {"k": value, "edges": [{"o": o, **{f"p{i}": props.get(c) for i, c in enumerate(columns)}}
                                                 for o, props in edges]})


# -- what a checkpoint tore before (`kg doctor`) ---------------------------------------------------------------------
KIND_LISTS = {"topic": ("keywords",), "skill": ("triggers", "tools"), "proposal": ("evidence",)}
_DAY = re.compile(r"^(\d{4}-\d{2}-\d{2})")


def torn(st: Any) -> tuple[list[str], list[str]]:
    """The rows whose lists a checkpoint tore, where that can be seen: Meta rows holding a list their kind never
    has (another row's items; repairable: `clear`), and changes whose evidence holds a line dated before the change
    was applied (another change's trail; kg cannot tell its own lines back). Embedded graphs only."""
    if not kept(st):
        return [], []
    meta = [r["key"] for r in st.run("rmk_meta_lists")]
    changes = []
    for r in st.run("rmk_change_evidence"):
        day = r["applied_at"].date().isoformat()
        if any((m := _DAY.match(line or "")) and m.group(1) < day for line in r["evidence"]):
            changes.append(r["id"])
    return meta, changes


def clear(st: Any, keys: list[str]) -> int:
    """The Meta rows `torn` named made anew without the lists their kind never has (in one transaction)."""
    every = {c for cols in KIND_LISTS.values() for c in cols}
    done = 0
    with st.transaction():
        for key in keys:
            found = st.run("rmk_meta_kind", key=key)
            if found:
                own = KIND_LISTS.get(found[0]["kind"], ())
                done += remake(st, "Meta", "key", key, {c: None for c in every - set(own)})
    return done
