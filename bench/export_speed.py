"""Converting and exporting a large graph: snapshot → networkx → GraphML, against networkx's own writer.

    python bench/export_speed.py [--nodes 100000] [--repeats 3]

Builds a workspace of N knowledge nodes (events with full fields, patterns, lessons, principles) and about
as many edges, then times, as medians over --repeats runs:
- snapshot: copy the graph under the lock (what blocks the agent, and only this);
- read: load the snapshot's tables into Python (as columns, `kg.store.bulk`), against the former read of
  whole node objects row by row (`Store.run("nodes_all")` and `"edges_all"`);
- to_networkx: build the typed MultiDiGraph;
- write GraphML: kg's streaming writer;
- export graph (all): `kg.analysis.export.export_graph(ws, "graphml", out=...)`, the whole path (target ≤ 30 s at 100k);
- baseline: `nx.write_graphml` of an equally sized random MultiDiGraph with the same number of attributes.
Peak memory: the process's max RSS after the runs (target ≤ 2 GB; the workspace is built in a child process so
this is the export's), and tracemalloc's peak of one export (Python objects only).
"""

from __future__ import annotations

import argparse
import csv
import random
import resource
import statistics
import sys
import tempfile
import time
import tracemalloc
from datetime import datetime, timedelta
from pathlib import Path

import networkx as nx

import kg
from kg import analysis
from kg.analysis import export, snapshot
from kg.core.text import index_tokens
from kg.store import EDGE_TYPES, NODE_COLUMNS
from kg.store.bulk import bulk_load_nodes

AREAS = ("tooling", "tests", "build", "config", "docs", "frontend", "backend", "infra")
WORDS = ["git", "push", "failed", "auth", "token", "expired", "npm", "lockfile", "pytest", "fixture", "scope",
         "leaked", "env", "variable", "missing", "docker", "disk", "full", "timeout", "network", "retry", "schema",
         "migration", "config", "yaml", "parse", "error", "permission", "denied"]


def build(root: Path, n: int, seed: int = 0) -> kg.Workspace:
    rnd = random.Random(seed)
    ws = kg.init_workspace(root)
    start = datetime(2026, 1, 1)
    kinds = ["event"] * 85 + ["pattern"] * 5 + ["lesson"] * 6 + ["principle"] * 2 + ["knowledge"] * 2
    rows, ids = [], []
    for i in range(n):
        kind = rnd.choice(kinds)
        at = start + timedelta(minutes=5 * i)
        text = " ".join(rnd.choices(WORDS, k=8))
        row = dict.fromkeys(NODE_COLUMNS)
        row.update(id=f"{kind[:3]}-{i:07d}", kind=kind, text=text, created_at=at, updated_at=at, reinforced_at=at,
                   pinned=False, stale=False, files=[], tags=[], redactions=[], status="active",
                   tokens=index_tokens(text))
        if kind == "event":
            row.update(entry_type="error", category="error", priority=rnd.choice(("low", "medium", "high")),
                       status="pending", area=rnd.choice(AREAS), source="error", session=f"s{i // 40:05d}",
                       details="details " + text, files=[f"src/{rnd.choice(WORDS)}.py"], tags=["bench"],
                       pattern_key=f"key.{rnd.randrange(500)}")
        rows.append(row)
        ids.append((row["id"], kind))
    edges = []
    events = [i for i, k in ids if k == "event"]
    for i, kind in ids:
        if kind == "event":
            continue
        for e in rnd.sample(events, 12 if kind == "pattern" else 3):
            edges.append({"a": i, "b": e, "at": start, "t": "derived_from" if kind == "pattern" else "caused_by"})
    while len(edges) < n:
        a, b = rnd.sample(ids, 2)
        edges.append({"a": a[0], "b": b[0], "at": start, "t": "related_to"})
    with ws.store() as st:
        bulk_load_nodes(st, rows)
        # Edges by COPY FROM CSV: an `UNWIND ... MATCH ... CREATE` per batch is far slower at this size.
        for etype in EDGE_TYPES:
            batch = [e for e in edges if e["t"] == etype]
            if not batch:
                continue
            csv_path = root.parent / f"{etype}.csv"
            with open(csv_path, "w", encoding="utf-8", newline="") as fh:
                writer = csv.writer(fh)
                for e in batch:
                    writer.writerow([e["a"], e["b"], e["at"].isoformat(sep=" "), "false", 0.5, "bench"])
            st.execute(f"COPY {etype} FROM '{csv_path}' (header=false)")
    return ws


