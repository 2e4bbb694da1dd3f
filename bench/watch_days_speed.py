"""What finding the days kg was not watching costs a cycle (issue 16, `verification.unobserved_gap_days`): the one
query of distinct days with anything logged (`lc_watch_days`) and the spells found from them, against the query
the cycle ran before for the same purpose (`lc_first_event`, the workspace's first event), in the same run.

    .venv/bin/python bench/watch_days_speed.py                 # 100k events over a year, 5k sessions
    .venv/bin/python bench/watch_days_speed.py --events 1000000 --runs 5

The graph is bulk-loaded (UNWIND CREATE, as bench/cycle_speed.py); each figure is the median of --runs runs in
one open store; the reading of every event row (`lc_patterns_times`-like, the naive way) is the third row.
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

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import kg  # noqa: E402
from kg.lifecycle import verify_watch  # noqa: E402

NOW = datetime(2026, 12, 1, 6, 0)
CHUNK = 20_000


def build(root: Path, n: int, seed: int = 7) -> kg.Workspace:
    rnd = random.Random(seed)
    ws = kg.init_workspace(root)
    # a year of events with a 40-day spell with nothing in it (a history imported before kg was installed)
    days = [d for d in range(365) if not 200 <= d < 240]
    rows = [{"id": f"ERR-{i:08d}", "at": (NOW - timedelta(days=rnd.choice(days), hours=rnd.uniform(0, 23)))
             .replace(microsecond=0)} for i in range(n)]
    sessions = [{"id": f"sess-{i}", "at": r["at"]} for i, r in enumerate(rows[: max(2, n // 20)])]
    with ws.store() as st:
        for k in range(0, n, CHUNK):
            st.execute("UNWIND $rows AS r CREATE (:Node {id: r.id, kind: 'event', entry_type: 'error', "
                       "text: 'x', status: 'pending', created_at: r.at, updated_at: r.at, reinforced_at: r.at, "
                       "pinned: false, stale: false, files: [], tags: [], redactions: [], decay_stage: 0})",
                       {"rows": rows[k:k + CHUNK]})
        for k in range(0, len(sessions), CHUNK):
            st.execute("UNWIND $rows AS r CREATE (:Session {id: r.id, started_at: r.at, ended_at: r.at})",
                       {"rows": sessions[k:k + CHUNK]})
    return ws


def median_s(fn, runs: int) -> float:
    out = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t)
    return statistics.median(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--events", type=int, default=100_000)
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        ws = build(Path(tmp) / "ws", args.events)
        with ws.store() as st:
            first = st.run("lc_first_event")[0]["first"]
            base = median_s(lambda: st.run("lc_first_event"), args.runs)
            days = median_s(lambda: verify_watch.watched(
                first, (r["day"] for r in st.run("lc_watch_days", now=NOW)), 14), args.runs)
            every = median_s(lambda: st.execute("MATCH (e:Node) WHERE e.kind = 'event' AND e.created_at <= $now "
                                                "RETURN e.created_at AS t", {"now": NOW}), args.runs)
            spells = verify_watch.gaps(verify_watch.watched(
                first, (r["day"] for r in st.run("lc_watch_days", now=NOW)), 14))
    print(f"{args.events:,} events, {max(2, args.events // 20):,} sessions; median of {args.runs} runs; "
          f"spells found: {[(a.date().isoformat(), b.date().isoformat()) for a, b in spells]}")
    print("| | median s | × baseline |\n|---|---|---|")
    print(f"| baseline: lc_first_event (the cycle's one query before) | {base:.4f} | 1.00 |")
    print(f"| lc_watch_days + verify_watch.watched (this change) | {days:.4f} | {days / base:.2f} |")
    print(f"| every event's time read into Python (the naive way) | {every:.4f} | {every / base:.2f} |")


if __name__ == "__main__":
    main()
