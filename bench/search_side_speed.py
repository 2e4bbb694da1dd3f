"""Memory search's CPU in one process at scale, three ways (issues 17/22): the side index with the bounded
ask (`rules/search.toml [fts]` as shipped), the side index ranking every match, and Kùzu's own full-text
index (the path before the side index). The one-shot view (the graph held read-only, as a CLI call reads);
median CPU of 3 runs per query, and how the full-text step asked.

    .venv/bin/python bench/search_side_speed.py WORKSPACE   (a copy of bench/results/scale-N, never in place)
"""
import statistics
import sys
import time

import kg
from kg.memory import search, views
from kg.memory.query import FtsRules

ws = kg.open_workspace(sys.argv[1])
qs = ["docker permission", "the docker build timed out again", "pytest fixture crashed on the schema"]


def run(label, budget, side=True):
    # (bounded_candidates, relax_below: the defaults)
    ws.__dict__.setdefault("_memory_rules", {})["fts"] = FtsRules(postings_max=budget)
    orig = views.view
    if not side:
        views.view = lambda w, st: views.Direct(st, None)
        search.view = views.view
    out = []
    for q in qs:
        cpu = []
        for _ in range(3):
            t = time.process_time()
            hits = search.search(ws, q, sources=["graph"])
            cpu.append(time.process_time() - t)
        out.append(f"{q!r}: {statistics.median(cpu):.3f}s {hits[0].fts or 'ranked'}")
    views.view = orig
    search.view = orig
    print(label, "|", "; ".join(out), flush=True)


with ws.reading():
    run("side, bounded (postings_max 20000)", 20000)
    run("side, exhaustive", 0)
    run("Kùzu node_fts (before)", 20000, side=False)
