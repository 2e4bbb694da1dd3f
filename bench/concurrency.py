"""Many `kg log` processes at once, with readers beside them: is every acknowledged write in the graph exactly
once, under a unique id, and how long do the writers and readers take?

    .venv/bin/python bench/concurrency.py [--workers 8] [--count 200] [--read-every 20]

Each writer is a process running the real `kg log --json` `count` times, one new process per entry (as an
agent's hooks do); each answers once its entry is journaled and leaves a detached drainer behind. After every
`read-every`-th log a writer runs `kg status --json` and `kg list --json`, beside the other writers. Printed: the
tally (acked, unique ids, ids in the graph, lost, duplicated, sessions, pattern recurrences, daily-log lines) and
the wall times (per log: median and p95 in a writer; per read). The suite runs a small version of the same
(tests/integration/test_concurrency.py); this is the full 8 x 200 run, too long for the suite.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path
from typing import Any

KG = str(Path(sys.executable).with_name("kg"))
NOW = "2026-11-30T10:00:00"
KEYS = 5  # entry i of a writer joins pattern key.{i % KEYS}

# A writer that runs the real `kg log` command `count` times, one new process each: prints "log ID seconds".
# After every `read_every`-th log (0: never) it reads as an agent would, beside the other writers: `kg status`
# and `kg list`, printing "read status|list EXIT-CODE ERRORS-SEEN seconds".
CLI_WORKER = textwrap.dedent("""
    import json, subprocess, sys, time
    kg, path, worker, count, now = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
    read_every = int(sys.argv[6])
    for i in range(count):
        t = time.perf_counter()
        out = subprocess.run([kg, "-w", path, "log", "error", f"worker {worker} failure {i}", "--session",
                              f"w{worker}", "--pattern-key", f"key.{i % 5}", "--now", now, "--json"],
                             capture_output=True, text=True, check=True)
        print("log", json.loads(out.stdout)["id"], time.perf_counter() - t, flush=True)
        if read_every and (i + 1) % read_every == 0:
            for what in (["status", "--json"], ["list", "--type", "error", "--limit", "100000", "--json"]):
                t = time.perf_counter()
                out = subprocess.run([kg, "-w", path, *what], capture_output=True, text=True)
                seen = -1
                if out.returncode == 0:
                    data = json.loads(out.stdout)
                    seen = data["entries"].get("error", 0) if what[0] == "status" else len(data)
                else:
                    sys.stderr.write(out.stderr)
                print("read", what[0], out.returncode, seen, time.perf_counter() - t, flush=True)
""")

# A writer that logs through the library (a notebook, the MCP server), in its own process: prints ids.
LIB_WORKER = textwrap.dedent("""
    import sys, kg
    path, worker, count, now = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    for i in range(count):
        r = kg.open_workspace(path).log("error", f"worker {worker} failure {i}", session=f"w{worker}",
                                        pattern_key=f"key.{i % 5}", now=now)
        print("log", r.id, 0.0, flush=True)
""")

def run(root: Path, workers: int, count: int, *, read_every: int = 0, cli: bool = True,
        lock_timeout: str = "120") -> dict[str, Any]:
    """Run `workers` writers of `count` logs each on the workspace at `root` (CLI writers read after every
    `read_every`-th log). Returns what they acknowledged and read, with timings; raises if a process failed."""
    env = {**os.environ, "KG_LOCK_TIMEOUT": lock_timeout}
    env.pop("KG_WORKSPACE", None)
    start = time.perf_counter()
    procs = [subprocess.Popen([sys.executable, "-c", CLI_WORKER, KG, str(root), str(w), str(count), NOW,
                               str(read_every)] if cli
                              else [sys.executable, "-c", LIB_WORKER, str(root), str(w), str(count), NOW],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
             for w in range(workers)]
    acked: list[str] = []
    latencies: list[float] = []
    reads: list[list[tuple[str, int, int, float]]] = []
    failures: list[str] = []
    for p in procs:
        out, err = p.communicate(timeout=3600)
        if p.returncode != 0:
            failures.append(err)
        mine = []
        for line in out.splitlines():
            parts = line.split()
            if parts[0] == "log":
                acked.append(parts[1])
                latencies.append(float(parts[2]))
            else:
                mine.append((parts[1], int(parts[2]), int(parts[3]), float(parts[4])))
        reads.append(mine)
    if failures:
        raise RuntimeError("a writer failed:\n" + "\n".join(failures))
    return {"acked": acked, "latencies": latencies, "reads": reads, "seconds": time.perf_counter() - start}


def tally(root: Path, acked: list[str], workers: int, count: int) -> dict[str, Any]:
    """What the workspace holds once every drainer is done, against what was acknowledged."""
    import kg

    ws = kg.open_workspace(root)
    status = ws.status()
    in_graph = [r["id"] for r in ws.list(type="error", limit=10 * len(acked) + 10)]
    daily = (ws.memory / f"{NOW[:10]}.md").read_text(encoding="utf-8").splitlines()
    return {
        "expected": workers * count,
        "acked": len(acked),
        "unique_acked": len(set(acked)),
        "in_graph": len(in_graph),
        "lost": len(set(acked) - set(in_graph)),
        "unacked_in_graph": len(set(in_graph) - set(acked)),
        "duplicated": len(acked) - len(set(acked)) + len(in_graph) - len(set(in_graph)),
        "entries": status["entries"],
        "sessions": status["sessions"],
        "patterns": {p["key"]: p["recurrence"] for p in status["patterns"]},
        "journal_pending": ws.journal.has_pending(),
        "daily_lines": sum(1 for line in daily if line.startswith("### ❌")),
    }


def _ms(xs: list[float], q: float) -> str:
    if not xs:
        return "-"
    xs = sorted(xs)
    return f"{1000 * xs[min(len(xs) - 1, int(q * len(xs)))]:.0f}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--workers", type=int, default=8)
    ap.add_argument("--count", type=int, default=200)
    ap.add_argument("--read-every", type=int, default=20, help="each writer reads after every Nth log (0: never)")
    args = ap.parse_args()
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from common import table

    import kg

    with tempfile.TemporaryDirectory(prefix="kg-concurrency-") as tmp:
        root = Path(tmp) / "ws"
        kg.init_workspace(root)
        res = run(root, args.workers, args.count, read_every=args.read_every)
        t = tally(root, res["acked"], args.workers, args.count)
    print(table(f"{args.workers} processes x {args.count} `kg log`, each reading after every {args.read_every}th",
                ["expected", "acked", "unique", "in graph", "lost", "duplicated", "sessions", "daily lines",
                 "journal left"],
                [[t["expected"], t["acked"], t["unique_acked"], t["in_graph"], t["lost"], t["duplicated"],
                  t["sessions"], t["daily_lines"], t["journal_pending"]]]))
    print(table("patterns (recurrence per key)", list(t["patterns"]), [list(t["patterns"].values())]))
    reads = [r for rs in res["reads"] for r in rs]
    rows = [["kg log (writer)", len(res["latencies"]), _ms(res["latencies"], 0.5), _ms(res["latencies"], 0.95)]]
    for what in ("status", "list"):
        took = [r[3] for r in reads if r[0] == what]
        bad = sum(1 for r in reads if r[0] == what and r[1] != 0)
        rows.append([f"kg {what} ({bad} failed)", len(took), _ms(took, 0.5), _ms(took, 0.95)])
    print(table(f"wall times (all writers done in {res['seconds']:.1f} s)", ["command", "runs", "median ms",
                                                                             "p95 ms"], rows))
    print(json.dumps({k: v for k, v in t.items() if k != "patterns"}))


if __name__ == "__main__":
    main()
