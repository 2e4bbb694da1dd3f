"""The analyst's view: the graph in networkx, and helpers that answer the questions people ask of it.

    import kg.analysis as ka
    a = ka.load("path/to/workspace")      # a read-only snapshot, read into memory; the agent keeps writing
    a.counts(); a.central(); a.chains(); a.recurrence("week"); a.error_timeline(); a.score_trends()
    G = ka.to_networkx("path/to/workspace", types="lesson,principle", since="30d")

Nothing here holds the workspace's graph: `load` and `to_networkx` copy it under the lock for a moment
(`kg.analysis.snapshot`) and read the copy. The helpers are plain functions over a networkx MultiDiGraph (nodes keyed
by id with every stored column as attributes, edges keyed by their type), so they work on any subgraph too.

How links are read: every edge type except `contradicts` counts as support in either direction (kg links a
new node to an older one whatever the roles); a pattern's `derived_from` edges lead to its member events.

The measures live beside this module and are reachable from it: hubs and groups in `kg.analysis.centrality`,
evidence chains in `support`, counts over time in `timelines`.
"""

from __future__ import annotations

import os
from collections import Counter, defaultdict
from collections.abc import Iterable
from datetime import datetime
from typing import Any, Self

import networkx as nx

from kg.analysis import checks, snapshot
from kg.analysis.centrality import _undirected, _weight, central, communities, pagerank  # noqa: F401 - re-exported
from kg.analysis.support import _node, chains, evidence, orphans, unsupported  # noqa: F401 - _node: kept importable
from kg.analysis.timelines import (
    ENTRY_TYPES,
    PERIODS,
    Table,
    changes,
    conflict_decisions,
    counts,
    error_timeline,
    patterns,
    period_of,
    periods_between,
    recurrence,
    rule_effect,
    score_trends,
)
from kg.core import clock
from kg.core.errors import ArgumentError, NoWorkspace, UsageError
from kg.core.text import stopwords, words  # noqa: F401 - kept importable from here (centrality.py uses them now)
from kg.store import KNOWLEDGE_KINDS

__all__ = [
    "PERIODS",
    "Analysis",
    "Table",
    "build_graph",
    "central",
    "chains",
    "changes",
    "communities",
    "conflict_decisions",
    "counts",
    "error_timeline",
    "evidence",
    "failing_areas",
    "filter_graph",
    "load",
    "neighbourhood",
    "orphans",
    "pagerank",
    "parse_types",
    "patterns",
    "period_of",
    "periods_between",
    "recurrence",
    "report",
    "rule_effect",
    "score_trends",
    "to_networkx",
    "unsupported",
]


# -- loading ---------------------------------------------------------------------------------------------------
def _workspace(source: Any) -> Any:
    from kg.workspace import Workspace, open_workspace

    if isinstance(source, Workspace):
        return source
    if source is None or isinstance(source, (str, os.PathLike)):
        try:
            return open_workspace(source)
        except NoWorkspace as exc:  # the README's promise to Python callers: a ValueError, naming the path
            raise ArgumentError(str(exc)) from None
    raise ArgumentError(f"workspace must be a Workspace, a workspace folder's path, or None for the one this "
                        f"folder is in (got {type(source).__name__})")


def load(workspace: Any = None, *, now: datetime | str | None = None, wait: float | None = None) -> Analysis:
    """Snapshot the workspace (a Workspace, a path, or None to find it from the current directory) and read
    it into an Analysis. The agent's graph is held only while the snapshot is copied. `wait`: seconds to wait for
    a writer holding the graph (a long `kg ingest`) instead of the workspace's budget (KG_LOCK_TIMEOUT, 10 s)."""
    checks.when("now", now)
    _wait(wait)
    ws = _workspace(workspace)
    return Analysis(ws, now=now, wait=wait)


