"""Kùzu's Cypher as FalkorDB runs it: the few mechanical differences, the schema, and value conversion.

The named queries are written for Kùzu. Where the two dialects differ only in spelling, the query is rewritten
here (checked by tests/integration/test_falkordb_store.py, which runs every case on both backends):

| Kùzu                         | FalkorDB                 |
|------------------------------|--------------------------|
| `CAST(x AS INT64)`           | `toInteger(x)`           |
| `CAST(l AS STRING)` (a list) | `l`                      |
| `label(r)` (a relationship)  | `type(r)`                |
| `list_contains(l, x)`        | `(x IN l)`               |
| `list_append(l, x)`          | `(l + [x])`              |
| `rels(p)`                    | `relationships(p)`       |
| `timestamp('2026-01-02 03:04:05')`, `timestamp($t)` | the stored text form |
| `EXISTS { MATCH (q:L)-[..]->(n) }` | `(:L)-[..]->(n)`   |
| `CREATE (n:Node {...})`      | the same, with the columns' DEFAULTs (FalkorDB has no typed tables) |

Where they differ in kind (the full-text index procedures, shortest paths) the `.cypher` file carries a
`// dialect: falkordb` variant beside the Kùzu query.

FalkorDB has no temporal types: a datetime is stored as fixed-width ISO text (`2026-01-02T03:04:05.000000`),
which orders and compares the way the datetimes do, and read back as a datetime. Its arrays hold no null: a
null item of a list is stored as a marker text and read back as None.
"""

from __future__ import annotations

import re
from datetime import datetime
from functools import cache
from typing import Any

from kg.store.schema import migrations

DIALECT = "falkordb"

_REWRITES: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"\bCAST\((.+?)\s+AS\s+INT64\)", re.S), r"toInteger(\1)"),
    # Kùzu's text form of a list exists only to dodge its binding's leak (`agg_occ_window_fields`): the server
    # gives the list itself, which `aggregates.times` takes as it is
    (re.compile(r"\bCAST\(([\w.]+)\s+AS\s+STRING\)"), r"\1"),
    (re.compile(r"\blabel\((\w+)\)"), r"type(\1)"),
    (re.compile(r"\blist_contains\(([\w.]+),\s*([^()]+?)\)"), r"(\2 IN \1)"),
    (re.compile(r"\blist_append\(([\w.]+),\s*([^()]+?)\)"), r"(\1 + [\2])"),
    (re.compile(r"\brels\((\w+)\)"), r"relationships(\1)"),
    # a timestamp from text: the stored form is fixed-width ISO text (see below); seconds-precision input
    (re.compile(r"\btimestamp\((\$\w+)\)"), r"left(replace(\1, ' ', 'T') + '.000000', 26)"),
    # a one-pattern existential subquery as a pattern predicate, its new variable dropped
    (re.compile(r"\bEXISTS\s*\{\s*MATCH\s+\(\w+:(\w+)\)([^{}]*?)\s*\}"), r"(:\1)\2"),
)
_CREATE = re.compile(r"\bCREATE\s*\((\w*):(\w+)\s*\{")
_TIME = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}$")
_TABLE = re.compile(r"CREATE NODE TABLE(?: IF NOT EXISTS)?\s+(\w+)\s*\((.*)\)\s*$", re.S)
_ALTER = re.compile(r"ALTER TABLE\s+(\w+)\s+ADD\s+(\w+)\s+[\w\[\]]+(?:\s+DEFAULT\s+(.+))?$", re.S)
_REL = re.compile(r"CREATE REL TABLE(?: IF NOT EXISTS)?\s+(\w+)\s*\(\s*FROM\s+(\w+)\s+TO\s+(\w+)\s*,?(.*)\)\s*$", re.S)
_KEY = re.compile(r"^\s*(\w+)\s+[\w\[\]]+\s+PRIMARY KEY", re.M)
_COLUMN = re.compile(r"^\s*(\w+)\s+[\w\[\]]+", re.M)
_TIMESTAMP_COLUMN = re.compile(r"\b(\w+)\s+TIMESTAMP\b")
_DROP = re.compile(r"DROP TABLE(?: IF EXISTS)?\s+(\w+)\s*$")
_RENAME = re.compile(r"ALTER TABLE\s+(\w+)\s+RENAME TO\s+(\w+)\s*$")

# Statements a migration needs on a team graph after one of its own (by the statement's start): a team graph's
# ManagedBlock rows also name their workspace and block (rules/queries/lifecycle.cypher, falkordb dialect), which
# migration 0011's copy into Meta carries over here.
_AFTER: dict[str, tuple[str, ...]] = {
    "MATCH (b:ManagedBlock) CREATE (:Meta": (
        "MATCH (b:ManagedBlock) MATCH (m:Meta {key: 'block:' + b.id}) SET m.workspace = b.workspace, "
        "m.block = b.block",),
}


