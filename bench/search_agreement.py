"""How far a bounded full-text ask changes what `kg search` returns, on a big workspace (issue 17/22).

LoCoMo's conversations are a few hundred turns, where no word is common enough for `rules/search.toml`
[fts] `postings_max` to bind; this measures the trade where it does. Queries are drawn from the workspace's own
entries (2 to 4 of an entry's content words, in order); each is searched with the index asked every chosen term
("exhaustive", `postings_max = 0`) and with each budget given, in one process holding the graph open
read-only (the one-shot view, as a CLI call reads). Printed per budget: overlap@10 with the exhaustive top ten
(by the hits' texts: templated entries tie by thousands, and identical texts are one memory), how often the
entry the query came from (or one with its text) is in the top ten, the share of queries whose index ask the
cap cut, and the CPU time of a search.

    .venv/bin/python bench/search_agreement.py --workspace DIR [--queries 200] [--budgets 20000]
DIR is a workspace to read (copy a cached bench workspace first: bench/results/scale-N is opened read-only,
but never open a cached one in place).
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from pathlib import Path

import kg
from kg.core.text import folded
from kg.memory import search
from kg.memory import query
from kg.memory.query import FtsRules


def sample_entries(graph: Path, n: int, seed: int) -> list[tuple[str, str]]:
    """`n` entries (id, text) at random offsets, read with Kùzu directly (before kg opens the graph)."""
    import kuzu

    db = kuzu.Database(str(graph), read_only=True, buffer_pool_size=256 << 20)
    conn = kuzu.Connection(db, num_threads=1)
    total = conn.execute("MATCH (n:Node) RETURN count(*)").get_next()[0]
    rng = random.Random(seed)
    offsets = sorted(rng.sample(range(total), min(total, n * 3)))
    res = conn.execute("MATCH (n:Node) WHERE offset(id(n)) IN $o AND n.kind <> 'pattern' RETURN n.id, n.text",
                       {"o": offsets})
    rows = []
    while res.has_next():
        rows.append(tuple(res.get_next()))
    del conn, db
    rng.shuffle(rows)
    return [(i, t) for i, t in rows if t][:n]


def queries(entries: list[tuple[str, str]], seed: int) -> list[tuple[str, str, str]]:
    rng = random.Random(seed)
    out = []
    for node_id, text in entries:
        terms = search.query_terms(text)
        if len(terms) < 2:
            continue
        k = rng.randint(2, min(4, len(terms)))
        picked = sorted(rng.sample(range(len(terms)), k))
        out.append((node_id, text, " ".join(terms[i] for i in picked)))
    return out


def run_one(ws: kg.Workspace, q: str, budget: int) -> tuple[list[search.Hit], float, bool]:
    """One search with `budget` as [fts] postings_max (0: no cap), and whether the budget cut its index ask."""
    ws.__dict__.setdefault("_memory_rules", {})["fts"] = FtsRules(postings_max=budget)
    t0 = time.process_time()
    hits = search.search(ws, q, sources=["graph"])
    cpu = time.process_time() - t0
    from kg.graph import linking  # the plan as search made it (its lookups are memoised by the cache)

    with ws.reading() as st:
        plans = [query.plan_query(st, search.query_terms(q), search.memory_rules(ws).search,
                                  linking.rules_of(ws.rules), lambda: (0, {}), None, b) for b in (0, budget)]
    return hits, cpu, plans[0].ask != plans[1].ask


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workspace", type=Path, required=True)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--budgets", default="20000", help="comma-separated postings_max values to compare")
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args()
    ws = kg.open_workspace(args.workspace)
    qs = queries(sample_entries(ws.graph_path, args.queries, args.seed), args.seed)
    budgets = [int(b) for b in args.budgets.split(",")]
    stats: dict[int, dict[str, list[float]]] = {b: {"overlap": [], "found": [], "capped": [], "cpu": []}
                                                for b in [0, *budgets]}
    with ws.reading():  # held open: each search reads through this handle
        for node_id, text, q in qs:
            base, cpu0, _ = run_one(ws, q, 0)
            base_texts = {folded(h.text or "") for h in base}
            for b in [0, *budgets]:
                hits, cpu, cut = (base, cpu0, False) if b == 0 else run_one(ws, q, b)
                texts = {folded(h.text or "") for h in hits}
                s = stats[b]
                s["overlap"].append(len(texts & base_texts) / max(1, len(base_texts)))
                s["found"].append(float(any(h.ref == node_id or node_id in h.also for h in hits)
                                        or folded(text) in texts))
                s["capped"].append(float(cut))
                s["cpu"].append(cpu)
    print(f"workspace {args.workspace}, {len(qs)} queries (2-4 words of an entry)")
    print("| postings_max | overlap@10 with exhaustive | source entry in top 10 | ask cut by the cap | CPU p50 / p90 (s) |")
    print("|---|---|---|---|---|")
    for b, s in stats.items():
        cpu = sorted(s["cpu"])
        print(f"| {b or 'none (exhaustive)'} | {statistics.mean(s['overlap']):.3f} | {statistics.mean(s['found']):.3f} "
              f"| {statistics.mean(s['capped']):.2f} | {statistics.median(cpu):.3f} / {cpu[int(0.9 * len(cpu))]:.3f} |")


if __name__ == "__main__":
    main()
