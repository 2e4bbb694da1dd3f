"""The graph as a Cypher script, for Kùzu or Neo4j: `kg export graph --format cypher --dialect kuzu|neo4j`.

The script is idempotent, so replaying it twice (or into a database that already holds part of the graph)
changes nothing: edges are written with `MERGE` on their ends, type and creation time, then their properties
are `SET`; nodes with `MERGE` on their id then `SET` in Neo4j, and in Kùzu created whole where their id is
missing (Kùzu loses full-text index entries that `SET` wrote once the database is reopened). The Kùzu
dialect creates its tables first (`IF NOT EXISTS`) and replays into an empty Kùzu database as well as into a
new kg workspace; the Neo4j dialect makes a uniqueness constraint on
`Node.id`, adds each node's kind as a second label and writes times as `localdatetime(...)`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from datetime import datetime
from typing import Any

import networkx as nx

from kg.core.errors import ArgumentError, UsageError
from kg.store import EDGE_TYPES, check_label

__all__ = ["DIALECTS", "cypher_literal", "replay_cypher", "split_cypher", "to_cypher"]

DIALECTS = ("kuzu", "neo4j")
_PROP = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def check_dialect(dialect: str) -> str:
    name = (dialect or "").strip().lower().replace("ù", "u")
    if name not in DIALECTS:
        raise ArgumentError(f"unknown Cypher dialect {dialect!r}: use {' or '.join(DIALECTS)}")
    return name


def cypher_literal(value: Any, dialect: str = "kuzu") -> str | None:
    """A Cypher literal for a stored value; None for unset. Every statement stays on one line: in Kùzu a string
    with control characters (line breaks) is written as `decode(BLOB('...'))` with hex escapes, in Neo4j with
    the string escapes `\\n`, `\\t` and `\\uXXXX`."""
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return repr(value) if math.isfinite(value) else None
    if isinstance(value, datetime):
        if dialect == "neo4j":
            return f"{'local' if value.tzinfo is None else ''}datetime('{value.isoformat()}')"
        return f"timestamp('{value.isoformat(sep=' ')}')"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(cypher_literal(v, dialect) or "NULL" for v in value) + "]"
    s = str(value)
    if any(ord(ch) < 0x20 or ord(ch) == 0x7F for ch in s):
        if dialect == "neo4j":
            escaped = "".join(_NEO4J_ESCAPES.get(ch) or (f"\\u{ord(ch):04X}" if ord(ch) < 0x20 or ord(ch) == 0x7F
                                                         else ch) for ch in s)
            return f"'{escaped}'"
        escaped = "".join(ch if 0x20 <= ord(ch) < 0x7F and ch not in "'\\" else
                          "".join(f"\\\\x{b:02X}" for b in ch.encode("utf-8")) for ch in s)
        return f"decode(BLOB('{escaped}'))"
    return "'" + s.replace("\\", "\\\\").replace("'", "\\'") + "'"


_NEO4J_ESCAPES = {"\\": "\\\\", "'": "\\'", "\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _cypher_type(values: Iterable[Any]) -> str:
    kinds = {type(v) for v in values if v is not None}
    if not kinds:
        return "STRING"
    if kinds <= {bool}:
        return "BOOLEAN"
    if kinds <= {int}:
        return "INT64"
    if kinds <= {int, float}:
        return "DOUBLE"
    if kinds <= {datetime}:
        return "TIMESTAMP"
    if kinds <= {list, tuple}:
        return "STRING[]"
    return "STRING"


def _sets(var: str, attrs: dict[str, Any], dialect: str, skip: Iterable[str] = ()) -> str:
    skip = set(skip)
    parts = [f"{var}.{k} = {lit}" for k, v in attrs.items()
             if k not in skip and (lit := cypher_literal(v, dialect)) is not None]
    return f" SET {', '.join(parts)}" if parts else ""


def to_cypher(graph: nx.MultiDiGraph, *, schema: bool = True, dialect: str = "kuzu") -> str:
    """Cypher statements, one per line, that rebuild this graph and change nothing when replayed again. With
    `schema`, the tables (Kùzu: `CREATE ... IF NOT EXISTS`) or the id constraint (Neo4j) come first."""
    dialect = check_dialect(dialect)
    node_cols: dict[str, list[Any]] = {}
    for _, attrs in graph.nodes(data=True):
        for k, v in attrs.items():
            node_cols.setdefault(k, []).append(v)
    edge_cols: dict[str, list[Any]] = {}
    for _, _, attrs in graph.edges(data=True):
        for k, v in attrs.items():
            if k != "type":
                edge_cols.setdefault(k, []).append(v)
    for name in (*node_cols, *edge_cols):
        if not _PROP.match(name):
            raise UsageError(f"attribute {name!r} cannot be a Cypher property name")
    lines = [f"// kaizen-kg graph export ({dialect}): {graph.number_of_nodes()} nodes, "
             f"{graph.number_of_edges()} edges. Idempotent: replaying it changes nothing.",
             "// Replay: one statement per line"
             + (" (cypher-shell -f graph.cypher)." if dialect == "neo4j" else ". On a bare Kùzu database also run, "
                "after the load:")]
    if dialect == "kuzu":
        lines.append("// CALL CREATE_FTS_INDEX('Node', 'node_fts', ['tokens'], stemmer := 'porter');")
    if schema and dialect == "kuzu":
        cols = ", ".join(f"{k} {_cypher_type(node_cols[k])}" for k in node_cols)
        lines.append(f"CREATE NODE TABLE IF NOT EXISTS Node(id STRING PRIMARY KEY{', ' + cols if cols else ''});")
        rel_cols = ", ".join(f"{k} {_cypher_type(v)}" for k, v in edge_cols.items())
        for etype in EDGE_TYPES:
            props = ", " + rel_cols if rel_cols else ""
            lines.append(f"CREATE REL TABLE IF NOT EXISTS {etype}(FROM Node TO Node{props});")
    elif schema:
        lines.append("CREATE CONSTRAINT kaizen_kg_node_id IF NOT EXISTS FOR (n:Node) REQUIRE n.id IS UNIQUE;")
    for node in sorted(graph.nodes, key=lambda n: (graph.nodes[n].get("created_at") or datetime.min, str(n))):
        attrs = graph.nodes[node]
        label = ""
        if dialect == "neo4j" and isinstance(attrs.get("kind"), str) and _PROP.match(attrs["kind"]):
            label = f", n:{attrs['kind'].capitalize()}"
        key = cypher_literal(str(node), dialect)
        if dialect == "kuzu":
            # Kùzu 0.11.3 loses full-text index entries written by SET when the database is reopened, so a
            # node is created whole, only where its id is not there yet.
            props = "".join(f", {k}: {lit}" for k, v in attrs.items() if (lit := cypher_literal(v)) is not None)
            lines.append(f"OPTIONAL MATCH (x:Node {{id: {key}}}) WITH x WHERE x IS NULL "
                         f"CREATE (:Node {{id: {key}{props}}});")
            continue
        sets = _sets("n", attrs, dialect)
        if label:
            sets = (sets or " SET n.id = n.id") + label
        lines.append(f"MERGE (n:Node {{id: {key}}}){sets};")

    def edge_order(e: tuple[Any, Any, Any, dict[str, Any]]) -> tuple[Any, ...]:
        return e[3].get("created_at") or datetime.min, str(e[0]), str(e[1]), str(e[2])

    for u, v, key, attrs in sorted(graph.edges(keys=True, data=True), key=edge_order):
        etype = check_label(attrs.get("type") or str(key).split("#")[0], EDGE_TYPES, "edge type")
        at = cypher_literal(attrs.get("created_at"), dialect)
        ident = f" {{created_at: {at}}}" if at is not None else ""
        lines.append(f"MATCH (a:Node {{id: {cypher_literal(str(u), dialect)}}}), "
                     f"(b:Node {{id: {cypher_literal(str(v), dialect)}}}) MERGE (a)-[r:{etype}{ident}]->(b)"
                     f"{_sets('r', attrs, dialect, skip=('type', 'created_at'))};")
    return "\n".join(lines) + "\n"


def split_cypher(text: str) -> list[str]:
    """Statements of a Cypher script: split at `;` outside string literals; `//` comment lines dropped."""
    statements: list[str] = []
    current: list[str] = []
    quote: str | None = None
    i, n = 0, len(text)
    line_start = True
    while i < n:
        ch = text[i]
        if quote is None and line_start:
            j = i
            while j < n and text[j] in " \t":
                j += 1
            if text.startswith("//", j):
                end = text.find("\n", j)
                i = n if end < 0 else end + 1
                continue
        line_start = ch == "\n"
        current.append(ch)
        if quote is not None:
            if ch == "\\" and i + 1 < n:
                current.append(text[i + 1])
                i += 1
            elif ch == quote:
                quote = None
        elif ch in "'\"":
            quote = ch
        elif ch == ";":
            current.pop()
            statement = "".join(current).strip()
            if statement:
                statements.append(statement)
            current = []
        i += 1
    if quote is not None:
        raise UsageError("the Cypher text ends inside a string literal; is the file complete?")
    tail = "".join(current).strip()
    if tail:
        statements.append(tail)
    return statements


def replay_cypher(workspace: Any, text: str) -> int:
    """Run an exported Cypher script against a workspace's graph (for example a new, empty one). Schema
    statements run first, the data in one transaction. Returns the number of statements run."""
    from kg.analysis import _workspace

    ws = _workspace(workspace)
    statements = split_cypher(text)
    ddl = [s for s in statements if s.upper().startswith(("CREATE NODE TABLE", "CREATE REL TABLE", "CALL "))]
    data = [s for s in statements if s not in ddl]
    with ws.store() as st:
        for s in ddl:
            st.execute(s)
        with st.transaction():
            for s in data:
                st.execute(s)
    return len(statements)