def _wait(wait: Any) -> float | None:
    if wait is not None and (isinstance(wait, bool) or not isinstance(wait, (int, float)) or not wait >= 0):
        raise ArgumentError(f"wait must be a number of seconds, at least 0, or None for the workspace's budget "
                            f"(got {wait!r})")
    return wait


def _take(ws: Any, wait: float | None) -> snapshot.Snapshot:
    """A snapshot, waiting `wait` seconds for the graph when given. Past the wait, the busy graph says how a
    notebook waits longer (QA #10: a load during a 20 s `kg ingest` gave up after 10 s saying only that)."""
    from kg.core.errors import StoreBusy, TeamGraphUnreachable

    kept = ws.lock_wait, ws.journal.timeout
    if wait is not None:  # (as a detached session end waits longer: kg.runtimes.hooks.wait_longer)
        ws.lock_wait = max(kept[0], float(wait))
        ws.journal.timeout = max(kept[1], float(wait))
    try:
        return snapshot.take(ws)
    except TeamGraphUnreachable:
        raise  # a server that is down or away: no writer to wait for, and its message says what to do
    except StoreBusy as exc:
        raise type(exc)(f"{exc}. A notebook can wait for the writer to finish: pass wait=SECONDS to "
                        "kg.analysis.load() or to_networkx()") from None
    finally:
        ws.lock_wait, ws.journal.timeout = kept


def to_networkx(source: Any = None, *, types: str | Iterable[str] | None = None,
                since: str | datetime | None = None, now: datetime | str | None = None,
                include_tokens: bool = False, wait: float | None = None) -> nx.MultiDiGraph:
    """The knowledge graph as a typed MultiDiGraph.

    `source` is a Workspace, a workspace path, an Analysis or a `snapshot.GraphData`. Nodes are keyed by id
    and carry every stored column (None where unset; `tokens`, the search index's text, only when
    `include_tokens`); edges are keyed by their type and carry created_at, manual, score and reason. `types`
    keeps these kinds or entry types (`lesson,principle`, `error`), `since` nodes created since a time or a
    span (`7d`); edges are kept where both ends are. `wait`: as `load`'s, for a workspace or its path.
    """
    checks.when("now", now)  # before the snapshot it would be taken for
    _wait(wait)
    if isinstance(source, Analysis):
        if include_tokens:  # an Analysis reads its snapshot without the index text: read it again with it
            if source.snapshot is None or source.snapshot.closed:
                raise UsageError("this analysis was closed; call refresh() to take a new snapshot")
            graph = build_graph(snapshot.read(source.snapshot, include_tokens=True), include_tokens=True,
                                workspace=str(source.root))
        else:
            graph = source.graph
    elif isinstance(source, snapshot.GraphData):
        graph = build_graph(source, include_tokens=include_tokens)
    else:
        ws = _workspace(source)
        with _take(ws, wait) as snap:
            data = snapshot.read(snap, include_tokens=include_tokens)
        graph = build_graph(data, include_tokens=include_tokens, workspace=str(ws.root))
        data = None  # the rows are in the graph now: let them go before the caller's export
        if now is not None:  # `--now`: dated at the time it names, as under KG_NOW (QA6 #4: two exports at one
            graph.graph["snapshot_at"] = clock.now(now).isoformat()  # --now differed in their wall-clock stamp)
    return filter_graph(graph, types=types, since=since, now=now)


def build_graph(data: snapshot.GraphData, *, include_tokens: bool = False,
                workspace: str | None = None) -> nx.MultiDiGraph:
    graph = nx.MultiDiGraph(name="kaizen-kg", workspace=workspace,
                            snapshot_at=data.taken_at.isoformat() if data.taken_at else None)
    with snapshot.gc_paused():  # 300k new dicts: the cyclic collector would rescan them over and over
        graph.add_nodes_from(row["id"] for row in data.nodes)
        node_attrs = graph.nodes
        for row in data.nodes:
            attrs = node_attrs[row["id"]]  # the node's own attribute dict, filled in place: no copies
            attrs.update(row)
            del attrs["id"]
            if not include_tokens:
                attrs.pop("tokens", None)
        seen: set[tuple[str, str, str]] = set()
        edges = []
        for row in data.edges:
            src, dst, etype = row["src"], row["dst"], row["type"]
            key = etype
            if (src, dst, key) in seen:
                n = 2
                while (src, dst, f"{etype}#{n}") in seen:
                    n += 1
                key = f"{etype}#{n}"
            seen.add((src, dst, key))
            edges.append((src, dst, key, {"type": etype, "created_at": row["created_at"], "manual": row["manual"],
                                          "score": row["score"], "reason": row["reason"]}))
        graph.add_edges_from(edges)
    return graph


