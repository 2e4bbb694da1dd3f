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
from collections.abc import Callable, Iterable, Iterator
from datetime import datetime
from operator import attrgetter, itemgetter, methodcaller
from typing import Any

from kg.store import falkor_dialect as dialect

CHUNK = 5000  # rows per query: fewer round trips (each one waits for a busy server's turn)
_COPY = re.compile(r"^\s*COPY\s+(\w+)\s+FROM\s+'((?:[^'\\]|\\.)*)'\s*\((.*)\)\s*$", re.S)
_FTS_DROP = re.compile(r"^\s*CALL\s+DROP_FTS_INDEX\(", re.I)
_FTS_CREATE = re.compile(r"^\s*CALL\s+CREATE_FTS_INDEX\(", re.I)
_CSV_EDGE = ("from", "to", "created_at", "manual", "score", "reason")  # kg.store.bulk.bulk_load_edges' columns
_KUZU_TIME = re.compile(r"^\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(\.\d{1,6})?$")

_TZ = attrgetter("tzinfo")
_ISO = methodcaller("isoformat", timespec="microseconds")

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


def copy(label: str, rows: Iterable[dict[str, Any]], run: Run, origin: dict[str, str],
         columns: list[str] | None = None) -> int:
    """Create `rows` in the node table or relationship `label`, a chunk at a time; the count created. With
    `columns`, only those keys of each row are sent (a missing key is null)."""
    s = dialect.schema()
    if label in s.rels:
        src, dst, props = s.rels[label]
        sets = ", ".join(f"e.{c} = r[{i + 2}]" for i, c in enumerate(props))
        statement = (f"UNWIND $rows AS r MATCH (a:{src} {{{s.keys.get(src, 'id')}: r[0]}}), "
                     f"(b:{dst} {{{s.keys.get(dst, 'id')}: r[1]}}) CREATE (a)-[e:{label}]->(b)"
                     + (f" SET {sets}" if sets else ""))
        fixed: list[str] | None = ["src", "dst", *props]
    elif label in s.columns:
        statement, fixed = "", None  # per chunk: the columns its rows give
    else:
        raise ValueError(f"no table named {label!r}")
    stamp = {k: v for k, v in (("workspace", origin.get("origin_workspace")), ("agent", origin.get("origin_agent")))
             if v} if label == "Node" else {}
    done = 0
    chunk: list[dict[str, Any]] = []
    for row in rows:
        if "from" in row or "to" in row:
            row = {("src" if k == "from" else "dst" if k == "to" else k): v for k, v in row.items()}
        chunk.append(row)
        if len(chunk) >= CHUNK:
            _send(label, statement, fixed or columns, chunk, run, stamp, s.times)
            done, chunk = done + len(chunk), []
    if chunk:
        _send(label, statement, fixed or columns, chunk, run, stamp, s.times)
        done += len(chunk)
    return done


def _send(label: str, statement: str, names: list[str] | None, chunk: list[dict[str, Any]], run: Run,
          stamp: dict[str, str], times: set[str]) -> None:
    """One chunk as rows of values in column order (kg/store/falkor_params.py writes those fast), built a column
    at a time in C (`itemgetter`, `zip`) rather than a value at a time; a node property null in every row is
    not set, as `SET n = map` leaves out a null."""
    names = list(names) if names else sorted(set().union(*chunk))
    try:
        values = list(map(itemgetter(*names), chunk)) if len(names) > 1 else [(r[names[0]],) for r in chunk]
    except KeyError:  # a row without some column: null there
        values = [tuple(r.get(c) for c in names) for r in chunk]
    columns: dict[str, Any] = dict(zip(names, zip(*values, strict=True), strict=True))
    for c in times.intersection(columns):  # a timestamp column's text in the stored form
        kinds = set(map(type, columns[c]))
        if str in kinds:
            columns[c] = [_value(c, v, times) for v in columns[c]]
        elif kinds == {datetime} and set(map(_TZ, columns[c])) == {None}:  # dialect.to_server's text, in C
            columns[c] = list(map(_ISO, columns[c]))
    for c, value in stamp.items():
        have = columns.get(c)
        if have is None:
            columns[c] = (value,) * len(chunk)
        elif None in have:
            columns[c] = [value if v is None else v for v in have]
    if not statement:
        names = sorted(c for c, col in columns.items() if col.count(None) < len(col))
        statement = f"UNWIND $rows AS r CREATE (n:{label}) SET " + ", ".join(
            f"n.{c} = r[{i}]" for i, c in enumerate(names))
    run(statement, {"rows": list(zip(*(columns[c] for c in names), strict=True))})


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