_TIMESTAMP_LITERAL = re.compile(r"\btimestamp\('([^']*)'\)")


def translate(text: str) -> str:
    """A Kùzu query as FalkorDB runs it (see the table in this module's docstring)."""
    text = _TIMESTAMP_LITERAL.sub(lambda m: f"'{to_server(datetime.fromisoformat(m.group(1)))}'", text)
    for pattern, repl in _REWRITES:
        text = pattern.sub(repl, text)
    defaults = schema().defaults

    def with_defaults(m: re.Match[str]) -> str:
        extra = defaults.get(m.group(2))
        if not extra:
            return m.group(0)
        body = text[m.end():]
        given = set(re.findall(r"(\w+)\s*:", body[:body.find("}")]))
        add = "".join(f"{col}: {value}, " for col, value in extra.items() if col not in given)
        return m.group(0) + add

    return _CREATE.sub(with_defaults, text)


class Schema:
    """What the Kùzu migrations declare, read for FalkorDB: each node table's key and columns, and the
    columns' defaults (FalkorDB is schema-free: a property never set reads as null)."""

    def __init__(self) -> None:
        self.keys: dict[str, str] = {"Meta": "key"}
        self.columns: dict[str, list[str]] = {"Meta": ["key", "value"]}
        self.defaults: dict[str, dict[str, str]] = {}
        self.rels: dict[str, tuple[str, str, list[str]]] = {}  # name -> (from table, to table, columns)
        self.times: set[str] = set()  # the columns declared TIMESTAMP (a name means the same in every table)
        for _, statements in migrations():
            for statement in statements:
                self._read(statement)

    def _read(self, statement: str) -> None:
        self.times.update(_TIMESTAMP_COLUMN.findall(statement))
        table = _TABLE.match(statement.strip())
        if table:
            label, body = table.groups()
            key = _KEY.search(body)
            self.keys[label] = key.group(1) if key else "id"
            self.columns[label] = [c for c in _COLUMN.findall(body.replace(",", "\n"))]
            return
        rel = _REL.match(statement.strip())
        if rel:
            name, src, dst, body = rel.groups()
            self.rels[name] = (src, dst, _COLUMN.findall(body.replace(",", "\n")))
            return
        alter = _ALTER.match(statement.strip())
        if alter:
            label, column, default = alter.groups()
            self.columns.setdefault(label, []).append(column)
            if default is not None:
                self.defaults.setdefault(label, {})[column] = default.strip()
            return
        drop = _DROP.match(statement.strip())
        if drop:  # (migration 0011) a table merged into another is gone from the catalogue
            for table in (self.keys, self.columns, self.defaults, self.rels):
                table.pop(drop.group(1), None)
            return
        rename = _RENAME.match(statement.strip())
        if rename:  # (migration 0011) a relationship table made again under a new name takes the old one back
            old, new = rename.groups()
            for table in (self.keys, self.columns, self.defaults, self.rels):
                if old in table:
                    table[new] = table.pop(old)

    def index_statements(self) -> list[str]:
        """Range indexes on every table's key and on the Node columns the queries filter by."""
        out = [f"CREATE INDEX FOR (n:{label}) ON (n.{key})" for label, key in sorted(self.keys.items())]
        out += [f"CREATE INDEX FOR (n:Node) ON (n.{c})" for c in ("kind", "pattern_key", "session", "status")]
        return out


@cache
def schema() -> Schema:
    return Schema()


_CATALOGUE = re.compile(
    r"^\s*CALL\s+(show_tables|table_info|show_connection)\(\s*(?:'(\w+)')?\s*\)\s+RETURN\s+(.+?)\s*$", re.I | re.S)


def catalogue(cypher: str) -> tuple[list[str], list[list[Any]]] | None:
    """Kùzu's catalogue calls (`show_tables`, `table_info`, `show_connection`: kg/store/bulk.py reads whole
    tables by them), answered from the schema the migrations declare; None for any other statement."""
    m = _CATALOGUE.match(cypher)
    if m is None:
        return None
    call, table, returned = m.group(1).lower(), m.group(2), [c.strip() for c in m.group(3).split(",")]
    s = schema()
    if call == "show_tables":
        columns = ["id", "name", "type", "database name", "comment"]
        rows = [[i, n, "NODE", "local(kuzu)", ""] for i, n in enumerate(sorted(s.columns))]
        rows += [[len(rows) + i, n, "REL", "local(kuzu)", ""] for i, n in enumerate(sorted(s.rels))]
    elif call == "table_info" and table in s.columns:
        key = s.keys.get(table)
        columns = ["property id", "name", "type", "default expression", "primary key"]
        rows = [[i, c, "", "", c == key] for i, c in enumerate(s.columns[table])]
    elif call == "table_info" and table in s.rels:
        columns = ["property id", "name", "type", "default expression", "storage_direction"]
        rows = [[i, c, "", "", "both"] for i, c in enumerate(s.rels[table][2])]
    elif call == "show_connection" and table in s.rels:
        src, dst, _ = s.rels[table]
        columns = ["source table name", "destination table name", "source table primary key",
                   "destination table primary key"]
        rows = [[src, dst, s.keys.get(src, "id"), s.keys.get(dst, "id")]]
    else:
        raise ValueError(f"no table named {table!r}")
    if returned != ["*"]:
        at = [columns.index(c) for c in returned]
        columns, rows = returned, [[r[i] for i in at] for r in rows]
    return columns, rows