def parse_types(types: str | Iterable[str] | None) -> tuple[set[str], set[str]]:
    """`"lesson,principle"` or `["error"]` → (kinds, entry types). Plurals are accepted."""
    if types is None:
        return set(), set()
    if not isinstance(types, (str, Iterable)):
        raise ArgumentError(f"types must be text such as 'lesson,principle' or a list of names (got {types!r})")
    items = [types] if isinstance(types, str) else list(types)
    kinds: set[str] = set()
    entries: set[str] = set()
    for item in items:
        for raw in str(item).split(","):
            t = raw.strip().lower()
            if not t:
                continue
            if t not in KNOWLEDGE_KINDS + ENTRY_TYPES and t.endswith("s") and t[:-1] in KNOWLEDGE_KINDS + ENTRY_TYPES:
                t = t[:-1]
            if t in KNOWLEDGE_KINDS:
                kinds.add(t)
            elif t in ENTRY_TYPES:
                entries.add(t)
            else:
                raise ArgumentError(f"unknown type {raw.strip()!r}: use one or more of "
                                 f"{', '.join(KNOWLEDGE_KINDS + ENTRY_TYPES)} (comma-separated)")
    return kinds, entries


def _since(since: str | datetime | None, now: datetime | str | None) -> datetime | None:
    if since is None or since == "":
        return None
    if not isinstance(since, (str, datetime)):
        raise ArgumentError(f"since must be a span such as '7d', an ISO date or a datetime (got {since!r})")
    try:
        if isinstance(since, datetime):  # into the clock zone as `now=` is: the graph's times are naive in it
            return clock.naive(since, what="since")
        return clock.parse_since(since, clock.now(now))
    except UsageError as exc:  # a ValueError to Python callers, as every other wrong argument here
        raise ArgumentError(str(exc)) from None


def filter_graph(graph: nx.MultiDiGraph, *, types: str | Iterable[str] | None = None,
                 since: str | datetime | None = None, now: datetime | str | None = None) -> nx.MultiDiGraph:
    graph = checks.graph_of(graph)
    kinds, entries = parse_types(types)
    since_at = _since(since, checks.when("now", now))  # (a wrong `now` was taken unread without `since`)
    if not kinds and not entries and since_at is None:
        return graph
    keep = []
    for node, attrs in graph.nodes(data=True):
        if (kinds or entries) and attrs.get("kind") not in kinds and attrs.get("entry_type") not in entries:
            continue
        if since_at is not None and (attrs.get("created_at") is None or attrs["created_at"] < since_at):
            continue
        keep.append(node)
    sub = graph.subgraph(keep).copy()
    sub.graph.update(types=sorted(kinds | entries) or None, since=since_at.isoformat() if since_at else None)
    return sub


def neighbourhood(graph: nx.MultiDiGraph, center: str, depth: int = 1, *, limit: int | None = None) -> nx.MultiDiGraph:
    """The nodes within `depth` links of `center` (either direction), nearest first, at most `limit`."""
    graph = checks.graph_of(graph)
    depth = checks.whole("depth", depth, minimum=0)
    limit = checks.whole("limit", limit, minimum=1, optional=True)
    if center not in graph:
        from kg.core.errors import NotFound

        raise NotFound(f"no node {center!r} in the graph: `kg list` shows the ids")
    seen = {center: 0}
    frontier = [center]
    for level in range(1, depth + 1):
        nxt = []
        for node in frontier:
            for other in sorted(set(graph.successors(node)) | set(graph.predecessors(node))):
                if other not in seen:
                    seen[other] = level
                    nxt.append(other)
        frontier = nxt
    ordered = sorted(seen, key=lambda n: (seen[n], n))
    if limit is not None:
        ordered = ordered[:max(1, limit)]
    return graph.subgraph(ordered).copy()


