"""Memory search's side index: a SQLite file beside the embedded graph (`memory/.kg/search.sqlite`).

Kùzu 0.11.3's full-text index scores every document holding any asked term, and reads whole column blocks for
a window of dates, so search grew with the graph (issues 17 and 22). SQLite answers the questions search
asks by index instead (its tables: kg/store/sidefile.py), and linking asks it for candidates as Kùzu's own
full-text index answered (kg/store/sidelink.py).

The file is derived from the graph and never holds anything the graph does not: Kùzu's nodes are never
edited in their text nor deleted, and are numbered densely in creation order, so the index follows the
graph by position. A writer's open records the nodes it creates (`Store.run("node_create")`) and `sync`
adds them when it closes or drains; any other change (a bulk COPY, a crash between the graph's commit and
this file's, a rolled-back batch) shows as a stamp that differs from the graph's (node count and the id of
the last node), and `sync` catches up from the side index's high-water mark by position, or rebuilds it.
Whoever finds it behind (a writer, the read server, a one-off reader) catches up: SQLite serialises them
(`BEGIN IMMEDIATE`, the stamp re-read inside). `kg doctor` reports and repairs it. `forget` takes rows out
and leaves none of their bytes in the file.

FalkorDB (the team store) keeps its own full-text query: this file is for the embedded store only.

The contract this rests on (break it and search answers from rows the graph no longer holds):
- any future delete of a Node, or rewrite of its text (`text`, `details`, `tokens`: redaction edits), must
  call `forget` for it BEFORE the graph's commit (the index text to delete is read from the graph);
- a migration that rewrites `tokens` (or what `_indexed` keeps) must bump `VERSION`: a file of another
  version is rebuilt by the next writer or `kg doctor`.

A read-only reader (a one-off `kg search`) never rebuilds: when the file is of another version, damaged,
missing or names another graph, or more than `CATCH_UP_MAX` nodes behind, it answers None and search asks
the graph's own index until a writer's close or `kg doctor` brings the file in step.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import closing
from typing import Any

from kg.store import sidekeys, sidestate
from kg.store.sidefile import (  # noqa: F401 (the file's names, for the side index's callers)
    FIELDS,
    FILE,
    VERSION,
    SideIndex,
    _stop,
    fts_query,
    link_text,
    parse_time,
    path_of,
    sample_positions,
    version,
)

CATCH_UP_MAX = 5000  # a one-off reader adds at most this many nodes (else it asks the graph's own index)
BATCH = 20000  # rows read from the graph and written per transaction in a catch-up or rebuild
MARKED_ROWS = 50_000  # a catch-up or rebuild of this many nodes or more says so to the processes it shuts out
_READ = ("MATCH (n:Node) WHERE offset(ID(n)) >= $start AND offset(ID(n)) < $stop "
         "RETURN offset(ID(n)) AS pos, " + ", ".join(f"n.{f} AS {f}" for f in FIELDS) + ", n.tokens AS tokens, "
         + ", ".join(f"n.{f} AS {f}" for f in sidestate.STATE if f not in FIELDS) + ", n.pattern_key AS pattern_key")
_POS = "MATCH (n:Node {id: $id}) RETURN offset(ID(n)) AS pos"
_TOKENS = "MATCH (n:Node {id: $id}) RETURN n.tokens AS tokens"
_COUNT = "MATCH (n:Node) RETURN count(n) AS n"



# -- keeping it in step -------------------------------------------------------------------------------------
def embedded(st: Any) -> bool:
    """Whether `st` is the embedded (Kùzu) store this index is for."""
    from kg.store import Store

    return isinstance(st, Store)


def _pos_of(st: Any, node_id: str | None) -> int | None:
    """A node's position in the graph's node table, by its key (one indexed lookup)."""
    if node_id is None:
        return None
    rows = st._execute_raw(_POS, {"id": node_id})
    return int(rows[0]["pos"]) if rows else None


def _count(st: Any) -> int:
    return int(st._execute_raw(_COUNT, {})[0]["n"])


def _read_count(st: Any) -> int:
    """The graph's node count for a read: once per open of a read-only graph, and as a named query otherwise,
    which the read server keeps until the graph changes (issue 22: each count scans the node table, and a
    session brief counted ten times)."""
    memo = st.__dict__.get("_side_count")
    if memo is not None:
        return memo
    n = int(st.run("side_node_count")[0]["n"])
    if getattr(st, "read_only", False):
        st.__dict__["_side_count"] = n
    return n


def sync(st: Any, *, rebuild: bool = False) -> str:
    """Bring the side index in step with the graph `st` holds. Returns what it did: "in step", "added N",
    "caught up N", "rebuilt N". Never fails the caller's write: the graph is the truth, and the next sync
    (or `kg doctor`) catches up."""
    if not embedded(st):
        return "not embedded"
    created = st.__dict__.pop("_side_created", [])
    dirty = st.__dict__.pop("_side_dirty", False)
    path = path_of(st.path)
    try:
        side = SideIndex(path, writable=True)
    except sqlite3.OperationalError:
        raise  # locked, or the disk: left to the next sync
    except sqlite3.DatabaseError:  # not a database, or damaged: derived data, made again from the graph
        for p in (path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")):
            p.unlink(missing_ok=True)
        side, rebuild = SideIndex(path, writable=True), True
    with closing(side):
        side.db.execute("BEGIN IMMEDIATE")
        try:
            done = _sync(st, side, [] if dirty else created, rebuild)
            side.db.execute("COMMIT")
        except BaseException:
            side.db.execute("ROLLBACK")
            raise
    return done


def _sync(st: Any, side: SideIndex, created: list[dict[str, Any]], rebuild: bool) -> str:
    nodes, whole = _sync_nodes(st, side, created, rebuild)
    state = sidestate.catch_up(st, side.db, whole)  # (issue 17) after the nodes: a dirty node may be a new one
    return nodes if state == "state in step" else f"{nodes}; {state}"


class GraphLacks(RuntimeError):
    """The side index holds nodes the graph lacks: the graph lost them (its write-ahead log lost or cut short
    before a checkpoint, an older copy of graph.kuzu put back). Nodes are never deleted, so a rebuild would
    throw away the last copy of acknowledged entries: it is refused, and `kg doctor` restores them from here."""


_LOOK = object()  # `lacks`: the last node's position not looked up yet


def lacks(st: Any, side: SideIndex, last_pos: Any = _LOOK) -> bool:
    """Whether the graph lacks the side index's last node (one indexed lookup, or `last_pos`, the caller's; nodes
    are made in order and never deleted, so a graph that has it has every node the side index holds), and that node
    is this workspace's: an id memory/.kg/ids.json says was given out, or the graph has none or the side index's
    first node. Otherwise the index names another graph (a graph.kuzu copied in) and is rebuilt for this one."""
    have, last = side.stamp()
    if have == 0 or last is None:
        return False
    if (_pos_of(st, last) if last_pos is _LOOK else last_pos) is not None:
        return False
    if _given(st.path.parent / "ids.json", last):
        return True
    first = side.db.execute("SELECT id FROM node ORDER BY pos LIMIT 1").fetchone()
    return _count(st) == 0 or (first is not None and _pos_of(st, first[0]) is not None)


def lost(st: Any) -> str | None:
    """For `kg status`: what the graph lacks of the side index's nodes (`lacks`: the side file's stamp and one
    indexed lookup in the graph), or None. A graph that lost its newest nodes with its write-ahead log opens
    without them, and nothing else says so."""
    if not embedded(st) or not path_of(st.path).is_file():
        return None
    try:
        with closing(SideIndex(path_of(st.path), writable=False)) as side:
            if not lacks(st, side):
                return None
            have, last = side.stamp()
    except sqlite3.Error:
        return None  # unreadable: `kg doctor` says so
    return (f"the graph lacks nodes memory search's index ({FILE}) holds: it holds {have}, the newest {last}, "
            "which the graph lost (with its write-ahead log lost or cut short, or an older copy of the graph put "
            "back); run `kg doctor` to restore them")


def _given(ids: Any, node_id: str) -> bool:
    """Whether ids.json's counter for `node_id`'s prefix and day has reached its number (`LRN-20261201-003`)."""
    import json

    head, _, number = node_id.rpartition("-")
    try:
        counters = json.loads(ids.read_bytes())
        return isinstance(counters, dict) and int(counters.get(head) or 0) >= int(number)
    except (OSError, ValueError, TypeError):
        return False


def _sync_nodes(st: Any, side: SideIndex, created: list[dict[str, Any]], rebuild: bool) -> tuple[str, bool]:
    """(what it did, whether the state table was refilled whole with the nodes: a rebuild)."""
    count = _count(st)
    have, last = side.stamp()
    last_pos = _pos_of(st, last) if have and last is not None else None  # one lookup, for both uses below
    if lacks(st, side, last_pos):
        raise GraphLacks(f"{FILE} holds {have} node(s), the last of them {last}, which the graph lacks: run "
                         "`kg doctor` to restore them")
    if not rebuild:
        sidekeys.upgrade(st, side)  # a file of version 6 or 7: brought to this one in place, not rebuilt
    rebuild = rebuild or side.meta("version") != version()
    # the side index's last node is where it was: what it holds is the graph's first `have` nodes
    kept = not rebuild and 0 < have <= count and last_pos == have - 1
    if not rebuild and have == count and (have == 0 or kept):
        return "in step", False
    # the nodes this process created, when they are exactly the graph's new ones
    if (created and (have == 0 or kept) and have + len(created) == count
            and _pos_of(st, created[-1]["id"]) == count - 1):
        side._add(have, created)
        side._set_stamp(count, created[-1]["id"])
        return f"added {len(created)}", have == 0
    start = have if kept else 0
    if start == 0:
        side.clear()
    at = start
    marker = _marked(st, count - start)
    try:
        for rows in _stream(st, start, count):
            if [r["pos"] for r in rows] != list(range(at, at + len(rows))):
                raise RuntimeError("the graph's node positions are not dense")  # never seen: nodes are not deleted
            side._add(at, rows)
            at += len(rows)
            last = rows[-1]["id"]
    finally:
        if marker is not None:
            marker.done()
    if at != count:
        raise RuntimeError(f"read {at} of the graph's {count} nodes")
    side._set_stamp(count, last if count else None)
    return f"{'caught up' if start else 'rebuilt'} {count - start}", start == 0 and not st._in_tx


def _marked(st: Any, rows: int, step: str | None = None, doing: str | None = None) -> Any:
    """(issue 22) A rebuild of many nodes holds the graph for minutes at 1M entries (the first writer after an
    upgrade that changed the side file's form), a refill of their kept state about a minute (kg/store/sidestate.py):
    at `MARKED_ROWS` rows or more it says so as a migration does (`kg.serve.progress`: `step`, and `doing` for the
    waiter), so that the commands it shuts out wait for it saying so, instead of failing after their lock budget."""
    if rows < MARKED_ROWS:
        return None
    from kg.serve.progress import Marker

    marker = Marker(st.path.parent, [step or f"rebuild the search side index, {rows:,} entries"], doing=doing)
    marker.step(marker.steps[0])
    return marker


def _stream(st: Any, start: int, stop: int) -> Iterator[list[dict[str, Any]]]:
    """The graph's nodes at positions [start, stop), in order, `BATCH` rows at a time: one scan on one thread
    (rows come in position order; `_sync` checks it), fetched row by row. Not sorted by Kùzu: sorting a
    million rows with their text fills its buffer pool; nor a range query per batch: each scans the table."""
    return sidestate.in_batches(st, _READ, {"start": start, "stop": stop}, BATCH)


def safe_sync(st: Any) -> str:
    """`sync` for a writer's close or drain: a failure (a full disk, a locked file) is left to the next sync
    and to `kg doctor`; the graph's write is committed already."""
    if st.__dict__.get("_side_hold"):
        return "held"  # `kg doctor --dry-run` reports it and changes nothing
    try:
        return sync(st)
    except (sqlite3.Error, OSError, RuntimeError) as exc:
        st.__dict__["_side_dirty"] = True
        return f"failed: {exc}"


def noted_create(st: Any, params: dict[str, Any]) -> None:
    """`Store.run` hands this every node it creates (the fields the index keeps), for the next `sync`."""
    st.__dict__.setdefault("_side_created", []).append(
        {**{f: params.get(f) for f in (*FIELDS, "tokens", "pattern_key")}, **sidestate.created(params)})


def for_reading(st: Any) -> SideIndex | None:
    """The side index in step with the graph `st` holds, kept open on `st` for its later reads (the read
    server's), caught up first when it is behind (whoever reads first pays for it); None for a store it is
    not for, or a file that cannot be brought in step (search then asks the graph's own index). A read-only
    reader catches up at most `CATCH_UP_MAX` nodes and never rebuilds (see the module's doc)."""
    if not embedded(st):
        return None
    side = st.__dict__.get("_side_reader")
    try:
        count = _read_count(st)
        if side is not None and side.current(count):
            return side
        if side is None and path_of(st.path).exists():
            side = st.__dict__["_side_reader"] = SideIndex(path_of(st.path), writable=False)
            if side.current(count):
                return side
        if getattr(st, "read_only", False) and to_write(st, side, count) > CATCH_UP_MAX:
            return None  # a one-off reader does not rebuild it: the graph's own index, until a writer does
        sync(st)
        if side is None:
            side = st.__dict__["_side_reader"] = SideIndex(path_of(st.path), writable=False)
        return side if side.current(count) else None
    except (sqlite3.Error, OSError, RuntimeError):
        return None


def open_reader(st: Any, *, open_it: bool = False) -> SideIndex | None:
    """The side index a read on `st` keeps open (`for_reading`; or, `open_it`, opened read-only here), when
    it is in step with the graph; None otherwise. Never catches up or rebuilds (nor writes anything): for
    reads that may take rows from it but do not need it."""
    if not embedded(st):
        return None
    side = st.__dict__.get("_side_reader")
    try:
        if side is None:
            if not open_it or not path_of(st.path).exists():
                return None
            side = st.__dict__["_side_reader"] = SideIndex(path_of(st.path), writable=False)
        return side if side.current(_read_count(st)) else None
    except (sqlite3.Error, OSError, RuntimeError):
        return None


def to_write(st: Any, side: SideIndex | None, count: int) -> int:
    """How many rows `sync` would write to bring `side` in step with the graph's `count` nodes: the gap
    when it holds the graph's first nodes in this version's form; for a rebuild, more than `CATCH_UP_MAX`
    whatever the graph's size, so that a read-only reader leaves every rebuild to a writer."""
    rebuild = max(count, CATCH_UP_MAX + 1)
    if side is None or side.meta("version") != version():
        return rebuild
    have, last = side.stamp()
    if have == count and (have == 0 or _pos_of(st, last) == have - 1):
        return 0
    kept = 0 < have <= count and _pos_of(st, last) == have - 1
    return count - have if kept else rebuild


def forget(st: Any, ids: list[str]) -> int:
    """Take these nodes out of the side index before the graph forgets them (their index text is read from
    the graph). For `kg forget` and redaction edits."""
    if not embedded(st) or not path_of(st.path).exists():
        return 0
    rows = [(i, r["tokens"] or "") for i in ids for r in st._execute_raw(_TOKENS, {"id": i})]
    with closing(SideIndex(path_of(st.path), writable=True)) as side:
        return side.remove(rows)


def status(st: Any) -> tuple[bool, str]:
    """For `kg doctor`: whether the side index is in step with the graph, and what it holds."""
    ok, what, _ = check(st)
    return ok, what


def check(st: Any) -> tuple[bool, str, bool]:
    """(in step, what it holds or what is wrong, whether only a rebuild repairs it): the stamp against the
    graph, the version, `PRAGMA quick_check` and FTS5's own integrity check (zeroed or damaged index pages
    otherwise answer every query with nothing). Raises sqlite3.Error / OSError when the file cannot be
    opened at all (a directory in its place, no permission)."""
    path = path_of(st.path)
    if not path.exists():
        return False, f"{FILE} is missing", True
    try:
        # writable, for FTS5's integrity check (an INSERT that changes nothing); no schema is created
        with closing(sqlite3.connect(f"file:{path}?mode=rw", uri=True, timeout=30.0, isolation_level=None)) as db:
            quick = [r[0] for r in db.execute("PRAGMA quick_check")]
            if quick != ["ok"]:
                return False, f"{FILE} is damaged ({'; '.join(quick[:3])})", True
            db.execute("INSERT INTO fts(fts) VALUES ('integrity-check')")
            meta = dict(db.execute("SELECT key, value FROM meta").fetchall())
    except sqlite3.DatabaseError as exc:
        if isinstance(exc, sqlite3.OperationalError) and ("unable to open" in str(exc) or read_only(exc)):
            raise  # not damage: the caller says the file cannot be opened (for writing), as for a read-only mount
        return False, f"{FILE} cannot be read or is damaged: {exc}", True
    if meta.get("version") != version():
        return False, f"{FILE} is of another version ({meta.get('version')}, now {version()})", True
    have, last = int(meta.get("count") or 0), meta.get("last_id")
    count = _count(st)
    if have != count or (count and _pos_of(st, last) != count - 1):
        kept = 0 < have <= count and _pos_of(st, last) == have - 1
        return False, f"{FILE} holds {have} of the graph's {count} nodes", not kept
    with closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=30.0)) as db:
        if db.execute("SELECT 1 FROM sqlite_master WHERE name = 'state'").fetchone():
            wrong = sidestate.differences(st, db, sample_positions(count))  # (issue 17) the kept state
            if wrong:
                return False, f"{FILE} {wrong}", True
    return True, f"{FILE} holds all {count} nodes", False


def read_only(exc: sqlite3.Error) -> bool:
    """Whether SQLite refused a write because the file or its folder is read-only (SQLITE_READONLY and its extended
    codes): a healthy file on a read-only mount, never damage (QA3 #6 called it "cannot be read or is damaged")."""
    code = getattr(exc, "sqlite_errorcode", None)
    if code is not None:
        return code & 0xFF == sqlite3.SQLITE_READONLY
    return "readonly database" in str(exc)


def current_rows(st: Any, ids: list[str]) -> dict[str, dict[str, Any]]:
    """(issue 17) These nodes' side-index rows with their current state (kg/store/sidestate.py), for those the
    file keeps right; the caller asks the graph by key for the others. {} on a store it is not for, or a file not
    in step with the graph."""
    side = open_reader(st, open_it=True) if ids else None
    if side is None:
        return {}
    try:
        rows = side.rows_by_id(ids)
        state = side.state(list(rows))
    except sqlite3.Error:
        return {}
    return {i: {**rows[i], **s} for i, s in state.items()}
