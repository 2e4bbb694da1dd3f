"""What each served read costs the read server itself: CPU seconds and Kùzu statements, this kg beside another
checkout's, on copies of bench/scale.py's cached workspaces.

On a loaded 2-core machine a whole process's wall time mostly measures the queue for a core; the CPU the
server spends on a read, and how many statements it runs, do not. Each kg runs in its own child process that
opens the workspace as the read server does (`kg.serve.server.Server`, one query thread, the server's kept
answers installed) and answers each read `--runs` times: "cold" forgets the kept answers before every read
(the first read after an agent's `kg log`), "warm" keeps them (a read repeated with nothing logged between).
The two kgs' children alternate, size by size; the table gives medians and this kg's ratio to the baseline.

    .venv/bin/python bench/read_cost.py --sizes 100000 1000000 --baseline-python ../main/.venv/bin/python \
        --workdir /tmp/read-cost [--runs 5] [--mode cold|warm] [--logs 3]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import table  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
RESULTS = REPO / "bench" / "results"
READS = {
    "status": ["status"],
    "list --limit 20": ["list", "--limit", "20"],
    "search": ["search", "git push failed"],
    "inject -m": ["inject", "--message", "the docker build timed out again"],
    "hook session-start": ["hook", "session-start"],
    "hook session-start -m": ["hook", "session-start", "-m", "pytest fixture crashed on the schema"],
}


def child(root: Path, now: str, runs: int, mode: str) -> None:
    """Run in the measured kg's own interpreter: print {read: [[cpu s, wall s, statements], ...]}."""
    os.environ["KG_NOW"] = now
    os.environ["KG_SERVER"] = "0"
    import kg.cli.app  # noqa: F401 - loaded before the first read, as the server does
    import kg.cli.common as common

    from kg.serve.cache import ReadCache
    from kg.serve.server import Server, _stamp
    from kg.store import Store
    from kg.workspace import open_workspace

    asked = [0]
    fetch = Store._fetch

    def counted(self, cypher, params):
        asked[0] += 1
        return fetch(self, cypher, params)

    Store._fetch = counted
    ws = open_workspace(root)
    ws.open_options = {"max_threads": 1}
    out: dict[str, list[list[float]]] = {}
    with ws.store(apply_journal=False) as held:
        cache = ReadCache(held).install()
        common._served[:] = [ws]
        server = Server(ws, 600.0, _stamp(ws))
        server.baseline = set(ws.__dict__)
        request = {"env": dict(os.environ), "cwd": str(root)}
        for argv in READS.values():  # once each first: what a server that answered before has loaded
            server.run({**request, "argv": argv})
        for _ in range(runs):
            for name, argv in READS.items():
                if mode == "cold":
                    cache.clear()
                asked[0] = 0
                cpu, wall = time.process_time(), time.perf_counter()
                answer = server.run({**request, "argv": argv})
                cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
                if answer.get("code") != 0:
                    raise SystemExit(f"{name}: exit {answer.get('code')}")
                out.setdefault(name, []).append([cpu, wall, asked[0]])
        common._served.clear()
        cache.uninstall()
    print(json.dumps(out))


def moment(n: int) -> str:
    from scale import moment as at

    return at(n)


def measure(python: str, root: Path, now: str, runs: int, mode: str) -> dict[str, list[list[float]]]:
    done = subprocess.run([python, str(Path(__file__).resolve()), "--child", str(root), now, str(runs), mode],
                          capture_output=True, text=True, env={**os.environ, "PYTHONDONTWRITEBYTECODE": ""})
    if done.returncode:
        raise SystemExit(f"{python} on {root} failed: {done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        child(Path(sys.argv[2]), sys.argv[3], int(sys.argv[4]), sys.argv[5])
        return
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[100_000, 1_000_000])
    ap.add_argument("--baseline-python", required=True, help="the other checkout's interpreter (its venv)")
    ap.add_argument("--workdir", required=True, help="where the cached workspaces are copied (never opened)")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--mode", choices=("cold", "warm"), default="cold")
    ap.add_argument("--logs", type=int, default=0,
                    help="first log one entry this many times with each kg (`kg log`, as an agent repeats an error)")
    args = ap.parse_args()
    results: dict[str, dict[int, dict[str, list[list[float]]]]] = {"this": {}, "baseline": {}}
    for n in args.sizes:
        cache = RESULTS / f"scale-{n}"
        if not (cache / ".built").exists():
            raise SystemExit(f"{cache} is not built: run bench/scale.py --sizes {n} --build-only first")
        copies = {}
        for tag in ("this", "baseline"):
            dst = Path(args.workdir) / f"{tag}-{n}"
            subprocess.run(["rm", "-rf", str(dst)], check=True)
            dst.parent.mkdir(parents=True, exist_ok=True)
            subprocess.run(["cp", "-a", str(cache), str(dst)], check=True)
            copies[tag] = dst
        for tag, python in (("this", sys.executable), ("baseline", args.baseline_python)):
            kg = str(Path(python).with_name("kg"))
            env = {**os.environ, "KG_NOW": moment(n)}
            for _ in range(args.logs):
                subprocess.run([kg, "-w", str(copies[tag]), "log", "error", "bench: the docker build timed out",
                                "--pattern-key", "docker.bench"], check=True, capture_output=True, env=env)
            if args.logs:
                subprocess.run([kg, "-w", str(copies[tag]), "serve", "stop"], capture_output=True, env=env)
            results[tag][n] = measure(python, copies[tag], moment(n), args.runs, args.mode)
        for dst in copies.values():
            subprocess.run(["rm", "-rf", str(dst)], check=True)
    header = ["read (server CPU s, median)"]
    for n in args.sizes:
        header += [f"{n:,} this", "base", "ratio", "stmts"]
    rows = []
    for name in READS:
        row = [name]
        for n in args.sizes:
            mine, base = results["this"][n][name], results["baseline"][n][name]
            m, b = statistics.median(x[0] for x in mine), statistics.median(x[0] for x in base)
            row += [f"{m:.3f}", f"{b:.3f}", f"{m / b:.2f}" if b else "-",
                    f"{statistics.median(x[2] for x in mine):.0f}/{statistics.median(x[2] for x in base):.0f}"]
        rows.append(row)
    if len(args.sizes) > 1:
        header.append("growth this/base")
        for row, name in zip(rows, READS, strict=True):
            a, b = args.sizes[0], args.sizes[-1]
            g = [statistics.median(x[0] for x in results[t][b][name]) / statistics.median(
                x[0] for x in results[t][a][name]) for t in ("this", "baseline")]
            row.append(f"{g[0]:.2f}/{g[1]:.2f}")
    logs = f", after {args.logs} kg log of one entry" if args.logs else ""
    print(table(f"Served reads, {args.mode}{logs} (median of {args.runs}; statements this/base; {os.cpu_count()} "
                f"cores, load {os.getloadavg()[0]:.1f})", header, rows))


if __name__ == "__main__":
    main()
