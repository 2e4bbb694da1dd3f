"""Evidence chains: what a principle or lesson rests on in the graph (events, patterns, lessons), and the
nodes nothing supports. Part of `kg.analysis` (its functions are reachable as `kg.analysis.evidence`,
`kg.analysis.chains` ...)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import networkx as nx

from kg.analysis import checks
from kg.analysis.timelines import kind_of as _kind
from kg.analysis.timelines import linked as _links
from kg.store import KNOWLEDGE_KINDS


def _node(graph: nx.MultiDiGraph, node: str, **extra: Any) -> dict[str, Any]:
    attrs = graph.nodes[node]
    return {"id": node, "kind": attrs.get("kind"), "entry_type": attrs.get("entry_type"),
            "text": attrs.get("text"), "area": attrs.get("area"), **extra}


# -- evidence chains -------------------------------------------------------------------------------------------
def evidence(graph: nx.MultiDiGraph, node: str, *, max_hops: int = 3) -> dict[str, Any]:
    """What a principle (or lesson, or pattern) rests on: the lessons, patterns and events linked to it
    through supporting links, as chains event → (pattern →) lesson → node of at most `max_hops` links, and
    what contradicts it. Paths go through lessons, knowledge and patterns only, never through another
    principle or event."""
    graph = checks.graph_of(graph)
    max_hops = checks.whole("max_hops", max_hops, minimum=1)
    if node not in graph:
        from kg.core.errors import NotFound

        raise NotFound(f"no node {node!r} in the graph")
    middles: set[str] = set()
    events: set[str] = set()
    chains: list[list[str]] = []
    best: dict[str, int] = {node: 0}
    frontier: list[list[str]] = [[node]]
    for hop in range(1, max_hops + 1):
        nxt = []
        for path in frontier:
            for other in sorted(_links(graph, path[-1])):
                if other in path:
                    continue
                kind = _kind(graph, other)
                if kind == "event" and _kind(graph, node) != "event":
                    events.add(other)
                    chains.append([other, *reversed(path)])
                elif kind in ("lesson", "pattern", "knowledge") and best.get(other, hop) >= hop:
                    best[other] = hop
                    middles.add(other)
                    nxt.append([*path, other])
        frontier = nxt
    chains.sort(key=lambda c: (len(c), c))
    unique = []
    for c in chains:
        if c not in unique:
            unique.append(c)
    return {
        "id": node,
        "lessons": sorted(n for n in middles if _kind(graph, n) == "lesson"),
        "patterns": sorted(n for n in middles if _kind(graph, n) == "pattern"),
        "events": sorted(events),
        "chains": unique,
        "contradicted_by": sorted(_links(graph, node, contradict=True)),
    }


def chains(graph: nx.MultiDiGraph, *, kind: str = "principle") -> list[dict[str, Any]]:
    """Every principle (or `kind`) with its evidence, the best-supported first."""
    graph = checks.graph_of(graph)
    kind = checks.one_name("kind", kind, KNOWLEDGE_KINDS)
    out = []
    for node in (n for n, a in graph.nodes(data=True) if a.get("kind") == kind):
        ev = evidence(graph, node)
        out.append({**_node(graph, node), **{k: v for k, v in ev.items() if k != "id"},
                    "support": len(ev["events"])})
    out.sort(key=lambda r: (-r["support"], r["id"]))
    return out


def orphans(graph: nx.MultiDiGraph, *, kinds: Iterable[str] = KNOWLEDGE_KINDS) -> list[dict[str, Any]]:
    """Nodes with no link at all, by kind then id: events nothing was learned from, lessons never tied to
    an event or principle."""
    graph = checks.graph_of(graph)
    wanted = set(checks.names("kinds", kinds, KNOWLEDGE_KINDS))
    found = [n for n, a in graph.nodes(data=True) if a.get("kind") in wanted and graph.degree(n) == 0]
    found.sort(key=lambda n: (KNOWLEDGE_KINDS.index(_kind(graph, n)) if _kind(graph, n) in KNOWLEDGE_KINDS else 9, n))
    return [_node(graph, n, created_at=graph.nodes[n].get("created_at")) for n in found]


def unsupported(graph: nx.MultiDiGraph, *, kinds: Iterable[str] = ("principle", "lesson")) -> list[dict[str, Any]]:
    """Principles and lessons that no event supports, even if they have other links."""
    graph = checks.graph_of(graph)
    wanted = set(checks.names("kinds", kinds, KNOWLEDGE_KINDS))
    out = [_node(graph, n) for n, a in sorted(graph.nodes(data=True)) if a.get("kind") in wanted
           and not evidence(graph, n)["events"]]
    return out