def build_in_child(root: Path, n: int) -> None:
    """Build in a separate process, so this process's peak memory is the export's, not the bulk load's."""
    import multiprocessing

    ctx = multiprocessing.get_context("spawn")
    proc = ctx.Process(target=build, args=(root, n))
    proc.start()
    proc.join()
    if proc.exitcode != 0:
        raise SystemExit(f"building the benchmark workspace failed (exit {proc.exitcode})")


def timed(fn, repeats: int) -> tuple[float, object]:
    times, result = [], None
    for _ in range(repeats):
        t = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times), result


def baseline_graph(n: int, m: int, seed: int = 0) -> nx.MultiDiGraph:
    """A random MultiDiGraph of the same size, with as many string attributes per node and edge."""
    rnd = random.Random(seed)
    g = nx.MultiDiGraph()
    for i in range(n):
        g.add_node(f"n{i}", **{f"a{k}": " ".join(rnd.choices(WORDS, k=2)) for k in range(14)})
    for _ in range(m):
        g.add_edge(f"n{rnd.randrange(n)}", f"n{rnd.randrange(n)}", created_at="2026-01-01T00:00:00",
                   manual=False, score=0.5, reason="bench")
    return g


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, default=100_000)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="kg-bench-") as tmp:
        tmpdir = Path(tmp)
        t = time.perf_counter()
        build_in_child(tmpdir / "ws", args.nodes)
        ws = kg.open_workspace(tmpdir / "ws")
        print(f"built {args.nodes:,} nodes in {time.perf_counter() - t:.1f} s "
              f"(graph file {ws.graph_path.stat().st_size / 1e6:.0f} MB)", file=sys.stderr)
        out = tmpdir / "g.graphml"
        # The whole path first, so the peak RSS read right after it is the export's own.
        t_all, result = timed(lambda: export.export_graph(ws, "graphml", out=out), args.repeats)
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux

        def take():
            with snapshot.take(ws) as snap:
                return snap.graph_path.stat().st_size

        t_snap, _ = timed(take, args.repeats)
        snap = snapshot.take(ws)
        t_read, data = timed(lambda: snapshot.read(snap), args.repeats)

        def read_objects():  # the former read: whole node objects, row by row, through Store.run
            with snap.store() as st:
                return len(st.run("nodes_all")) + len(st.run("edges_all"))

        t_read_objects, _ = timed(read_objects, args.repeats)
        snap.close()
        t_nx, graph = timed(lambda: analysis.build_graph(data), args.repeats)

        def write():
            with open(out, "w", encoding="utf-8") as fh:
                export.write_graphml(graph, fh)

        t_write, _ = timed(write, args.repeats)
        size = out.stat().st_size
        n, m = graph.number_of_nodes(), graph.number_of_edges()
        data = graph = None  # free them before the baseline
        base = baseline_graph(n, m)
        t_base, _ = timed(lambda: nx.write_graphml(base, tmpdir / "base.graphml"), args.repeats)
        t_base_read, _ = timed(lambda: nx.read_graphml(out, force_multigraph=True), 1)
        base = None
        tracemalloc.start()
        export.export_graph(ws, "graphml", out=out, force=True)  # `write` above replaced kg's export by hand
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()

    print(f"\nexport_speed: {n:,} nodes, {m:,} edges, GraphML {size / 1e6:.0f} MB, median of {args.repeats}")
    print(f"{'step':<40}{'seconds':>10}")
    for name, secs in (("snapshot (agent blocked only here)", t_snap), ("read snapshot (columns, bulk)", t_read),
                       ("baseline: read as node objects, by row", t_read_objects),
                       ("to_networkx", t_nx), ("write GraphML (kg, streamed)", t_write),
                       ("export graph, all steps (target ≤ 30)", t_all),
                       ("baseline: nx.write_graphml, same size", t_base),
                       ("(nx.read_graphml of kg's file, once)", t_base_read)):
        print(f"{name:<40}{secs:>10.2f}")
    print(f"{'kg read / baseline read':<40}{t_read / t_read_objects:>10.2f}x")
    print(f"{'kg write / baseline write':<40}{t_write / t_base:>10.2f}x")
    print(f"{'peak RSS of the export (MB, ≤ 2048)':<40}{rss:>10.0f}")
    print(f"{'tracemalloc peak of one export (MB)':<40}{peak / 2**20:>10.0f}")
    assert result.nodes == n


if __name__ == "__main__":
    main()