def data_statements(name: str) -> list[str]:
    """The statements of one migration that change data rather than declare tables (FalkorDB needs no DDL),
    translated; an added column's default is set on the nodes that lack it."""
    out: list[str] = []
    rels = {m.group(1) for _, statements in migrations() for s in statements if (m := _REL.match(s.strip()))}
    for mig, statements in migrations():
        if mig != name:
            continue
        # (0011) a relationship table made again under a new name, its edges copied, renamed back: FalkorDB's
        # edges have no table, so the copies are made under the old name at once (the old edges go with the
        # nodes of their merged end) and the drop and rename of the table are nothing to do
        renamed = dict(m.groups() for s in statements if (m := _RENAME.match(s.strip())))
        for statement in statements:
            s = statement.strip()
            for old, new in renamed.items():
                s = re.sub(rf"\[(\w*):{old}\b", rf"[\1:{new}", s)
            if _RENAME.match(s) or (_DROP.match(s) and _DROP.match(s).group(1) in rels):
                continue
            alter = _ALTER.match(s)
            if alter:
                label, column, default = alter.groups()
                if default is not None:
                    out.append(f"MATCH (n:{label}) WHERE n.{column} IS NULL SET n.{column} = {default.strip()}")
            elif _DROP.match(s):  # the label's nodes go (its rows were copied by the statements before)
                out.append(f"MATCH (n:{_DROP.match(s).group(1)}) DETACH DELETE n")
            elif not re.match(r"(CREATE (NODE|REL) TABLE|CALL (CREATE|DROP)_FTS_INDEX|ALTER TABLE)", s):
                out.append(translate(s))
                out += [extra for start, extras in _AFTER.items() if s.startswith(start) for extra in extras]
    return out


# A FalkorDB array holds no null (a pattern's per-member sessions may be unknown: kg/store/aggregates.py), so a
# null item is stored as this text and read back as None.
_NULL_ITEM = "\u2400kg:null\u2400"


def to_server(value: Any) -> Any:
    """A parameter value as FalkorDB holds it (datetimes as fixed-width ISO text)."""
    if isinstance(value, datetime):  # isoformat writes the same text as strftime, 2.5x faster
        return value.isoformat(timespec="microseconds") if value.tzinfo is None \
            else value.strftime("%Y-%m-%dT%H:%M:%S.%f")
    if isinstance(value, (list, tuple)):
        return [_NULL_ITEM if v is None else to_server(v) for v in value]
    if isinstance(value, dict):
        return {k: to_server(v) for k, v in value.items()}
    return value


def from_server(value: Any) -> Any:
    """A result value as Kùzu would give it: datetimes back, nodes and relationships as dicts."""
    if isinstance(value, str):
        return datetime.fromisoformat(value) if len(value) == 26 and _TIME.match(value) else value
    if isinstance(value, list):
        return [None if v == _NULL_ITEM else from_server(v) for v in value]
    labels = getattr(value, "labels", None)
    if labels is not None and hasattr(value, "properties"):  # a node
        label = labels[0] if labels else ""
        props = {c: None for c in schema().columns.get(label, ())}
        props.update({k: from_server(v) for k, v in value.properties.items()})
        return {"_id": _internal(value), "_label": label, **props}
    if hasattr(value, "relation") and hasattr(value, "properties"):  # a relationship
        return {"_src": _internal(value.src_node), "_dst": _internal(value.dest_node), "_label": value.relation,
                **{k: from_server(v) for k, v in value.properties.items()}}
    if isinstance(value, dict):
        return {k: from_server(v) for k, v in value.items()}
    return value


def _internal(node: Any) -> dict[str, int]:
    """A node's internal id in Kùzu's shape (`{table, offset}`), as kg/graph/queries.py pairs path steps by it."""
    return {"table": 0, "offset": int(node if isinstance(node, int) else node.id)}
