"""How long `kg cycle` takes on a big graph, against a naive baseline measured in the same run.

    .venv/bin/python bench/cycle_speed.py                 # 100k events
    .venv/bin/python bench/cycle_speed.py --events 1000000 --runs 3

The graph: N events over the year before `now`, 70% of them in N/50 patterns, N/20 sessions, priorities and
areas mixed; a pattern in every 25 recurs in the last 30 days (promotion candidates). It is bulk-loaded with
set-based UNWIND (the full-text index dropped around the load, as the Kùzu trap requires).

Measured, in a fresh process state each time, through the public API (`api.cycle(ws, now)`, which opens the
graph, runs verify, revert, decay, conflicts, promote, export, and closes it):
- the first cycle (it decays most of the year's events at once),
- then daily cycles, `now` one day later each time (the cron case): the median is the figure to compare
  with the target (≤ 5 s at 100k, ≤ 60 s at 1M).
- naive baseline: what the seed does, per daily cycle: load every event and pattern edge into Python, decide
  decay and promotion there, and write each change with its own statement.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from datetime import datetime, timedelta
from pathlib import Path

import kg
from kg.lifecycle import api, decay
from kg.lifecycle.policy import load as load_policy

NOW = datetime(2026, 12, 1, 6, 0)
AREAS = ["tooling", "backend", "frontend", "infra", "tests", "docs", "config", "behavior"]
PRIORITIES = ["critical", "high", "medium", "low"]
CHUNK = 20_000


def build(root: Path, n: int, seed: int = 7) -> kg.Workspace:
    """Bulk-load the graph: UNWIND CREATE for nodes (the graph has no full-text index since issue 22) and COPY
    FROM CSV for the pattern edges (UNWIND ... MATCH two nodes by id costs rows × nodes in kuzu 0.11.3)."""
    rnd = random.Random(seed)
    ws = kg.init_workspace(root)
    n_patterns = max(1, n // 50)
    n_sessions = max(2, n // 20)
    hot = set(range(0, n_patterns, 25))
    rows, links, last = [], [], {}
    for i in range(n):
        p = rnd.randrange(n_patterns) if rnd.random() < 0.7 else -1
        days = rnd.uniform(0, 29) if (p in hot and rnd.random() < 0.5) else rnd.uniform(0, 365)
        at = (NOW - timedelta(days=days)).replace(microsecond=0)
        rows.append({"id": f"ERR-{i:08d}", "text": f"event {i} failed in {AREAS[i % 8]}", "at": at,
                     "priority": PRIORITIES[rnd.randrange(4)], "area": AREAS[rnd.randrange(8)],
                     "session": f"sess-{rnd.randrange(n_sessions)}",
                     "key": f"bench.pattern.{p}" if p >= 0 else None, "action": f"fix {p}" if p >= 0 else None})
        if p >= 0:
            links.append((f"pat-{p:07d}", f"ERR-{i:08d}", at))
            last[p] = max(last.get(p, at), at)
    start = NOW - timedelta(days=365)
    pats = [{"id": f"pat-{i:07d}", "key": f"bench.pattern.{i}", "text": f"pattern {i} keeps failing",
             "area": AREAS[i % len(AREAS)], "priority": PRIORITIES[i % 4], "at": start,
             "last": last.get(i, start)} for i in range(n_patterns)]
    csv = root.parent / "derived_from.csv"
    csv.write_text("".join(f"{a},{b},{at.isoformat(sep=' ')},false,1.0,same pattern key\n" for a, b, at in links))
    with ws.store() as st:
        for k in range(0, len(pats), CHUNK):
            st.execute(
                "UNWIND $rows AS r CREATE (:Node {id: r.id, kind: 'pattern', text: r.text, pattern_key: r.key, "
                "area: r.area, priority: r.priority, status: 'active', created_at: r.at, updated_at: r.last, "
                "reinforced_at: r.last, pinned: false, stale: false, files: [], tags: [], redactions: [], "
                "tokens: r.text, decay_stage: 0})", {"rows": pats[k:k + CHUNK]})
        for k in range(0, n, CHUNK):
            st.execute(
                "UNWIND $rows AS r CREATE (:Node {id: r.id, kind: 'event', entry_type: 'error', text: r.text, "
                "category: 'error', priority: r.priority, status: 'pending', area: r.area, source: 'error', "
                "pattern_key: r.key, session: r.session, action: r.action, created_at: r.at, updated_at: r.at, "
                "reinforced_at: r.at, pinned: false, stale: false, files: [], tags: [], redactions: [], "
                "tokens: r.text, decay_stage: 0})", {"rows": rows[k:k + CHUNK]})
        st.execute(f"COPY derived_from FROM '{csv}' (header=false)")
    return ws


def naive_cycle(ws: kg.Workspace, now: datetime) -> int:
    """The seed's way: everything into Python, decide there, one write statement per changed node."""
    lp = load_policy(ws)
    writes = 0
    with ws.store() as st:
        nodes = st.execute("MATCH (n:Node) RETURN n.id AS id, n.kind AS kind, n.status AS status, "
                           "n.priority AS priority, n.base_priority AS base, n.decay_stage AS stage, "
                           "n.pinned AS pinned, n.reinforced_at AS r, n.session AS session, "
                           "n.created_at AS created_at")
        edges = st.execute("MATCH (p:Node)-[:derived_from]->(e:Node) RETURN p.id AS p, e.id AS e")
        by_id = {n["id"]: n for n in nodes}
        members: dict[str, list[dict]] = {}
        pattern_of: dict[str, str] = {}
        for ed in edges:
            members.setdefault(ed["p"], []).append(by_id[ed["e"]])
            pattern_of[ed["e"]] = ed["p"]
        since = now - timedelta(days=lp.promotion.window_days)
        ready = 0
        for evs in members.values():
            window = [e for e in evs if since <= e["created_at"] <= now]
            if len(window) >= lp.promotion.min_recurrence and len({e["session"] for e in window}) >= 2:
                ready += 1
        last_of = {pid: max(e["created_at"] for e in evs) for pid, evs in members.items()}
        for n in nodes:
            if n["kind"] not in lp.decay.kinds or n["status"] not in lp.decay.statuses or n["pinned"]:
                continue
            last = max(x for x in (n["r"], last_of.get(pattern_of.get(n["id"], ""))) if x)
            u = decay.decide(decay.DecayState(n["id"], n["status"], n["priority"], n["base"], n["stage"] or 0,
                                              False, last), now, lp)
            if u is not None:
                st.execute("MATCH (n:Node {id: $id}) SET n.decay_stage = $s, n.priority = $p, n.base_priority = $b, "
                           "n.stale = $stale, n.status = $status",
                           {"id": u.id, "s": u.stage, "p": u.priority, "b": u.base_priority, "stale": u.stale,
                            "status": u.status})
                writes += 1
    return writes


