"""How far a bounded full-text ask changes what `kg search` returns, on a big workspace (issue 17/22).

LoCoMo's conversations are a few hundred turns, where no word is common enough for `rules/search.toml`
[fts] `postings_max` to bind; this measures the trade where it does. Queries are drawn from the workspace's own
entries (2 to 4 of an entry's content words, in order; or a rare word of the entry, a number, with one or two
of its common words); each is searched with every match ranked ("exhaustive", `postings_max = 0`) and with each
budget given (past it, the side index's bounded ask: kg/memory/search_side.py), in one process holding the
graph open read-only (the one-shot view, as a CLI call reads). Printed per budget and sort of query:
overlap@10 with the exhaustive top ten (by the hits' texts: templated entries tie by thousands, and identical
texts are one memory), how often the entry the query came from (or one with its text) is in the top ten, the
share of queries asked the bounded way, and the CPU time of a search.

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
from kg.memory.query import FtsRules


def sample_entries(graph: Path, n: int, seed: int) -> list[tuple[str, str, str]]:
    """`n` entries (id, text, details) at random offsets, read with Kùzu directly (before kg opens the graph)."""
    import kuzu

    db = kuzu.Database(str(graph), read_only=True, buffer_pool_size=256 << 20)
    conn = kuzu.Connection(db, num_threads=1)
    total = conn.execute("MATCH (n:Node) RETURN count(*)").get_next()[0]
    rng = random.Random(seed)
    offsets = sorted(rng.sample(range(total), min(total, n * 3)))
    res = conn.execute("MATCH (n:Node) WHERE offset(id(n)) IN $o AND n.kind <> 'pattern' "
                       "RETURN n.id, n.text, n.details", {"o": offsets})
    rows = []
    while res.has_next():
        rows.append(tuple(res.get_next()))
    del conn, db
    rng.shuffle(rows)
    return [(i, t, d or "") for i, t, d in rows if t][:n]


def queries(entries: list[tuple[str, str, str]], seed: int) -> list[tuple[str, str, str, str]]:
    """(entry id, text, query, sort): every other entry gives 2 to 4 of its content words, in order ("words");
    the rest mix a rare word of the entry's own (a number or name found in few entries) with one or two of
    its common words ("rare+common"), when it has one."""
    rng = random.Random(seed)
    out = []
    for n, (node_id, text, details) in enumerate(entries):
        terms = search.query_terms(text)
        if len(terms) < 2:
            continue
        rare = [t for t in search.query_terms(f"{text} {details}") if any(c.isdigit() for c in t)]
        if n % 2 and rare:
            common = [t for t in terms if t not in rare]
            picked = rng.sample(common, min(len(common), rng.randint(1, 2)))
            out.append((node_id, text, " ".join([*picked, rng.choice(rare)]), "rare+common"))
            continue
        k = rng.randint(2, min(4, len(terms)))
        picked_at = sorted(rng.sample(range(len(terms)), k))
        out.append((node_id, text, " ".join(terms[i] for i in picked_at), "words"))
    return out


def run_one(ws: kg.Workspace, q: str, budget: int) -> tuple[list[search.Hit], float, str]:
    """One search with `budget` as [fts] postings_max (0: every query ranked exhaustively), and how its
    full-text step asked (ranked / bounded / relaxed: kg/memory/search_side.py)."""
    old = search.fts_rules(ws)
    ws.__dict__.setdefault("_memory_rules", {})["fts"] = FtsRules(
        postings_max=budget, bounded_candidates=old.bounded_candidates, relax_below=old.relax_below)
    t0 = time.process_time()
    hits = search.search(ws, q, sources=["graph"])
    cpu = time.process_time() - t0
    ws.__dict__["_memory_rules"]["fts"] = old
    return hits, cpu, (hits[0].fts or "ranked") if hits else "none"


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
    sorts = ("all", "words", "rare+common")
    stats = {(b, k): {"overlap": [], "found": [], "bounded": [], "cpu": []} for b in [0, *budgets] for k in sorts}
    with ws.reading():  # held open: each search reads through this handle
        for node_id, text, q, sort in qs:
            base, cpu0, _ = run_one(ws, q, 0)
            base_texts = {folded(h.text or "") for h in base}
            for b in [0, *budgets]:
                hits, cpu, mode = (base, cpu0, "ranked") if b == 0 else run_one(ws, q, b)
                texts = {folded(h.text or "") for h in hits}
                for key in ((b, "all"), (b, sort)):
                    s = stats[key]
                    s["overlap"].append(len(texts & base_texts) / max(1, len(base_texts)))
                    s["found"].append(float(any(h.ref == node_id or node_id in h.also for h in hits)
                                            or folded(text) in texts))
                    s["bounded"].append(float(mode in ("bounded", "relaxed")))
                    s["cpu"].append(cpu)
    print(f"workspace {args.workspace}, {len(qs)} queries (2-4 words of an entry, or a rare word of it with 1-2 "
          "common ones)")
    print("| postings_max | queries | n | overlap@10 with exhaustive | source entry in top 10 | bounded ask | "
          "CPU p50 / p90 (s) |")
    print("|---|---|---|---|---|---|---|")
    for (b, sort), s in stats.items():
        if not s["cpu"]:
            continue
        cpu = sorted(s["cpu"])
        print(f"| {b or 'none (exhaustive)'} | {sort} | {len(cpu)} | {statistics.mean(s['overlap']):.3f} "
              f"| {statistics.mean(s['found']):.3f} | {statistics.mean(s['bounded']):.2f} "
              f"| {statistics.median(cpu):.3f} / {cpu[int(0.9 * len(cpu))]:.3f} |")

if __name__ == "__main__":
    main()
