"""How long `Analysis.central()` takes on a large graph, with and without nodes of the wanted kinds.

    python bench/central_speed.py [--events 10000] [--lessons 500] [--repeats 3]

Builds a workspace of N synthetic events (bulk-loaded, with their patterns and derived_from links, as
bench/common.py does) and times, as medians over --repeats runs, on the graph read once (`kg.analysis.load`):
- central (no lessons): `central()` where no principle or lesson exists (a QA pass: 12.5 s at 10k, returning []);
- central (lessons): the same graph with --lessons lessons, each supporting a few events;
- pagerank (kg): `kg.analysis.graphs.pagerank` on that graph;
- pagerank (reference): the power iteration kg shipped before (kept below as the baseline measured in this run);
- pagerank (networkx): `nx.pagerank` (needs scipy, which kg does not depend on; "n/a" when it is not importable).
Ratios are against the reference. The top-10 of kg's PageRank is checked equal to the reference's (and to
networkx's, when present: ranks agree to 1e-6).
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import build_workspace, median_of, table  # noqa: E402


def reference_pagerank(simple: Any, damping: float = 0.85, iterations: int = 100,
                       tol: float = 1.0e-10) -> dict[str, float]:
    """kg's PageRank before this bench (dicts of dicts, per iteration), the baseline."""
    nodes = list(simple.nodes)
    n = len(nodes)
    strength = {u: sum(d["weight"] for _, _, d in simple.edges(u, data=True)) for u in nodes}
    rank = dict.fromkeys(nodes, 1.0 / n)
    for _ in range(iterations):
        dangling = sum(rank[u] for u in nodes if strength[u] == 0)
        base = (1.0 - damping) / n + damping * dangling / n
        new = dict.fromkeys(nodes, base)
        for u in nodes:
            if strength[u] == 0:
                continue
            share = damping * rank[u] / strength[u]
            for v, d in simple[u].items():
                new[v] += share * d["weight"]
        delta = sum(abs(new[u] - rank[u]) for u in nodes)
        rank = new
        if delta < tol * n:
            break
    return rank


def add_lessons(ws: Any, count: int, seed: int = 3) -> None:
    """`count` lessons, each supporting 3 random events (a bulk load, as build_workspace does)."""
    from kg.store import NODE_COLUMNS
    from kg.store.bulk import bulk_load_edges, bulk_load_nodes

    rng = random.Random(seed)
    with ws.store() as st:
        events = [r["id"] for r in st.execute("MATCH (n:Node) WHERE n.kind = 'event' RETURN n.id AS id")]
        at = st.execute("MATCH (n:Node) RETURN min(n.created_at) AS at")[0]["at"]
        rows, links = [], []
        for i in range(count):
            row = {c: None for c in NODE_COLUMNS}
            row.update(id=f"les-20260101-{i + 1:04d}", kind="lesson", text=f"lesson {i}", status="active", files=[],
                       tags=[], redactions=[], created_at=at, updated_at=at, reinforced_at=at, pinned=False,
                       stale=False, tokens=f"lesson {i}")
            rows.append(row)
            links += [{"src": row["id"], "dst": e, "created_at": at, "manual": False, "score": 0.8,
                       "reason": "bench"} for e in rng.sample(events, 3)]
        bulk_load_nodes(st, rows)
        bulk_load_edges(st, "supports", links, scratch=ws.kg_dir)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--events", type=int, default=10000)
    ap.add_argument("--lessons", type=int, default=500)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()

    import networkx as nx

    import kg.analysis as analysis
    from kg.analysis import graphs

    with tempfile.TemporaryDirectory() as tmp:
        ws = build_workspace(Path(tmp) / "ws", args.events)
        with analysis.load(ws) as a:
            bare, _ = median_of(lambda: a.central(), args.repeats)
            assert a.central() == []
        add_lessons(ws, args.lessons)
        with analysis.load(ws) as a:
            g = a.graph
            lessons, _ = median_of(lambda: a.central(), args.repeats)
            simple = graphs._undirected(g)
            ours, _ = median_of(lambda: graphs.pagerank(g), args.repeats)
            ref, _ = median_of(lambda: reference_pagerank(simple), args.repeats)
            mine, theirs = graphs.pagerank(g), reference_pagerank(simple)
            top = sorted(theirs, key=lambda n: (-theirs[n], n))[:10]
            assert sorted(mine, key=lambda n: (-mine[n], n))[:10] == top
            assert max(abs(mine[n] - theirs[n]) for n in mine) < 1e-9
            try:
                nxr, _ = median_of(lambda: nx.pagerank(simple, weight="weight", tol=1e-10), args.repeats)
                got = nx.pagerank(simple, weight="weight", tol=1e-10)
                assert max(abs(got[n] - theirs[n]) for n in got) < 1e-6
                nx_cell = [f"{nxr:.3f}", f"{nxr / ref:.3f}"]
            except ImportError as exc:
                nx_cell = ["n/a", f"({exc.name} not importable)"]
            print(f"graph: {g.number_of_nodes()} nodes, {g.number_of_edges()} edges; {args.lessons} lessons")
    rows = [["central (no lessons)", f"{bare:.3f}", f"{bare / ref:.3f}"],
            ["central (lessons)", f"{lessons:.3f}", f"{lessons / ref:.3f}"],
            ["pagerank (kg)", f"{ours:.3f}", f"{ours / ref:.3f}"],
            ["pagerank (reference)", f"{ref:.3f}", "1.000"],
            ["pagerank (networkx)", *nx_cell]]
    print(table(f"median seconds over {args.repeats} runs, {args.events} events", ["step", "s", "vs reference"],
                rows))


if __name__ == "__main__":
    main()
