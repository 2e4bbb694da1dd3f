"""Entries back from memory search's side file (`memory/.kg/search.sqlite`) when the graph cannot be opened.

The side file keeps a row per node (id, kind, entry type, text, details, category, priority, status, session,
tags, context, time; area and action in its state table; its Pattern-Key): a graph file that Kùzu cannot open
any more (`truncate -s 100000 graph.kuzu`) still has its nodes there. `kg doctor --repair` writes them as a trail
(the format `kg export trail` writes) and imports it into the new graph, as it imports the workspace's own trail:
each event with its key goes back into its pattern, which counts its occurrences as before. The edges are not in
the side file. The auto links intake makes (`related_to` and the other typed links between similar entries,
kg/graph/linking.py) are made again for the restored entries, as `kg link auto` makes them; edges added by hand are
not, and the report says so.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import time
from contextlib import closing
from datetime import datetime
from pathlib import Path
from typing import Any

from kg.core import clock
from kg.core.errors import KgError

# the state table holds what changes after a node is made (status, priority): newer than the node row's copy;
# `nodekey` each node's current Pattern-Key, `pkey` a pattern's. A file an older kg wrote lacks some of them (6:
# `nodekey`, 5: `pkey` too, older: `state`), or holds a `nodekey` an older kg's rebuild left behind (its version
# says so): only the tables the file's version keeps right are read.
_ROWS = ("SELECT n.id, n.kind, n.entry_type, n.text, n.details, n.category, {priority} AS priority, {status} AS "
         "status, n.session, n.tags, n.context, n.created_at, {area} AS area, {action} AS action, {source} AS source, "
         "{key} AS pattern_key FROM node n {joins}ORDER BY n.pos")


def _rows_query(db: sqlite3.Connection) -> str:
    from kg.store.sidefile import version

    tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    found = db.execute("SELECT value FROM meta WHERE key = 'version'").fetchone() if "meta" in tables else None
    joins, keys = "", []
    if "nodekey" in tables and found is not None and found[0] == version():
        joins += "LEFT JOIN nodekey e ON e.pos = n.pos "
        keys.append("e.key")
    if "pkey" in tables:
        joins += "LEFT JOIN pkey k ON k.pos = n.pos "
        keys.append("k.key")
    state = "state" in tables
    if state:
        joins = "LEFT JOIN state s ON s.pos = n.pos " + joins
    return _ROWS.format(
        priority="coalesce(s.priority, n.priority)" if state else "n.priority",
        status="coalesce(s.status, n.status)" if state else "n.status",
        area="s.area" if state else "NULL", action="s.action" if state else "NULL",
        source="s.source" if state else "NULL",
        key=f"coalesce({', '.join(keys)})" if len(keys) > 1 else (keys[0] if keys else "NULL"), joins=joins)


def _tags(value: Any) -> list[str]:
    if not value:
        return []
    try:
        parsed = json.loads(value)
    except ValueError:
        return [t for t in str(value).split() if t]
    return [str(t) for t in parsed] if isinstance(parsed, list) else [str(parsed)]


def nodes_of(side: Path) -> list[dict[str, Any]]:
    """The side file's nodes as graph rows (`kg.ingest.trail.build_trail`'s input); [] when it cannot be read."""
    try:
        with closing(sqlite3.connect(f"file:{side}?mode=ro", uri=True, timeout=30.0)) as db:
            db.row_factory = sqlite3.Row
            rows = [dict(r) for r in db.execute(_rows_query(db))]
    except sqlite3.Error:
        return []
    out = []
    for r in rows:
        if not r.get("id") or not r.get("kind") or not r.get("text"):
            continue
        at = (r.get("created_at") or "").replace(" ", "T")[:19] or None
        out.append({**r, "tags": _tags(r.get("tags")), "created_at": at})
    return out


def write_trail(side: Path, out: Path, at: datetime, nodes: list[dict[str, Any]] | None = None) -> int:
    """Write the side file's nodes (or those of them given) to `out` as a trail; the number of nodes (0:
    nothing written)."""
    from kg.core.files import write_atomic
    from kg.ingest.trail import build_trail

    nodes = nodes_of(side) if nodes is None else nodes
    if nodes:
        write_atomic(out, json.dumps(build_trail(nodes, [], {}, at), default=str).encode())
    return len(nodes)


def lacking(st: Any) -> list[dict[str, Any]]:
    """The side file's nodes the graph `st` lacks ([] when it has the side file's last one: nodes are made in order
    and never deleted). A graph whose write-ahead log was lost or cut short before Kùzu checkpointed it opens
    without its newest nodes, and nothing else says so: the side file, written at each commit, still holds them."""
    from kg.store import sideindex

    path = sideindex.path_of(st.path)
    if not path.is_file():
        return []
    try:
        with closing(sideindex.SideIndex(path, writable=False)) as side:
            if not sideindex.lacks(st, side):
                return []
    except sqlite3.Error:
        return []  # unreadable: the side index's own check says so
    have = {r["id"] for r in st._execute_raw("MATCH (n:Node) RETURN n.id AS id", {})}
    return [n for n in nodes_of(path) if n["id"] not in have]


def restore(ws: Any, nodes: list[dict[str, Any]]) -> str:
    """Import `nodes` (`lacking`'s) back into the graph, as `start_over` does with a whole side file: written as a
    trail kept in memory/.kg/ (a record of what was restored), then imported and linked again (`relink`)."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    kept = ws.kg_dir / f"restored-{stamp}.trail.json"
    write_trail(ws.kg_dir, kept, clock.now(None), nodes)
    return f"{reimport(ws, [kept], own=False)}; {relink(ws, nodes)}"


def relink(ws: Any, nodes: list[dict[str, Any]]) -> str:
    """Make again the auto links intake made for `nodes` (restored from the side file, which keeps no edge): the
    keyword counts linking ranks by recounted (`kg link reindex`), then each entry linked in the order it was made
    (`kg link auto`: existing edges kept, none duplicated). About 40 ms an entry. The import put each event with
    a Pattern-Key back into its pattern; what cannot be made again is said: edges added by hand."""
    from kg.graph import linking

    entries = sorted((n for n in nodes if n["kind"] != "pattern"), key=lambda n: (n.get("created_at") or "", n["id"]))
    made = 0
    with ws.store() as st:
        rules = linking.rules_of(ws.rules)
        linking.rebuild_terms(st, rules)
        at = clock.now(None)
        for n in entries:
            try:
                made += len(linking.link_node(st, n["id"], rules, now=at))
            except KgError:
                continue  # not imported (the import's report says why)
    keyed = sum(1 for n in entries if n["kind"] == "event" and n.get("pattern_key"))
    back = f"; {keyed} restored event(s) back in their pattern by its key" if keyed else ""
    return (f"made {made} auto link(s) again between the {len(entries)} restored entr(y/ies), as `kg link auto` "
            f"makes them{back}; edges added by hand (`kg edge add`) are not restored")


def reimport(ws: Any, first: list[Any] | None = None, *, own: bool = True) -> str:
    """Import the workspace's trail and .learnings/ (after `first`; not with `own=False`) into a graph started
    anew."""
    from kg.ingest.trail import import_trail

    sources = [*(first or []), *(p for p in (ws.memory / ".learning-trail.json", ws.root / ".learnings")
                                 if own and p.exists())]
    if not sources:
        return "no trail or .learnings/ to rebuild from: entries acknowledged before are not in it"
    rep = import_trail(ws, sources)
    return f"rebuilt {rep.entries} entries, {rep.nodes} nodes and {rep.edges} edges from " + \
        ", ".join(str(p.relative_to(ws.root)) for p in sources)


def start_over(ws: Any, exc: Exception, repair: bool) -> tuple[str, str]:
    """`kg doctor`'s graph check over a file Kùzu cannot open: (status, detail). Without `repair`: what --repair
    would bring back. With it: the file (and its WAL) kept aside, the side file read into a trail first (the new
    graph's side index replaces it), then a new graph with that trail and the workspace's own trail and
    .learnings/ imported. ids.json is kept: no id is given out twice."""
    from kg.store import sideindex

    cause = str(exc).split(". Run `kg doctor`")[0]
    side = sideindex.path_of(ws.graph_path)
    if not repair:
        held = len(nodes_of(side)) if side.is_file() else 0
        return ("error", f"{cause}. Run `kg doctor --repair`: it keeps the file aside and starts a new "
                f"graph with the {held} node(s) memory search's index ({side.name}) still holds and the "
                "workspace's trail and .learnings/ (their auto links made again, each event whose Pattern-Key the "
                "index keeps back in its pattern; edges added by hand, and what is in none of them, are lost)")
    stamp = time.strftime("%Y%m%d-%H%M%S")
    recovered = ws.kg_dir / f"recovered-{stamp}.trail.json"
    nodes = nodes_of(side) if side.is_file() else []
    n = write_trail(side, recovered, clock.now(None), nodes) if nodes else 0
    moved = []
    for path in (ws.graph_path, ws.graph_path.with_name(ws.graph_path.name + ".wal"),
                 *(side.with_name(side.name + tail) for tail in ("", "-wal", "-shm"))):
        if path.exists():
            os.replace(path, path.with_name(f"{path.name}.damaged-{stamp}"))
            moved.append(path)
    ws._allow_new_graph = True
    try:
        try:
            with ws.store():
                pass
        except KgError as new_failed:  # no new graph either (QA11 #0: a limit, not the file): all put back as it was
            _put_back(moved, stamp)
            recovered.unlink(missing_ok=True)
            return ("error", f"{cause}; a new graph could not be made either ({new_failed}), so nothing was set "
                    "aside: fix that first, then run `kg doctor` again")
        rebuilt = reimport(ws, [recovered] if n else [])
        if n:
            rebuilt = f"{rebuilt}; {relink(ws, nodes)}"
    finally:
        ws._allow_new_graph = False
    return ("repaired", f"{cause}: started a new graph (the old file kept as "
            f"{ws.graph_path.name}.damaged-{stamp}); {rebuilt}")


def _put_back(moved: list[Path], stamp: str) -> None:
    """Undo `start_over`'s renames: what the failed open of a new graph made at those names goes first."""
    for path in moved:
        if path.is_dir():
            shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink(missing_ok=True)
        os.replace(path.with_name(f"{path.name}.damaged-{stamp}"), path)
    for path in {p.with_name(p.name + tail) for p in moved for tail in (".wal", "-wal", "-shm")} - set(moved):
        path.unlink(missing_ok=True)  # a WAL the failed open made beside a file that had none
