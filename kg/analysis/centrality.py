"""Centrality and communities: which nodes are the hubs of the graph (PageRank) and which groups hang together
(Louvain). Part of `kg.analysis` (reachable as `kg.analysis.central`, `kg.analysis.pagerank` ...); apart from
`kg.analysis.graphs` because these are measures over any networkx graph, where graphs.py loads, shapes and
holds one (`Analysis`, `report`), as `support` and `timelines` are.

How links count: a link's weight is its score when it has one, else 1; parallel links between two nodes add
their weights.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any

import networkx as nx

from kg.analysis import checks
from kg.analysis.support import _node, evidence
from kg.core.errors import ArgumentError
from kg.core.text import stopwords, words
from kg.store import KNOWLEDGE_KINDS


def _weight(attrs: dict[str, Any]) -> float:
    score = attrs.get("score")
    return float(score) if isinstance(score, (int, float)) and score > 0 else 1.0


def _undirected(graph: nx.MultiDiGraph, *, skip: Iterable[str] = ()) -> nx.Graph:
    """A simple undirected graph: parallel links between two nodes add their weights."""
    skipped = set(skip)
    out = nx.Graph()
    out.add_nodes_from(graph.nodes)
    for u, v, attrs in graph.edges(data=True):
        if u == v or attrs.get("type") in skipped:
            continue
        w = _weight(attrs)
        if out.has_edge(u, v):
            out[u][v]["weight"] += w
        else:
            out.add_edge(u, v, weight=w)
    return out


def pagerank(graph: nx.Graph | nx.MultiDiGraph, *, damping: float = 0.85, iterations: int = 100,
             tol: float = 1.0e-10) -> dict[str, float]:
    """Weighted PageRank over the undirected links (power iteration in pure Python: networkx's own needs
    scipy, which kg does not depend on)."""
    graph = checks.graph_of(graph)
    iterations = checks.whole("iterations", iterations, minimum=1)
    if isinstance(damping, bool) or not isinstance(damping, (int, float)) or not 0 < damping < 1:
        raise ArgumentError(f"damping must be a number between 0 and 1 (got {damping!r})")
    simple = graph if isinstance(graph, nx.Graph) and not graph.is_directed() else _undirected(graph)
    nodes = list(simple.nodes)
    n = len(nodes)
    if n == 0:
        return {}
    # lists indexed by position, each link's share of its source's strength computed once: the same sums as
    # a power iteration over the dicts, about 4x faster (bench/central_speed.py)
    index = {u: i for i, u in enumerate(nodes)}
    out: list[tuple[int, list[tuple[int, float]]]] = []
    dangling: list[int] = []
    for i, u in enumerate(nodes):
        links = [(index[v], float(d["weight"])) for v, d in simple[u].items()]
        strength = sum(w for _, w in links)
        if strength == 0:
            dangling.append(i)
        else:
            out.append((i, [(j, w / strength) for j, w in links]))
    rank = [1.0 / n] * n
    for _ in range(iterations):
        lost = sum(rank[i] for i in dangling)
        new = [(1.0 - damping) / n + damping * lost / n] * n
        for i, links in out:
            share = damping * rank[i]
            for j, w in links:
                new[j] += share * w
        delta = sum(abs(a - b) for a, b in zip(new, rank, strict=True))
        rank = new
        if delta < tol * n:
            break
    return dict(zip(nodes, rank, strict=True))


def central(graph: nx.MultiDiGraph, *, kinds: Iterable[str] = ("principle", "lesson"),
            top: int = 10) -> list[dict[str, Any]]:
    """The hubs: nodes of these kinds ranked by PageRank over all links (contradictions included: a node
    argued about is central too), with their degree and the number of events behind them."""
    graph = checks.graph_of(graph)
    wanted = set(checks.names("kinds", kinds, KNOWLEDGE_KINDS))
    top = checks.whole("top", top, minimum=1)
    found = [n for n, a in graph.nodes(data=True) if a.get("kind") in wanted]
    if not found:  # nothing to rank: no PageRank over the whole graph (a QA pass: 12.5 s at 10k events for [])
        return []
    rank = pagerank(graph)
    found.sort(key=lambda n: (-rank.get(n, 0.0), n))
    return [_node(graph, n, pagerank=round(rank.get(n, 0.0), 6), degree=graph.degree(n),
                  evidence=len(evidence(graph, n)["events"])) for n in found[:top]]


def communities(graph: nx.MultiDiGraph, *, kind: str = "lesson", min_size: int = 2,
                seed: int = 0) -> list[dict[str, Any]]:
    """Groups of related nodes of one kind: Louvain communities (networkx, fixed seed, so repeatable) of the
    whole graph's supporting links, each reported by its members of `kind`, their areas and common words."""
    graph = checks.graph_of(graph)
    kind = checks.one_name("kind", kind, KNOWLEDGE_KINDS)
    min_size = checks.whole("min_size", min_size, minimum=1)
    simple = _undirected(graph, skip=("contradicts",))
    if simple.number_of_edges() == 0:
        return []
    groups = nx.community.louvain_communities(simple, weight="weight", seed=seed)
    out = []
    for group in groups:
        members = sorted(n for n in group if graph.nodes[n].get("kind") == kind)
        if len(members) < min_size:
            continue
        areas = Counter(graph.nodes[n].get("area") or "unspecified" for n in group)
        terms = Counter(w for n in members for w in set(words(graph.nodes[n].get("text") or ""))
                        if w not in stopwords() and (len(w) > 2 or not w.isascii()))
        out.append({
            "size": len(members),
            "members": [_node(graph, n) for n in members],
            "nodes": len(group),
            "areas": dict(sorted(areas.items(), key=lambda kv: (-kv[1], kv[0]))[:3]),  # ties by name: `group` is a
            # set, and most_common kept its hash order (which areas a tie showed varied with PYTHONHASHSEED)
            "terms": [w for w, _ in sorted(terms.items(), key=lambda kv: (-kv[1], kv[0]))[:5]],
        })
    out.sort(key=lambda c: (-c["size"], c["members"][0]["id"]))
    for i, c in enumerate(out, 1):
        c["community"] = i
    return out