def timed(fn, *args):
    t = time.perf_counter()
    out = fn(*args)
    return time.perf_counter() - t, out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--events", type=int, default=100_000)
    ap.add_argument("--runs", type=int, default=5, help="daily cycles after the first (median reported)")
    ap.add_argument("--baseline-runs", type=int, default=3)
    ap.add_argument("--no-baseline", action="store_true")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        t_build, ws = timed(build, Path(tmp) / "ws", args.events)
        t_first, first = timed(api.cycle, ws, NOW)
        daily, reports = [], []
        for k in range(1, args.runs + 1):
            t, rep = timed(api.cycle, ws, NOW + timedelta(days=k))
            daily.append(t)
            reports.append(rep)
        t_again, again = timed(api.cycle, ws, NOW + timedelta(days=args.runs))
        base = []
        if not args.no_baseline:
            for k in range(args.runs + 1, args.runs + 1 + args.baseline_runs):
                base.append(timed(naive_cycle, ws, NOW + timedelta(days=k))[0])
        med = statistics.median(daily)
        faded = ("demoted", "stale", "expired")  # what decay did to entries
        rows = [
            ("events", f"{args.events:,}"),
            ("bulk load (s)", f"{t_build:.1f}"),
            ("first cycle (s)", (f"{t_first:.2f}  (decayed {sum(first.decayed[k] for k in faded):,}, "
                                f"promoted {len(first.promoted)}, proposed {len(first.proposed)})")),
            (f"daily cycle median of {len(daily)} (s)", f"{med:.2f}  (min {min(daily):.2f}, max {max(daily):.2f})"),
            ("repeat cycle, same --now (s)", f"{t_again:.2f}  (changed: {again.changed})"),
        ]
        if base:
            bmed = statistics.median(base)
            rows.append((f"naive baseline median of {len(base)} (s)", f"{bmed:.2f}"))
            rows.append(("baseline / kg cycle", f"{bmed / med:.1f}x"))
        width = max(len(r[0]) for r in rows)
        print(f"kg cycle speed ({sys.version.split()[0]})")
        for k, v in rows:
            print(f"  {k:<{width}}  {v}")


if __name__ == "__main__":
    main()