# -- the notebook object ---------------------------------------------------------------------------------------
class Analysis:
    """A workspace read into memory from a snapshot. It holds no lock: the agent keeps logging while a
    notebook keeps this open for hours; `refresh()` takes a new snapshot to see what was added since."""

    def __init__(self, ws: Any, *, now: datetime | str | None = None, wait: float | None = None):
        self.ws = ws
        self.root = ws.root
        self._now = checks.when("now", now)  # refused here, not at the first question that reads it
        self._lock_wait = _wait(wait)  # (refresh() waits as long as the load did)
        self.snapshot: snapshot.Snapshot | None = None
        self.refresh()

    def __repr__(self) -> str:
        return (f"Analysis({str(self.root)!r}, {self.graph.number_of_nodes()} nodes, "
                f"{self.graph.number_of_edges()} edges, snapshot {self.taken_at:%Y-%m-%d %H:%M:%S})")

    @property
    def now(self) -> datetime:
        return clock.now(self._now)

    def refresh(self) -> Analysis:
        snap = _take(self.ws, self._lock_wait)
        try:
            data = snapshot.read(snap)
        except BaseException:
            snap.close()
            raise
        if self.snapshot is not None:
            self.snapshot.close()
        self.snapshot, self.data = snap, data
        self.taken_at = snap.taken_at
        self.graph = build_graph(data, workspace=str(self.root))
        return self

    def close(self) -> None:
        if self.snapshot is not None:
            self.snapshot.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def query(self, cypher: str, **params: Any) -> list[dict[str, Any]]:
        """Run read-only Cypher against the snapshot (never the live graph)."""
        if self.snapshot is None or self.snapshot.closed:
            raise UsageError("this analysis was closed; call refresh() to take a new snapshot")
        with self.snapshot.store() as st:
            return st.execute(cypher, params)

    # views
    def subgraph(self, *, types: str | Iterable[str] | None = None,
                 since: str | datetime | None = None) -> nx.MultiDiGraph:
        return filter_graph(self.graph, types=types, since=since, now=self.now)

    def around(self, node: str, depth: int = 1, *, limit: int | None = None) -> nx.MultiDiGraph:
        return neighbourhood(self.graph, node, depth, limit=limit)

    # questions
    def counts(self) -> dict[str, Any]:
        return counts(self.graph, self.data)

    def central(self, *, kinds: Iterable[str] = ("principle", "lesson"), top: int = 10) -> list[dict[str, Any]]:
        return central(self.graph, kinds=kinds, top=top)

    def communities(self, *, kind: str = "lesson", min_size: int = 2) -> list[dict[str, Any]]:
        return communities(self.graph, kind=kind, min_size=min_size)

    def evidence(self, node: str) -> dict[str, Any]:
        return evidence(self.graph, node)

    def chains(self, *, kind: str = "principle") -> list[dict[str, Any]]:
        return chains(self.graph, kind=kind)

    def orphans(self, *, kinds: Iterable[str] = KNOWLEDGE_KINDS) -> list[dict[str, Any]]:
        return orphans(self.graph, kinds=kinds)

    def unsupported(self) -> list[dict[str, Any]]:
        return unsupported(self.graph)

    def patterns(self) -> list[dict[str, Any]]:
        return patterns(self.graph)

    def recurrence(self, period: str = "week", *, top: int | None = 20) -> Table:
        return recurrence(self.graph, period=period, top=top)

    def error_timeline(self, *, by: str = "area", period: str = "day", entry_type: str | None = "error") -> Table:
        return error_timeline(self.graph, by=by, period=period, entry_type=entry_type)

    def rule_effect(self) -> list[dict[str, Any]]:
        """Did the rules help: each change kg applied from a pattern with the verdict `kg verify` gives it
        (`kg.analysis.verdicts`), then each principle linked to a pattern by hand, judged by the same rule
        with the same pooled prior; oldest first."""
        from kg.analysis.verdicts import change_effects
        from kg.lifecycle.policy import load

        lp, now = load(self.ws), self.now
        if self.snapshot is None or self.snapshot.closed:
            raise UsageError("this analysis was closed; call refresh() to take a new snapshot")
        with self.snapshot.store() as st:
            applied, shared = change_effects(self.ws, st, now, self.data.table("Change"), policy=lp)
        by_hand = rule_effect(self.graph, now=now, policy=lp, prior=shared["prior"],
                              observed_from=shared["observed_from"],
                              skip={r["principle"] for r in applied if r["principle"]})
        rows = [*applied, *by_hand]
        rows.sort(key=lambda r: (r["promoted_at"], r.get("change") or "", r["principle"] or ""))
        return rows

    def score_trends(self, *, period: str | None = None) -> list[dict[str, Any]]:
        return score_trends(self.data, period=period)

    def conflict_decisions(self) -> list[dict[str, Any]]:
        return conflict_decisions(self.data)

    def changes(self) -> list[dict[str, Any]]:
        return changes(self.data)



