"""Kùzu's bulk statements as a team graph runs them: `COPY label FROM file` and the full-text index dance.

kg/store/bulk.py and the streaming import (kg/ingest/importing.py) load rows with Kùzu's `COPY ... FROM` a
file kg itself wrote in the workspace (newline-delimited JSON, or the fixed CSV of `bulk.bulk_load_edges`). An
embedded database reads that file in the same process; a FalkorDB server may be on another machine, so here
the file is read by the client and its rows are sent in chunks of `CHUNK` with one `UNWIND $rows ... CREATE`
each. The result is what Kùzu's COPY gives: the rows created, an edge joined to its endpoints by key (an edge
whose endpoint is missing is left out; the import checks endpoints first). Every node also names the
workspace and agent it came from, as `node_create` does, so an imported trail says whose it was.

Kùzu's full-text index goes wrong under a multi-row load, so kg drops it before one and rebuilds it after;
FalkorDB keeps its index right row by row, so the drop is a no-op here and the rebuild makes the index only
when it is missing.
"""

from __future__ import annotations

import csv
import json
import re
from collections.abc import Callable, Iterator
from typing import Any

from kg.store import falkor_dialect as dialect

CHUNK = 5000  # rows per query: fewer round trips (each one waits for a busy server's turn)
_COPY = re.compile(r"^\s*COPY\s+(\w+)\s+FROM\s+'((?:[^'\\]|\\.)*)'\s*\((.*)\)\s*$", re.S)
_FTS_DROP = re.compile(r"^\s*CALL\s+DROP_FTS_INDEX\(", re.I)
_FTS_CREATE = re.compile(r"^\s*CALL\s+CREATE_FTS_INDEX\(", re.I)
_CSV_EDGE = ("from", "to", "created_at", "manual", "score", "reason")  # kg.store.bulk.bulk_load_edges' columns
_KUZU_TIME = re.compile(r"^\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(\.\d{1,6})?$")

Run = Callable[[str, dict[str, Any]], Any]


def bulk_statement(cypher: str, run: Run, ensure_fts: Callable[[], bool], origin: dict[str, str]) -> bool:
    """Run `cypher` here when it is one of Kùzu's bulk statements (True), else leave it (False)."""
    if _FTS_DROP.match(cypher):
        return True
    if _FTS_CREATE.match(cypher):
        ensure_fts()
        return True
    m = _COPY.match(cypher)
    if m is None:
        return False
    label, path, options = m.group(1), re.sub(r"\\(.)", r"\1", m.group(2)), m.group(3)
    copy(label, _rows(path, "file_format='json'" not in options.replace('"', "'")), run, origin)
    return True


def copy(label: str, rows: Iterator[dict[str, Any]], run: Run, origin: dict[str, str]) -> int:
    """Create `rows` in the node table or relationship `label`, a chunk at a time; the count created."""
    s = dialect.schema()
    if label in s.rels:
        src, dst, columns = s.rels[label]
        sets = ", ".join(f"e.{c} = r[{i + 2}]" for i, c in enumerate(columns))
        statement = (f"UNWIND $rows AS r MATCH (a:{src} {{{s.keys.get(src, 'id')}: r[0]}}), "
                     f"(b:{dst} {{{s.keys.get(dst, 'id')}: r[1]}}) CREATE (a)-[e:{label}]->(b)"
                     + (f" SET {sets}" if sets else ""))
        columns = ["src", "dst", *columns]
    elif label in s.columns:
        statement, columns = "", []  # per chunk: the columns its rows give
    else:
        raise ValueError(f"no table named {label!r}")
    stamp = {"workspace": origin.get("origin_workspace") or None, "agent": origin.get("origin_agent") or None} \
        if label == "Node" else {}
    done = 0
    chunk: list[dict[str, Any]] = []
    for row in rows:
        if "from" in row or "to" in row:
            row = {("src" if k == "from" else "dst" if k == "to" else k): v for k, v in row.items()}
        else:
            row = dict(row)
        for k in s.times.intersection(row):  # only the timestamp columns change (most values go as they are)
            row[k] = _value(k, row[k], s.times)
        for key, value in stamp.items():
            if row.get(key) is None and value is not None:
                row[key] = value
        chunk.append(row)
        if len(chunk) >= CHUNK:
            _send(label, statement, columns, chunk, run)
            done, chunk = done + len(chunk), []
    if chunk:
        _send(label, statement, columns, chunk, run)
        done += len(chunk)
    return done


def _send(label: str, statement: str, columns: list[str], chunk: list[dict[str, Any]], run: Run) -> None:
    """One chunk as rows of values in `columns`' order (kg/store/falkor_params.py writes those fast); a node
    property left null is not set, as `SET n = map` leaves out a null."""
    if not statement:
        columns = sorted({k for row in chunk for k, v in row.items() if v is not None})
        statement = f"UNWIND $rows AS r CREATE (n:{label}) SET " + ", ".join(
            f"n.{c} = r[{i}]" for i, c in enumerate(columns))
    run(statement, {"rows": [[row.get(c) for c in columns] for row in chunk]})


def _value(column: str, value: Any, times: set[str]) -> Any:
    """A file's value as the server stores it: a timestamp column's text in the fixed-width ISO form."""
    if column in times and isinstance(value, str):
        if not value:
            return None
        if _KUZU_TIME.match(value):
            head, _, frac = value.replace(" ", "T").partition(".")
            return f"{head}.{(frac or '0').ljust(6, '0')}"
    return value


def _rows(path: str, is_csv: bool) -> Iterator[dict[str, Any]]:
    with open(path, encoding="utf-8", newline="" if is_csv else None) as fh:
        if is_csv:
            for rec in csv.reader(fh):
                row = dict(zip(_CSV_EDGE, rec, strict=True))
                yield {**row, "manual": row["manual"] == "true", "score": float(row["score"] or 0.0)}
            return
        for line in fh:
            if line.strip():
                yield json.loads(line)
