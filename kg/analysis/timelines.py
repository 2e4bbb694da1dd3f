"""Time in the analyst's view: buckets by day, week or month, tables of errors and recurrences, the effect of
each promoted rule, counts, and the lifecycle's own tables (score trends, conflict decisions, changes).

Plain functions over the networkx graph or the snapshot's tables, used by `kg.analysis.graphs.Analysis` and
re-exported by `kg.analysis`.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from typing import Any

import networkx as nx

from kg.analysis import checks, snapshot
from kg.core import clock
from kg.core.errors import ArgumentError
from kg.store import EDGE_TYPES, KNOWLEDGE_KINDS

ENTRY_TYPES = ("learning", "error", "feature")
PERIODS = ("day", "week", "month")
SCORE_DIMENSIONS = ("accuracy", "usefulness", "efficiency", "tone", "proactiveness")


def linked(graph: nx.MultiDiGraph, node: str, *, contradict: bool = False) -> set[str]:
    """Neighbours through supporting links (or, with `contradict`, through `contradicts`), both directions."""
    out = set()
    for _, other, attrs in graph.out_edges(node, data=True):
        if (attrs.get("type") == "contradicts") == contradict:
            out.add(other)
    for other, _, attrs in graph.in_edges(node, data=True):
        if (attrs.get("type") == "contradicts") == contradict:
            out.add(other)
    out.discard(node)
    return out


def kind_of(graph: nx.MultiDiGraph, node: str) -> str | None:
    return graph.nodes[node].get("kind")

# -- time ------------------------------------------------------------------------------------------------------
def period_of(at: datetime | date, period: str = "day") -> str:
    if period == "day":
        return f"{at:%Y-%m-%d}"
    if period == "week":
        year, week, _ = at.isocalendar()
        return f"{year}-W{week:02d}"
    if period == "month":
        return f"{at:%Y-%m}"
    raise ArgumentError(f"unknown period {period!r}: use one of {', '.join(PERIODS)}")


def periods_between(first: datetime | date, last: datetime | date, period: str = "day") -> list[str]:
    """Every period label from `first` to `last`, with no gaps."""
    out: list[str] = []
    day = first if isinstance(first, date) and not isinstance(first, datetime) else first.date()
    end = last if isinstance(last, date) and not isinstance(last, datetime) else last.date()
    while day <= end:
        label = period_of(day, period)
        if not out or out[-1] != label:
            out.append(label)
        day += timedelta(days=1)
    return out


@dataclass
class Table:
    """Counts by row label and period: what timelines and heatmaps are drawn from."""

    rows: list[str]
    columns: list[str]
    values: list[list[int]]
    title: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    def total(self, row: str) -> int:
        return sum(self.values[self.rows.index(row)])

    def as_records(self) -> list[dict[str, Any]]:
        return [{"row": r, "period": c, "count": v}
                for r, vals in zip(self.rows, self.values, strict=True)
                for c, v in zip(self.columns, vals, strict=True) if v]

    def to_dict(self) -> dict[str, Any]:
        return {"title": self.title, "rows": self.rows, "columns": self.columns, "values": self.values,
                **self.extra}

    def __bool__(self) -> bool:
        return bool(self.rows)


def _table(buckets: dict[str, Counter], times: list[datetime], period: str, title: str,
           top: int | None = None) -> Table:
    if not buckets:
        return Table([], [], [], title)
    columns = periods_between(min(times), max(times), period)
    rows = sorted(buckets, key=lambda r: (-sum(buckets[r].values()), r))
    if top is not None:
        rows = rows[:top]
    return Table(rows, columns, [[buckets[r].get(c, 0) for c in columns] for r in rows], title)


def error_timeline(graph: nx.MultiDiGraph, *, by: str = "area", period: str = "day",
                   entry_type: str | None = "error") -> Table:
    """Logged events (errors by default) per period, one row per value of `by` (area, category, priority,
    source, session...). Where the agent keeps failing, at a glance."""
    graph = checks.graph_of(graph)
    period_of(datetime(2000, 1, 1), period)  # validates
    by = checks.column("by", by, graph, "event")
    entry_type = checks.one_name("entry_type", entry_type, ENTRY_TYPES, what="entry type", optional=True)
    buckets: dict[str, Counter] = defaultdict(Counter)
    times = []
    for _, a in graph.nodes(data=True):
        if a.get("kind") != "event" or a.get("created_at") is None:
            continue
        if entry_type and a.get("entry_type") != entry_type:
            continue
        key = a.get(by)
        buckets[str(key) if key else "unspecified"][period_of(a["created_at"], period)] += 1
        times.append(a["created_at"])
    return _table(buckets, times, period, f"{entry_type or 'event'}s by {by} per {period}")


def patterns(graph: nx.MultiDiGraph) -> list[dict[str, Any]]:
    """Each pattern's recurrence, distinct sessions, first and last seen, derived from its member events
    (as the `pattern_stats` query does)."""
    graph = checks.graph_of(graph)
    out = []
    for node, a in graph.nodes(data=True):
        if a.get("kind") != "pattern":
            continue
        members = [e for _, e, ea in graph.out_edges(node, data=True)
                   if ea.get("type") == "derived_from" and kind_of(graph, e) == "event"]
        times = [graph.nodes[e]["created_at"] for e in members if graph.nodes[e].get("created_at")]
        sessions = {graph.nodes[e].get("session") for e in members} - {None}
        areas = Counter(graph.nodes[e].get("area") or "unspecified" for e in members)
        out.append({"id": node, "key": a.get("pattern_key"), "text": a.get("text"), "status": a.get("status"),
                    "recurrence": len(members), "sessions": len(sessions),
                    "first_seen": min(times) if times else None, "last_seen": max(times) if times else None,
                    "area": areas.most_common(1)[0][0] if areas else a.get("area"), "members": sorted(members)})
    out.sort(key=lambda p: (-p["recurrence"], p["key"] or "", p["id"]))
    return out


def recurrence(graph: nx.MultiDiGraph, *, period: str = "week", top: int | None = 20) -> Table:
    """Member events of each pattern per period (rows: pattern keys, most recurrent first)."""
    graph = checks.graph_of(graph)
    period_of(datetime(2000, 1, 1), period)
    top = checks.whole("top", top, minimum=1, optional=True)
    buckets: dict[str, Counter] = defaultdict(Counter)
    times = []
    for p in patterns(graph):
        label = p["key"] or p["id"]
        for e in p["members"]:
            at = graph.nodes[e].get("created_at")
            if at is not None:
                buckets[label][period_of(at, period)] += 1
                times.append(at)
    return _table(buckets, times, period, f"pattern recurrence per {period}", top)


def rule_effect(graph: nx.MultiDiGraph, *, now: datetime | str | None = None, policy: Any = None,
                prior: tuple[float, float] = (0.0, 0.0), observed_from: datetime | None = None,
                skip: Iterable[str] = ()) -> list[dict[str, Any]]:
    """Did the principles linked to a pattern help? For each: how often the pattern recurred per week before
    the principle existed, and since, and the lifecycle's own verdict on it (`kg.lifecycle.verify.assess`):
    `helped` is True when confirmed, False when ineffective or made worse, None when inconclusive. `policy`
    is a LifecyclePolicy (default: the packaged rules); `prior` and `observed_from` the workspace's pooled
    prior and first event, as the cycle uses them. The changes kg applied are judged from the Change table
    instead (`kg.analysis.verdicts`, which `Analysis.rule_effect` calls first); `skip` their rule nodes."""
    from kg.lifecycle.verify import assess

    graph = checks.graph_of(graph)
    at_now = clock.now(checks.when("now", now))
    lp = policy if policy is not None else _packaged_lifecycle_policy()
    skipped = set(skip)
    out = []
    for p in patterns(graph):
        rules = sorted(n for n in linked(graph, p["id"]) if kind_of(graph, n) == "principle" and n not in skipped)
        for rule in rules:
            born = graph.nodes[rule].get("created_at")
            if born is None:
                continue
            times = [graph.nodes[e]["created_at"] for e in p["members"] if graph.nodes[e].get("created_at")]
            verdict = assess(times, born, at_now, lp, observed_from=observed_from, prior=prior)
            out.append({"principle": rule, "text": graph.nodes[rule].get("text"), "pattern": p["id"],
                        "key": p["key"], "promoted_at": born, "before": verdict.before, "after": verdict.after,
                        "rate_before": round(verdict.rate_before * 7, 3),
                        "rate_after": round(verdict.rate_after * 7, 3),
                        "helped": None if verdict.kind == "inconclusive" else verdict.kind == "confirmed",
                        "verdict": verdict.kind, "why": verdict.summary})
    out.sort(key=lambda r: (r["promoted_at"], r["principle"]))
    return out


def _packaged_lifecycle_policy() -> Any:
    from kg.core.policy import RuleSet
    from kg.lifecycle.policy import LifecyclePolicy

    rules = RuleSet()
    return LifecyclePolicy.from_mapping(rules.raw("lifecycle"), priorities=tuple(rules.policy.priorities))


# -- counts ----------------------------------------------------------------------------------------------------
def counts(graph: nx.MultiDiGraph, data: snapshot.GraphData | None = None) -> dict[str, Any]:
    graph = checks.graph_of(graph)
    kinds = Counter(a.get("kind") for _, a in graph.nodes(data=True))
    entries = Counter(a.get("entry_type") for _, a in graph.nodes(data=True) if a.get("entry_type"))
    statuses = Counter(a.get("status") for _, a in graph.nodes(data=True) if a.get("entry_type"))
    edges = Counter(a.get("type") for _, _, a in graph.edges(data=True))
    times = [a["created_at"] for _, a in graph.nodes(data=True) if a.get("created_at")]
    out: dict[str, Any] = {
        "nodes": {k: kinds.get(k, 0) for k in KNOWLEDGE_KINDS},
        "entries": dict(sorted(entries.items())),
        "entry_status": dict(sorted(statuses.items())),
        "edges": {t: edges.get(t, 0) for t in EDGE_TYPES},
        "total_nodes": graph.number_of_nodes(),
        "total_edges": graph.number_of_edges(),
        "first": min(times) if times else None,
        "last": max(times) if times else None,
    }
    if data is not None:
        out["sessions"] = len(data.sessions)
        out["tables"] = {name: len(rows) for name, rows in data.tables.items()}
    return out


# -- lifecycle tables (degrade to empty where a migration has not added them) ----------------------------------
def _time_of(row: dict[str, Any]) -> datetime | None:
    for key in ("at", "decided_at", "created_at", "created", "date", "updated_at"):
        value = row.get(key)
        if isinstance(value, datetime):
            return value
    return None


def score_trends(data: snapshot.GraphData, *, period: str | None = None) -> list[dict[str, Any]]:
    """Self-assessment scores (`kg score`) over time: one row per score, or with `period` the mean of each
    dimension per period. Empty when the workspace has no Score table yet."""
    rows = [r for r in data.table("Score") if _time_of(r) is not None]
    rows.sort(key=lambda r: (_time_of(r), str(r.get("id"))))
    dims = [d for d in (*SCORE_DIMENSIONS, "average") if any(isinstance(r.get(d), (int, float)) for r in rows)]
    if period is None:
        return [{"at": _time_of(r), **{d: r.get(d) for d in dims}, "notes": r.get("notes")} for r in rows]
    period_of(datetime(2000, 1, 1), period)
    grouped: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        grouped[period_of(_time_of(r), period)].append(r)
    out = []
    for label in sorted(grouped):
        group = grouped[label]
        means = {}
        for d in dims:
            vals = [r[d] for r in group if isinstance(r.get(d), (int, float))]
            means[d] = round(sum(vals) / len(vals), 2) if vals else None
        out.append({"period": label, "n": len(group), **means})
    return out


def conflict_decisions(data: snapshot.GraphData) -> list[dict[str, Any]]:
    """Conflict outcomes recorded by `kg cycle` (the Decision table), oldest first, with the two principles'
    texts and the score parts decoded. Empty when the table does not exist yet."""
    texts = {n["id"]: n.get("text") for n in data.nodes}
    rows = []
    for r in data.table("Decision"):
        row = dict(r)
        for side in ("a", "b"):
            if isinstance(row.get(side), str):
                row[f"{side}_text"] = texts.get(row[side])
            parts = row.get(f"parts_{side}")
            if isinstance(parts, str) and parts.startswith("{"):
                try:
                    row[f"parts_{side}"] = json.loads(parts)
                except ValueError:
                    pass
        if isinstance(row.get("winner"), str):
            row["winner_text"] = texts.get(row["winner"]) if row["winner"] else None
        rows.append(row)
    rows.sort(key=lambda r: (_time_of(r) or datetime.min, str(r.get("id"))))
    return rows


def changes(data: snapshot.GraphData) -> list[dict[str, Any]]:
    """Rules kg applied (the Change table), oldest first, with their verification verdicts and the recurrence
    rate before and after: whether the promoted rules helped. Empty when the table does not exist yet."""
    keep = ("id", "kind", "target", "text", "pattern_key", "applied_at", "next_check", "verdict", "verdict_at",
            "rate_before", "rate_after", "status", "reverted_at", "revert_reason")
    rows = [{k: r.get(k) for k in keep if k in r} for r in data.table("Change")]
    rows.sort(key=lambda r: (r.get("applied_at") or datetime.min, str(r.get("id"))))
    return rows