def failing_areas(graph: nx.MultiDiGraph, *, entry_type: str = "error") -> list[dict[str, Any]]:
    """Errors per area, most first, with when the last one happened and how many recurring patterns the
    area has."""
    graph = checks.graph_of(graph)
    entry_type = checks.one_name("entry_type", entry_type, ENTRY_TYPES, what="entry type")
    errors: dict[str, list[datetime]] = defaultdict(list)
    for _, a in graph.nodes(data=True):
        if a.get("kind") == "event" and a.get("entry_type") == entry_type:
            errors[a.get("area") or "unspecified"].append(a.get("created_at") or datetime.min)
    recurring = Counter(p["area"] or "unspecified" for p in patterns(graph) if p["recurrence"] > 1)
    out = [{"area": area, "errors": len(times), "last": max(times), "recurring_patterns": recurring.get(area, 0)}
           for area, times in errors.items()]
    out.sort(key=lambda r: (-r["errors"], r["area"]))
    return out


def report(workspace: Any = None, *, top: int = 5, now: datetime | str | None = None) -> dict[str, Any]:
    """The one-page answer to "where does the agent keep failing, and what has it learned?" (`kg graph
    report`)."""
    top = checks.whole("top", top, minimum=1, flag="--top")
    with load(workspace, now=now) as a:
        g = a.graph
        hubs = central(g, kinds=("principle",), top=top)
        principles = []
        for hub in hubs:
            ev = evidence(g, hub["id"])
            principles.append({**hub, "support": len(ev["events"]), "lessons": ev["lessons"],
                               "patterns": ev["patterns"], "contradicted_by": ev["contradicted_by"],
                               "chains": ev["chains"][:top]})
        return {
            "workspace": str(a.root),
            "snapshot_at": a.taken_at,
            "counts": a.counts(),
            "failing_areas": failing_areas(g)[:top],
            "patterns": [{k: v for k, v in p.items() if k != "members"} for p in patterns(g)[:top]],
            "principles": principles,
            "lessons": central(g, kinds=("lesson",), top=top),
            "rule_effect": a.rule_effect()[-top:],
            "changes": a.changes()[-top:],
            "decisions": a.conflict_decisions()[-top:],
            "orphans_total": len(loose := orphans(g)),
            "orphans": loose[: top * 4],
            "unsupported_total": len(weak := unsupported(g)),
            "unsupported": weak[: top * 4],
        }
